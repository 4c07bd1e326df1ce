/*
 * testing_handlers.cc: handlers written the way users write them, with
 * XLA's own C++ `ffi.h` (the header set jaxlib ships, found at test time;
 * never part of this project), for the tests of `ffiCall` and
 * `@deno-xla/ffi/testing` that run one test body on the embedded runtime and
 * on real XLA: an RMS norm over the last axis, a sum into a rank-0 result,
 * complex arithmetic, an update in place through an aliased buffer, a
 * stateful counter with an exported type id and TypeInfo, and a matrix
 * product over column-major operands (as BLAS and LAPACK kernels take them).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = x / sqrt(mean(x^2) + eps), each row of the last axis on its own.
static ffi::Error RmsNorm(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  auto dims = x.dimensions();
  if (dims.size() == 0) return ffi::Error::InvalidArgument("rms_norm: x must have an axis");
  const int64_t row = dims.back();
  const int64_t total = static_cast<int64_t>(x.element_count());
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t start = 0; row > 0 && start < total; start += row) {
    double squares = 0;
    for (int64_t i = 0; i < row; ++i) squares += double(in[start + i]) * in[start + i];
    const float inv = 1.0f / std::sqrt(float(squares / double(row)) + eps);
    for (int64_t i = 0; i < row; ++i) out[start + i] = in[start + i] * inv;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_rms_norm, RmsNorm,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// c = a @ b, every matrix column-major (element [i][j] of an m-row matrix at
// i + j*m), as a BLAS gemm takes them: called with input_layouts and
// output_layouts of [1, 0] it computes the product of row-major arrays.
static ffi::Error ColMajorMatmul(ffi::BufferR2<ffi::F32> a, ffi::BufferR2<ffi::F32> b,
                                 ffi::ResultBufferR2<ffi::F32> c) {
  const int64_t m = a.dimensions()[0], k = a.dimensions()[1], n = b.dimensions()[1];
  if (b.dimensions()[0] != k || c->dimensions()[0] != m || c->dimensions()[1] != n) {
    return ffi::Error::InvalidArgument("col_major_matmul: shapes do not match");
  }
  const float* x = a.typed_data();
  const float* y = b.typed_data();
  float* out = c->typed_data();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += x[i + p * m] * y[p + j * k];
      out[i + j * m] = sum;
    }
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_col_major_matmul, ColMajorMatmul,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR2<ffi::F32>>()
                                  .Arg<ffi::BufferR2<ffi::F32>>()
                                  .Ret<ffi::BufferR2<ffi::F32>>());

// The sum of every element, into a scalar (rank-0) result.
static ffi::Error Sum(ffi::Buffer<ffi::F32> x, ffi::ResultBufferR0<ffi::F32> out) {
  double s = 0;
  for (size_t i = 0; i < x.element_count(); ++i) s += x.typed_data()[i];
  *out->typed_data() = static_cast<float>(s);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_sum, Sum,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::BufferR0<ffi::F32>>());

// y = conj(x) * w, complex64.
static ffi::Error ConjMul(ffi::Buffer<ffi::C64> x, ffi::Buffer<ffi::C64> w,
                          ffi::ResultBuffer<ffi::C64> y) {
  if (x.element_count() != w.element_count() || x.element_count() != y->element_count())
    return ffi::Error::InvalidArgument("conj_mul: sizes differ");
  for (size_t i = 0; i < x.element_count(); ++i)
    y->typed_data()[i] = std::conj(x.typed_data()[i]) * w.typed_data()[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_conj_mul, ConjMul,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::C64>>()
                                  .Arg<ffi::Buffer<ffi::C64>>()
                                  .Ret<ffi::Buffer<ffi::C64>>());

// Adds one in place: the result must be the argument's buffer (input_output_aliases).
static ffi::Error AddOneInPlace(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  if (static_cast<const void*>(x.typed_data()) != static_cast<void*>(y->typed_data()))
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "add_one_in_place: the result is not the argument's buffer");
  for (size_t i = 0; i < y->element_count(); ++i) y->typed_data()[i] += 1.0f;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_add_one_in_place, AddOneInPlace,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// A counter kept as the instantiate stage's state.
struct TestingCounter {
  static ffi::TypeId id;
  explicit TestingCounter(int64_t start) : value(start) {}
  int64_t value;
};
ffi::TypeId TestingCounter::id = {};
static const ffi::TypeInfo kTestingCounterInfo = ffi::MakeTypeInfo<TestingCounter>();

XLA_FFI_DECLARE_TYPE_ID_SYMBOL(testing_counter_type_id);
XLA_FFI_DECLARE_TYPE_INFO_SYMBOL(testing_counter_type_info);
extern "C" XLA_FFI_TypeId* testing_counter_type_id() { return &TestingCounter::id; }
extern "C" const XLA_FFI_TypeInfo* testing_counter_type_info() { return &kTestingCounterInfo; }

static ffi::ErrorOr<std::unique_ptr<TestingCounter>> CounterInstantiate(int64_t start) {
  return std::make_unique<TestingCounter>(start);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_counter_instantiate, CounterInstantiate,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("start"));

static ffi::Error CounterExecute(TestingCounter* counter, ffi::ResultBufferR0<ffi::S64> out) {
  *out->typed_data() = ++counter->value;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(testing_counter_execute, CounterExecute,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<TestingCounter>>()
                                  .Ret<ffi::BufferR0<ffi::S64>>());
