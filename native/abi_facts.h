/*
 * abi_facts.h: the facts about XLA's FFI ABI that C, TypeScript and Python
 * all need, written once as X-macros. C includes this file; `deno task
 * embed` parses it and writes the TypeScript tables (src/abi/_facts.generated.ts,
 * which also carries the Python bridge's NumPy names) from it.
 *
 * Format (the generator reads it as text): each table is a
 * `#define XFD_<TABLE>(X)` whose lines are one `X(...)` entry each, with
 * plain identifiers, integers, decimal numbers or "strings" as arguments,
 * and nothing else on the line but the continuation backslash; each scalar
 * is a `#define XFD_<NAME> <integer>` line (an `ll` suffix allowed).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_ABI_FACTS_H_
#define DENO_XLA_FFI_ABI_FACTS_H_

/*
 * Data types (XLA_FFI_DataType, the values of xla::PrimitiveType; 13 TUPLE
 * and 14 OPAQUE are not part of the FFI):
 *   X(NAME, value, byte_width, bit_width, KIND, numpy, MODULE)
 * byte_width is ffi.h's ByteWidth (sub-byte types are stored one element a
 * byte: 1; INVALID and TOKEN 0); bit_width the bits of one value. KIND is
 * INVALID, PRED, SIGNED, UNSIGNED, FLOAT, COMPLEX or TOKEN. numpy is the
 * NumPy type's name, from MODULE: NUMPY (numpy itself), ML_DTYPES, or NONE
 * (no NumPy type: "").
 */
#define XFD_DATA_TYPES(X)                                   \
  X(INVALID, 0, 0, 0, INVALID, "", NONE)                    \
  X(PRED, 1, 1, 8, PRED, "bool", NUMPY)                     \
  X(S8, 2, 1, 8, SIGNED, "int8", NUMPY)                     \
  X(S16, 3, 2, 16, SIGNED, "int16", NUMPY)                  \
  X(S32, 4, 4, 32, SIGNED, "int32", NUMPY)                  \
  X(S64, 5, 8, 64, SIGNED, "int64", NUMPY)                  \
  X(U8, 6, 1, 8, UNSIGNED, "uint8", NUMPY)                  \
  X(U16, 7, 2, 16, UNSIGNED, "uint16", NUMPY)               \
  X(U32, 8, 4, 32, UNSIGNED, "uint32", NUMPY)               \
  X(U64, 9, 8, 64, UNSIGNED, "uint64", NUMPY)               \
  X(F16, 10, 2, 16, FLOAT, "float16", NUMPY)                \
  X(F32, 11, 4, 32, FLOAT, "float32", NUMPY)                \
  X(F64, 12, 8, 64, FLOAT, "float64", NUMPY)                \
  X(C64, 15, 8, 64, COMPLEX, "complex64", NUMPY)            \
  X(BF16, 16, 2, 16, FLOAT, "bfloat16", ML_DTYPES)          \
  X(TOKEN, 17, 0, 0, TOKEN, "", NONE)                       \
  X(C128, 18, 16, 128, COMPLEX, "complex128", NUMPY)        \
  X(F8E5M2, 19, 1, 8, FLOAT, "float8_e5m2", ML_DTYPES)      \
  X(F8E4M3FN, 20, 1, 8, FLOAT, "float8_e4m3fn", ML_DTYPES)  \
  X(S4, 21, 1, 4, SIGNED, "int4", ML_DTYPES)                \
  X(U4, 22, 1, 4, UNSIGNED, "uint4", ML_DTYPES)             \
  X(F8E4M3B11FNUZ, 23, 1, 8, FLOAT, "float8_e4m3b11fnuz", ML_DTYPES) \
  X(F8E5M2FNUZ, 24, 1, 8, FLOAT, "float8_e5m2fnuz", ML_DTYPES) \
  X(F8E4M3FNUZ, 25, 1, 8, FLOAT, "float8_e4m3fnuz", ML_DTYPES) \
  X(S2, 26, 1, 2, SIGNED, "int2", ML_DTYPES)                \
  X(U2, 27, 1, 2, UNSIGNED, "uint2", ML_DTYPES)             \
  X(F8E4M3, 28, 1, 8, FLOAT, "float8_e4m3", ML_DTYPES)      \
  X(F8E3M4, 29, 1, 8, FLOAT, "float8_e3m4", ML_DTYPES)      \
  X(S1, 30, 1, 1, SIGNED, "int1", ML_DTYPES)                \
  X(U1, 31, 1, 1, UNSIGNED, "uint1", ML_DTYPES)             \
  X(F4E2M1FN, 32, 1, 4, FLOAT, "float4_e2m1fn", ML_DTYPES)  \
  X(F8E8M0FNU, 33, 1, 8, FLOAT, "float8_e8m0fnu", ML_DTYPES)

