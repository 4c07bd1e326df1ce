/*
 * demo_handlers.c: a small XLA FFI handler library, written against the
 * project's xla_ffi.h, the way a user's C handler would be.
 *
 *   demo_saxpy: out = alpha * x + y   (F32 buffers of equal size; attr alpha: f32)
 *   demo_sum_async: out[0] = sum(x), computed on the runtime's thread pool and
 *                   signalled through an XLA_FFI_Future.
 *   demo_counter_instantiate / demo_counter_execute: a stateful handler
 *                   (State_Set in the instantiate stage, State_Get per call).
 *   demo_describe_attrs: a text description of every attribute it gets.
 *
 * Build it yourself (the runtime does not need to be linked; handlers get
 * the API table through the call frame):
 *
 *   cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I native \
 *      examples/native/demo_handlers.c -o libdemo_handlers.so
 *
 * or from TS with build.ts's buildSharedLibrary (examples/build_native.ts).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla_ffi.h"
#include "xla_ffi_versions.h"

/* traits: XLA_FFI_HANDLER_TRAITS_* bits (demo_saxpy: command-buffer compatible, as a pure
 * computation on its buffers is). */
static XLA_FFI_Error* answer_metadata(XLA_FFI_CallFrame* cf, XLA_FFI_Handler_Traits traits) {
  XLA_FFI_Metadata* md = ((XLA_FFI_Metadata_Extension*)cf->extension_start)->metadata;
  md->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  md->api_version.extension_start = NULL;
  md->api_version.major_version = XLA_FFI_API_MAJOR;
  md->api_version.minor_version = XLA_FFI_API_MINOR;
  md->traits = traits;
  return NULL;
}

static int is_metadata_query(const XLA_FFI_CallFrame* cf) {
  return cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata;
}

static XLA_FFI_Error* fail(const XLA_FFI_Api* api, const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg,
                                 XLA_FFI_Error_Code_INVALID_ARGUMENT};
  return api->XLA_FFI_Error_Create(&a);
}

static size_t count(const XLA_FFI_Buffer* b) {
  size_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= (size_t)b->dims[i];
  return n;
}

XLA_FFI_Error* demo_saxpy(XLA_FFI_CallFrame* cf) {
  if (is_metadata_query(cf)) {
    return answer_metadata(cf, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
  }
  if (cf->args.size != 2 || cf->rets.size != 1) return fail(cf->api, "saxpy: 2 args, 1 result");
  /* Attributes are sorted by name: look "alpha" up. */
  float alpha = 1.0f;
  int found = 0;
  for (int64_t i = 0; i < cf->attrs.size; i++) {
    const XLA_FFI_ByteSpan* name = cf->attrs.names[i];
    if (name->len == 5 && memcmp(name->ptr, "alpha", 5) == 0 &&
        cf->attrs.types[i] == XLA_FFI_AttrType_SCALAR) {
      const XLA_FFI_Scalar* s = cf->attrs.attrs[i];
      if (s->dtype != XLA_FFI_DataType_F32) return fail(cf->api, "saxpy: alpha must be f32");
      alpha = *(const float*)s->value;
      found = 1;
    }
  }
  if (!found) return fail(cf->api, "saxpy: missing attribute alpha");
  const XLA_FFI_Buffer* x = cf->args.args[0];
  const XLA_FFI_Buffer* y = cf->args.args[1];
  XLA_FFI_Buffer* out = cf->rets.rets[0];
  size_t n = count(x);
  if (count(y) != n || count(out) != n) return fail(cf->api, "saxpy: size mismatch");
  const float* xs = x->data;
  const float* ys = y->data;
  float* os = out->data;
  for (size_t i = 0; i < n; i++) os[i] = alpha * xs[i] + ys[i];
  return NULL;
}

typedef struct {
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  const float* x;
  size_t n;
  float* out;
} sum_job;

static void sum_task(void* p) {
  sum_job* j = p;
  float s = 0;
  for (size_t i = 0; i < j->n; i++) s += j->x[i];
  j->out[0] = s;
  XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                        j->future};
  XLA_FFI_Error* e = j->api->XLA_FFI_Future_SetAvailable(&a);
  if (e) abort();
  free(j);
}

XLA_FFI_Error* demo_sum_async(XLA_FFI_CallFrame* cf) {
  if (is_metadata_query(cf)) return answer_metadata(cf, 0);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  sum_job* j = malloc(sizeof *j);
  if (!j) abort();
  const XLA_FFI_Buffer* x = cf->args.args[0];
  *j = (sum_job){cf->api, fc.future, x->data, count(x), ((XLA_FFI_Buffer*)cf->rets.rets[0])->data};
  cf->future = fc.future;
  XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                        cf->ctx, sum_task, j};
  e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
  if (e) { /* no pool: run inline */
    XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    cf->api->XLA_FFI_Error_Destroy(&d);
    sum_task(j);
  }
  return NULL;
}

