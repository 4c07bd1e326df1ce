/*
 * xla_ffi_dtype.h: the byte width, sub-byte packing and kind of an
 * XLA_FFI_DataType (ffi.h's ByteWidth, spec §3.1), from the table of
 * abi_facts.h. The one definition used by the runtime, the TS handler entry,
 * the frame check, the benches and the test C.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_DTYPE_H_
#define DENO_XLA_FFI_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

#include "xla_ffi.h"

/* What the values of a data type are (the KIND column of abi_facts.h). */
typedef enum {
  XFD_KIND_INVALID,
  XFD_KIND_PRED,
  XFD_KIND_SIGNED,
  XFD_KIND_UNSIGNED,
  XFD_KIND_FLOAT,
  XFD_KIND_COMPLEX,
  XFD_KIND_TOKEN,
} xfd_dtype_kind;

/*
 * Bytes per element (abi_facts.h): 1 for PRED, 8-bit integers, 8-bit floats
 * and the sub-byte types (stored one element per byte), 2/4/8 for the wider
 * integers and floats, 8 for C64, 16 for C128; 0 for INVALID, TOKEN and
 * values that are not in the enum (13, 14, out of range).
 */
static inline size_t xla_ffi_dtype_width(int64_t dtype) {
  switch (dtype) {
#define XFD_WIDTH_CASE_(name, value, bytes, ...) \
  case value:                                    \
    return bytes;
    XFD_DATA_TYPES(XFD_WIDTH_CASE_)
#undef XFD_WIDTH_CASE_
    default:
      return 0;
  }
}

/* 1 for the packed sub-byte types (fewer than 8 bits a value: S4, U4, S2,
 * U2, S1, U1, F4E2M1FN), else 0. */
static inline int xla_ffi_dtype_is_sub_byte(int64_t dtype) {
  switch (dtype) {
#define XFD_SUB_BYTE_CASE_(name, value, bytes, bits, ...) \
  case value:                                             \
    return (bits) > 0 && (bits) < 8;
    XFD_DATA_TYPES(XFD_SUB_BYTE_CASE_)
#undef XFD_SUB_BYTE_CASE_
    default:
      return 0;
  }
}

/* Bits of one value of a data type (abi_facts.h): 1, 2 or 4 for the sub-byte
 * types, 8 × the byte width for the others; 0 for INVALID, TOKEN and values
 * not in the enum. */
static inline int xla_ffi_dtype_bits(int64_t dtype) {
  switch (dtype) {
#define XFD_BITS_CASE_(name, value, bytes, bits, ...) \
  case value:                                         \
    return (bits);
    XFD_DATA_TYPES(XFD_BITS_CASE_)
#undef XFD_BITS_CASE_
    default:
      return 0;
  }
}

/* What the values of a data type are; XFD_KIND_INVALID for values that are
 * not in the enum. */
static inline xfd_dtype_kind xla_ffi_dtype_kind(int64_t dtype) {
  switch (dtype) {
#define XFD_KIND_CASE_(name, value, bytes, bits, kind, ...) \
  case value:                                               \
    return XFD_KIND_##kind;
    XFD_DATA_TYPES(XFD_KIND_CASE_)
#undef XFD_KIND_CASE_
    default:
      return XFD_KIND_INVALID;
  }
}

/* Whether dtype is a data type of the ABI with values (INVALID, TOKEN and
 * values not in the enum excluded). */
static inline int xla_ffi_dtype_has_values(int64_t dtype) {
  xfd_dtype_kind k = xla_ffi_dtype_kind(dtype);
  return k != XFD_KIND_INVALID && k != XFD_KIND_TOKEN;
}

#endif /* DENO_XLA_FFI_DTYPE_H_ */
