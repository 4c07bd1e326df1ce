/**
 * Where a synchronous TS handler's time goes inside real XLA when XLA calls
 * it inline on the JS thread (`Xla.runPythonSync`; jitted `y = alpha * x`,
 * 8 f32, as bench/real_xla.ts). Calls stop after each phase (`_phaseStop`,
 * the benchmark-only switch bench/handler_speed.ts uses) and return success;
 * each phase's cost is the difference to the phase before, in the same
 * round, of the per-call mean (what a loop pays, tail included) and of the
 * per-call median (p99 beside them):
 *   1 the C entry's own checks; 2 the frame check and flatten; 3 entering JS
 *   (the `UnsafeCallback` crossing); 4 the operand counts; 5 every operand
 *   decoded; then the handler itself: a no-op, and the real body (which
 *   makes a view of each buffer with `typed()`).
 * Plain `jnp` (no custom call) and a C++ `ffi.h` handler are the floors.
 *
 * Run: deno run -A bench/real_xla_phases.ts [--rounds N]
 *
 * @module
 */
import { DataType, Ffi } from "../mod.ts";
import { _phaseStop } from "../src/handler/host.ts";
import { openFloors, openXlaOrSkip, PY_TIMING } from "./_real_xla_fixture.ts";

const ROUNDS = Number(Deno.args[Deno.args.indexOf("--rounds") + 1] ?? 0) || 5;
const CALLS = 3000;

async function main(): Promise<void> {
  await using xla = await openXlaOrSkip();
  if (xla === undefined) return;
  const bind = () => Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32");
  using full = bind().to((x, y, alpha) => {
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
  });
  using noop = bind().to(() => {});
  using floors = openFloors();
  await xla.register("phases.full", full);
  await xla.register("phases.noop", noop);
  await xla.register("phases.cc", floors.handler("bench_cc_sync"));
  const jit = (body: string) =>
    xla.jit(`def f(x):\n    return ${body}\n`, { args: [{ dtype: DataType.F32, shape: [8] }] });
  const call = (t: string) =>
    `ffi.ffi_call("${t}", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, alpha=np.float32(2))`;
  await using pFull = await jit(call("phases.full"));
  await using pNoop = await jit(call("phases.noop"));
  await using pCc = await jit(call("phases.cc"));
  await using pJnp = await jit("np.float32(2) * x");
  /** One contender's per-call mean, median and p99 (µs) over {@link CALLS} calls. */
  const measure = (id: number) =>
    xla.runPythonSync(`${PY_TIMING}
f = program(${id})
x = ready_input(8)
time_calls(f, x, 200, [])
ts = []
time_calls(f, x, ${CALLS}, ts)
s = summary(ts)
result = [s["mean"] * 1e6, s["median"] * 1e6, s["p99"] * 1e6]
`) as Stats;
  const cols = [
    "plain jnp",
    "C++ ffi.h sync",
    "1 C entry",
    "2 check+flatten",
    "3 JS entry",
    "4 counts",
    "5 decode",
    "no-op handler",
    "the handler",
  ];
  const rows: Stats[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const row = [measure(pJnp.id), measure(pCc.id)];
    for (const phase of [1, 2, 3, 4, 5]) {
      _phaseStop(phase);
      try {
        row.push(measure(pFull.id));
      } finally {
        _phaseStop(0);
      }
    }
    row.push(measure(pNoop.id), measure(pFull.id));
    rows.push(row);
  }
  /** Column i's statistic k (0 mean, 1 median, 2 p99), the median over rounds. */
  const over = (i: number, k: number) => {
    const v = rows.map((r) => r[i]![k]!).sort((a, b) => a - b);
    return v[v.length >> 1]!;
  };
  console.log(
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ` +
      `${navigator.hardwareConcurrency} cores; ${ROUNDS} rounds of ${CALLS} calls; ` +
      `per call (µs) mean · median · p99 of each round, then the median over rounds; ` +
      `Python on the JS thread (runPythonSync)`,
  );
  const cell = (s: readonly number[]) => s.map((v) => v.toFixed(2)).join(" · ");
  console.log(`| | ${cols.join(" | ")} |`);
  console.log(`|---|${cols.map(() => "---:").join("|")}|`);
  for (const [i, r] of rows.entries()) {
    console.log(`| round ${i + 1} | ${r.map(cell).join(" | ")} |`);
  }
  console.log(
    `| median | ${cols.map((_, i) => cell([0, 1, 2].map((k) => over(i, k)))).join(" | ")} |`,
  );
  for (const [k, what] of [[0, "means"], [1, "medians"]] as const) {
    const step = (name: string, a: number, b: number) => {
      const d = over(a, k) - over(b, k);
      return `${name} ${d >= 0 ? "+" : "−"}${Math.abs(d).toFixed(2)}`;
    };
    console.log(
      `\nPhases (µs, ${what}): ` + [
        step("custom call + C entry (vs jnp)", 2, 0),
        step("check+flatten", 3, 2),
        step("JS entry", 4, 3),
        step("counts", 5, 4),
        step("decode", 6, 5),
        step("no-op handler call and return", 7, 6),
        step("the handler's body", 8, 7),
        step("TS handler vs C++ sync", 8, 1),
        step("no-op TS handler vs C++ sync", 7, 1),
      ].join("; "),
    );
  }
}

/** A contender's per-call mean, median and p99, in µs. */
type Stats = [mean: number, median: number, p99: number];

if (import.meta.main) await main();
