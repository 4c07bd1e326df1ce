/*
 * code_padding.c: functions that only take space. Linked before
 * runtime_handlers.c, they give a rebuilt test library whose handlers sit at
 * other offsets than in the first build (tests/reliability_test.ts).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define XRT_PAD(n)                                      \
  int xrt_pad_##n(int x) {                              \
    volatile int a[64];                                 \
    for (int i = 0; i < 64; i++) a[i] = x * i + (n);    \
    return a[x & 63];                                   \
  }
#define XRT_PAD8(n) \
  XRT_PAD(n##0) XRT_PAD(n##1) XRT_PAD(n##2) XRT_PAD(n##3) \
  XRT_PAD(n##4) XRT_PAD(n##5) XRT_PAD(n##6) XRT_PAD(n##7)

XRT_PAD8(1)
XRT_PAD8(2)
XRT_PAD8(3)
XRT_PAD8(4)
XRT_PAD8(5)
XRT_PAD8(6)
XRT_PAD8(7)
XRT_PAD8(9)
