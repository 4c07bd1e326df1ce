/**
 * Result staging (src/handler/_stage.ts): a synchronous TS handler writes a
 * small host result into storage its binding keeps at a fixed address, which
 * holds the buffer's bytes when it starts and is copied into the buffer when
 * it is done. What must hold: the caller sees exactly what writing the buffer
 * itself would give (through the view or through the address, a failed call
 * too), and results where that could differ are the buffers themselves.
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, Ffi, Runtime } from "../mod.ts";
import { runDeno } from "./_child.ts";

const D = DataType;
const addressOf = (a: ArrayBufferView) =>
  Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(a)));

Deno.test("staging: fixed storage holding the buffer's bytes; what the handler wrote reaches it", () => {
  using rt = new Runtime({ threads: 1 });
  const seen: { data: number; before: number[] }[] = [];
  // Writes element 0 only: the rest of the buffer keeps its bytes.
  using h = Ffi.bind().arg(D.F32, 1).ret(D.F32, 1).to((x, y) => {
    const ys = y.typed();
    seen.push({ data: y.data, before: [...ys] });
    ys[0] = 2 * x.typed()[0]!;
  });
  const x = new Float32Array([1.5, 2, 3, 4]);
  const outs = [new Float32Array([7, 7, 7, 7]), new Float32Array([5, 6, 7, 8])];
  for (const out of outs) {
    using f = new CallFrameBuilder().arg(x, [4]).ret(out, [4]).build();
    rt.callSync(h, f);
  }
  assert.deepEqual([...outs[0]!], [3, 7, 7, 7]);
  assert.deepEqual([...outs[1]!], [3, 6, 7, 8]);
  assert.deepEqual(seen.map((s) => s.before), [[7, 7, 7, 7], [5, 6, 7, 8]]);
  // Staged: not the arrays' addresses, and the same storage for both calls.
  assert.notEqual(seen[0]!.data, addressOf(outs[0]!));
  assert.notEqual(seen[1]!.data, addressOf(outs[1]!));
  assert.equal(seen[0]!.data, seen[1]!.data);
});

Deno.test("staging: native code writing through the result's address reaches the caller", () => {
  const libc = Deno.dlopen("libc.so.6", {
    memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
  });
  using rt = new Runtime({ threads: 1 });
  let viewed: number[] = [];
  using h = Ffi.bind().ret(D.U8, 1).to((y) => {
    libc.symbols.memset(y.pointer, 0x2a, BigInt(y.byteSize - 1));
    const ys = y.typed();
    viewed = [...ys]; // the view and the address are the same bytes
    ys[ys.length - 1] = 1;
  });
  const out = new Uint8Array(6);
  using f = new CallFrameBuilder().ret(out, [6]).build();
  try {
    rt.callSync(h, f);
  } finally {
    libc.close();
  }
  assert.deepEqual(viewed, [42, 42, 42, 42, 42, 0]);
  assert.deepEqual([...out], [42, 42, 42, 42, 42, 1]);
});

Deno.test("staging: a guarded frame's results are the buffers: a write past the end is found", () => {
  const libc = Deno.dlopen("libc.so.6", {
    memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
  });
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().ret(D.U8, 1).to((y) => {
    libc.symbols.memset(y.pointer, 1, BigInt(y.byteSize + 1));
  });
  const y = new Uint8Array(8);
  using frame = new CallFrameBuilder({ guard: true }).ret(y, [8]).build();
  try {
    assert.throws(
      () => rt.callSync(h, frame),
      /wrote past the end of result 0 at byte offset 8 \(the result has 8 bytes; found by a canary/,
    );
  } finally {
    libc.close();
  }
  assert.deepEqual([...y], [1, 1, 1, 1, 1, 1, 1, 1]);
});

Deno.test("staging: a result that fails its call still gets what the handler wrote", async () => {
  using rt = new Runtime({ threads: 1 });
  using h = Ffi.bind().ret(D.S32, 1).to((y) => {
    y.typed()[1] = 9;
    throw new Error("after a write");
  });
  const out = new Int32Array([1, 2, 3]);
  using f = new CallFrameBuilder().ret(out, [3]).build();
  assert.throws(() => rt.callSync(h, f), /after a write/);
  assert.deepEqual([...out], [1, 9, 3]);
  out[1] = 0;
  await assert.rejects(rt.call(h, f), /after a write/); // served for the pool's thread
  assert.deepEqual([...out], [1, 9, 3]);
});

Deno.test("staging: a result overlapping another operand is the buffer itself", () => {
  using rt = new Runtime({ threads: 1 });
  const datas: number[] = [];
  using inPlace = Ffi.bind().arg(D.F32, 1).ret(D.F32, 1).to((x, y) => {
    datas.push(y.data);
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! + ys[i]!;
  });
  // The same array as argument and result (as an aliased output): y reads x's bytes.
  const a = new Float32Array([1, 2, 3]);
  using same = new CallFrameBuilder().arg(a, [3]).ret(a, [3]).build();
  rt.callSync(inPlace, same);
  assert.deepEqual([...a], [2, 4, 6]);
  assert.equal(datas[0], addressOf(a));
  // Overlapping by one element: every write lands where the handler put it, in order.
  const whole = new Float32Array([1, 2, 3, 4, 5]);
  const x = whole.subarray(0, 3), y = whole.subarray(2, 5);
  using overlap = new CallFrameBuilder().arg(x, [3]).ret(y, [3]).build();
  rt.callSync(inPlace, overlap);
  assert.equal(datas[1], addressOf(y));
  // y[0] = x[0] + y[0] = 1 + 3 (x[2] is y[0]: now 4), y[1] = 2 + 4, y[2] = x[2] + 5 = 4 + 5.
  assert.deepEqual([...whole], [1, 2, 4, 6, 9]);
});

Deno.test("staging: large, sub-byte and async results are the buffers themselves", async () => {
  using rt = new Runtime({ threads: 1 });
  const datas: number[] = [];
  using large = Ffi.bind().ret(D.F32, 1).to((y) => {
    datas.push(y.data);
    y.typed()[1024] = 1;
  });
  const big = new Float32Array(1025); // 4100 bytes, past the 4 KiB staged
  using f1 = new CallFrameBuilder().ret(big, [1025]).build();
  rt.callSync(large, f1);
  assert.equal(datas.pop(), addressOf(big));
  assert.equal(big[1024], 1);
  using s4 = Ffi.bind().ret(D.S4, 1).to((y) => {
    datas.push(y.data);
    (y.typed() as Uint8Array)[0] = 7;
  });
  const nibbles = new Uint8Array(4);
  using f2 = new CallFrameBuilder().ret(nibbles, [4], D.S4).build();
  rt.callSync(s4, f2);
  assert.equal(datas.pop(), addressOf(nibbles));
  assert.equal(nibbles[0], 7);
  using late = Ffi.bind().ret(D.S32, 1).to(async (y) => {
    datas.push(y.data);
    await null;
    y.typed()[0] = 5;
  });
  const out = new Int32Array(2);
  using f3 = new CallFrameBuilder().ret(out, [2]).build();
  await rt.call(late, f3);
  assert.equal(datas.pop(), addressOf(out));
  assert.deepEqual([...out], [5, 0]);
});

Deno.test("staging: a synchronous handler's Promise: written before and after it returned, others' writes kept", async () => {
  using rt = new Runtime({ threads: 2 });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let first = true;
  let view: Int32Array | undefined;
  using h = Ffi.bind().ret(D.S32, 1).to((y) => {
    if (!first) {
      y.typed()[3] = 40; // a second call while the first is pending: the buffer itself
      return;
    }
    first = false;
    view = y.typed() as Int32Array;
    view[0] = 10;
    return gate.then(() => {
      view![1] = 20;
    });
  });
  const out = new Int32Array(4);
  using f = new CallFrameBuilder().ret(out, [4]).build();
  const pending = rt.call(h, f);
  // The first call returned its Promise: element 0 is copied already.
  while (view === undefined) await new Promise((r) => setTimeout(r, 1));
  await rt.call(h, f);
  assert.deepEqual([...out], [10, 0, 0, 40]);
  release();
  await pending;
  assert.deepEqual([...out], [10, 20, 0, 40], "the second call's write stays");
});

Deno.test("staging: a call from another thread writes its result itself", async () => {
  using rt = new Runtime({ threads: 1 });
  const datas: number[] = [];
  using h = Ffi.bind().ret(D.S32, 1).to((y) => {
    datas.push(y.data);
    y.typed()[0] = 3;
  });
  const out = new Int32Array(1);
  using f = new CallFrameBuilder().ret(out, [1]).build();
  const r = await rt.callOnThreads(h, f, { threads: 1, iterations: 1 });
  assert.equal(r.ok, 1);
  assert.deepEqual(datas, [addressOf(out)]);
  assert.equal(out[0], 3);
});

Deno.test("staging: a handler calling its own binding: the inner call gets the buffer itself", () => {
  using rt = new Runtime({ threads: 1 });
  const inner = new Int32Array(1);
  using innerFrame = new CallFrameBuilder().ret(inner, [1]).build();
  const datas: number[] = [];
  let depth = 0;
  using h = Ffi.bind().ret(D.S32, 1).to((y) => {
    datas.push(y.data);
    y.typed()[0] = 100 + depth;
    if (depth++ === 0) rt.callSync(h, innerFrame);
  });
  const outer = new Int32Array(1);
  using f = new CallFrameBuilder().ret(outer, [1]).build();
  rt.callSync(h, f);
  assert.deepEqual([outer[0], inner[0]], [100, 101]);
  assert.notEqual(datas[0], addressOf(outer));
  assert.equal(datas[1], addressOf(inner));
});

Deno.test("staging: the JS thread that hosts handlers again after a Worker did copies its own results", async () => {
  // No handler of this thread is open here: the Worker becomes the host, then this thread again.
  const w = new Worker(new URL("./_staging_worker.ts", import.meta.url), { type: "module" });
  const msg = await new Promise<string>((resolve) => w.onmessage = (e) => resolve(e.data));
  w.terminate();
  assert.equal(msg, "[7,0]");
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().ret(D.S32, 1).to((y) => {
    y.typed()[1] = 8;
  });
  const out = new Int32Array(2);
  using f = new CallFrameBuilder().ret(out, [2]).build();
  rt.callSync(h, f);
  assert.deepEqual([...out], [0, 8]);
});

/** glibc's libdl.so.2 (an empty stub since glibc 2.34), where this machine keeps it. */
const LIBDL = (() => {
  const triplet = Deno.build.arch === "aarch64" ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
  for (const dir of [`/lib/${triplet}`, `/usr/lib/${triplet}`, "/lib64", "/usr/lib64"]) {
    try {
      if (Deno.statSync(`${dir}/libdl.so.2`).isFile) return `${dir}/libdl.so.2`;
    } catch { /* not there */ }
  }
  return undefined;
})();

Deno.test({
  name: "staging: with a GPU runtime loaded in the process, results are the buffers themselves" +
    (LIBDL === undefined ? " (ignored: no libdl.so.2 to load as libcuda.so.1)" : ""),
  ignore: LIBDL === undefined,
  fn: async () => {
    const r = await runDeno(new URL("./_staging_child.ts", import.meta.url), [LIBDL!]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const got = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.deepEqual(got, { before: "staged", after: "buffer", results: [[2, 4], [2, 4]] });
  },
});
