/**
 * The settled-early path of async TS handlers called from other threads:
 * a Promise that settles within the binding's settle wait reaches the
 * caller as an available future; one that does not leaves the future
 * pending and completes it later; a wait of 0 never waits.
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
} from "../mod.ts";
import { frame, harness } from "./_handler_harness.ts";

function settledEarly(): number {
  return handlerHostStats().settledEarly;
}

Deno.test("an await-null handler settles while its foreign caller waits", async () => {
  using rt = new Runtime({ threads: 1 });
  let calls = 0;
  using h = Ffi.bind().to(async () => {
    await null;
    calls++;
  }, { settleWaitUs: 1000 });
  using f = new CallFrameBuilder().build();
  const before = settledEarly();
  const r = await rt.callOnThreads(h, f, { threads: 1, iterations: 200 });
  assert.equal(r.ok, 200);
  assert.equal(calls, 200);
  // With a 1 ms bound nearly every call settles in time; the first may wait for a wake-up.
  assert.ok(settledEarly() - before >= 100, `settled early: ${settledEarly() - before} of 200`);
});

Deno.test("a failure settled in time reaches the caller with its code and message", async () => {
  using rt = new Runtime({ threads: 1 });
  using h = Ffi.bind().to(async () => {
    await null;
    throw new FfiError(ErrorCode.OUT_OF_RANGE, "late failure");
  }, { settleWaitUs: 1000 });
  using f = new CallFrameBuilder().build();
  const before = settledEarly();
  const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 20 });
  assert.equal(r.ok, 0);
  assert.equal(r.failed, 40);
  assert.equal(r.firstError?.code, ErrorCode.OUT_OF_RANGE);
  assert.equal(r.firstError?.message, "late failure");
  assert.ok(settledEarly() > before);
});

Deno.test("a Promise slower than the wait leaves a pending future that completes later", async () => {
  using rt = new Runtime({ threads: 1 });
  let done = 0;
  using h = Ffi.bind().to(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    done++;
  }, { settleWaitUs: 20 });
  using f = new CallFrameBuilder().build();
  const before = settledEarly();
  const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 3 });
  assert.equal(r.ok, 6);
  assert.equal(done, 6);
  assert.equal(settledEarly(), before);
});

Deno.test("settleWaitUs 0 never waits; out-of-range waits are refused", async () => {
  using rt = new Runtime({ threads: 1 });
  using h = Ffi.bind().to(async () => {
    await null;
  }, { settleWaitUs: 0 });
  using f = new CallFrameBuilder().build();
  const before = settledEarly();
  const r = await rt.callOnThreads(h, f, { threads: 1, iterations: 50 });
  assert.equal(r.ok, 50);
  assert.equal(settledEarly(), before);
  assert.throws(() => Ffi.bind().to(async () => {}, { settleWaitUs: -1 }), RangeError);
  assert.throws(() => Ffi.bind().to(async () => {}, { settleWaitUs: 1001 }), RangeError);
  assert.throws(() => Ffi.bind().to(async () => {}, { settleWaitUs: NaN }), RangeError);
});

Deno.test("a synchronous handler's Promise settles early too; errors keep their code", async () => {
  using rt = new Runtime({ threads: 1 });
  let fail = false;
  using h = Ffi.bind().to(
    () => fail ? Promise.reject(new FfiError(ErrorCode.ABORTED, "rejected")) : Promise.resolve(),
    { settleWaitUs: 1000 },
  );
  using f = new CallFrameBuilder().build();
  const before = settledEarly();
  const ok = await rt.callOnThreads(h, f, { threads: 1, iterations: 100 });
  assert.equal(ok.ok, 100);
  assert.ok(settledEarly() - before >= 50, `settled early: ${settledEarly() - before} of 100`);
  fail = true;
  const bad = await rt.callOnThreads(h, f, { threads: 1, iterations: 10 });
  assert.equal(bad.failed, 10);
  assert.equal(bad.firstError?.code, ErrorCode.ABORTED);
  assert.equal(bad.firstError?.message, "rejected");
});

Deno.test("after a stall of the JS thread, Promises settle while their callers wait again", async () => {
  // A handler that blocks the JS thread longer than its caller's wait: a caller that does not wait
  // for its futures (as XLA running independent work) gives up on each call and queues the next,
  // and once the stall ends the queued calls are served in a burst, their Promises' reactions
  // queued together. The first reaction must not go on serving calls while the others wait behind
  // it: each later Promise would settle only once the next call was served, one call late, and
  // every later caller would wait out its whole bound (before the fix: 0 of 3000 settled early in
  // three runs of four, 2342 in the fourth).
  let calls = 0;
  using h = Ffi.bind().arg(DataType.S32).ret(DataType.S32).to(async (x, out) => {
    if (++calls === 300) {
      const until = performance.now() + 3;
      while (performance.now() < until) { /* the JS thread stalls for 3 ms */ }
    }
    await null;
    out.typed()[0]! += x.typed()[0]!;
  });
  const x = new Int32Array([1]), out = new Int32Array(1);
  using f = frame({
    args: [{ dtype: DataType.S32, dims: [1], data: x }],
    rets: [{ dtype: DataType.S32, dims: [1], data: out }],
  });
  const before = settledEarly();
  const r = new Float64Array(3);
  assert.equal(await harness().hh_run_xla_like(h.pointer, f.pointer, 3000, 5000, r), 0);
  const early = settledEarly() - before;
  for (let i = 0; i < 100 && out[0] !== 3000; i++) await new Promise((ok) => setTimeout(ok, 1));
  assert.equal(out[0], 3000, "every call ran once");
  // After the fix 2750-2939 of 3000 in ten runs (the stall itself costs some 60 calls their wait).
  assert.ok(early >= 2400, `settled early: ${early} of 3000`);
});
