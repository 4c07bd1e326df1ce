/*
 * runtime_call.c: how the embedded runtime calls handlers, as XLA does: on
 * the calling thread with the runtime's CUDA context current, C++
 * exceptions caught (the exception guard library), a returned error or
 * future checked to be the runtime's own; synchronously (Runtime.callSync,
 * with the JS-thread guard of handler_host.h), from a snapshot on another
 * thread (Runtime.call), without waiting for a pending future, or from many
 * threads at once (Runtime.callOnThreads).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "runtime_internal.h"

/* ------------------------------------------------------------------------ */
/* Calling handlers as XLA does (C++ exceptions caught)                      */
/* ------------------------------------------------------------------------ */

/* invoke_guard.cc, when its library is loaded: calls h(cf) inside try/catch;
 * returns 1 with the exception's text in msg when one was thrown. */
typedef int32_t (*xrt_guard_fn)(XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf, XLA_FFI_Error** out,
                                char* msg, int32_t cap);
static _Atomic(xrt_guard_fn) g_guard;

/** Installs the exception guard (a function of the invoke_guard library). */
void xla_ffi_deno_runtime_set_invoke_guard(void* fn) { atomic_store(&g_guard, (xrt_guard_fn)fn); }

/** Whether C++ exceptions of handlers are caught (the guard is installed). */
int32_t xla_ffi_deno_runtime_invoke_guarded(void) { return atomic_load(&g_guard) != NULL; }

/* The thread's crash slot names h during the call (crash.h). */
XLA_FFI_Error* xrt_invoke(XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf, const char* what) {
  xrt_guard_fn g = atomic_load_explicit(&g_guard, memory_order_relaxed);
  XFD_RUNNING_ENTER(h);
  if (g == NULL) {
    XLA_FFI_Error* e = h(cf);
    XFD_RUNNING_LEAVE();
    return e;
  }
  XLA_FFI_Error* out = NULL;
  char msg[1024];
  int32_t threw = g(h, cf, &out, msg, (int32_t)sizeof msg);
  XFD_RUNNING_LEAVE();
  if (threw == 0) return out;
  /* XLA ffi_api.cc Call: Unknown("XLA FFI call failed: %s", e.what()) */
  return xrt_error_new(XLA_FFI_Error_Code_UNKNOWN, "%s: %s", what, msg);
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Error* normalize(XLA_FFI_Error* err) {
  if (err && !xrt_live_has(err, XRT_LIVE_ERROR))
    return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                         "The handler returned an XLA_FFI_Error* that is not a live error of "
                         "this runtime (not created by it, or already destroyed)");
  if (err && err->code == XLA_FFI_Error_Code_OK) {
    xrt_error_free(err);
    return NULL;
  }
  return err;
}

/* A handler that returned an error must not also leave a future; if it did,
 * the runtime still has to own (and eventually free) that future. */
static void drop_future(XLA_FFI_Future* f) {
  XLA_FFI_Error* e = NULL;
  if (xrt_future_take_or_orphan(f, &e)) xrt_error_free(e);
}

/**
 * Calls a handler synchronously on the calling thread with the frame's own
 * call frame and context. A pending future is orphaned and reported as
 * FAILED_PRECONDITION. Returns NULL on success.
 */
static XLA_FFI_Error* bad_future(XLA_FFI_Error* err) {
  xrt_error_free(err);
  return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                       "The handler set XLA_FFI_CallFrame.future to a pointer that is not a "
                       "live XLA_FFI_Future of this runtime");
}

static XLA_FFI_Error* call_frame_sync(xrt_runtime* rt, XLA_FFI_Handler* h,
                                      XLA_FFI_CallFrame* cf) {
  XRT_COUNT(XRT_STAT_CALLS);
  cf->future = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(rt, &scope);
  if (err) return err;
  int64_t blocked = xla_ffi_deno_js_block_enter();
  err = normalize(xrt_invoke(h, cf, "XLA FFI call failed"));
  xla_ffi_deno_js_block_leave(blocked);
  xrt_cuda_leave(rt, &scope);
  XLA_FFI_Future* f = cf->future;
  if (!f) return err;
  cf->future = NULL;
  if (!xrt_live_has(f, XRT_LIVE_FUTURE)) return bad_future(err);
  if (err) {
    drop_future(f);
    return err;
  }
  XLA_FFI_Error* fe = NULL;
  if (xrt_future_take_or_orphan(f, &fe)) return fe;
  return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                       "The handler returned a pending XLA_FFI_Future: it completes "
                       "asynchronously, so call it with Runtime.call (callSync only runs "
                       "handlers that finish synchronously)");
}

