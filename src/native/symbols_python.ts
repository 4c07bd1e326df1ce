/** Native symbols of the Python host (`native/python_host.c`) behind `@deno-xla/ffi/xla`. */
export const PYTHON_SYMBOLS = {
  /** (path, home, reply, cap) → int32_t */
  xla_ffi_deno_py_init: {
    parameters: ["buffer", "buffer", "buffer", "i64"],
    result: "i32",
    nonblocking: true,
  },
  /** (mode, req, len, reply, cap) → int32_t */
  xla_ffi_deno_py_run: {
    parameters: ["i32", "buffer", "i64", "buffer", "i64"],
    result: "i32",
    nonblocking: true,
  },
  /** (mode, req, len, reply, cap) → int32_t */
  xla_ffi_deno_py_run_sync: {
    parameters: ["i32", "buffer", "i64", "buffer", "i64"],
    result: "i32",
  },
  /** (req, len, reply, cap) → int32_t: a prepared call dispatched on the JS thread */
  xla_ffi_deno_py_dispatch_sync: {
    parameters: ["buffer", "i64", "buffer", "i64"],
    result: "i32",
  },
  /** (buf, cap) → int32_t */
  xla_ffi_deno_py_hosted: { parameters: ["buffer", "i64"], result: "i32" },
} as const;
