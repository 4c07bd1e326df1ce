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
  NativeHandler,
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

Deno.test("ffiCall: a TS handler's results start zeroed in every call and stay each call's own", async () => {
  // Writes one element of each result, at index k, and leaves the rest as it finds them.
  const seen: number[] = [];
  using one = Ffi.bind().arg(DataType.S32, 0).ret(DataType.F32, 1).ret(DataType.S64, 1)
    .ret(DataType.U8, 1).ret(DataType.F64, 1).to(async (k, f, s, big, empty) => {
      const i = k.typed()[0]!;
      seen.push(f.data);
      if (i % 2 === 1) await null;
      f.typed()[i] = i + 1;
      s.typed()[i] = BigInt(-i - 1);
      big.typed()[i * 997] = i + 1;
      assert.equal(empty.typed().length, 0);
    });
  using rt = new Runtime({ threads: 0 });
  const call = (i: number) =>
    rt.ffiCall(one, {
      args: [{ data: new Int32Array([i]), shape: [] }],
      results: [
        { dtype: DataType.F32, shape: [4] },
        { dtype: DataType.S64, shape: [4] },
        { dtype: DataType.U8, shape: [5000] },
        { dtype: DataType.F64, shape: [0] },
      ],
    });
  const got = [];
  for (let i = 0; i < 4; i++) got.push(await call(i));
  for (let i = 0; i < 4; i++) {
    const [f, s, big, empty] = got[i]! as [Float32Array, BigInt64Array, Uint8Array, Float64Array];
    const want = [0, 0, 0, 0];
    want[i] = i + 1;
    assert.deepEqual([...f], want, `call ${i}`);
    assert.deepEqual([...s], want.map((v) => BigInt(-v)), `call ${i}`);
    assert.equal(big.reduce((a, b) => a + b, 0), i + 1, `call ${i}`);
    assert.equal(big[i * 997], i + 1);
    assert.equal(empty.length, 0);
  }
  // From the second call on the handler writes the kept frame's storage (its views are reused),
  // and each call returns a copy of it of its own.
  assert.equal(new Set(seen.slice(1)).size, 1);
  assert.ok(
    !got.some(([f]) => seen.includes(Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(f!))))),
  );
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

/** What a call gives: its results' values, or its error's code and message. */
async function outcome(call: () => Promise<unknown[]>): Promise<string> {
  try {
    return JSON.stringify((await call()).map((r) => [...(r as Float32Array)]));
  } catch (e) {
    return e instanceof Error && "code" in e ? `FfiError ${e.code}: ${e.message}` : `${e}`;
  }
}

