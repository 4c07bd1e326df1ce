/*
 * handler_internal.h: private declarations shared by the TS handler host's
 * C files: the entry points and slots (handler.c), errors and futures
 * reported to the calling runtime (handler_future.c), calls from other
 * threads (handler_queue.c), the context helpers TS handlers call
 * (handler_context.c) and the call-frame flattener (handler_flatten.c).
 * The host includes no header of the embedded runtime: what it knows of a
 * runtime comes through the hooks of handler_host.h.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_HANDLER_INTERNAL_H_
#define DENO_XLA_FFI_HANDLER_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "common.h"
#include "handler_host.h"
#include "xla_ffi.h"

#define SLOT_COUNT 1024
#define MSG_CAP 4096
#define AUX_MSG_OFFSET 16

/* The flat buffer's header (the result area TS writes, then the frame's
 * header): the XFD_FLAT_* int32 indices of abi_facts.h. */

/* How a slot's TS handler is called (set on the JS thread by slot_acquire). */
typedef struct {
  _Atomic int32_t in_use;
  int32_t stage;
  int32_t major;
  int32_t minor;
  uint32_t traits;
  int32_t async;
  int32_t settle_ns;           /* async: how long a foreign caller waits for the Promise (0: not) */
  int32_t follow;              /* version not chosen: report at most the caller's (0.2+) */
  _Atomic uint32_t generation; /* bumped on release: queued calls of a released handler fail */
  _Atomic int32_t pinned;      /* registered by name: never reused, even after release */
} slot_config;

/* A result of one call, filled by TS through xla_ffi_deno_handler_put_result. */
typedef struct {
  int32_t status; /* 0 ok, 1 error, 2 pending (token) */
  int32_t code;
  int32_t token;
  int32_t len;
  char msg[MSG_CAP];
} call_result;

typedef int32_t (*thread_cb_t)(void);

/* The host's state (handler.c), set by xla_ffi_deno_handler_init on the JS thread. */
XFD_INTERNAL extern slot_config g_slots[SLOT_COUNT];
XFD_INTERNAL extern pthread_t g_js_thread;
XFD_INTERNAL extern _Atomic int g_js_thread_set;
XFD_INTERNAL extern int64_t* g_flat; /* the flat buffer TS reads (g_flat_cap slots) */
XFD_INTERNAL extern int64_t g_flat_cap;
XFD_INTERNAL extern uint8_t* g_msg; /* message bytes written by TS (MSG_CAP) */
XFD_INTERNAL extern uint8_t* g_aux; /* results of context helpers (MSG_CAP) */
XFD_INTERNAL extern _Atomic(const xla_ffi_deno_host_hooks*) g_hooks;

/* The installed runtime's hooks, or NULL. */
static inline const xla_ffi_deno_host_hooks* host_hooks(void) {
  return atomic_load_explicit(&g_hooks, memory_order_acquire);
}

/* Whether `api` is a table of the runtime that installed hooks: its frames'
 * contexts are recognisable (host_own_ctx), so the host checks them. */
static inline int host_own_api(const XLA_FFI_Api* api) {
  const xla_ffi_deno_host_hooks* h = host_hooks();
  if (h == NULL) return 0;
  for (int32_t i = 0; i < h->own_api_count; i++)
    if (h->own_apis[i] == api) return 1;
  return 0;
}

/* Whether a context of a host_own_api frame is one of that runtime's. */
static inline int host_own_ctx(const XLA_FFI_ExecutionContext* ctx) {
  if (ctx == NULL) return 0;
  uint64_t tag;
  memcpy(&tag, (const void*)ctx, sizeof tag);
  return tag == host_hooks()->ctx_tag;
}

/* Errors and futures of the calling runtime (handler_future.c). */
XFD_INTERNAL XLA_FFI_Error* host_make_error(const XLA_FFI_Api* api, int32_t code,
                                            const char* msg);
/* Copies an error's message into buf and destroys the error. */
XFD_INTERNAL void host_take_message(const XLA_FFI_Api* api, XLA_FFI_Error* err, char* buf,
                                    size_t cap);
