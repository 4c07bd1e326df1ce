/**
 * What a jax loop pays per call of a handler, tail included: the plain loop
 * `for _ in range(n): f(x).block_until_ready()` over a jitted
 * `jax.ffi.ffi_call` of `y = 2x` (8 F32, x ready on the device), timed as a
 * whole (no clock read per call), so each round gives the mean per call.
 * Each program first runs 3000 calls, whose mean is printed apart (a TS
 * handler's first calls run partly unoptimised: the cost of a loop's start).
 * Contenders alternate, 7 rounds × 2000 calls each; a figure is the median
 * over rounds of the round means (min–max beside it).
 *
 * - C++ `ffi.h` sync handler (XLA's own floor, bench/native/scale_jaxlib.cc);
 * - the same run by one other thread, which spins 20 µs for the next call and
 *   then sleeps, its caller spinning 3 µs and then yielding (the floor of the
 *   two hand-offs between threads a call served by the JS thread pays), and a
 *   C++ handler returning an available `ffi::Future` (what XLA itself charges
 *   for an async handler);
 * - sync TS handler (`x.typed()`, `y.typed()`), Python on a worker
 *   (`runPython`: XLA calls it from its own thread, the JS thread serves it);
 * - the same with Python on the JS thread (`runPythonSync`: XLA calls it
 *   inline on the JS thread), against the C++ handler run the same way, and
 *   the same handler without the view of its output (it writes nothing;
 *   timed to show what that view costs where every call brings a new
 *   output address);
 * - async TS (`await null` first), Python on a worker.
 *
 * Prints the JS thread's wake-ups per call (the hand-offs that make the
 * tail) and the targets on the mean: sync TS ≤ C++ + 2.0 µs on a worker,
 * ≤ C++ + 1.0 µs inline, async TS ≤ sync TS + 2 µs.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/real_xla_loop.ts [--rounds N] [--calls N] [--warm N]
 *
 * @module
 */
import { DataType, Ffi, handlerHostStats } from "../mod.ts";
import { loadAverage, openFloors, openXlaOrSkip } from "./_real_xla_fixture.ts";
import { openBenchLibrary, roundTripLine } from "./bench_lib.ts";

const arg = (name: string, fallback: number) => {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Number(Deno.args[i + 1]) || fallback : fallback;
};
const ROUNDS = arg("--rounds", 7);
const CALLS = arg("--calls", 2000);
/** Calls of each program before the timed rounds: a TS handler's first few thousand calls run
 * partly unoptimised (V8 compiles the dispatch and the handler as they get hot), which is reported
 * beside the rounds rather than mixed into them. */
const WARM = arg("--warm", 3000);

/** The loop, in the hosted Python: per round, the mean seconds per call of each program. */
const LOOP = (programs: Record<string, number>) => `
import time
x = jnp.asarray(np.arange(8, dtype=np.float32)).block_until_ready()
progs = {k: program(pid) for k, pid in ${JSON.stringify(programs)}.items()}
first = {}
for k, f in progs.items():
    t = time.perf_counter()
    for _ in range(${WARM}):
        f(x).block_until_ready()
    first[k] = (time.perf_counter() - t) / ${WARM}
means = {k: [] for k in progs}
for r in range(${ROUNDS}):
    for k, f in progs.items():
        t = time.perf_counter()
        for _ in range(${CALLS}):
            f(x).block_until_ready()
        means[k].append((time.perf_counter() - t) / ${CALLS})
result = {"means": means, "first": first}
`;

function stat(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[s.length >> 1]!, min: s[0]!, max: s[s.length - 1]! };
}

const us = (s: number) => `${(s * 1e6).toFixed(2)} µs`;

