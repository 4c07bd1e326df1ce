/*
 * runtime_cuda.c: the CUDA platform of the embedded runtime. A CUDA runtime
 * holds a device's context and a stream; handlers get that stream from
 * Stream_Get, and DeviceMemory_Allocate/Free allocate in stream order on it
 * (cuMemAllocAsync/cuMemFreeAsync). Handlers run with the runtime's context
 * current, as XLA:GPU runs thunks with the executor's context active.
 *
 * No link-time CUDA dependency: the driver functions are resolved with
 * dlopen/dlsym on the driver library the TypeScript bindings opened (the
 * path is passed in), so the main library loads on machines without CUDA.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

typedef int (*cu_mem_alloc_async_fn)(uint64_t* ptr, size_t bytes, void* stream);
typedef int (*cu_mem_free_async_fn)(uint64_t ptr, void* stream);
typedef int (*cu_ctx_get_current_fn)(void** ctx);
typedef int (*cu_ctx_set_current_fn)(void* ctx);
typedef int (*cu_error_text_fn)(int result, const char** text);

struct xrt_cuda {
  void* lib;
  void* ctx;
  int32_t device;
  cu_mem_alloc_async_fn alloc; /* NULL: the driver predates stream-ordered allocation */
  cu_mem_free_async_fn free;
  cu_ctx_get_current_fn ctx_get;
  cu_ctx_set_current_fn ctx_set;
  cu_error_text_fn error_name;
  cu_error_text_fn error_string;
};

/* The XLA FFI error code of a CUresult (same mapping as the TS bindings). */
static XLA_FFI_Error_Code cuda_code(int r) {
  switch (r) {
    case 2:   /* OUT_OF_MEMORY */
    case 701: /* LAUNCH_OUT_OF_RESOURCES */
      return XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
    case 3: case 4: case 34: case 35: case 46: case 100: case 803: case 804:
      return XLA_FFI_Error_Code_UNAVAILABLE;
    case 1: case 101: case 201: case 400:
      return XLA_FFI_Error_Code_INVALID_ARGUMENT;
    case 500:
      return XLA_FFI_Error_Code_NOT_FOUND;
    case 801:
      return XLA_FFI_Error_Code_UNIMPLEMENTED;
    case 800:
      return XLA_FFI_Error_Code_PERMISSION_DENIED;
    default:
      return XLA_FFI_Error_Code_INTERNAL;
  }
}

/* "<what>: CUDA_ERROR_X: description (fn)", as the TS bindings word it. */
static XLA_FFI_Error* cuda_error(const struct xrt_cuda* c, int r, const char* fn,
                                 const char* what) {
  const char* name = NULL;
  const char* text = NULL;
  if (c->error_name && c->error_name(r, &name) != 0) name = NULL;
  if (c->error_string && c->error_string(r, &text) != 0) text = NULL;
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "CUDA_ERROR_%d", r);
    name = fallback;
  }
  return xrt_error_new(cuda_code(r), "%s%s%s: %s (%s)", what ? what : "", what ? ": " : "", name,
                       text ? text : "unknown CUDA error", fn);
}

static void* sym(void* lib, const char* name) {
  dlerror();
  return dlsym(lib, name);
}

/**
 * Attaches a CUDA device to a CUDA runtime: `driver` is the path of the
 * driver library (the one the bindings opened), `ctx` the device's CUcontext
 * (retained by the caller for the runtime's life), `device` its ordinal.
 * Set the stream with xrt_runtime_set_stream. Returns NULL on success.
 */