/* ------------------------------------------------------------------------
 * A stateful handler, as XLA runs one: the instantiate handler creates the
 * per-instance state once (State_Set); the execute handler reads it on every
 * call (State_Get). Each checks its stage, as ffi.h's handlers do. The State
 * and Type functions take the layouts of the calling runtime's API version
 * (xla_ffi_versions.h), so the same library works under XLA 0.1 to 0.3.
 *
 *   demo_counter_instantiate: state = a counter starting at attr start (s64)
 *   demo_counter_execute:     counter += 1; ret0 (S64, one element) = counter
 */

typedef struct {
  int64_t count;
} counter_state;

/*
 * The state's type id. A fixed id (rather than 0 = "assign one") keeps a
 * re-registration valid when the library is unloaded and loaded again in
 * the same process: the runtime accepts the same name with the same id.
 */
#define COUNTER_TYPE_ID 0x44454d4f /* "DEMO" */

static void counter_delete(void* p) { free(p); }

static XLA_FFI_Error* fail_code(const XLA_FFI_Api* api, XLA_FFI_Error_Code code, const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
  return api->XLA_FFI_Error_Create(&a);
}

/* The scalar attribute `name`, or NULL (attributes are sorted; a scan is enough here). */
static const XLA_FFI_Scalar* find_scalar(const XLA_FFI_Attrs* attrs, const char* name) {
  size_t len = strlen(name);
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan* n = attrs->names[i];
    if (n->len == len && memcmp(n->ptr, name, len) == 0 &&
        attrs->types[i] == XLA_FFI_AttrType_SCALAR)
      return attrs->attrs[i];
  }
  return NULL;
}

XLA_FFI_Error* demo_counter_instantiate(XLA_FFI_CallFrame* cf) {
  if (is_metadata_query(cf)) return answer_metadata(cf, 0);
  if (cf->stage != XLA_FFI_ExecutionStage_INSTANTIATE)
    return fail_code(cf->api, XLA_FFI_Error_Code_INTERNAL,
                     "demo_counter_instantiate: called outside the instantiate stage");
  /* Registered with each runtime that instantiates (again: same name and
   * id are accepted); from API 0.2 on its TypeInfo carries the deleter. */
  XLA_FFI_TypeId counter_type = {COUNTER_TYPE_ID};
  XLA_FFI_Error* e = xla_ffi_type_register(cf->api, "demo.Counter", 12, &counter_type,
                                           counter_delete);
  if (e) return e;
  const XLA_FFI_Scalar* start = find_scalar(&cf->attrs, "start");
  if (start && start->dtype != XLA_FFI_DataType_S64)
    return fail(cf->api, "demo_counter_instantiate: start must be s64");
  counter_state* s = malloc(sizeof *s);
  if (!s) return fail_code(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  s->count = start ? *(const int64_t*)start->value : 0;
  e = xla_ffi_state_set(cf->api, cf->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, &counter_type, s,
                        counter_delete);
  if (e) free(s);
  return e;
}

XLA_FFI_Error* demo_counter_execute(XLA_FFI_CallFrame* cf) {
  if (is_metadata_query(cf)) return answer_metadata(cf, 0);
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return fail_code(cf->api, XLA_FFI_Error_Code_INTERNAL,
                     "demo_counter_execute: called outside the execute stage");
  if (cf->rets.size != 1) return fail(cf->api, "demo_counter_execute: 1 result");
  XLA_FFI_Buffer* out = cf->rets.rets[0];
  if (out->dtype != XLA_FFI_DataType_S64 || count(out) != 1)
    return fail(cf->api, "demo_counter_execute: the result is one s64");
  XLA_FFI_TypeId counter_type = {COUNTER_TYPE_ID};
  void* state = NULL;
  XLA_FFI_Error* e = xla_ffi_state_get(cf->api, cf->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                       &counter_type, &state);
  if (e) return e;
  counter_state* s = state;
  s->count += 1;
  *(int64_t*)out->data = s->count;
  return NULL;
}

/* ------------------------------------------------------------------------
 * demo_describe_attrs: writes a text description of every attribute it gets
 * (scalars and arrays of each element type, strings, nested dictionaries)
 * into ret0, a U8 buffer, NUL-padded. One line per attribute, in the
 * runtime's (sorted) order: `name: type value`.
 */

typedef struct {
  char* p;
  size_t left;
  int overflow;
} text_out;

static void put(text_out* o, const char* s, size_t n) {
  if (n > o->left) {
    n = o->left;
    o->overflow = 1;
  }
  memcpy(o->p, s, n);
  o->p += n;
  o->left -= n;
}

static void puts_(text_out* o, const char* s) { put(o, s, strlen(s)); }

static void put_i64(text_out* o, long long v) {
  char b[32];
  int n = snprintf(b, sizeof b, "%lld", v);
  put(o, b, (size_t)n);
}

static void put_u64(text_out* o, unsigned long long v) {
  char b[32];
  int n = snprintf(b, sizeof b, "%llu", v);
  put(o, b, (size_t)n);
}

static void put_f64(text_out* o, double v) {
  char b[40];
  int n = snprintf(b, sizeof b, "%.9g", v);
  put(o, b, (size_t)n);
}

static const char* type_name(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_PRED: return "pred";
    case XLA_FFI_DataType_S8: return "s8";
    case XLA_FFI_DataType_S16: return "s16";
    case XLA_FFI_DataType_S32: return "s32";
    case XLA_FFI_DataType_S64: return "s64";
    case XLA_FFI_DataType_U8: return "u8";
    case XLA_FFI_DataType_U16: return "u16";
    case XLA_FFI_DataType_U32: return "u32";
    case XLA_FFI_DataType_U64: return "u64";
    case XLA_FFI_DataType_F32: return "f32";
    case XLA_FFI_DataType_F64: return "f64";
    default: return NULL;
  }
}

