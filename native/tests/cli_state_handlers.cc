/*
 * cli_state_handlers.cc: stateful handlers written with XLA's own C++
 * `ffi.h` (jaxlib's headers, found at test time; never part of this project)
 * for the command line's handling of state types: an instantiate stage that
 * makes a `Scaler` from the `factor` attribute, an execute stage that scales
 * its argument by it and counts its calls, and the type id and type info of
 * `Scaler` exported the way ffi.h declares them (`*_type_id`, `*_type_info`),
 * and an instantiate handler of a type without such exports.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <cstdint>
#include <memory>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

struct Scaler {
  static ffi::TypeId id;
  explicit Scaler(float f) : factor(f) {}
  float factor;
  int64_t calls = 0;
};
ffi::TypeId Scaler::id = {};
static const ffi::TypeInfo kScalerInfo = ffi::MakeTypeInfo<Scaler>();

XLA_FFI_DECLARE_TYPE_ID_SYMBOL(cli_scaler_type_id);
XLA_FFI_DECLARE_TYPE_INFO_SYMBOL(cli_scaler_type_info);
extern "C" XLA_FFI_TypeId* cli_scaler_type_id() { return &Scaler::id; }
extern "C" const XLA_FFI_TypeInfo* cli_scaler_type_info() { return &kScalerInfo; }

static ffi::ErrorOr<std::unique_ptr<Scaler>> ScalerInstantiate(float factor) {
  return std::make_unique<Scaler>(factor);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(cli_scaler_instantiate, ScalerInstantiate,
                              ffi::Ffi::BindInstantiate().Attr<float>("factor"));

static ffi::Error ScalerExecute(Scaler* s, ffi::Buffer<ffi::F32> x,
                                ffi::ResultBuffer<ffi::F32> y) {
  if (x.element_count() != y->element_count())
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, "scaler: sizes differ");
  s->calls += 1;
  for (size_t i = 0; i < x.element_count(); ++i)
    y->typed_data()[i] = s->factor * x.typed_data()[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(cli_scaler_execute, ScalerExecute,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<Scaler>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// A state type the library exports no type id function for: only a runtime
// that registers it by other means can ask its instantiate handler.
struct Hidden {
  static ffi::TypeId id;
};
ffi::TypeId Hidden::id = {};

static ffi::ErrorOr<std::unique_ptr<Hidden>> HiddenInstantiate() {
  return std::make_unique<Hidden>();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(cli_hidden_instantiate, HiddenInstantiate,
                              ffi::Ffi::BindInstantiate());
