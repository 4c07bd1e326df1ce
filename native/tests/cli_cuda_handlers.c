/*
 * cli_cuda_handlers.c: a C handler for `cli run --platform cuda` tests,
 * written against the project's own xla_ffi.h. It does what an XLA:GPU
 * handler does: takes the runtime's stream (Stream_Get), scratch device
 * memory (DeviceMemory_Allocate/Free), and queues driver copies on that
 * stream; it never reads device memory on the host. Runs on a real GPU and
 * on the stand-in driver (native/tests/cuda_standin.c).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#include "test_handler_util.h"

typedef int (*memcpy_dtod_async_fn)(uint64_t dst, uint64_t src, size_t n, void* stream);

static size_t elements(const XLA_FFI_Buffer* b) {
  size_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= (size_t)b->dims[i];
  return n;
}

/*
 * ret0 = arg0 in reverse element order (same dtype and element count), via
 * scratch device memory: arg0 -> scratch, then scratch[i] -> ret0[n-1-i],
 * all queued on the runtime's stream. The driver is the one the runtime
 * uses: $XLA_FFI_DENO_CUDA, else libcuda.so.1.
 */
XLA_FFI_Error* cli_cuda_reverse(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  const XLA_FFI_Api* api = cf->api;
  if (cf->args.size != 1 || cf->rets.size != 1)
    return test_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "reverse: one argument, one result");
  XLA_FFI_Buffer* x = cf->args.args[0];
  XLA_FFI_Buffer* y = cf->rets.rets[0];
  /* Whole-byte element types only: not 8-bit floats or sub-byte types. */
  size_t w = x->dtype < XLA_FFI_DataType_F8E5M2 ? xla_ffi_dtype_width(x->dtype) : 0;
  size_t n = elements(x);
  if (w == 0 || y->dtype != x->dtype || elements(y) != n)
    return test_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                 "reverse: the result needs the argument's dtype and element count");
  if (n == 0) return NULL;

  XLA_FFI_Stream_Get_Args sg = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, cf->ctx, NULL};
  XLA_FFI_Error* e = api->XLA_FFI_Stream_Get(&sg);
  if (e) return e;

  const char* path = getenv("XLA_FFI_DENO_CUDA");
  void* lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return test_error(api, XLA_FFI_Error_Code_UNAVAILABLE, "reverse: cannot open the driver");
  memcpy_dtod_async_fn copy = (memcpy_dtod_async_fn)dlsym(lib, "cuMemcpyDtoDAsync_v2");
  if (!copy) {
    dlclose(lib);
    return test_error(api, XLA_FFI_Error_Code_UNAVAILABLE, "reverse: cuMemcpyDtoDAsync_v2 missing");
  }

  XLA_FFI_DeviceMemory_Allocate_Args al = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL,
                                           cf->ctx, n * w, 16, NULL};
  if ((e = api->XLA_FFI_DeviceMemory_Allocate(&al))) {
    dlclose(lib);
    return e;
  }
  uint64_t scratch = (uint64_t)(uintptr_t)al.data;
  uint64_t src = (uint64_t)(uintptr_t)x->data;
  uint64_t dst = (uint64_t)(uintptr_t)y->data;
  int rc = copy(scratch, src, n * w, sg.stream);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    rc = copy(dst + (n - 1 - i) * w, scratch + i * w, w, sg.stream);
  }
  dlclose(lib);
  XLA_FFI_DeviceMemory_Free_Args fr = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, cf->ctx,
                                       n * w, al.data};
  e = api->XLA_FFI_DeviceMemory_Free(&fr);
  if (rc != 0) {
    if (e) {
      XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
      api->XLA_FFI_Error_Destroy(&d);
    }
    char msg[64];
    snprintf(msg, sizeof msg, "reverse: cuMemcpyDtoDAsync failed with %d", rc);
    return test_error(api, XLA_FFI_Error_Code_INTERNAL, msg);
  }
  return e;
}
