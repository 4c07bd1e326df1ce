/** Native symbols of isolated handler libraries' parent side (`native/isolate.c`). */
export const ISOLATE_SYMBOLS = {
  xiso_start: { parameters: ["buffer", "buffer", "i64", "buffer", "i32"], result: "pointer" },
  xiso_base: { parameters: ["pointer"], result: "pointer" },
  xiso_reserve: { parameters: ["pointer", "i64"], result: "pointer" },
  xiso_ready_sync: { name: "xiso_ready", parameters: ["pointer", "i32"], result: "i32" },
  xiso_ready: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  xiso_call_sync: { name: "xiso_call", parameters: ["pointer", "i32"], result: "i32" },
  xiso_call: { parameters: ["pointer", "i32"], result: "i32", nonblocking: true },
  xiso_exit: { parameters: ["pointer", "buffer"], result: "void" },
  xiso_stderr: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  xiso_pid: { parameters: ["pointer"], result: "i32" },
  xiso_close: { parameters: ["pointer"], result: "void" },
  xiso_stub: { parameters: [], result: "pointer" },
  xiso_page_size: { parameters: [], result: "i32" },
} as const;
