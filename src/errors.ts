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

/** Options of an {@link FfiError}: the standard `cause`, and a hint of this module's. */
export interface FfiErrorOptions extends ErrorOptions {
  /**
   * A suggestion of this module's, kept apart from XLA's text: the closest
   * registered name, the call that fixes an attribute's type, the step
   * missing before a registration. Shown on its own line after the message.
   */
  hint?: string;
}

/**
 * @internal The one way a code read from native code (our C library, an
 * isolated library's process, the Python bridge) becomes an FfiError: 0
 * (OK) is no error and gives `undefined`; 1..16 keeps its code and the
 * message; anything else is UNKNOWN with the number said in the message.
 * Where the native side reported a failure (`failed`), a 0 is no excuse:
 * it too is UNKNOWN with the number in the message.
 *
 * @param code the native error code
 * @param message the native message
 * @param options `failed`: the native side says the call failed, whatever the code
 */
export function _nativeError(
  code: number,
  message: string,
  options: ErrorOptions & { failed: true },
): FfiError;
export function _nativeError(
  code: number,
  message: string,
  options?: ErrorOptions & { failed?: boolean },
): FfiError | undefined;
export function _nativeError(
  code: number,
  message: string,
  options?: ErrorOptions & { failed?: boolean },
): FfiError | undefined {
  const { failed = false, ...errorOptions } = options ?? {};
  if (code === ErrorCode.OK && !failed) return undefined;
  if (isErrorCode(code)) return new FfiError(code, message, errorOptions);
  const said = code === ErrorCode.OK
    ? "native error code 0 (OK) for a call that failed"
    : `native error code ${_describeValue(code)}, not one of XLA's codes 1..16`;
  return new FfiError(
    ErrorCode.UNKNOWN,
    message === "" ? said : `${message} (${said})`,
    errorOptions,
  );
}

/**
 * An error carrying an XLA FFI {@link ErrorCode} and a message in the shape
 * XLA's `ffi.h` and runtime use.
 *
 * The code is one of XLA's error codes (1..16, not OK) or its name
 * (`"INTERNAL"`); anything else is a programming error and the constructor
 * throws a `TypeError` saying so.
 *
 * Where XLA has words for an error, `message` is XLA's text, byte for byte,
 * on either host; what this module suggests besides (a registered name close
 * to a missing one, the fix of an attribute's type) is the separate
 * {@link FfiError.hint}, printed on its own line by `toString()` and the
 * command line.
 *
 * @example
 * ```ts
 * import { ErrorCode, FfiError } from "@deno-xla/ffi";
 * const err = new FfiError(ErrorCode.NOT_FOUND, "State is not set");
 * console.log(err.code === ErrorCode.NOT_FOUND, err.message);
 * const named = new FfiError("INTERNAL", "Test error");
 * console.log(named.code === ErrorCode.INTERNAL); // true
 * const hinted = new FfiError("NOT_FOUND", "No FFI handler registered for my.sclae", {
 *   hint: "did you mean 'my.scale'?",
 * });
 * console.log(hinted.message); // "No FFI handler registered for my.sclae": XLA's words only
 * console.log(String(hinted));
 * // FfiError [NOT_FOUND]: No FFI handler registered for my.sclae
 * // Hint: did you mean 'my.scale'?
 * ```
 */
export class FfiError extends Error {
  /** The XLA FFI error code. */
  readonly code: ErrorCode;
  /**
   * This module's suggestion for the error, apart from XLA's text in
   * `message` (undefined when it has none).
   */
  declare hint?: string;

