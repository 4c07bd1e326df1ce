/**
 * Reliability of TS handlers: stress from runtime threads (in a child
 * process with a timeout), leak counters over every TS call path, and use
 * after close (closed handlers, kept pointers called from TS and from C,
 * registered names, a handler released while its calls are queued).
 */
import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  HandlerBundle,
  handlerHostStats,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { assertReleased, settledStats, tsLeakPaths } from "./_leak_paths.ts";
import { call, frame, runThreads } from "./_handler_harness.ts";
import { runDeno } from "./_child.ts";
import { isFfi } from "./_assert.ts";

/** Calls per thread of the stress: XLA_FFI_DENO_STRESS_ITERATIONS, else 10 000. */
function stressIterations(): number {
  const v = Deno.env.get("XLA_FFI_DENO_STRESS_ITERATIONS");
  const n = v === undefined ? 10_000 : Number(v);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new RangeError(`bad XLA_FFI_DENO_STRESS_ITERATIONS ${v}`);
  }
  return n;
}

Deno.test("stress: 8 runtime threads of TS handler calls, sync/async/error mixed, all counted", async () => {
  const iterations = stressIterations();
  // A child process: a deadlock fails the test at the timeout instead of hanging the suite.
  const limitMs = 60_000 + iterations * 8 * 0.2; // 0.2 ms per call on top of a minute
  const { code, stdout: out, stderr: err } = await runDeno(
    new URL("./_ts_stress.ts", import.meta.url),
    [String(iterations)],
    { timeoutMs: limitMs },
  );
  assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
  assert.match(out, new RegExp(`^ok ${8 * iterations} calls in \\d+ ms`));
  console.log(`stress (TS handlers): ${out.trim()}`);
});

Deno.test("leaks: every TS handler call path releases what it creates (counts match)", async () => {
  using rt = new Runtime({ threads: 2 });
  const ts = tsLeakPaths(rt);
  try {
    for (const [name, run] of Object.entries(ts.paths)) {
      const before = runtimeDebugStats();
      const h0 = handlerHostStats();
      await run(2000);
      const after = await settledStats();
      const h1 = handlerHostStats();
      const d = assertReleased(name, before, after);
      assert.ok(d("calls") >= 2000, `${name}: calls ran`);
      assert.equal(h1.liveStates, h0.liveStates, `${name}: TS states`);
      assert.equal(h1.failedCompletions, h0.failedCompletions, `${name}: failed completions`);
    }
    assert.deepEqual(ts.counts, {
      sync: 2000,
      async: 2000,
      error: 2000,
      instantiate: 2000,
      execute: 2000,
      threads: 2000,
    });
  } finally {
    ts.close();
  }
});

Deno.test("use after close: a closed TS handler, its kept pointer, from TS and from C", async () => {
  const failed0 = handlerHostStats().failedCompletions; // process-wide
  using rt = new Runtime({ threads: 0 });
  using f = new CallFrameBuilder().build();
  const h = Ffi.bind().to(() => {});
  const pointer = h.pointer;
  const slot = h.slot;
  rt.callSync(h, f);
  h.close();
  h.close(); // closing twice is fine
  // The Handler object itself.
  const closed = isFfi(ErrorCode.FAILED_PRECONDITION, /The handler is closed/);
  assert.throws(() => h.pointer, closed);
  assert.throws(() => rt.callSync(h, f), closed);
  await assert.rejects(rt.call(h, f), closed);
  await assert.rejects(rt.callOnThreads(h, f), closed);
  assert.throws(() => rt.register(`closed.${Deno.pid}`, h), closed);
  // The entry point kept by address: called on the JS thread, another thread, runtime threads.
  const released = isFfi(
    ErrorCode.FAILED_PRECONDITION,
    new RegExp(`TS handler entry point ${slot} was released`),
  );
  const kept = { pointer };
  assert.throws(() => rt.callSync(kept, f), released);
  await assert.rejects(rt.call(kept, f), released);
  const r = await rt.callOnThreads(kept, f, { threads: 2, iterations: 50 });
  assert.deepEqual([r.ok, r.failed], [0, 100]);
  assert.match(r.firstError!.message, /was released/);
  assert.throws(() => rt.metadata(kept), released);
  // Kept by C code (the independent harness) and called from C, on its thread and others.
  using tf = frame({});
  assert.deepEqual(await call(pointer, tf), {
    code: ErrorCode.FAILED_PRECONDITION,
    message: `TS handler entry point ${slot} was released`,
  });
  const t = await runThreads([pointer, pointer], [tf, tf], 100);
  assert.equal(t.errors, 200);
  assert.match(t.message, /was released/);
  assert.equal(handlerHostStats().failedCompletions, failed0);
});

