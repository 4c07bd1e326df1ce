/**
 * Test bodies written once for any {@link FfiHost}: each takes a host and
 * checks `ffiCall` there. `tests/testing_hosts_test.ts` runs them on the
 * embedded runtime in-process and, when jax is installed, on both hosts in a
 * child process (`deno run … tests/_host_cases.ts`), one loop over
 * `[runtime, xla]` per body: a crash inside XLA then fails one test instead
 * of the runner. The C++ handlers are built at test time against jaxlib's
 * `ffi.h` (native/tests/testing_handlers.cc).
 *
 * @module
 */
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import {
  array,
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  type FfiHost,
  HandlerBundle,
  HandlerLibrary,
  Runtime,
  scalar,
} from "../mod.ts";
import { readNpy, writeNpy } from "../src/npy.ts";
import { Xla } from "../src/xla/mod.ts";
import {
  assertAllClose,
  assertArrayEqual,
  complex64,
  complexPairs,
  like,
} from "../src/testing/mod.ts";
import { jaxlibHeaders } from "./_jax.ts";
import { openTestHandlers } from "./_runtime_handlers.ts";

const F32 = DataType.F32;

/** numpy-free reference: x / sqrt(mean(x^2) + eps) over the last axis. */
export function rmsNormRef(x: Float32Array, row: number, eps = 1e-5): Float64Array {
  const out = new Float64Array(x.length);
  for (let s = 0; s < x.length; s += row) {
    let sq = 0;
    for (let i = 0; i < row; i++) sq += x[s + i]! * x[s + i]!;
    const scale = Math.sqrt(sq / row + eps);
    for (let i = 0; i < row; i++) out[s + i] = x[s + i]! / scale;
  }
  return out;
}

/** `n` values from `lo` to `hi` (numpy's linspace). */
export function linspace(lo: number, hi: number, n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
}

/** Why the ffi.h handlers cannot be built here, or undefined. */
export function ffiHSkip(): string | undefined {
  return jaxlibHeaders().reason;
}

/** The ffi.h test handlers, built once (cached by build.ts) against jaxlib's headers. */
export function ffiHLibrary(): HandlerLibrary {
  return HandlerLibrary.open(ffiHLibraryPath());
}

/** The path of the ffi.h test handlers' library (built when needed). */
export function ffiHLibraryPath(): string {
  return buildSharedLibrary({
    name: "testing_ffi_h_handlers",
    sources: ["native/tests/testing_handlers.cc"],
    cxx: true,
    // XLA's header does not build warning-free; it is not this project's code.
    baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
    includeDirs: [jaxlibHeaders().includeDir!],
  });
}

/** Rejects with an FfiError of `code`; returns it. */
async function rejects(p: Promise<unknown>, code: ErrorCode): Promise<FfiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof FfiError, `expected an FfiError, got ${String(e)}`);
    assert.equal(e.codeName, ErrorCode[code], e.message);
    return e;
  }
  assert.fail("expected a rejection");
}

/** A name unique to the host, for handlers registered by name. */
function named(host: FfiHost, name: string): string {
  return `${host instanceof Runtime ? "rt" : "xla"}.${name}`;
}

