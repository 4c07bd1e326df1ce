import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  checkCallFrame,
  ErrorCode,
  FfiError,
  HandlerLibrary,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { buildSharedLibrary } from "../build.ts";
import { openTestHandlers, testHandlersPath } from "./_runtime_handlers.ts";
import { assertReleased, leakPaths, settledStats } from "./_leak_paths.ts";
import { isFfi } from "./_assert.ts";

const closedError = (pattern: RegExp) => isFfi(ErrorCode.FAILED_PRECONDITION, pattern);

Deno.test("use after close: runtime, instance, frame give FfiError", async () => {
  using lib = openTestHandlers();
  const noop = lib.handler("test_noop");
  const rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  const inst = await rt.instantiate({ execute: noop }, f);
  inst.close();
  inst.close(); // closing twice is fine
  assert.throws(() => inst.stateTypeId, closedError(/instance is closed/));
  assert.throws(() => rt.callSync(noop, f, { instance: inst }), closedError(/instance/));
  await assert.rejects(rt.call(noop, f, { instance: inst }), closedError(/instance/));
  rt.close();
  rt.close();
  const isClosed = closedError(/runtime is closed/);
  assert.throws(() => rt.callSync(noop, f), isClosed);
  await assert.rejects(rt.call(noop, f), isClosed);
  await assert.rejects(rt.callOnThreads(noop, f), isClosed);
  await assert.rejects(rt.instantiate(noop, f), isClosed);
  assert.throws(() => rt.register("closed.rt", noop), isClosed);
  assert.throws(() => rt.lookup("closed.rt"), isClosed);
  assert.throws(() => rt.metadata(noop), isClosed);
  assert.throws(() => rt.registerType("closed.rt"), isClosed);
  await rt.closeAsync();

  using rt2 = new Runtime({ threads: 0 });
  const g = new CallFrameBuilder().arg(new Float32Array(1)).build();
  g.close();
  g.close();
  const frameClosed = closedError(/call frame is closed/);
  assert.throws(() => rt2.callSync(noop, g), frameClosed);
  await assert.rejects(rt2.call(noop, g), frameClosed);
  await assert.rejects(rt2.callOnThreads(noop, g), frameClosed);
  assert.throws(() => g.pointer, frameClosed);
  assert.throws(() => g.setArg(0, new Float32Array(1)), frameClosed);
});

Deno.test("use after close: handlers of a closed library give FfiError, also registered", () => {
  // A copy of the test handlers that nothing else opens, so closing unloads it.
  const path = buildSharedLibrary({
    name: "xrt_closed_handlers",
    sources: ["native/tests/runtime_handlers.c"],
  });
  const lib = HandlerLibrary.open(path);
  const noop = lib.handler("test_noop");
  using rt = new Runtime({ threads: 0 });
  const name = `reliab.closed_lib.${Deno.pid}`;
  rt.register(name, noop);
  using f = new CallFrameBuilder().build();
  rt.callSync(name, f);
  lib.close();
  lib.close();
  const libClosed = closedError(/belongs to the closed handler library/);
  assert.throws(() => lib.handler("test_noop"), closedError(/is closed/));
  assert.throws(() => lib.symbol("test_noop"), closedError(/is closed/));
  assert.throws(() => rt.callSync(noop, f), libClosed);
  assert.throws(() => rt.callSync({ execute: noop }, f), libClosed);
  assert.throws(() => rt.metadata(noop), libClosed);
  assert.throws(() => rt.register(`${name}.2`, noop), libClosed);
  // Through the registry (the registration keeps the raw address).
  using rt3 = new Runtime({ threads: 0 });
  assert.throws(() => rt3.callSync(name, f), libClosed);
  // Opening it again makes its handlers callable again; the registration's raw
  // address too when the loader maps the library at the same place (usual, but
  // not certain: under ASan it often lands elsewhere, and the name stays dead).
  using again = HandlerLibrary.open(path);
  const fresh = again.handler("test_noop");
  rt.callSync(fresh, f);
  if (Deno.UnsafePointer.equals(fresh.pointer, noop.pointer)) rt3.callSync(name, f);
  else assert.throws(() => rt3.callSync(name, f), libClosed);
  // A handle of another library object at work does not hide the check.
  using other = HandlerLibrary.open(testHandlersPath());
  rt.callSync(other.handler("test_noop"), f);
});