XFD_INTERNAL void host_report_failure(const char* what, const char* msg);
/* Completes a future; returns 0 or -1 (message in buf). */
XFD_INTERNAL int host_complete_future(const XLA_FFI_Api* api, XLA_FFI_Future* fut, int32_t code,
                                      const char* msg, char* buf, size_t cap);
/* Called on the calling thread once the future of a pending call exists. */
XFD_INTERNAL void host_token_register(int32_t token, const XLA_FFI_Api* api,
                                      XLA_FFI_Future* fut);
/* The same for a call from another thread (foreign), whose caller may still
 * wait for the result (waiter, the settled-early path: the result goes to
 * host_early_settle(waiter, ...)) or not (NULL). */
XFD_INTERNAL void host_token_register_waiter(int32_t token, const XLA_FFI_Api* api,
                                             XLA_FFI_Future* fut, void* waiter, int32_t foreign);
/* handler_queue.c: hands a settled result to the call `waiter` whose caller
 * may still wait. 1: the caller took it (it completes the future); 0: the
 * caller had stopped waiting (the waiter is freed): complete the future. */
XFD_INTERNAL int32_t host_early_settle(void* waiter, int32_t code, const char* msg);
/* A pending call's future, created with f's api and joined to `token` (and
 * its waiting caller, when waiter is not NULL: host_token_register_waiter);
 * NULL, or the error to return (the token is then abandoned). */
XFD_INTERNAL XLA_FFI_Error* host_pending_future(XLA_FFI_CallFrame* f, int32_t token,
                                               void* waiter);
/* A Promise that cannot settle before its caller needs it (a TS handler
 * called inline while a caller runs XLA inline on the JS thread): abandons the
 * token (0: an async handler refused before it ran, no token) and returns
 * FAILED_PRECONDITION. */
XFD_INTERNAL XLA_FFI_Error* host_refuse_pending(XLA_FFI_CallFrame* f, int32_t token);
/* What a call returns to its runtime for a TS result: status 0 ok, 1 error
 * (code, msg), 2 pending (a future completed through `token`), else no host. */
/* The error message TS wrote with a call's result (g_msg): its length, clamped to MSG_CAP - 1,
 * and a copy of it, NUL-terminated, into `msg` (MSG_CAP bytes; returns the length). */
XFD_INTERNAL int32_t host_message_len(void);
XFD_INTERNAL int32_t host_copy_message(char* msg);
XFD_INTERNAL XLA_FFI_Error* host_finish(XLA_FFI_CallFrame* f, int32_t status, int32_t code,
                                        const char* msg, int32_t token);

/* Calls from other threads (handler_queue.c). */
XFD_INTERNAL extern _Atomic int64_t g_js_blocked; /* the JS-thread guard (handler_host.h) */
XFD_INTERNAL extern _Atomic int32_t g_js_block_kind; /* XFD_JS_BLOCK_* of g_js_blocked */
/* The installed description of the caller that runs XLA inline, each field
 * filled in (xla_ffi_deno_js_block_describe_inline; generic words when none). */
XFD_INTERNAL xla_ffi_deno_inline_caller host_inline_caller(void);
XFD_INTERNAL extern _Atomic(thread_cb_t) g_thread_cb;
XFD_INTERNAL extern int32_t g_spare_cpus; /* callers that may spin at once */
XFD_INTERNAL XLA_FFI_Error* host_call_async_foreign(int32_t slot, XLA_FFI_CallFrame* f);
XFD_INTERNAL XLA_FFI_Error* host_call_sync_foreign(int32_t slot, XLA_FFI_CallFrame* f);

/* The flattener (handler_flatten.c). */
int32_t xla_ffi_deno_dtype_width(int32_t dtype);
/* Structural check of a frame; 0 or an XLA error code (message in buf). */
int32_t xla_ffi_deno_handler_check_frame(const XLA_FFI_CallFrame* f, char* buf, size_t cap);
int32_t xla_ffi_deno_handler_flatten_into(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap);
/* Check and flatten in one walk: slots used, or -1 (*code: 0 no room, else
 * the check's error code with the message in buf). */
int32_t xla_ffi_deno_handler_check_flatten(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap,
                                           char* buf, size_t bufcap, int32_t* code);

#endif /* DENO_XLA_FFI_HANDLER_INTERNAL_H_ */
