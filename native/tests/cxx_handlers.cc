/*
 * cxx_handlers.cc: C++ test handlers (written against this project's own
 * header) that throw, for the runtime's exception guard: XLA catches a C++
 * exception a handler throws and turns it into an UNKNOWN error ("XLA FFI
 * call failed: <what>"; at registration "Fetching XLA FFI metadata failed:
 * <what>").
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdexcept>
#include <string>

#include "xla_ffi.h"

namespace {

bool IsMetadataQuery(const XLA_FFI_CallFrame* cf) {
  return cf->extension_start != nullptr &&
         cf->extension_start->type == XLA_FFI_Extension_Metadata;
}

XLA_FFI_Error* AnswerMetadata(XLA_FFI_CallFrame* cf) {
  auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(cf->extension_start);
  ext->metadata->api_version.major_version = XLA_FFI_API_MAJOR;
  ext->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
  ext->metadata->traits = 0;
  return nullptr;
}

struct NotAStdException {
  int code;
};

}  // namespace

/* Throws std::runtime_error("Ooops!") when called (not at the metadata query). */
extern "C" XLA_FFI_Error* cxx_throws(XLA_FFI_CallFrame* cf) {
  if (IsMetadataQuery(cf)) return AnswerMetadata(cf);
  throw std::runtime_error("Ooops!");
}

/* Throws something that is not a std::exception. */
extern "C" XLA_FFI_Error* cxx_throws_other(XLA_FFI_CallFrame* cf) {
  if (IsMetadataQuery(cf)) return AnswerMetadata(cf);
  throw NotAStdException{7};
}

/* Throws from the metadata query itself. */
extern "C" XLA_FFI_Error* cxx_throws_metadata(XLA_FFI_CallFrame* cf) {
  if (IsMetadataQuery(cf)) throw std::logic_error("no metadata today");
  return nullptr;
}

/* Does not throw: the guard must not change a normal call. */
extern "C" XLA_FFI_Error* cxx_fine(XLA_FFI_CallFrame* cf) {
  if (IsMetadataQuery(cf)) return AnswerMetadata(cf);
  return nullptr;
}
