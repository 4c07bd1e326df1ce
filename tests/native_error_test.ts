/**
 * The one mapping of a native error code to an FfiError (`_nativeError` in
 * src/errors.ts): 0 is no error, XLA's codes 1..16 keep code and message,
 * anything else is UNKNOWN and says the number; where the native side
 * reported a failure, a 0 is UNKNOWN too. The paths that read codes from
 * native code go through it.
 */
import assert from "node:assert/strict";
import { ErrorCode } from "../src/abi/enums.ts";
import { _nativeError, FfiError } from "../src/errors.ts";
import { _isolatedThreadResult } from "../src/runtime/_isolated_dispatch.ts";
import { _pythonError } from "../src/xla/_host.ts";

Deno.test("_nativeError: 0 is no error", () => {
  assert.equal(_nativeError(0, ""), undefined);
  assert.equal(_nativeError(0, "ignored"), undefined);
});

Deno.test("_nativeError: 1..16 keep their code and message", () => {
  for (let code = 1; code <= 16; code++) {
    const e = _nativeError(code, `message ${code}`);
    assert.ok(e instanceof FfiError);
    assert.equal(e.code, code);
    assert.equal(e.message, `message ${code}`);
    assert.equal(e.codeName, ErrorCode[code]);
  }
});

Deno.test("_nativeError: 17 and -1 are UNKNOWN and say the number", () => {
  for (const code of [17, -1]) {
    const e = _nativeError(code, "it broke");
    assert.ok(e instanceof FfiError);
    assert.equal(e.code, ErrorCode.UNKNOWN);
    assert.match(e.message, /^it broke \(/);
    assert.ok(e.message.includes(`native error code ${code},`), e.message);
    const bare = _nativeError(code, "")!;
    assert.equal(bare.code, ErrorCode.UNKNOWN);
    assert.ok(bare.message.includes(`native error code ${code}`), bare.message);
  }
  assert.equal(_nativeError(2.5, "x")!.code, ErrorCode.UNKNOWN);
  assert.equal(_nativeError(NaN, "x")!.code, ErrorCode.UNKNOWN);
});

Deno.test("_nativeError: a reported failure with code 0 is UNKNOWN, never OK", () => {
  const e = _nativeError(0, "lost", { failed: true });
  assert.equal(e.code, ErrorCode.UNKNOWN);
  assert.match(e.message, /^lost \(native error code 0/);
  assert.equal(_nativeError(3, "bad", { failed: true }).code, ErrorCode.INVALID_ARGUMENT);
  const cause = new Error("why");
  assert.equal(_nativeError(13, "m", { failed: true, cause }).cause, cause);
});

Deno.test("an isolated callOnThreads' first failure goes through the mapping", () => {
  assert.equal(
    _isolatedThreadResult({ ok: 2, failed: 0, code: 0, message: "" }).firstError,
    undefined,
  );
  const zero = _isolatedThreadResult({ ok: 1, failed: 1, code: 0, message: "m" }).firstError!;
  assert.equal(zero.code, ErrorCode.UNKNOWN);
  assert.ok(zero.message.includes("native error code 0"));
  const known = _isolatedThreadResult({ ok: 0, failed: 3, code: 13, message: "m" }).firstError!;
  assert.equal(known.code, ErrorCode.INTERNAL);
  assert.equal(known.message, "m");
  assert.equal(
    _isolatedThreadResult({ ok: 0, failed: 1, code: 99, message: "m" }).firstError!.code,
    ErrorCode.UNKNOWN,
  );
});

Deno.test("a Python error reply's code goes through the mapping", () => {
  const known = _pythonError({ type: "X", message: "m", code: ErrorCode.NOT_FOUND });
  assert.equal(known.code, ErrorCode.NOT_FOUND);
  assert.equal(known.message, "m");
  const odd = _pythonError({ type: "X", message: "m", code: 17 });
  assert.equal(odd.code, ErrorCode.UNKNOWN);
  assert.ok(odd.message.includes("native error code 17"));
  // No code (or 0): the message's "CODE: " prefix or the exception type decides.
  assert.equal(
    _pythonError({ type: "ValueError", message: "m", code: 0 }).code,
    ErrorCode.INVALID_ARGUMENT,
  );
  assert.equal(_pythonError({ type: "X", message: "ABORTED: m" }).code, ErrorCode.ABORTED);
});
