/*
 * cpp_handlers.cc: a handler library written in C++ the way libraries built
 * with XLA's C++ ffi.h are (against the project's own xla_ffi.h): handler
 * objects of a class template whose member function Call does the work, and
 * extern "C" entry points that forward to them. As in any C++ library built
 * with default visibility, the member functions, constructors and destructors
 * of the explicitly instantiated template are exported too, with a
 * namespace-scope handler of C++ linkage, and two C functions that crash: one
 * when queried for metadata (no handler), one only when called.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "test_handler_util.h"
#include "xla_ffi.h"

namespace cppdemo {
namespace ffi {

enum class Stage : int { kExecute = 3 };

// Copies the F32 argument into the F32 result, times `scale`.
XLA_FFI_Error* ScaleInto(const XLA_FFI_CallFrame* cf, float scale) {
  if (cf->args.size != 1 || cf->rets.size != 1) {
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "scale: expected 1 argument and 1 result");
  }
  const XLA_FFI_Buffer* x = static_cast<const XLA_FFI_Buffer*>(cf->args.args[0]);
  const XLA_FFI_Buffer* y = static_cast<const XLA_FFI_Buffer*>(cf->rets.rets[0]);
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32) {
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "scale: expected F32");
  }
  int64_t n = 1;
  for (int64_t i = 0; i < x->rank; ++i) n *= x->dims[i];
  const float* in = static_cast<const float*>(x->data);
  float* out = static_cast<float*>(y->data);
  for (int64_t i = 0; i < n; ++i) out[i] = scale * in[i];
  return nullptr;
}

template <Stage S>
class Handler {
 public:
  explicit Handler(float scale) : scale_(scale) {}
  ~Handler() {}
  XLA_FFI_Error* Call(XLA_FFI_CallFrame* cf) const;
  float scale() const { return scale_; }

 private:
  float scale_;
};

template <Stage S>
XLA_FFI_Error* Handler<S>::Call(XLA_FFI_CallFrame* cf) const {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  return ScaleInto(cf, scale_);
}

// Exports every member of Handler<kExecute>.
template class Handler<Stage::kExecute>;

// A handler with C++ linkage at namespace scope: a candidate only with --all.
XLA_FFI_Error* Identity(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  return ScaleInto(cf, 1.0f);
}

}  // namespace ffi
}  // namespace cppdemo

extern "C" {

XLA_FFI_Error* cpp_scale(XLA_FFI_CallFrame* cf) {
  static const cppdemo::ffi::Handler<cppdemo::ffi::Stage::kExecute> handler(2.0f);
  return handler.Call(cf);
}

// A handler that answers the metadata query and dies of SIGBUS when called:
// it reads a mapped page beyond the end of an empty file.
XLA_FFI_Error* cpp_crash_on_call(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  std::FILE* f = std::tmpfile();
  if (f == nullptr) return test_error(cf->api, XLA_FFI_Error_Code_INTERNAL, "tmpfile failed");
  void* p = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
  if (p == MAP_FAILED) return test_error(cf->api, XLA_FFI_Error_Code_INTERNAL, "mmap failed");
  return *static_cast<volatile char*>(p) == 0 ? nullptr : nullptr;
}

// No handler: dies of SIGSEGV when called with a metadata frame.
void cpp_not_a_handler(void* p) {
  (void)p;
  *static_cast<volatile int*>(nullptr) = 1;
}

}  // extern "C"