Deno.test("use after close: names registered for closed TS handlers and bundles fail", async () => {
  using rt = new Runtime({ threads: 0 });
  using f = new CallFrameBuilder().attr("start", 1, DataType.S32).build();
  using g = new CallFrameBuilder().build();
  const n = `reliab.ts.closed.${Deno.pid}`;
  const h = Ffi.bind().to(() => {});
  rt.register(n, h);
  rt.callSync(n, g);
  h.close();
  const released = isFfi(ErrorCode.FAILED_PRECONDITION, /TS handler entry point \d+ was released/);
  assert.throws(() => rt.callSync(n, g), released);
  await assert.rejects(rt.call(n, g), released);
  const r = await rt.callOnThreads(n, g, { threads: 2, iterations: 10 });
  assert.deepEqual([r.ok, r.failed], [0, 20]);
  // A bundle: its instantiate stage by name.
  const bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().attr("start", "i32").to((s) => ({ s })),
    execute: Ffi.bind().state().to(() => {}),
  });
  rt.register(`${n}.bundle`, bundle);
  (await rt.instantiate(`${n}.bundle`, f)).close();
  bundle.close();
  await assert.rejects(rt.instantiate(`${n}.bundle`, f), released);
  assert.throws(() => rt.callSync(`${n}.bundle`, g), released);
  // Another runtime finds the same registrations (the registry is process-wide).
  using rt2 = new Runtime({ threads: 0 });
  assert.throws(() => rt2.callSync(n, g), released);
});

Deno.test("use after close: a TS handler closed while its calls are queued from threads", async () => {
  using rt = new Runtime({ threads: 0 });
  using f = new CallFrameBuilder().build();
  let calls = 0;
  const h = Ffi.bind().to(() => {
    if (++calls === 100) h.close(); // later and queued calls find the slot released
  });
  const threads = 4, iterations = 1000;
  const r = await rt.callOnThreads(h, f, { threads, iterations });
  assert.equal(r.ok + r.failed, threads * iterations);
  assert.equal(r.ok, calls);
  assert.ok(calls >= 100 && r.failed > 0, `${calls} calls, ${r.failed} failed`);
  assert.match(r.firstError!.message, /TS handler entry point \d+ was released/);
  assert.equal(r.firstError!.code, ErrorCode.FAILED_PRECONDITION);
});

Deno.test("limits: a frame larger than the TS flat buffer is RESOURCE_EXHAUSTED, then calls go on", async () => {
  using rt = new Runtime({ threads: 0 });
  let calls = 0;
  using h = Ffi.bind().attrs().to((d) => void (calls += d.size));
  // 256 KiB flat buffer: a 300 000-byte string attribute does not fit.
  using big = new CallFrameBuilder().attr("s", "x".repeat(300_000)).build();
  const tooLarge = isFfi(ErrorCode.RESOURCE_EXHAUSTED, /too large for the TS handler flat buffer/);
  assert.throws(() => rt.callSync(h, big), tooLarge);
  await assert.rejects(rt.call(h, big), tooLarge);
  const r = await rt.callOnThreads(h, big, { threads: 2, iterations: 3 });
  assert.deepEqual([r.ok, r.failed], [0, 6]);
  assert.equal(r.firstError?.code, ErrorCode.RESOURCE_EXHAUSTED);
  assert.equal(calls, 0);
  // A frame that fits (a 200 000-byte string, a rank-256 buffer) is served.
  using fits = new CallFrameBuilder().attr("s", "x".repeat(200_000))
    .arg(new Float32Array(1), new Array(256).fill(1)).build();
  using h2 = Ffi.bind().arg(DataType.F32, 256).attrs().to((b, d) =>
    void (calls += b.rank + d.size)
  );
  rt.callSync(h2, fits);
  assert.equal(calls, 257);
  // From other threads too: a caller flattens a small frame itself, and leaves one this large
  // (beyond its 4 KiB copy) to the JS thread.
  const threaded = await rt.callOnThreads(h2, fits, { threads: 2, iterations: 2 });
  assert.deepEqual([threaded.ok, threaded.failed], [4, 0], threaded.firstError?.message);
  assert.equal(calls, 257 * 5);
});
