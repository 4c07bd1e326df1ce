import assert from "node:assert/strict";
import { DataType, ErrorCode, ExecutionStage } from "../src/abi/enums.ts";
import {
  Ffi,
  type FfiBuffer,
  handlerHostStats,
  type RemainingBuffers,
} from "../src/handler/mod.ts";
import { call, frame, metadata } from "./_handler_harness.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const D = DataType;
const buf = (dtype: DataType, dims: number[], data?: ArrayBufferView) => ({ dtype, dims, data });

Deno.test({
  name: "any-buffer and token arguments and results",
  ...opts,
  fn: async () => {
    let got: FfiBuffer[] = [];
    using h = Ffi.bind().arg().token().ret().tokenRet().to((a, t, r, tr) => {
      got = [a, t, r, tr];
    });
    const data = new Int32Array([1, 2, 3]);
    using f = frame({
      args: [buf(D.S32, [3], data), buf(D.TOKEN, [])],
      rets: [buf(D.F64, [2, 2], new Float64Array(4)), buf(D.TOKEN, [])],
    });
    assert.equal(await call(h.pointer, f), null);
    assert.equal(got[0]!.dtype, D.S32);
    assert.deepEqual([...(got[0]!.typed() as Int32Array)], [1, 2, 3]);
    assert.equal(got[1]!.dtype, D.TOKEN);
    assert.equal(got[1]!.data, 0);
    assert.equal(got[1]!.byteSize, 0);
    assert.equal(got[1]!.typed().length, 0);
    assert.deepEqual(got[2]!.dims, [2, 2]);
    assert.equal(got[3]!.rank, 0);
  },
});

Deno.test({
  name: "remaining args/rets decode on access, with Index out of range",
  ...opts,
  fn: async () => {
    let rest: RemainingBuffers | undefined;
    let rrest: RemainingBuffers | undefined;
    using h = Ffi.bind().arg(D.F32).remainingArgs().remainingRets().to((_x, r, rr) => {
      rest = r;
      rrest = rr;
    });
    using f = frame({
      args: [buf(D.F32, [1]), buf(D.S32, [2, 3]), buf(D.F64, [4])],
      rets: [buf(D.U8, [5])],
    });
    assert.equal(await call(h.pointer, f), null);
    assert.equal(rest!.size, 2);
    assert.deepEqual(rest!.get(0).dims, [2, 3]);
    assert.equal(rest!.get(1, D.F64, 1).dtype, D.F64);
    assert.throws(
      () => rest!.get(2),
      (e: unknown) =>
        (e as { code: number }).code === ErrorCode.INVALID_ARGUMENT &&
        (e as Error).message === "Index out of range",
    );
    assert.throws(
      () => rest!.get(0, D.F32),
      (e: unknown) =>
        (e as { code: number }).code === ErrorCode.INTERNAL &&
        (e as Error).message === "Wrong buffer dtype: expected F32 but got S32",
    );
    assert.equal(rrest!.size, 1);
    assert.equal(rrest!.get(0).dtype, D.U8);
    {
      using empty = frame({});
      assert.deepEqual(await call(h.pointer, empty), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Wrong number of arguments: expected at least 1 but got 0",
      });
    }
  },
});

Deno.test({
  name: "optional args and rets are undefined when absent",
  ...opts,
  fn: async () => {
    let got: unknown[] = [];
    using h = Ffi.bind().arg(D.F32).optionalArg(D.F32).optionalRet().to((...v) => {
      got = v;
    });
    {
      using f = frame({ args: [buf(D.F32, [1])] });
      assert.equal(await call(h.pointer, f), null);
      assert.equal(got[1], undefined);
      assert.equal(got[2], undefined);
    }
    {
      using f = frame({ args: [buf(D.F32, [1]), buf(D.F32, [2])], rets: [buf(D.S8, [3])] });
      assert.equal(await call(h.pointer, f), null);
      assert.deepEqual((got[1] as unknown as FfiBuffer).dims, [2]);
      assert.equal((got[2] as unknown as FfiBuffer).dtype, D.S8);
    }
    {
      using f = frame({});
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Wrong number of arguments: expected at least 1 but got 0",
      });
    }
    {
      using f = frame({ args: [buf(D.F32, [1])], rets: [buf(D.F32, [1]), buf(D.F32, [1])] });
      // Extra results beyond the optional ones are ignored, as in ffi.h.
      assert.equal(await call(h.pointer, f), null);
    }
  },
});