/*
 * Float formats of the FLOAT data types (C64/C128 are pairs of F32/F64):
 *   X(NAME, exponent_bits, mantissa_bits, bias, SPECIALS, max, non_finite)
 * SPECIALS says how the format spends its top exponent: IEEE (Inf and NaN),
 * FN (no Inf; all ones is NaN), FNUZ (no Inf, no -0; 0x80 is NaN), SAT (no
 * Inf, no NaN: saturates), E8M0 (powers of two only; all ones is NaN). max is
 * the largest finite magnitude; non_finite 1 when ±Inf and NaN exist.
 */
#define XFD_FLOAT_FORMATS(X)                                   \
  X(F16, 5, 10, 15, IEEE, 65504, 1)                            \
  X(F32, 8, 23, 127, IEEE, 3.4028234663852886e38, 1)          \
  X(F64, 11, 52, 1023, IEEE, 1.7976931348623157e308, 1)       \
  X(BF16, 8, 7, 127, IEEE, 3.3895313892515355e38, 1)          \
  X(F8E5M2, 5, 2, 15, IEEE, 57344, 1)                          \
  X(F8E4M3, 4, 3, 7, IEEE, 240, 1)                             \
  X(F8E3M4, 3, 4, 3, IEEE, 15.5, 1)                            \
  X(F8E4M3FN, 4, 3, 7, FN, 448, 0)                             \
  X(F8E4M3B11FNUZ, 4, 3, 11, FNUZ, 30, 0)                      \
  X(F8E5M2FNUZ, 5, 2, 16, FNUZ, 57344, 0)                      \
  X(F8E4M3FNUZ, 4, 3, 8, FNUZ, 240, 0)                         \
  X(F4E2M1FN, 2, 1, 1, SAT, 6, 0)                              \
  X(F8E8M0FNU, 8, 0, 127, E8M0, 1.7014118346046923e38, 0)

/*
 * Attribute kinds (XLA_FFI_AttrType): X(NAME, value). How each is checked
 * is common.c's (xfd_check_frame), flattened handler_flatten.c's, decoded
 * src/handler/_decode.ts's and src/abi/readers.ts's, written
 * src/abi/writers.ts's and src/runtime/attributes.ts's.
 */
#define XFD_ATTR_KINDS(X) \
  X(ARRAY, 1)             \
  X(DICTIONARY, 2)        \
  X(SCALAR, 3)            \
  X(STRING, 4)

/*
 * Limits of the call-frame checks (the embedded runtime's and the TS entry
 * points', common.c) and of the runtime API functions' inputs; documented in
 * docs/reliability.md, "Guards". One `#define XFD_MAX_<NAME> <integer>` each.
 */
#define XFD_MAX_OPERANDS 65536      /* args or rets per call frame */
#define XFD_MAX_RANK 256            /* buffer rank */
#define XFD_MAX_ATTRS 65536         /* attributes per dictionary */
#define XFD_MAX_DEPTH 64            /* dictionary nesting */
#define XFD_MAX_NAME 4096           /* attribute, handler, platform, type names (bytes) */
#define XFD_MAX_STRING 1073741824ll /* string attribute (bytes) */
#define XFD_MAX_ARRAY 2147483648ll  /* array attribute elements */

/*
 * The header of the flat buffer a TS handler reads its call frame from
 * (layout in handler_flatten.c): one `#define XFD_FLAT_<NAME> <int32 index>`
 * each. The buffer is 8-byte slots; int32 index i is byte 4 i, and an f64
 * field at int32 index i is f64 index i / 2.
 */
#define XFD_FLAT_CODE 0       /* result area (TS writes it): the status code */
#define XFD_FLAT_MSG_LEN 2    /* the error message's length */
#define XFD_FLAT_TOKEN 4      /* a pending call's token */
#define XFD_FLAT_HEADER 8     /* where the frame's header starts (after the result area) */
#define XFD_FLAT_STAGE 8      /* the execution stage */
#define XFD_FLAT_API 10       /* the frame's api (f64) */
#define XFD_FLAT_CTX 12       /* the frame's execution context (f64) */
#define XFD_FLAT_NARGS 14     /* the argument count */
#define XFD_FLAT_RETS_AT 15   /* where the result records start */
#define XFD_FLAT_NRETS 16     /* the result count */
#define XFD_FLAT_ATTRS_AT 17  /* where the attribute records start */
#define XFD_FLAT_NATTRS 18    /* the top-level attribute count */
#define XFD_FLAT_ATTRS_END 19 /* where the attribute records end */
#define XFD_FLAT_INDEX 20     /* the record index: where each argument, result and
                                 top-level attribute record starts */

#endif /* DENO_XLA_FFI_ABI_FACTS_H_ */
