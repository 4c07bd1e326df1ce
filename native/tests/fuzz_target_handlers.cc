/*
 * fuzz_target_handlers.cc: handlers for the handler fuzzer's tests, written
 * with XLA's own C++ `ffi.h` (jaxlib's headers, found at test time; never
 * part of this project). Each fzbug_* handler carries one bug of the kind
 * handler authors ship; each fzok_* handler is correct and must give the
 * fuzzer no failure.
 *
 *   fzbug_rank2     treats its input as a matrix: the row length is dims[1]
 *                   whatever the rank, so a batch of rows r > c overruns
 *   fzbug_odd       processes pairs and writes one element past an odd length
 *   fzbug_index     zeroes element `index` (an attribute) without a bounds check
 *   fzbug_divzero   divides by dims[1] as an integer: SIGFPE when it is 0
 *   fzbug_argwrite  clamps negative inputs in place (writes its argument)
 *   fzbug_nan_hang  halves a value until it is below 1: never ends for NaN
 *
 * fzok_chatty is correct but talks as LAPACK does: a line on stdout for an
 * option character it does not take (uplo: 'L' or 'U'), a line on stderr
 * for each call it serves.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// ---------------------------------------------------------------- bugs

// y[..., i] = x[..., i] / max(row): the row length should be the last
// dimension; the code takes dimension 1 (right for a matrix only).
static ffi::Error Rank2(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  auto dims = x.dimensions();
  if (dims.size() < 2) return ffi::Error::InvalidArgument("x must have rank 2 or more");
  int64_t last = dims[dims.size() - 1];
  if (last == 0) return ffi::Error::Success();
  int64_t rows = static_cast<int64_t>(x.element_count()) / last;
  int64_t cols = dims[1];  // the bug: dims[dims.size() - 1]
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    float m = 1;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, std::fabs(in[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = in[r * cols + c] / m;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_rank2, Rank2,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// y = pairwise (a + b, a - b) of x; an odd length's last pair runs one past the end.
static ffi::Error Odd(ffi::BufferR1<ffi::F32> x, ffi::ResultBufferR1<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  int64_t n = static_cast<int64_t>(x.element_count());
  for (int64_t i = 0; i < n; i += 2) {  // the bug: i + 1 < n
    float a = in[i], b = i + 1 < n ? in[i + 1] : 0;
    out[i] = a + b;
    out[i + 1] = a - b;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_odd, Odd,
                              ffi::Ffi::Bind().Arg<ffi::BufferR1<ffi::F32>>().Ret<ffi::BufferR1<ffi::F32>>());

// y = x with element `index` zeroed; index is not checked against the length.
static ffi::Error Index(ffi::BufferR1<ffi::F32> x, ffi::ResultBufferR1<ffi::F32> y, int64_t index) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = in[i];
  out[index] = 0;  // the bug: no 0 <= index < n check
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_index, Index,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::F32>>()
                                  .Attr<int64_t>("index"));

// y[i] = the sum of row i of a matrix; the row count is checked against
// the element count divided by the row length, an integer division by 0
// for empty rows.
static ffi::Error DivZero(ffi::BufferR2<ffi::S32> x, ffi::ResultBufferR1<ffi::S32> y) {
  auto dims = x.dimensions();
  int64_t rows = dims[0], cols = dims[1];
  const int32_t* in = x.typed_data();
  int32_t* out = y->typed_data();
  volatile int64_t total = static_cast<int64_t>(x.element_count());
  volatile int64_t chunks = total / cols;  // the bug: cols may be 0
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t s = 0;
    for (int64_t c = 0; c < cols; ++c) s += static_cast<uint32_t>(in[r * cols + c]);
    out[r] = static_cast<int32_t>(s) + static_cast<int32_t>(chunks > rows ? 1 : 0);
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_divzero, DivZero,
                              ffi::Ffi::Bind().Arg<ffi::BufferR2<ffi::S32>>().Ret<ffi::BufferR1<ffi::S32>>());

// y = relu(x), computed in place in x first (its argument) and then copied.
static ffi::Error ArgWrite(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  float* in = const_cast<float*>(x.typed_data());
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) {
    if (in[i] < 0) in[i] = 0;  // the bug: writes the argument
    out[i] = in[i];
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_argwrite, ArgWrite,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// y[i] = how many halvings bring |x[i]| below 1: a NaN never gets there.
static ffi::Error NanHang(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) {
    volatile float v = std::fabs(in[i]);
    if (std::isinf(v)) v = std::numeric_limits<float>::max();
    float steps = 0;
    while (!(v < 1.0f)) {  // the bug: NaN compares false, for ever
      v = v * 0.5f;
      steps += 1;
    }
    out[i] = steps;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzbug_nan_hang, NanHang,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// ---------------------------------------------------------------- correct

// y = alpha * x, any rank.
static ffi::Error Scale(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = alpha * in[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzok_scale, Scale,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));

// y = x with element `index` zeroed, the index checked.
static ffi::Error IndexChecked(ffi::BufferR1<ffi::F32> x, ffi::ResultBufferR1<ffi::F32> y,
                               int64_t index) {
  int64_t n = static_cast<int64_t>(x.element_count());
  if (index < 0 || index >= n) return ffi::Error::InvalidArgument("index out of range");
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t i = 0; i < n; ++i) out[i] = i == index ? 0 : in[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzok_index, IndexChecked,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::F32>>()
                                  .Attr<int64_t>("index"));

// y[..., r] = the sum of row r of x[..., r, c] (the last dimension), any batch.
static ffi::Error RowSum(ffi::BufferR3<ffi::S32> x, ffi::ResultBufferR2<ffi::S32> y) {
  auto dims = x.dimensions();
  int64_t cols = dims[2];
  int64_t rows = dims[0] * dims[1];
  const int32_t* in = x.typed_data();
  int32_t* out = y->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t s = 0;
    for (int64_t c = 0; c < cols; ++c) s += static_cast<uint32_t>(in[r * cols + c]);
    out[r] = static_cast<int32_t>(s);
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzok_rowsum, RowSum,
                              ffi::Ffi::Bind().Arg<ffi::BufferR3<ffi::S32>>().Ret<ffi::BufferR2<ffi::S32>>());

// y = x for uplo 'L' or 'U'; any other uplo is refused, after a line on
// stdout as LAPACK's xerbla prints one.
static ffi::Error Chatty(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, uint8_t uplo) {
  if (uplo != 'L' && uplo != 'U') {
    std::printf(" ** On entry to CHATTY parameter number  1 had an illegal value\n");
    std::fflush(stdout);
    return ffi::Error::InvalidArgument("illegal uplo");
  }
  std::fprintf(stderr, "chatty: %zu elements\n", x.element_count());
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = in[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(fzok_chatty, Chatty,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<uint8_t>("uplo"));
