/*
 * Exports for the command line's metadata-query tests: one handler, and
 * functions that are no handlers and crash, end the process, hang, or return
 * without answering when called with a metadata frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "xla_ffi.h"

XLA_FFI_Error* probe_handler(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata* md = ((XLA_FFI_Metadata_Extension*)cf->extension_start)->metadata;
    md->api_version.major_version = XLA_FFI_API_MAJOR;
    md->api_version.minor_version = XLA_FFI_API_MINOR;
    md->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
  }
  return NULL;
}

void* probe_crashes(void* p) {
  (void)p;
  *(volatile int*)(uintptr_t)0 = 1;
  return NULL;
}

void* probe_exits(void* p) {
  (void)p;
  _exit(3);
}

void* probe_hangs(void* p) {
  (void)p;
  for (;;) pause();
}

void* probe_returns_null(void* p) { return p ? NULL : p; }
