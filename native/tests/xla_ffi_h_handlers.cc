/*
 * xla_ffi_h_handlers.cc: test handlers written with XLA's own C++ `ffi.h`
 * (the header set jaxlib ships, found at test time; never part of this
 * project). They let the embedded runtime be checked against handlers built
 * the way users build them: typed binding, ffi.h's state encoding for the
 * runtime's API version, exported type id and TypeInfo symbols, exceptions.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// A state type as ffi.h wants one: a static TypeId the runtime assigns.
struct Counter {
  static ffi::TypeId id;
  explicit Counter(int64_t start) : value(start) {}
  int64_t value;
};
ffi::TypeId Counter::id = {};
static const ffi::TypeInfo kCounterInfo = ffi::MakeTypeInfo<Counter>();

XLA_FFI_DECLARE_TYPE_ID_SYMBOL(ffih_counter_type_id);
XLA_FFI_DECLARE_TYPE_INFO_SYMBOL(ffih_counter_type_info);
extern "C" XLA_FFI_TypeId* ffih_counter_type_id() { return &Counter::id; }
extern "C" const XLA_FFI_TypeInfo* ffih_counter_type_info() { return &kCounterInfo; }

static ffi::ErrorOr<std::unique_ptr<Counter>> CounterInstantiate(int64_t start) {
  return std::make_unique<Counter>(start);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_counter_instantiate, CounterInstantiate,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("start"));

static ffi::Error CounterExecute(Counter* counter, ffi::ResultBufferR0<ffi::S64> out) {
  counter->value += 1;
  *out->typed_data() = counter->value;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_counter_execute, CounterExecute,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<Counter>>()
                                  .Ret<ffi::BufferR0<ffi::S64>>());

// y = alpha * x, with ffi.h's checks of counts, dtypes and attributes.
static ffi::Error Scale(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  if (x.element_count() != y->element_count())
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, "scale: sizes differ");
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = alpha * x.typed_data()[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_scale, Scale,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));

static ffi::Error Throws() { throw std::runtime_error("Ooops!"); }

XLA_FFI_DEFINE_HANDLER_SYMBOL(ffih_throws, Throws, ffi::Ffi::Bind());