Deno.test("ffiCall: a call of the previous call's signature is checked as a first call is", async () => {
  // Any F32 operands; sums its first argument into each result element.
  using sum = Ffi.bind().arg(DataType.F32, 2).arg().arg().ret(DataType.F32, 2).attrs().to(
    (x, _y, _z, out) => {
      out.typed().fill(x.typed().reduce((a, b) => a + b, 0));
    },
  );
  /** Options as a caller may spoil them: any value anywhere. */
  type Loose = {
    args: unknown[];
    results: { dtype: unknown; shape: unknown[] }[];
    attrs: Record<string, unknown>;
    [option: string]: unknown;
  };
  type Input = { data: unknown; shape?: unknown; dtype?: unknown };
  /** A good call: a matrix, a plain typed array, an empty array; three kinds of attribute. */
  const good = (): Loose => ({
    args: [
      { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] },
      new Float32Array(5),
      { data: new Float32Array(0), shape: [0] },
    ],
    results: [{ dtype: DataType.F32, shape: [2, 3] }],
    attrs: { n: scalar(DataType.S32, 3), axes: array(DataType.S64, [0, 2]), mode: "reflect" },
  });
  const arg = (o: Loose, i: number) => o.args[i] as Input;
  const detach = (v: unknown) => ((v as Float32Array).buffer as ArrayBuffer).transfer();
  /** Each spoils a good call's options, in place where it can. */
  const cases: [string, (o: Loose) => unknown][] = [
    ["argument 0 detached", (o) => detach(arg(o, 0).data)],
    ["argument 1 (a typed array) detached", (o) => detach(o.args[1])],
    ["argument 2 (empty) detached", (o) => detach(arg(o, 2).data)],
    ["argument 0 short", (o) => arg(o, 0).data = new Float32Array(5)],
    ["argument 0 long", (o) => arg(o, 0).data = new Float32Array(7)],
    ["argument 1 short", (o) => o.args[1] = new Float32Array(4)],
    ["argument 0 of another dtype", (o) => arg(o, 0).data = new Int32Array(6)],
    ["argument 0 given F64", (o) => arg(o, 0).dtype = DataType.F64],
    ["argument 0 given an unknown dtype", (o) => arg(o, 0).dtype = 999],
    ["argument 0 given TOKEN", (o) => arg(o, 0).dtype = DataType.TOKEN],
    ["argument 1 of another dtype", (o) => o.args[1] = new Int32Array(5)],
    ["argument 0 a DataView", (o) => arg(o, 0).data = new DataView(new ArrayBuffer(24))],
    ["argument 0 a detached DataView", (o) => {
      const v = new DataView(new ArrayBuffer(24));
      v.buffer.transfer();
      Object.assign(arg(o, 0), { data: v, dtype: DataType.F32 });
    }],
    ["argument 0's shape changed", (o) => (arg(o, 0).shape as number[])[1] = 4],
    ["argument 0's shape negative", (o) => (arg(o, 0).shape as number[])[1] = -3],
    ["argument 0's shape a string", (o) => arg(o, 0).shape = "2,3"],
    ["argument 0's shape transposed", (o) => (arg(o, 0).shape as number[]).reverse()],
    ["argument 2's shape dropped", (o) => delete arg(o, 2).shape],
    ["argument 0's shape dropped", (o) => delete arg(o, 0).shape],
    ["argument 0's data a lookalike of a typed array", (o) => {
      Object.assign(arg(o, 0), {
        data: { buffer: new ArrayBuffer(24), byteOffset: 0, byteLength: 24 },
        dtype: DataType.F32,
      });
    }],
    ["argument 0 a function carrying data and shape", (o) => {
      o.args[0] = Object.assign(() => {}, { data: new Float32Array(6), shape: [2, 3] });
    }],
    ["an argument more, a result fewer", (o) => {
      o.args.push({ data: new Float32Array(6), shape: [2, 3] });
      o.results.pop();
      // No results left: without a side effect the call would be dropped, as jax drops it.
      o.hasSideEffect = true;
    }],
    ["argument 0 null", (o) => o.args[0] = null],
    ["argument 0 a number", (o) => o.args[0] = 6],
    ["an argument fewer", (o) => o.args.pop()],
    ["result 0's shape changed", (o) => o.results[0]!.shape[0] = -1],
    ["result 0's shape a string", (o) => (o.results[0] as { shape: unknown }).shape = "2,3"],
    ["result 0's dtype TOKEN", (o) => o.results[0]!.dtype = DataType.TOKEN],
    ["result 0's dtype F64", (o) => o.results[0]!.dtype = DataType.F64],
    ["result 0 null", (o) => (o.results as unknown[])[0] = null],
    ["result 0 an array carrying dtype and shape", (o) => {
      (o.results as unknown[])[0] = Object.assign([], { dtype: DataType.F32, shape: [2, 3] });
    }],
    ["attribute n out of range", (o) => o.attrs.n = 2 ** 70], // an F64 then
    [
      "attribute axes' values changed",
      (o) => (o.attrs.axes as { values: unknown[] }).values[1] = 9,
    ],
    ["attribute mode a function", (o) => o.attrs.mode = () => 1],
    ["an alias out of range", (o) => o.inputOutputAliases = { 0: 3 }],
    ["a layout that is no permutation", (o) => o.inputLayouts = [[0, 0]]],
    ["an unknown option", (o) => o.bogus = 1],
  ];
  const OTHER_SIGNATURE = new Set([
    "argument 1 short",
    "argument 1 of another dtype",
    "argument 0's shape transposed",
    "argument 2's shape dropped",
    "attribute n out of range",
    "attribute axes' values changed",
  ]);
  for (const [what, spoil] of cases) {
    using warm = new Runtime({ threads: 0 });
    using cold = new Runtime({ threads: 0 });
    // The same options called twice, then spoiled: the third call is of the kept signature.
    const o = good();
    for (let i = 0; i < 2; i++) {
      assert.deepEqual([...(await warm.ffiCall(sum, o as never))[0]!], [21, 21, 21, 21, 21, 21]);
    }
    spoil(o);
    const c = good();
    spoil(c);
    const got = await outcome(() => warm.ffiCall(sum, o as never));
    assert.equal(got, await outcome(() => cold.ffiCall(sum, c as never)), what);
    // Most are mistakes; the rest are good calls of another signature.
    if (!OTHER_SIGNATURE.has(what)) assert.match(got, /^FfiError 3: /, what);
    else assert.equal(got, "[[21,21,21,21,21,21]]", what);
    // A good call of the signature works after it.
    assert.equal((await warm.ffiCall(sum, good() as never))[0]![0], 21, what);
  }
  // An array attribute changed in place reaches the handler: the kept copy is not it.
  using axesSum = Ffi.bind().ret(DataType.F64, 0).attr("axes", "i64[]").to((out, axes) => {
    out.typed()[0] = axes.reduce((t: number, v) => t + Number(v), 0);
  });
  {
    using warm = new Runtime({ threads: 0 });
    const axes = array(DataType.S64, [1, 2]);
    const call = async () =>
      (await warm.ffiCall(axesSum, {
        results: [{ dtype: DataType.F64, shape: [] }],
        attrs: { axes },
      }))[0]![0];
    assert.equal(await call(), 3);
    assert.equal(await call(), 3);
    (axes.values as bigint[])[1] = 5n;
    assert.equal(await call(), 6);
  }
  // A call in flight keeps the frame: the next call of its signature lays out one of its own.
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  using waits = Ffi.bind().arg(DataType.F32, 2).arg().arg().ret(DataType.F32, 2).attrs().to(
    async () => await gate,
  );
  {
    using warm = new Runtime({ threads: 0 });
    await warm.ffiCall(sum, good() as never);
    const before = runtimeDebugStats().framesCreated;
    const first = warm.ffiCall(waits, good() as never);
    const second = warm.ffiCall(waits, good() as never);
    assert.equal(runtimeDebugStats().framesCreated - before, 1);
    release();
    await Promise.all([first, second]);
  }
  // A closed runtime, after calls that kept a frame.
  const rt = new Runtime({ threads: 0 });
  const o = good();
  await rt.ffiCall(sum, o as never);
  rt.close();
  assert.match(
    await outcome(() => rt.ffiCall(sum, o as never)),
    /^FfiError 9: The runtime is closed$/,
  );
});

