/**
 * `ffiCall` and `FfiHost`: each body of tests/_host_cases.ts runs on the
 * embedded runtime here, and on the embedded runtime and real XLA in one
 * child process (one loop over both hosts) when jax is installed. The ffi.h
 * handlers are built at test time against jaxlib's headers.
 */
import assert from "node:assert/strict";
import {
  type ArraySpec,
  DataType,
  type DataTypedArray,
  ErrorCode,
  Ffi,
  FfiError,
  type FfiHost,
  HandlerBundle,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { findCxxCompiler } from "../build.ts";
import { childContext, runDeno } from "./_child.ts";
import { FFI_H_CASES, ffiHSkip, HOST_CASES, XLA_CASES } from "./_host_cases.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";
import type { Xla } from "../src/xla/mod.ts";

const cxx = findCxxCompiler();
const ffiHReason = ffiHSkip() ?? (cxx === undefined ? "no C++ compiler" : undefined);

for (const [name, body] of Object.entries(HOST_CASES)) {
  const needsFfiH = FFI_H_CASES.has(name);
  Deno.test({
    name: `ffiCall on the embedded runtime: ${name}` +
      (needsFfiH && ffiHReason ? ` (ignored: ${ffiHReason})` : ""),
    ignore: needsFfiH && ffiHReason !== undefined,
    fn: async () => {
      using rt = new Runtime({ threads: 1 });
      await body(rt);
    },
  });
}

Deno.test({
  name: xlaName(
    "ffiCall: one test body per case on both hosts (embedded runtime, real XLA); " +
      "XlaProgram.clearCache",
  ),
  ignore: XLA_SKIP !== undefined,
  fn: async () => {
    const r = await runDeno(new URL("./_host_cases.ts", import.meta.url), [], {
      timeoutMs: 180_000,
    });
    const context = childContext("tests/_host_cases.ts", r);
    assert.equal(r.code, 0, context);
    const ran = [
      ...Object.keys(HOST_CASES).filter((n) => !FFI_H_CASES.has(n) || !ffiHReason),
      ...Object.keys(XLA_CASES),
    ];
    assert.equal(r.stdout, ran.map((n) => `ok ${n}\n`).join(""), context);
    assert.doesNotMatch(r.stderr, /Traceback/, context);
  },
});

Deno.test("Runtime.ffiCall: closes what it made, refuses bad options, and a closed runtime", async () => {
  using h = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    y.typed().set(x.typed());
  });
  const rt = new Runtime({ threads: 0 });
  const before = runtimeDebugStats();
  for (let i = 0; i < 20; i++) {
    await rt.ffiCall(h, {
      args: [new Float32Array(4)],
      results: [{ dtype: DataType.F32, shape: [4] }],
    });
  }
  // One call frame laid out for the signature, kept for the next calls until clearCache().
  const after = runtimeDebugStats();
  assert.equal(after.framesCreated - before.framesCreated, 1);
  assert.equal(after.framesDestroyed - before.framesDestroyed, 0);
  rt.clearCache();
  assert.equal(runtimeDebugStats().framesDestroyed - before.framesDestroyed, 1);
  // Another signature, other attributes: another frame each.
  await rt.ffiCall(h, {
    args: [new Float32Array(2)],
    results: [{ dtype: DataType.F32, shape: [2] }],
  });
  await rt.ffiCall(h, {
    args: [new Float32Array(2)],
    results: [{ dtype: DataType.F32, shape: [2] }],
  });
  assert.equal(runtimeDebugStats().framesCreated - before.framesCreated, 2);
  for (
    const [options, re] of [
      [{ results: [{ dtype: DataType.F32, shape: [-1] }] }, /result 0: invalid dimension -1 at 0/],
      [{ results: [{ dtype: 999, shape: [1] }] }, /result 0: unknown data type 999/],
      [
        { args: [{ data: new Float32Array(3), shape: [2] }], results: [] },
        /argument 0: f32\[2\] needs 8 bytes but the array has 12/,
      ],
      [{
        args: [new Float32Array(1)],
        results: [{ dtype: DataType.F32, shape: [1] }],
        inputOutputAliases: { 1: 0 },
      }, /argument index 1 is out of range/],
      [{
        args: [new Float32Array(1)],
        results: [{ dtype: DataType.F32, shape: [1] }],
        inputOutputAliases: { 0: 2 },
      }, /result index 2 is out of range/],
    ] as const
  ) {
    await assert.rejects(
      rt.ffiCall(h, options as never),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT && re.test(e.message),
    );
  }
  await assert.rejects(rt.ffiCall(42 as never, { results: [] }), FfiError);
  rt.close();
  const closed = runtimeDebugStats();
  assert.equal(
    closed.framesDestroyed - before.framesDestroyed,
    closed.framesCreated - before.framesCreated,
  );
  await assert.rejects(
    rt.ffiCall(h, { results: [] }),
    (e: unknown) => e instanceof FfiError && e.code === ErrorCode.FAILED_PRECONDITION,
  );
});

