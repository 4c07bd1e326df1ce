/**
 * Leak check of the runtime's call paths, with C and TS handlers: runs each
 * path N times (default 1e6; `deno task leak-check [N [path-filter [rounds]]]`)
 * after an untimed warm-up round of N, and checks that the native counters of errors,
 * futures, frames, states and instances match, that TS handlers hold no more
 * states and had no failed future completion (handlerHostStats), and that
 * resident memory outside V8's JS heap (RSS minus the heap's reserved total)
 * grew by at most 1 MiB. Prints one line per path with both figures; exits 1
 * on a failure.
 */
import {
  CallFrameBuilder,
  DataType,
  handlerHostStats,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { openTestHandlers } from "../tests/_runtime_handlers.ts";
import { leakPaths, residentBytes, settledStats, tsLeakPaths } from "../tests/_leak_paths.ts";

const n = Number(Deno.args[0] ?? 1_000_000);
const only = Deno.args[1]; // optional: run only the paths whose name contains this
const rounds = Number(Deno.args[2] ?? 1); // measured rounds per path
// With --v8-flags=--expose-gc (the task sets it) the JS heap is collected
// before each reading, so RSS shows native growth rather than garbage. The
// task also fixes V8's young generation at 16 MiB: it otherwise grows and
// shrinks its reservation by megabytes between readings (seen as noise of
// +-12 MiB on the TS state path).
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const limit = 1 << 20;
/** Collects, then lets the FinalizationRegistry free what was collected (it runs as tasks). */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 0));
  }
}
using lib = openTestHandlers();
using rt = new Runtime({ threads: 2 });
const ts = tsLeakPaths(rt);
let failed = false;
const pairs = [
  ["errorsCreated", "errorsDestroyed"],
  ["futuresCreated", "futuresDestroyed"],
  ["framesCreated", "framesDestroyed"],
  ["statesSet", "statesDeleted"],
  ["instancesCreated", "instancesDestroyed"],
  ["tasksScheduled", "tasksRun"],
] as const;
// Frames never closed: reclaimed when collected (a FinalizationRegistry frees
// them after a collection; `collect` below gives it the turns it needs).
const forgotten = {
  "frame build (unclosed)": (count: number) => {
    const b = new CallFrameBuilder().arg(new Float32Array(4)).ret(new Float32Array(4))
      .attr("k", 1, DataType.S32).attr("s", "text");
    for (let i = 0; i < count; i++) b.build();
    return Promise.resolve();
  },
};
const paths = Object.entries({ ...leakPaths(rt, lib), ...ts.paths, ...forgotten });
const selected = paths.filter(([name]) => only === undefined || name.includes(only));
if (selected.length === 0) {
  console.log(`no path matches '${only}'; paths: ${paths.map(([name]) => name).join(", ")}`);
  failed = true;
}
for (const [name, run] of selected) {
  await run(n); // warm-up: one untimed round (allocator arenas, Deno's FFI threads, JIT)
  for (let r = 1; r < rounds; r++) await run(n); // more warm-up rounds
  await collect();
  const rss0 = residentBytes();
  const s0 = runtimeDebugStats();
  const h0 = handlerHostStats();
  const t0 = performance.now();
  await run(n);
  const ms = performance.now() - t0;
  await collect(); // frames left unclosed are freed by their finalizers here
  const s1 = await settledStats();
  const h1 = handlerHostStats();
  await collect();
  const rss1 = residentBytes();
  const growth = rss1.native - rss0.native;
  const counts = pairs.map(([c, d]) => {
    const created = s1[c] - s0[c], destroyed = s1[d] - s0[d];
    if (created !== destroyed) failed = true;
    return `${c.replace(/Created|Set|Scheduled/, "")} ${created}/${destroyed}`;
  });
  if (name.startsWith("TS ")) {
    const states = h1.liveStates - h0.liveStates;
    const failedCompletions = h1.failedCompletions - h0.failedCompletions;
    if (states !== 0 || failedCompletions !== 0) failed = true;
    counts.push(
      `TS states ${states >= 0 ? "+" : ""}${states}, failed completions ${failedCompletions}`,
    );
  }
  if (growth > limit) failed = true;
  const kib = (b: number) => `${b >= 0 ? "+" : ""}${(b / 1024).toFixed(0)} KiB`;
  console.log(
    `${name.padEnd(20)} ${n} calls in ${(ms / 1000).toFixed(2)} s, native RSS ${kib(growth)} ` +
      `(RSS ${kib(rss1.rss - rss0.rss)}); ${counts.join(", ")}`,
  );
}
ts.close();
console.log(failed ? "LEAK CHECK FAILED" : "leak check passed");
if (failed) Deno.exit(1);
