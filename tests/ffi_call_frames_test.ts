/**
 * `Runtime.ffiCall`'s own machinery: the call frame it keeps per signature
 * (never lying about attributes or data a caller changed since, never shared
 * by calls in flight, bounded), and where it runs a native handler (the
 * calling thread, as XLA's CPU runtime runs a synchronous handler, or the
 * pool with `offThread`).
 */
import assert from "node:assert/strict";
import {
  array,
  CallFrameBuilder,
  DataType,
  Ffi,
  type FfiError,
  Runtime,
  runtimeDebugStats,
  scalar,
} from "../mod.ts";
import { openTestHandlers } from "./_runtime_handlers.ts";

const S64 = { dtype: DataType.S64, shape: [] } as const;

Deno.test("ffiCall: a native handler runs on the calling thread; offThread: true on the pool", async () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 1 });
  const tid = lib.handler("test_thread_id");
  // The JavaScript thread's id: callSync runs a handler on the calling thread.
  const here = new BigInt64Array(1);
  using frame = new CallFrameBuilder().ret(here, []).build();
  rt.callSync(tid, frame);
  const [inline] = await rt.ffiCall(tid, { results: [S64] });
  assert.equal(inline![0], here[0]);
  const [pooled] = await rt.ffiCall(tid, { results: [S64], offThread: true });
  assert.notEqual(pooled![0], here[0]);
  // Runtime.call keeps its hop to the pool.
  const called = new BigInt64Array(1);
  using frame2 = new CallFrameBuilder().ret(called, []).build();
  await rt.call(tid, frame2);
  assert.notEqual(called[0], here[0]);
  await assert.rejects(
    rt.ffiCall(tid, { results: [S64], offThread: 1 as never }),
    /ffiCall: offThread must be a boolean, got 1/,
  );
  // A future completed by a pool thread after an inline call returned is awaited.
  const [plus] = await rt.ffiCall(lib.handler("test_async"), {
    args: [new Float32Array([41])],
    results: [{ dtype: DataType.F32, shape: [1] }],
    attrs: { delay_ms: 20 },
  });
  assert.deepEqual([...plus!], [42]);
});

Deno.test("ffiCall: a kept frame never carries attributes or data from an earlier call", async () => {
  // Echoes its attributes: the scalar, the sign of the float, the array's sum.
  using echo = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F64, 1).attr("k", "i64")
    .attr("z", "f64").attr("xs", "i32[]").to((x, out, k, z, xs) => {
      const o = out.typed();
      o[0] = Number(k);
      o[1] = Object.is(z, -0) ? -1 : 1;
      o[2] = xs.reduce((a, b) => a + b, 0);
      o[3] = x.typed()[0]!;
    });
  using rt = new Runtime({ threads: 0 });
  const xs = new Int32Array([1, 2, 3]);
  const attrs = { k: 5, z: scalar(DataType.F64, 0), xs };
  const call = async (x: number) => [
    ...(await rt.ffiCall(echo, {
      args: [new Float32Array([x])],
      results: [{ dtype: DataType.F64, shape: [4] }],
      attrs,
    }))[0]!,
  ];
  const before = runtimeDebugStats();
  assert.deepEqual(await call(1), [5, 1, 6, 1]);
  assert.deepEqual(await call(2), [5, 1, 6, 2]); // the same frame, new data
  assert.equal(runtimeDebugStats().framesCreated - before.framesCreated, 1);
  attrs.k = 7; // the same object, changed
  assert.deepEqual(await call(3), [7, 1, 6, 3]);
  attrs.z = scalar(DataType.F64, -0); // -0 is not 0 to a handler
  assert.deepEqual(await call(4), [7, -1, 6, 4]);
  xs[0] = 10; // a typed array changed in place
  assert.deepEqual(await call(5), [7, -1, 15, 5]);
  // Scalars and arrays made by scalar() and array(), new objects of equal values: the kept frame.
  const made = runtimeDebugStats().framesCreated;
  for (let i = 0; i < 3; i++) {
    const [y] = await rt.ffiCall(echo, {
      args: [new Float32Array([i])],
      results: [{ dtype: DataType.F64, shape: [4] }],
      attrs: { k: scalar(DataType.S64, 9), z: 0.5, xs: array(DataType.S32, [1, 1]) }, // z: F64
    });
    assert.deepEqual([...y!], [9, 1, 2, i]);
  }
  assert.equal(runtimeDebugStats().framesCreated - made, 1);
  // An attribute the frame cannot encode fails the call, and the next call is whole.
  await assert.rejects(
    rt.ffiCall(echo, {
      args: [new Float32Array([0])],
      results: [{ dtype: DataType.F64, shape: [4] }],
      attrs: { k: Symbol("k") as never, z: 0.5, xs },
    }),
    (e: FfiError) => e.code === 3 && /k/.test(e.message),
  );
  assert.deepEqual(await call(6), [7, -1, 15, 6]);
});

Deno.test("ffiCall: calls of one signature in flight together each have their own frame", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  using slow = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(async (x, y) => {
    const v = x.typed()[0]!;
    await gate;
    y.typed()[0] = v + 1;
  });
  using rt = new Runtime({ threads: 0 });
  const one = (v: number) =>
    rt.ffiCall(slow, {
      args: [new Float32Array([v])],
      results: [{ dtype: DataType.F32, shape: [1] }],
    });
  const calls = [one(1), one(2), one(3)];
  release();
  const got = await Promise.all(calls);
  assert.deepEqual(got.map(([y]) => y![0]), [2, 3, 4]);
  // Closing the runtime frees the kept frames and the ones made for calls in flight.
  const before = runtimeDebugStats();
  rt.close();
  const after = runtimeDebugStats();
  assert.equal(after.framesDestroyed - before.framesDestroyed, 1);
  const all = runtimeDebugStats();
  assert.equal(all.framesCreated, all.framesDestroyed);
});

Deno.test("ffiCall: at most 64 kept frames per runtime", async () => {
  using id = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to((x, y) => {
    y.typed().set(x.typed());
  });
  const before = runtimeDebugStats();
  {
    using rt = new Runtime({ threads: 0 });
    for (let n = 1; n <= 80; n++) {
      const [y] = await rt.ffiCall(id, {
        args: [new Float32Array(n).fill(n)],
        results: [{ dtype: DataType.F32, shape: [n] }],
      });
      assert.equal(y![n - 1], n);
    }
    const open = runtimeDebugStats();
    assert.equal(open.framesCreated - before.framesCreated, 80);
    assert.equal(open.framesDestroyed - before.framesDestroyed, 16);
  }
  const after = runtimeDebugStats();
  assert.equal(after.framesDestroyed - before.framesDestroyed, 80);
});