XLA_FFI_Error* xrt_runtime_set_cuda(xrt_runtime* rt, const char* driver, void* ctx,
                                    int32_t device) {
  if (!rt || rt->platform != XRT_PLATFORM_CUDA)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "A CUDA device can only be attached to a CUDA runtime");
  if (rt->cuda)
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "The runtime already has a CUDA device");
  if (!ctx)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "The CUDA context must not be null");
  void* lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    return xrt_error_new(XLA_FFI_Error_Code_UNAVAILABLE,
                         "CUDA is not available: cannot load the CUDA driver %s: %s", driver,
                         e ? e : "unknown loader error");
  }
  struct xrt_cuda* c = calloc(1, sizeof *c);
  if (!c) abort();
  c->lib = lib;
  c->ctx = ctx;
  c->device = device;
  /* Function pointers from dlsym (POSIX guarantees the conversion). */
  c->ctx_get = (cu_ctx_get_current_fn)sym(lib, "cuCtxGetCurrent");
  c->ctx_set = (cu_ctx_set_current_fn)sym(lib, "cuCtxSetCurrent");
  c->alloc = (cu_mem_alloc_async_fn)sym(lib, "cuMemAllocAsync");
  c->free = (cu_mem_free_async_fn)sym(lib, "cuMemFreeAsync");
  c->error_name = (cu_error_text_fn)sym(lib, "cuGetErrorName");
  c->error_string = (cu_error_text_fn)sym(lib, "cuGetErrorString");
  const char* missing = !c->ctx_get ? "cuCtxGetCurrent" : !c->ctx_set ? "cuCtxSetCurrent" : NULL;
  if (missing) {
    XLA_FFI_Error* e = xrt_error_new(XLA_FFI_Error_Code_UNAVAILABLE,
                                     "The CUDA driver %s has no %s (driver too old?)", driver,
                                     missing);
    dlclose(lib);
    free(c);
    return e;
  }
  if (!c->alloc || !c->free) {
    c->alloc = NULL;
    c->free = NULL;
  }
  rt->cuda = c;
  return NULL;
}

/** Detaches and frees the runtime's CUDA device (no-op without one). */
void xrt_cuda_detach(xrt_runtime* rt) {
  struct xrt_cuda* c = rt->cuda;
  if (!c) return;
  rt->cuda = NULL;
  dlclose(c->lib);
  free(c);
}

int32_t xrt_cuda_device(const xrt_runtime* rt) { return rt->cuda->device; }

/** Makes the runtime's context current on this thread (see xrt_cuda_enter). */
XLA_FFI_Error* xrt_cuda_activate(const xrt_runtime* rt, xrt_cuda_scope* s) {
  s->prev = NULL;
  s->changed = 0;
  const struct xrt_cuda* c = rt ? rt->cuda : NULL;
  if (!c) return NULL;
  void* cur = NULL;
  int r = c->ctx_get(&cur);
  if (r != 0) return cuda_error(c, r, "cuCtxGetCurrent", "Cannot make the CUDA context current");
  if (cur == c->ctx) return NULL;
  r = c->ctx_set(c->ctx);
  if (r != 0) return cuda_error(c, r, "cuCtxSetCurrent", "Cannot make the CUDA context current");
  s->prev = cur;
  s->changed = 1;
  return NULL;
}

/** Restores the context that was current before xrt_cuda_activate. */
void xrt_cuda_restore(const xrt_runtime* rt, const xrt_cuda_scope* s) {
  if (s->changed) rt->cuda->ctx_set(s->prev);
}

static XLA_FFI_Error* no_allocator(void) {
  return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                       "No device memory allocator available on this platform");
}

/** DeviceMemory_Allocate on a CUDA runtime (alignment already checked). */
XLA_FFI_Error* xrt_cuda_allocate(const xrt_runtime* rt, size_t size, void** data) {
  const struct xrt_cuda* c = rt->cuda;
  if (!c || !c->alloc) return no_allocator();
  if (size == 0) { /* as XLA's allocator: no memory, a null address */
    *data = NULL;
    return NULL;
  }
  xrt_cuda_scope s;
  XLA_FFI_Error* e = xrt_cuda_enter(rt, &s);
  if (e) return e;
  uint64_t p = 0;
  int r = c->alloc(&p, size, rt->stream);
  xrt_cuda_leave(rt, &s);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "Failed to allocate %zu bytes on device %d", size, c->device);
    return cuda_error(c, r, "cuMemAllocAsync", what);
  }
  *data = (void*)(uintptr_t)p;
  return NULL;
}

/** DeviceMemory_Free on a CUDA runtime: frees in the stream's order. */
XLA_FFI_Error* xrt_cuda_free(const xrt_runtime* rt, size_t size, void* data) {
  const struct xrt_cuda* c = rt->cuda;
  if (!c || !c->free) return no_allocator();
  if (!data) return NULL;
  xrt_cuda_scope s;
  XLA_FFI_Error* e = xrt_cuda_enter(rt, &s);
  if (e) return e;
  int r = c->free((uint64_t)(uintptr_t)data, rt->stream);
  xrt_cuda_leave(rt, &s);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "Failed to free %zu bytes on device %d", size, c->device);
    return cuda_error(c, r, "cuMemFreeAsync", what);
  }
  return NULL;
}
