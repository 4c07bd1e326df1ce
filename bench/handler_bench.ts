/**
 * Deno.bench suite of the TS handler path (`deno task bench`). The script
 * bench/handler_speed.ts prints the P1/P2/P5 medians with their ratios to raw
 * Deno callbacks.
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { Ffi } from "../src/handler/mod.ts";
import { frame, harness } from "../tests/_handler_harness.ts";

const F32 = DataType.F32;
const mk = (dims: number[]) => ({
  dtype: F32,
  dims,
  data: new Float32Array(dims.reduce((a, b) => a * b, 1)),
});
const f = frame({
  args: [mk([2, 3]), mk([4]), mk([2, 2, 2]), mk([1, 2, 3, 4])],
  rets: [mk([2, 3])],
  attrs: {
    alpha: { scalar: F32, value: 0.5 },
    n: { scalar: DataType.S32, value: 7 },
    mode: { string: "reflect" },
    axes: { array: DataType.S64, values: [0, 2, 3] },
  },
});
const h = harness();
let sink = 0;
const handler = Ffi.bind().arg(F32, 2).arg(F32, 1).arg(F32, 3).arg(F32, 4).ret(F32, 2)
  .attr("alpha", "f32").attr("axes", "i64[]").attr("mode", "string").attr("n", "i32")
  .to((_a, _b, _c, _d, _r, alpha, _axes, _mode, n) => {
    sink += alpha + n;
  });
const raw = new Deno.UnsafeCallback(
  { parameters: ["pointer"], result: "pointer" } as const,
  () => {
    sink++;
    return null;
  },
);
addEventListener("unload", () => {
  handler.close();
  raw.close();
  f.close();
});

Deno.bench("P1 TS handler, standard frame, same thread (1000 calls)", { baseline: false }, () => {
  h.hh_loop(handler.pointer, f.pointer, 1000);
});
Deno.bench("raw UnsafeCallback, same C loop (1000 calls)", { baseline: true }, () => {
  h.hh_loop(raw.pointer, f.pointer, 1000);
});
