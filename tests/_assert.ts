/**
 * Error matchers shared by the tests, for `assert.throws` / `assert.rejects`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";

/**
 * A validator that asserts an FfiError with `code` and, when given, a
 * message equal to `message` (a string) or matching it (a RegExp).
 *
 * @example
 * ```ts ignore
 * assert.throws(() => rt.callSync(h, frame), isFfi(ErrorCode.INVALID_ARGUMENT, /Wrong/));
 * ```
 */
export function isFfi(
  code: ErrorCode,
  message?: string | RegExp,
  hint?: string | RegExp | null,
): (e: unknown) => true {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, `expected FfiError, got ${e}`);
    assert.equal(ErrorCode[e.code], ErrorCode[code], e.message);
    if (typeof message === "string") assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    if (hint === null) assert.equal(e.hint, undefined, e.hint);
    else if (typeof hint === "string") assert.equal(e.hint, hint);
    else if (hint) assert.match(e.hint ?? "", hint);
    return true;
  };
}

/**
 * Values a handler throws, with the code and message the caller gets: an
 * FfiError keeps its code, anything else is UNKNOWN "XLA FFI call failed: …"
 * (as XLA maps a C++ handler's exception).
 */
export const THROWN_CASES: readonly (readonly [unknown, ErrorCode, string])[] = [
  [new FfiError(ErrorCode.INTERNAL, "Test error"), ErrorCode.INTERNAL, "Test error"],
  [new TypeError("bad type"), ErrorCode.UNKNOWN, "XLA FFI call failed: bad type"],
  [new RangeError("bad range"), ErrorCode.UNKNOWN, "XLA FFI call failed: bad range"],
  [new Error("Ooops!"), ErrorCode.UNKNOWN, "XLA FFI call failed: Ooops!"],
  ["a string", ErrorCode.UNKNOWN, "XLA FFI call failed: a string"],
];

/** True for an FfiError with code INVALID_ARGUMENT (any message). */
export function isInvalidArgument(e: unknown): boolean {
  return e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT;
}

/** Rejects with an FfiError of `code` whose message matches `re`; returns it. */
export async function rejectsWith(
  p: Promise<unknown>,
  code: ErrorCode,
  re: RegExp,
): Promise<FfiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof FfiError, `expected an FfiError, got ${String(e)}`);
    assert.equal(e.codeName, ErrorCode[code], `code of: ${e.message}`);
    assert.match(e.message, re);
    return e;
  }
  assert.fail(`expected a rejection matching ${re}`);
}