/**
 * A C-ABI handler made of an UnsafeCallback (not a TS handler, so native to the runtime): it
 * answers the metadata query with API version 0.1 (XLA_FFI_Metadata's api_version at 8, its
 * major_version at 24 and minor_version at 28) and runs `body` with the call frame of any other
 * call. Close the callback after use.
 */
function callbackHandler(name: string, body: (frame: Deno.PointerObject) => void) {
  const cb = new Deno.UnsafeCallback(
    { parameters: ["pointer"], result: "pointer" } as const,
    (frame) => {
      const ext = new Deno.UnsafePointerView(frame!).getPointer(8);
      if (ext !== null) {
        const md = new Deno.UnsafePointerView(ext).getPointer(24)!;
        new Int32Array(Deno.UnsafePointerView.getArrayBuffer(md, 32)).set([0, 1], 6);
        return null;
      }
      body(frame!);
      return null;
    },
  );
  return { handler: new NativeHandler(cb.pointer, name), cb };
}

Deno.test("ffiCall: a native handler that overwrites its frame's data pointer misleads no later call", async () => {
  // A C-ABI handler (an UnsafeCallback: not a TS handler, so native to the runtime) that reads
  // its argument's first value, then points the argument's buffer at a decoy, as a buggy handler
  // writing through its XLA_FFI_Buffer* could. XLA writes every address for each execution; a
  // kept frame must too, or the next call would read the decoy.
  const decoy = new Float32Array([-1]);
  const seen: number[] = [];
  const { handler: h, cb } = callbackHandler("overwrites_its_frame", (frame) => {
    const f = new Deno.UnsafePointerView(frame);
    const buf = Deno.UnsafePointer.create(
      new Deno.UnsafePointerView(Deno.UnsafePointer.create(f.getBigUint64(72))!).getBigUint64(0),
    )!;
    const data = new Deno.UnsafePointerView(buf).getPointer(24)!;
    seen.push(new Deno.UnsafePointerView(data).getFloat32(0));
    new BigUint64Array(Deno.UnsafePointerView.getArrayBuffer(buf, 32))[3] = BigInt(
      Deno.UnsafePointer.value(Deno.UnsafePointer.of(decoy)!),
    );
  });
  try {
    using rt = new Runtime({ threads: 0 });
    const x = new Float32Array([7]);
    for (let i = 0; i < 3; i++) {
      await rt.ffiCall(h, { args: [x], results: [], hasSideEffect: true });
      x[0] = x[0]! + 1;
    }
    assert.deepEqual(seen, [7, 8, 9]);
  } finally {
    cb.close();
  }
});

