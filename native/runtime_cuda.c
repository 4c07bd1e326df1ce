/*
 * runtime_cuda.c: the CUDA platform of the embedded runtime. A CUDA runtime
 * holds a device's context and a stream; handlers get that stream from
 * Stream_Get. DeviceMemory_Allocate returns memory usable at once, on any
 * stream and by synchronous copies, as XLA's allocator does: with memory
 * pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) it allocates with
 * cuMemAllocAsync on a private stream of the runtime and waits for that
 * stream (never for the handlers' stream); without them it uses cuMemAlloc.
 * DeviceMemory_Free frees in the order of the handlers' stream
 * (cuMemFreeAsync), or, without pools, waits for that stream and uses
 * cuMemFree. Handlers run with the runtime's context current, as XLA:GPU
 * runs thunks with the executor's context active.
 *
 * No link-time CUDA dependency: the driver functions are resolved with
 * dlopen/dlsym on the driver library the TypeScript bindings opened (the
 * path is passed in), so the main library loads on machines without CUDA.
 * Built with -DXRT_USE_CUDA_H and the toolkit's include folder, the function
 * types come from the toolkit's cuda.h, so every call is checked against the
 * real prototypes (tests/cuda_toolkit_test.ts does this with -Werror).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

#ifdef XRT_USE_CUDA_H
#include <cuda.h>
_Static_assert(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED == 115, "attribute number");
_Static_assert(CU_STREAM_NON_BLOCKING == 1, "stream flag");
#else
/* The few driver types and entries used here, as the driver API defines them. */
typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
#define CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED 115
#define CU_STREAM_NON_BLOCKING 1
/* Declared only for their types (never called by name: resolved with dlsym). */
CUresult cuGetErrorName(CUresult error, const char** str);
CUresult cuGetErrorString(CUresult error, const char** str);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device);
CUresult cuCtxGetCurrent(CUcontext* ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr ptr);
CUresult cuMemAllocAsync(CUdeviceptr* ptr, size_t bytes, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream);
#endif

/* A driver entry: a pointer of the entry's own type. */
#define CU_FN(name) __typeof__(&name) name

struct xrt_cuda {
  void* lib;
  CUcontext ctx;
  int32_t device;
  /* 1: cuMemAllocAsync from the device's pool on alloc_stream; 0: cuMemAlloc. */
  int pools;
  CUstream alloc_stream;
  CU_FN(cuGetErrorName);
  CU_FN(cuGetErrorString);
  CU_FN(cuCtxGetCurrent);
  CU_FN(cuCtxSetCurrent);
  CU_FN(cuStreamSynchronize);
  CU_FN(cuStreamDestroy_v2);
  CU_FN(cuMemAlloc_v2);
  CU_FN(cuMemFree_v2);
  CU_FN(cuMemAllocAsync);
  CU_FN(cuMemFreeAsync);
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

/* "<what>: CUDA_ERROR_X: description (fn)", as the TS bindings word it, into buf. */
static void cuda_message(const struct xrt_cuda* c, CUresult r, const char* fn, const char* what,
                         char* buf, size_t cap) {
  const char* name = NULL;
  const char* text = NULL;
  if (c->cuGetErrorName && c->cuGetErrorName(r, &name) != 0) name = NULL;
  if (c->cuGetErrorString && c->cuGetErrorString(r, &text) != 0) text = NULL;
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "CUDA_ERROR_%d", (int)r);
    name = fallback;
  }
  snprintf(buf, cap, "%s%s%s: %s (%s)", what ? what : "", what ? ": " : "", name,
           text ? text : "unknown CUDA error", fn);
}

static XLA_FFI_Error* cuda_error(const struct xrt_cuda* c, CUresult r, const char* fn,
                                 const char* what) {
  char buf[512];
  cuda_message(c, r, fn, what, buf, sizeof buf);
  return xrt_error_new(cuda_code((int)r), "%s", buf);
}

static void* sym(void* lib, const char* name) {
  dlerror();
  return dlsym(lib, name);
}

/* Function pointers from dlsym (POSIX guarantees the conversion). */
#define LOAD(c, name) ((c)->name = (__typeof__((c)->name))sym((c)->lib, #name))

static void cuda_free_parts(struct xrt_cuda* c) {
  dlclose(c->lib);
  free(c);
}

/* Makes c's context current; *prev gets the one to restore, *changed whether
 * it differs; on failure *fn names the driver call that failed. */
static CUresult make_current(const struct xrt_cuda* c, CUcontext* prev, int* changed,
                             const char** fn) {
  *changed = 0;
  CUcontext cur = NULL;
  *fn = "cuCtxGetCurrent";
  CUresult r = c->cuCtxGetCurrent(&cur);
  if (r != 0 || cur == c->ctx) return r;
  *fn = "cuCtxSetCurrent";
  r = c->cuCtxSetCurrent(c->ctx);
  if (r == 0) {
    *prev = cur;
    *changed = 1;
  }
  return r;
}

