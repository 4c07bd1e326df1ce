/**
 * Runtime calls' frame, options and targets: every mistake is an FfiError
 * naming the argument or option and what was given, on every call path.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, ErrorCode, ExecutionStage, Ffi, Runtime } from "../mod.ts";
import { isFfi } from "./_assert.ts";

function twice() {
  return Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    y.typed().set(x.typed().map((v) => 2 * v));
  });
}

/** Each call path with the same target, frame and options. */
function paths(rt: Runtime) {
  return {
    callSync: (t: unknown, f: unknown, o: unknown) =>
      Promise.resolve().then(() => rt.callSync(t as never, f as never, o as never)),
    call: (t: unknown, f: unknown, o: unknown) => rt.call(t as never, f as never, o as never),
    callOnThreads: (t: unknown, f: unknown, o: unknown) =>
      rt.callOnThreads(t as never, f as never, o as never),
  };
}

Deno.test("call options: options that are not an object are INVALID_ARGUMENT", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
  for (const [name, call] of Object.entries(paths(rt))) {
    for (const o of [0, "", null, 5n, true, [1]]) {
      await assert.rejects(
        call(h, frame, o),
        isFfi(ErrorCode.INVALID_ARGUMENT, new RegExp(`^Runtime\\.${name}: options must be`)),
      );
    }
  }
  await assert.rejects(
    rt.instantiate(h, frame, 0 as never),
    isFfi(ErrorCode.INVALID_ARGUMENT, /^Runtime\.instantiate: options must be an object/),
  );
});

Deno.test("call options: runId, stage, deviceOrdinal and instance are checked", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
  const bad: [string, unknown, RegExp][] = [
    ["runId", 1.5, /runId must be a safe integer or an int64 bigint, got 1\.5$/],
    ["runId", NaN, /runId .* got NaN$/],
    ["runId", Infinity, /runId .* got Infinity$/],
    ["runId", "12", /runId .* got the string "12"$/],
    ["runId", {}, /runId .* got an object$/],
    ["runId", new Map(), /runId .* got a Map$/],
    ["runId", [1, 2], /runId .* got an array of length 2$/],
    ["runId", new Float32Array(2), /runId .* got a Float32Array$/],
    ["runId", Symbol("r"), /runId .* got Symbol\(r\)$/],
    ["runId", 2n ** 63n, /runId .* got 9223372036854775808n$/],
    ["stage", 1.5, /stage must be an ExecutionStage .* got 1\.5$/],
    ["stage", 4, /stage .* got 4$/],
    ["stage", "12", /stage .* got the string "12"$/],
    ["stage", {}, /stage .* got an object$/],
    ["deviceOrdinal", Symbol("d"), /deviceOrdinal must be an int32 integer, got Symbol\(d\)$/],
    ["deviceOrdinal", 2 ** 31, /deviceOrdinal .* got 2147483648$/],
    ["deviceOrdinal", 0.5, /deviceOrdinal .* got 0\.5$/],
    ["instance", "12", /instance must be a handler Instance .* got the string "12"$/],
    ["instance", [], /instance .* got an array of length 0$/],
    ["instance", 0, /instance .* got 0$/],
    ["instance", "", /instance .* got the string ""$/],
    ["instance", 5n, /instance .* got 5n$/],
    ["instance", {}, /instance .* got an object$/],
  ];
  for (const [name, call] of Object.entries(paths(rt))) {
    for (const [key, value, message] of bad) {
      await assert.rejects(
        call(h, frame, { [key]: value }),
        isFfi(ErrorCode.INVALID_ARGUMENT, message),
        `${name} ${key}`,
      );
    }
  }
  // Valid values still work.
  for (const runId of [0, 7, -1, 2n ** 63n - 1n, -(2n ** 63n)]) {
    rt.callSync(h, frame, { runId, stage: ExecutionStage.EXECUTE, deviceOrdinal: 0 });
  }
  rt.callSync(h, frame, { runId: undefined, stage: undefined });
});