Deno.test("ffiCall, callSync: a native handler that overwrites its call frame's header misleads no later call", async () => {
  // A C-ABI handler that sets its frame's argument and result counts to 0 (XLA_FFI_CallFrame's
  // args.size at 56, rets.size at 96), as a buggy handler writing through its XLA_FFI_CallFrame*
  // could. XLA hands each call a call frame of its own (xla/ffi/call_frame.cc, CallFrame::Build),
  // so the next call of a kept frame, here a TS handler's of the same signature, sees its operands.
  let calls = 0;
  const { handler: scribbler, cb } = callbackHandler("overwrites_its_header", (frame) => {
    calls++;
    const header = new BigInt64Array(Deno.UnsafePointerView.getArrayBuffer(frame, 176));
    header[7] = 0n;
    header[12] = 0n;
  });
  try {
    using rt = new Runtime({ threads: 0 });
    using twice = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to((x, y) => {
      y.typed()[0] = 2 * x.typed()[0]!;
    });
    const options = {
      args: [new Float32Array([21])],
      results: [{ dtype: DataType.F32, shape: [1] }],
    };
    for (let i = 0; i < 2; i++) {
      await rt.ffiCall(scribbler, options);
      assert.deepEqual([...(await rt.ffiCall(twice, options))[0]!], [42]);
    }
    // The same with a frame built once and callSync.
    const y = new Float32Array(1);
    using frame = new CallFrameBuilder().arg(new Float32Array([5])).ret(y).build();
    rt.callSync(scribbler, frame);
    rt.callSync(twice, frame);
    assert.equal(y[0], 10);
    assert.equal(calls, 3);
  } finally {
    cb.close();
  }
});

Deno.test("ffiCall's result storage: every result owns its ArrayBuffer, of exactly its bytes", async () => {
  const { _resultArray, _resultStorage } = await import("../src/runtime/ffi_call.ts");
  const made: (Float32Array | Uint8Array)[] = Array.from(
    { length: 40 },
    (_, i) => i % 2 ? _resultArray(Float32Array, 64) as Float32Array : _resultStorage(64),
  );
  const buffers = new Set(made.map((a) => a.buffer));
  assert.equal(buffers.size, made.length, "two results share an ArrayBuffer");
  for (const a of made) {
    assert.equal(a.byteOffset, 0);
    assert.equal(a.buffer.byteLength, 64);
  }
});

