/**
 * What `Runtime.ffiCall` costs over calling a prebuilt frame: medians
 * (7 interleaved rounds) of a no-op C handler called with the standard frame
 * (4 F32 arguments of ranks 2, 1, 3, 4, one result, 4 attributes) by
 *
 * - `Runtime.callSync` with the frame built once (the floor),
 * - `Runtime.call` with the frame built once (the off-thread call `ffiCall` makes),
 * - `Runtime.ffiCall` (results allocated every call, the frame kept per signature and pointed at
 *   each call's arrays, a C handler run on the calling thread),
 *
 * and the same for a no-op TS handler (which `call` and `ffiCall` run on the
 * JavaScript thread, so the difference is ffiCall's own work: no thread
 * hand-off) and for a TS handler that writes its result through a view
 * (`typed()`, as real handlers do), with the ratios to `callSync` of each,
 * all from the same run; the targets are judged on the median of each
 * round's ratio.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/ffi_call.ts
 */
import {
  array,
  DataType,
  Ffi,
  type FfiCallOptions,
  HandlerLibrary,
  Runtime,
  scalar,
} from "../mod.ts";
import { handlersPath, standardBuilder } from "./_runtime_fixture.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

const F32 = DataType.F32;
/** The standard frame as ffiCall options. */
const options: FfiCallOptions = {
  args: [
    { data: new Float32Array(6), shape: [2, 3] },
    { data: new Float32Array(5), shape: [5] },
    { data: new Float32Array(24), shape: [2, 3, 4] },
    { data: new Float32Array(16), shape: [2, 2, 2, 2] },
  ],
  results: [{ dtype: F32, shape: [2, 3] }],
  attrs: {
    alpha: scalar(F32, 0.5),
    n: scalar(DataType.S32, 3),
    mode: "reflect",
    axes: array(DataType.S64, [0, 2, 3]),
  },
};

using lib = HandlerLibrary.open(handlersPath);
using rt = new Runtime({ threads: 1 });
const noop = lib.handler("test_noop");
using frame = standardBuilder().build();

/** ns per call of `n` calls of `fn`. */
async function time(n: number, fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) * 1e6) / n;
}

using tsNoop = Ffi.bind().arg().arg().arg().arg().ret().attrs().to(() => {});
/** A TS handler as real ones are: it writes its result through a view (`typed()`). */
using tsWrites = Ffi.bind().arg().arg().arg().arg().ret().attrs().to((_a, _b, _c, _d, y) => {
  y.typed()[0] = 1;
});

const kinds = { C: noop, TS: tsNoop, "TS typed": tsWrites };
const rows: Record<string, number[]> = {};
const calls: [string, number, () => unknown][] = [];
for (const [kind, h] of Object.entries(kinds)) {
  calls.push([`${kind} callSync`, 100_000, () => rt.callSync(h, frame)]);
  calls.push([`${kind} call`, kind === "C" ? 3_000 : 20_000, () => rt.call(h, frame)]);
  calls.push([`${kind} ffiCall`, kind === "C" ? 3_000 : 20_000, () => rt.ffiCall(h, options)]);
  if (kind === "TS typed") calls.splice(-2, 1); // its call is TS call's
}
for (const [, , f] of calls) await time(1_000, f); // warm-up
for (let round = 0; round < 7; round++) {
  for (const [name, n, f] of calls) (rows[name] ??= []).push(await time(n, f));
}
const fmt = (ns: number) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
const load = Deno.loadavg().map((v) => v.toFixed(2)).join(" ");
console.log(`standard frame, no-op handlers; medians of 7 rounds; load average ${load}`);
for (const kind of Object.keys(kinds)) {
  const floor = median(rows[`${kind} callSync`]!);
  for (const what of ["callSync", "call", "ffiCall"]) {
    const xs = rows[`${kind} ${what}`];
    if (xs === undefined) continue;
    const m = median(xs);
    console.log(
      `${`${kind} ${what}`.padEnd(17)} ${fmt(m).padStart(9)}  ` +
        `(${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})  ` +
        `${(m / floor).toFixed(1)}× callSync with a prebuilt frame`,
    );
  }
  if (rows[`${kind} call`] === undefined) continue;
  console.log(
    `${kind}: ffiCall over call with a prebuilt frame: ` +
      `${fmt(median(rows[`${kind} ffiCall`]!) - median(rows[`${kind} call`]!))}`,
  );
}
// The targets: ffiCall of a TS handler within 3× callSync with a prebuilt frame; of a synchronous
// C handler (run inline, as XLA's CPU runtime does) within 30×. Each round's ratio is of times
// taken moments apart (a VM whose speed changes during a run changes both), and the target is
// their median.
const ratioOf = (kind: string) => {
  const floor = rows[`${kind} callSync`]!;
  return median(rows[`${kind} ffiCall`]!.map((t, r) => t / floor[r]!));
};
for (const [kind, target] of [["TS", 3], ["C", 30]] as const) {
  const ratio = ratioOf(kind);
  console.log(
    `target: ${kind} ffiCall <= ${target}x callSync: ${ratio.toFixed(1)}x, ` +
      `${ratio <= target ? "met" : "not met"}`,
  );
}
console.log(`(TS typed ffiCall: ${ratioOf("TS typed").toFixed(1)}x its callSync)`);