  /**
   * Makes an error with a code and a message.
   *
   * @param code the XLA FFI error code (1..16, never {@link ErrorCode.OK}) or its name
   * @param message the message, as XLA would word it
   * @param options standard error options (`cause`) and a `hint` of this module's
   * @throws TypeError when `code` is not one of XLA's error codes or their names
   */
  constructor(
    code: ErrorCode | keyof typeof ErrorCode,
    message: string,
    options?: FfiErrorOptions,
  ) {
    super(message, options);
    this.name = "FfiError";
    if (options?.hint !== undefined && options.hint !== "") this.hint = options.hint;
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

  /** `FfiError [INVALID_ARGUMENT]: message`, and `Hint: …` on a line of its own when there is one. */
  override toString(): string {
    const head = `${this.name} [${this.codeName}]: ${this.message}`;
    return this.hint === undefined ? head : `${head}\nHint: ${this.hint}`;
  }
}

/**
 * @internal `error` itself with `hint` added (after a hint it has already,
 * on a line of its own); its message, class and cause stay as they are.
 */
export function _withHint<E extends FfiError>(error: E, hint: string | undefined): E {
  if (hint === undefined || hint === "") return error;
  error.hint = error.hint === undefined ? hint : `${error.hint}\n${hint}`;
  return error;
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
  /** Its place in the order failures were recorded (1, 2, …). */
  seq: number;
}

const origins: Origin[] = [];
/** How many failures were recorded so far: the mark of a call opened now. */
let recorded = 0;
/** The marks of the calls open now ({@link _openCall}), in any order. */
const openCalls: number[] = [];

/**
 * @internal Remembers that a TS handler failed with `value` and reported
 * `message` (exactly as the native side got it), so that the caller's
 * FfiError can carry `value` as its cause ({@link _closeCall}).
 */
export function _recordOrigin(message: string, value: unknown): void {
  const now = performance.now();
  while (
    origins.length > 0 && (origins.length >= ORIGINS || now - origins[0]!.at > ORIGIN_MS)
  ) {
    origins.shift();
  }
  origins.push({ message, value, at: now, seq: ++recorded });
}

/**
 * @internal Opens a call's window: a handler failure recorded from now on,
 * until {@link _closeCall} with the returned mark, can be the cause of the
 * call's error; one recorded before cannot (it belongs to an earlier call).
 *
 * @example
 * ```ts ignore
 * import { _closeCall, _openCall } from "./errors.ts";
 * const mark = _openCall();
 * const err = callTheHandler(); // an FfiError, or undefined
 * throw _closeCall(mark, err); // with the thrown value as its cause, if a TS handler failed
 * ```
 */
export function _openCall(): number {
  openCalls.push(recorded);
  return recorded;
}

/**
 * @internal Closes the call opened at `mark` and returns `error` (when
 * given) with the value a TS handler threw as its cause: a failure recorded
 * while this call was open whose message is the error's (the embedded
 * runtime), part of it (real XLA adds words around it) or starts with it (a
 * caller's buffer cut it short); the earliest such, once. An error no
 * failure of this call explains (a C++ exception, a decode error) gets no
 * cause, whatever earlier calls left. Failures no open call can claim any
 * more (recorded before each open call began) are forgotten. Calls open at
 * the same time whose handlers fail with identical messages may trade
 * causes; the causes are then equal in text.
 *
 * @example
 * ```ts ignore
 * import { _closeCall, _openCall } from "./errors.ts";
 * const mark = _openCall();
 * try {
 *   runTheCall();
 * } finally {
 *   _closeCall(mark); // no error: forgets what no open call can claim
 * }
 * ```
 */
export function _closeCall<E extends FfiError>(mark: number, error?: E): E | undefined {
  // Calls close mostly in the order they opened in reverse (one at a time, or nested).
  if (openCalls[openCalls.length - 1] === mark) openCalls.pop();
  else {
    const at = openCalls.lastIndexOf(mark);
    if (at >= 0) openCalls.splice(at, 1);
  }
  if (origins.length === 0) return error;
  if (error !== undefined && error.cause === undefined) {
    const own = origins.filter((o) => o.seq > mark);
    const message = error.message;
    const origin = own.find((o) => o.message === message) ??
      own.find((o) => o.message.length > 0 && message.includes(o.message)) ??
      // A caller's buffer cut the message short (Runtime.callOnThreads keeps 1023 bytes).
      (message.length >= 64 ? own.find((o) => o.message.startsWith(message)) : undefined);
    if (origin !== undefined) {
      origins.splice(origins.indexOf(origin), 1);
      Object.defineProperty(error, "cause", {
        value: origin.value,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
  }
  const oldest = openCalls.length === 0 ? recorded : Math.min(...openCalls);
  while (origins.length > 0 && origins[0]!.seq <= oldest) origins.shift();
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
