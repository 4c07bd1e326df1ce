/**
 * Operands on resizable buffers. V8 shrinks a resizable ArrayBuffer in
 * place and gives its pages back, so a call in flight over one faulted
 * when JS code shrank or transferred it meanwhile: a call frame refuses
 * such an operand, `ffiCall` reads such an argument from a copy. Growable
 * SharedArrayBuffers only grow, in place, and are taken as they are.
 */
import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  type FfiBuffer,
  HandlerLibrary,
  Runtime,
  scalar,
} from "../mod.ts";
import { childContext, runDeno } from "./_child.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { isFfi } from "./_assert.ts";

const F32 = DataType.F32;
const invalid = (message: string | RegExp) => isFfi(ErrorCode.INVALID_ARGUMENT, message);

/** The refusal of a frame's operand `what` on a resizable ArrayBuffer. */
function refusal(what: string, name = "Float32Array"): string {
  return `${what}: the ${name}'s ArrayBuffer is resizable and may shrink while a call uses it; ` +
    `pass a copy on a fixed-length ArrayBuffer (${
      name === "DataView" ? "a DataView of buffer.slice()" : "slice()"
    })`;
}

for (
  const [mode, what, outcome] of [
    [
      "shrink-ts",
      "a TS handler awaiting (Runtime.call) is shrunk",
      `refused: ${refusal("argument 0")}`,
    ],
    ["transfer-ts", "a TS handler awaiting is transferred", `refused: ${refusal("argument 0")}`],
    ["shrink-pool", "a native handler on the pool is shrunk", `refused: ${refusal("argument 0")}`],
    [
      "transfer-pool",
      "a native handler on the pool is transferred",
      `refused: ${refusal("argument 0")}`,
    ],
    ["shrink-ffi", "ffiCall({ offThread: true }) is shrunk", "resolved; 2"],
    ["transfer-ffi", "ffiCall({ offThread: true }) is transferred", "resolved; 2"],
    ["shrink-ffits", "ffiCall of a TS handler awaiting is shrunk", "resolved; 2"],
  ] as const
) {
  Deno.test(`the resizable ArrayBuffer of ${what} mid-call: no crash`, async () => {
    // Before frames refused these operands (and ffiCall copied them), each child ended with SIGSEGV.
    const r = await runDeno(new URL("./_resizable_in_flight_child.ts", import.meta.url), [mode], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, childContext(mode, r));
    assert.equal(r.stdout.trim(), outcome);
  });
}

Deno.test("a frame refuses an operand on a resizable ArrayBuffer wherever it enters, naming it", () => {
  const rab = new ArrayBuffer(16, { maxByteLength: 64 });
  const fixed = new Float32Array(rab, 0, 4);
  const tracking = new Float32Array(rab); // length-tracking: no fixed length
  const ok = new Float32Array(4);
  assert.throws(() => new CallFrameBuilder().arg(fixed), invalid(refusal("argument 0")));
  assert.throws(() => new CallFrameBuilder().arg(ok).arg(tracking), invalid(refusal("argument 1")));
  assert.throws(() => new CallFrameBuilder().ret(tracking, [2, 2]), invalid(refusal("result 0")));
  assert.throws(
    () => new CallFrameBuilder().arg({ data: fixed, shape: [2, 2] }),
    invalid(refusal("argument 0")),
  );
  assert.throws(
    () => new CallFrameBuilder().ret(new DataView(rab), [4], F32),
    invalid(refusal("result 0", "DataView")),
  );
  assert.throws(
    () => new CallFrameBuilder({ guard: true }).arg(ok).ret(new Uint8Array(rab)),
    invalid(refusal("result 0", "Uint8Array")),
  );
  // The setters refuse it too, and leave the frame as it was.
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 0 });
  const x = new Float32Array([1, 2, 3, 4]), y = new Float32Array(4);
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  assert.throws(() => frame.setArg(0, fixed), invalid(refusal("argument 0")));
  assert.throws(() => frame.setRet(0, tracking), invalid(refusal("result 0")));
  assert.throws(() => frame.updateBuffers([ok], [fixed]), invalid(refusal("result 0")));
  rt.callSync(lib.handler("test_echo"), frame);
  assert.deepEqual([...y], [1, 2, 3, 4]);
  // The copy the message asks for enters.
  frame.setArg(0, fixed.slice());
  frame.setRet(0, new Float32Array(4));
});

