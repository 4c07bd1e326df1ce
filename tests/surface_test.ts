/**
 * Buffers entering and leaving call frames: every way data enters a frame
 * is checked against the frame's dims (sub-byte types included), data
 * detached after it entered fails the call naming the operand, views too
 * large for an ArrayBuffer and ffiCall option mistakes are FfiErrors.
 */
import assert from "node:assert/strict";
import {
  allDataTypes,
  byteWidth,
  CallFrameBuilder,
  DataType,
  ErrorCode,
  type FfiCallOptions,
  HandlerLibrary,
  Runtime,
} from "../mod.ts";
import { isFfi } from "./_assert.ts";
import { childContext, runDeno } from "./_child.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

const invalid = (re: RegExp) => isFfi(ErrorCode.INVALID_ARGUMENT, re);

Deno.test("setArg, setRet and updateBuffers check data against the frame's dims", async () => {
  using local = HandlerLibrary.open(testHandlersPath());
  using isolated = HandlerLibrary.open(testHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 1 });
  for (const lib of [local, isolated]) {
    const x = new Float32Array([1, 2, 3, 4]), y = new Float32Array(4);
    using frame = new CallFrameBuilder().arg(x).ret(y).build();
    assert.throws(
      () => frame.setRet(0, new Float32Array(2)),
      invalid(/^result 0: f32\[4\] needs 16 bytes but the array has 8$/),
    );
    assert.throws(
      () => frame.setArg(0, new Float32Array(8)),
      invalid(/^argument 0: f32\[4\] needs 16 bytes but the array has 32$/),
    );
    assert.throws(
      () => frame.setArg(0, new Uint8Array(15)),
      invalid(/^argument 0: f32\[4\] needs 16 bytes but the array has 15$/),
    );
    // A bad buffer anywhere in updateBuffers swaps none of them.
    const x2 = new Float32Array([5, 6, 7, 8]);
    assert.throws(
      () => frame.updateBuffers([x2], [new Float32Array(3)]),
      invalid(/^result 0: f32\[4\] needs 16 bytes but the array has 12$/),
    );
    rt.callSync(lib.handler("test_echo"), frame);
    assert.deepEqual([...y], [1, 2, 3, 4]);
    // Data of the right size (any view of it) is taken, in-process and isolated alike.
    const y2 = new Float32Array(4);
    frame.updateBuffers([new Uint8Array(x2.buffer)], [y2]);
    await rt.call(lib.handler("test_echo"), frame);
    assert.deepEqual([...y2], [5, 6, 7, 8]);
  }
});

Deno.test("a typed array detached or shrunk after it entered a frame fails the call", async () => {
  using local = HandlerLibrary.open(testHandlersPath());
  using isolated = HandlerLibrary.open(testHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 1 });
  for (const lib of [local, isolated]) {
    const echo = lib.handler("test_echo");
    const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
    using frame = new CallFrameBuilder().arg(x).ret(y).build();
    const moved = x.buffer.transfer(); // x's memory is freed or moved: the frame must not use it
    const detached = /^argument 0: its ArrayBuffer was detached \(transferred\)/;
    assert.throws(() => rt.callSync(echo, frame), invalid(detached));
    await assert.rejects(rt.call(echo, frame), invalid(detached));
    await assert.rejects(rt.callOnThreads(echo, frame, { threads: 2 }), invalid(detached));
    // Given the data again, the frame works.
    frame.setArg(0, new Float32Array(moved));
    rt.callSync(echo, frame);
    assert.deepEqual([...y], [1, 2, 3]);
    // A result transferred as postMessage would (structuredClone with transfer).
    structuredClone(y.buffer, { transfer: [y.buffer] });
    assert.throws(
      () => rt.callSync(echo, frame),
      invalid(/^result 0: its ArrayBuffer was detached/),
    );
    // A view of a resizable ArrayBuffer, which could shrink under a call, cannot enter at all
    // (tests/resizable_operands_test.ts).
    const rab = new ArrayBuffer(12, { maxByteLength: 64 });
    assert.throws(
      () => frame.setRet(0, new Float32Array(rab, 0, 3)),
      invalid(/^result 0: the Float32Array's ArrayBuffer is resizable/),
    );
  }
  // A guarded frame: refused before its guard copies anything.
  for (const lib of [local, isolated]) {
    const x = new Float32Array([1, 2]), y = new Float32Array(2);
    using guarded = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
    y.buffer.transfer();
    assert.throws(
      () => rt.callSync(lib.handler("test_echo"), guarded),
      invalid(/^result 0: its ArrayBuffer was detached/),
    );
  }
  // ffiCall: an argument detached before the call.
  const x = new Float32Array(3);
  x.buffer.transfer();
  await assert.rejects(
    rt.ffiCall(local.handler("test_echo"), {
      args: [x],
      results: [{ dtype: DataType.F32, shape: [3] }],
    }),
    invalid(/^argument 0: its ArrayBuffer is detached \(transferred\)$/),
  );
});

