/*
 * runtime_internal.h: private declarations shared by the embedded runtime's
 * C files (runtime*.c). Not part of the public ABI. The runtime stands on
 * the TS handler host (handler_host.h: it installs hooks into it and may call
 * its public functions); the host never includes this header.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_RUNTIME_INTERNAL_H_
#define DENO_XLA_FFI_RUNTIME_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"
#include "handler_host.h"
#include "xla_ffi.h"

/* An error of this runtime (runtime.c). */
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char* message;
};

/* A future of this runtime (runtime.c): one waiter (the runtime), completed
 * once from any thread. */
enum { FUT_PENDING = 0, FUT_OK = 1, FUT_ERROR = 2 };

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;
  int orphaned; /* the waiter gave up: the completer frees the future */
  XLA_FFI_Error* error;
  void* notify; /* when set: passed to g_notify once the future completes */
};

/* Frees a future (unregistered first: completers then see it as not live). */
XFD_INTERNAL void xrt_future_free(XLA_FFI_Future* f);
/* Waits for completion; returns the future's error (owned by the caller). */
XFD_INTERNAL XLA_FFI_Error* xrt_future_wait_take(XLA_FFI_Future* f);
/* Takes the result if complete (returns 1), else orphans the future. */
XFD_INTERNAL int xrt_future_take_or_orphan(XLA_FFI_Future* f, XLA_FFI_Error** out);

/* Debug counters (xla_ffi_deno_runtime_debug_stats). */
enum {
  XRT_STAT_ERRORS_CREATED,
  XRT_STAT_ERRORS_DESTROYED,
  XRT_STAT_FUTURES_CREATED,
  XRT_STAT_FUTURES_DESTROYED,
  XRT_STAT_FRAMES_CREATED,
  XRT_STAT_FRAMES_DESTROYED,
  XRT_STAT_STATES_SET,
  XRT_STAT_STATES_DELETED,
  XRT_STAT_INSTANCES_CREATED,
  XRT_STAT_INSTANCES_DESTROYED,
  XRT_STAT_RUNTIMES_CREATED,
  XRT_STAT_RUNTIMES_DESTROYED,
  XRT_STAT_TASKS_SCHEDULED,
  XRT_STAT_TASKS_RUN,
  XRT_STAT_CALLS,
  XRT_STAT_COUNT
};
XFD_INTERNAL extern _Atomic int64_t xrt_stats[XRT_STAT_COUNT];
#define XRT_COUNT(k) atomic_fetch_add_explicit(&xrt_stats[k], 1, memory_order_relaxed)

enum { XRT_PLATFORM_HOST = 0, XRT_PLATFORM_CUDA = 1 };

/*
 * The API versions the embedded runtime speaks (0.1, 0.2, 0.3, 0.4), each with its
 * own XLA_FFI_Api table, handler registry and type registry, as separate XLA
 * builds have (runtime.c, runtime_registry.c). A runtime picks one at
 * creation; version facts live in this table, selected in one place.
 */
#define XRT_ABI_COUNT 4
#define XRT_ABI_NEWEST_MINOR 4
typedef struct xrt_abi {
  int32_t index; /* 0 .. XRT_ABI_COUNT - 1 */
  int32_t minor; /* the API version is 0.minor */
  const XLA_FFI_Api* api;
} xrt_abi;
XFD_INTERNAL extern const xrt_abi xrt_abis[XRT_ABI_COUNT];
/* The descriptor of API version 0.minor, or NULL when it is not spoken. */
XFD_INTERNAL const xrt_abi* xrt_abi_for(int32_t minor);
/* XLA's struct-size message, naming the framework version of `v`. */
XFD_INTERNAL XLA_FFI_Error* xrt_size_error(const xrt_abi* v, const char* name, size_t expected,
                                           size_t actual);

/* Calls a handler the way XLA does: a C++ exception it throws becomes an
 * UNKNOWN error "<what>: <exception text>" when the exception guard library
 * is installed (runtime_call.c, invoke_guard.cc). */
