/*
 * test_handler_util.h: what the C test handlers share: creating an XLA error
 * and answering the metadata call (API version 0.1, traits 0). Header-only
 * (static inline), so each test library stays one translation unit away from
 * the runtime; test builds list it among their sources so a change rebuilds
 * them.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_TEST_HANDLER_UTIL_H_
#define DENO_XLA_FFI_TEST_HANDLER_UTIL_H_

#include <stddef.h>

#include "xla_ffi.h"

/* An XLA error with `code` and `msg`, created through the API. */
static inline XLA_FFI_Error* test_error(const XLA_FFI_Api* api, XLA_FFI_Error_Code code,
                                        const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
  return api->XLA_FFI_Error_Create(&a);
}

/* 1 when the call is XLA's metadata query (a Metadata extension in front). */
static inline int test_is_metadata(const XLA_FFI_CallFrame* cf) {
  return cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata;
}

/* Answers the metadata query: this header's API version, traits 0. */
static inline XLA_FFI_Error* test_answer_metadata(XLA_FFI_CallFrame* cf) {
  XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)cf->extension_start;
  ext->metadata->api_version.major_version = XLA_FFI_API_MAJOR;
  ext->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
  ext->metadata->traits = 0;
  return NULL;
}

#endif /* DENO_XLA_FFI_TEST_HANDLER_UTIL_H_ */
