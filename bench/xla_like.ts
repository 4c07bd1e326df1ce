/**
 * A TS handler called from another thread the way XLA calls it, without
 * XLA's noise: a C thread (tests' handler harness) writes the standard
 * frame afresh before every call (XLA builds it on its own stack, so its
 * cache lines are on the calling CPU, not the JS thread's) and does `--gap`
 * µs of other work between calls (XLA's and Python's own part of a jitted
 * call, ~5 µs). Contenders, interleaved in rounds on the same thread and
 * frame: the C no-op handler (the floor: the call itself), the standard
 * TS handler (queued to the JS thread, which lingers between calls, and
 * back), and the same as an async function that first awaits (`await null`:
 * its caller waits for the Promise, the settled-early path). Prints per-call
 * medians and p90 of each round, and their medians.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/xla_like.ts [--rounds N] [--gap US]
 *
 * @module
 */
import { harness } from "../tests/_handler_harness.ts";
import { openBenchLibrary, roundTripLine } from "./bench_lib.ts";
import { standardAsyncHandler, standardFrame, standardHandler } from "./_handler_fixture.ts";

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
using tsAsync = standardAsyncHandler();
const cNoop = lib.symbols.bench_c_address(1);

async function run(handler: Deno.PointerValue): Promise<{ median: number; p90: number }> {
  const out = new Float64Array(3);
  const errors = await h.hh_run_xla_like(handler, frame.pointer, CALLS, GAP_US * 1000, out);
  if (errors !== 0) throw new Error(`${errors} calls failed`);
  return { median: out[0]! / 1e3, p90: out[1]! / 1e3 };
}

const rows: { c: number; ts: number; as: number; cP90: number; tsP90: number; asP90: number }[] =
  [];
await run(ts.pointer); // warm-up
await run(tsAsync.pointer);
for (let r = 0; r < ROUNDS; r++) {
  const c = await run(cNoop);
  const t = await run(ts.pointer);
  const a = await run(tsAsync.pointer);
  rows.push({ c: c.median, ts: t.median, as: a.median, cP90: c.p90, tsP90: t.p90, asP90: a.p90 });
}
console.log(
  `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ` +
    `${ROUNDS} rounds of ${CALLS} calls; frame rewritten before each call, ${GAP_US} µs of other work after it`,
);
console.log(roundTripLine(lib));
console.log(
  "| round | C no-op | TS handler | TS − C | async TS | async − TS | C p90 | TS p90 | async p90 |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
type Row = typeof rows[number];
const med = (f: (r: Row) => number) => rows.map(f).sort((a, b) => a - b)[rows.length >> 1]!;
const cells = (xs: number[]) => `| ${xs.map((x) => x.toFixed(3)).join(" | ")} |`;
const row = (r: Row) => [r.c, r.ts, r.ts - r.c, r.as, r.as - r.ts, r.cP90, r.tsP90, r.asP90];
for (const [i, r] of rows.entries()) console.log(`| ${i + 1} ${cells(row(r))}`);
// Each column's median over the rounds (the differences too: per round, then their median).
console.log(`| median ${cells(row(rows[0]!).map((_, k) => med((r) => row(r)[k]!)))}`);