XFD_INTERNAL XLA_FFI_Error* xrt_invoke(XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf, const char* what);

/* Handlers run in XLA's floating-point mode, the pool's threads for their life (fp_mode.h). */
#include "fp_mode.h"

/* The modes of xla_ffi_deno_runtime_call (runtime_call.c): on the calling
 * thread, synchronously with a frame, synchronously with a raw call frame
 * checked first, or begun (a pending future not waited for) with a snapshot
 * or with a frame nothing changes while the call is in flight. The TS side
 * (src/native/symbols_runtime.ts, CALL_MODE) and the isolated child
 * (isolate_child.c) use these numbers. */
enum { XRT_CALL_SYNC = 0, XRT_CALL_CHECKED = 1, XRT_CALL_BEGIN = 2, XRT_CALL_BEGIN_FRAME = 3 };

typedef struct xrt_task {
  XLA_FFI_Task* fn;
  void* data;
  struct xrt_task* next;
} xrt_task;

typedef struct xrt_runtime {
  const xrt_abi* abi; /* the API version it speaks */
  int32_t platform;
  int32_t num_threads;
  void* stream;
  struct xrt_cuda* cuda; /* CUDA runtimes with a device (runtime_cuda.c) */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  xrt_task* head;
  xrt_task* tail;
  int stopping;
  int32_t running; /* pool tasks being run (under mu) */
  pthread_t* threads;
} xrt_runtime;

/* One state of an instance: set once, deleted with the instance. */
typedef struct xrt_state {
  int has;
  int64_t type_id;
  void* state;
  void (*deleter)(void*);
} xrt_state;

/* A handler instance (XLA's execution state): 0.1 and 0.2 have one state
 * (the instantiate stage's); 0.3 one per stage that can set one
 * (instantiate, prepare, initialize), selected by the State args' stage. */
#define XRT_STATE_STAGES 3
typedef struct xrt_instance {
  pthread_mutex_t mu;
  xrt_state states[XRT_STATE_STAGES];
} xrt_instance;

struct XLA_FFI_ExecutionContext {
  uint64_t magic; /* XRT_CTX_MAGIC: tells our contexts from foreign pointers */
  xrt_runtime* rt;
  int64_t run_id;
  int32_t device_ordinal;
  int32_t stage;
  xrt_instance* instance;
  int64_t n_user;
  int64_t* user; /* pairs (type_id, pointer) */
};

/* A call frame built by xla_ffi_deno_runtime_frame_build: one allocation (the arena). */
typedef struct xrt_frame {
  XLA_FFI_CallFrame cf;
  XLA_FFI_ExecutionContext ctx;
  XLA_FFI_Buffer* args;
  XLA_FFI_Buffer* rets;
  int64_t* user_store;
  XLA_FFI_Error* last_error;
} xrt_frame;

/* Guards (runtime_guard.c); the limits are abi_facts.h's XFD_MAX_*, documented in
 * docs/reliability.md, "Guards". */
#define XRT_CTX_MAGIC 0x58525443545856ull /* "VXTCTRX" */
enum { XRT_LIVE_ERROR = 1, XRT_LIVE_FUTURE = 2 };
XFD_INTERNAL void xrt_live_add(const void* p, int kind);
XFD_INTERNAL int xrt_live_remove(const void* p, int kind);
XFD_INTERNAL int xrt_live_has(const void* p, int kind);
XFD_INTERNAL int xrt_live_lock(const void* p, int kind);
XFD_INTERNAL void xrt_live_unlock(const void* p);
XLA_FFI_Error* xla_ffi_deno_runtime_check_call_frame(const XLA_FFI_CallFrame* cf);

