/*
 * frames.c: the benchmark's three call frames (standard, small, large), built
 * once as real XLA_FFI_CallFrame structs with deterministic contents.
 *
 * - standard: 4 F32 arguments of ranks 2, 1, 3, 4; 1 F32 result; attributes
 *   alpha (f32 0.5), axes (s64[3] {0, 1, 2}), mode ("reflect"), n (s32 42),
 *   in XLA's sorted-name order.
 * - small: 1 F32 argument of 8 elements; no results, no attributes.
 * - large: 64 arguments and 4 results of mixed types and ranks 0-4;
 *   32 attributes of every kind, dictionaries among them (one nests another).
 *
 * Buffer byte k of the n-th buffer built holds (n * 31 + k * 7 + 1) & 0xff.
 * The frames carry no execution context and no API table until
 * bench_frame_set_context(): decoders only read them. A handler that reports
 * errors through the API (the TS handler entry does) needs the API, and under
 * the embedded runtime an execution context of that runtime.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static _Alignas(16) unsigned char g_arena[1 << 20];
static size_t g_used;
static int g_buffers_built;
static XLA_FFI_CallFrame* g_frames[BENCH_FRAME_COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void* arena(size_t n) {
  n = (n + 15u) & ~(size_t)15u;
  if (g_used + n > sizeof g_arena) {
    fprintf(stderr, "bench frames: arena exhausted\n");
    abort();
  }
  void* p = &g_arena[g_used];
  g_used += n;
  return p;
}

static XLA_FFI_Buffer* make_buffer(int32_t dtype, int64_t rank, const int64_t* dims) {
  XLA_FFI_Buffer* b = arena(sizeof *b);
  int64_t* d = arena(sizeof(int64_t) * (size_t)(rank > 0 ? rank : 1));
  int64_t elems = 1;
  for (int64_t i = 0; i < rank; i++) {
    d[i] = dims[i];
    elems *= dims[i];
  }
  size_t bytes = (size_t)elems * xla_ffi_dtype_width(dtype);
  unsigned char* data = arena(bytes > 0 ? bytes : 1);
  int n = g_buffers_built++;
  for (size_t k = 0; k < bytes; k++) data[k] = (unsigned char)((n * 31 + (int)k * 7 + 1) & 0xff);
  b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  b->extension_start = NULL;
  b->dtype = (XLA_FFI_DataType)dtype;
  b->data = data;
  b->rank = rank;
  b->dims = d;
  return b;
}

static XLA_FFI_Attrs* new_attrs(int64_t capacity) {
  XLA_FFI_Attrs* a = arena(sizeof *a);
  a->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  a->extension_start = NULL;
  a->size = 0;
  a->types = arena(sizeof(XLA_FFI_AttrType) * (size_t)capacity);
  a->names = arena(sizeof(XLA_FFI_ByteSpan*) * (size_t)capacity);
  a->attrs = arena(sizeof(void*) * (size_t)capacity);
  return a;
}

static XLA_FFI_ByteSpan* span(const char* s) {
  size_t n = strlen(s);
  char* copy = arena(n + 1);
  memcpy(copy, s, n + 1);
  XLA_FFI_ByteSpan* b = arena(sizeof *b);
  b->ptr = copy;
  b->len = n;
  return b;
}

static void push(XLA_FFI_Attrs* a, const char* name, XLA_FFI_AttrType type, void* value) {
  a->types[a->size] = type;
  a->names[a->size] = span(name);
  a->attrs[a->size] = value;
  a->size++;
}

static void push_scalar(XLA_FFI_Attrs* a, const char* name, int32_t dtype, const void* value) {
  XLA_FFI_Scalar* s = arena(sizeof *s);
  size_t n = (size_t)xla_ffi_dtype_width(dtype);
  void* v = arena(n);
  memcpy(v, value, n);
  s->dtype = (XLA_FFI_DataType)dtype;
  s->value = v;
  push(a, name, XLA_FFI_AttrType_SCALAR, s);
}

static void push_array(XLA_FFI_Attrs* a, const char* name, int32_t dtype, size_t size,
                       const void* data) {
  XLA_FFI_Array* arr = arena(sizeof *arr);
  size_t n = (size_t)xla_ffi_dtype_width(dtype) * size;
  void* d = arena(n > 0 ? n : 1);
  memcpy(d, data, n);
  arr->dtype = (XLA_FFI_DataType)dtype;
  arr->size = size;
  arr->data = d;
  push(a, name, XLA_FFI_AttrType_ARRAY, arr);
}

static void push_string(XLA_FFI_Attrs* a, const char* name, const char* value) {
  push(a, name, XLA_FFI_AttrType_STRING, span(value));
}

static void push_dict(XLA_FFI_Attrs* a, const char* name, XLA_FFI_Attrs* dict) {
  push(a, name, XLA_FFI_AttrType_DICTIONARY, dict);
}

static XLA_FFI_CallFrame* new_frame(int64_t nargs, XLA_FFI_Buffer** args, int64_t nrets,
                                    XLA_FFI_Buffer** rets, const XLA_FFI_Attrs* attrs) {
  XLA_FFI_CallFrame* f = arena(sizeof *f);
  memset(f, 0, sizeof *f);
  f->struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f->stage = XLA_FFI_ExecutionStage_EXECUTE;
  f->args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  f->args.size = nargs;
  f->args.types = arena(sizeof(XLA_FFI_ArgType) * (size_t)(nargs > 0 ? nargs : 1));
  f->args.args = arena(sizeof(void*) * (size_t)(nargs > 0 ? nargs : 1));
  for (int64_t i = 0; i < nargs; i++) {
    f->args.types[i] = XLA_FFI_ArgType_BUFFER;
    f->args.args[i] = args[i];
  }
  f->rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  f->rets.size = nrets;
  f->rets.types = arena(sizeof(XLA_FFI_RetType) * (size_t)(nrets > 0 ? nrets : 1));
  f->rets.rets = arena(sizeof(void*) * (size_t)(nrets > 0 ? nrets : 1));
  for (int64_t i = 0; i < nrets; i++) {
    f->rets.types[i] = XLA_FFI_RetType_BUFFER;
    f->rets.rets[i] = rets[i];
  }
  if (attrs) {
    f->attrs = *attrs;
  } else {
    f->attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
    f->attrs.size = 0;
    f->attrs.types = arena(sizeof(XLA_FFI_AttrType));
    f->attrs.names = arena(sizeof(XLA_FFI_ByteSpan*));
    f->attrs.attrs = arena(sizeof(void*));
  }
  return f;
}

static XLA_FFI_CallFrame* build_standard(void) {
  static const int64_t d0[] = {16, 16}, d1[] = {64}, d2[] = {4, 8, 8}, d3[] = {2, 3, 4, 5};
  XLA_FFI_Buffer* args[4] = {
      make_buffer(XLA_FFI_DataType_F32, 2, d0),
      make_buffer(XLA_FFI_DataType_F32, 1, d1),
      make_buffer(XLA_FFI_DataType_F32, 3, d2),
      make_buffer(XLA_FFI_DataType_F32, 4, d3),
  };
  XLA_FFI_Buffer* rets[1] = {make_buffer(XLA_FFI_DataType_F32, 2, d0)};
  XLA_FFI_Attrs* a = new_attrs(4);
  float alpha = 0.5f;
  int64_t axes[3] = {0, 1, 2};
  int32_t n = 42;
  push_scalar(a, "alpha", XLA_FFI_DataType_F32, &alpha);
  push_array(a, "axes", XLA_FFI_DataType_S64, 3, axes);
  push_string(a, "mode", "reflect");
  push_scalar(a, "n", XLA_FFI_DataType_S32, &n);
  return new_frame(4, args, 1, rets, a);
}

static XLA_FFI_CallFrame* build_small(void) {
  static const int64_t d0[] = {8};
  XLA_FFI_Buffer* args[1] = {make_buffer(XLA_FFI_DataType_F32, 1, d0)};
  return new_frame(1, args, 0, NULL, NULL);
}

static const int32_t k_large_dtypes[8] = {
    XLA_FFI_DataType_F32, XLA_FFI_DataType_F64, XLA_FFI_DataType_S32, XLA_FFI_DataType_S64,
    XLA_FFI_DataType_U8,  XLA_FFI_DataType_F16, XLA_FFI_DataType_S8,  XLA_FFI_DataType_U32,
};

static XLA_FFI_Buffer* large_buffer(int i) {
  int64_t rank = i % 5;
  int64_t dims[4];
  for (int64_t j = 0; j < rank; j++) dims[j] = 2 + (i + j) % 3;
  return make_buffer(k_large_dtypes[i % 8], rank, dims);
}

static XLA_FFI_Attrs* large_dict(int i, int nested) {
  XLA_FFI_Attrs* d = new_attrs(4);
  char text[32];
  int32_t s = i * 11 - 5;
  double f[3] = {i * 0.125, -1.0 * i, 3.0};
  snprintf(text, sizeof text, "inner_%02d", i);
  push_array(d, "coeffs", XLA_FFI_DataType_F64, 3, f);
  push_scalar(d, "count", XLA_FFI_DataType_S32, &s);
  push_string(d, "label", text);
  if (nested) {
    XLA_FFI_Attrs* inner = new_attrs(2);
    uint8_t flag = 1;
    int64_t big = (int64_t)i * -1000000007LL;
    push_scalar(inner, "enabled", XLA_FFI_DataType_PRED, &flag);
    push_scalar(inner, "seed", XLA_FFI_DataType_S64, &big);
    push_dict(d, "options", inner);
  }
  return d;
}

static XLA_FFI_CallFrame* build_large(void) {
  XLA_FFI_Buffer* args[64];
  XLA_FFI_Buffer* rets[4];
  for (int i = 0; i < 64; i++) args[i] = large_buffer(i);
  for (int i = 0; i < 4; i++) rets[i] = large_buffer(64 + i);
  XLA_FFI_Attrs* a = new_attrs(32);
  for (int i = 0; i < 32; i++) {
    char name[32];
    switch (i % 8) {
      case 0: {
        int32_t v = i * 3 - 7;
        snprintf(name, sizeof name, "k%02d_s32", i);
        push_scalar(a, name, XLA_FFI_DataType_S32, &v);
        break;
      }
      case 1: {
        float v = (float)i * 0.25f;
        snprintf(name, sizeof name, "k%02d_f32", i);
        push_scalar(a, name, XLA_FFI_DataType_F32, &v);
        break;
      }
      case 2: {
        double v = (double)i * 1.5 - 0.001;
        snprintf(name, sizeof name, "k%02d_f64", i);
        push_scalar(a, name, XLA_FFI_DataType_F64, &v);
        break;
      }
      case 3: {
        char text[48];
        snprintf(name, sizeof name, "k%02d_str", i);
        snprintf(text, sizeof text, "value-%02d-%s", i, i % 16 == 3 ? "reflect" : "constant");
        push_string(a, name, text);
        break;
      }
      case 4: {
        int64_t v[8];
        size_t n = 1 + (size_t)(i % 7);
        for (size_t j = 0; j < n; j++) v[j] = (int64_t)j * (i + 1) - 3;
        snprintf(name, sizeof name, "k%02d_s64s", i);
        push_array(a, name, XLA_FFI_DataType_S64, n, v);
        break;
      }
      case 5: {
        float v[16];
        for (int j = 0; j < 16; j++) v[j] = (float)j * 0.5f + (float)i;
        snprintf(name, sizeof name, "k%02d_f32s", i);
        push_array(a, name, XLA_FFI_DataType_F32, 16, v);
        break;
      }
      case 6:
        snprintf(name, sizeof name, "k%02d_dict", i);
        push_dict(a, name, large_dict(i, i % 16 == 6));
        break;
      default: {
        uint64_t v = 0xfedcba9876543210ULL ^ (uint64_t)i;
        snprintf(name, sizeof name, "k%02d_u64", i);
        push_scalar(a, name, XLA_FFI_DataType_U64, &v);
        break;
      }
    }
  }
  return new_frame(64, args, 4, rets, a);
}

static void build_all(void) {
  g_frames[BENCH_FRAME_STANDARD] = build_standard();
  g_frames[BENCH_FRAME_SMALL] = build_small();
  g_frames[BENCH_FRAME_LARGE] = build_large();
}

/* The frame `which` (BENCH_FRAME_*), built on first use; NULL when out of range. */
XLA_FFI_CallFrame* bench_frame(int32_t which) {
  if (which < 0 || which >= BENCH_FRAME_COUNT) return NULL;
  pthread_once(&g_once, build_all);
  return g_frames[which];
}

/* Number of frames bench_frame() knows. */
int32_t bench_frame_count(void) { return BENCH_FRAME_COUNT; }

/* Sets the API table of every frame (NULL: none). Call it before any thread
 * drives a frame. */
void bench_frame_set_context(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) {
  pthread_once(&g_once, build_all);
  for (int i = 0; i < BENCH_FRAME_COUNT; i++) {
    g_frames[i]->api = api;
    g_frames[i]->ctx = ctx;
  }
}
