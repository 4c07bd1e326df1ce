/*
 * runtime_call.c: how the embedded runtime calls handlers, as XLA does: on
 * the calling thread with the runtime's CUDA context current, C++
 * exceptions caught (the exception guard library), a returned error or
 * future checked to be the runtime's own. Four entry points:
 * xla_ffi_deno_runtime_call runs a call on the calling thread in a mode
 * (synchronously, with the JS-thread guard of handler_host.h, or begun
 * without waiting for a pending future); xla_ffi_deno_runtime_call_new
 * snapshots a frame; xla_ffi_deno_runtime_call_wait runs a snapshot's call
 * off the JS thread, once or from many threads at once, and waits for it;
 * xla_ffi_deno_runtime_call_finish ends a begun call.
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
/* A native handler runs in XLA's floating-point mode (fp_mode.h). */
XLA_FFI_Error* xrt_invoke(XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf, const char* what) {
  xrt_guard_fn g = atomic_load_explicit(&g_guard, memory_order_relaxed);
  /* A TS handler's entry point runs JavaScript's mode itself (handler.c): no switch for it. */
  int native = !xla_ffi_deno_handler_is_entry((const void*)h);
  xfd_fp_mode fp = native ? xfd_fp_enter_xla() : 0;
  XFD_RUNNING_ENTER(h);
  if (g == NULL) {
    XLA_FFI_Error* e = h(cf);
    XFD_RUNNING_LEAVE();
    if (native) xfd_fp_leave(fp);
    return e;
  }
  XLA_FFI_Error* out = NULL;
  char msg[1024];
  int32_t threw = g(h, cf, &out, msg, (int32_t)sizeof msg);
  XFD_RUNNING_LEAVE();
  if (native) xfd_fp_leave(fp);
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

static XLA_FFI_Error* bad_future(XLA_FFI_Error* err) {
  xrt_error_free(err);
  return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                       "The handler set XLA_FFI_CallFrame.future to a pointer that is not a "
                       "live XLA_FFI_Future of this runtime");
}

/*
 * The one call on the calling thread: calls h with cf within rt's CUDA
 * scope, the JS thread marked blocked as `kind` (handler_host.h) meanwhile,
 * so that TS handlers called from other threads fail instead of waiting for
 * it. Returns 0 with the call's error (or NULL) in *out when it is over.
 * When the handler left a pending future: with `pending` NULL (a synchronous
 * call) the future is orphaned and the call fails with FAILED_PRECONDITION;
 * else returns 1 with the future in *pending, its mutex held, so the caller
 * can hand it the notify target before the completion can be seen.
 */
