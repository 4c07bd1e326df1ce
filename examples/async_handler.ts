/**
 * An asynchronous C handler: `demo_sum_async` returns at once with an
 * XLA_FFI_Future and finishes the sum on the runtime's thread pool.
 * `Runtime.call` waits for the future off the JS thread, so the event loop
 * keeps running meanwhile (here: several calls in flight at once, on
 * separate frames). `callSync` is for handlers that finish synchronously:
 * it fails with FAILED_PRECONDITION, rather than block, when a handler
 * returns a future that is still pending.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/async_handler.ts
 *
 * @module
 */
import { CallFrameBuilder, HandlerLibrary, Runtime } from "../mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

using lib = HandlerLibrary.open(buildDemoLibrary());
await using rt = new Runtime({ platform: "Host", threads: 2 });
const sum = lib.handler("demo_sum_async");

// Four arrays summed concurrently: each call returns a Promise at once.
const inputs = [10, 100, 1000, 4000].map((n) => Float32Array.from({ length: n }, (_, i) => i + 1));
const outs = inputs.map(() => new Float32Array(1));
const frames = inputs.map((x, i) => new CallFrameBuilder().arg(x).ret(outs[i]!, [1]).build());
try {
  await Promise.all(frames.map((f) => rt.call(sum, f)));
  inputs.forEach((x, i) => console.log(`sum(1..${x.length}) = ${outs[i]![0]}`));
} finally {
  for (const f of frames) f.close();
}
