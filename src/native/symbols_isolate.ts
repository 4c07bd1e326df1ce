/** Native symbols of isolated handler libraries' parent side (`native/isolate.c`). */
export const ISOLATE_SYMBOLS = {
  /** (argv_block, env_block, size, msg, cap) → xiso* */
  xla_ffi_deno_isolate_start: {
    parameters: ["buffer", "buffer", "i64", "buffer", "i32"],
    result: "pointer",
  },
  /** (x) → void* */
  xla_ffi_deno_isolate_base: { parameters: ["pointer"], result: "pointer" },
  /** (x, size) → void* */
  xla_ffi_deno_isolate_reserve: { parameters: ["pointer", "i64"], result: "pointer" },
  /** (x, timeout_ms) → int32_t */
  xla_ffi_deno_isolate_ready_sync: {
    name: "xla_ffi_deno_isolate_ready",
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  /** (x, timeout_ms) → int32_t */
  xla_ffi_deno_isolate_ready: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  /** (x, timeout_ms) → int32_t */
  xla_ffi_deno_isolate_call_sync: {
    name: "xla_ffi_deno_isolate_call",
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  /** (x, timeout_ms) → int32_t */
  xla_ffi_deno_isolate_call: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  /** (x, out) → void */
  xla_ffi_deno_isolate_exit: { parameters: ["pointer", "buffer"], result: "void" },
  /** (x, buf, cap) → int32_t */
  xla_ffi_deno_isolate_stderr: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  /** (x, keep) → void */
  xla_ffi_deno_isolate_keep_output: { parameters: ["pointer", "i32"], result: "void" },
  /** (x, counts, buf, cap) → int32_t */
  xla_ffi_deno_isolate_output: {
    parameters: ["pointer", "buffer", "buffer", "i32"],
    result: "i32",
  },
  /** (x) → int32_t */
  xla_ffi_deno_isolate_pid: { parameters: ["pointer"], result: "i32" },
  /** (x) → void */
  xla_ffi_deno_isolate_close: { parameters: ["pointer"], result: "void" },
  /** () → void* */
  xla_ffi_deno_isolate_stub: { parameters: [], result: "pointer" },
  /** () → int32_t */
  xla_ffi_deno_isolate_page_size: { parameters: [], result: "i32" },
} as const;
