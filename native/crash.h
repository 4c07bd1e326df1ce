/*
 * crash.h: which handler runs on this thread, for the fatal-signal reporter
 * (crash.c). Whoever calls a handler in-process (a TS entry point, the
 * embedded runtime, a wrapper registered with real XLA) stores the handler's
 * pointer in the thread's slot before the call and puts the previous value
 * back after it: one store each. When SIGSEGV, SIGBUS, SIGILL, SIGFPE or
 * SIGABRT arrives while the slot is set, the reporter writes one line naming
 * the handler (its description, xla_ffi_deno_crash_describe) and passes the
 * signal on to the handler installed before it.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_CRASH_H_
#define DENO_XLA_FFI_CRASH_H_

#include "common.h"

/* The handler running on this thread (its XLA_FFI_Handler*), or NULL.
 * initial-exec: a store is one instruction on the thread pointer, and no
 * thread's copy is allocated lazily, so the signal handler may read it. */
XFD_INTERNAL extern _Thread_local const void* xfd_running
    __attribute__((tls_model("initial-exec")));

/* Around a handler call: the slot names `fn`, then what it named before
 * (a handler may call others: a TS handler calling Runtime.callSync). */
#define XFD_RUNNING_ENTER(fn)           \
  const void* xfd_prev_ = xfd_running; \
  xfd_running = (const void*)(fn)
#define XFD_RUNNING_LEAVE() xfd_running = xfd_prev_

#endif /* DENO_XLA_FFI_CRASH_H_ */
