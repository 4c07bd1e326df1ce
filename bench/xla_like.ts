/**
 * A TS handler called from another thread the way XLA calls it, without
 * XLA's noise: a C thread (tests' handler harness) writes the standard
 * frame afresh before every call (XLA builds it on its own stack, so its
 * cache lines are on the calling CPU, not the JS thread's) and does `--gap`
 * µs of other work between calls (XLA's and Python's own part of a jitted
 * call, ~5 µs). Contenders, interleaved in rounds on the same thread and
 * frame: the C no-op handler (the floor: the call itself) and the standard
 * TS handler (queued to the JS thread, which lingers between calls, and
 * back). Prints per-call medians and p90 of each round, and their medians.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/xla_like.ts [--rounds N] [--gap US]
 *
 * @module
 */
import { harness } from "../tests/_handler_harness.ts";
import { openBenchLibrary, roundTripLine } from "./bench_lib.ts";
import { standardFrame, standardHandler } from "./_handler_fixture.ts";

const arg = (name: string, dflt: number) => {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Number(Deno.args[i + 1]) : dflt;
};
const ROUNDS = arg("--rounds", 7);
const GAP_US = arg("--gap", 5);
const CALLS = 5000;

const h = harness();
using lib = openBenchLibrary();
using frame = standardFrame();
using ts = standardHandler();
const cNoop = lib.symbols.bench_c_address(1);

async function run(handler: Deno.PointerValue): Promise<{ median: number; p90: number }> {
  const out = new Float64Array(3);
  const errors = await h.hh_run_xla_like(handler, frame.pointer, CALLS, GAP_US * 1000, out);
  if (errors !== 0) throw new Error(`${errors} calls failed`);
  return { median: out[0]! / 1e3, p90: out[1]! / 1e3 };
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const rows: { c: number; ts: number; cP90: number; tsP90: number }[] = [];
await run(ts.pointer); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const c = await run(cNoop);
  const t = await run(ts.pointer);
  rows.push({ c: c.median, ts: t.median, cP90: c.p90, tsP90: t.p90 });
}
console.log(
  `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ` +
    `${ROUNDS} rounds of ${CALLS} calls; frame rewritten before each call, ${GAP_US} µs of other work after it`,
);
console.log(roundTripLine(lib));
console.log("| round | C no-op | TS handler | TS − C | C p90 | TS p90 |");
console.log("|---:|---:|---:|---:|---:|---:|");
for (const [i, r] of rows.entries()) {
  console.log(
    `| ${i + 1} | ${r.c.toFixed(3)} | ${r.ts.toFixed(3)} | ${(r.ts - r.c).toFixed(3)} | ` +
      `${r.cP90.toFixed(3)} | ${r.tsP90.toFixed(3)} |`,
  );
}
console.log(
  `| median | ${med(rows.map((r) => r.c)).toFixed(3)} | ${
    med(rows.map((r) => r.ts)).toFixed(3)
  } | ` +
    `${med(rows.map((r) => r.ts - r.c)).toFixed(3)} | ${
      med(rows.map((r) => r.cP90)).toFixed(3)
    } | ` +
    `${med(rows.map((r) => r.tsP90)).toFixed(3)} |`,
);
