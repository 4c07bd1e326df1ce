/**
 * Stress of TS handlers called from runtime threads (Runtime.callOnThreads):
 * 8 threads in all, each making `iterations` calls, split over two TS
 * handlers run at once: one bound synchronously that by turns returns, returns
 * a Promise, or throws an FfiError; one async that by turns resolves or
 * rejects. Every call is counted per kind in TS and checked against the
 * runtime's results and counters: none lost, none duplicated.
 *
 * Run as a child process by tests/reliability_ts_test.ts (with a timeout, so a
 * deadlock fails instead of hanging the suite), or directly:
 *   deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env \
 *     tests/_ts_stress.ts [iterations per thread, default 100000]
 * Prints one line "ok <calls> calls in <ms> ms: <counts JSON>" or throws.
 */
import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  handlerHostStats,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { settledStats } from "./_leak_paths.ts";

/** Per-kind counts of one stress run. */
export interface StressCounts {
  calls: number;
  sync: number;
  promiseStarted: number;
  promiseDone: number;
  thrown: number;
  asyncStarted: number;
  resolved: number;
  rejected: number;
}

/** Runs the stress; returns the total calls and the time. Throws on any mismatch. */
export async function tsStress(
  iterations: number,
): Promise<{ calls: number; ms: number; c: StressCounts }> {
  const c: StressCounts = {
    calls: 0,
    sync: 0,
    promiseStarted: 0,
    promiseDone: 0,
    thrown: 0,
    asyncStarted: 0,
    resolved: 0,
    rejected: 0,
  };
  const D = DataType;
  const syncThreads = 4, asyncThreads = 4;
  const before = runtimeDebugStats();
  const host0 = handlerHostStats();
  const t0 = performance.now();
  {
    using rt = new Runtime({ threads: 2 });
    let k = 0;
    using mixed = Ffi.bind().arg(D.S32).ret(D.S32).to((x, out) => {
      c.calls++;
      switch (k++ % 3) {
        case 0:
          c.sync++;
          out.typed()[0]! += x.typed()[0]!;
          return undefined;
        case 1:
          c.promiseStarted++;
          return Promise.resolve().then(() => void c.promiseDone++);
        default:
          c.thrown++;
          throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "stress: no room");
      }
    });
    let j = 0;
    using asyncH = Ffi.bind().arg(D.S32).to(async (x) => {
      c.calls++;
      c.asyncStarted++;
      await null;
      if (j++ % 2 === 0) {
        c.resolved++;
        return;
      }
      c.rejected++;
      throw new FfiError(ErrorCode.ABORTED, `stress: rejected ${x.typed()[0]}`);
    });
    const out = new Int32Array(1);
    using f = new CallFrameBuilder().arg(new Int32Array([1])).ret(out).build();
    using g = new CallFrameBuilder().arg(new Int32Array([7])).build();
    const [a, b] = await Promise.all([
      rt.callOnThreads(mixed, f, { threads: syncThreads, iterations }),
      rt.callOnThreads(asyncH, g, { threads: asyncThreads, iterations }),
    ]);
    const na = syncThreads * iterations, nb = asyncThreads * iterations;
    // Every call ran exactly once, and each kind is counted exactly.
    assert.equal(c.calls, na + nb, "calls that reached TS");
    assert.equal(c.sync + c.promiseStarted + c.thrown, na);
    assert.equal(c.sync, Math.ceil(na / 3));
    assert.equal(c.thrown, Math.floor(na / 3));
    assert.equal(c.promiseDone, c.promiseStarted);
    assert.equal(a!.ok + a!.failed, na);
    assert.equal(a!.ok, c.sync + c.promiseDone);
    assert.equal(a!.failed, c.thrown);
    if (c.thrown > 0) {
      assert.equal(a!.firstError?.code, ErrorCode.RESOURCE_EXHAUSTED);
      assert.equal(a!.firstError?.message, "stress: no room");
    }
    assert.equal(out[0], c.sync, "each sync call added once");
    assert.equal(c.asyncStarted, nb);
    assert.equal(c.resolved, Math.ceil(nb / 2));
    assert.equal(c.rejected, Math.floor(nb / 2));
    assert.equal(b!.ok, c.resolved);
    assert.equal(b!.failed, c.rejected);
    if (c.rejected > 0) {
      assert.equal(b!.firstError?.code, ErrorCode.ABORTED);
      assert.equal(b!.firstError?.message, "stress: rejected 7");
    }
  }
  const ms = performance.now() - t0;
  const after = await settledStats();
  const host1 = handlerHostStats();
  const total = (syncThreads + asyncThreads) * iterations;
  const d = (k: keyof typeof after) => after[k] - before[k];
  assert.equal(d("calls"), total, "runtime calls");
  // A future per Promise-returning call of the sync slot and per call of the async slot.
  assert.equal(d("futuresCreated"), c.promiseStarted + c.asyncStarted, "futures created");
  assert.equal(d("futuresCreated"), d("futuresDestroyed"), "futures released");
  assert.equal(d("errorsCreated"), d("errorsDestroyed"), "errors released");
  assert.equal(host1.foreignCalls - host0.foreignCalls, total, "foreign calls served");
  assert.equal(host1.failedCompletions, host0.failedCompletions, "failed completions");
  return { calls: total, ms, c };
}

if (import.meta.main) {
  const iterations = Number(Deno.args[0] ?? 100_000);
  const r = await tsStress(iterations);
  console.log(`ok ${r.calls} calls in ${r.ms.toFixed(0)} ms: ${JSON.stringify(r.c)}`);
}
