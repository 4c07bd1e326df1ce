/*
 * bench.h: declarations shared by the side-by-side benchmark's C code
 * (frames, the C floor decoder, the canonical digest and the call driver).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_BENCH_H_
#define DENO_XLA_FFI_BENCH_H_

#include <stdint.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"

/* Frame ids of bench_frame(). */
enum { BENCH_FRAME_STANDARD = 0, BENCH_FRAME_SMALL = 1, BENCH_FRAME_LARGE = 2, BENCH_FRAME_COUNT = 3 };

/* Capacities of one decode (the frames stay well inside them). */
#define BENCH_MAX_BUFFERS 128
#define BENCH_MAX_RANK 8
#define BENCH_MAX_ATTRS 256
#define BENCH_POOL_BYTES 65536

typedef struct bench_buffer {
  int32_t dtype;
  void* data;
  int64_t rank;
  int64_t dims[BENCH_MAX_RANK];
} bench_buffer;

/* One attribute, flattened in pre-order: a dictionary is followed by its
 * `count` children. Names, string bytes, scalar and array values are copied
 * into the pool. */
typedef struct bench_attr {
  int32_t type;  /* XLA_FFI_AttrType */
  int32_t dtype; /* scalars and arrays */
  uint32_t name_off, name_len;
  uint32_t value_off, value_len; /* bytes in the pool (not for dicts) */
  int64_t count;                 /* array elements or dictionary entries */
} bench_attr;

typedef struct bench_decoded {
  int32_t stage;
  int32_t num_args, num_rets, num_attrs; /* num_attrs: top level */
  int32_t attr_total;                    /* all flattened entries */
  uint32_t pool_used;
  bench_buffer buffers[BENCH_MAX_BUFFERS]; /* args then rets */
  bench_attr attrs[BENCH_MAX_ATTRS];
  unsigned char pool[BENCH_POOL_BYTES];
} bench_decoded;

/* Decodes a frame into `out`; 0 on success, -1 when a capacity or a type is
 * out of range. */
int bench_decode(const XLA_FFI_CallFrame* frame, bench_decoded* out);

#endif /* DENO_XLA_FFI_BENCH_H_ */