const SUB_BYTE = [
  DataType.S1,
  DataType.S2,
  DataType.S4,
  DataType.U1,
  DataType.U2,
  DataType.U4,
  DataType.F4E2M1FN,
];

Deno.test("sub-byte buffers hold one element per byte (ffi.h size_bytes) wherever data enters", async () => {
  assert.throws(
    () => new CallFrameBuilder().arg(new Uint8Array(1), [8388608], DataType.S4),
    invalid(/^argument 0: s4\[8388608\] needs 8388608 bytes but the array has 1$/),
  );
  for (const dt of SUB_BYTE) {
    const name = DataType[dt]!.toLowerCase();
    assert.throws(
      () => new CallFrameBuilder().ret(new Uint8Array(3), [2, 2], dt),
      invalid(new RegExp(`^result 0: ${name}\\[2,2\\] needs 4 bytes but the array has 3$`)),
    );
    using frame = new CallFrameBuilder().arg(new Uint8Array(4), [2, 2], dt).build();
    assert.throws(
      () => frame.setArg(0, new Uint8Array(2)),
      invalid(new RegExp(`^argument 0: ${name}\\[2,2\\] needs 4 bytes but the array has 2$`)),
    );
    frame.setArg(0, new Uint8Array(4));
  }
  // Every data type: ByteWidth × elements (dtype.ts), exactly.
  for (const dt of allDataTypes()) {
    const width = byteWidth(dt);
    if (width === 0) continue;
    using ok = new CallFrameBuilder().arg(new Uint8Array(3 * width), [3], dt).build();
    assert.equal(ok.numArgs, 1);
    assert.throws(
      () => new CallFrameBuilder().arg(new Uint8Array(3 * width - 1), [3], dt),
      invalid(/^argument 0: .*\[3\] needs \d+ bytes but the array has \d+$/),
    );
  }
  using rt = new Runtime({ threads: 0 });
  await assert.rejects(
    rt.ffiCall("surface.none", {
      args: [{ data: new Uint8Array(1), shape: [8], dtype: DataType.U4 }],
      results: [],
    }),
    invalid(/^argument 0: u4\[8\] needs 8 bytes but the array has 1$/),
  );
});

Deno.test("FfiBuffer.typed() of a buffer larger than an ArrayBuffer holds is an FfiError", async () => {
  const r = await runDeno(new URL("./_huge_view_child.ts", import.meta.url));
  assert.equal(r.code, 0, childContext("huge view child", r));
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 4, childContext("huge view child", r));
  for (const line of lines.slice(0, 3)) {
    assert.match(
      line,
      /^FAILED_PRECONDITION FfiBuffer\.typed\(\): the [A-Z0-9]+\[[0-9,]+\] buffer/,
    );
    assert.match(line, /more than a JS ArrayBuffer can view \(9007199254740991\)/);
  }
  assert.equal(lines[3], "done");
});

