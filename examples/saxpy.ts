/**
 * A TS handler y = alpha * x + y, bound with typed buffers and an f32
 * attribute, called with real data through an independent minimal XLA
 * runtime (the test harness in native/tests/, which builds its own call
 * frames and XLA_FFI_Api). Registration in the embedded runtime comes with
 * the runtime module.
 *
 *   deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/saxpy.ts
 *
 * @module
 */
import { DataType, Ffi } from "../mod.ts";
import { call, frame } from "../tests/_handler_harness.ts";

using saxpy = Ffi.bind()
  .arg(DataType.F32, 1) // x
  .ret(DataType.F32, 1) // y, updated in place
  .attr("alpha", "f32")
  .to((x, y, alpha) => {
    const xs = x.typed(), ys = y.typed();
    if (xs.length !== ys.length) {
      throw new RangeError(`x has ${xs.length} elements but y has ${ys.length}`);
    }
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]! + ys[i]!;
  });

const x = new Float32Array([1, 2, 3, 4]);
const y = new Float32Array([10, 20, 30, 40]);
using f = frame({
  args: [{ dtype: DataType.F32, dims: [4], data: x }],
  rets: [{ dtype: DataType.F32, dims: [4], data: y }],
  attrs: { alpha: { scalar: DataType.F32, value: 2 } },
});
const error = await call(saxpy.pointer, f);
if (error !== null) throw new Error(`saxpy failed: ${error.message}`);
console.log("y = 2 * x + y =", [...y]); // [12, 24, 36, 48]

// Bad input comes back as an XLA error with ffi.h's words, not a crash.
using bad = frame({
  args: [{ dtype: DataType.S32, dims: [4], data: new Int32Array(4) }],
  rets: [{ dtype: DataType.F32, dims: [4], data: y }],
  attrs: { alpha: { scalar: DataType.F32, value: 2 } },
});
console.log((await call(saxpy.pointer, bad))?.message);