async function main(): Promise<void> {
  await using xla = await openXlaOrSkip();
  if (xla === undefined) return;
  using ts = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    const a = x.typed(), b = y.typed();
    for (let i = 0; i < b.length; i++) b[i] = 2 * a[i]!;
  });
  using tsAsync = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(async (x, y) => {
    await null;
    const a = x.typed(), b = y.typed();
    for (let i = 0; i < b.length; i++) b[i] = 2 * a[i]!;
  });
  // What the view of a fresh output costs inline: the same handler without it (it writes nothing,
  // so its program's result is wrong; timed only).
  using tsNoView = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, _y) => {
    x.typed();
  });
  using floors = openFloors();
  await xla.register("loop.ts", ts);
  await xla.register("loop.ts_noview", tsNoView);
  await xla.register("loop.ts_async", tsAsync);
  await xla.register("loop.cc_sync", floors.handler("bench_cc_sync"));
  await xla.register("loop.cc_handoff", floors.handler("bench_cc_handoff"));
  await xla.register("loop.cc_ready", floors.handler("bench_cc_ready"));
  const programs: Record<string, number> = {};
  const keep = [];
  for (
    const [id, target, attrs] of [
      ["cc_sync", "loop.cc_sync", ", alpha=np.float32(2)"],
      ["cc_handoff", "loop.cc_handoff", ", alpha=np.float32(2)"],
      ["cc_ready", "loop.cc_ready", ", alpha=np.float32(2)"],
      ["ts", "loop.ts", ""],
      ["ts_async", "loop.ts_async", ""],
      ["ts_noview", "loop.ts_noview", ""],
    ] as const
  ) {
    const p = await xla.jit(
      `def f(x):\n    return ffi.ffi_call("${target}", jax.ShapeDtypeStruct(x.shape, x.dtype))(x${attrs})\n`,
      { args: [{ dtype: DataType.F32, shape: [8] }] },
    );
    const [y] = await p.run(new Float32Array([0, 1, 2, 3, 4, 5, 6, 7]));
    if (id !== "ts_noview" && y!.data[7] !== 14) throw new Error(`${id}: wrong result ${y!.data}`);
    keep.push(p);
    programs[id] = p.id;
  }
  const { ts_noview: noView, ...onWorker } = programs;
  type Loop = { means: Record<string, number[]>; first: Record<string, number> };
  const w0 = handlerHostStats();
  const { means: worker, first: workerFirst } = await xla.runPython(LOOP(onWorker)) as Loop;
  const w1 = handlerHostStats();
  const inlinePrograms = { cc_sync: programs.cc_sync!, ts: programs.ts!, ts_noview: noView! };
  const i0 = handlerHostStats();
  const { means: inline, first: inlineFirst } = xla.runPythonSync(LOOP(inlinePrograms)) as Loop;
  const i1 = handlerHostStats();
  const tsCalls = (ROUNDS * CALLS + WARM) * 2; // sync and async TS on the worker

  const row = (label: string, xs: number[], first: number) => {
    const s = stat(xs);
    return `${label.padEnd(44)} ${us(s.median).padStart(10)}  (${us(s.min)}–${us(s.max)}); ` +
      `first ${WARM} calls ${us(first)}`;
  };
  const m = (xs: number[]) => stat(xs).median;
  /** a − b in µs, signed. */
  const over = (a: number, b: number) =>
    `${a >= b ? "+" : "−"}${Math.abs((a - b) * 1e6).toFixed(2)} µs`;
  const target = (what: string, a: number, b: number, limit: number) =>
    `target: ${what}: ${over(a, b)}, ${(a - b) * 1e6 <= limit ? "met" : "not met"}`;
  console.log(
    `mean per call of a plain jax loop (${ROUNDS} rounds × ${CALLS} calls, median of the ` +
      `round means, min–max); load average ${await loadAverage(xla)}; jax ${xla.version.jax}`,
  );
  {
    // The machine's state, which every hand-off between two CPUs pays (measured after the loops).
    using lib = openBenchLibrary();
    console.log(roundTripLine(lib));
  }
  console.log("Python on a worker (runPython):");
  console.log(row("  C++ ffi.h sync", worker.cc_sync!, workerFirst.cc_sync!));
  console.log(
    row("  C++ ffi.h sync, run by another thread", worker.cc_handoff!, workerFirst.cc_handoff!),
  );
  console.log(row("  C++ ffi.h, available future", worker.cc_ready!, workerFirst.cc_ready!));
  console.log(row("  sync TS", worker.ts!, workerFirst.ts!));
  console.log(row("  async TS (await null)", worker.ts_async!, workerFirst.ts_async!));
  console.log(
    `  JS thread wake-ups per TS call: ${((w1.wakeups - w0.wakeups) / tsCalls).toFixed(3)} ` +
      `(${w1.foreignCalls - w0.foreignCalls} calls from XLA's thread)`,
  );
  console.log("Python on the JS thread (runPythonSync, XLA calls the handler inline):");
  console.log(row("  C++ ffi.h sync", inline.cc_sync!, inlineFirst.cc_sync!));
  console.log(row("  sync TS", inline.ts!, inlineFirst.ts!));
  console.log(
    row(
      "  sync TS, no view of its output (timed only)",
      inline.ts_noview!,
      inlineFirst.ts_noview!,
    ),
  );
  console.log(
    `  the view of a fresh output: ${over(m(inline.ts!), m(inline.ts_noview!))} per call ` +
      `(sync TS without it ${over(m(inline.ts_noview!), m(inline.cc_sync!))} over C++)`,
  );
  console.log(`  calls from another thread: ${i1.foreignCalls - i0.foreignCalls}`);
  // What no handler served by another thread avoids, and what XLA charges for a future.
  console.log(
    `floors: C++ run by another thread ${over(m(worker.cc_handoff!), m(worker.cc_sync!))} ` +
      `over C++ (sync TS ${over(m(worker.ts!), m(worker.cc_handoff!))} over it); an available ` +
      `future ${over(m(worker.cc_ready!), m(worker.cc_sync!))} over C++`,
  );
  console.log(target("worker, sync TS ≤ C++ + 2.0 µs", m(worker.ts!), m(worker.cc_sync!), 2.0));
  console.log(target("inline, sync TS ≤ C++ + 1.0 µs", m(inline.ts!), m(inline.cc_sync!), 1.0));
  console.log(
    target("worker, async TS ≤ sync TS + 2.0 µs", m(worker.ts_async!), m(worker.ts!), 2.0),
  );
  for (const p of keep) await p.close();
}

if (import.meta.main) await main();