/* Writes element i of a value of type t at p; returns 0 for an unknown type. */
static int put_value(text_out* o, XLA_FFI_DataType t, const void* p, size_t i) {
  switch (t) {
    case XLA_FFI_DataType_PRED: puts_(o, ((const uint8_t*)p)[i] ? "true" : "false"); return 1;
    case XLA_FFI_DataType_S8: put_i64(o, ((const int8_t*)p)[i]); return 1;
    case XLA_FFI_DataType_S16: put_i64(o, ((const int16_t*)p)[i]); return 1;
    case XLA_FFI_DataType_S32: put_i64(o, ((const int32_t*)p)[i]); return 1;
    case XLA_FFI_DataType_S64: put_i64(o, (long long)((const int64_t*)p)[i]); return 1;
    case XLA_FFI_DataType_U8: put_u64(o, ((const uint8_t*)p)[i]); return 1;
    case XLA_FFI_DataType_U16: put_u64(o, ((const uint16_t*)p)[i]); return 1;
    case XLA_FFI_DataType_U32: put_u64(o, ((const uint32_t*)p)[i]); return 1;
    case XLA_FFI_DataType_U64: put_u64(o, (unsigned long long)((const uint64_t*)p)[i]); return 1;
    case XLA_FFI_DataType_F32: put_f64(o, ((const float*)p)[i]); return 1;
    case XLA_FFI_DataType_F64: put_f64(o, ((const double*)p)[i]); return 1;
    default: return 0;
  }
}

static int describe(text_out* o, const XLA_FFI_Attrs* attrs, int depth) {
  for (int64_t i = 0; i < attrs->size; i++) {
    for (int d = 0; d < depth; d++) puts_(o, "  ");
    const XLA_FFI_ByteSpan* name = attrs->names[i];
    put(o, name->ptr, name->len);
    puts_(o, ": ");
    switch (attrs->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = attrs->attrs[i];
        const char* tn = type_name(s->dtype);
        if (!tn) return 0;
        puts_(o, tn);
        puts_(o, " ");
        put_value(o, s->dtype, s->value, 0);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* a = attrs->attrs[i];
        const char* tn = type_name(a->dtype);
        if (!tn) return 0;
        puts_(o, tn);
        puts_(o, "[] [");
        for (size_t k = 0; k < a->size; k++) {
          if (k) puts_(o, ", ");
          put_value(o, a->dtype, a->data, k);
        }
        puts_(o, "]");
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = attrs->attrs[i];
        puts_(o, "string \"");
        put(o, s->ptr, s->len);
        puts_(o, "\"");
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        puts_(o, "dictionary\n");
        if (!describe(o, attrs->attrs[i], depth + 1)) return 0;
        continue; /* the nested lines end with their own newline */
      }
      default:
        return 0;
    }
    puts_(o, "\n");
  }
  return 1;
}

XLA_FFI_Error* demo_describe_attrs(XLA_FFI_CallFrame* cf) {
  if (is_metadata_query(cf)) return answer_metadata(cf, 0);
  if (cf->rets.size != 1) return fail(cf->api, "demo_describe_attrs: 1 result (u8 text)");
  XLA_FFI_Buffer* out = cf->rets.rets[0];
  if (out->dtype != XLA_FFI_DataType_U8) return fail(cf->api, "demo_describe_attrs: u8 result");
  size_t cap = count(out);
  memset(out->data, 0, cap);
  text_out o = {out->data, cap, 0};
  if (!describe(&o, &cf->attrs, 0))
    return fail(cf->api, "demo_describe_attrs: an attribute of an unsupported type");
  if (o.overflow)
    return fail_code(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     "demo_describe_attrs: the result buffer is too small for the description");
  return NULL;
}
