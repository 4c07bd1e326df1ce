/**
 * Handlers from Python extension modules (`Xla.handlersFrom`), each case run
 * in a child by tests/xla_modules_test.ts: jaxlib's LAPACK getrf on the
 * embedded runtime and under real XLA, the initialize rule, both shapes of
 * `registrations()`, skipped targets, and the lifetime after close.
 */
import assert from "node:assert/strict";
import {
  type ArraySpec,
  CallFrameBuilder,
  DataType,
  ErrorCode,
  type FfiCallOptions,
  FfiError,
  Runtime,
} from "../mod.ts";
import { type PythonError, Xla } from "../src/xla/mod.ts";
import { runCaseFromArgs } from "./_xla_env.ts";

const GETRF_RESULTS = (n: number) => [
  { dtype: DataType.F32, shape: [n, n] },
  { dtype: DataType.S32, shape: [n] },
  { dtype: DataType.S32, shape: [] },
];

/** Row-major n×n → column-major (what LAPACK reads). */
function transpose(a: Float32Array, n: number): Float32Array {
  const t = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) t[j * n + i] = a[i * n + j]!;
  return t;
}

/** P·L·U from getrf's column-major LU and 1-based pivots, row-major. */
function reconstruct(lu: Float32Array, ipiv: Int32Array, n: number): number[] {
  const at = (i: number, j: number) => lu[j * n + i]!;
  const a: number[][] = [];
  for (let i = 0; i < n; i++) {
    a.push([]);
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k <= Math.min(i, j); k++) s += (k === i ? 1 : at(i, k)) * at(k, j);
      a[i]!.push(s);
    }
  }
  for (let i = n - 1; i >= 0; i--) {
    const p = ipiv[i]! - 1;
    if (p !== i) [a[i], a[p]] = [a[p]!, a[i]!];
  }
  return a.flat();
}

const A3 = new Float32Array([2, 1, 1, 4, -6, 0, -2, 7, 2]);

async function modulesDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "xla-modules-" });
  const common = `import ctypes
_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
TARGET = b"xla._CUSTOM_CALL_TARGET"
OTHER = b"other.capsule"
def cap(addr, name=TARGET):
    return _new(addr, name, None)
calls = []
def initialize():
    calls.append("initialize")
`;
  await Deno.writeTextFile(
    `${dir}/deno_xla_platforms.py`,
    common + `def registrations():
    calls.append("registrations")
    return {"cpu": [("t.ok", cap(0x1000), 1), ("t.legacy", cap(0x2000), 0),
                    ("t.other", cap(0x3000, OTHER), 1)],
            "CUDA": [("t.gpu", cap(0x4000), 1)]}
`,
  );
  await Deno.writeTextFile(
    `${dir}/deno_xla_flat.py`,
    common + `def registrations():
    return {"f.one": cap(0x1000),
            "f.stages": {"instantiate": cap(0x5000), "execute": cap(0x6000)},
            "f.number": 42}
`,
  );
  await Deno.writeTextFile(
    `${dir}/deno_xla_twice.py`,
    common + `def registrations():
    return {"cpu": [("t.same", cap(0x1000), 1), ("t.same", cap(0x1000), 1),
                    ("t.dup", cap(0x1000), 1), ("t.dup", cap(0x2000), 1)]}
`,
  );
  await Deno.writeTextFile(
    `${dir}/deno_xla_once.py`,
    common + `def registrations():
    return {"cpu": [("t.same", cap(0x1000), 1), ("t.same", cap(0x1000), 1)], "CUDA": [("t.same", cap(0x2000), 1)]}
`,
  );
  await Deno.writeTextFile(
    `${dir}/deno_xla_none.py`,
    common + `def registrations():
    return {"cpu": [("t.ok", cap(0x1000), 1)], "CUDA": None}
`,
  );
  return dir;
}

