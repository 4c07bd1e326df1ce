/** Native symbols of isolated handler libraries' parent side (`native/isolate.c`). */
export const ISOLATE_SYMBOLS = {
  xla_ffi_deno_isolate_start: {
    parameters: ["buffer", "buffer", "i64", "buffer", "i32"],
    result: "pointer",
  },
  xla_ffi_deno_isolate_base: { parameters: ["pointer"], result: "pointer" },
  xla_ffi_deno_isolate_reserve: { parameters: ["pointer", "i64"], result: "pointer" },
  xla_ffi_deno_isolate_ready_sync: {
    name: "xla_ffi_deno_isolate_ready",
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  xla_ffi_deno_isolate_ready: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  xla_ffi_deno_isolate_call_sync: {
    name: "xla_ffi_deno_isolate_call",
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  xla_ffi_deno_isolate_call: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  xla_ffi_deno_isolate_exit: { parameters: ["pointer", "buffer"], result: "void" },
  xla_ffi_deno_isolate_stderr: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  xla_ffi_deno_isolate_pid: { parameters: ["pointer"], result: "i32" },
  xla_ffi_deno_isolate_close: { parameters: ["pointer"], result: "void" },
  xla_ffi_deno_isolate_stub: { parameters: [], result: "pointer" },
  xla_ffi_deno_isolate_page_size: { parameters: [], result: "i32" },
} as const;