Deno.test("use after close: a rebuilt library at the same path never runs an old handler address", async () => {
  // The loader maps the new file where the old one was (usually) and the old
  // address then lands on other code of it; under ASan it maps elsewhere,
  // where the old address can land on its data. Either way it is refused.
  const first = buildSharedLibrary({
    name: "xrt_rebuilt_v1",
    sources: ["native/tests/runtime_handlers.c"],
  });
  const second = buildSharedLibrary({
    name: "xrt_rebuilt_v2",
    sources: ["native/tests/code_padding.c", "native/tests/runtime_handlers.c"],
  });
  const path = await Deno.makeTempFile({ prefix: "xrt_rebuilt_", suffix: ".so" });
  try {
    Deno.copyFileSync(first, path);
    const lib = HandlerLibrary.open(path);
    const old = lib.handler("test_noop");
    using rt = new Runtime({ threads: 0 });
    const name = `reliab.rebuilt.${Deno.pid}`;
    rt.register(name, old);
    using f = new CallFrameBuilder().build();
    rt.callSync(name, f);
    lib.close();
    Deno.removeSync(path); // a new file (inode) at the same path, as a rebuild makes
    Deno.copyFileSync(second, path);
    using again = HandlerLibrary.open(path);
    const fresh = again.handler("test_noop");
    rt.callSync(fresh, f);
    assert.ok(
      !Deno.UnsafePointer.equals(fresh.pointer, old.pointer),
      "the rebuild moved test_noop",
    );
    const libClosed = closedError(/belongs to the closed handler library/);
    assert.throws(() => rt.callSync(name, f), libClosed);
    assert.throws(() => rt.callSync(old, f), libClosed);
    assert.throws(() => rt.metadata(old), libClosed);
  } finally {
    Deno.removeSync(path);
  }
});

Deno.test("stress: 8 runtime threads × 100k calls mixing sync, async and error handlers", async () => {
  using lib = openTestHandlers();
  const counts = new Deno.UnsafeFnPointer(
    lib.symbol("test_mixed_counts") as Deno.PointerObject<never>,
    {
      parameters: ["buffer", "i32"],
      result: "void",
    } as const,
  );
  const c = new BigInt64Array(5);
  counts.call(c, 1); // reset
  const before = runtimeDebugStats();
  const threads = 8, iterations = 100_000, total = threads * iterations;
  const t0 = performance.now();
  {
    using rt = new Runtime({ threads: 4 });
    using f = new CallFrameBuilder().build();
    const r = await rt.callOnThreads(lib.handler("test_mixed"), f, { threads, iterations });
    counts.call(c, 0);
    const [calls, sync, asyncStarted, asyncDone, errors] = [...c].map(Number);
    // Every call accounted for: none lost, none duplicated.
    assert.equal(r.ok + r.failed, total);
    assert.equal(calls, total);
    assert.equal(sync! + asyncStarted! + errors!, total);
    assert.equal(asyncDone, asyncStarted);
    assert.equal(r.failed, errors);
    assert.equal(r.ok, sync! + asyncStarted!);
    assert.equal(errors, Math.floor(total / 3)); // k % 3 == 2 for k < total
    assert.equal(r.firstError?.code, ErrorCode.RESOURCE_EXHAUSTED);
  }
  const ms = performance.now() - t0;
  console.log(`stress: ${total} calls on ${threads} threads in ${ms.toFixed(0)} ms`);
  assert.ok(ms < 60_000, `bounded time: ${ms} ms`);
  const after = runtimeDebugStats();
  const d = (k: keyof typeof after) => after[k] - before[k];
  assert.equal(d("calls"), total);
  assert.equal(d("futuresCreated"), d("futuresDestroyed"));
  assert.equal(d("futuresCreated"), Math.round(total / 3));
  assert.equal(d("errorsCreated"), d("errorsDestroyed"));
  assert.equal(d("tasksScheduled"), d("tasksRun"));
});

Deno.test("leaks: every call path releases what it creates (counts match)", async () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 2 });
  for (const [name, run] of Object.entries(leakPaths(rt, lib))) {
    const before = runtimeDebugStats();
    await run(2000);
    const after = await settledStats();
    const d = assertReleased(name, before, after);
    assert.ok(d("calls") >= 2000 || name === "frame build/close", `${name}: calls ran`);
  }
  // The counters saw each kind of object.
  const s = runtimeDebugStats();
  assert.ok(s.statesSet > 0 && s.futuresCreated > 0 && s.errorsCreated > 0);
});

Deno.test("checkCallFrame: built frames pass; null and foreign frames are INVALID_ARGUMENT", () => {
  using f = new CallFrameBuilder().arg(new Float32Array(4), [2, 2]).attr("b", 1).attr("a", "s")
    .build();
  checkCallFrame(f.pointer);
  const invalid = (pattern: RegExp) => (e: unknown) => {
    assert.ok(e instanceof FfiError);
    assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
    assert.match(e.message, pattern);
    return true;
  };
  assert.throws(() => checkCallFrame(null), invalid(/call frame is null/));
  const zeros = new BigUint64Array(32); // readable memory that is no call frame
  assert.throws(
    () => checkCallFrame(Deno.UnsafePointer.of(zeros)),
    invalid(/Unexpected XLA_FFI_CallFrame size: expected \d+, got 0/),
  );
  const copy = new BigUint64Array(32);
  const view = new Deno.UnsafePointerView(f.pointer);
  for (let i = 0; i < 32; i++) copy[i] = view.getBigUint64(8 * i);
  copy[3] = 0n; // ctx
  assert.throws(
    () => checkCallFrame(Deno.UnsafePointer.of(copy)),
    invalid(/execution context is null/),
  );
});
