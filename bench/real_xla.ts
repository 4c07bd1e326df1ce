/**
 * Real XLA, side by side: the same jitted program `y = alpha * x` (F32, 8 and
 * 64Ki elements) with the multiply done by
 *   - a TS handler (`Ffi.bind()…to(fn)`, synchronous),
 *   - the same TS handler `async` (`await null` first), with the settled-early
 *     path (the default settle wait) and without it (`settleWaitUs: 0`),
 *   - a C handler (bench/native/scale.c, against this module's header),
 *   - the floors: C++ handlers built at bench time against jaxlib's own
 *     `ffi.h` (bench/native/scale_jaxlib.cc): synchronous, returning an
 *     already available `ffi::Future`, returning a future that a worker
 *     thread completes, and synchronous but run by another thread (the two
 *     thread hand-offs a TS handler called from XLA's thread makes, with the
 *     same waits, in C++: the floor of that path),
 *   - `jax.pure_callback` running the same body in NumPy,
 *   - plain `jnp` (no custom call: XLA's own code).
 * Each call is timed inside the hosted Python (`time.perf_counter` around
 * `compiled(x).block_until_ready()`), all of it in one request, so the
 * Deno <-> Python crossing is not in the figures. Contenders run interleaved,
 * in rounds; each cell is the mean per call over every round (what a loop
 * pays, tail included), the median and the p99; the targets and differences
 * are on the mean. bench/real_xla_loop.ts times the plain loop as a whole.
 *
 * Writes its table into bench/results.md (between the bench:real_xla
 * markers) unless `--no-write`. Needs jax (docs/real-xla.md).
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/real_xla.ts [--rounds N] [--sizes 8,65536] [--no-write]
 *
 * @module
 */
import { buildSharedLibrary } from "../build.ts";
import { DataType, Ffi, handlerHostStats, HandlerLibrary } from "../mod.ts";
import { loadAverage, openFloors, openXlaOrSkip, PY_TIMING } from "./_real_xla_fixture.ts";

const ROUNDS = Number(Deno.args[Deno.args.indexOf("--rounds") + 1] ?? 0) || 5;
const WRITE = !Deno.args.includes("--no-write");
const SIZES_ARG = Deno.args.indexOf("--sizes");
const SIZES = SIZES_ARG >= 0 ? Deno.args[SIZES_ARG + 1]!.split(",").map(Number) : [8, 65536];
/** Calls per contender per round, by size. */
const CALLS: Record<number, number> = { 8: 2000, 65536: 300 };
const callsOf = (n: number) => CALLS[n] ?? 300;

interface Stat {
  median: number;
  p10: number;
  p90: number;
  p99: number;
  /** What a loop of calls pays per call, tail included. */
  mean: number;
}

const CONTENDERS = [
  ["ts", "TS handler"],
  ["ts_async", "TS handler, async (`await null`)"],
  ["ts_async_pending", "TS async, `settleWaitUs: 0` (always a pending future)"],
  ["c", "C handler"],
  ["cc_sync", "C++ `ffi.h`, sync"],
  ["cc_ready", "C++ `ffi.h`, available future"],
  ["cc_thread", "C++ `ffi.h`, future completed by a thread"],
  ["cc_handoff", "C++ `ffi.h`, sync, run by another thread"],
  ["pure_callback", "`jax.pure_callback` (NumPy body)"],
  ["jnp", "plain `jnp` (no custom call)"],
] as const;
type Id = typeof CONTENDERS[number][0];
/** The contenders measured again with Python on the JS thread (no async TS handler). */
const SYNC_IDS: readonly Id[] = ["ts", "c", "cc_sync", "cc_handoff", "jnp"];

