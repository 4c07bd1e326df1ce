/**
 * `FfiError.hint`: this module's suggestion apart from XLA's text. The
 * message stays XLA's byte for byte; `toString()` prints the hint on a line
 * of its own.
 */
import assert from "node:assert/strict";
import { ErrorCode, Ffi, FfiError, Runtime } from "../mod.ts";
import { isFfi } from "./_assert.ts";

Deno.test("hint: a separate field, on its own line in toString(), none when not given", () => {
  const e = new FfiError("NOT_FOUND", "No FFI handler registered for a.b", {
    hint: "did you mean 'a.c'?",
  });
  assert.equal(e.message, "No FFI handler registered for a.b");
  assert.equal(e.hint, "did you mean 'a.c'?");
  assert.equal(
    String(e),
    "FfiError [NOT_FOUND]: No FFI handler registered for a.b\nHint: did you mean 'a.c'?",
  );
  const plain = new FfiError(ErrorCode.INTERNAL, "Test error");
  assert.equal(plain.hint, undefined);
  assert.ok(!Object.hasOwn(plain, "hint"));
  assert.equal(String(plain), "FfiError [INTERNAL]: Test error");
  assert.equal(new FfiError(ErrorCode.INTERNAL, "x", { hint: "" }).hint, undefined);
});

Deno.test("hint: NOT_FOUND keeps XLA's message; the closest name is the hint", () => {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().to(() => {});
  rt.register("hint_test.scale", h);
  assert.throws(
    () => rt.lookup("hint_test.sclae"),
    isFfi(
      ErrorCode.NOT_FOUND,
      "No FFI handler registered for hint_test.sclae on a platform Host (canonical host)",
      "did you mean 'hint_test.scale'?",
    ),
  );
  assert.throws(
    () => rt.lookup("nothing.like.it.at.all"),
    isFfi(ErrorCode.NOT_FOUND, /\(canonical host\)$/, null),
  );
});