Deno.test({
  name: "binding rules: no Arg after OptionalArg/RemainingArgs, no Attr with Attrs",
  ...opts,
  fn: () => {
    assert.throws(() => Ffi.bind().optionalArg().arg(), TypeError);
    assert.throws(() => Ffi.bind().remainingArgs().arg(), TypeError);
    assert.throws(() => Ffi.bind().remainingArgs().remainingArgs(), TypeError);
    assert.throws(() => Ffi.bind().remainingRets().optionalRet(), TypeError);
    assert.throws(() => Ffi.bind().attrs().attr("a", "i32"), TypeError);
    assert.throws(() => Ffi.bind().attr("a", "i32").attrs(), TypeError);
  },
});

Deno.test({
  name: "result count is checked; results are written in place",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().ret(D.S32, 1).to((r) => {
      r.typed().set([7, 8, 9]);
    });
    {
      using f = frame({});
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Wrong number of results: expected 1 but got 0",
      });
    }
    const out = new Int32Array(3);
    using f = frame({ rets: [buf(D.S32, [3], out)] });
    assert.equal(await call(h.pointer, f), null);
    assert.deepEqual([...out], [7, 8, 9]);
  },
});

Deno.test({
  name: "released slots answer with an error, never crash, and are reused last",
  ...opts,
  fn: async () => {
    const h = Ffi.bind().to(() => {});
    const pointer = h.pointer;
    const slot = h.slot;
    h.close();
    assert.throws(
      () => h.pointer,
      (e: unknown) => (e as { code: number }).code === ErrorCode.FAILED_PRECONDITION,
    );
    using f = frame({});
    assert.deepEqual(await call(pointer, f), {
      code: ErrorCode.FAILED_PRECONDITION,
      message: `TS handler entry point ${slot} was released`,
    });
    const m = metadata(pointer, (await import("./_handler_harness.ts")).harness().hh_api());
    assert.equal(m.code, ErrorCode.FAILED_PRECONDITION);
    // Released slots are reused last: the next handler gets another one, and
    // the kept pointer still answers with the error.
    using again = Ffi.bind().to(() => {});
    assert.notEqual(again.slot, slot);
    assert.equal(await call(again.pointer, f), null);
    assert.equal((await call(pointer, f))?.code, ErrorCode.FAILED_PRECONDITION);
  },
});

Deno.test({
  name: "1024 entry points (less those registered by name); exhaustion is a clear error",
  ...opts,
  fn: () => {
    const hs = [];
    try {
      const free = 1024 - handlerHostStats().registeredEntryPoints;
      for (let i = 0; i < free; i++) hs.push(Ffi.bind().to(() => {}));
      assert.equal(new Set(hs.map((h) => h.address)).size, free);
      assert.throws(
        () => Ffi.bind().to(() => {}),
        (e: unknown) => (e as { code: number }).code === ErrorCode.RESOURCE_EXHAUSTED,
      );
    } finally {
      for (const h of hs) h.close();
    }
  },
});

Deno.test({
  name: "stage-bound handlers reject other stages",
  ...opts,
  fn: async () => {
    for (const stage of [ExecutionStage.PREPARE, ExecutionStage.INITIALIZE]) {
      using h = Ffi.bind(stage).to(() => {});
      using ok = frame({ stage });
      assert.equal(await call(h.pointer, ok), null);
      using bad = frame({ stage: ExecutionStage.EXECUTE });
      const r = await call(h.pointer, bad);
      assert.equal(
        r?.message,
        `Wrong execution stage: expected \`${
          ExecutionStage[stage]!.toLowerCase()
        }\` but got \`execute\``,
      );
    }
  },
});
