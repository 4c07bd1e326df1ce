/*
 * runtime_cuda_handlers.c: a C test handler for the embedded runtime's CUDA
 * platform, written against the project's own xla_ffi.h. It uses what an
 * XLA:GPU handler uses: the stream (Stream_Get), scratch device memory
 * (DeviceMemory_Allocate/Free), the device ordinal, and the driver API on
 * the runtime's stream, and reports what it saw into host memory handed to
 * it as user data. Runs on a real GPU and on the stand-in driver.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#include "test_handler_util.h"

typedef int (*memcpy_dtod_async_fn)(uint64_t dst, uint64_t src, size_t n, void* stream);
typedef int (*memset_d8_fn)(uint64_t dst, unsigned char value, size_t n);
typedef int (*ctx_get_current_fn)(void** ctx);

static int64_t find_attr(const XLA_FFI_Attrs* attrs, const char* name) {
  size_t n = strlen(name);
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan* s = attrs->names[i];
    if (s->len == n && memcmp(s->ptr, name, n) == 0) return i;
  }
  return -1;
}

static int64_t attr_i64(const XLA_FFI_CallFrame* cf, const char* name, int64_t dflt) {
  int64_t i = find_attr(&cf->attrs, name);
  if (i < 0 || cf->attrs.types[i] != XLA_FFI_AttrType_SCALAR) return dflt;
  const XLA_FFI_Scalar* s = cf->attrs.attrs[i];
  return s->dtype == XLA_FFI_DataType_S64 ? *(int64_t*)s->value : dflt;
}

/* A string attribute copied into buf (empty when missing). */
static void attr_str(const XLA_FFI_CallFrame* cf, const char* name, char* buf, size_t cap) {
  buf[0] = '\0';
  int64_t i = find_attr(&cf->attrs, name);
  if (i < 0 || cf->attrs.types[i] != XLA_FFI_AttrType_STRING) return;
  const XLA_FFI_ByteSpan* s = cf->attrs.attrs[i];
  snprintf(buf, cap, "%.*s", (int)s->len, s->ptr);
}

/* ByteWidth x elements. */
static size_t buffer_bytes(const XLA_FFI_Buffer* b) {
  size_t w = xla_ffi_dtype_width(b->dtype);
  for (int64_t i = 0; i < b->rank; i++) w *= (size_t)b->dims[i];
  return w;
}

/* Report slots (int64, user data with the type id of attr "report_type"). */
enum {
  R_STREAM,          /* what Stream_Get returned */
  R_ORDINAL,         /* DeviceOrdinal_Get */
  R_SCRATCH,         /* the scratch address DeviceMemory_Allocate returned */
  R_ALIGNED,         /* scratch % alignment == 0 */
  R_CONTEXT,         /* the context current on the handler's thread */
  R_POOL_CODE,       /* ThreadPool_NumThreads's error code (0 = none) */
  R_COPIED,          /* bytes copied arg0 -> scratch -> ret0 */
  R_CALLS,           /* calls that reached the end (incremented) */
  R_COUNT
};

/**
 * arg0 -> scratch -> ret0 on the runtime's stream, through scratch memory
 * from DeviceMemory_Allocate (attr "alignment", default 16), freed with
 * DeviceMemory_Free; attr "driver" names the driver library. The scratch is
 * first filled synchronously (cuMemsetD8), outside any stream's order: the
 * allocation must be usable at once, as XLA's allocator's is. Writes the
 * report; the copy is queued (the caller synchronises the stream).
 */
