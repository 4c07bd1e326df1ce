/**
 * TS handler speed (a script, not timed tests): prints medians and ratios.
 *
 *   deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/handler_speed.ts
 *
 * P1: same-thread call of a TS handler with the standard frame (4 F32 args of
 *     ranks 2,1,3,4, 1 result, attrs alpha f32, n s32, mode "reflect", axes
 *     s64[3]), every operand decoded, empty body; vs a raw UnsafeCallback of the
 *     same C signature called from the same C loop.
 * P2: round trip of a call from foreign threads (1 and 4 threads); vs a raw
 *     UnsafeCallback.threadSafe called the same way.
 * P5: async round trip: the handler returns a resolved Promise, the runtime
 *     sees the future complete, the caller's await resumes.
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { Ffi, handlerHostStats } from "../src/handler/mod.ts";
import { frame, harness, runThreads, type TestFrame } from "../tests/_handler_harness.ts";

const REPS = Number(Deno.env.get("REPS") ?? 7);
const F32 = DataType.F32;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function standardFrame(): TestFrame {
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

const h = harness();
using f = standardFrame();
let sink = 0;
using handler = Ffi.bind().arg(F32, 2).arg(F32, 1).arg(F32, 3).arg(F32, 4).ret(F32, 2)
  .attr("alpha", "f32").attr("axes", "i64[]").attr("mode", "string").attr("n", "i32")
  .to((_a, _b, _c, _d, _r, alpha, _axes, _mode, n) => {
    sink += alpha + n;
  });
const raw = new Deno.UnsafeCallback(
  { parameters: ["pointer"], result: "pointer" } as const,
  (_frame) => {
    sink++;
    return null;
  },
);
const rawTs = Deno.UnsafeCallback.threadSafe(
  { parameters: ["pointer"], result: "pointer" } as const,
  (_frame) => {
    sink++;
    return null;
  },
);

// P1
const N1 = 200_000;
h.hh_loop(handler.pointer, f.pointer, 20_000);
h.hh_loop(raw.pointer, f.pointer, 20_000);
const p1: number[] = [], p1raw: number[] = [];
for (let r = 0; r < REPS; r++) {
  p1.push(h.hh_loop(handler.pointer, f.pointer, N1));
  p1raw.push(h.hh_loop(raw.pointer, f.pointer, N1));
}
const p1m = median(p1), p1r = median(p1raw);
console.log(
  `P1 same-thread TS handler, standard frame: ${(p1m / 1e3).toFixed(3)} µs median ` +
    `(raw UnsafeCallback ${(p1r / 1e3).toFixed(3)} µs; ratio ${(p1m / p1r).toFixed(2)}x) ` +
    `target ≤ 1.0 µs`,
);

// P2
async function threads(ptr: Deno.PointerValue, n: number, calls: number) {
  const frames = Array.from({ length: n }, () => standardFrame());
  try {
    const meds: number[] = [], rates: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const res = await runThreads(frames.map(() => ptr), frames, calls);
      if (res.errors) throw new Error(res.message);
      meds.push(res.medianNs);
      rates.push((n * calls) / (res.wallNs / 1e9));
    }
    return { median: median(meds), rate: median(rates) };
  } finally {
    for (const fr of frames) fr.close();
  }
}
for (const n of [1, 4]) {
  const calls = 5_000;
  const s0 = handlerHostStats();
  const t = await threads(handler.pointer, n, calls);
  const s1 = handlerHostStats();
  const perWake = (s1.foreignCalls - s0.foreignCalls) / Math.max(1, s1.wakeups - s0.wakeups);
  const r = await threads(rawTs.pointer, n, calls);
  console.log(
    `P2 foreign thread x${n}: TS handler ${(t.median / 1e3).toFixed(1)} µs median round trip, ` +
      `${Math.round(t.rate / 1e3)}k calls/s (raw threadSafe ${(r.median / 1e3).toFixed(1)} µs, ` +
      `${Math.round(r.rate / 1e3)}k/s; latency ratio ${(t.median / r.median).toFixed(2)}x)` +
      `; ${perWake.toFixed(1)} calls per JS wake-up` +
      (n === 4 ? " target ≤ 10 µs and ≥ 150k/s" : ""),
  );
}

// P5
using asyncHandler = Ffi.bind().arg(F32, 2).arg(F32, 1).arg(F32, 3).arg(F32, 4).ret(F32, 2)
  .attr("alpha", "f32").attr("axes", "i64[]").attr("mode", "string").attr("n", "i32")
  .to(() => Promise.resolve());
const p5: number[] = [];
const N5 = 20_000;
for (let r = 0; r < REPS + 1; r++) {
  const t0 = performance.now();
  for (let i = 0; i < N5; i++) {
    const err = h.hh_call(asyncHandler.pointer, f.pointer);
    if (err !== null) throw new Error("async call failed");
    const fut = h.hh_frame_future(f.pointer)!;
    await null; // the caller awaits; the Promise's completion has run by now
    if (h.hh_future_done(fut) !== 1) await h.hh_future_wait(fut);
    h.hh_future_free(fut);
  }
  if (r > 0) p5.push(((performance.now() - t0) * 1e6) / N5);
}
const p5t = await threads(asyncHandler.pointer, 1, 5_000);
console.log(
  `P5 async round trip, same thread: ${(median(p5) / 1e3).toFixed(2)} µs median ` +
    `(from a foreign thread: ${(p5t.median / 1e3).toFixed(1)} µs) target ≤ 10 µs`,
);
raw.close();
rawTs.close();
if (sink < 0) console.log(sink);
