/**
 * Turning a native `XLA_FFI_Error*` owned by the caller into an
 * {@link FfiError} (and freeing it). Private to the runtime.
 *
 * @module
 */
import { _nativeError, type FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";

/**
 * Reads code and message of a native error, destroys it, returns an
 * FfiError (`_nativeError`: a code outside XLA's 1..16 reads as UNKNOWN). The value a TS
 * handler threw becomes its cause where a call closes its window with it
 * (`_closeCall` in errors.ts), never here: this error may be no call's.
 */
export function _takeError(err: Deno.PointerObject): FfiError {
  const sym = native();
  const code = sym.xla_ffi_deno_runtime_error_code(err);
  const msgPtr = sym.xla_ffi_deno_runtime_error_message(err);
  const message = msgPtr === null ? "" : Deno.UnsafePointerView.getCString(msgPtr);
  sym.xla_ffi_deno_runtime_error_destroy(err);
  return _nativeError(code, message, { failed: true });
}

/** Throws the native error if there is one. */
export function _check(err: Deno.PointerObject | null): void {
  if (err !== null) throw _takeError(err);
}

const encoder = new TextEncoder();

/** A NUL-terminated UTF-8 copy of a string. */
export function _cString(s: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** The UTF-8 bytes of a string. */
export function _utf8(s: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(s) as Uint8Array<ArrayBuffer>;
}