Deno.test("frame limits are INVALID_ARGUMENT naming the operand, dims in any order", () => {
  const huge = 2 ** 40;
  for (const dims of [[huge, huge, 0], [0, huge, huge], [huge, 0, huge]]) {
    assert.throws(
      () => new CallFrameBuilder().arg(new Float32Array(0), dims),
      invalid(/^argument 0: f32\[.*\] is too large \(more than 9007199254740991 bytes\)$/),
    );
    assert.throws(
      () => new CallFrameBuilder().tokenRet().retPointer(0, DataType.F32, dims),
      invalid(/^result 1: f32\[.*\] is too large/),
    );
  }
  const deep = new Array<number>(257).fill(1);
  assert.throws(
    () => new CallFrameBuilder().argPointer(0, DataType.F32, deep),
    invalid(/^argument 0: rank 257 is more than the 256 dimensions a buffer may have$/),
  );
  assert.throws(
    () => new CallFrameBuilder().argPointer(0, 99 as DataType, [1]),
    invalid(/^argument 0: unknown data type 99$/),
  );
  // Operand counts, attribute names, entries and nesting (native/common.h's limits).
  const tokens = new CallFrameBuilder();
  for (let i = 0; i < 65537; i++) tokens.tokenArg();
  assert.throws(
    () => tokens.build(),
    invalid(/^A call frame may have at most 65536 arguments, this one has 65537$/),
  );
  assert.throws(
    () => new CallFrameBuilder().attr("n".repeat(4097), 1),
    invalid(/^Attribute name 'n+…' is 4097 bytes, more than the 4096 a name may have$/),
  );
  const wide = Object.fromEntries(Array.from({ length: 65537 }, (_, i) => [`k${i}`, i]));
  assert.throws(
    () => new CallFrameBuilder().attr("wide", wide),
    invalid(/^attribute 'wide': 65537 entries, more than the 65536 a dictionary may have$/),
  );
  const nest = (n: number): Record<string, unknown> => n === 1 ? { leaf: 1 } : { d: nest(n - 1) };
  assert.throws(
    () => new CallFrameBuilder().attr("d", nest(65) as never),
    invalid(/^attribute 'd': dictionaries nest more than 64 deep$/),
  );
  // At the limits, frames build.
  using a = new CallFrameBuilder().argPointer(0, DataType.F32, new Array<number>(256).fill(1))
    .arg(new Float32Array(0), [0, 2 ** 20, 2 ** 20]).attr("n".repeat(4096), 1)
    .attr("d", nest(64) as never).build();
  assert.equal(a.numArgs, 2);
});

