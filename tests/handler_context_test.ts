import assert from "node:assert/strict";
import { DataType, ErrorCode, ExecutionStage } from "../src/abi/enums.ts";
import { CountDownPromise, FfiPromise, Future } from "../src/future.ts";
import { Ffi, HandlerBundle, handlerHostStats, type ThreadPool } from "../src/handler/mod.ts";
import { awaitFuture, call, callSync, frame, harness } from "./_handler_harness.ts";
import { captureStderr } from "./_stderr.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

function withCtx<T>(
  runId: number,
  ordinal: number,
  fn: (ctx: Deno.PointerObject) => Promise<T>,
  pool = 0,
  stream = 0,
): Promise<T> {
  const ctx = harness().hh_ctx_new(runId, ordinal, pool, stream)!;
  return fn(ctx).finally(() => harness().hh_ctx_free(ctx));
}

Deno.test({
  name: "run id, device ordinal, stage, api and execution context",
  ...opts,
  fn: () =>
    withCtx(42, 42, async (ctx) => {
      let got: unknown[] = [];
      using h = Ffi.bind().ctx("runId").ctx("deviceOrdinal").ctx("stage").ctx("api")
        .ctx("executionContext").to((...v) => {
          got = v;
        });
      using f = frame({ ctx });
      assert.equal(await call(h.pointer, f), null);
      assert.deepEqual(got.slice(0, 3), [42, 42, ExecutionStage.EXECUTE]);
      assert.equal(got[3], Number(Deno.UnsafePointer.value(harness().hh_api())));
      assert.equal(got[4], Number(Deno.UnsafePointer.value(ctx)));
    }),
});

Deno.test({
  name: "user data by type id, and a missing one is a decode diagnostic",
  ...opts,
  fn: () =>
    withCtx(1, 0, async (ctx) => {
      harness().hh_ctx_add_user_data(ctx, 42, 0xdead0);
      let got: unknown;
      using h = Ffi.bind().userData(42).to((p) => {
        got = p;
      });
      using f = frame({ ctx });
      assert.equal(await call(h.pointer, f), null);
      assert.equal(got, 0xdead0);
      using missing = Ffi.bind().userData(7).to(() => {});
      assert.deepEqual(await call(missing.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message:
          "[execute] Failed to decode all FFI handler operands (bad operands at: 0)\nDiagnostics:\n" +
          "Failed to get user data from execution context: " +
          "User data with type id 7 not found in execution context",
      });
    }),
});

Deno.test({
  name: "stream: available when the runtime has one, else a diagnostic",
  ...opts,
  fn: async () => {
    let got: unknown;
    using h = Ffi.bind().ctx("stream").to((s) => {
      got = s;
    });
    await withCtx(
      0,
      0,
      async (ctx) => {
        using f = frame({ ctx });
        assert.equal(await call(h.pointer, f), null);
        assert.equal(got, 0x5000);
      },
      0,
      0x5000,
    );
    await withCtx(0, 0, async (ctx) => {
      using f = frame({ ctx });
      const r = await call(h.pointer, f);
      assert.match(
        r!.message,
        /Failed to get platform stream: XLA FFI GPU stream is not available$/,
      );
    });
  },
});

Deno.test({
  name: "scratch allocator frees everything when the call ends",
  ...opts,
  fn: () =>
    withCtx(0, 0, async (ctx) => {
      let during = -1;
      using h = Ffi.bind().ctx("scratch").to((s) => {
        s.allocate(100);
        s.allocate(64, 8);
        during = Number(harness().hh_ctx_live_allocations(ctx));
        assert.throws(
          () => s.allocate(8, 3),
          /Failed to allocate scratch memory: Unsupported alignment: 3/,
        );
      });
      using f = frame({ ctx });
      assert.equal(await call(h.pointer, f), null);
      assert.equal(during, 2);
      assert.equal(Number(harness().hh_ctx_live_allocations(ctx)), 0);
    }),
});

Deno.test({
  name: "state: instantiate returns a TS object, execute reads it, the runtime's deleter frees it",
  ...opts,
  fn: async () => {
    const before = handlerHostStats().liveStates;
    using bundle = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().attr("start", "i32").to((start) => ({ calls: start })),
      execute: Ffi.bind().state<{ calls: number }>().ret(DataType.S32).to((s, out) => {
        s.calls++;
        out.typed()[0] = s.calls;
      }),
    });
    assert.deepEqual(bundle.pointers().map((p) => p === null), [false, true, true, false]);
    const ctx = harness().hh_ctx_new(0, 0, 0, 0)!;
    try {
      {
        using f = frame({ ctx, rets: [{ dtype: DataType.S32, dims: [1] }] });
        const r = await call(bundle.execute.pointer, f);
        assert.equal(r?.code, ErrorCode.INVALID_ARGUMENT);
        assert.match(r!.message, /Failed to get state from execution context: State is not set/);
      }
      using inst = frame({
        ctx,
        stage: ExecutionStage.INSTANTIATE,
        attrs: { start: { scalar: DataType.S32, value: 10 } },
      });
      assert.equal(await call(bundle.instantiate!.pointer, inst), null);
      assert.equal(harness().hh_ctx_has_state(ctx), 1);
      assert.equal(handlerHostStats().liveStates, before + 1);
      const out = new Int32Array(1);
      using f = frame({ ctx, rets: [{ dtype: DataType.S32, dims: [1], data: out }] });
      assert.equal(await call(bundle.execute.pointer, f), null);
      assert.equal(await call(bundle.execute.pointer, f), null);
      assert.equal(out[0], 12);
      // State already set: the runtime's error comes back.
      const again = await call(bundle.instantiate!.pointer, inst);
      assert.equal(again?.code, ErrorCode.INTERNAL);
      assert.match(again!.message, /State is already set/);
    } finally {
      harness().hh_ctx_free(ctx);
    }
    assert.equal(handlerHostStats().liveStates, before);
  },
});

