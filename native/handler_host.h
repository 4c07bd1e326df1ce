/*
 * handler_host.h: what the TS handler host (handler*.c) offers the rest of
 * the native library. The host is what any XLA loads: it knows nothing of
 * the embedded runtime. A runtime in the same library may call these
 * functions and installs what the host needs to know of it as hooks; the
 * host never calls into a runtime except through those hooks.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_HANDLER_HOST_H_
#define DENO_XLA_FFI_HANDLER_HOST_H_

#include <stddef.h>
#include <stdint.h>

#include "xla_ffi.h"

/* What a runtime's enter hook saved for its leave hook. */
typedef struct xla_ffi_deno_host_scope {
  void* prev;
  int32_t changed;
} xla_ffi_deno_host_scope;

/*
 * What a runtime in this library tells the host about itself. All fields
 * may be zero (the host then treats its frames as any runtime's).
 *
 *  - own_apis / own_api_count / ctx_tag: the runtime's API tables. A frame
 *    with one of them carries one of its execution contexts, whose first 8
 *    bytes are ctx_tag: the entry points check that (and that buffers with
 *    elements have data at the execute stage) before a frame reaches TS.
 *    Other runtimes' contexts stay opaque.
 *  - queued_capture / queued_enter / queued_leave: a call from another
 *    thread is served on the JS thread. capture runs on the calling thread
 *    before the call is queued and returns what the call needs made current
 *    there (e.g. the calling runtime's CUDA context), or NULL for nothing;
 *    enter runs on the JS thread before the TS handler with that handle (0,
 *    or an XLA error code with the message in msg: the call then fails with
 *    it); leave runs after the handler with the scope enter filled.
 */
typedef struct xla_ffi_deno_host_hooks {
  size_t struct_size; /* sizeof(xla_ffi_deno_host_hooks) */
  const XLA_FFI_Api* const* own_apis;
  int32_t own_api_count;
  uint64_t ctx_tag;
  const void* (*queued_capture)(const XLA_FFI_CallFrame* f);
  int32_t (*queued_enter)(const void* handle, xla_ffi_deno_host_scope* s, char* msg, size_t cap);
  void (*queued_leave)(const void* handle, const xla_ffi_deno_host_scope* s);
} xla_ffi_deno_host_hooks;

/* Installs a runtime's hooks (NULL: none); `hooks` must stay valid while the
 * library is loaded (static storage). Returns 0, or -1 when its struct_size
 * is too small. A runtime installs them once, before its first call. */
int32_t xla_ffi_deno_host_install(const xla_ffi_deno_host_hooks* hooks);

/* The JS-thread guard: a runtime that calls a handler synchronously on the
 * JS thread marks the thread as blocked in native code for the call, so that
 * TS handlers called meanwhile from other threads fail instead of waiting
 * forever. enter returns what leave restores (-1: not the JS thread).
 * enter_as says what blocks it (the messages name it):
 *   XFD_JS_BLOCK_CALL: a native handler called synchronously (enter);
 *   XFD_JS_BLOCK_XLA_INLINE: a caller that runs XLA inline on the JS thread
 *     (its synchronous runs); a TS handler XLA then calls inline also fails
 *     when it returns a Promise, since XLA would wait for it on this very
 *     thread;
 *   XFD_JS_BLOCK_FFI_CALL: a native handler Runtime.ffiCall runs inline. */
enum { XFD_JS_BLOCK_CALL = 1, XFD_JS_BLOCK_XLA_INLINE = 2, XFD_JS_BLOCK_FFI_CALL = 3 };
int64_t xla_ffi_deno_js_block_enter(void);
int64_t xla_ffi_deno_js_block_enter_as(int32_t kind);
void xla_ffi_deno_js_block_leave(int64_t saved);

/* What the messages of a TS handler refused during an
 * XFD_JS_BLOCK_XLA_INLINE block say of the caller that runs XLA inline, so
 * that they name the caller's own API. Each field is a static string, or
 * NULL for the generic words in brackets:
 *   runs:      what the JS thread runs synchronously ("XLA");
 *   sync_runs: the caller's synchronous runs ("a caller that runs XLA
 *              inline on the JS thread");
 *   free_runs: the runs that leave the JS thread free ("a run that leaves
 *              the JS thread free"). */
typedef struct xla_ffi_deno_inline_caller {
  size_t struct_size; /* sizeof(xla_ffi_deno_inline_caller) */
  const char* runs;
  const char* sync_runs;
  const char* free_runs;
} xla_ffi_deno_inline_caller;

/* Installs the description of the process's caller that runs XLA inline
 * (NULL: the generic words); `caller` must stay valid while the library is
 * loaded (static storage). Returns 0, or -1 when its struct_size is too
 * small. */
int32_t xla_ffi_deno_js_block_describe_inline(const xla_ffi_deno_inline_caller* caller);

/* The slot of a released TS entry point `h`, or -1 (not one, or live). */
int32_t xla_ffi_deno_handler_released_slot(void* h);
/* Whether h is one of the host's entry points (a TS handler), by where its code lies. */
int32_t xla_ffi_deno_handler_is_entry(const void* h);

#endif /* DENO_XLA_FFI_HANDLER_HOST_H_ */
