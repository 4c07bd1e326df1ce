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
export function isFfi(code: ErrorCode, message?: string | RegExp): (e: unknown) => true {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, `expected FfiError, got ${e}`);
    assert.equal(ErrorCode[e.code], ErrorCode[code], e.message);
    if (typeof message === "string") assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    return true;
  };
}

/** True for an FfiError with code INVALID_ARGUMENT (any message). */
export function isInvalidArgument(e: unknown): boolean {
  return e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT;
}