XLA_FFI_Error* test_cuda_scratch(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  const XLA_FFI_Api* api = cf->api;
  if (cf->args.size != 1 || cf->rets.size != 1)
    return test_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "scratch: one argument, one result");
  XLA_FFI_Buffer* x = cf->args.args[0];
  XLA_FFI_Buffer* y = cf->rets.rets[0];
  size_t n = buffer_bytes(x);
  if (buffer_bytes(y) != n)
    return test_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "scratch: sizes differ");

  XLA_FFI_TypeId report_id = {attr_i64(cf, "report_type", 0)};
  XLA_FFI_ExecutionContext_Get_Args ug = {XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, &report_id, NULL};
  XLA_FFI_Error* e = api->XLA_FFI_ExecutionContext_Get(&ug);
  if (e) return e;
  _Atomic int64_t* report = ug.data;

  XLA_FFI_Stream_Get_Args sg = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, cf->ctx, NULL};
  if ((e = api->XLA_FFI_Stream_Get(&sg))) return e;
  report[R_STREAM] = (int64_t)(intptr_t)sg.stream;

  XLA_FFI_DeviceOrdinal_Get_Args og = {XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, NULL, cf->ctx,
                                       -7};
  if ((e = api->XLA_FFI_DeviceOrdinal_Get(&og))) return e;
  report[R_ORDINAL] = og.device_ordinal;

  XLA_FFI_ThreadPool_NumThreads_Args tp = {XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, NULL,
                                           cf->ctx, NULL};
  int64_t threads = 0;
  tp.num_threads = &threads;
  XLA_FFI_Error* pe = api->XLA_FFI_ThreadPool_NumThreads(&tp);
  report[R_POOL_CODE] = 0;
  if (pe) {
    XLA_FFI_Error_GetMessage_Args gm = {XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, NULL, pe,
                                        NULL};
    api->XLA_FFI_Error_GetMessage(&gm);
    /* The code is not readable through the 0.1 API: record UNIMPLEMENTED when
     * the message is XLA's, else -1. */
    report[R_POOL_CODE] =
        gm.message && strcmp(gm.message, "XLA FFI CPU context is not available") == 0 ? 12 : -1;
    XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, pe};
    api->XLA_FFI_Error_Destroy(&d);
  }

  char path[512];
  attr_str(cf, "driver", path, sizeof path);
  void* lib = dlopen(path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return test_error(api, XLA_FFI_Error_Code_UNAVAILABLE, "scratch: cannot open the driver");
  memcpy_dtod_async_fn copy = (memcpy_dtod_async_fn)dlsym(lib, "cuMemcpyDtoDAsync_v2");
  ctx_get_current_fn ctx_get = (ctx_get_current_fn)dlsym(lib, "cuCtxGetCurrent");
  memset_d8_fn fill = (memset_d8_fn)dlsym(lib, "cuMemsetD8_v2");
  if (!copy || !ctx_get || !fill) {
    dlclose(lib);
    return test_error(api, XLA_FFI_Error_Code_UNAVAILABLE, "scratch: driver symbols missing");
  }
  void* ctx = NULL;
  report[R_CONTEXT] = ctx_get(&ctx) == 0 ? (int64_t)(intptr_t)ctx : -1;

  size_t alignment = (size_t)attr_i64(cf, "alignment", 16);
  XLA_FFI_DeviceMemory_Allocate_Args al = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL,
                                           cf->ctx, n, alignment, NULL};
  if ((e = api->XLA_FFI_DeviceMemory_Allocate(&al))) {
    dlclose(lib);
    return e;
  }
  uint64_t scratch = (uint64_t)(uintptr_t)al.data;
  report[R_SCRATCH] = (int64_t)scratch;
  report[R_ALIGNED] = scratch % alignment == 0;

  int r0 = n ? fill(scratch, 0xa5, n) : 0;
  int r1 = n && r0 == 0 ? copy(scratch, (uint64_t)(uintptr_t)x->data, n, sg.stream) : 0;
  int r2 = n && r0 == 0 && r1 == 0 ? copy((uint64_t)(uintptr_t)y->data, scratch, n, sg.stream) : 0;
  dlclose(lib);
  XLA_FFI_DeviceMemory_Free_Args fr = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, cf->ctx,
                                       n, al.data};
  e = api->XLA_FFI_DeviceMemory_Free(&fr);
  if (r0 || r1 || r2) {
    char msg[96];
    snprintf(msg, sizeof msg, "scratch: %s failed with %d",
             r0 ? "a synchronous cuMemsetD8_v2 into new scratch memory" : "cuMemcpyDtoDAsync",
             r0 ? r0 : r1 ? r1 : r2);
    if (e) {
      XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
      api->XLA_FFI_Error_Destroy(&d);
    }
    return test_error(api, XLA_FFI_Error_Code_INTERNAL, msg);
  }
  if (e) return e;
  report[R_COPIED] = (int64_t)n;
  report[R_CALLS]++;
  return NULL;
}
