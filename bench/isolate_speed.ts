/**
 * Isolated call speed (a script, not timed tests): prints medians and ratios.
 *
 *   deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env --allow-sys=loadavg \
 *     bench/isolate_speed.ts
 *
 * The no-op C handler with the standard frame (4 F32 arguments of ranks
 * 2,1,3,4, one result, 4 attributes): `Runtime.callSync` in-process
 * (baseline), the same library isolated (callSync, a guarded frame, and
 * `call`), and the bare round trip to the child (a symbol lookup: no frame).
 * The rounds interleave the kinds, so a change in the machine's load reaches
 * all of them; each figure is the median of the rounds. The load average
 * (`Deno.loadavg()`, with `--allow-sys=loadavg`) is printed before and after: on a shared machine only
 * the ratios of one run travel. docs/faults.md quotes the figures.
 *
 * @module
 */
import { HandlerLibrary, Runtime } from "../mod.ts";
import { handlersPath, standardBuilder } from "./_runtime_fixture.ts";

const REPS = Number(Deno.env.get("REPS") ?? 7);
const TARGET_US = 15;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function load(): string {
  try {
    return Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
  } catch {
    return "unknown (--allow-sys=loadavg shows it)";
  }
}

/** Nanoseconds per call of `f`, over `n` calls. */
function timed(n: number, f: () => void): number {
  const t = performance.now();
  for (let i = 0; i < n; i++) f();
  return (performance.now() - t) * 1e6 / n;
}

async function timedAsync(n: number, f: () => Promise<void>): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await f();
  return (performance.now() - t) * 1e6 / n;
}

using local = HandlerLibrary.open(handlersPath);
using isolated = HandlerLibrary.open(handlersPath, { isolate: true });
using rt = new Runtime({ threads: 1 });
const noop = local.handler("test_noop");
const noopIsolated = isolated.handler("test_noop");
using frame = standardBuilder().build();
using guarded = standardBuilder({ guard: true }).build();

const kinds = {
  inProcess: [] as number[],
  isolated: [] as number[],
  guarded: [] as number[],
  async: [] as number[],
  bare: [] as number[],
};
const before = load();
// Warm up: the child process starts, the frames' layouts are made.
timed(2_000, () => rt.callSync(noopIsolated, frame));
timed(200, () => rt.callSync(noopIsolated, guarded));
for (let r = 0; r < REPS; r++) {
  kinds.inProcess.push(timed(200_000, () => rt.callSync(noop, frame)));
  kinds.isolated.push(timed(20_000, () => rt.callSync(noopIsolated, frame)));
  kinds.guarded.push(timed(2_000, () => rt.callSync(noopIsolated, guarded)));
  kinds.async.push(await timedAsync(2_000, () => rt.call(noopIsolated, frame)));
  kinds.bare.push(timed(20_000, () => noopIsolated._isolated!.resolve("test_noop")));
}
const base = median(kinds.inProcess);
const show = (ns: number) => ns < 1000 ? `${ns.toFixed(1)} ns` : `${(ns / 1000).toFixed(2)} µs`;
const row = (what: string, xs: number[]) =>
  console.log(
    `${what.padEnd(44)} ${show(median(xs)).padStart(10)}  ${(median(xs) / base).toFixed(0)}x ` +
      `(rounds ${show(Math.min(...xs))} … ${show(Math.max(...xs))})`,
  );
console.log(`load average before: ${before}; ${REPS} rounds`);
row("in-process callSync (standard frame)", kinds.inProcess);
row("isolated callSync (standard frame)", kinds.isolated);
row("isolated callSync, guarded frame", kinds.guarded);
row("isolated call (async)", kinds.async);
row("bare round trip to the child (symbol lookup)", kinds.bare);
console.log(`load average after: ${load()}`);
const us = median(kinds.isolated) / 1000;
console.log(
  `target: isolated callSync <= ${TARGET_US} µs: ${us.toFixed(2)} µs, ` +
    `${us <= TARGET_US ? "met" : "not met"} (${(median(kinds.isolated) / base).toFixed(0)}x ` +
    `the in-process callSync)`,
);
