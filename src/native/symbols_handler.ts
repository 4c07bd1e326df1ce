/** Native symbols of the TS handler entry points (`native/handler*.c`). */
export const HANDLER_SYMBOLS = {
  /** (dtype) → int32_t */
  xla_ffi_deno_dtype_width: { parameters: ["i32"], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_handler_slot_count: { parameters: [], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_handler_msg_cap: { parameters: [], result: "i32" },
  /** (flat, cap_slots, msg, aux, inline_cb, thread_cb) → int32_t */
  xla_ffi_deno_handler_init: {
    parameters: ["buffer", "i64", "buffer", "buffer", "function", "function"],
    result: "i32",
  },
  /** (stage, major, minor, traits, async) → int32_t */
  xla_ffi_deno_handler_slot_acquire: {
    parameters: ["i32", "i32", "i32", "u32", "i32"],
    result: "i32",
  },
  /** (i) → void */
  xla_ffi_deno_handler_slot_release: { parameters: ["i32"], result: "void" },
  /** (i) → void* */
  xla_ffi_deno_handler_slot_pointer: { parameters: ["i32"], result: "pointer" },
  /** (ptr) → int32_t */
  xla_ffi_deno_handler_pin: { parameters: ["pointer"], result: "i32" },
  /** (ptr) → int32_t */
  xla_ffi_deno_handler_slot_of: { parameters: ["pointer"], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_handler_is_host: { parameters: [], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_handler_pinned_count: { parameters: [], result: "i32" },
  /** (frame) → int32_t */
  xla_ffi_deno_handler_flatten: { parameters: ["pointer"], result: "i32" },
  /** (inner, name) → void* */
  xla_ffi_deno_guard_wrap: { parameters: ["pointer", "buffer"], result: "pointer" },
  /** (ptr) → void* */
  xla_ffi_deno_guard_inner: { parameters: ["pointer"], result: "pointer" },
  /** (done_status, linger_ns) → int32_t */
  xla_ffi_deno_handler_next_job: { parameters: ["i32", "i32"], result: "i32" },
  /** (status) → void */
  xla_ffi_deno_handler_job_done: { parameters: ["i32"], result: "void" },
  /** (claim) → int32_t */
  xla_ffi_deno_handler_drain_claim: { parameters: ["i32"], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_handler_token_alloc: { parameters: [], result: "i32" },
  /** (token, code, msg, len) → int32_t */
  xla_ffi_deno_handler_complete: {
    parameters: ["i32", "i32", "buffer", "i32"],
    result: "i32",
  },
  /** (out) → void */
  xla_ffi_deno_handler_foreign_stats: { parameters: ["buffer"], result: "void" },
  /** () → int64_t */
  xla_ffi_deno_handler_failed_completions: { parameters: [], result: "i64" },
  /** () → double */
  xla_ffi_deno_handler_dead_state: { parameters: [], result: "f64" },
  /** (phase) → int32_t */
  xla_ffi_deno_handler_phase_stop: { parameters: ["i32"], result: "i32" },
  /** () → int32_t */
  xla_ffi_deno_crash_install: { parameters: [], result: "i32" },
  /** (fn, name, where) → int32_t */
  xla_ffi_deno_crash_describe: { parameters: ["pointer", "buffer", "buffer"], result: "i32" },
  /** (fn) → void* */
  xla_ffi_deno_crash_wrap: { parameters: ["pointer"], result: "pointer" },
  /** (p) → int32_t */
  xla_ffi_deno_crash_is_wrapper: { parameters: ["pointer"], result: "i32" },
  /** () → void* */
  xla_ffi_deno_crash_running: { parameters: [], result: "pointer" },
  /** (api_d, ctx) → int32_t */
  xla_ffi_deno_ctx_run_id: { parameters: ["f64", "f64"], result: "i32" },
  /** (api_d, ctx) → int32_t */
  xla_ffi_deno_ctx_device_ordinal: { parameters: ["f64", "f64"], result: "i32" },
  /** (api_d, ctx) → int32_t */
  xla_ffi_deno_ctx_stream: { parameters: ["f64", "f64"], result: "i32" },
  /** (api_d, ctx, type_id) → int32_t */
  xla_ffi_deno_ctx_user_data: { parameters: ["f64", "f64", "f64"], result: "i32" },
  /** (api_d, ctx, size, align) → int32_t */
  xla_ffi_deno_ctx_scratch_alloc: { parameters: ["f64", "f64", "f64", "f64"], result: "i32" },
  /** (api_d, ctx, size, data) → int32_t */
  xla_ffi_deno_ctx_scratch_free: { parameters: ["f64", "f64", "f64", "f64"], result: "i32" },
  /** (api_d, ctx) → int32_t */
  xla_ffi_deno_ctx_num_threads: { parameters: ["f64", "f64"], result: "i32" },
  /** (api_d, ctx, task, data) → int32_t */
  xla_ffi_deno_ctx_schedule: { parameters: ["f64", "f64", "f64", "f64"], result: "i32" },
  /** (api_d, ctx, key, stage) → int32_t */
  xla_ffi_deno_ctx_state_set: { parameters: ["f64", "f64", "f64", "i32"], result: "i32" },
  /** (api_d, ctx, stage) → int32_t */
  xla_ffi_deno_ctx_state_get: { parameters: ["f64", "f64", "i32"], result: "i32" },
} as const;