/**
 * Attaches a CUDA device to a CUDA runtime: `driver` is the path of the
 * driver library (the one the bindings opened), `ctx` the device's CUcontext
 * (retained by the caller for the runtime's life), `device` its ordinal.
 * Asks the device whether it has memory pools (then creates the private
 * allocation stream in `ctx`). Set the handlers' stream with
 * xla_ffi_deno_runtime_set_stream. Returns NULL on success.
 */
XLA_FFI_Error* xla_ffi_deno_runtime_set_cuda(xrt_runtime* rt, const char* driver, void* ctx,
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
  LOAD(c, cuGetErrorName);
  LOAD(c, cuGetErrorString);
  LOAD(c, cuCtxGetCurrent);
  LOAD(c, cuCtxSetCurrent);
  LOAD(c, cuStreamSynchronize);
  LOAD(c, cuStreamDestroy_v2);
  LOAD(c, cuMemAlloc_v2);
  LOAD(c, cuMemFree_v2);
  LOAD(c, cuMemAllocAsync);
  LOAD(c, cuMemFreeAsync);
  __typeof__(&cuDeviceGet) device_get = (__typeof__(&cuDeviceGet))sym(lib, "cuDeviceGet");
  __typeof__(&cuDeviceGetAttribute) get_attribute =
      (__typeof__(&cuDeviceGetAttribute))sym(lib, "cuDeviceGetAttribute");
  __typeof__(&cuStreamCreate) stream_create =
      (__typeof__(&cuStreamCreate))sym(lib, "cuStreamCreate");
  const char* missing = !c->cuCtxGetCurrent        ? "cuCtxGetCurrent"
                        : !c->cuCtxSetCurrent      ? "cuCtxSetCurrent"
                        : !c->cuStreamSynchronize  ? "cuStreamSynchronize"
                        : !c->cuMemAlloc_v2        ? "cuMemAlloc_v2"
                        : !c->cuMemFree_v2         ? "cuMemFree_v2"
                        : !device_get              ? "cuDeviceGet"
                        : !get_attribute           ? "cuDeviceGetAttribute"
                                                   : NULL;
  if (missing) {
    XLA_FFI_Error* e = xrt_error_new(XLA_FFI_Error_Code_UNAVAILABLE,
                                     "The CUDA driver %s has no %s (driver too old?)", driver,
                                     missing);
    cuda_free_parts(c);
    return e;
  }
  /* Memory pools: a driver from CUDA 11.2 on, and a device that supports them. */
  CUdevice dev = 0;
  int pools = 0;
  CUresult r = device_get(&dev, device);
  if (r != 0) {
    XLA_FFI_Error* e = cuda_error(c, r, "cuDeviceGet", "Cannot attach the CUDA device");
    cuda_free_parts(c);
    return e;
  }
  if (c->cuMemAllocAsync && c->cuMemFreeAsync && stream_create && c->cuStreamDestroy_v2) {
    r = get_attribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
    if (r != 0) pools = 0; /* an attribute the driver does not know: no pools */
  }
  if (pools) {
    CUcontext prev = NULL;
    int changed = 0;
    const char* fn;
    r = make_current(c, &prev, &changed, &fn);
    if (r == 0) {
      fn = "cuStreamCreate";
      r = stream_create(&c->alloc_stream, CU_STREAM_NON_BLOCKING);
      if (changed) c->cuCtxSetCurrent(prev);
    }
    if (r != 0) {
      XLA_FFI_Error* e =
          cuda_error(c, r, fn, "Cannot create the CUDA runtime's allocation stream");
      cuda_free_parts(c);
      return e;
    }
  }
  c->pools = pools != 0;
  rt->cuda = c;
  return NULL;
}

/**
 * Detaches and frees the runtime's CUDA device (no-op without one),
 * destroying the allocation stream in the runtime's context.
 */
void xrt_cuda_detach(xrt_runtime* rt) {
  struct xrt_cuda* c = rt->cuda;
  if (!c) return;
  if (c->alloc_stream) {
    CUcontext prev = NULL;
    int changed = 0;
    const char* fn;
    if (make_current(c, &prev, &changed, &fn) == 0) {
      CUresult r = c->cuStreamDestroy_v2(c->alloc_stream);
      if (r != 0) xfd_warn("deno-xla-ffi: cuStreamDestroy_v2 of the allocation stream failed: %d",
                           (int)r);
      if (changed) c->cuCtxSetCurrent(prev);
    } else {
      xfd_warn("deno-xla-ffi: cannot make the CUDA context current to destroy the runtime's "
               "allocation stream");
    }
  }
  rt->cuda = NULL;
  cuda_free_parts(c);
}

int32_t xrt_cuda_device(const xrt_runtime* rt) { return rt->cuda->device; }

