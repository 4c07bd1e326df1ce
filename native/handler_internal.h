/*
 * handler_internal.h: shared declarations of the TS handler entry points
 * (handler.c) and the call-frame flattener (handler_flatten.c).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_HANDLER_INTERNAL_H_
#define DENO_XLA_FFI_HANDLER_INTERNAL_H_

#include "xla_ffi.h"

/* Slots 0..3 of the flat buffer are the result area written by TS. */
#define FLAT_HEADER_SLOTS 4

int32_t xla_ffi_deno_dtype_width(int32_t dtype);
/* Structural check of a frame; 0 or an XLA error code (message in buf). */
int32_t xla_ffi_deno_handler_check_frame(const XLA_FFI_CallFrame* f, char* buf, size_t cap);
int32_t xla_ffi_deno_handler_flatten_into(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap);
/* Check and flatten in one walk: slots used, or -1 (*code: 0 no room, else
 * the check's error code with the message in buf). */
int32_t xla_ffi_deno_handler_check_flatten(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap,
                                           char* buf, size_t bufcap, int32_t* code);

#endif /* DENO_XLA_FFI_HANDLER_INTERNAL_H_ */
