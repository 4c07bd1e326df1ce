/*
 * scale.c: the C contender of bench/real_xla.ts, `y = alpha * x` over F32
 * buffers (attribute alpha: f32), written the way a user's handler would be
 * against native/xla_ffi.h. It checks what it needs and nothing more.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <string.h>

#include "xla_ffi.h"

static XLA_FFI_Error* fail(const XLA_FFI_Api* api, const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg,
                                 XLA_FFI_Error_Code_INVALID_ARGUMENT};
  return api->XLA_FFI_Error_Create(&a);
}

XLA_FFI_Error* bench_scale(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata* md = ((XLA_FFI_Metadata_Extension*)cf->extension_start)->metadata;
    md->api_version.major_version = XLA_FFI_API_MAJOR;
    md->api_version.minor_version = XLA_FFI_API_MINOR;
    md->traits = 0;
    return NULL;
  }
  if (cf->args.size != 1 || cf->rets.size != 1 || cf->attrs.size != 1)
    return fail(cf->api, "bench_scale: 1 argument, 1 result, attribute alpha");
  const XLA_FFI_Scalar* alpha = cf->attrs.attrs[0];
  if (cf->attrs.types[0] != XLA_FFI_AttrType_SCALAR || alpha->dtype != XLA_FFI_DataType_F32)
    return fail(cf->api, "bench_scale: alpha must be an f32 scalar");
  const XLA_FFI_Buffer* x = cf->args.args[0];
  XLA_FFI_Buffer* y = cf->rets.rets[0];
  int64_t n = 1;
  for (int64_t i = 0; i < x->rank; i++) n *= x->dims[i];
  const float a = *(const float*)alpha->value;
  const float* xs = x->data;
  float* ys = y->data;
  for (int64_t i = 0; i < n; i++) ys[i] = a * xs[i];
  return NULL;
}
