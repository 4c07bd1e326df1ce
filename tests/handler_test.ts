import assert from "node:assert/strict";
import { THROWN_CASES } from "./_assert.ts";
import { DataType, ErrorCode, ExecutionStage, HandlerTraits } from "../src/abi/enums.ts";
import { Ffi, type FfiBuffer } from "../src/handler/mod.ts";
import { call, frame, metadata } from "./_handler_harness.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const F32 = DataType.F32;

Deno.test({
  name: "buffer args/rets decode with dtype, dims, sizes and a typed view (saxpy)",
  ...opts,
  fn: async () => {
    const x = new Float32Array([1, 2, 3, 4, 5, 6]);
    const y = new Float32Array([10, 20, 30, 40, 50, 60]);
    let seen: FfiBuffer | undefined;
    using h = Ffi.bind().arg(F32, 2).ret(F32, 2).attr("alpha", "f32").to((xb, yb, alpha) => {
      seen = xb;
      const xs = xb.typed(), ys = yb.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]! + ys[i]!;
    });
    using f = frame({
      args: [{ dtype: F32, dims: [2, 3], data: x }],
      rets: [{ dtype: F32, dims: [2, 3], data: y }],
      attrs: { alpha: { scalar: F32, value: 2 } },
    });
    assert.equal(await call(h.pointer, f), null);
    assert.deepEqual([...y], [12, 24, 36, 48, 60, 72]);
    assert.equal(seen!.dtype, F32);
    assert.deepEqual(seen!.dims, [2, 3]);
    assert.equal(seen!.elementCount, 6);
    assert.equal(seen!.byteSize, 24);
    assert.equal(seen!.rank, 2);
    assert.ok(seen!.data > 0);
  },
});

Deno.test({
  name: "errors thrown by a handler keep their code or map to UNKNOWN 'XLA FFI call failed: …'",
  ...opts,
  fn: async () => {
    for (const [thrown, code, message] of THROWN_CASES) {
      using h = Ffi.bind().to(() => {
        throw thrown;
      });
      using f = frame({});
      assert.deepEqual(await call(h.pointer, f), { code, message });
    }
  },
});

Deno.test({
  name: "metadata is answered in C with api NULL: version (default 0.4) and traits",
  ...opts,
  fn: () => {
    using h = Ffi.bind().to(() => {}, { traits: HandlerTraits.COMMAND_BUFFER_COMPATIBLE });
    assert.deepEqual(metadata(h.pointer), {
      major: 0,
      minor: 4,
      traits: 1,
      code: 0,
      message: "",
    });
    using h2 = Ffi.bind().to(() => {}, { apiVersion: "0.1" });
    const m = metadata(h2.pointer);
    assert.equal(m.minor, 1);
    assert.equal(m.traits, 0);
  },
});

Deno.test({
  name: "frame checks: size, stage, arity, dtype, rank with ffi.h messages",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().arg(F32, 1).arg(F32).to(() => {});
    const buf = (dtype: DataType, dims: number[]) => ({ dtype, dims });
    {
      using f = frame({ args: [buf(F32, [1])] });
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Wrong number of arguments: expected 2 but got 1",
      });
    }
    {
      using f = frame({ args: [buf(F32, [1, 2]), buf(DataType.S32, [1])] });
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Failed to decode all FFI handler operands (bad operands at: 0, 1)\n" +
          "Diagnostics:\nWrong buffer rank: expected 1 but got 2" +
          "Wrong buffer dtype: expected F32 but got S32",
      });
    }
    {
      using f = frame({ args: [buf(F32, [1]), buf(F32, [1])], stage: ExecutionStage.PREPARE });
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "Wrong execution stage: expected `execute` but got `prepare`",
      });
    }
    {
      using f = frame({ args: [buf(F32, [1]), buf(F32, [1])] });
      const { harness } = await import("./_handler_harness.ts");
      harness().hh_frame_set(f.pointer, 160, ExecutionStage.EXECUTE);
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message:
          "Unexpected XLA_FFI_CallFrame size: expected 168 got 160. Check installed software versions.",
      });
    }
  },
});

Deno.test({
  name: "metadata: undersized extension or metadata structs get ffi.h's messages",
  ...opts,
  fn: async () => {
    const { harness } = await import("./_handler_harness.ts");
    using h = Ffi.bind().to(() => {});
    const api = harness().hh_api();
    assert.deepEqual(
      metadata(h.pointer, api, { extension: 24 }).message,
      "Unexpected XLA_FFI_Metadata_Extension size: expected at least 32 got 24. " +
        "Check installed software versions.",
    );
    const m = metadata(h.pointer, api, { metadata: 20 });
    assert.equal(m.code, ErrorCode.INVALID_ARGUMENT);
    assert.equal(
      m.message,
      "Unexpected XLA_FFI_Metadata size: expected at least 36 got 20. " +
        "Check installed software versions.",
    );
  },
});

Deno.test({
  name: "a frame too large for the flat buffer is an error, not a crash",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().attr("big", "i64[]").to(() => {});
    using f = frame({
      attrs: { big: { array: DataType.S64, values: new Array(40_000).fill(1) } },
    });
    assert.deepEqual(await call(h.pointer, f), {
      code: ErrorCode.RESOURCE_EXHAUSTED,
      message: "The call frame is too large for the TS handler flat buffer",
    });
  },
});