function fmt(s: number): string {
  const us = s * 1e6;
  return us < 10
    ? `${us.toFixed(2)} µs`
    : us < 1000
    ? `${us.toFixed(1)} µs`
    : `${(us / 1e3).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  await using xla = await openXlaOrSkip();
  if (xla === undefined) return;
  const scale = (x: Float32Array, y: Float32Array, alpha: number) => {
    for (let i = 0; i < y.length; i++) y[i] = alpha * x[i]!;
  };
  using ts = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
    .to((x, y, alpha) => scale(x.typed(), y.typed(), alpha));
  const asyncBody = async (
    x: { typed(): Float32Array },
    y: { typed(): Float32Array },
    alpha: number,
  ) => {
    await null;
    scale(x.typed(), y.typed(), alpha);
  };
  using tsAsync = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
    .to(asyncBody);
  using tsAsyncPending = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
    .to(asyncBody, { async: true, settleWaitUs: 0 });
  using lib = HandlerLibrary.open(buildSharedLibrary({
    name: "bench_scale",
    sources: [new URL("./native/scale.c", import.meta.url)],
  }));
  using floors = openFloors();
  await xla.register("bench.ts", ts);
  await xla.register("bench.ts_async", tsAsync);
  await xla.register("bench.ts_async_pending", tsAsyncPending);
  await xla.register("bench.c", lib.handler("bench_scale"));
  for (const name of ["sync", "ready", "thread", "handoff"]) {
    await xla.register(`bench.cc_${name}`, floors.handler(`bench_cc_${name}`));
  }

  const call = (target: string) =>
    `ffi.ffi_call("${target}", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, alpha=np.float32(2))`;
  const bodies: Record<Id, string> = {
    ts: call("bench.ts"),
    ts_async: call("bench.ts_async"),
    ts_async_pending: call("bench.ts_async_pending"),
    c: call("bench.c"),
    cc_sync: call("bench.cc_sync"),
    cc_ready: call("bench.cc_ready"),
    cc_thread: call("bench.cc_thread"),
    cc_handoff: call("bench.cc_handoff"),
    pure_callback:
      "jax.pure_callback(lambda v: np.float32(2) * v, jax.ShapeDtypeStruct(x.shape, x.dtype), x)",
    jnp: "np.float32(2) * x",
  };
  const programs: Record<string, number> = {};
  const keep = [];
  for (const n of SIZES) {
    for (const [id] of CONTENDERS) {
      const p = await xla.jit(`def f(x):\n    return ${bodies[id]}\n`, {
        args: [{ dtype: DataType.F32, shape: [n] }],
      });
      keep.push(p);
      programs[`${id}:${n}`] = p.id;
    }
  }
  // Same results everywhere first (8 elements).
  const x8 = Float32Array.from({ length: 8 }, (_, i) => i - 3);
  for (const p of keep.slice(0, CONTENDERS.length)) {
    const [y] = await p.run(x8);
    if (!y!.data.every((v, i) => v === 2 * x8[i]!)) throw new Error(`wrong result: ${y!.data}`);
  }

  const timing = (progs: Record<string, number>) =>
    `${PY_TIMING}
programs = ${JSON.stringify(progs)}
calls = ${JSON.stringify(Object.fromEntries(SIZES.map((n) => [n, callsOf(n)])))}
times = {k: [] for k in programs}
inputs = {n: ready_input(n) for n in [${SIZES.join(", ")}]}
for k, pid in programs.items():            # warm-up
    n = int(k.split(":")[1])
    time_calls(program(pid), inputs[n], 50, [])
for r in range(${ROUNDS}):
    for k, pid in programs.items():
        n = int(k.split(":")[1])
        time_calls(program(pid), inputs[n], calls[str(n)], times[k])
result = {k: summary(ts) for k, ts in times.items()}
`;
  type Result = Record<string, Stat & { calls: number }>;
  const before = handlerHostStats();
  const t0 = performance.now();
  const result = await xla.runPython(timing(programs)) as Result;
  const after = handlerHostStats();
  // The same loop with Python on the JS thread (`runPythonSync`): XLA runs
  // these small programs inline on the thread that calls them, so the
  // synchronous TS handler runs there, without the two hand-offs. Async TS
  // handlers cannot run so (their Promise would settle only after the run).
  const syncSizes = SIZES.filter((n) => n <= 4096);
  const syncPrograms = Object.fromEntries(
    Object.entries(programs).filter(([k]) =>
      SYNC_IDS.includes(k.split(":")[0] as Id) && syncSizes.includes(Number(k.split(":")[1]))
    ),
  );
  const syncBefore = handlerHostStats();
  const resultSync = syncSizes.length
    ? xla.runPythonSync(timing(syncPrograms)) as Result
    : {} as Result;
  const syncForeign = handlerHostStats().foreignCalls - syncBefore.foreignCalls;
  const seconds = (performance.now() - t0) / 1e3;
  const tsCalls = SIZES.reduce(
    (a, n) =>
      a + result[`ts:${n}`]!.calls + result[`ts_async:${n}`]!.calls +
      result[`ts_async_pending:${n}`]!.calls,
    0,
  );
  const wakeups = after.wakeups - before.wakeups;

  const rows: string[] = [];
  const lines: string[] = [];
  rows.push(
    "| elements | " + CONTENDERS.map(([, label]) => label).join(" | ") +
      " | TS − C++ sync | TS − C++ run by another thread | async TS − TS | async TS − C++ thread | pending async TS − C++ thread |" +
      " pure_callback / TS |",
  );
  rows.push("|---:|" + CONTENDERS.map(() => "---:").join("|") + "|---:|---:|---:|---:|---:|---:|");
  /** One size's figures of a run: cells, µs, differences, targets (with the ratio). */
  const figures = (res: Result, n: number) => {
    const s = (id: Id) => res[`${id}:${n}`]!;
    // Targets and differences are on the mean: what a program calling in a loop pays.
    const us = (id: Id) => s(id).mean * 1e6;
    const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(2)} µs`;
    return {
      s,
      us,
      cell: (id: Id) => `${fmt(s(id).mean)} · ${fmt(s(id).median)} · ${fmt(s(id).p99)}`,
      d: (a: Id, b: Id) => signed(us(a) - us(b)),
      target: (what: string, a: Id, b: Id, limit: number) => {
        const over = us(a) - us(b);
        return `${what}: ${over <= limit ? "met" : `missed by ${(over - limit).toFixed(2)} µs`} (${
          signed(over)
        }, ${(us(a) / us(b)).toFixed(2)}×)`;
      },
    };
  };
  for (const n of SIZES) {
    const { s, cell, d, target } = figures(result, n);
    rows.push(
      `| ${n} | ${CONTENDERS.map(([id]) => cell(id)).join(" | ")} | ${d("ts", "cc_sync")} | ${
        d("ts", "cc_handoff")
      } | ${d("ts_async", "ts")} | ${d("ts_async", "cc_thread")} | ${
        d("ts_async_pending", "cc_thread")
      } | ${(s("pure_callback").mean / s("ts").mean).toFixed(1)}× |`,
    );
    lines.push(
      `${n} elements: ` + [
        target("TS ≤ C++ sync + 2.0 µs", "ts", "cc_sync", 2.0),
        target("TS ≤ C++ run by another thread + 1.0 µs", "ts", "cc_handoff", 1.0),
        target("async TS ≤ C++ thread floor + 3 µs", "ts_async", "cc_thread", 3),
        target("async TS (`await null`) ≤ sync TS + 2 µs", "ts_async", "ts", 2),
        target(
          "async TS without the settled-early path ≤ C++ thread floor + 3 µs",
          "ts_async_pending",
          "cc_thread",
          3,
        ),
      ].join("; "),
    );
  }
  if (syncSizes.length) {
    rows.push(
      "",
      "Python on the JS thread (`Xla.runPythonSync`; `XlaProgram.runSync` runs a program so): " +
        `XLA calls the TS handler inline there (${syncForeign} calls from another thread).`,
      "",
      "| elements | " + SYNC_IDS.map((id) => CONTENDERS.find(([c]) => c === id)![1]).join(" | ") +
        " | TS − C++ sync | TS − C++ run by another thread |",
      "|---:|" + SYNC_IDS.map(() => "---:").join("|") + "|---:|---:|",
    );
  }
  for (const n of syncSizes) {
    const { cell, d, target } = figures(resultSync, n);
    rows.push(
      `| ${n} | ${SYNC_IDS.map(cell).join(" | ")} | ${d("ts", "cc_sync")} | ${
        d("ts", "cc_handoff")
      } |`,
    );
    lines.push(
      `${n} elements, Python on the JS thread: ${
        target("TS ≤ C++ sync + 1.0 µs (mean)", "ts", "cc_sync", 1.0)
      }`,
    );
  }
  const load = await loadAverage(xla);
  const header = [
    `${
      new Date().toISOString().slice(0, 16).replace("T", " ")
    } UTC; ${navigator.hardwareConcurrency} ` +
    `logical cores, load average ${load} after; Deno ${Deno.version.deno}, jax ${xla.version.jax}, ` +
    `jaxlib ${xla.version.jaxlib} (XLA FFI API ${xla.version.ffiApi?.major}.${xla.version.ffiApi?.minor}), ` +
    `Python ${xla.version.python}.`,
    `Command: \`deno run -A bench/real_xla.ts${
      Deno.args.length ? " " + Deno.args.join(" ") : ""
    }\` ` +
    `(${ROUNDS} rounds; ${SIZES.map((n) => `${callsOf(n)} calls of ${n} elements`).join(", ")} ` +
    `per contender per round; ${seconds.toFixed(1)} s).`,
    `The TS handlers were called ${tsCalls} times (two thirds of them async) from XLA's calling thread ` +
    `and woke the JS thread ${wakeups} times (${(wakeups / tsCalls).toFixed(3)} per call): ` +
    `a call finds the JS thread still serving (or lingering after) the previous one unless it woke it.`,
  ];
  console.log([...header, "", ...rows, "", ...lines].join("\n"));
  if (WRITE) {
    const url = new URL("./results.md", import.meta.url);
    const text = Deno.readTextFileSync(url);
    const section = [
      START,
      "## Real XLA: the same jitted program with the multiply in a TS, async TS, C or C++ (`ffi.h`) handler",
      "",
      "`y = alpha * x` (F32) jitted by jax on its CPU backend, in the Deno process",
      "(`@deno-xla/ffi/xla`); per call of `compiled(x).block_until_ready()`: mean · median · p99",
      "timed inside Python. `pure_callback` runs `np.float32(2) * v`; plain `jnp` has no custom call.",
      "The C++ rows are XLA's own floors, built against jaxlib's `ffi.h` (bench/native/scale_jaxlib.cc).",
      "",
      ...header,
      "",
      ...rows,
      "",
      ...lines.map((l) => `- ${l}`),
      END,
    ].join("\n");
    const a = text.indexOf(START), b = text.indexOf(END);
    const next = a >= 0 && b > a
      ? text.slice(0, a) + section + text.slice(b + END.length)
      : text.trimEnd() + "\n\n" + section + "\n";
    Deno.writeTextFileSync(url, next);
    console.log(`\nwritten to bench/results.md`);
  }
  for (const p of keep) await p.close();
}

const START = "<!-- bench:real_xla:start -->";
const END = "<!-- bench:real_xla:end -->";

if (import.meta.main) await main();