static int32_t invoke_here(xrt_runtime* rt, XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf,
                           int32_t kind, XLA_FFI_Error** out, XLA_FFI_Future** pending) {
  XRT_COUNT(XRT_STAT_CALLS);
  cf->future = NULL;
  *out = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(rt, &scope);
  if (err) {
    *out = err;
    return 0;
  }
  int64_t blocked = xla_ffi_deno_js_block_enter_as(kind);
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
  if (pending == NULL) {
    XLA_FFI_Error* fe = NULL;
    *out = xrt_future_take_or_orphan(f, &fe)
               ? fe
               : xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                               "The handler returned a pending XLA_FFI_Future: it completes "
                               "asynchronously, so call it with Runtime.call (callSync only runs "
                               "handlers that finish synchronously)");
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

/* A snapshot of a frame's header and context, taken on the calling thread so
 * that later changes to the frame's configuration do not affect the call;
 * also the record of a call begun on a frame without one (no context then). */
typedef struct xrt_call {
  XLA_FFI_CallFrame cf;
  XLA_FFI_ExecutionContext ctx;
  int64_t* user;
  XLA_FFI_Future* future; /* a begun call's pending future */
} xrt_call;

/**
 * Snapshots a frame for xla_ffi_deno_runtime_call (XRT_CALL_BEGIN) or
 * xla_ffi_deno_runtime_call_wait; a snapshot neither takes is freed with
 * xla_ffi_deno_runtime_call_finish. NULL: a null input, or out of memory.
 */
xrt_call* xla_ffi_deno_runtime_call_new(xrt_runtime* rt, const xrt_frame* fr) {
  if (!rt || !fr) return NULL;
  xrt_call* c = malloc(sizeof *c);
  if (!c) return NULL;
  c->cf = fr->cf;
  c->cf.api = rt->abi->api;
  c->ctx = fr->ctx;
  c->ctx.rt = rt;
  c->user = NULL;
  c->future = NULL;
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

/* One call record kept for the next pending future of an XRT_CALL_BEGIN_FRAME
 * call: a call that ends at once allocates nothing. */
static _Atomic(xrt_call*) g_spare_call;

/* A call that is over: 1 with its error in out[0], or 0. */
static int32_t call_over(void** out, XLA_FFI_Error* err) {
  out[0] = err;
  return err != NULL;
}

/**
 * Calls a handler on the calling thread, as XLA does, in one of four modes:
 *
 *   XRT_CALL_SYNC: `target` is one of rt's frames (xrt_frame*); a pending
 *     future the handler leaves is orphaned and the call fails with
 *     FAILED_PRECONDITION (Runtime.callSync, with the JS thread marked
 *     blocked as handler_host.h's XFD_JS_BLOCK_CALL).
 *   XRT_CALL_CHECKED: `target` is an XLA_FFI_CallFrame* laid out elsewhere
 *     whose context is one of rt's frames; its structure is checked first
 *     (xla_ffi_deno_runtime_check_call_frame): a malformed frame is an
 *     INVALID_ARGUMENT error and the handler is not called. Then as SYNC.
 *   XRT_CALL_BEGIN: `target` is a snapshot of rt's (xla_ffi_deno_runtime_call_new);
 *     a pending future is not waited for: the call is begun.
 *   XRT_CALL_BEGIN_FRAME: `target` is one of rt's frames that nothing changes
 *     while the call is in flight (the frames Runtime.ffiCall keeps per
 *     signature, which it neither reconfigures nor reuses until the call
 *     ended), begun without a snapshot.
 *
 * The begin modes mark the JS thread blocked as XFD_JS_BLOCK_FFI_CALL
 * (Runtime.ffiCall runs native handlers inline there). In every mode but
 * CHECKED the handler gets a call frame of its own, as XLA builds one for
 * each call (xla/ffi/call_frame.cc: CallFrame::Build returns a new
 * XLA_FFI_CallFrame by value): what it writes there does not reach the
 * frame's next call.
 *
 * Returns 0 when the call is over and succeeded; 1 when it is over and
 * failed, its error (the caller's) in out[0]; 2 when a begun call's handler
 * left a pending future: out[0] is then the call to await (the notify
 * callback, xla_ffi_deno_runtime_set_notify, gets it once the future
 * completes) and to end with xla_ffi_deno_runtime_call_finish. A snapshot
 * of a call that is over is freed. -1 (nothing done) when out is null.
 */
int32_t xla_ffi_deno_runtime_call(int32_t mode, xrt_runtime* rt, XLA_FFI_Handler* h, void* target,
                                  void** out) {
  if (!out) return -1;
  if (mode == XRT_CALL_CHECKED && rt && h) {
    XLA_FFI_CallFrame* cf = target;
    XLA_FFI_Error* err = xla_ffi_deno_runtime_check_call_frame(cf);
    if (err) return call_over(out, err);
    cf->ctx->rt = rt;
    invoke_here(rt, h, cf, XFD_JS_BLOCK_CALL, &err, NULL);
    return call_over(out, err);
  }
  if (!rt || !h || !target) {
    if (mode == XRT_CALL_BEGIN && target) call_free(target);
    return call_over(out, xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                        "xla_ffi_deno_runtime_call: runtime, handler and frame "
                                        "must not be null"));
  }
  XLA_FFI_Error* err = NULL;
  XLA_FFI_Future* f = NULL;
  xrt_call* c = NULL;
  if (mode == XRT_CALL_SYNC || mode == XRT_CALL_BEGIN_FRAME) {
    xrt_frame* fr = target;
    fr->ctx.rt = rt;
    fr->cf.api = rt->abi->api;
    XLA_FFI_CallFrame cf = fr->cf;
    if (mode == XRT_CALL_SYNC) {
      invoke_here(rt, h, &cf, XFD_JS_BLOCK_CALL, &err, NULL);
      return call_over(out, err);
    }
    /* The record a pending future needs, taken before the call: running out
     * of memory afterwards would leave nothing to tell the caller of its end. */
    c = atomic_exchange(&g_spare_call, NULL);
    if (c == NULL && (c = malloc(sizeof *c)) == NULL)
      return call_over(out, xrt_error_new(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory"));
    if (!invoke_here(rt, h, &cf, XFD_JS_BLOCK_FFI_CALL, &err, &f)) {
      free(atomic_exchange(&g_spare_call, c));
      return call_over(out, err);
    }
    c->user = NULL;
  } else if (mode == XRT_CALL_BEGIN) {
    c = target;
    if (c->ctx.rt != rt) {
      call_free(c);
      return call_over(out, xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                          "xla_ffi_deno_runtime_call: the snapshot is of "
                                          "another runtime"));
    }
    c->cf.ctx = &c->ctx;
    c->future = NULL;
    if (!invoke_here(rt, h, &c->cf, XFD_JS_BLOCK_FFI_CALL, &err, &f)) {
      call_free(c);
      return call_over(out, err);
    }
  } else {
    return call_over(out, xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                        "xla_ffi_deno_runtime_call: unknown mode %d", (int)mode));
  }
  f->notify = c;
  c->future = f;
  pthread_mutex_unlock(&f->mu);
  out[0] = c;
  return 2;
}

/**
 * A begun call after the notify callback (or a snapshot no call took): the
 * future's error (or NULL); frees the call.
 */
XLA_FFI_Error* xla_ffi_deno_runtime_call_finish(xrt_call* c) {
  if (!c) return NULL;
  XLA_FFI_Error* e = c->future ? xrt_future_wait_take(c->future) : NULL;
  call_free(c);
  return e;
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
  /* Runtime threads keep XLA's floating-point mode for their life, as XLA's pool threads do
   * (fp_mode.h): each call then finds it set. */
  (void)xfd_fp_enter_xla();
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
 * Calls a handler with a snapshot and waits for its future(s), then frees
 * the snapshot. It blocks until the calls are done: meant for a
 * `nonblocking` FFI call, which runs it on a thread other than the
 * JavaScript one, so the event loop stays free for handlers that need it.
 *
 * With `threads` 0: one call on the calling thread; returns its error (or
 * NULL). With `threads` >= 1: `iterations` calls on each of `threads` new
 * runtime threads, as XLA calls handlers from its own threads; writes
 * out[0] = calls that succeeded, out[1] = calls that failed, out[2] = the
 * first failure's code, and its message into msg; returns NULL, or a
 * RESOURCE_EXHAUSTED error when a thread could not start (the threads that
 * did still ran their calls).
 *
 * b0..b7: eight arrays (or NULL) the call uses. Made nonblocking from JS,
 * Deno keeps the memory of its buffer arguments alive until it returns, as
 * a gate's hold does, at no extra call.
 */
XLA_FFI_Error* xla_ffi_deno_runtime_call_wait(xrt_call* c, XLA_FFI_Handler* h, int32_t threads,
                                              int64_t iterations, int64_t* out, char* msg,
                                              int32_t msg_cap, void* b0, void* b1, void* b2,
                                              void* b3, void* b4, void* b5, void* b6, void* b7) {
  (void)b0, (void)b1, (void)b2, (void)b3, (void)b4, (void)b5, (void)b6, (void)b7;
  if (!c || !h || threads < 0 || (threads > 0 && !out)) {
    if (c) call_free(c);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_call_wait: call and handler must not be null, "
                         "threads not negative, out given for threads");
  }
  if (threads == 0) {
    XLA_FFI_Error* e = call_copy(c, h);
    call_free(c);
    return e;
  }
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
  if (started == threads) return NULL;
  return xrt_error_new(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Cannot start %d runtime threads",
                       (int)threads);
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
