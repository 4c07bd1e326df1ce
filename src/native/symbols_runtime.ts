/**
 * Eight arrays (or null) a nonblocking call takes only so that Deno keeps
 * their memory alive until it returns (a call in flight's arrays, see
 * CallFrame._retainHost).
 */
const HELD = [
  "buffer",
  "buffer",
  "buffer",
  "buffer",
  "buffer",
  "buffer",
  "buffer",
  "buffer",
] as const;

/**
 * The modes of `xla_ffi_deno_runtime_call` (native/runtime_internal.h, XRT_CALL_*): synchronous
 * on a frame (a pending future fails), synchronous on a raw call frame checked first, begun on a
 * snapshot, begun on a frame nothing changes while the call is in flight.
 */
export const CALL_MODE = { sync: 0, checked: 1, begin: 2, beginFrame: 3 } as const;

/** Native symbols of the embedded runtime (`native/runtime*.c`). */
export const RUNTIME_SYMBOLS = {
  /** () → const XLA_FFI_Api* */
  xla_ffi_deno_runtime_newest_api: { parameters: [], result: "pointer" },
  /** (minor) → const XLA_FFI_Api* */
  xla_ffi_deno_runtime_api_version: { parameters: ["i32"], result: "pointer" },
  /** (platform, threads, minor) → xrt_runtime* */
  xla_ffi_deno_runtime_new: { parameters: ["i32", "i32", "i32"], result: "pointer" },
  /** (rt) → int32_t */
  xla_ffi_deno_runtime_api_minor: { parameters: ["pointer"], result: "i32" },
  /** (rt) → const XLA_FFI_Api* */
  xla_ffi_deno_runtime_api: { parameters: ["pointer"], result: "pointer" },
  /** (rt) → int32_t */
  xla_ffi_deno_runtime_free: { parameters: ["pointer"], result: "i32" },
  /** (rt) → void */
  xla_ffi_deno_runtime_free_async: {
    name: "xla_ffi_deno_runtime_free_join",
    parameters: ["pointer"],
    result: "void",
    nonblocking: true,
  },
  /** (rt, stream) → void */
  xla_ffi_deno_runtime_set_stream: { parameters: ["pointer", "pointer"], result: "void" },
  /** (rt) → int32_t */
  xla_ffi_deno_runtime_num_threads: { parameters: ["pointer"], result: "i32" },
  /** () → xrt_instance* */
  xla_ffi_deno_runtime_instance_new: { parameters: [], result: "pointer" },
  /** (in) → void */
  xla_ffi_deno_runtime_instance_free: { parameters: ["pointer"], result: "void" },
  /** (in, stage, type_id) → int32_t */
  xla_ffi_deno_runtime_instance_state: { parameters: ["pointer", "i32", "buffer"], result: "i32" },
  // A call on this thread in a CALL_MODE (target: a frame, a raw call frame, a snapshot): 0 over,
  // 1 failed (its error in out[0]), 2 begun (out[0]: the call to await, then finish).
  /** (mode, rt, h, target, out) → int32_t */
  xla_ffi_deno_runtime_call: {
    parameters: ["i32", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  },
  /** (rt, fr) → xrt_call* (a snapshot; NULL: out of memory) */
  xla_ffi_deno_runtime_call_new: { parameters: ["pointer", "pointer"], result: "pointer" },
  // A snapshot's call off this thread, waited for: threads 0 once (its error), else `iterations`
  // on each of `threads` runtime threads (counts in out, the first failure's message in msg, an
  // error only when a thread could not start); b: arrays kept alive, or null.
  /** (c, h, threads, iterations, out, msg, msg_cap, b0, b1, b2, b3, b4, b5, b6, b7) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_call_wait: {
    parameters: ["pointer", "pointer", "i32", "i64", "buffer", "buffer", "i32", ...HELD],
    result: "pointer",
    nonblocking: true,
  },
  /** (c) → XLA_FFI_Error* (a begun call's, or a snapshot no call took) */
  xla_ffi_deno_runtime_call_finish: { parameters: ["pointer"], result: "pointer" },
  /** () → xrt_gate* (NULL: out of memory) */
  xla_ffi_deno_gate_new: { parameters: [], result: "pointer" },
  /** (g) → void */
  xla_ffi_deno_gate_enter: { parameters: ["pointer"], result: "void" },
  /** (g) → void */
  xla_ffi_deno_gate_leave: { parameters: ["pointer"], result: "void" },
  /** (g, b0, b1, b2, b3, b4, b5, b6, b7) → void once the gate is closed (b: arrays kept alive) */
  xla_ffi_deno_gate_hold: {
    parameters: ["pointer", ...HELD],
    result: "void",
    nonblocking: true,
  },
  /** (g) → void */
  xla_ffi_deno_gate_close: { parameters: ["pointer"], result: "void" },
  /** (fn) → void */
  xla_ffi_deno_runtime_set_notify: { parameters: ["pointer"], result: "void" },
  /** (e) → int32_t */
  xla_ffi_deno_runtime_error_code: { parameters: ["pointer"], result: "i32" },
  /** (e) → const char* */
  xla_ffi_deno_runtime_error_message: { parameters: ["pointer"], result: "pointer" },
  /** (e) → void */
  xla_ffi_deno_runtime_error_destroy: { parameters: ["pointer"], result: "void" },
  /** (rt, name, name_len, platform, platform_len, bundle, traits) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_register: {
    parameters: ["pointer", "buffer", "i64", "buffer", "i64", "buffer", "u32"],
    result: "pointer",
  },
  /** (rt, name, name_len, platform, platform_len, out) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_lookup: {
    parameters: ["pointer", "buffer", "i64", "buffer", "i64", "buffer"],
    result: "pointer",
  },
  /** (rt, platform, platform_len, buf, cap) → int32_t */
  xla_ffi_deno_runtime_registered_names: {
    parameters: ["pointer", "buffer", "i64", "buffer", "i32"],
    result: "i32",
  },
  /** (rt, name, len, type_id, deleter) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_register_type: {
    parameters: ["pointer", "buffer", "i64", "pointer", "pointer"],
    result: "pointer",
  },
  /** (rt, h, out) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_metadata: {
    parameters: ["pointer", "pointer", "buffer"],
    result: "pointer",
  },
  /** (fn) → void */
  xla_ffi_deno_runtime_set_invoke_guard: { parameters: ["pointer"], result: "void" },
  /** () → int32_t */
  xla_ffi_deno_runtime_invoke_guarded: { parameters: [], result: "i32" },
  /** (out, n) → int32_t */
  xla_ffi_deno_runtime_debug_stats: { parameters: ["buffer", "i32"], result: "i32" },
  /** (desc, len) → xrt_frame* */
  xla_ffi_deno_runtime_frame_build: { parameters: ["buffer", "i32"], result: "pointer" },
  /** (fr) → XLA_FFI_CallFrame* */
  xla_ffi_deno_runtime_frame_call_frame: { parameters: ["pointer"], result: "pointer" },
  /** (fr, i, addr) → void */
  xla_ffi_deno_runtime_frame_set_arg: { parameters: ["pointer", "i32", "f64"], result: "void" },
  /** (fr, i, addr) → void */
  xla_ffi_deno_runtime_frame_set_ret: { parameters: ["pointer", "i32", "f64"], result: "void" },
  /** (size) → void* */
  xla_ffi_deno_runtime_guard_map: { parameters: ["f64"], result: "pointer" },
  /** (p, size) → int32_t */
  xla_ffi_deno_runtime_guard_unmap: { parameters: ["pointer", "f64"], result: "i32" },
  /** (base, zones, n, out) → int32_t */
  xla_ffi_deno_runtime_guard_check: {
    parameters: ["pointer", "buffer", "i32", "buffer"],
    result: "i32",
  },
  /** (a, b, n) → double */
  xla_ffi_deno_runtime_guard_difference: {
    parameters: ["pointer", "buffer", "f64"],
    result: "f64",
  },
  /** (fr, stage, run_id, device_ordinal, instance, user, n_user) → void */
  xla_ffi_deno_runtime_frame_configure: {
    parameters: ["pointer", "i32", "i64", "i32", "pointer", "buffer", "i32"],
    result: "void",
  },
  /** (fr) → void */
  xla_ffi_deno_runtime_frame_free: { parameters: ["pointer"], result: "void" },
  /** (cf) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_check_call_frame: { parameters: ["pointer"], result: "pointer" },
  /** (path) → void* */
  xla_ffi_deno_runtime_dlopen: { parameters: ["buffer"], result: "pointer" },
  /** (handle, name) → void* */
  xla_ffi_deno_runtime_dlsym: { parameters: ["pointer", "buffer"], result: "pointer" },
  /** (handle) → int32_t */
  xla_ffi_deno_runtime_dlclose: { parameters: ["pointer"], result: "i32" },
  /** () → const char* */
  xla_ffi_deno_runtime_dlerror: { parameters: [], result: "pointer" },
  /** (addr, buf, cap) → int32_t */
  xla_ffi_deno_runtime_dladdr: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  /** (addr, buf, cap) → int32_t */
  xla_ffi_deno_runtime_code_identity: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
} as const;
