/**
 * Shared set-up of the TS handler benchmarks (bench/handler_bench.ts and
 * bench/handler_speed.ts): the standard frame of the independent C harness,
 * the standard TS handler binding, and raw Deno callbacks of the same C
 * signature as baselines.
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { Ffi } from "../src/handler/mod.ts";
import { frame, type TestFrame } from "../tests/_handler_harness.ts";

const F32 = DataType.F32;

let sink = 0;

/** What the handler and callback bodies accumulated (read it so they are not dead code). */
export function sinkValue(): number {
  return sink;
}

/**
 * The standard frame in the C harness: 4 F32 args of ranks 2, 1, 3, 4, one
 * result, attrs alpha f32, n s32, mode "reflect", axes s64[3].
 */
export function standardFrame(): TestFrame {
  const mk = (dims: number[]) => ({
    dtype: F32,
    dims,
    data: new Float32Array(dims.reduce((a, b) => a * b, 1)),
  });
  return frame({
    args: [mk([2, 3]), mk([4]), mk([2, 2, 2]), mk([1, 2, 3, 4])],
    rets: [mk([2, 3])],
    attrs: {
      alpha: { scalar: F32, value: 0.5 },
      n: { scalar: DataType.S32, value: 7 },
      mode: { string: "reflect" },
      axes: { array: DataType.S64, values: [0, 2, 3] },
    },
  });
}

/** The binding of the standard frame: every operand decoded. */
export function standardBinding() {
  return Ffi.bind().arg(F32, 2).arg(F32, 1).arg(F32, 3).arg(F32, 4).ret(F32, 2)
    .attr("alpha", "f32").attr("axes", "i64[]").attr("mode", "string").attr("n", "i32");
}

/** The standard TS handler: decodes every operand; the body only uses two attrs. */
export function standardHandler() {
  return standardBinding().to((_a, _b, _c, _d, _r, alpha, _axes, _mode, n) => {
    sink += alpha + n;
  });
}

/** The standard TS handler as an async function that first awaits (its Promise settles in microtasks). */
export function standardAsyncHandler() {
  return standardBinding().to(async (_a, _b, _c, _d, _r, alpha, _axes, _mode, n) => {
    await null;
    sink += alpha + n;
  });
}

const RAW = { parameters: ["pointer"], result: "pointer" } as const;

/** A raw UnsafeCallback of the handler's C signature with an empty body (the baseline). */
export function rawCallback(): Deno.UnsafeCallback<typeof RAW> {
  return new Deno.UnsafeCallback(RAW, () => {
    sink++;
    return null;
  });
}

/** The same as {@link rawCallback}, callable from any thread. */
export function rawThreadSafeCallback(): Deno.UnsafeCallback<typeof RAW> {
  return Deno.UnsafeCallback.threadSafe(RAW, () => {
    sink++;
    return null;
  });
}
