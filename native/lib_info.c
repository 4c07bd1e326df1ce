/* lib_info.c: identity of the native library. */
#include "xla_ffi.h"

/* ABI version this library's declarations follow (major * 1000 + minor). */
int32_t xla_ffi_deno_abi_version(void) {
  return XLA_FFI_API_MAJOR * 1000 + XLA_FFI_API_MINOR;
}