XFD_INTERNAL XLA_FFI_Error* xrt_error_new(XLA_FFI_Error_Code code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
XFD_INTERNAL void xrt_error_free(XLA_FFI_Error* err);
const XLA_FFI_Api* xla_ffi_deno_runtime_newest_api(void);
/* Whether `api` is one of the embedded runtime's own tables. */
XFD_INTERNAL int xrt_is_own_api(const XLA_FFI_Api* api);
/* dlclose of a handler library while runtimes are reaped: 1 = deferred
 * (runtime_pool.c). */
XFD_INTERNAL int32_t xrt_defer_dlclose(void* handle);

/* The CUDA platform (runtime_cuda.c). Without a device attached (rt->cuda
 * NULL) enter/leave do nothing and allocate/free report no allocator. */
typedef struct {
  void* prev;
  int changed;
} xrt_cuda_scope;
XFD_INTERNAL XLA_FFI_Error* xrt_cuda_activate(const xrt_runtime* rt, xrt_cuda_scope* s);
XFD_INTERNAL void xrt_cuda_restore(const xrt_runtime* rt, const xrt_cuda_scope* s);
/* Makes a CUDA runtime's context current for a call (inline: Host calls
 * pay one branch). */
static inline XLA_FFI_Error* xrt_cuda_enter(const xrt_runtime* rt, xrt_cuda_scope* s) {
  s->changed = 0;
  if (!rt || !rt->cuda) return NULL;
  return xrt_cuda_activate(rt, s);
}
static inline void xrt_cuda_leave(const xrt_runtime* rt, const xrt_cuda_scope* s) {
  if (s->changed) xrt_cuda_restore(rt, s);
}
XFD_INTERNAL XLA_FFI_Error* xrt_cuda_allocate(const xrt_runtime* rt, size_t size, void** data);
XFD_INTERNAL XLA_FFI_Error* xrt_cuda_free(const xrt_runtime* rt, size_t size, void* data);
XFD_INTERNAL int32_t xrt_cuda_device(const xrt_runtime* rt);
XFD_INTERNAL void xrt_cuda_detach(xrt_runtime* rt);
/* The handler host's hooks for queued calls (handler_host.h), installed by
 * runtime.c: the calling CUDA runtime's context made current on the JS
 * thread for a TS handler it called from one of its threads. */
XFD_INTERNAL const void* xrt_cuda_queued_capture(const XLA_FFI_CallFrame* f);
XFD_INTERNAL int32_t xrt_cuda_queued_enter(const void* handle, xla_ffi_deno_host_scope* s,
                                           char* msg, size_t cap);
XFD_INTERNAL void xrt_cuda_queued_leave(const void* handle, const xla_ffi_deno_host_scope* s);

/* Registries (runtime_registry.c). */
XFD_INTERNAL size_t xrt_canonical_platform(const char* p, size_t n, char* out, size_t cap);
XFD_INTERNAL XLA_FFI_Error* xrt_check_name(const XLA_FFI_ByteSpan* s, const char* what);
XFD_INTERNAL XLA_FFI_Error* xrt_query_metadata(const xrt_abi* v, XLA_FFI_Handler* h,
                                               XLA_FFI_Metadata_V0_2* md);
XFD_INTERNAL XLA_FFI_Error* xrt_registry_register(const xrt_abi* v,
                                                  const XLA_FFI_Handler_Register_Args* args);
XFD_INTERNAL XLA_FFI_Error* xrt_registry_lookup(const xrt_abi* v, const XLA_FFI_ByteSpan* name,
                                                const XLA_FFI_ByteSpan* platform, uint64_t* out);
XFD_INTERNAL int32_t xrt_registry_names(const xrt_abi* v, const char* platform,
                                        size_t platform_len, char* buf, int32_t cap);
XFD_INTERNAL XLA_FFI_Error* xrt_type_register(const xrt_abi* v, const XLA_FFI_ByteSpan* name,
                                              XLA_FFI_TypeId* type_id, void (*deleter)(void*));
XFD_INTERNAL XLA_FFI_Error* xrt_type_deleter(const xrt_abi* v, int64_t id,
                                             void (**deleter)(void*));
int32_t xla_ffi_deno_runtime_error_code(XLA_FFI_Error* e);

#endif /* DENO_XLA_FFI_RUNTIME_INTERNAL_H_ */