Deno.test({
  name: "async: a Promise becomes a future completed with SetAvailable / SetError",
  ...opts,
  fn: async () => {
    const out = new Float32Array(1);
    using ok = Ffi.bind().ret(DataType.F32).to(async (r) => {
      await new Promise((res) => setTimeout(res, 5));
      r.typed()[0] = 3.5;
    });
    using bad = Ffi.bind().to(async () => {
      await Promise.resolve();
      throw new RangeError("late failure");
    });
    using f = frame({ rets: [{ dtype: DataType.F32, dims: [1], data: out }] });
    const { error, future } = callSync(ok.pointer, f);
    assert.equal(error, null);
    assert.notEqual(future, null);
    assert.equal(harness().hh_future_done(future), 0); // returned before the Promise settled
    assert.equal(await awaitFuture(future!), null);
    assert.equal(out[0], 3.5);
    using g = frame({});
    assert.deepEqual(await call(bad.pointer, g), {
      code: ErrorCode.UNKNOWN,
      message: "XLA FFI call failed: late failure",
    });
    assert.equal(handlerHostStats().failedCompletions, 0);
  },
});

Deno.test({
  name: "async: a runtime without futures gets an error; returning a Future works",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().to(() => Promise.resolve());
    using f = frame({ api: harness().hh_api_without_futures() });
    assert.deepEqual(await call(h.pointer, f), {
      code: ErrorCode.UNIMPLEMENTED,
      message: "The runtime does not support futures (no Future_Create)",
    });
    const p = new FfiPromise();
    using viaFuture = Ffi.bind().to(() => p.future());
    using g = frame({});
    const { error, future } = callSync(viaFuture.pointer, g);
    assert.equal(error, null);
    setTimeout(() => p.setError(new Error("Test error")), 1);
    assert.deepEqual(await awaitFuture(future!), {
      code: ErrorCode.UNKNOWN,
      message: "XLA FFI call failed: Test error",
    });
  },
});

Deno.test({
  name: "a failed future completion is counted and reported (stderr), never dropped silently",
  ...opts,
  fn: async () => {
    const before = handlerHostStats().failedCompletions;
    using h = Ffi.bind().to(() => Promise.resolve());
    using f = frame({ api: harness().hh_api_failing_completion() });
    const { result: { error, future }, text } = await captureStderr(async () => {
      const r = callSync(h.pointer, f);
      await new Promise((r) => setTimeout(r, 1));
      return r;
    });
    assert.equal(error, null);
    assert.equal(
      text,
      "deno-xla-ffi: Failed to signal XLA_FFI_Future completion: SetAvailable refused by the " +
        "test runtime\n",
    );
    assert.equal(harness().hh_future_done(future), 0); // the runtime refused the completion
    harness().hh_future_free(future);
    assert.equal(handlerHostStats().failedCompletions, before + 1);
  },
});

Deno.test({
  name: "thread pool: a handler completes its future from a native task on the pool",
  ...opts,
  fn: () =>
    withCtx(0, 0, async (ctx) => {
      let pool: ThreadPool | undefined;
      using h = Ffi.bind().ctx("threadPool").to((p) => {
        pool = p;
      });
      using f = frame({ ctx });
      assert.equal(await call(h.pointer, f), null);
      assert.equal(pool!.numThreads(), 4);
      // An async handler waits for native work it scheduled on the runtime's pool.
      const work = harness().hh_future_new()!;
      using viaPool = Ffi.bind().ctx("threadPool").to((p) => {
        p.schedule(harness().hh_complete_task(), work);
        return awaitFuture(work);
      });
      assert.equal(await call(viaPool.pointer, f), null);
      await withCtx(0, 0, async (noPool) => {
        using h2 = Ffi.bind().ctx("threadPool").to((p) => {
          assert.equal(p.numThreads(), 0);
          assert.throws(() => p.schedule(harness().hh_complete_task()), /No intra-op thread pool/);
        });
        using g = frame({ ctx: noPool });
        assert.equal(await call(h2.pointer, g), null);
      });
    }, 1),
});

Deno.test("Future/Promise/CountDownPromise follow ffi.h semantics", async () => {
  const p = new FfiPromise();
  const fut = p.future();
  const seen: (string | undefined)[] = [];
  fut.onReady((e) => seen.push(e?.message));
  p.setAvailable();
  fut.onReady((e) => seen.push(e?.message ?? "late"));
  assert.deepEqual(seen, [undefined, "late"]);
  assert.throws(
    () => p.setAvailable(),
    (e: unknown) => (e as { code: number }).code === ErrorCode.FAILED_PRECONDITION,
  );
  await fut;

  const cd = new CountDownPromise(3);
  assert.equal(cd.countDown(), false);
  assert.equal(cd.countDown(new Error("first")), false);
  assert.equal(cd.countDown(new Error("second")), true);
  assert.equal(cd.future().error?.message, "XLA FFI call failed: first");
  await assert.rejects(cd.future().toPromise(), /first/);
  assert.throws(() => cd.countDown());

  const fromJs = Future.fromPromise(Promise.reject(new TypeError("x")));
  await assert.rejects(
    async () => await fromJs,
    (e: unknown) => (e as { code: number }).code === ErrorCode.UNKNOWN,
  );
  assert.ok(Future.available().isAvailable);
  assert.ok(Future.failed(new Error("e")).isError);
});
