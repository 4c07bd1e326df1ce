/*
 * xla_ffi_dtype.h: the byte width of an XLA_FFI_DataType, as ffi.h's
 * ByteWidth (spec §3.1). The one definition used by the runtime, the TS
 * handler entry, the benches and the test C.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_DTYPE_H_
#define DENO_XLA_FFI_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

#include "xla_ffi.h"

/*
 * Bytes per element: 1 for PRED, 8-bit integers, 8-bit floats and the
 * sub-byte types (stored one element per byte), 2/4/8 for the wider integers
 * and floats, 8 for C64, 16 for C128; 0 for INVALID, TOKEN and values that
 * are not in the enum (13, 14, out of range).
 */
static inline size_t xla_ffi_dtype_width(int64_t dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8:
      return 1;
    case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
    case XLA_FFI_DataType_BF16:
      return 2;
    case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32:
      return 4;
    case XLA_FFI_DataType_S64: case XLA_FFI_DataType_U64: case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C64:
      return 8;
    case XLA_FFI_DataType_C128:
      return 16;
    default: /* 8-bit floats and sub-byte types: one byte each */
      return (dtype >= XLA_FFI_DataType_F8E5M2 && dtype <= XLA_FFI_DataType_F8E8M0FNU) ? 1 : 0;
  }
}

/* 1 for the packed sub-byte types (S4, U4, S2, U2, S1, U1, F4E2M1FN), else 0. */
static inline int xla_ffi_dtype_is_sub_byte(int64_t dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_S4: case XLA_FFI_DataType_U4: case XLA_FFI_DataType_S2:
    case XLA_FFI_DataType_U2: case XLA_FFI_DataType_S1: case XLA_FFI_DataType_U1:
    case XLA_FFI_DataType_F4E2M1FN:
      return 1;
    default:
      return 0;
  }
}

#endif /* DENO_XLA_FFI_DTYPE_H_ */
