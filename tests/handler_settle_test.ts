/**
 * The settled-early path of async TS handlers called from other threads:
 * a Promise that settles within the binding's settle wait reaches the
 * caller as an available future; one that does not leaves the future
 * pending and completes it later; a wait of 0 never waits.
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, ErrorCode, Ffi, FfiError, handlerHostStats, Runtime } from "../mod.ts";

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
