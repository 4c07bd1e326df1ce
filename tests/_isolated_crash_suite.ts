/**
 * A small test file run by tests/isolate_test.ts under its own `deno test`:
 * the first test's handler crashes in its isolated process, the second runs
 * after it. Not a test file of the suite itself (no `_test` suffix).
 *
 * @module
 */
import { CallFrameBuilder, HandlerLibrary, Runtime } from "../mod.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

const lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
const rt = new Runtime({ threads: 0 });
const y = new Float32Array(2);
const frame = new CallFrameBuilder().arg(new Float32Array([1, 2])).ret(y).build();

Deno.test("a handler that segfaults", () => {
  rt.callSync(lib.handler("fault_segv"), frame);
});

Deno.test("the next test", () => {
  rt.callSync(lib.handler("fault_ok"), frame);
  if (y[1] !== 4) throw new Error(`y = ${y}`);
});

Deno.test("close", () => {
  frame.close();
  rt.close();
  lib.close();
});
