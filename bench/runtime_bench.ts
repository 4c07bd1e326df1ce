/**
 * Runtime benchmarks: (a) a no-op C handler through `Runtime.callSync` with a
 * reused frame vs a direct Deno FFI call of the same C function (baseline);
 * (b) building the standard call frame.
 */
import { HandlerLibrary, Runtime } from "../mod.ts";
import { handlersPath, standardBuilder } from "./_runtime_fixture.ts";

const lib = HandlerLibrary.open(handlersPath);
const direct = Deno.dlopen(handlersPath, {
  test_noop: { parameters: ["pointer"], result: "pointer" },
});
const rt = new Runtime({ threads: 1 });
const noop = lib.handler("test_noop");
const frame = standardBuilder().build();
const fp = frame.pointer;

Deno.bench("direct FFI call of the no-op handler", { group: "call", baseline: true }, () => {
  direct.symbols.test_noop(fp);
});

Deno.bench("Runtime.callSync(no-op handler, reused frame)", { group: "call" }, () => {
  rt.callSync(noop, frame);
});

Deno.bench("build the standard frame (and free it)", { group: "frame" }, () => {
  standardBuilder().build().close();
});

globalThis.addEventListener("unload", () => {
  frame.close();
  rt.close();
  lib.close();
  direct.close();
});
