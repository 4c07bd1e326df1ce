/**
 * C handlers from a shared library in the embedded runtime: load the
 * library, check a handler's metadata, register it under a name as XLA
 * would, and call it with real data (typed arrays as buffers, a typed
 * attribute). Errors come back as FfiError with XLA's code and message.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/c_handlers.ts
 *
 * @module
 */
import { CallFrameBuilder, DataType, HandlerLibrary, Runtime, scalar } from "../mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

using lib = HandlerLibrary.open(buildDemoLibrary());
using rt = new Runtime({ platform: "Host" });

const saxpy = lib.handler("demo_saxpy");
const md = rt.metadata(saxpy);
console.log(`demo_saxpy: API ${md.apiVersion.major}.${md.apiVersion.minor}, traits ${md.traits}`);
rt.register("demo.saxpy", saxpy);

const x = new Float32Array([1, 2, 3, 4, 5, 6]);
const y = new Float32Array([10, 20, 30, 40, 50, 60]);
const out = new Float32Array(6);
using frame = new CallFrameBuilder()
  .arg(x, [2, 3])
  .arg(y, [2, 3])
  .ret(out, [2, 3])
  .attr("alpha", scalar(DataType.F32, 2))
  .build();
rt.callSync("demo.saxpy", frame);
console.log("2 * x + y =", [...out]);

// New data, same frame: swap the buffer pointers (XLA's UpdateWithBuffers).
frame.setArg(0, new Float32Array([0, 0, 0, 0, 0, 1]));
rt.callSync("demo.saxpy", frame);
console.log("2 * x' + y =", [...out]);

try {
  using bad = new CallFrameBuilder().arg(x).ret(out).build();
  rt.callSync("demo.saxpy", bad);
} catch (e) {
  console.log("expected error (a frame without the second argument):", String(e));
}