Deno.test("call options: userData must be [typeId, pointer] pairs", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
  const p = Deno.UnsafePointer.of(new Uint8Array(8));
  const bad: [unknown, RegExp][] = [
    [1.5, /userData must be a Map or an iterable of \[typeId, pointer\] pairs, got 1\.5$/],
    ["12", /userData must be .* got the string "12"$/],
    [{}, /userData must be .* got an object$/],
    [[null], /userData entry 0 must be a \[typeId, pointer\] pair, got null$/],
    [[[]], /userData entry 0 must be a \[typeId, pointer\] pair, got an array of length 0$/],
    [[[1.5, p]], /userData entry 0: the type id must be .* got 1\.5$/],
    [[["x", p]], /userData entry 0: the type id .* got the string "x"$/],
    [[[2n ** 70n, p]], /userData entry 0: the type id .* got 1180591620717411303424n$/],
    [[[1, 5]], /userData entry 0: the pointer must be a pointer object .* got 5$/],
    [new Map([[1, {}]]), /userData entry 0: the pointer .* got an object$/],
  ];
  for (const [name, call] of Object.entries(paths(rt))) {
    for (const [userData, message] of bad) {
      await assert.rejects(
        call(h, frame, { userData }),
        isFfi(ErrorCode.INVALID_ARGUMENT, message),
        `${name} ${String(message)}`,
      );
    }
  }
  assert.throws(
    () => rt.callSync(h, frame, { userData: [[1, null]] }),
    isFfi(ErrorCode.INVALID_ARGUMENT, "User data must be not null"),
  );
  assert.throws(
    () => rt.callSync(h, frame, { userData: [[1, p], [1n, p]] }),
    isFfi(ErrorCode.ALREADY_EXISTS, /type id 1 already exists/),
  );
  rt.callSync(h, frame, { userData: new Map([[1, p]]) });
});

Deno.test("call options: the frame must be a CallFrame", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  for (const [name, call] of Object.entries(paths(rt))) {
    for (const f of [null, undefined, 5, {}, { pointer: null }]) {
      await assert.rejects(
        call(h, f, undefined),
        isFfi(
          ErrorCode.INVALID_ARGUMENT,
          new RegExp(`^Runtime\\.${name}: frame must be a CallFrame`),
        ),
      );
    }
  }
  await assert.rejects(
    rt.instantiate(h, null as never),
    isFfi(ErrorCode.INVALID_ARGUMENT, /^Runtime\.instantiate: frame must be a CallFrame/),
  );
});

Deno.test("call targets: a bundle's stages are handlers and execute is there", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
  for (const call of Object.values(paths(rt))) {
    await assert.rejects(
      call({ execute: 5 }, frame, undefined),
      isFfi(ErrorCode.INVALID_ARGUMENT, /the execute stage of the bundle must be/),
    );
    await assert.rejects(
      call({ execute: h, prepare: "x" }, frame, undefined),
      isFfi(ErrorCode.INVALID_ARGUMENT, /the prepare stage of the bundle must be/),
    );
    await assert.rejects(
      call({ execute: null }, frame, undefined),
      isFfi(ErrorCode.INVALID_ARGUMENT, /the bundle has no execute stage \(got null\)/),
    );
    await assert.rejects(
      call({ pointer: {} }, frame, undefined),
      isFfi(ErrorCode.INVALID_ARGUMENT, /A runtime call expects/),
    );
  }
  await assert.rejects(
    rt.ffiCall({ execute: null } as never, { results: [] }),
    isFfi(ErrorCode.INVALID_ARGUMENT, /^Runtime\.ffiCall: the bundle has no execute stage/),
  );
});

Deno.test("callOnThreads: thread and iteration counts that are symbols are INVALID_ARGUMENT", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
  await assert.rejects(
    rt.callOnThreads(h, frame, { threads: Symbol("t") as never }),
    isFfi(ErrorCode.INVALID_ARGUMENT, "Invalid thread count Symbol(t)"),
  );
  await assert.rejects(
    rt.callOnThreads(h, frame, { iterations: 2 ** 60 }),
    isFfi(ErrorCode.INVALID_ARGUMENT, /^Invalid iteration count/),
  );
});

Deno.test("ffiCall: results that cannot be allocated are RESOURCE_EXHAUSTED naming the result", async () => {
  using h = twice();
  using rt = new Runtime({ threads: 0 });
  await assert.rejects(
    rt.ffiCall(h, {
      args: [new Float32Array(1)],
      results: [{ dtype: DataType.F32, shape: [2 ** 45] }],
    }),
    isFfi(ErrorCode.RESOURCE_EXHAUSTED, /^result 0: cannot allocate 140737488355328 bytes/),
  );
});
