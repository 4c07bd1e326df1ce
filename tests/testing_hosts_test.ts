/**
 * `ffiCall` and `FfiHost`: each body of tests/_host_cases.ts runs on the
 * embedded runtime here, and on the embedded runtime and real XLA in one
 * child process (one loop over both hosts) when jax is installed. The ffi.h
 * handlers are built at test time against jaxlib's headers.
 */
import assert from "node:assert/strict";
import {
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  HandlerBundle,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { findCxxCompiler } from "../build.ts";
import { childContext, runDeno } from "./_child.ts";
import { FFI_H_CASES, ffiHSkip, HOST_CASES, XLA_CASES } from "./_host_cases.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";

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
  const after = runtimeDebugStats();
  assert.equal(after.framesCreated - before.framesCreated, 20);
  assert.equal(after.framesDestroyed - before.framesDestroyed, 20);
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
