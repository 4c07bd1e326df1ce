/**
 * The one error class of the module, the mapping of JavaScript errors to
 * XLA FFI error codes, and the origins of TS handler failures (the value a
 * handler threw, found again when the caller reads the error back).
 *
 * @module
 */
import { ErrorCode } from "./abi/enums.ts";

/** The name of each error code XLA defines (1..16; OK is not an error). */
const CODE_NAMES: Readonly<Record<string, ErrorCode>> = (() => {
  const out: Record<string, ErrorCode> = Object.create(null);
  for (let c = 1; c <= 16; c++) out[ErrorCode[c]!] = c;
  return out;
})();

/** True for an error code XLA defines other than OK (an integer in 1..16). */
function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "number" && Number.isInteger(code) && code >= 1 && code <= 16;
}

/**
 * @internal `code` when it is an error code XLA defines (1..16), else
 * UNKNOWN: what the completion paths write, whatever a value claims.
 */
export function _errorCode(code: unknown): ErrorCode {
  return isErrorCode(code) ? code : ErrorCode.UNKNOWN;
}

/**
 * An error carrying an XLA FFI {@link ErrorCode} and a message in the shape
 * XLA's `ffi.h` and runtime use.
 *
 * The code is one of XLA's error codes (1..16, not OK) or its name
 * (`"INTERNAL"`); anything else is a programming error and the constructor
 * throws a `TypeError` saying so.
 *
 * @example
 * ```ts
 * import { ErrorCode, FfiError } from "@deno-xla/ffi";
 * const err = new FfiError(ErrorCode.NOT_FOUND, "State is not set");
 * console.log(err.code === ErrorCode.NOT_FOUND, err.message);
 * const named = new FfiError("INTERNAL", "Test error");
 * console.log(named.code === ErrorCode.INTERNAL); // true
 * ```
 */
export class FfiError extends Error {
  /** The XLA FFI error code. */
  readonly code: ErrorCode;

