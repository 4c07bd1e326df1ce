/*
 * abi_fixture.c: test library of the ABI readers and writers.
 *
 * 1. abi_fixture_frame(): an XLA_FFI_CallFrame filled with known values
 *    (buffers of several dtypes and ranks, a token argument and result,
 *    attributes of every kind sorted by name, nested dictionaries);
 *    abi_fixture_broken_frame(kind): copies with one broken field each.
 * 2. abi_fixture_fill / abi_fixture_check: a per-field pattern for every
 *    struct of xla_ffi.h (the field list is abi_fixture_fields.h), written by
 *    C for the readers and checked by C after the TS writers.
 * 3. abi_fixture_check_frame: deep comparison of a TS-written call frame with
 *    the fixture frame.
 * 4. Metadata extension and API table fixtures.
 */
#include <stdint.h>
#include <string.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#include "abi_fixture_fields.h"

/* ------------------------------------------------------------------------ */
/* 2. Field patterns                                                         */
/* ------------------------------------------------------------------------ */

static const char abi_fixture_text[] = "0123456789abcdefghijklmnopqrstuvwxyz";

const char* abi_fixture_text_ptr(void) { return abi_fixture_text; }

#define PAT_SS(o) ((uint64_t)(1000 + (o)))
#define PAT_U64(o) (0xa000000000000011ull | ((uint64_t)(o) << 8))
#define PAT_PTR(o) PAT_U64(o)
#define PAT_I64(o) (-((int64_t)(o) * 1000003 + 7))
#define PAT_I32(o) ((int32_t)(-((int32_t)(o) * 1000 + 7)))
#define PAT_U32(o) (0x80000000u + (uint32_t)(o))
#define PAT_EN(o) (100 + (int)(o))
#define PAT_SP(o) (abi_fixture_text + (o) % 16)
#define PAT_SL(o) ((size_t)((o) % 5 + 3))

#define FILL_SS(s, T, f) (s)->f = (size_t)PAT_SS(offsetof(T, f))
#define FILL_U64(s, T, f) (s)->f = (size_t)PAT_U64(offsetof(T, f))
#define FILL_I64(s, T, f) (s)->f = PAT_I64(offsetof(T, f))
#define FILL_I32(s, T, f) (s)->f = PAT_I32(offsetof(T, f))
#define FILL_U32(s, T, f) (s)->f = PAT_U32(offsetof(T, f))
#define FILL_EN(s, T, f) (s)->f = (__typeof__((s)->f))PAT_EN(offsetof(T, f))
#define FILL_PTR(s, T, f) (s)->f = (__typeof__((s)->f))(uintptr_t)PAT_PTR(offsetof(T, f))
#define FILL_SP(s, T, f) (s)->f = PAT_SP(offsetof(T, f))
#define FILL_SL(s, T, f) (s)->f = PAT_SL(offsetof(T, f))

#define BAD_SS(s, T, f) ((uint64_t)(s)->f != PAT_SS(offsetof(T, f)))
#define BAD_U64(s, T, f) ((uint64_t)(s)->f != PAT_U64(offsetof(T, f)))
#define BAD_I64(s, T, f) ((s)->f != PAT_I64(offsetof(T, f)))
#define BAD_I32(s, T, f) ((s)->f != PAT_I32(offsetof(T, f)))
#define BAD_U32(s, T, f) ((s)->f != PAT_U32(offsetof(T, f)))
#define BAD_EN(s, T, f) ((int)(s)->f != PAT_EN(offsetof(T, f)))
#define BAD_PTR(s, T, f) ((uint64_t)(uintptr_t)(s)->f != PAT_PTR(offsetof(T, f)))
#define BAD_SP(s, T, f) ((s)->f != PAT_SP(offsetof(T, f)))
#define BAD_SL(s, T, f) ((s)->f != PAT_SL(offsetof(T, f)))

#define X_FILL(T, f, K) FILL_##K(s, T, f);
#define X_CHECK(T, f, K) \
  idx++;                 \
  if (BAD_##K(s, T, f)) return idx;

#define DEF_FUNCS(T)                                                           \
  static void fill_##T(T* s) { ABI_FIXTURE_FIELDS_##T(X_FILL) }                \
  static int32_t check_##T(const T* s) {                                       \
    int32_t idx = 0;                                                           \
    ABI_FIXTURE_FIELDS_##T(X_CHECK) return 0;                                  \
  }
