/**
 * A TS handler y = alpha * x + y, bound with typed buffers and an f32
 * attribute, registered in the embedded XLA runtime under a name and called
 * with real data: on the JS thread (`callSync`), off it (`call`), and from
 * four of the runtime's own threads (`callOnThreads`), as XLA calls
 * handlers. Bad input comes back as an XLA error with ffi.h's words.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/saxpy.ts
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, FfiError, Runtime, scalar } from "../mod.ts";

using saxpy = Ffi.bind()
  .arg(DataType.F32, 1) // x
  .ret(DataType.F32, 1) // y, updated in place
  .attr("alpha", "f32")
  .to((x, y, alpha) => {
    const xs = x.typed(), ys = y.typed();
    if (xs.length !== ys.length) {
      throw new FfiError("INVALID_ARGUMENT", `x has ${xs.length} elements but y has ${ys.length}`);
    }
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]! + ys[i]!;
  });

using rt = new Runtime({ threads: 4 });
rt.register("example.saxpy", saxpy);
const { apiVersion, traits } = rt.metadata(saxpy);
console.log(`example.saxpy: API ${apiVersion.major}.${apiVersion.minor}, traits ${traits}`);

const x = new Float32Array([1, 2, 3, 4]);
const y = new Float32Array([10, 20, 30, 40]);
using frame = new CallFrameBuilder().arg(x).ret(y).attr("alpha", scalar(DataType.F32, 2)).build();
rt.callSync("example.saxpy", frame);
console.log("y = 2 * x + y =", [...y]); // [12, 24, 36, 48]

await rt.call("example.saxpy", frame); // settles once the runtime saw the call complete
console.log("again with Runtime.call:", [...y]); // [14, 28, 42, 56]

const r = await rt.callOnThreads("example.saxpy", frame, { threads: 4, iterations: 250 });
console.log(`4 runtime threads x 250 calls: ${r.ok} ok, ${r.failed} failed; y =`, [...y]);

// Bad input: an S32 argument where the binding wants F32.
using bad = new CallFrameBuilder().arg(new Int32Array(4)).ret(y)
  .attr("alpha", scalar(DataType.F32, 2)).build();
try {
  rt.callSync("example.saxpy", bad);
} catch (e) {
  if (!(e instanceof FfiError)) throw e;
  console.log(`expected error (an S32 argument where the binding wants F32): ${e}`);
}