/** The bodies, each run on every host. */
export const HOST_CASES: Record<string, (host: FfiHost) => Promise<void>> = {
  /** TS handlers: rank-0 results, shapes, NpyArray arguments, aliasing, complex, async. */
  async tsHandlers(host) {
    using sum = Ffi.bind().arg(F32).ret(F32, 0).to((x, out) => {
      out.typed()[0] = x.typed().reduce((a, b) => a + b, 0);
    });
    const [total] = await host.ffiCall(sum, {
      args: [{ data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] }],
      results: [{ dtype: F32, shape: [] }],
    });
    assertArrayEqual(total!, [10]);
    // By registered name, an NpyArray argument, a result shaped like it.
    using twice = Ffi.bind().arg(F32, 2).ret(F32, 2).to(async (x, y) => {
      await null; // an async handler: a future on both hosts
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
    });
    await host.register(named(host, "twice"), twice);
    const npy = readNpy(
      writeNpy({ dtype: F32, shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) }),
    );
    const [y] = await host.ffiCall(named(host, "twice"), { args: [npy], results: [like(npy)] });
    assertAllClose({ data: y!, shape: [2, 3] }, [[2, 4, 6], [8, 10, 12]]);
    // input_output_aliases: one address for argument 0 and result 0; the caller's array is kept.
    let same = false;
    using addOne = Ffi.bind().arg(F32).ret(F32).to((x, out) => {
      same = x.data === out.data;
      const o = out.typed();
      for (let i = 0; i < o.length; i++) o[i]! += 1;
    });
    const input = new Float32Array([1, 2, 3]);
    const [inPlace] = await host.ffiCall(addOne, {
      args: [input],
      results: [like(input)],
      inputOutputAliases: { 0: 0 },
    });
    assert.ok(same, "the handler saw one buffer for the argument and the result");
    assertArrayEqual(inPlace!, [2, 3, 4]);
    assertArrayEqual(input, [1, 2, 3]);
    await rejects(
      host.ffiCall(addOne, {
        args: [input],
        results: [{ dtype: F32, shape: [2] }],
        inputOutputAliases: { 0: 0 },
      }),
      ErrorCode.INVALID_ARGUMENT,
    );
    // Complex: interleaved (re, im) pairs.
    using conj = Ffi.bind().arg(DataType.C64).ret(DataType.C64).to((z, out) => {
      const zs = z.typed(), o = out.typed();
      for (let i = 0; i < zs.length; i += 2) {
        o[i] = zs[i]!;
        o[i + 1] = -zs[i + 1]!;
      }
    });
    const z = complex64([1, 3], [2, -1]);
    const [zc] = await host.ffiCall(conj, { args: [z], results: [like(z)] });
    assertAllClose(zc!, complex64([1, 3], [-2, 1]));
    assert.deepEqual(complexPairs(zc!), [[1, -2], [3, 1]]);
  },

  /** The same mistake reads the same: code, message and hint. */
  async sameErrors(host) {
    using wantsF32 = Ffi.bind().arg(F32).ret(F32).attr("alpha", "f32").to(() => {});
    const e = await rejects(
      host.ffiCall(wantsF32, {
        args: [new Float32Array(2)],
        results: [{ dtype: F32, shape: [2] }],
        attrs: { alpha: 2 },
      }),
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.equal(
      e.message,
      "[execute] Failed to decode all FFI handler operands (bad operands at: 2)\n" +
        "Diagnostics:\nWrong scalar data type: expected F32 but got S64",
    );
    assert.equal(
      e.hint,
      "attribute 'alpha' is S64 because it was given as a plain JS number (an integer " +
        "makes S64, any other number F64): give the type the handler expects, " +
        "attrs: { alpha: scalar(DataType.F32, 2) }",
    );
    const wrongDtype = await rejects(
      host.ffiCall(wantsF32, {
        args: [new Float64Array(2)],
        results: [{ dtype: F32, shape: [2] }],
        attrs: { alpha: scalar(F32, 2) },
      }),
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.match(wrongDtype.message, /Wrong buffer dtype: expected F32 but got F64/);
    const unknown = await rejects(
      host.ffiCall(named(host, "not.registered"), { results: [{ dtype: F32, shape: [] }] }),
      ErrorCode.NOT_FOUND,
    );
    assert.match(unknown.message, /^No FFI handler registered for (rt|xla)\.not\.registered /);
    // Complex data given without its type: the size mismatch says which type it probably is.
    const complexData = await rejects(
      host.ffiCall(wantsF32, {
        args: [{ data: new Float32Array(8), shape: [2, 2] }],
        results: [{ dtype: F32, shape: [2, 2] }],
        attrs: { alpha: scalar(F32, 2) },
      }),
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.equal(
      complexData.message,
      "argument 0: f32[2,2] needs 16 bytes but the array has 32 (a Float32Array of twice the " +
        "elements: complex data? give dtype: DataType.C64)",
    );
    // A name close to a registered one: the hint on both hosts.
    await host.register(named(host, "same.errors.scale"), wantsF32);
    const typo = await rejects(
      host.ffiCall(named(host, "same.errors.sclae"), { results: [{ dtype: F32, shape: [] }] }),
      ErrorCode.NOT_FOUND,
    );
    assert.match(
      typo.message,
      /^No FFI handler registered for (rt|xla)\.same\.errors\.sclae on a platform \S+ \(canonical host\)/,
    );
    assert.doesNotMatch(typo.message, /did you mean/);
    assert.equal(typo.hint, `did you mean '${named(host, "same.errors.scale")}'?`);
    await rejects(host.ffiCall(wantsF32, { results: null as never }), ErrorCode.INVALID_ARGUMENT);
  },

  /**
   * A call without results runs only with a side effect, as jax does: without one, jax's
   * `ffi_call` has no effect and no output and `jax.jit` drops it before XLA sees it.
   */
  async noResults(host) {
    let calls = 0, made = 0;
    using count = Ffi.bind().arg(F32).to(() => {
      calls++;
    });
    using wantsResult = Ffi.bind().arg(F32).ret(F32).to(() => {
      calls++;
    });
    using stateful = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().to(() => ({ n: made++ })),
      execute: Ffi.bind().arg(F32).state<{ n: number }>().to(() => {
        calls++;
      }),
    });
    const x = { data: new Float32Array([1, 2]), shape: [2] };
    // Dropped: nothing runs, a name is not looked up, attributes are not decoded.
    assert.deepEqual(await host.ffiCall(count, { args: [x], results: [] }), []);
    assert.deepEqual(await host.ffiCall(wantsResult, { args: [x], results: [] }), []);
    assert.deepEqual(
      await host.ffiCall(count, { args: [x], results: [], attrs: { unexpected: 1 } }),
      [],
    );
    assert.deepEqual(await host.ffiCall(stateful, { args: [x], results: [] }), []);
    assert.deepEqual(
      await host.ffiCall(named(host, "no.results.unknown"), { results: [], hasSideEffect: false }),
      [],
    );
    assert.deepEqual([calls, made], [0, 0]);
    // What jax checks before dropping it still fails.
    await rejects(
      host.ffiCall(count, { args: [{ data: new Float32Array(3), shape: [2] }], results: [] }),
      ErrorCode.INVALID_ARGUMENT,
    );
    await rejects(
      host.ffiCall(count, { args: [x], results: [], inputOutputAliases: { 0: 0 } }),
      ErrorCode.INVALID_ARGUMENT,
    );
    await rejects(host.ffiCall(42 as never, { results: [] }), ErrorCode.INVALID_ARGUMENT);
    // With a side effect it runs, and its errors are XLA's.
    assert.deepEqual(
      await host.ffiCall(count, { args: [x], results: [], hasSideEffect: true }),
      [],
    );
    assert.equal(calls, 1);
    await host.ffiCall(stateful, { args: [x], results: [], hasSideEffect: true });
    assert.deepEqual([calls, made], [2, 1]);
    const missing = await rejects(
      host.ffiCall(wantsResult, { args: [x], results: [], hasSideEffect: true }),
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.equal(missing.message, "[execute] Wrong number of results: expected 1 but got 0");
    const unknown = await rejects(
      host.ffiCall(named(host, "no.results.unknown"), { results: [], hasSideEffect: true }),
      ErrorCode.NOT_FOUND,
    );
    assert.match(unknown.message, /^No FFI handler registered for (rt|xla)\.no\.results\.unknown /);
    assert.equal(calls, 2);
    // Results that all hold no element: XLA replaces each with an empty constant
    // (ZeroSizedHloElimination) and removes the custom call, without a side effect.
    using fills = Ffi.bind().arg(F32).ret(F32).ret(DataType.S32).to(() => {
      calls++;
    });
    const empty = await host.ffiCall(fills, {
      args: [x],
      results: [{ dtype: F32, shape: [0] }, { dtype: DataType.S32, shape: [2, 0] }],
    });
    assert.deepEqual(empty.map((a) => [a.constructor.name, a.length]), [
      ["Float32Array", 0],
      ["Int32Array", 0],
    ]);
    const emptyAliased = await host.ffiCall(wantsResult, {
      args: [{ data: new Float32Array(0), shape: [3, 0] }],
      results: [{ dtype: F32, shape: [3, 0] }],
      inputOutputAliases: { 0: 0 },
    });
    assert.deepEqual(emptyAliased.map((a) => a.length), [0]);
    assert.equal(calls, 2, "a call of empty results ran without a side effect");
    // One result with an element, or a side effect: it runs.
    await host.ffiCall(fills, {
      args: [x],
      results: [{ dtype: F32, shape: [0] }, { dtype: DataType.S32, shape: [1] }],
    });
    await host.ffiCall(fills, {
      args: [x],
      results: [{ dtype: F32, shape: [0] }, { dtype: DataType.S32, shape: [0] }],
      hasSideEffect: true,
    });
    assert.equal(calls, 4);
    await host.clearCache();
  },

  /** A TS bundle's instantiate state lasts per signature until clearCache. */
  async tsState(host) {
    using bundle = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().attr("start", "i64").to((start) => ({ count: start })),
      execute: Ffi.bind().ret(DataType.S64, 0).state<{ count: number }>().to((out, s) => {
        out.typed()[0] = BigInt(++s.count);
      }),
    });
    const call = () =>
      host.ffiCall(bundle, {
        results: [{ dtype: DataType.S64, shape: [] }],
        attrs: { start: scalar(DataType.S64, 41) },
      });
    const got: bigint[] = [];
    for (let i = 0; i < 3; i++) got.push((await call())[0]![0] as bigint);
    assert.deepEqual(got, [42n, 43n, 44n]);
    await host.clearCache();
    assert.equal((await call())[0]![0], 42n);
    await host.clearCache();
  },

  /** C++ handlers built with jaxlib's ffi.h, the same body on both hosts. */
  async ffiH(host) {
    using lib = ffiHLibrary();
    await host.register(named(host, "rms_norm"), lib.handler("testing_rms_norm"));
    for (const shape of [[15], [3, 5]]) {
      const x = { data: linspace(-0.5, 0.5, 15), shape };
      const [y] = await host.ffiCall(named(host, "rms_norm"), {
        args: [x],
        results: [like(x)],
        attrs: { eps: scalar(F32, 1e-5) },
      });
      assertAllClose({ data: y!, shape }, {
        data: rmsNormRef(x.data, shape.at(-1)!),
        shape,
      }, { rtol: 1e-6 });
    }
    const rank0 = await rejects(
      host.ffiCall(named(host, "rms_norm"), {
        args: [{ data: new Float32Array([2]), shape: [] }],
        results: [{ dtype: F32, shape: [] }],
        attrs: { eps: scalar(F32, 1e-5) },
      }),
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.match(rank0.message, /rms_norm: x must have an axis/);
    // A rank-0 result.
    const [s] = await host.ffiCall(lib.handler("testing_sum"), {
      args: [new Float32Array([1.5, 2.5, 3])],
      results: [{ dtype: F32, shape: [] }],
    });
    assertArrayEqual(s!, 7);
    // Complex64.
    const x = complex64([1, 2], [1, -1]), w = complex64([0, 2], [1, 0]);
    const [c] = await host.ffiCall(lib.handler("testing_conj_mul"), {
      args: [x, w],
      results: [like(x)],
    });
    assertAllClose(c!, complex64([1, 4], [1, 2])); // (1-1i)(0+1i), (2+1i)*2
    // Aliasing: the handler fails unless its result is its argument's buffer.
    const v = new Float32Array([1, 2, 3]);
    const inPlace = lib.handler("testing_add_one_in_place");
    const [added] = await host.ffiCall(inPlace, {
      args: [v],
      results: [like(v)],
      inputOutputAliases: { 0: 0 },
    });
    assertArrayEqual(added!, [2, 3, 4]);
    const notAliased = await rejects(
      host.ffiCall(inPlace, { args: [v], results: [like(v)] }),
      ErrorCode.FAILED_PRECONDITION,
    );
    assert.match(notAliased.message, /the result is not the argument's buffer/);
    // Column-major operands, as a BLAS kernel takes them: a (2x3) @ b (3x2), given row-major.
    const a = { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] };
    const b = { data: new Float32Array([7, 8, 9, 10, 11, 12]), shape: [3, 2] };
    const [product] = await host.ffiCall(lib.handler("testing_col_major_matmul"), {
      args: [a, b],
      results: [{ dtype: F32, shape: [2, 2] }],
      inputLayouts: [[1, 0], [1, 0]],
      outputLayouts: [[1, 0]],
    });
    assertAllClose({ data: product!, shape: [2, 2] }, [[58, 64], [139, 154]]);
    // State: the library's type id registered with the host, then the counter counts.
    const id = lib.typeId("testing_counter_type_id");
    const assigned = await host.registerType("testing.Counter", id, {
      typeInfo: lib.typeInfo("testing_counter_type_info"),
    });
    assert.equal(id.value, BigInt(assigned));
    const counter = {
      instantiate: lib.handler("testing_counter_instantiate"),
      execute: lib.handler("testing_counter_execute"),
    };
    await host.register(named(host, "counter"), counter);
    const count = async () =>
      (await host.ffiCall(named(host, "counter"), {
        results: [{ dtype: DataType.S64, shape: [] }],
        attrs: { start: scalar(DataType.S64, 41) },
      }))[0]![0];
    assert.deepEqual([await count(), await count(), await count()], [42n, 43n, 44n]);
    await host.clearCache();
    assert.equal(await count(), 42n);
    await host.clearCache();
  },
  /** A guarded call: the clean result, and the same DATA_LOSS for a write into an argument. */
  async guardedCall(host) {
    using twice = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      y.typed().set(x.typed().map((v) => 2 * v));
    });
    const [y] = await host.ffiCall(twice, {
      args: [new Float32Array([1, 2])],
      results: [like(new Float32Array(2))],
      guard: true,
    });
    assert.deepEqual([...y!], [2, 4]);
    using writes = Ffi.bind().arg(F32).ret(F32).to((x) => {
      x.typed()[1] = 5;
    });
    await assert.rejects(
      host.ffiCall(writes, {
        args: [new Float32Array([1, 2])],
        results: [like(new Float32Array(2))],
        guard: true,
      }),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.DATA_LOSS &&
        // 2 -> 5 as F32 first differs at byte 2 of element 1.
        /^Handler 'handler' wrote into argument 0 at byte offset 6 \(arguments are read-only; found by a copy compared after the call\)$/
          .test(e.message),
    );
  },

  /**
   * A guarded call with an aliased pair: the handler sees one buffer for the
   * argument and its result (a write to the result is read back through the
   * argument), as unguarded and as on the other host; the argument is not
   * taken to be written.
   */
  async guardedAlias(host) {
    using inPlace = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      const xs = x.typed(), ys = y.typed();
      ys[0] = 1;
      ys[1] = xs[0]! + 10; // 11 when x and y are one buffer
      ys[2] = xs[2]! * 2;
    });
    for (const guard of [false, true]) {
      const [y] = await host.ffiCall(inPlace, {
        args: [new Float32Array([5, 6, 7])],
        results: [like(new Float32Array(3))],
        inputOutputAliases: { 0: 0 },
        guard,
      });
      assert.deepEqual([...y!], [1, 11, 14], `guard: ${guard}`);
    }
  },

  /**
   * Float attributes reach a handler bit for bit: signalling and quiet NaNs of
   * both signs with payloads, denormals and -0 in F32/F64 arrays (as XLA's
   * frames hold them); a repeated call whose array differs only in a NaN's
   * payload gets the new bytes; a scalar given as a JS number is converted once.
   */
  /**
   * A native handler computes in XLA's floating-point mode on both hosts:
   * denormals read as zero and flushed to zero (test_scale: y = x × factor).
   */
  async nativeDenormals(host) {
    using lib = openTestHandlers();
    await host.register(named(host, "scale_fp"), lib.handler("test_scale"));
    // A denormal argument, a product that would be denormal, and a normal one.
    const x = new Float32Array(new Uint32Array([0x00000400, 0x00800000, 0x3f800000]).buffer);
    for (const offThread of [false, true]) {
      const [y] = await host.ffiCall(named(host, "scale_fp"), {
        args: [x],
        results: [{ dtype: F32, shape: [3] }],
        attrs: { factor: scalar(F32, 0.5) },
        ...(offThread ? { offThread } : {}),
      });
      assert.deepEqual(
        [...new Uint32Array((y as Float32Array).buffer)],
        [0, 0, 0x3f000000],
        offThread ? "offThread" : "inline",
      );
    }
  },

  async attrBits(host) {
    using lib = openTestHandlers();
    await host.register(named(host, "attr_bytes"), lib.handler("test_attr_bytes"));
    const f32Bits = [0x7f800001, 0xff800001, 0x7fc00123, 0xffc00123, 1, 0x80000001, 0x80000000];
    const f64Bits = [0x7ff0000000000001n, 0xfff8000000000abcn, 1n];
    const f32 = new Float32Array(new Uint32Array(f32Bits).buffer);
    const f64 = new Float64Array(new BigUint64Array(f64Bits).buffer);
    const call = async (a: Float32Array, b: Float64Array) => {
      const [out] = await host.ffiCall(named(host, "attr_bytes"), {
        results: [{ dtype: DataType.U8, shape: [64] }],
        attrs: {
          a: a,
          b: array(DataType.F64, b),
          c: scalar(F32, 1 / 3),
          d: scalar(DataType.F64, -0),
        },
      });
      return out as Uint8Array;
    };
    const expected = (a: Float32Array, b: Float64Array) => {
      const e = new Uint8Array(64);
      e.set(new Uint8Array(a.buffer), 0);
      e.set(new Uint8Array(b.buffer), 28);
      new DataView(e.buffer).setFloat32(52, 1 / 3, true);
      new DataView(e.buffer).setFloat64(56, -0, true);
      return e;
    };
    assert.deepEqual(await call(f32, f64), expected(f32, f64));
    // Only a NaN's payload (then its sign) changes: a new frame, not the kept one.
    const f32b = f32.slice();
    new Uint32Array(f32b.buffer)[2] = 0x7fc00124;
    assert.deepEqual(await call(f32b, f64), expected(f32b, f64));
    const f64b = f64.slice();
    new BigUint64Array(f64b.buffer)[1] = 0x7ff8000000000abcn;
    assert.deepEqual(await call(f32b, f64b), expected(f32b, f64b));
  },

  /**
   * inputLayouts/outputLayouts: a handler that reads and writes column-major
   * memory gets the same bytes, and the caller the same row-major results, on
   * both hosts; rank 3, complex, aliases, and the same errors.
   */
  async layouts(host) {
    // Treats x (dims [m, n]) as column-major: x[r][c] is at r + c*m. Writes the
    // transpose y (dims [n, m]) row-major, and the column sums.
    using transpose = Ffi.bind().arg(F32, 2).ret(F32, 2).ret(F32, 1).to((x, y, sums) => {
      const [m, n] = x.dims as [number, number];
      const xs = x.typed(), ys = y.typed(), ss = sums.typed();
      for (let c = 0; c < n; c++) {
        let sum = 0;
        for (let r = 0; r < m; r++) {
          ys[c * m + r] = xs[r + c * m]!;
          sum += xs[r + c * m]!;
        }
        ss[c] = sum;
      }
    });
    const x = { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] }; // [[1,2,3],[4,5,6]]
    const [t, sums] = await host.ffiCall(transpose, {
      args: [x],
      results: [{ dtype: F32, shape: [3, 2] }, { dtype: F32, shape: [3] }],
      inputLayouts: [[1, 0]],
    });
    assertAllClose({ data: t!, shape: [3, 2] }, [[1, 4], [2, 5], [3, 6]]);
    assertArrayEqual(sums!, [5, 7, 9]);
    // Row-major given explicitly, as null, or left out: the handler gets row-major memory.
    for (const inputLayouts of [[[0, 1]], [null], [], undefined]) {
      const [rowMajor] = await host.ffiCall(transpose, {
        args: [x],
        results: [{ dtype: F32, shape: [3, 2] }, { dtype: F32, shape: [3] }],
        inputLayouts,
      });
      assertArrayEqual(rowMajor!, [1, 2, 3, 4, 5, 6]); // memory [1..6] read as columns (1,2), …
    }
    // An output layout: the handler writes memory order, the caller reads row-major.
    using iota = Ffi.bind().ret(DataType.S32).to((y) => {
      const ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = i;
    });
    const [colMajor] = await host.ffiCall(iota, {
      results: [{ dtype: DataType.S32, shape: [2, 3] }],
      outputLayouts: [[1, 0]],
    });
    assertArrayEqual(colMajor!, [0, 2, 4, 1, 3, 5]);
    // Rank 3: every layout of a [2, 3, 4] array, in and out (the handler copies memory as is).
    using copy = Ffi.bind().arg(F32).ret(F32).to((a, b) => {
      b.typed().set(a.typed());
    });
    const x3 = Float32Array.from({ length: 24 }, (_, i) => i);
    const at = (i: number, j: number, k: number) => 12 * i + 4 * j + k;
    for (const layout of [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]) {
      const shape = [2, 3, 4];
      const [stored] = await host.ffiCall(copy, {
        args: [{ data: x3, shape }],
        results: [{ dtype: F32, shape: [24] }],
        inputLayouts: [layout],
      });
      const [roundTrip] = await host.ffiCall(copy, {
        args: [{ data: x3, shape }],
        results: [{ dtype: F32, shape }],
        inputLayouts: [layout],
        outputLayouts: [layout],
      });
      // Memory order: the layout's dims from major to minor, the last contiguous.
      const want: number[] = [];
      const d = layout.map((k) => shape[k]!);
      for (let p = 0; p < d[0]!; p++) {
        for (let q = 0; q < d[1]!; q++) {
          for (let r = 0; r < d[2]!; r++) {
            const ijk = [0, 0, 0];
            ijk[layout[0]!] = p;
            ijk[layout[1]!] = q;
            ijk[layout[2]!] = r;
            want.push(at(ijk[0]!, ijk[1]!, ijk[2]!));
          }
        }
      }
      assertArrayEqual(stored!, want, `layout [${layout}]`);
      assertArrayEqual(roundTrip!, x3, `layout [${layout}] in and out`);
    }
    // Complex (8-byte elements): the pairs move together.
    const z = { ...complex64([1, 2, 3, 4], [-1, -2, -3, -4]), shape: [2, 2] };
    using copyC = Ffi.bind().arg(DataType.C64).ret(DataType.C64).to((a, b) => {
      b.typed().set(a.typed());
    });
    const [zStored] = await host.ffiCall(copyC, {
      args: [z],
      results: [{ dtype: DataType.C64, shape: [4] }],
      inputLayouts: [[1, 0]],
    });
    assert.deepEqual(complexPairs(zStored!), [[1, -1], [3, -3], [2, -2], [4, -4]]);
    // An alias with one layout on both sides: the handler adds each element's memory position.
    using addPosition = Ffi.bind().arg(F32).ret(F32).to((_a, b) => {
      const bs = b.typed();
      for (let i = 0; i < bs.length; i++) bs[i]! += 100 * i;
    });
    const [updated] = await host.ffiCall(addPosition, {
      args: [x],
      results: [like(x)],
      inputOutputAliases: { 0: 0 },
      inputLayouts: [[1, 0]],
      outputLayouts: [[1, 0]],
    });
    // Column-major positions of [[1,2,3],[4,5,6]]: [[0,2,4],[1,3,5]].
    assertArrayEqual(updated!, [1, 202, 403, 104, 305, 506]);
    assertArrayEqual(x.data, [1, 2, 3, 4, 5, 6]);
    // The same mistakes read the same on both hosts.
    const refused = async (options: Record<string, unknown>, message: string) => {
      const e = await rejects(
        host.ffiCall(copy, {
          args: [x],
          results: [{ dtype: F32, shape: [2, 3] }],
          ...options,
        }),
        ErrorCode.INVALID_ARGUMENT,
      );
      assert.equal(e.message, message);
    };
    await refused(
      { inputLayouts: [[0]] },
      "ffiCall: inputLayouts[0] (argument 0, shape [2, 3]): the layout [0] has 1 entry " +
        "but the argument 0 has rank 2",
    );
    await refused(
      { outputLayouts: [[1, 1]] },
      "ffiCall: outputLayouts[0] (result 0, shape [2, 3]): the layout [1, 1] is not a " +
        "permutation of 0..1 (each dimension index once, major to minor)",
    );
    await refused(
      { inputLayouts: [[0, 2]] },
      "ffiCall: inputLayouts[0] (argument 0, shape [2, 3]): the layout [0, 2] is not a " +
        "permutation of 0..1 (each dimension index once, major to minor)",
    );
    await refused(
      { inputLayouts: [null, [0, 1]] },
      "ffiCall: inputLayouts has 2 layouts but there is 1 argument",
    );
    await refused(
      { outputLayouts: [[1, 0]], inputOutputAliases: { 0: 0 } },
      "ffiCall: inputOutputAliases maps argument 0 to result 0, but argument 0 has layout " +
        "[0, 1] (inputLayouts[0]) and result 0 layout [1, 0] (outputLayouts[0]): an aliased " +
        "pair needs one layout",
    );
    await refused(
      { inputLayouts: [[1, 0]], outputLayouts: "column-major" },
      "ffiCall: outputLayouts must be an array of layouts (one per result, null for " +
        'row-major), got "column-major"',
    );
    await refused(
      { inputLayouts: [{ 0: 1, 1: 0 }] },
      "ffiCall: inputLayouts[0] (argument 0, shape [2, 3]): a layout must be an array of " +
        "dimension indices (major to minor) or null, got an object",
    );
  },
};