Deno.test("ffiCall: a result whose buffer the caller transferred leaves later calls their own storage", async () => {
  using rt = new Runtime({ threads: 0 });
  using copy = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    y.typed().set(x.typed());
  });
  const call = async (v: number[]) =>
    (await rt.ffiCall(copy, {
      args: [new Float32Array(v)],
      results: [{ dtype: DataType.F32, shape: [v.length] }],
    }))[0] as Float32Array;
  const a = await call([1, 2]);
  // What postMessage(a, [a.buffer]) does: the buffer (shared with other small results) moves.
  const moved = structuredClone(a, { transfer: [a.buffer as ArrayBuffer] });
  assert.deepEqual([...moved], [1, 2]);
  assert.equal(a.length, 0);
  // Later calls carve their results from a new buffer (before, every later call threw
  // "Cannot perform Construct on a detached ArrayBuffer").
  const b = await call([3, 4]);
  const c = await call([5, 6, 7]);
  assert.deepEqual([...b], [3, 4]);
  assert.deepEqual([...c], [5, 6, 7]);
  assert.notEqual(b.buffer, a.buffer);
  // A copy is the way to hand one result over on its own: the others keep their bytes.
  const alone = structuredClone(b.slice(), { transfer: [] });
  assert.deepEqual([...alone], [3, 4]);
  assert.deepEqual([...c], [5, 6, 7]);
});

Deno.test("ffiCall: an earlier result transferred while an async TS handler runs leaves the call its result", async () => {
  using rt = new Runtime({ threads: 0 });
  let during: (() => void) | null = null;
  using copy = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(async (x, y) => {
    const v = x.typed()[0]!;
    await null;
    during?.();
    y.typed()[0] = v;
  });
  const call = async (v: number) =>
    (await rt.ffiCall(copy, {
      args: [new Float32Array([v])],
      results: [{ dtype: DataType.F32, shape: [1] }],
    }))[0] as Float32Array;
  const a = await call(1);
  const b = await call(2);
  // Every result owns its buffer: a transfer of b's mid-call leaves a and the call's own alone.
  during = () => void structuredClone(b, { transfer: [b.buffer as ArrayBuffer] });
  const c = await call(3);
  during = null;
  assert.equal(b.length, 0);
  assert.deepEqual([...a], [1]);
  assert.deepEqual([...c], [3]);
  assert.deepEqual([...(await call(4))], [4]);
});

Deno.test("ffiCall: repeated calls whose handler leaves a pending future each await their own", async () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 1 });
  const F32x1 = { dtype: DataType.F32, shape: [1] } as const;
  // A native handler whose future a pool thread completes 5 ms later: the second and third calls
  // are the kept frame's (no snapshot of it is taken unless the future is pending).
  for (let i = 0; i < 3; i++) {
    const [y] = await rt.ffiCall(lib.handler("test_async"), {
      args: [new Float32Array([i])],
      results: [F32x1],
      attrs: { delay_ms: 5 },
    });
    assert.deepEqual([...y!], [i + 1]);
  }
  // A TS handler's Promise, settled after a timer; one that rejects; then one that settles again.
  using later = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(async (x, y) => {
    const v = x.typed()[0]!;
    await new Promise((r) => setTimeout(r, 1));
    if (v < 0) throw new Error(`negative ${v}`);
    y.typed()[0] = 2 * v;
  });
  const call = (v: number) =>
    rt.ffiCall(later, { args: [new Float32Array([v])], results: [F32x1] });
  for (const v of [1, 2, -1, 3]) {
    if (v < 0) await assert.rejects(call(v), /negative -1/);
    else assert.deepEqual([...(await call(v))[0]!], [2 * v]);
  }
  const stats = runtimeDebugStats();
  assert.equal(stats.futuresCreated, stats.futuresDestroyed);
});

Deno.test("ffiCall: a handler closed after a call is refused on the next call of it", async () => {
  using rt = new Runtime({ threads: 0 });
  const twice = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to((x, y) => {
    y.typed()[0] = 2 * x.typed()[0]!;
  });
  const call = () =>
    rt.ffiCall(twice, {
      args: [new Float32Array([4])],
      results: [{ dtype: DataType.F32, shape: [1] }],
    });
  assert.deepEqual([...(await call())[0]!], [8]);
  assert.deepEqual([...(await call())[0]!], [8]);
  twice.close();
  await assert.rejects(
    call(),
    (e: FfiError) => e.code === 9 && e.message === "The handler is closed",
  );
});