XLA_FFI_Error* xla_ffi_deno_runtime_call_sync(xrt_runtime* rt, XLA_FFI_Handler* h, xrt_frame* fr) {
  if (!rt || !h || !fr)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_call_sync: runtime, handler and frame must not be "
                         "null");
  fr->ctx.rt = rt;
  fr->cf.api = rt->abi->api;
  /* A call frame of its own, as XLA builds one for each call (see
   * xla_ffi_deno_runtime_call_begin_frame): what the handler writes there
   * does not reach the frame's next call. */
  XLA_FFI_CallFrame cf = fr->cf;
  return call_frame_sync(rt, h, &cf);
}

/**
 * Calls a handler on the calling thread with a call frame laid out elsewhere
 * (whose context is one of this runtime's frames), after checking the frame's
 * structure with xla_ffi_deno_runtime_check_call_frame: a malformed frame is an
 * INVALID_ARGUMENT error and the handler is not called.
 */
XLA_FFI_Error* xla_ffi_deno_runtime_call_checked(xrt_runtime* rt, XLA_FFI_Handler* h,
                                                 XLA_FFI_CallFrame* cf) {
  if (!rt || !h)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_call_checked: runtime and handler must not be null");
  XLA_FFI_Error* bad = xla_ffi_deno_runtime_check_call_frame(cf);
  if (bad) return bad;
  cf->ctx->rt = rt;
  return call_frame_sync(rt, h, cf);
}

/* A snapshot of a frame's header and context, taken on the calling thread so
 * that later changes to the frame's configuration do not affect the call. */
typedef struct xrt_call {
  XLA_FFI_CallFrame cf;
  XLA_FFI_ExecutionContext ctx;
  int64_t* user;
  XLA_FFI_Future* future; /* xla_ffi_deno_runtime_call_begin: the pending future */
} xrt_call;

/** Snapshots a frame for xla_ffi_deno_runtime_call_run /
 * xla_ffi_deno_runtime_call_threads (which free it). */
xrt_call* xla_ffi_deno_runtime_call_new(xrt_runtime* rt, const xrt_frame* fr) {
  if (!rt || !fr) return NULL;
  xrt_call* c = malloc(sizeof *c);
  if (!c) return NULL;
  c->cf = fr->cf;
  c->cf.api = rt->abi->api;
  c->ctx = fr->ctx;
  c->ctx.rt = rt;
  c->user = NULL;
  if (fr->ctx.n_user > 0) {
    size_t bytes = sizeof(int64_t) * 2 * (size_t)fr->ctx.n_user;
    c->user = malloc(bytes);
    if (!c->user) {
      free(c);
      return NULL;
    }
    memcpy(c->user, fr->ctx.user, bytes);
  }
  c->ctx.user = c->user;
  return c;
}

static void call_free(xrt_call* c) {
  free(c->user);
  free(c);
}

/* One call on a private copy of the snapshot; waits for the handler's
 * future. Safe to run concurrently from many threads. */
static XLA_FFI_Error* call_copy(const xrt_call* tmpl, XLA_FFI_Handler* h) {
  XRT_COUNT(XRT_STAT_CALLS);
  XLA_FFI_ExecutionContext ctx = tmpl->ctx;
  XLA_FFI_CallFrame cf = tmpl->cf;
  cf.ctx = &ctx;
  cf.future = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(ctx.rt, &scope);
  if (err) return err;
  err = normalize(xrt_invoke(h, &cf, "XLA FFI call failed"));
  xrt_cuda_leave(ctx.rt, &scope);
  if (!cf.future) return err;
  if (!xrt_live_has(cf.future, XRT_LIVE_FUTURE)) return bad_future(err);
  if (err) {
    /* Keep ctx alive until the stray future completes. */
    XLA_FFI_Error* fe = xrt_future_wait_take(cf.future);
    xrt_error_free(fe);
    return err;
  }
  return xrt_future_wait_take(cf.future);
}