ABI_FIXTURE_STRUCTS(DEF_FUNCS)

/* Fills the struct named `name` with its pattern; returns its sizeof, or -1. */
int32_t abi_fixture_fill(const char* name, void* out) {
#define DISPATCH_FILL(T)                 \
  if (strcmp(name, #T) == 0) {           \
    memset(out, 0, sizeof(T));           \
    fill_##T((T*)out);                   \
    return (int32_t)sizeof(T);           \
  }
  ABI_FIXTURE_STRUCTS(DISPATCH_FILL)
  return -1;
}

/* 0 when the struct named `name` holds its pattern, else the 1-based index of
 * the first wrong field; -1 for an unknown name. */
int32_t abi_fixture_check(const char* name, const void* in) {
#define DISPATCH_CHECK(T) \
  if (strcmp(name, #T) == 0) return check_##T((const T*)in);
  ABI_FIXTURE_STRUCTS(DISPATCH_CHECK)
  return -1;
}

/* ------------------------------------------------------------------------ */
/* 1. The call frame                                                         */
/* ------------------------------------------------------------------------ */

#define N_ARGS 8
#define N_RETS 2

static float arg0_f32[6] = {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f};
static int64_t arg1_s64[1] = {-5};
static uint8_t arg2_u8[6] = {1, 2, 3, 4, 5, 6};
static uint16_t arg3_bf16[4] = {0x3f80, 0x4000, 0x4040, 0x4080};
static float arg4_c64[4] = {1.0f, -1.0f, 2.0f, -2.0f};
static uint8_t arg5_pred[5] = {1, 0, 1, 1, 0};
static uint8_t arg6_f8[4] = {0x38, 0x40, 0x44, 0x48};
static float ret0_f32[6];

static int64_t dims0[2] = {2, 3};
static int64_t dims2[3] = {1, 2, 3};
static int64_t dims3[1] = {4};
static int64_t dims4[1] = {2};
static int64_t dims5[1] = {5};
static int64_t dims6[2] = {2, 2};
static int64_t dims_r0[1] = {6};

static XLA_FFI_Buffer arg_bufs[N_ARGS];
static XLA_FFI_Buffer ret_bufs[N_RETS];
static XLA_FFI_ArgType arg_types[N_ARGS];
static XLA_FFI_RetType ret_types[N_RETS];
static void* arg_ptrs[N_ARGS];
static void* ret_ptrs[N_RETS];

static void set_buffer(XLA_FFI_Buffer* b, XLA_FFI_DataType dtype, void* data, int64_t rank,
                       int64_t* dims) {
  b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  b->extension_start = NULL;
  b->dtype = dtype;
  b->data = data;
  b->rank = rank;
  b->dims = dims;
}

/* Scalar values. */
static uint8_t v_pred = 1;
static int8_t v_s8 = -128;
static int16_t v_s16 = -32768;
static int32_t v_s32 = INT32_MIN;
static int64_t v_s64 = INT64_MIN;
static uint8_t v_u8 = 255;
static uint16_t v_u16 = 65535;
static uint32_t v_u32 = 4294967295u;
static uint64_t v_u64 = UINT64_MAX;
static float v_f32 = 3.5f;
static double v_f64 = -1e300;
static float v_x = 0.5f;
static int32_t v_deep = 7;

/* Array values. */
static float a_f32[2] = {1.5f, -2.25f};
static double a_f64[2] = {1e-300, 2.5};
static int16_t a_s16[2] = {-300, 400};
static int32_t a_s32[4] = {-70000, 1, 2, 3};
static int64_t a_s64[2] = {INT64_MIN, INT64_MAX};
static int8_t a_s8[3] = {-1, 2, -3};
static uint16_t a_u16[2] = {65535, 1};
static uint32_t a_u32[1] = {4000000000u};
static uint64_t a_u64[2] = {UINT64_MAX, 1};
static uint8_t a_u8[2] = {0, 255};

enum { N_TOP = 25, N_DICT = 2, N_INNER = 2 };

typedef struct {
  XLA_FFI_AttrType types[N_TOP];
  XLA_FFI_ByteSpan names[N_TOP];
  XLA_FFI_ByteSpan* name_ptrs[N_TOP];
  void* values[N_TOP];
  int n;
} AttrTable;

static AttrTable top, dict, inner;
static XLA_FFI_Scalar scalars[N_TOP + N_DICT + N_INNER];
static XLA_FFI_Array arrays[N_TOP];
static XLA_FFI_ByteSpan strings[2];
static XLA_FFI_Attrs dict_attrs, inner_attrs;
static int n_scalars, n_arrays;

static void add(AttrTable* t, const char* name, XLA_FFI_AttrType type, void* value) {
  int i = t->n++;
  t->types[i] = type;
  t->names[i].ptr = name;
  t->names[i].len = strlen(name);
  t->name_ptrs[i] = &t->names[i];
  t->values[i] = value;
}

static void add_scalar(AttrTable* t, const char* name, XLA_FFI_DataType dtype, void* value) {
  XLA_FFI_Scalar* s = &scalars[n_scalars++];
  s->dtype = dtype;
  s->value = value;
  add(t, name, XLA_FFI_AttrType_SCALAR, s);
}

static void add_array(AttrTable* t, const char* name, XLA_FFI_DataType dtype, size_t n,
                      void* data) {
  XLA_FFI_Array* a = &arrays[n_arrays++];
  a->dtype = dtype;
  a->size = n;
  a->data = data;
  add(t, name, XLA_FFI_AttrType_ARRAY, a);
}

static void set_attrs(XLA_FFI_Attrs* a, AttrTable* t) {
  a->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  a->extension_start = NULL;
  a->size = t->n;
  a->types = t->types;
  a->names = t->name_ptrs;
  a->attrs = t->values;
}

static XLA_FFI_Api_V0_5 fixture_api;
static XLA_FFI_CallFrame frame;
static int built;

static void build_api(size_t struct_size, int minor) {
  memset(&fixture_api, 0, sizeof(fixture_api));
  fixture_api.struct_size = struct_size;
  fixture_api.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  fixture_api.api_version.major_version = 0;
  fixture_api.api_version.minor_version = minor;
  fixture_api.internal_api = (XLA_FFI_InternalApi*)(uintptr_t)0x1234;
  /* Slot i holds the fake address 0x1000 + 16 * i. */
  void** slots = (void**)((char*)&fixture_api + offsetof(XLA_FFI_Api, XLA_FFI_Error_Create));
  for (int i = 0; i < 19; i++) slots[i] = (void*)(uintptr_t)(0x1000 + 16 * i);
}

static void build(void) {
  if (built) return;
  built = 1;
  set_buffer(&arg_bufs[0], XLA_FFI_DataType_F32, arg0_f32, 2, dims0);
  set_buffer(&arg_bufs[1], XLA_FFI_DataType_S64, arg1_s64, 0, NULL);
  set_buffer(&arg_bufs[2], XLA_FFI_DataType_U8, arg2_u8, 3, dims2);
  set_buffer(&arg_bufs[3], XLA_FFI_DataType_BF16, arg3_bf16, 1, dims3);
  set_buffer(&arg_bufs[4], XLA_FFI_DataType_C64, arg4_c64, 1, dims4);
  set_buffer(&arg_bufs[5], XLA_FFI_DataType_PRED, arg5_pred, 1, dims5);
  set_buffer(&arg_bufs[6], XLA_FFI_DataType_F8E4M3FN, arg6_f8, 2, dims6);
  set_buffer(&arg_bufs[7], XLA_FFI_DataType_TOKEN, NULL, 0, NULL);
  set_buffer(&ret_bufs[0], XLA_FFI_DataType_F32, ret0_f32, 1, dims_r0);
  set_buffer(&ret_bufs[1], XLA_FFI_DataType_TOKEN, NULL, 0, NULL);
  for (int i = 0; i < N_ARGS; i++) {
    arg_types[i] = XLA_FFI_ArgType_BUFFER;
    arg_ptrs[i] = &arg_bufs[i];
  }
  for (int i = 0; i < N_RETS; i++) {
    ret_types[i] = XLA_FFI_RetType_BUFFER;
    ret_ptrs[i] = &ret_bufs[i];
  }

  /* Inner dictionary: {deep: s32 7, label: "deep"}. */
  add_scalar(&inner, "deep", XLA_FFI_DataType_S32, &v_deep);
  strings[1].ptr = "deep";
  strings[1].len = 4;
  add(&inner, "label", XLA_FFI_AttrType_STRING, &strings[1]);
  set_attrs(&inner_attrs, &inner);
  /* Dictionary: {inner: {...}, x: f32 0.5}. */
  add(&dict, "inner", XLA_FFI_AttrType_DICTIONARY, &inner_attrs);
  add_scalar(&dict, "x", XLA_FFI_DataType_F32, &v_x);
  set_attrs(&dict_attrs, &dict);

  /* Top level, sorted by name (byte-wise). */
  add_array(&top, "arr_f32", XLA_FFI_DataType_F32, 2, a_f32);
  add_array(&top, "arr_f64", XLA_FFI_DataType_F64, 2, a_f64);
  add_array(&top, "arr_s16", XLA_FFI_DataType_S16, 2, a_s16);
  add_array(&top, "arr_s32", XLA_FFI_DataType_S32, 4, a_s32);
  add_array(&top, "arr_s64", XLA_FFI_DataType_S64, 2, a_s64);
  add_array(&top, "arr_s8", XLA_FFI_DataType_S8, 3, a_s8);
  add_array(&top, "arr_u16", XLA_FFI_DataType_U16, 2, a_u16);
  add_array(&top, "arr_u32", XLA_FFI_DataType_U32, 1, a_u32);
  add_array(&top, "arr_u64", XLA_FFI_DataType_U64, 2, a_u64);
  add_array(&top, "arr_u8", XLA_FFI_DataType_U8, 2, a_u8);
  add_array(&top, "arr_zero", XLA_FFI_DataType_S32, 0, NULL);
  add(&top, "dict", XLA_FFI_AttrType_DICTIONARY, &dict_attrs);
  strings[0].ptr = "fixture";
  strings[0].len = 7;
  add(&top, "name", XLA_FFI_AttrType_STRING, &strings[0]);
  add_scalar(&top, "s_f32", XLA_FFI_DataType_F32, &v_f32);
  add_scalar(&top, "s_f64", XLA_FFI_DataType_F64, &v_f64);
  add_scalar(&top, "s_pred", XLA_FFI_DataType_PRED, &v_pred);
  add_scalar(&top, "s_s16", XLA_FFI_DataType_S16, &v_s16);
  add_scalar(&top, "s_s32", XLA_FFI_DataType_S32, &v_s32);
  add_scalar(&top, "s_s64", XLA_FFI_DataType_S64, &v_s64);
  add_scalar(&top, "s_s8", XLA_FFI_DataType_S8, &v_s8);
  add_scalar(&top, "s_u16", XLA_FFI_DataType_U16, &v_u16);
  add_scalar(&top, "s_u32", XLA_FFI_DataType_U32, &v_u32);
  add_scalar(&top, "s_u64", XLA_FFI_DataType_U64, &v_u64);
  add_scalar(&top, "s_u8", XLA_FFI_DataType_U8, &v_u8);

  build_api(XLA_FFI_Api_STRUCT_SIZE, 1);

  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = NULL;
  frame.api = (const XLA_FFI_Api*)&fixture_api;
  frame.ctx = (XLA_FFI_ExecutionContext*)(uintptr_t)0xC0FFEE;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.args.size = N_ARGS;
  frame.args.types = arg_types;
  frame.args.args = arg_ptrs;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.rets.size = N_RETS;
  frame.rets.types = ret_types;
  frame.rets.rets = ret_ptrs;
  set_attrs(&frame.attrs, &top);
  frame.future = (XLA_FFI_Future*)(uintptr_t)0xF00D;
}

const XLA_FFI_CallFrame* abi_fixture_frame(void) {
  build();
  return &frame;
}

/* Number of top-level attributes of the fixture frame. */
int32_t abi_fixture_attr_count(void) {
  build();
  return top.n;
}

/* The fixture's API table: 0.1 (192 bytes, 18 slots) or 0.5 (200, 19 slots). */
const void* abi_fixture_api(int32_t v0_5) {
  build();
  if (v0_5) build_api(XLA_FFI_Api_V0_5_STRUCT_SIZE, 5);
  else build_api(XLA_FFI_Api_STRUCT_SIZE, 1);
  return &fixture_api;
}

/* Broken copies: each kind breaks one field (see abi_readers_test.ts). */
static XLA_FFI_CallFrame broken;
static XLA_FFI_ArgType broken_arg_types[N_ARGS];
static void* broken_arg_ptrs[N_ARGS];
static XLA_FFI_Buffer broken_buf;
static XLA_FFI_AttrType broken_attr_types[N_TOP];
static void* broken_attr_values[N_TOP];
static XLA_FFI_Scalar broken_scalar;
static XLA_FFI_Array broken_array;
static XLA_FFI_Attrs broken_dict;
static XLA_FFI_ByteSpan broken_span;

static int find_attr(const char* name) {
  for (int i = 0; i < top.n; i++) {
    if (strlen(name) == top.names[i].len && memcmp(top.names[i].ptr, name, top.names[i].len) == 0)
      return i;
  }
  return 0;
}

const XLA_FFI_CallFrame* abi_fixture_broken_frame(int32_t kind) {
  build();
  broken = frame;
  memcpy(broken_arg_types, arg_types, sizeof(arg_types));
  memcpy(broken_arg_ptrs, arg_ptrs, sizeof(arg_ptrs));
  memcpy(broken_attr_types, top.types, sizeof(top.types));
  memcpy(broken_attr_values, top.values, sizeof(top.values));
  broken.args.types = broken_arg_types;
  broken.args.args = broken_arg_ptrs;
  broken.attrs.types = broken_attr_types;
  broken.attrs.attrs = broken_attr_values;
  broken_buf = arg_bufs[0];
  broken_arg_ptrs[0] = &broken_buf;
  switch (kind) {
    case 1: broken.struct_size = 120; break;
    case 2: broken.stage = (XLA_FFI_ExecutionStage)7; break;
    case 3: broken.args.size = -1; break;
    case 4: broken.args.size = (int64_t)1 << 40; break;
    case 5: broken_arg_types[1] = (XLA_FFI_ArgType)9; break;
    case 6: broken_buf.rank = -2; break;
    case 7: broken_buf.rank = (int64_t)1 << 40; break;
    case 8: broken_buf.dtype = (XLA_FFI_DataType)14; break;
    case 9: broken_buf.struct_size = 16; break;
    case 10: broken.args.types = NULL; break;
    case 11: broken_attr_types[0] = (XLA_FFI_AttrType)9; break;
    case 12: {
      int i = find_attr("s_f32");
      broken_scalar = *(XLA_FFI_Scalar*)top.values[i];
      broken_scalar.dtype = (XLA_FFI_DataType)99;
      broken_attr_values[i] = &broken_scalar;
      break;
    }
    case 13: {
      int i = find_attr("arr_f32");
      broken_array = *(XLA_FFI_Array*)top.values[i];
      broken_array.size = (size_t)1 << 40;
      broken_attr_values[i] = &broken_array;
      break;
    }
    case 14: {
      int i = find_attr("dict");
      broken_dict = dict_attrs;
      broken_dict.struct_size = 8;
      broken_attr_values[i] = &broken_dict;
      break;
    }
    case 15: {
      int i = find_attr("name");
      broken_span = strings[0];
      broken_span.len = (size_t)1 << 40;
      broken_attr_values[i] = &broken_span;
      break;
    }
    case 16: broken.rets.size = -3; break;
    case 17: broken.attrs.names = NULL; break;
    case 18: broken_arg_ptrs[2] = NULL; break;
    case 19: broken_buf.dims = NULL; break;
    default: return NULL;
  }
  return &broken;
}

/* ------------------------------------------------------------------------ */
/* 3. Deep comparison of a TS-written frame with the fixture                 */
/* ------------------------------------------------------------------------ */

#define REQ(c)                  \
  do {                          \
    if (!(c)) return __LINE__;  \
  } while (0)

static int span_eq(const XLA_FFI_ByteSpan* a, const XLA_FFI_ByteSpan* b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static int32_t buffer_eq(const XLA_FFI_Buffer* a, const XLA_FFI_Buffer* b) {
  REQ(a != NULL);
  REQ(a->struct_size == XLA_FFI_Buffer_STRUCT_SIZE);
  REQ(a->extension_start == NULL);
  REQ(a->dtype == b->dtype);
  REQ(a->data == b->data);
  REQ(a->rank == b->rank);
  for (int64_t i = 0; i < a->rank; i++) REQ(a->dims[i] == b->dims[i]);
  return 0;
}

static int32_t attrs_eq(const XLA_FFI_Attrs* a, const XLA_FFI_Attrs* b) {
  REQ(a->struct_size == XLA_FFI_Attrs_STRUCT_SIZE);
  REQ(a->extension_start == NULL);
  REQ(a->size == b->size);
  for (int64_t i = 0; i < a->size; i++) {
    REQ(a->types[i] == b->types[i]);
    REQ(span_eq(a->names[i], b->names[i]));
    const void* x = a->attrs[i];
    const void* y = b->attrs[i];
    switch (b->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = x;
        const XLA_FFI_Scalar* t = y;
        REQ(s->dtype == t->dtype);
        REQ(memcmp(s->value, t->value, xla_ffi_dtype_width(t->dtype)) == 0);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* s = x;
        const XLA_FFI_Array* t = y;
        REQ(s->dtype == t->dtype);
        REQ(s->size == t->size);
        REQ(t->size == 0 || memcmp(s->data, t->data, t->size * xla_ffi_dtype_width(t->dtype)) == 0);
        break;
      }
      case XLA_FFI_AttrType_STRING:
        REQ(span_eq(x, y));
        break;
      case XLA_FFI_AttrType_DICTIONARY: {
        int32_t r = attrs_eq(x, y);
        if (r) return r;
        break;
      }
    }
  }
  return 0;
}

/* 0 when `got` describes the same call as the fixture frame (buffer data
 * pointers must be the fixture's), else the source line of the mismatch. */
int32_t abi_fixture_check_frame(const XLA_FFI_CallFrame* got) {
  build();
  REQ(got->struct_size == XLA_FFI_CallFrame_STRUCT_SIZE);
  REQ(got->extension_start == NULL);
  REQ(got->api == frame.api);
  REQ(got->ctx == frame.ctx);
  REQ(got->stage == frame.stage);
  REQ(got->future == frame.future);
  REQ(got->args.struct_size == XLA_FFI_Args_STRUCT_SIZE);
  REQ(got->args.size == frame.args.size);
  for (int64_t i = 0; i < got->args.size; i++) {
    REQ(got->args.types[i] == frame.args.types[i]);
    int32_t r = buffer_eq(got->args.args[i], frame.args.args[i]);
    if (r) return r;
  }
  REQ(got->rets.struct_size == XLA_FFI_Rets_STRUCT_SIZE);
  REQ(got->rets.size == frame.rets.size);
  for (int64_t i = 0; i < got->rets.size; i++) {
    REQ(got->rets.types[i] == frame.rets.types[i]);
    int32_t r = buffer_eq(got->rets.rets[i], frame.rets.rets[i]);
    if (r) return r;
  }
  return attrs_eq(&got->attrs, &frame.attrs);
}

/* ------------------------------------------------------------------------ */
/* 4. Metadata                                                               */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Metadata_V0_2 metadata;
static XLA_FFI_Metadata_Extension metadata_ext;

/* A metadata extension whose metadata reports `minor` (1 or 2), traits 1 and
 * state_type_id 77 (meaningful only for 0.2+). */
const XLA_FFI_Metadata_Extension* abi_fixture_metadata_extension(int32_t minor) {
  metadata.struct_size = XLA_FFI_Metadata_V0_2_STRUCT_SIZE;
  metadata.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  metadata.api_version.extension_start = NULL;
  metadata.api_version.major_version = 0;
  metadata.api_version.minor_version = minor;
  metadata.traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
  metadata.state_type_id.type_id = 77;
  metadata_ext.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  metadata_ext.extension_base.type = XLA_FFI_Extension_Metadata;
  metadata_ext.extension_base.next = NULL;
  metadata_ext.metadata = (XLA_FFI_Metadata*)&metadata;
  return &metadata_ext;
}