Deno.test("ffiCall reads an argument on a resizable ArrayBuffer from a copy", async () => {
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const echo = lib.handler("test_echo");
  const rab = new ArrayBuffer(16, { maxByteLength: 64 });
  new Float32Array(rab).set([1, 2, 3, 4]);
  const results = [{ dtype: F32, shape: [4] }];
  const views = [
    ["a fixed-length view", new Float32Array(rab, 0, 4)],
    ["a length-tracking view", new Float32Array(rab)],
    ["a DataView", { data: new DataView(rab), shape: [4], dtype: F32 }],
    ["bytes", { data: new Uint8Array(rab), shape: [4], dtype: F32 }],
  ] as const;
  for (const [name, arg] of views) {
    // Inline and on the pool, twice each: the second call reuses the frame the first laid out.
    for (const offThread of [false, true, false, true]) {
      const [r] = await rt.ffiCall(echo, { args: [arg], results, offThread });
      assert.deepEqual([...r!], [1, 2, 3, 4], `${name}, offThread ${offThread}`);
    }
  }
  // The handler reads the copy: what the caller's buffer holds meanwhile does not reach it.
  using peek = Ffi.bind().arg(F32, 1).ret(F32, 1).to((a: FfiBuffer, b: FfiBuffer) => {
    new Float32Array(rab).fill(-1);
    (b.typed() as Float32Array).set(a.typed() as Float32Array);
  });
  for (let k = 0; k < 2; k++) {
    new Float32Array(rab).set([1, 2, 3, 4]);
    const [r] = await rt.ffiCall(peek, { args: [new Float32Array(rab)], results });
    assert.deepEqual([...r!], [1, 2, 3, 4], `call ${k}`);
  }
  new Float32Array(rab).set([1, 2, 3, 4]);
  // An argument aliased to a result: the result is written, the caller's data is not.
  using inc = Ffi.bind().arg(F32, 1).ret(F32, 1).to(async (_a: FfiBuffer, b: FfiBuffer) => {
    await Promise.resolve();
    const out = b.typed() as Float32Array;
    for (let i = 0; i < out.length; i++) out[i]! += 10;
  });
  for (let k = 0; k < 2; k++) {
    const [r] = await rt.ffiCall(inc, {
      args: [new Float32Array(rab)],
      results,
      inputOutputAliases: { 0: 0 },
    });
    assert.deepEqual([...r!], [11, 12, 13, 14]);
  }
  assert.deepEqual([...new Float32Array(rab)], [1, 2, 3, 4]);
  // Data that shrank below its shape before the call is the size error it always was.
  rab.resize(8);
  await assert.rejects(
    rt.ffiCall(echo, { args: [{ data: new Float32Array(rab), shape: [4] }], results }),
    invalid("argument 0: f32[4] needs 16 bytes but the array has 8"),
  );
});

Deno.test("operands on SharedArrayBuffers, plain and growable, are taken as they are", async () => {
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 2 });
  const n = 1024;
  let started!: () => void;
  using inc = Ffi.bind().arg(F32, 1).ret(F32, 1).to(async (a: FfiBuffer, b: FfiBuffer) => {
    started();
    await new Promise((r) => setTimeout(r, 20));
    const src = a.typed() as Float32Array, dst = b.typed() as Float32Array;
    for (let i = 0; i < src.length; i++) dst[i] = src[i]! + 1;
  });
  const plain = () => new SharedArrayBuffer(4 * n);
  const growable = () => new SharedArrayBuffer(4 * n, { maxByteLength: 64 * n });
  for (const [name, make] of [["plain", plain], ["growable", growable]] as const) {
    const xb = make(), yb = make();
    // Length-tracking views where the buffer grows: the frame keeps the bytes it was given.
    const x = new Float32Array(xb).fill(1), y = new Float32Array(yb);
    using frame = new CallFrameBuilder().arg(x).ret(y).build();
    const begun = new Promise<void>((r) => started = r);
    const call = rt.call(inc, frame);
    await begun;
    if (xb.growable) {
      xb.grow(64 * n);
      yb.grow(32 * n);
    }
    await call;
    assert.equal(y[0], 2, name);
    assert.equal(y[n - 1], 2, name);
    assert.equal(y.length, xb.growable ? 8 * n : n, name);
    if (xb.growable) assert.equal(y[n], 0, name); // beyond the result's bytes: untouched
    // A native handler on the pool writes the same memory; the frame's views stay.
    using pooled = new CallFrameBuilder()
      .arg(new Float32Array(xb, 0, n))
      .ret(new Float32Array(yb, 0, n))
      .attrs({ delay_ms: scalar(DataType.S64, 20) })
      .build();
    new Float32Array(xb, 0, n).fill(5);
    const slow = rt.call(lib.handler("test_async"), pooled);
    if (xb.growable) xb.grow(64 * n); // as large as it may be: no change
    await slow;
    assert.equal(y[0], 6, name);
    // ffiCall takes it without a copy, and a setter takes it too.
    const [r] = await rt.ffiCall(lib.handler("test_echo"), {
      args: [new Float32Array(xb, 0, n)],
      results: [{ dtype: F32, shape: [n] }],
    });
    assert.equal(r![0], 5, name);
    frame.setArg(0, new Float32Array(xb, 0, n));
  }
});