/**
 * Calls a handler with a snapshot and waits for its future, then frees the
 * snapshot. Meant for a `nonblocking` FFI call: it runs on a thread other
 * than the JavaScript one, so the event loop stays free for handlers that
 * need it.
 */
XLA_FFI_Error* xla_ffi_deno_runtime_call_run(xrt_call* c, XLA_FFI_Handler* h) {
  if (!c || !h) {
    if (c) call_free(c);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_call_run: call and handler must not be null");
  }
  XLA_FFI_Error* e = call_copy(c, h);
  call_free(c);
  return e;
}

/*
 * The inline call of xla_ffi_deno_runtime_call_begin and _begin_frame: calls
 * h with cf on this thread, within rt's CUDA scope. Returns 0 with the call's
 * error (or NULL) in *out when it is over, or the pending future it left in
 * *pending (return 1), its mutex held, so the caller can hand it the notify
 * target before the completion can be seen.
 */
static int32_t begin_inline(xrt_runtime* rt, XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf,
                            XLA_FFI_Error** out, XLA_FFI_Future** pending) {
  XRT_COUNT(XRT_STAT_CALLS);
  cf->future = NULL;
  *out = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(rt, &scope);
  if (err) {
    *out = err;
    return 0;
  }
  /* Runtime.ffiCall runs native handlers here on the JS thread: TS handlers
   * called meanwhile from other threads fail instead of waiting for it. */
  int64_t blocked = xla_ffi_deno_js_block_enter_as(XFD_JS_BLOCK_FFI_CALL);
  err = normalize(xrt_invoke(h, cf, "XLA FFI call failed"));
  xla_ffi_deno_js_block_leave(blocked);
  xrt_cuda_leave(rt, &scope);
  XLA_FFI_Future* f = cf->future;
  cf->future = NULL;
  if (f != NULL && !xrt_live_has(f, XRT_LIVE_FUTURE)) {
    *out = bad_future(err);
    return 0;
  }
  if (f == NULL || err != NULL) {
    if (f != NULL) drop_future(f);
    *out = err;
    return 0;
  }
  pthread_mutex_lock(&f->mu);
  if (f->state != FUT_PENDING) {
    *out = f->error;
    f->error = NULL;
    pthread_mutex_unlock(&f->mu);
    xrt_future_free(f);
    return 0;
  }
  *pending = f;
  return 1;
}

/**
 * Calls a handler with a snapshot on the calling thread without waiting for
 * its future: returns 0 when the call is over (its error, or NULL, in *out;
 * the snapshot is freed), or 1 when the handler left a pending future: then
 * the notify callback (xla_ffi_deno_runtime_set_notify) gets the snapshot once the future
 * completes, and xla_ffi_deno_runtime_call_finish takes the result. For handlers that complete
 * their futures on another thread than the caller's, or whose waiting would
 * block the caller (TS handlers on the JS thread: the Promise settles later).
 */
int32_t xla_ffi_deno_runtime_call_begin(xrt_call* c, XLA_FFI_Handler* h, XLA_FFI_Error** out) {
  c->cf.ctx = &c->ctx;
  c->future = NULL;
  XLA_FFI_Future* f = NULL;
  if (!begin_inline(c->ctx.rt, h, &c->cf, out, &f)) {
    call_free(c);
    return 0;
  }
  f->notify = c;
  c->future = f;
  pthread_mutex_unlock(&f->mu);
  return 1;
}

/* One call record kept for xla_ffi_deno_runtime_call_begin_frame's next
 * pending future: a call that ends at once allocates nothing. */
static _Atomic(xrt_call*) g_spare_call;

/**
 * xla_ffi_deno_runtime_call_begin on a frame, without a snapshot of it (the
 * handler gets a copy of its call frame, as with one): for a frame nothing
 * changes while the call is in flight (the frames Runtime.ffiCall keeps per
 * signature, which it neither reconfigures nor reuses until the call ended).
 * Returns 0 when the call is over (its error, or NULL, in out[0]), or 1 when
 * the handler left a pending future: out[0] is then the call to await (the
 * notify callback gets it once the future completes) and to end with
 * xla_ffi_deno_runtime_call_finish.
 */
