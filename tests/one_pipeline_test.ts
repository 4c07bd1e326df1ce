/**
 * One call pipeline: what a handler writes is what its caller gets, on every
 * route, whatever else runs meanwhile. Each test here gave a result nobody
 * wrote, or the state of another call site, when results were staged or
 * kept in storage of the call's frame, or instances keyed by text.
 */
import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  HandlerBundle,
  Runtime,
  scalar,
} from "../mod.ts";
import type { AttrDictionary } from "../mod.ts";

const F32 = DataType.F32;
const F32x1 = { dtype: F32, shape: [1] } as const;

Deno.test("ffiCall: an async TS handler's result is its own when a call of its signature starts as it ends", async () => {
  using rt = new Runtime({ threads: 0 });
  let gate: Promise<void> = Promise.resolve();
  using copy = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
    const v = x.typed()[0]!;
    await gate;
    y.typed()[0] = v;
  });
  const call = (v: number) =>
    rt.ffiCall(copy, { args: [new Float32Array([v])], results: [F32x1] }) as Promise<
      Float32Array[]
    >;
  await call(0); // the signature's frame is kept from here on
  // A second call started 0..6 microtasks after the first's handler resumed, each time.
  for (let depth = 0; depth < 7; depth++) {
    let open!: () => void;
    gate = new Promise((r) => open = r);
    const first = call(1);
    const second = gate.then(async () => {
      for (let k = 0; k < depth; k++) await null;
      gate = Promise.resolve();
      return await call(2);
    });
    open();
    const [[a], [b]] = await Promise.all([first, second]);
    assert.deepEqual([[...a!], [...b!]], [[1], [2]], `second call ${depth} microtasks later`);
  }
});

Deno.test("callSync: a TS handler's writes through the caller's own array reach the caller", () => {
  using rt = new Runtime({ threads: 1 });
  let y = new Float32Array(4);
  using h = Ffi.bind().ret(F32, 1).to((out) => {
    out.typed()[0] = 3;
    y[1] = 5; // the caller's array, not through the FfiBuffer
  });
  for (let i = 0; i < 3; i++) {
    y = new Float32Array([7, 7, 7, 7]); // a new address each call
    using frame = new CallFrameBuilder().ret(y, [4]).build();
    rt.callSync(h, frame);
    assert.deepEqual([...y], [3, 5, 7, 7], `call ${i}`);
  }
});

Deno.test("callSync refuses a pending Promise; what the handler writes later is exactly its own bytes", async () => {
  using rt = new Runtime({ threads: 1 });
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  // A plain function that returns a Promise: a synchronous binding whose handler did not finish.
  using later = Ffi.bind().ret(F32, 1).to((y) =>
    gate.then(() => {
      y.typed()[0] = 2; // 0x40000000
      done();
    })
  );
  const y = new Float32Array(2);
  using frame = new CallFrameBuilder().ret(y).build();
  assert.throws(
    () => rt.callSync(later, frame),
    (e: unknown) => e instanceof FfiError && e.code === ErrorCode.FAILED_PRECONDITION,
  );
  // The caller refills its array, with low bytes no write of 2 has.
  new Uint32Array(y.buffer).fill(0x3f800001);
  open();
  await finished;
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(
    [...new Uint32Array(y.buffer)].map((w) => w.toString(16)),
    ["40000000", "3f800001"],
  );
});

Deno.test("ffiCall keeps one handler instance per call site, attributes compared by value", async () => {
  using rt = new Runtime({ threads: 0 });
  // Each instance records the attribute it was made with; execute reports which instance it has.
  const made: string[] = [];
  using bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().attrs().to((attrs) => {
      const v = attrs.get("v");
      made.push(`${attrs.typeOf("v")}:${typeof v}:${String(v)}`);
      return { id: made.length - 1 };
    }),
    execute: Ffi.bind().ret(DataType.S32, 0).attrs().state<{ id: number }>().to(
      (out, _attrs, state) => {
        out.typed()[0] = state.id;
      },
    ),
  });
  const pairs: [string, AttrDictionary, AttrDictionary][] = [
    ["5n and '5n'", { v: 5n }, { v: "5n" }],
    ["Infinity and 'Infinity'", { v: Infinity }, { v: "Infinity" }],
    ["scalar(S32, 5) and { dtype: 4, value: 5 }", { v: scalar(DataType.S32, 5) }, {
      v: { dtype: 4, value: 5 },
    }],
  ];
  for (const [what, a, b] of pairs) {
    const run = async (attrs: AttrDictionary) => {
      const [r] = await rt.ffiCall(bundle, {
        attrs,
        results: [{ dtype: DataType.S32, shape: [] }],
      });
      return made[(r as Int32Array)[0]!];
    };
    const first = await run(a);
    const second = await run(b);
    assert.notEqual(first, second, `${what}: one instance for both call sites`);
    assert.equal(await run(a), first, `${what}: the first site's instance again`);
  }
});
