/**
 * Structural check of an `XLA_FFI_CallFrame` laid out by anyone (XLA, a
 * test, a reader of raw memory), with the runtime's documented limits.
 *
 * @module
 */
import { native } from "../native/lib.ts";
import { _check } from "./_native_error.ts";

/**
 * Checks a call frame's structure: struct sizes, null pointers, argument,
 * result and attribute counts, ranks and dims, data type and argument,
 * result and attribute type values, attribute names (sorted, unique, UTF-8)
 * and payloads. Throws FfiError INVALID_ARGUMENT naming the first problem.
 * Its execution context must be one of this runtime's (a frame built by
 * {@link CallFrameBuilder}). Wild (non-null, unmapped) pointers cannot be
 * detected. Limits: docs/reliability.md.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder, checkCallFrame } from "@deno-xla/ffi";
 * using frame = new CallFrameBuilder().arg(new Float32Array(4)).attr("n", 3).build();
 * checkCallFrame(frame.pointer); // well formed: no error
 * ```
 */
export function checkCallFrame(frame: Deno.PointerValue): void {
  _check(native().xla_ffi_deno_runtime_check_call_frame(frame));
}
