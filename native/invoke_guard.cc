/*
 * invoke_guard.cc: calls an XLA FFI handler inside try/catch, as XLA does,
 * so that a C++ exception a handler throws becomes an error instead of
 * unwinding through the runtime's C frames (which ends the process).
 *
 * Built as its own small library when a C++ compiler is found; the runtime
 * (runtime.c) calls handlers through it once it is installed with
 * xla_ffi_deno_runtime_set_invoke_guard, and directly otherwise.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cstdio>
#include <exception>

#include "xla_ffi.h"

/*
 * Calls h(cf). Returns 0 with its result in *out, or 1 when it threw: the
 * exception's what() (or a note for exceptions that are not std::exception)
 * is written into msg (cap bytes, NUL-terminated). XLA catches only
 * std::exception; catching the rest too is this runtime's safer choice.
 */
extern "C" int32_t xla_ffi_deno_guarded_invoke(XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf,
                                               XLA_FFI_Error** out, char* msg, int32_t cap) {
  try {
    *out = h(cf);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(msg, static_cast<size_t>(cap), "%s", e.what());
  } catch (...) {
    std::snprintf(msg, static_cast<size_t>(cap), "%s",
                  "an exception that is not a std::exception");
  }
  *out = nullptr;
  return 1;
}