Deno.test("Runtime.clearCache refuses while an ffiCall uses a kept instance", async () => {
  let release!: () => void, entered!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const inside = new Promise<void>((r) => entered = r);
  using bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().to(() => ({ n: 0 })),
    execute: Ffi.bind().ret(DataType.S64, 0).state<{ n: number }>().to(async (out, s) => {
      entered();
      await gate;
      out.typed()[0] = BigInt(++s.n);
    }),
  });
  using rt = new Runtime({ threads: 0 });
  const spec = { results: [{ dtype: DataType.S64, shape: [] }] };
  const pending = rt.ffiCall(bundle, spec);
  await inside;
  assert.throws(
    () => rt.clearCache(),
    (e: unknown) => e instanceof FfiError && e.code === ErrorCode.FAILED_PRECONDITION,
  );
  release();
  assert.equal((await pending)[0]![0], 1n);
  assert.equal((await rt.ffiCall(bundle, spec))[0]![0], 2n); // the instance was kept
  rt.clearCache();
  assert.equal((await rt.ffiCall(bundle, spec))[0]![0], 1n);
});

Deno.test("ffiCall results are typed by their specs (checked by deno check)", async () => {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().ret(DataType.F32).ret(DataType.S64, 0).to((y, n) => {
    y.typed().fill(1.5);
    n.typed()[0] = 7n;
  });
  // Literal dtypes, written inline: no cast, no `as const`.
  const [y, n] = await rt.ffiCall(h, {
    results: [{ dtype: DataType.F32, shape: [2] }, { dtype: DataType.S64, shape: [] }],
  });
  const f32: Float32Array = y;
  const s64: BigInt64Array = n;
  assert.deepEqual([...f32], [1.5, 1.5]);
  assert.equal(s64[0], 7n);
  // @ts-expect-error an F32 result is no Int32Array
  const _notInt: Int32Array = y;
  // Specs kept in a variable `as const`; complex and BF16 by their storage.
  using z = Ffi.bind().ret(DataType.C64).ret(DataType.BF16).to(() => {});
  const specs = [{ dtype: DataType.C64, shape: [1] }, {
    dtype: DataType.BF16,
    shape: [1],
  }] as const;
  const [c, b] = await rt.ffiCall(z, { results: specs });
  const pairs: Float32Array = c, bits: Uint16Array = b;
  assert.equal(pairs.length, 2);
  assert.equal(bits.length, 1);
  // A dtype that is not a literal: any typed array.
  const dtype: DataType = DataType.F32 as DataType;
  using any = Ffi.bind().ret(DataType.F32).to(() => {});
  const [u] = await rt.ffiCall(any, { results: [{ dtype, shape: [1] }] });
  const loose: DataTypedArray = u;
  assert.ok(loose instanceof Float32Array);
  // @ts-expect-error not known to be a Float32Array
  const _notNarrowed: Float32Array = u;
  const list: ArraySpec[] = [{ dtype: DataType.F32, shape: [1] }];
  const all: DataTypedArray[] = await rt.ffiCall(any, { results: list });
  assert.equal(all.length, 1);
  // The same through FfiHost and on Xla (type-checked, not run).
  const host: FfiHost = rt;
  const [viaHost] = await host.ffiCall(any, { results: [{ dtype: DataType.F32, shape: [1] }] });
  const _hostTyped: Float32Array = viaHost;
  const _onXla = async (xla: Xla) => {
    const [x] = await xla.ffiCall("t", { results: [{ dtype: DataType.F64, shape: [] }] });
    const _f64: Float64Array = x;
    // @ts-expect-error an F64 result is no Float32Array
    const _f32: Float32Array = x;
  };
});