int32_t xla_ffi_deno_runtime_call_begin_frame(xrt_runtime* rt, XLA_FFI_Handler* h, xrt_frame* fr,
                                              void** out) {
  if (!rt || !h || !fr) {
    out[0] = xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "xla_ffi_deno_runtime_call_begin_frame: runtime, handler and frame "
                           "must not be null");
    return 0;
  }
  /* The record a pending future needs, taken before the call: running out of
   * memory afterwards would leave nothing to tell the caller of its end. */
  xrt_call* c = atomic_exchange(&g_spare_call, NULL);
  if (c == NULL && (c = malloc(sizeof *c)) == NULL) {
    out[0] = xrt_error_new(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
    return 0;
  }
  fr->ctx.rt = rt;
  fr->cf.api = rt->abi->api;
  /* The handler gets a call frame of its own, as XLA builds one for each
   * call (xla/ffi/call_frame.cc: CallFrame::Build returns a new
   * XLA_FFI_CallFrame by value): what it writes there does not reach the
   * frame's next call. */
  XLA_FFI_CallFrame cf = fr->cf;
  XLA_FFI_Future* f = NULL;
  XLA_FFI_Error* err = NULL;
  if (!begin_inline(rt, h, &cf, &err, &f)) {
    free(atomic_exchange(&g_spare_call, c));
    out[0] = err;
    return 0;
  }
  c->user = NULL;
  f->notify = c;
  c->future = f;
  pthread_mutex_unlock(&f->mu);
  out[0] = c;
  return 1;
}

/** After the notify callback: the future's error (or NULL); frees the snapshot. */
XLA_FFI_Error* xla_ffi_deno_runtime_call_finish(xrt_call* c) {
  XLA_FFI_Error* e = c->future ? xrt_future_wait_take(c->future) : NULL;
  call_free(c);
  return e;
}

typedef struct {
  const xrt_call* tmpl;
  XLA_FFI_Handler* h;
  int64_t iterations;
  pthread_mutex_t* mu;
  int64_t* out; /* [ok, failed, first error code] */
  char* msg;
  int32_t msg_cap;
} stress_arg;

static void* stress_main(void* p) {
  stress_arg* a = p;
  for (int64_t i = 0; i < a->iterations; i++) {
    XLA_FFI_Error* e = call_copy(a->tmpl, a->h);
    pthread_mutex_lock(a->mu);
    if (e) {
      if (a->out[1]++ == 0) {
        a->out[2] = e->code;
        if (a->msg && a->msg_cap > 0) snprintf(a->msg, (size_t)a->msg_cap, "%s", e->message);
      }
    } else {
      a->out[0]++;
    }
    pthread_mutex_unlock(a->mu);
    xrt_error_free(e);
  }
  return NULL;
}

/**
 * Calls a handler `iterations` times on each of `threads` new runtime
 * threads, as XLA calls handlers from its own threads, then frees the
 * snapshot. Writes out[0] = calls that succeeded, out[1] = calls that failed,
 * out[2] = the first failure's code, and its message into msg. Returns 0, or
 * -1 if a thread could not start. Blocks until all calls are done: call it
 * `nonblocking`.
 */
