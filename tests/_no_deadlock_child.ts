/**
 * Child process of handler_runtime_test.ts: API uses that would wait forever
 * if the JS thread blocked on work that needs it. The parent runs each
 * scenario with a timeout, so a deadlock is a failure rather than a hang.
 * Prints "ok <scenario>" on success.
 */
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  type FfiBuffer,
  FfiError,
  HandlerLibrary,
  Runtime,
  runtimeDebugStats,
  scalar,
} from "../mod.ts";

const scenario = Deno.args[0];

if (scenario === "close") {
  // A pool task waits for the JS thread (a thread-safe JS callback) while
  // JS closes the runtime: close() must not join that task on the JS thread.
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const task = Deno.UnsafeCallback.threadSafe(
    { parameters: ["pointer"], result: "void" } as const,
    () => done(),
  );
  const destroyed = runtimeDebugStats().runtimesDestroyed;
  const rt = new Runtime({ threads: 2 });
  using h = Ffi.bind().ctx("threadPool").to((p) => p.schedule(task.pointer, null));
  using f = new CallFrameBuilder().build();
  const lib = HandlerLibrary.open(buildSharedLibrary({
    name: "ts_caller",
    sources: ["native/tests/ts_caller.c"],
  }));
  rt.callSync(h, f);
  const t0 = performance.now();
  rt.close(); // returns after its 50 ms grace; the pool is joined once the task ran
  assert.ok(performance.now() - t0 < 5000);
  lib.close(); // unloaded once the reaper is done
  await finished;
  for (let i = 0; i < 500 && runtimeDebugStats().runtimesDestroyed === destroyed; i++) {
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.equal(runtimeDebugStats().runtimesDestroyed, destroyed + 1);
  task.close();
} else if (scenario === "callSync-native") {
  // A native handler run by callSync (or ffiCall) on the JS thread calls a TS handler on a
  // thread of its own and joins it: the TS call fails instead of waiting.
  const lib = HandlerLibrary.open(buildSharedLibrary({
    name: "ts_caller",
    sources: ["native/tests/ts_caller.c"],
  }));
  using rt = new Runtime({ threads: 1 });
  let calls = 0;
  using ts = Ffi.bind().to(() => void calls++);
  using f = new CallFrameBuilder().attr("target", scalar(DataType.S64, ts.address)).build();
  const caller = lib.handler("tsc_call_on_thread");
  const t0 = performance.now();
  assert.throws(() => rt.callSync(caller, f), (e: unknown) => {
    assert.ok(e instanceof FfiError);
    assert.equal(e.code, ErrorCode.FAILED_PRECONDITION);
    assert.match(e.message, /the JS thread is blocked in a native handler called with/);
    return true;
  });
  assert.ok(performance.now() - t0 < 5000);
  assert.equal(calls, 0);
  await rt.call(caller, f); // the JS thread stays free: the TS handler runs
  assert.equal(calls, 1);
  // Calling a TS handler inline from the JS thread never queues.
  using empty = new CallFrameBuilder().build();
  rt.callSync(ts, empty);
  assert.equal(calls, 2);
  // ffiCall runs the native handler inline too: the same refusal, naming offThread.
  const attrs = { target: scalar(DataType.S64, ts.address) };
  await assert.rejects(
    rt.ffiCall(caller, { results: [], attrs, hasSideEffect: true }),
    (e: unknown) => {
      assert.ok(e instanceof FfiError);
      assert.equal(e.code, ErrorCode.FAILED_PRECONDITION);
      assert.match(e.message, /blocked in a native handler Runtime\.ffiCall runs on it/);
      assert.match(e.message, /offThread: true/);
      return true;
    },
  );
  assert.equal(calls, 2);
  await rt.ffiCall(caller, { results: [], attrs, offThread: true, hasSideEffect: true });
  assert.equal(calls, 3);
  lib.close();
} else if (scenario === "first-pending") {
  // The process's first call that leaves a pending future, begun on this thread (ffiCall runs a
  // native handler inline): a pool thread completes the future at once, possibly before this
  // thread learns the call is pending. Its notification must not be lost.
  using lib = HandlerLibrary.open(Deno.args[1]!);
  using rt = new Runtime({ threads: 2 });
  const [y] = await rt.ffiCall(lib.handler("test_async"), {
    args: [new Float32Array([1])],
    results: [{ dtype: DataType.F32, shape: [1] }],
  });
  assert.equal(y![0], 2);
} else if (scenario === "handover-edge" || scenario === "handover-edge-async") {
  // A caller on another thread whose next call comes just as the JS thread stops waiting for it
  // (it waits about 30 µs after a call): the call, handed over without the queue's lock, must be
  // served once, neither lost (its caller would wait forever) nor run twice. Gaps from 24 to 36 µs
  // in 0.1 µs steps put calls inside that moment in every run. The async handler's caller does not
  // wait for its future: a call it handed over is served all the same.
  const { harness, frame } = await import("./_handler_harness.ts");
  const body = (x: FfiBuffer<DataType.S32>, out: FfiBuffer<DataType.S32>) => {
    out.typed()[0]! += x.typed()[0]!;
  };
  using add = scenario === "handover-edge"
    ? Ffi.bind().arg(DataType.S32).ret(DataType.S32).to(body)
    : Ffi.bind().arg(DataType.S32).ret(DataType.S32).to(async (x, out) => {
      await null;
      body(x, out);
    });
  const x = new Int32Array([3]);
  const out = new Int32Array(1);
  using f = frame({
    args: [{ dtype: DataType.S32, dims: [1], data: x }],
    rets: [{ dtype: DataType.S32, dims: [1], data: out }],
  });
  const calls = 20, r = new Float64Array(3);
  let expected = 0;
  for (let gapNs = 24_000; gapNs <= 36_000; gapNs += 100) {
    const errors = await harness().hh_run_xla_like(add.pointer, f.pointer, calls, gapNs, r);
    assert.equal(errors, 0, `gap ${gapNs} ns`);
    // A Promise whose caller stopped waiting settles in a later turn of the event loop.
    for (let turn = 0; turn < 100 && out[0] !== expected + 3 * calls; turn++) {
      await new Promise((done) => setTimeout(done, 1));
    }
    expected += 3 * calls;
    assert.equal(out[0], expected, `gap ${gapNs} ns: every call ran once`);
  }
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
console.log(`ok ${scenario}`);