/** Real XLA only: what has no embedded-runtime counterpart. */
export const XLA_CASES: Record<string, (xla: Xla) => Promise<void>> = {
  /** A jitted program's state lasts until XlaProgram.clearCache; registerType with a number. */
  async programClearCache(xla) {
    using bundle = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().attr("start", "i64").to((start) => ({ count: start })),
      execute: Ffi.bind().ret(DataType.S64, 0).state<{ count: number }>().to((out, s) => {
        out.typed()[0] = BigInt(++s.count);
      }),
    });
    await xla.register("xla.program_counter", bundle);
    await using prog = await xla.jit(
      `def f():\n    return ffi.ffi_call("xla.program_counter", ` +
        `jax.ShapeDtypeStruct((), jnp.int64))(start=np.int64(41))\n`,
    );
    const run = async () => (await prog.run())[0]!.data[0];
    assert.deepEqual([await run(), await run()], [42n, 43n]);
    await prog.clearCache();
    assert.equal(await run(), 42n);
    // A type registered with a number: XLA assigns the id (0) or takes the one given.
    const a = await xla.registerType("xla.numeric_type_a");
    const b = await xla.registerType("xla.numeric_type_b");
    assert.ok(a > 0 && b > 0 && a !== b, `ids ${a} and ${b}`);
    await prog.close();
    await rejects(prog.clearCache(), ErrorCode.FAILED_PRECONDITION);
  },
};

/** The cases that need the ffi.h library. */
export const FFI_H_CASES: ReadonlySet<string> = new Set(["ffiH"]);

if (import.meta.main) {
  const names = Deno.args.length > 0 ? Deno.args : Object.keys(HOST_CASES);
  using rt = new Runtime({ threads: 2 });
  await using xla = await Xla.open();
  for (const name of names) {
    const body = HOST_CASES[name];
    if (body === undefined) {
      console.error(`unknown case '${name}'; cases: ${Object.keys(HOST_CASES).join(", ")}`);
      Deno.exit(2);
    }
    if (FFI_H_CASES.has(name) && ffiHSkip() !== undefined) continue;
    for (const host of [rt, xla] as FfiHost[]) await body(host);
    console.log(`ok ${name}`);
  }
  if (Deno.args.length === 0) {
    for (const [name, body] of Object.entries(XLA_CASES)) {
      await body(xla);
      console.log(`ok ${name}`);
    }
  }
}
