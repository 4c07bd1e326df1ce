/**
 * The one error class of the module, and the mapping of JavaScript errors to
 * XLA FFI error codes.
 *
 * @module
 */
import { ErrorCode } from "./abi/enums.ts";

/**
 * An error carrying an XLA FFI {@link ErrorCode} and a message in the shape
 * XLA's `ffi.h` and runtime use.
 *
 * @example
 * ```ts
 * import { ErrorCode, FfiError } from "@deno-xla/ffi";
 * const err = new FfiError(ErrorCode.NOT_FOUND, "State is not set");
 * console.log(err.code === ErrorCode.NOT_FOUND, err.message);
 * ```
 */
export class FfiError extends Error {
  /** The XLA FFI error code. */
  readonly code: ErrorCode;

  /**
   * Makes an error with a code and a message.
   *
   * @param code the XLA FFI error code (never {@link ErrorCode.OK})
   * @param message the message, as XLA would word it
   * @param options standard error options (`cause`)
   */
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FfiError";
    this.code = code;
  }

  /** The code's name, e.g. `"INVALID_ARGUMENT"`. */
  get codeName(): string {
    return ErrorCode[this.code] ?? `CODE_${this.code}`;
  }

  /** `FfiError [INVALID_ARGUMENT]: message`. */
  override toString(): string {
    return `${this.name} [${this.codeName}]: ${this.message}`;
  }
}

/**
 * Maps any thrown value to an {@link FfiError}: an `FfiError` keeps its code,
 * `TypeError` and `RangeError` become INVALID_ARGUMENT, anything else UNKNOWN
 * with its message.
 *
 * @example
 * ```ts
 * import { ErrorCode, toFfiError } from "@deno-xla/ffi";
 * const e = toFfiError(new RangeError("bad size"));
 * console.log(e.code === ErrorCode.INVALID_ARGUMENT); // true
 * ```
 */
export function toFfiError(error: unknown): FfiError {
  if (error instanceof FfiError) return error;
  if (error instanceof TypeError || error instanceof RangeError) {
    return new FfiError(ErrorCode.INVALID_ARGUMENT, error.message, { cause: error });
  }
  if (error instanceof Error) {
    return new FfiError(ErrorCode.UNKNOWN, error.message, { cause: error });
  }
  return new FfiError(ErrorCode.UNKNOWN, String(error), { cause: error });
}

/**
 * @internal Deno's message for a library that did not load, with its
 * repeated "Could not open library: " prefix said once.
 */
export function _loaderMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/(Could not open library: )+/g, "Could not open library: ");
}
