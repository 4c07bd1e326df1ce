/*
 * demo_handlers.c: a small XLA FFI handler library, written against the
 * project's xla_ffi.h, the way a user's C handler would be.
 *
 *   demo_saxpy: out = alpha * x + y   (F32 buffers of equal size; attr alpha: f32)
 *   demo_sum_async: out[0] = sum(x), computed on the runtime's thread pool and
 *                   signalled through an XLA_FFI_Future.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdlib.h>
#include <string.h>

#include "xla_ffi.h"

static XLA_FFI_Error* answer_metadata(XLA_FFI_CallFrame* cf) {
  XLA_FFI_Metadata* md = ((XLA_FFI_Metadata_Extension*)cf->extension_start)->metadata;
  md->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  md->api_version.extension_start = NULL;
  md->api_version.major_version = XLA_FFI_API_MAJOR;
  md->api_version.minor_version = XLA_FFI_API_MINOR;
  md->traits = 0;
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
  if (is_metadata_query(cf)) return answer_metadata(cf);
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
  if (is_metadata_query(cf)) return answer_metadata(cf);
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