int32_t xla_ffi_deno_runtime_call_threads(xrt_call* c, XLA_FFI_Handler* h, int32_t threads,
                                          int64_t iterations, int64_t* out, char* msg,
                                          int32_t msg_cap) {
  if (!c || !h || !out) {
    if (c) call_free(c);
    return -1;
  }
  if (threads <= 0) threads = 1;
  pthread_mutex_t mu;
  pthread_mutex_init(&mu, NULL);
  out[0] = out[1] = out[2] = 0;
  if (msg && msg_cap > 0) msg[0] = '\0';
  stress_arg a = {c, h, iterations, &mu, out, msg, msg_cap};
  pthread_t* th = calloc((size_t)threads, sizeof(pthread_t));
  if (!th) abort();
  int32_t started = 0;
  for (; started < threads; started++)
    if (pthread_create(&th[started], NULL, stress_main, &a) != 0) break;
  for (int32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(th);
  pthread_mutex_destroy(&mu);
  call_free(c);
  return started == threads ? 0 : -1;
}

/*
 * Gates: the memory of the typed arrays a call in flight reads and writes,
 * kept alive until the call ends. A frame holds its arrays' addresses, and
 * JS code that runs while the call is in flight (on the pool, on runtime
 * threads, or waiting for a handler's future) may detach an array
 * (ArrayBuffer.prototype.transfer, a postMessage transfer), which can free
 * its memory under the call. Deno keeps the backing store of every buffer
 * argument of a nonblocking FFI call alive until the call returns, so the
 * JS side makes one nonblocking xla_ffi_deno_gate_hold call with the arrays
 * (eight a call) that returns only once the gate is closed, after the call
 * ended. refs counts the JS side and each hold issued; the last to leave
 * frees the gate (a hold may start on its thread after the gate closed).
 */
typedef struct xrt_gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int open;
  int refs;
} xrt_gate;

xrt_gate* xla_ffi_deno_gate_new(void) {
  xrt_gate* g = calloc(1, sizeof *g);
  if (!g) return NULL;
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
  g->open = 1;
  g->refs = 1;
  return g;
}

/* One holder fewer; frees the gate after the last. */
static void gate_leave_locked(xrt_gate* g) {
  int last = --g->refs == 0;
  pthread_mutex_unlock(&g->mu);
  if (last) {
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
  }
}

/** Counts a hold about to be issued (JS thread, before the nonblocking call). */
void xla_ffi_deno_gate_enter(xrt_gate* g) {
  pthread_mutex_lock(&g->mu);
  g->refs++;
  pthread_mutex_unlock(&g->mu);
}

/** Uncounts a hold that could not be issued. */
void xla_ffi_deno_gate_leave(xrt_gate* g) {
  pthread_mutex_lock(&g->mu);
  gate_leave_locked(g);
}

/** Nonblocking from JS: returns once the gate is closed; its buffers are Deno's to keep alive. */
void xla_ffi_deno_gate_hold(xrt_gate* g, void* b0, void* b1, void* b2, void* b3, void* b4,
                            void* b5, void* b6, void* b7) {
  (void)b0, (void)b1, (void)b2, (void)b3, (void)b4, (void)b5, (void)b6, (void)b7;
  pthread_mutex_lock(&g->mu);
  while (g->open) pthread_cond_wait(&g->cv, &g->mu);
  gate_leave_locked(g);
}

/** The call ended: every hold returns (and lets its buffers go). */
void xla_ffi_deno_gate_close(xrt_gate* g) {
  pthread_mutex_lock(&g->mu);
  g->open = 0;
  pthread_cond_broadcast(&g->cv);
  gate_leave_locked(g);
}

/* xla_ffi_deno_runtime_call_run, with eight arrays (or NULL) the call uses: made nonblocking from
 * JS, it keeps their memory alive until the call returns, as a gate's hold does, at no extra
 * call. */
XLA_FFI_Error* xla_ffi_deno_runtime_call_run_held(xrt_call* c, XLA_FFI_Handler* h, void* b0,
                                                  void* b1, void* b2, void* b3, void* b4, void* b5,
                                                  void* b6, void* b7) {
  (void)b0, (void)b1, (void)b2, (void)b3, (void)b4, (void)b5, (void)b6, (void)b7;
  return xla_ffi_deno_runtime_call_run(c, h);
}

/* xla_ffi_deno_runtime_call_threads, with eight arrays kept alive as call_run_held's. */
int32_t xla_ffi_deno_runtime_call_threads_held(xrt_call* c, XLA_FFI_Handler* h, int32_t threads,
                                               int64_t iterations, int64_t* out, char* msg,
                                               int32_t msg_cap, void* b0, void* b1, void* b2,
                                               void* b3, void* b4, void* b5, void* b6, void* b7) {
  (void)b0, (void)b1, (void)b2, (void)b3, (void)b4, (void)b5, (void)b6, (void)b7;
  return xla_ffi_deno_runtime_call_threads(c, h, threads, iterations, out, msg, msg_cap);
}