const CASES: Record<string, () => Promise<void>> = {
  /** LAPACK sgetrf on the embedded runtime: P·L·U ≈ A, pivots and info as numpy/scipy give. */
  async lapackRuntime() {
    await using xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
    assert.ok(lapack.size > 0);
    assert.deepEqual(lapack.skipped, []);
    assert.deepEqual(lapack.platforms, ["cpu"]);
    for (const p of ["s", "d", "c", "z"]) assert.ok(lapack.has(`lapack_${p}getrf_ffi`), p);
    // jaxlib.lapack wraps the same capsules as {"cpu": [(name, capsule, api_version)]}.
    const wrapped = await xla.handlersFrom("jaxlib.lapack");
    assert.deepEqual([...wrapped.keys()].sort(), [...lapack.keys()].sort());
    assert.equal(
      Deno.UnsafePointer.value(wrapped.get("lapack_sgetrf_ffi")!.pointer),
      Deno.UnsafePointer.value(lapack.get("lapack_sgetrf_ffi")!.pointer),
    );
    const getrf = lapack.handler("lapack_sgetrf_ffi");
    assert.equal(getrf.module, "jaxlib.cpu._lapack");
    assert.equal(getrf.apiVersion, 1);
    using rt = new Runtime();
    const [lu, ipiv, info] = await rt.ffiCall(getrf, {
      args: [{ data: transpose(A3, 3), shape: [3, 3] }],
      results: GETRF_RESULTS(3),
    });
    assert.equal((info as Int32Array)[0], 0);
    const back = reconstruct(lu as Float32Array, ipiv as Int32Array, 3);
    back.forEach((v, i) => assert.ok(Math.abs(v - A3[i]!) < 1e-5, `${back} vs ${A3}`));
    // The same as scipy's getrf (what jax.scipy.linalg.lu_factor calls).
    const ref = await xla.runPython(`
a = np.array(${JSON.stringify([...A3])}, dtype=np.float32).reshape(3, 3)
lu, piv = jax.scipy.linalg.lu_factor(a)
result = [np.asarray(lu).T.ravel().tolist(), (np.asarray(piv) + 1).tolist()]
`) as [number[], number[]];
    assert.deepEqual([...(ipiv as Int32Array)], ref[1]);
    [...(lu as Float32Array)].forEach((v, i) => assert.ok(Math.abs(v - ref[0][i]!) < 1e-5));
    // callSync and register on the runtime too.
    rt.register("lapack.sgetrf", getrf);
    const [lu2] = await rt.ffiCall("lapack.sgetrf", {
      args: [{ data: transpose(A3, 3), shape: [3, 3] }],
      results: GETRF_RESULTS(3),
    });
    assert.deepEqual(lu2, lu);
    // callSync with a call frame of its own: the same factors in place.
    const lu3 = new Float32Array(9), ipiv3 = new Int32Array(3), info3 = new Int32Array(1);
    using frame = new CallFrameBuilder().arg(transpose(A3, 3), [3, 3]).ret(lu3, [3, 3]).ret(ipiv3)
      .ret(info3, []).build();
    rt.callSync(getrf, frame);
    assert.deepEqual(lu3, lu);
    assert.deepEqual(ipiv3, ipiv);
  },

  /** The same handler as a target of real XLA (Xla.ffiCall). */
  async lapackXla() {
    await using xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
    const [lu, ipiv, info] = await xla.ffiCall(lapack.handler("lapack_sgetrf_ffi"), {
      args: [{ data: transpose(A3, 3), shape: [3, 3] }],
      results: GETRF_RESULTS(3),
    });
    assert.equal((info as Int32Array)[0], 0);
    const back = reconstruct(lu as Float32Array, ipiv as Int32Array, 3);
    back.forEach((v, i) => assert.ok(Math.abs(v - A3[i]!) < 1e-5));
  },

  /**
   * A name one off a LAPACK handler's (`lapack_sgetrf` for jax's
   * `lapack_sgetrf_ffi`): XLA's NOT_FOUND unchanged and the same hint on
   * both hosts, under real XLA for the names jax registered itself.
   */
  async lapackHints() {
    await using xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
    // jax registers its LAPACK targets the first time it lowers a linear algebra op.
    await xla.runPython("jax.numpy.linalg.inv(jax.numpy.eye(2)).block_until_ready()");
    const registered = await xla.runPython(
      'result = "lapack_sgetrf_ffi" in jax._src.lib.xla_client.custom_call_targets("cpu")',
    );
    assert.equal(registered, true, "jax registered lapack_sgetrf_ffi");
    using rt = new Runtime();
    for (const [name, h] of lapack) rt.register(name, h); // the names jax registers
    const call = { args: [{ data: transpose(A3, 3), shape: [3, 3] }], results: GETRF_RESULTS(3) };
    const fromXla = await xla.ffiCall("lapack_sgetrf", call).then(
      () => assert.fail("resolved"),
      (e: FfiError) => e,
    );
    const fromRt = await rt.ffiCall("lapack_sgetrf", call).then(
      () => assert.fail("resolved"),
      (e: FfiError) => e,
    );
    for (const e of [fromXla, fromRt]) {
      assert.equal(e.code, ErrorCode.NOT_FOUND, e.message);
      assert.match(e.message, /^No FFI handler registered for lapack_sgetrf on a platform /);
      assert.doesNotMatch(e.message, /did you mean/);
      assert.equal(e.hint, "did you mean 'lapack_sgetrf_ffi'?");
      assert.ok(String(e).endsWith(`${e.message}\nHint: did you mean 'lapack_sgetrf_ffi'?`));
    }
  },

  /**
   * jaxlib's LAPACK getrf given a wrong argument or result dtype, too few or
   * too many results, no argument: the same code, message and hint from the
   * embedded runtime and from real XLA (ffi.h's decoding, inside the handler).
   */
  async lapackErrors() {
    await using xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
    using rt = new Runtime();
    const getrf = lapack.handler("lapack_sgetrf_ffi");
    const a = { data: transpose(A3, 3), shape: [3, 3] };
    const calls: [string, FfiCallOptions<readonly ArraySpec[]>, RegExp][] = [
      [
        "an F64 argument",
        { args: [{ data: new Float64Array(9), shape: [3, 3] }], results: GETRF_RESULTS(3) },
        /^\[execute\] Failed to decode all FFI handler operands \(bad operands at: 1\)\nDiagnostics:\nWrong buffer dtype: expected F32 but got F64$/,
      ],
      [
        "an F64 result",
        {
          args: [a],
          results: [{ dtype: DataType.F64, shape: [3, 3] }, ...GETRF_RESULTS(3).slice(1)],
        },
        /^\[execute\] Failed to decode all FFI handler operands \(bad operands at: 2\)\nDiagnostics:\nWrong buffer dtype: expected F32 but got F64$/,
      ],
      [
        "a result missing",
        { args: [a], results: GETRF_RESULTS(3).slice(0, 2) },
        /^\[execute\] Wrong number of results: expected 3 but got 2$/,
      ],
      [
        "a result too many",
        { args: [a], results: [...GETRF_RESULTS(3), { dtype: DataType.F32, shape: [1] }] },
        /^\[execute\] Wrong number of results: expected 3 but got 4$/,
      ],
      [
        "no argument",
        { args: [], results: GETRF_RESULTS(3) },
        /^\[execute\] Wrong number of arguments: expected 1 but got 0$/,
      ],
    ];
    for (const [what, call, message] of calls) {
      const [fromRt, fromXla] = await Promise.all(
        [rt, xla].map((host) =>
          host.ffiCall(getrf, call).then(
            () => assert.fail(`${what}: resolved`),
            (e: FfiError) => e,
          )
        ),
      );
      for (const e of [fromRt!, fromXla!]) {
        assert.ok(e instanceof FfiError, `${what}: ${e}`);
        assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, `${what}: ${e.message}`);
        assert.match(e.message, message, what);
      }
      assert.equal(fromRt!.message, fromXla!.message, what);
      assert.equal(fromRt!.hint, fromXla!.hint, what);
    }
  },

  /**
   * jaxlib's CSR × dense handler (`jaxlib.cpu._sparse`): a wrong value,
   * index or result dtype, a result missing, an argument too many, and a name
   * one letter off: the same code, message and hint from the embedded
   * runtime and from real XLA; a good call the same values.
   */
  async sparseErrors() {
    await using xla = await Xla.open();
    const sparse = await xla.handlersFrom("jaxlib.cpu._sparse");
    // jax registers its sparse targets when jax.experimental.sparse is imported.
    await xla.runPython("import jax.experimental.sparse");
    using rt = new Runtime();
    for (const [name, h] of sparse) rt.register(name, h); // the names jax registers
    const csr = sparse.handler("cpu_csr_sparse_dense_ffi");
    const values = { data: new Float32Array([1, 2, 3]), shape: [3] };
    const indptr = { data: new Int32Array([0, 3]), shape: [2] }; // one row of three entries
    const indices = { data: new Int32Array([0, 1, 0]), shape: [3] };
    const dense = { data: new Float32Array([1, 10]), shape: [2, 1] };
    const results = [{ dtype: DataType.F32, shape: [1, 1] }];
    const good = { args: [values, indptr, indices, dense], results };
    const [fromRt, fromXla] = await Promise.all([rt.ffiCall(csr, good), xla.ffiCall(csr, good)]);
    assert.deepEqual([...fromRt![0]!], [1 + 20 + 3]);
    assert.deepEqual([...fromXla![0]!], [1 + 20 + 3]);
    const calls: [string, string | typeof csr, FfiCallOptions<readonly ArraySpec[]>, RegExp][] = [
      [
        "F64 values",
        csr,
        { args: [{ data: new Float64Array(3), shape: [3] }, indptr, indices, dense], results },
        /^Element type mismatch$/,
      ],
      [
        "S64 indices",
        csr,
        { args: [values, indptr, { data: new BigInt64Array(3), shape: [3] }, dense], results },
        /^Sparse index type mismatch$/,
      ],
      [
        "an F64 result",
        csr,
        { args: good.args, results: [{ dtype: DataType.F64, shape: [1, 1] }] },
        /^Element type mismatch$/,
      ],
      [
        "no result (a side effect asked, so that it runs)",
        csr,
        { args: good.args, results: [], hasSideEffect: true },
        /^\[execute\] Wrong number of results: expected 1 but got 0$/,
      ],
      [
        "an argument too many",
        csr,
        { args: [...good.args, dense], results },
        /^\[execute\] Wrong number of arguments: expected 4 but got 5$/,
      ],
      [
        "a name one letter off",
        "cpu_csr_sparse_dense_ff",
        good,
        /^No FFI handler registered for cpu_csr_sparse_dense_ff on a platform /,
      ],
    ];
    for (const [what, target, call, message] of calls) {
      const [a, b] = await Promise.all([rt, xla].map((host) =>
        host.ffiCall(target, call).then(
          () => assert.fail(`${what}: resolved`),
          (e: FfiError) => e,
        )
      ));
      for (const e of [a!, b!]) {
        assert.ok(e instanceof FfiError, `${what}: ${e}`);
        assert.equal(
          e.code,
          typeof target === "string" ? ErrorCode.NOT_FOUND : ErrorCode.INVALID_ARGUMENT,
          `${what}: ${e.message}`,
        );
        assert.match(e.message, message, what);
      }
      assert.equal(a!.message, b!.message, what);
      assert.equal(a!.hint, b!.hint, what);
      if (typeof target === "string") {
        assert.equal(a!.hint, "did you mean 'cpu_csr_sparse_dense_ffi'?", what);
      }
    }
  },

  /** Without initialize, LAPACK's handler calls a null pointer: the process dies (as in jax). */
  async lapackNoInitialize() {
    await using xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack");
    using rt = new Runtime();
    await rt.ffiCall(lapack.handler("lapack_sgetrf_ffi"), {
      args: [{ data: transpose(A3, 3), shape: [3, 3] }],
      results: GETRF_RESULTS(3),
    });
  },

  /** initialize is called when asked; {platform: [...]} form; legacy and foreign capsules skipped. */
  async platformsForm() {
    const dir = await modulesDir();
    await using xla = await Xla.open();
    await xla.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(dir)})`);
    const hs = await xla.handlersFrom("deno_xla_platforms", { initialize: "initialize" });
    assert.deepEqual(
      await xla.runPython("import deno_xla_platforms as m; result = m.calls"),
      ["initialize", "registrations"],
    );
    assert.deepEqual([...hs.keys()], ["t.ok"]);
    assert.equal(Deno.UnsafePointer.value(hs.get("t.ok")!.pointer), 0x1000n);
    assert.deepEqual(hs.platforms, ["CUDA", "cpu"]);
    assert.deepEqual(hs.skipped.map((s) => [s.name, s.apiVersion]), [["t.legacy", 0], [
      "t.other",
      1,
    ]]);
    assert.match(hs.skipped[0]!.reason, /legacy custom call \(api_version 0\)/);
    assert.match(
      hs.skipped[1]!.reason,
      /PyCapsule named 'other.capsule', not 'xla._CUSTOM_CALL_TARGET'/,
    );
    assert.throws(
      () => hs.handler("t.legacy"),
      (e: FfiError) =>
        e.code === ErrorCode.NOT_FOUND &&
        /deno_xla_platforms registers t.legacy for cpu, but it is a legacy/.test(e.message),
    );
    assert.throws(() => hs.handler("t.nope"), /registers no handler "t.nope"/);
    const gpu = await xla.handlersFrom("deno_xla_platforms", { platform: "cuda" });
    assert.deepEqual([...gpu.keys()], ["t.gpu"]);
    const all = await xla.handlersFrom("deno_xla_platforms", { platform: "*" });
    assert.deepEqual([...all.keys()].sort(), ["t.gpu", "t.ok"]);
    // Without the option, initialize is not called.
    await xla.runPython("import deno_xla_platforms as m; m.calls.clear()");
    await xla.handlersFrom("deno_xla_platforms");
    assert.deepEqual(await xla.runPython("import deno_xla_platforms as m; result = m.calls"), [
      "registrations",
    ]);
    await Deno.remove(dir, { recursive: true });
  },

  /** A flat dict (jaxlib.cpu._lapack's form): stage dicts, non-capsules skipped, errors named. */
  async flatForm() {
    const dir = await modulesDir();
    await using xla = await Xla.open();
    await xla.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(dir)})`);
    const hs = await xla.handlersFrom("deno_xla_flat");
    assert.deepEqual([...hs.keys()], ["f.one", "f.stages"]);
    const st = hs.get("f.stages")!;
    assert.equal(Deno.UnsafePointer.value(st.pointer), 0x6000n);
    assert.equal(Deno.UnsafePointer.value(st.stages!.instantiate!.pointer), 0x5000n);
    assert.deepEqual(hs.skipped.map((s) => [s.name, s.reason]), [[
      "f.number",
      "is a int, not a PyCapsule",
    ]]);
    await assert.rejects(
      xla.handlersFrom("deno_xla_flat", { initialize: "setup" }),
      (e: FfiError) =>
        e.code === ErrorCode.NOT_FOUND && /deno_xla_flat has no function setup\(\)/.test(e.message),
    );
    await assert.rejects(
      xla.handlersFrom("deno_xla_flat", { registrations: "nope" }),
      /has no function nope\(\)/,
    );
    await assert.rejects(
      xla.handlersFrom("no_such_module_here"),
      (e: PythonError) => e.code === ErrorCode.UNAVAILABLE && /no_such_module_here/.test(e.message),
    );
    await assert.rejects(xla.handlersFrom("not a module"), /dotted identifiers/);
    await Deno.remove(dir, { recursive: true });
  },

  /**
   * Odd registrations(): one name listed twice with different handlers is
   * refused as XLA refuses a duplicate registration, naming both; the same
   * handler twice is one; a platform entry of None names the module and
   * the entry.
   */
  async oddRegistrations() {
    const dir = await modulesDir();
    await using xla = await Xla.open();
    await xla.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(dir)})`);
    await assert.rejects(xla.handlersFrom("deno_xla_twice"), (e: FfiError) => {
      assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, e.message);
      assert.equal(
        e.message,
        "Duplicate FFI handler registration for t.dup on platform cpu with different bundle " +
          "addresses: deno_xla_twice.registrations() lists it twice, as {execute: 0x1000} and " +
          "{execute: 0x2000}",
      );
      return true;
    });
    const once = await xla.handlersFrom("deno_xla_once");
    assert.deepEqual([...once.keys()], ["t.same"]);
    assert.equal(Deno.UnsafePointer.value(once.get("t.same")!.pointer), 0x1000n);
    await assert.rejects(xla.handlersFrom("deno_xla_none"), (e: FfiError) => {
      assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, e.message);
      assert.equal(
        e.message,
        "deno_xla_none.registrations()['CUDA'] is None, not a list of (name, capsule, api_version)",
      );
      return true;
    });
    await Deno.remove(dir, { recursive: true });
  },

  /** After the host closes its handlers refuse with FAILED_PRECONDITION, not a crash. */
  async afterClose() {
    const xla = await Xla.open();
    const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
    const getrf = lapack.handler("lapack_sgetrf_ffi");
    await xla.close();
    using rt = new Runtime();
    const closed = (e: FfiError) =>
      e.code === ErrorCode.FAILED_PRECONDITION &&
      /lapack_sgetrf_ffi of the Python module jaxlib.cpu._lapack is unusable: the Xla host that loaded it is closed/
        .test(e.message);
    assert.throws(() => rt.register("x", getrf), closed);
    await assert.rejects(
      async () =>
        await rt.ffiCall(getrf, { args: [{ data: A3, shape: [3, 3] }], results: GETRF_RESULTS(3) }),
      closed,
    );
    await assert.rejects(xla.handlersFrom("jaxlib.cpu._lapack"), /The Xla host is closed/);
  },
};

if (import.meta.main) await runCaseFromArgs(CASES);
