/*
 * fault_handlers_ffi.cc: faulty handlers written with XLA's own C++ `ffi.h`
 * (jaxlib's headers, found at test time; never part of this project), as a
 * user's handlers under test are: a null write, an off-by-one write past the
 * end of the result, and one that behaves.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = 2 * x.
static ffi::Error Double(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = 2 * in[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_fault_ok, Double,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// Writes through a null pointer (not reported by UBSan first in the sanitized test run).
__attribute__((no_sanitize("undefined"))) static ffi::Error NullWrite(ffi::ResultBuffer<ffi::F32> y) {
  volatile float* p = nullptr;
  *p = y->typed_data()[0];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_fault_segv, NullWrite,
                              ffi::Ffi::Bind().Ret<ffi::Buffer<ffi::F32>>());

// Fills y and one element more: `<=` where `<` was meant.
static ffi::Error PastEnd(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  float* out = y->typed_data();
  for (size_t i = 0; i <= y->element_count(); ++i) out[i] = x.typed_data()[0];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_fault_past_end, PastEnd,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