/** Makes the runtime's context current on this thread (see xrt_cuda_enter). */
XLA_FFI_Error* xrt_cuda_activate(const xrt_runtime* rt, xrt_cuda_scope* s) {
  s->prev = NULL;
  s->changed = 0;
  const struct xrt_cuda* c = rt ? rt->cuda : NULL;
  if (!c) return NULL;
  CUcontext prev = NULL;
  const char* fn;
  CUresult r = make_current(c, &prev, &s->changed, &fn);
  if (r != 0) return cuda_error(c, r, fn, "Cannot make the CUDA context current");
  s->prev = prev;
  return NULL;
}

/*
 * The handler host's hooks for a TS handler that a runtime thread called and
 * the JS thread serves (handler_host.h), installed by runtime.c. capture
 * (on the calling thread): the calling CUDA runtime, or NULL (none, or not a
 * frame of this runtime). enter (on the JS thread): makes its context
 * current there; 0, or an XLA FFI error code with the message in msg.
 * leave: restores the context that was current before.
 */
const void* xrt_cuda_queued_capture(const XLA_FFI_CallFrame* f) {
  if (!f || !xrt_is_own_api(f->api) || !f->ctx || f->ctx->magic != XRT_CTX_MAGIC) return NULL;
  const xrt_runtime* r = f->ctx->rt;
  return r && r->cuda ? r : NULL;
}

int32_t xrt_cuda_queued_enter(const void* handle, xla_ffi_deno_host_scope* s, char* msg,
                              size_t cap) {
  const xrt_runtime* r = handle;
  s->prev = NULL;
  s->changed = 0;
  const struct xrt_cuda* c = r ? r->cuda : NULL;
  if (!c) return 0;
  CUcontext prev = NULL;
  const char* fn;
  CUresult cr = make_current(c, &prev, &s->changed, &fn);
  if (cr != 0) {
    cuda_message(c, cr, fn, "Cannot make the CUDA context current", msg, cap);
    return cuda_code((int)cr);
  }
  s->prev = prev;
  return 0;
}

void xrt_cuda_queued_leave(const void* handle, const xla_ffi_deno_host_scope* s) {
  if (s->changed) ((const xrt_runtime*)handle)->cuda->cuCtxSetCurrent((CUcontext)s->prev);
}

/** Restores the context that was current before xrt_cuda_activate. */
void xrt_cuda_restore(const xrt_runtime* rt, const xrt_cuda_scope* s) {
  if (s->changed) rt->cuda->cuCtxSetCurrent((CUcontext)s->prev);
}

/**
 * DeviceMemory_Allocate on a CUDA runtime (alignment already checked). The
 * memory is usable at once: with pools, after the allocation stream has
 * reached the allocation; else from cuMemAlloc. Both are at least 256-byte
 * aligned.
 */
XLA_FFI_Error* xrt_cuda_allocate(const xrt_runtime* rt, size_t size, void** data) {
  const struct xrt_cuda* c = rt->cuda;
  if (!c)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No device memory allocator available on this platform");
  if (size == 0) { /* as XLA's allocator: no memory, a null address */
    *data = NULL;
    return NULL;
  }
  xrt_cuda_scope s;
  XLA_FFI_Error* e = xrt_cuda_enter(rt, &s);
  if (e) return e;
  CUdeviceptr p = 0;
  const char* fn;
  CUresult r;
  if (c->pools) {
    fn = "cuMemAllocAsync";
    r = c->cuMemAllocAsync(&p, size, c->alloc_stream);
    if (r == 0) {
      r = c->cuStreamSynchronize(c->alloc_stream);
      if (r != 0) {
        fn = "cuStreamSynchronize";
        (void)c->cuMemFreeAsync(p, c->alloc_stream);
      }
    }
  } else {
    fn = "cuMemAlloc_v2";
    r = c->cuMemAlloc_v2(&p, size);
  }
  xrt_cuda_leave(rt, &s);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "Failed to allocate %zu bytes on device %d", size, c->device);
    return cuda_error(c, r, fn, what);
  }
  *data = (void*)(uintptr_t)p;
  return NULL;
}

/**
 * DeviceMemory_Free on a CUDA runtime: after the work queued on the
 * handlers' stream (cuMemFreeAsync in its order; without pools, that stream
 * is waited for, then cuMemFree).
 */
XLA_FFI_Error* xrt_cuda_free(const xrt_runtime* rt, size_t size, void* data) {
  const struct xrt_cuda* c = rt->cuda;
  if (!c)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No device memory allocator available on this platform");
  if (!data) return NULL;
  xrt_cuda_scope s;
  XLA_FFI_Error* e = xrt_cuda_enter(rt, &s);
  if (e) return e;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)data;
  const char* fn;
  CUresult r;
  if (c->pools) {
    fn = "cuMemFreeAsync";
    r = c->cuMemFreeAsync(p, (CUstream)rt->stream);
  } else {
    fn = "cuStreamSynchronize";
    r = c->cuStreamSynchronize((CUstream)rt->stream);
    if (r == 0) {
      fn = "cuMemFree_v2";
      r = c->cuMemFree_v2(p);
    }
  }
  xrt_cuda_leave(rt, &s);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "Failed to free %zu bytes on device %d", size, c->device);
    return cuda_error(c, r, fn, what);
  }
  return NULL;
}