Deno.test("builder operands: detached arrays, addresses, dtypes, dims and attrs() are checked", () => {
  const detached = () => {
    const v = new Float32Array(4);
    v.buffer.transfer();
    return v;
  };
  assert.throws(
    () => new CallFrameBuilder().arg(detached()),
    invalid(/^argument 0: the Float32Array's ArrayBuffer is detached \(transferred\)/),
  );
  assert.throws(
    () => new CallFrameBuilder().tokenRet().ret(detached(), [0]),
    invalid(/^result 1: the Float32Array's ArrayBuffer is detached/),
  );
  const dv = new DataView(new ArrayBuffer(8));
  dv.buffer.transfer();
  assert.throws(
    () => new CallFrameBuilder().arg({ data: dv, shape: [2], dtype: DataType.F32 }),
    invalid(/^argument 0: the DataView's ArrayBuffer is detached/),
  );
  for (const a of [{}, "0x10", undefined, true, -1, 1.5, NaN, Infinity, 2 ** 53, -1n, 2n ** 64n]) {
    assert.throws(
      () => new CallFrameBuilder().argPointer(a as never, DataType.F32, [1]),
      invalid(/^argument 0: (expected an address|invalid buffer address)/),
      String(a),
    );
    assert.throws(
      () => new CallFrameBuilder().tokenRet().retPointer(a as never, DataType.F32, [1]),
      invalid(/^result 1: (expected an address|invalid buffer address)/),
    );
  }
  // Documented addresses: null, a pointer, a bigint, a safe integer >= 0.
  const p = Deno.UnsafePointer.create(0x1000n);
  using ok = new CallFrameBuilder().argPointer(null, DataType.F32, [0])
    .argPointer(p, DataType.F32, [0]).argPointer(0x2000n, DataType.F32, [0])
    .retPointer(2 ** 53 - 1, DataType.F32, [0]).build();
  assert.equal(ok.numArgs, 3);
  for (const dt of [14, 34, "f32", NaN, 2 ** 32, true]) {
    assert.throws(
      () => new CallFrameBuilder().arg(new Float32Array(4), [4], dt as never),
      invalid(new RegExp(`^argument 0: unknown data type ${String(dt)}$`)),
    );
    assert.throws(
      () => new CallFrameBuilder().retPointer(0, dt as never, [4]),
      invalid(new RegExp(`^result 0: unknown data type ${String(dt)}$`)),
    );
  }
  for (const dims of [5, true, "4", { length: 1 }]) {
    assert.throws(
      () => new CallFrameBuilder().arg(new Float32Array(4), dims as never),
      invalid(/^argument 0: dims must be an array of dimensions/),
    );
    assert.throws(
      () => new CallFrameBuilder().argPointer(0, DataType.F32, dims as never),
      invalid(/^argument 0: dims must be an array of dimensions/),
    );
  }
  for (const d of [null, undefined, 5, "x", [1], new Date(0), new Float32Array(1), () => 1]) {
    assert.throws(
      () => new CallFrameBuilder().attrs(d as never),
      invalid(/^attrs must be a dictionary \(an object or a Map\), got /),
      String(d),
    );
  }
  // A nested value that is no dictionary is refused too, not taken as an empty one.
  assert.throws(
    () => new CallFrameBuilder().attr("when", new Date(0) as never),
    invalid(/^attribute 'when': unsupported attribute value /),
  );
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 20000; i++) deep = { d: deep };
  assert.throws(
    () => new CallFrameBuilder().attrs(deep as never),
    invalid(/^attribute 'd': dictionaries nest more than 64 deep$/),
  );
  using dicts = new CallFrameBuilder().attrs({ a: 1 }).attrs(new Map([["b", 2]]))
    .attrs(Object.assign(Object.create(null), { c: 3 })).build();
  assert.equal(dicts.numArgs, 0);
});

Deno.test("setArg, setRet and updateBuffers check indices, data and lists before changing anything", async () => {
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const echo = lib.handler("test_echo");
  for (const guard of [false, true]) {
    const x = new Float32Array([1, 2]), y = new Float32Array(2);
    using frame = new CallFrameBuilder({ guard }).arg(x).ret(y).build();
    const indices: [unknown, string][] = [
      ["0", '"0"'],
      [0n, "0n"],
      [null, "null"],
      [undefined, "undefined"],
      [1.5, "1.5"],
      [Infinity, "Infinity"],
      [-1, "-1"],
      [1, "1"],
      [2 ** 32, "4294967296"],
    ];
    for (const [i, text] of indices) {
      const re = (what: string) =>
        new RegExp(
          `^${what} index ${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} out of range ` +
            `\\[0, 1\\) \\(the frame has 1 ${what.toLowerCase()}\\)$`,
        );
      assert.throws(() => frame.setArg(i as number, x), invalid(re("Argument")));
      assert.throws(() => frame.setRet(i as number, y), invalid(re("Result")));
    }
    const junk: unknown[] = [true, {}, [], () => 1, "0x1000", undefined, Symbol("s")];
    for (const d of junk) {
      assert.throws(
        () => frame.setArg(0, d as never),
        invalid(/^argument 0: expected a typed array, device memory or an address/),
      );
      assert.throws(
        () => frame.setRet(0, d as never),
        invalid(/^result 0: expected a typed array, device memory or an address/),
      );
    }
    for (const a of [Infinity, 1.5, NaN, -1, 2 ** 53, -1n, 2n ** 64n]) {
      assert.throws(
        () => frame.setArg(0, a as never),
        invalid(/^argument 0: invalid buffer address /),
      );
      assert.throws(() => frame.updateBuffers([x], [a as never]), invalid(/^result 0: invalid/));
    }
    const gone = new Float32Array(2);
    gone.buffer.transfer();
    assert.throws(
      () => frame.setRet(0, gone),
      invalid(/^result 0: the Float32Array's ArrayBuffer is detached/),
    );
    for (
      const [args, rets, re] of [
        [
          undefined,
          [y],
          /^updateBuffers: the arguments must be an array of buffers, got undefined$/,
        ],
        [[x], null, /^updateBuffers: the results must be an array of buffers, got null$/],
        [[x], new Float32Array(2), /^updateBuffers: the results must be an array of buffers/],
        [{ length: 1 }, [y], /^updateBuffers: the arguments must be an array of buffers/],
        [[new Float32Array(2)], [undefined], /^result 0: expected a typed array/],
      ] as const
    ) {
      assert.throws(() => frame.updateBuffers(args as never, rets as never), invalid(re));
    }
    // Nothing was swapped: the frame still computes with x and y.
    x.set([3, 4]);
    rt.callSync(echo, frame);
    assert.deepEqual([...y], [3, 4]);
    await rt.call(echo, frame);
    // A DataView detached after it was set fails the call naming it.
    const view = new DataView(new ArrayBuffer(8));
    frame.setArg(0, view);
    view.buffer.transfer();
    assert.throws(
      () => rt.callSync(echo, frame),
      invalid(/^argument 0: its ArrayBuffer was detached \(transferred\) after it entered/),
    );
    await assert.rejects(
      rt.call(echo, frame),
      invalid(/^argument 0: its ArrayBuffer was detached/),
    );
    // A DataView over a resizable buffer, which could shrink below it, cannot enter.
    const rab = new ArrayBuffer(8, { maxByteLength: 16 });
    assert.throws(
      () => frame.setArg(0, new DataView(rab, 0, 8)),
      invalid(/^argument 0: the DataView's ArrayBuffer is resizable/),
    );
    frame.setArg(0, x); // replacing a detached view is fine
    rt.callSync(echo, frame);
    // A result DataView detached after it was set: setting the argument still works
    // (a guarded frame looks at every operand's memory then), the call names the result.
    const out = new DataView(new ArrayBuffer(8));
    frame.setRet(0, out);
    out.buffer.transfer();
    frame.setArg(0, new Float32Array(2));
    assert.throws(
      () => rt.callSync(echo, frame),
      invalid(/^result 0: its ArrayBuffer was detached/),
    );
    // A DataView a shrunk resizable buffer no longer covers cannot enter.
    const small = new ArrayBuffer(8, { maxByteLength: 16 });
    const outside = new DataView(small, 4, 4);
    small.resize(2);
    assert.throws(
      () => frame.setRet(0, outside),
      invalid(/^result 0: the DataView is out of bounds of its resizable ArrayBuffer/),
    );
    frame.setRet(0, y);
  }
});

Deno.test("ffiCall option mistakes are INVALID_ARGUMENT naming the option", async () => {
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 0 });
  const results = [{ dtype: DataType.F32, shape: [2] }];
  const huge = 2 ** 40;
  const cases: [unknown, RegExp][] = [
    [null, /^ffiCall needs \{ results/],
    [{ results: 5 }, /^ffiCall needs \{ results/],
    [{ results, attrs: null }, /^ffiCall: attrs must be a dictionary .*, got null$/],
    [{ results, attrs: 5 }, /^ffiCall: attrs must be a dictionary .*, got 5$/],
    [{ results, attrs: [1] }, /^ffiCall: attrs must be a dictionary .*, got an array$/],
    [{ results, attrs: "a" }, /^ffiCall: attrs must be a dictionary .*, got "a"$/],
    [{ results, inputOutputAliases: null }, /^ffiCall: inputOutputAliases must be/],
    [{ results, inputOutputAliases: 0 }, /^ffiCall: inputOutputAliases must be/],
    [{ results, vmapMethod: "nope" }, /^ffiCall: vmapMethod must be one of .*, got "nope"$/],
    [{ results, hasSideEffect: 1 }, /^ffiCall: hasSideEffect must be a boolean, got 1$/],
    [{ results, guard: "yes" }, /^ffiCall: guard must be a boolean, got "yes"$/],
    [
      { results, inputLayouts: 5 },
      /^ffiCall: inputLayouts must be an array of layouts \(one per argument, .*got 5$/,
    ],
    [
      { results, outputLayouts: [[1]] },
      /^ffiCall: outputLayouts\[0\] \(result 0, shape \[2\]\): the layout \[1\] is not a permutation of 0..0 /,
    ],
    [
      { results, outputLayouts: [null, null] },
      /^ffiCall: outputLayouts has 2 layouts but there is 1 result$/,
    ],
    [{ results, attr: {} }, /^ffiCall: unknown option 'attr'/],
    [{ results, args: 5 }, /^ffiCall: args must be an array of arrays, got 5$/],
    [{ results, args: [null] }, /^argument 0: expected a typed array or \{ data, shape \}/],
    [{ results, args: [{ data: 5 }] }, /^argument 0: data must be a typed array, got 5$/],
    [
      { results, args: [{ data: new Float32Array(2), shape: null }] },
      /^argument 0: the shape must be an array of dimensions, got null$/,
    ],
    [
      { results, args: [{ data: new DataView(new ArrayBuffer(4)) }] },
      /^argument 0: cannot infer the data type of a DataView; pass dtype$/,
    ],
    [{ results: [null] }, /^result 0: expected \{ dtype, shape \}, got null$/],
    [{ results: [{ dtype: DataType.F32 }] }, /^result 0: a shape is required$/],
    [
      { results: [{ dtype: DataType.F32, shape: null }] },
      /^result 0: the shape must be an array of dimensions, got null$/,
    ],
    [{ results: [{ dtype: DataType.F32, shape: [1.5] }] }, /^result 0: invalid dimension 1.5/],
    [
      { results: [{ dtype: DataType.F32, shape: new Array(257).fill(1) }] },
      /^result 0: rank 257 is more than the 256/,
    ],
    [{ results: [{ dtype: DataType.F32, shape: [huge, huge, 0] }] }, /^result 0: .* too large/],
    [{ results: [{ dtype: DataType.F32, shape: [0, huge, huge] }] }, /^result 0: .* too large/],
    [
      { results, args: [{ data: new Float32Array(0), shape: [0, huge, huge] }] },
      /^argument 0: f32\[0,1099511627776,1099511627776\] is too large/,
    ],
    [{ results: [{ dtype: DataType.TOKEN, shape: [] }] }, /^result 0: TOKEN arrays cannot/],
  ];
  for (const [options, re] of cases) {
    await assert.rejects(
      rt.ffiCall(lib.handler("test_noop"), options as FfiCallOptions),
      invalid(re),
      `options ${Deno.inspect(options)}`,
    );
  }
  // Absent options may be spelled undefined.
  const out = await rt.ffiCall(lib.handler("test_noop"), {
    results,
    attrs: undefined,
    args: undefined,
    guard: undefined,
    inputOutputAliases: undefined,
    inputLayouts: undefined,
    outputLayouts: [undefined],
  });
  assert.equal(out.length, 1);
});