  /**
   * Makes an error with a code and a message.
   *
   * @param code the XLA FFI error code (1..16, never {@link ErrorCode.OK}) or its name
   * @param message the message, as XLA would word it
   * @param options standard error options (`cause`)
   * @throws TypeError when `code` is not one of XLA's error codes or their names
   */
  constructor(code: ErrorCode | keyof typeof ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FfiError";
    if (isErrorCode(code)) {
      this.code = code;
    } else if (typeof code === "string" && CODE_NAMES[code] !== undefined) {
      this.code = CODE_NAMES[code];
    } else {
      throw new TypeError(
        `FfiError: invalid error code ${_describeValue(code)}: expected one of XLA's error ` +
          `codes 1..16 (ErrorCode.CANCELLED..ErrorCode.UNAUTHENTICATED) or its name`,
      );
    }
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
 * with its message. Never throws, whatever the value (a null-prototype
 * object, a proxy whose traps throw, a symbol).
 *
 * This is the module's rule for its own API errors. A value a TS handler
 * throws or rejects with is mapped as XLA maps a C++ handler's exception
 * instead (see `docs/errors.md`).
 *
 * @example
 * ```ts
 * import { ErrorCode, toFfiError } from "@deno-xla/ffi";
 * const e = toFfiError(new RangeError("bad size"));
 * console.log(e.code === ErrorCode.INVALID_ARGUMENT); // true
 * console.log(toFfiError(Object.create(null)).code === ErrorCode.UNKNOWN); // true
 * ```
 */
export function toFfiError(error: unknown): FfiError {
  const known = asFfiError(error);
  if (known !== undefined) return known;
  let code = ErrorCode.UNKNOWN;
  try {
    if (error instanceof TypeError || error instanceof RangeError) {
      code = ErrorCode.INVALID_ARGUMENT;
    }
  } catch { /* a proxy whose getPrototypeOf trap throws: UNKNOWN */ }
  return new FfiError(code, _describeValue(error), { cause: error });
}

/**
 * @internal What a TS handler's thrown or rejected value becomes, as XLA
 * maps a C++ handler's exception (xla/ffi/ffi_api.cc, `Call` and
 * `CallWithApi`: `catch (std::exception& e)` returns
 * `Unknown("XLA FFI call failed: %s", e.what())`): an `FfiError` keeps its
 * code and message, anything else is UNKNOWN "XLA FFI call failed: …". The
 * result's `cause` is the value. Never throws.
 */
export function _handlerFailure(value: unknown): FfiError {
  const known = asFfiError(value);
  if (known !== undefined) return known;
  return new FfiError(ErrorCode.UNKNOWN, `XLA FFI call failed: ${_describeValue(value)}`, {
    cause: value,
  });
}

/** `value` itself when it is an FfiError with a valid code and string message, else undefined. */
function asFfiError(value: unknown): FfiError | undefined {
  try {
    if (!(value instanceof FfiError)) return undefined;
    const code = value.code, message = value.message;
    if (isErrorCode(code) && typeof message === "string") return value;
    // A subclass or a mutated instance with a bad code: a fresh one with a valid code.
    return new FfiError(
      _errorCode(code),
      typeof message === "string" ? message : _describeValue(message),
      { cause: value },
    );
  } catch {
    return undefined;
  }
}

/** Longest message kept from a thrown value (the native message buffer holds 4095 bytes). */
const MAX_MESSAGE = 4096;

/**
 * @internal A message for any value: an Error's message, a string itself,
 * others as `String()` shows them; never throws, at most 4096 characters, NUL
 * characters written as `\0` (C strings end at a NUL).
 */
export function _describeValue(value: unknown): string {
  let text: string;
  try {
    text = describeUnsafe(value);
  } catch {
    text = "a thrown value that cannot be shown as text";
  }
  if (text.length > MAX_MESSAGE) text = text.slice(0, MAX_MESSAGE - 1) + "…";
  if (text.includes("\0")) text = text.replaceAll("\0", "\\0");
  return text;
}

function describeUnsafe(value: unknown): string {
  switch (typeof value) {
    case "string":
      return value;
    case "symbol":
      return value.toString();
    case "object":
    case "function": {
      if (value === null) return "null";
      let isError = false;
      try {
        isError = value instanceof Error;
      } catch { /* a proxy: below */ }
      if (isError) {
        const message = (value as Error).message;
        if (typeof message === "string") return message;
      }
      try {
        const text = String(value);
        if (typeof text === "string") return text;
      } catch { /* no usable toString: below */ }
      try {
        return Object.prototype.toString.call(value);
      } catch {
        return typeof value === "function" ? "a function" : "an object";
      }
    }
    default:
      return String(value);
  }
}

/** How many handler failures are remembered until their callers read them back. */
const ORIGINS = 64;
/** How long a failure whose error no caller read back is remembered. */
const ORIGIN_MS = 60_000;

interface Origin {
  message: string;
  value: unknown;
  at: number;
}

const origins: Origin[] = [];

/**
 * @internal Remembers that a TS handler failed with `value` and reported
 * `message` (exactly as the native side got it), so that the caller's
 * FfiError can carry `value` as its cause ({@link _withOrigin}).
 */
export function _recordOrigin(message: string, value: unknown): void {
  const now = performance.now();
  while (
    origins.length > 0 && (origins.length >= ORIGINS || now - origins[0]!.at > ORIGIN_MS)
  ) {
    origins.shift();
  }
  origins.push({ message, value, at: now });
}

/**
 * @internal `error` with the value a TS handler threw as its cause, when a
 * recorded failure's message is the error's (the embedded runtime), part of
 * it (real XLA adds words around it) or starts with it (a caller's buffer cut
 * it short). The oldest match is used, once. Identical messages of calls in
 * flight at the same time may trade causes; the causes are then equal in text.
 */
export function _withOrigin<E extends FfiError>(error: E): E {
  if (origins.length === 0 || error.cause !== undefined) return error;
  const message = error.message;
  let at = -1;
  for (let i = 0; i < origins.length; i++) {
    if (origins[i]!.message === message) {
      at = i;
      break;
    }
  }
  if (at < 0) {
    for (let i = 0; i < origins.length; i++) {
      const m = origins[i]!.message;
      if (m.length > 0 && message.includes(m)) {
        at = i;
        break;
      }
    }
  }
  if (at < 0 && message.length >= 64) {
    // A caller's buffer cut the message short (Runtime.callOnThreads keeps 1023 bytes).
    for (let i = 0; i < origins.length; i++) {
      if (origins[i]!.message.startsWith(message)) {
        at = i;
        break;
      }
    }
  }
  if (at < 0) return error;
  const [origin] = origins.splice(at, 1);
  Object.defineProperty(error, "cause", {
    value: origin!.value,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  return error;
}

/**
 * @internal Deno's message for a library that did not load, with its
 * repeated "Could not open library: " prefix said once.
 */
export function _loaderMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/(Could not open library: )+/g, "Could not open library: ");
}
