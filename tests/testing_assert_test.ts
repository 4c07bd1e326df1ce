/**
 * `@deno-xla/ffi/testing`: assertAllClose and assertArrayEqual over every
 * data type of the module, their failure report, like(), the complex
 * helpers, and numpy.testing's verdicts on the same arrays when a Python
 * with numpy is at hand.
 */
import assert from "node:assert/strict";
import {
  DataType,
  encodeFloats,
  ErrorCode,
  Ffi,
  FfiError,
  numberToSubByte,
  Runtime,
} from "../mod.ts";
import {
  assertAllClose,
  assertArrayEqual,
  assertBitsEqual,
  assertFfiError,
  AssertionError,
  complex128,
  complex64,
  complexPairs,
  defaultTolerance,
  imagPart,
  like,
  realPart,
} from "../src/testing/mod.ts";

/** The message of the AssertionError `f` throws. */
function failure(f: () => void): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AssertionError, `expected an AssertionError, got ${String(e)}`);
    assert.equal(e.name, "AssertionError");
    return e.message;
  }
  assert.fail("expected the assertion to fail");
}

Deno.test("assertAllClose: numpy's report, with the message, indices by shape and both values", () => {
  const message = failure(() =>
    assertAllClose(
      { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] },
      [[1, 2.5, 3], [4, 5, 7]],
      { rtol: 1e-3, atol: 0.1 },
      "rms_norm",
    )
  );
  assert.equal(
    message,
    "Not equal to tolerance rtol=0.001, atol=0.1: rms_norm\n" +
      "Mismatched elements: 2 / 6 (33.3%)\n" +
      "Max absolute difference among violations: 1\n" +
      "Max relative difference among violations: 0.2\n" +
      "First mismatches (index: actual vs expected):\n" +
      "  [0, 1]: 2 vs 2.5\n" +
      "  [1, 2]: 6 vs 7",
  );
  // Many mismatches: the first ten are listed.
  const many = failure(() => assertAllClose(new Float64Array(25), new Float64Array(25).fill(1)));
  assert.match(many, /Mismatched elements: 25 \/ 25 \(100\.0%\)/);
  assert.match(many, /First mismatches \(index: actual vs expected\), 10 of 25:/);
  assert.equal(many.split("\n").filter((l) => l.startsWith("  [")).length, 10);
  // Shapes, where both give one.
  assert.equal(
    failure(() =>
      assertAllClose({ data: new Float32Array(6), shape: [2, 3] }, [[0, 0], [0, 0], [0, 0]])
    ),
    "Not equal to tolerance rtol=1e-06, atol=1e-06\n(shapes (2, 3), (3, 2) mismatch)",
  );
  assert.match(
    failure(() => assertAllClose(new Float32Array(3), new Float32Array(4))),
    /\(sizes 3, 4 mismatch: actual has 3 F32 elements, expected 4 F32\)/,
  );
  assert.throws(() => assertAllClose([1], [1], { rtol: -1 }), RangeError);
});

Deno.test("assertAllClose: tolerances as numpy (|a - e| <= atol + rtol * |e|), NaN, infinities, scalars", () => {
  assertAllClose(new Float32Array([100, 200]), [101, 202], { rtol: 0.01 });
  failure(() => assertAllClose(new Float32Array([100, 200]), [101, 203], { rtol: 0.01 }));
  assertAllClose([0.05], [0], { atol: 0.05 });
  failure(() => assertAllClose([0.051], [0], { atol: 0.05 }));
  // Relative to the expected value, not the actual one.
  assertAllClose([2], [1], { rtol: 1 });
  failure(() => assertAllClose([1], [2], { rtol: 0.4 }));
  assertAllClose(new Float64Array([NaN, Infinity, -Infinity]), [NaN, Infinity, -Infinity]);
  assert.match(
    failure(() => assertAllClose([NaN], [NaN], { equalNan: false })),
    /\[0\]: nan vs nan/,
  );
  assert.match(failure(() => assertAllClose([Infinity], [-Infinity], { rtol: 1 })), /inf vs -inf/);
  failure(() => assertAllClose([1e308], [Infinity], { rtol: 1 }));
  // A scalar expected value is compared with every element.
  assertAllClose(new Float32Array([3, 3, 3]), 3);
  assert.match(failure(() => assertAllClose(new Float32Array([3, 4, 3]), 3)), /\[1\]: 4 vs 3/);
  // Nested arrays carry their shape; ragged ones are refused.
  assertAllClose({ data: new Int32Array([1, 2, 3, 4]), shape: [2, 2] }, [[1, 2], [3, 4]]);
  assert.throws(() => assertAllClose([1, 2], [[1], [2, 3]]), /not rectangular/);
});

Deno.test("assertAllClose: tolerances not given are the data type's, as jax's tests have them", () => {
  // jax._src.public_test_util.default_tolerance.
  const expected: [DataType, number][] = [
    [DataType.BF16, 1e-2],
    [DataType.F16, 1e-3],
    [DataType.F32, 1e-6],
    [DataType.F64, 1e-15],
    [DataType.C64, 1e-6],
    [DataType.C128, 1e-15],
    [DataType.F8E4M3FN, 1e-1],
    [DataType.F8E5M2, 1e-1],
    [DataType.F8E4M3B11FNUZ, 1e-1],
    [DataType.F8E5M2FNUZ, 1e-1],
    [DataType.F8E4M3FNUZ, 1e-1],
    [DataType.F8E4M3, 1e-1],
    [DataType.F8E3M4, 1e-1],
    [DataType.F8E8M0FNU, 1],
    [DataType.F4E2M1FN, 1],
    [DataType.S32, 0],
    [DataType.U8, 0],
    [DataType.PRED, 0],
    [DataType.S64, 0],
  ];
  for (const [dt, tol] of expected) assert.equal(defaultTolerance(dt), tol, DataType[dt]);
  // F32: rtol = atol = 1e-6, the type of a typed array, of { data, dtype } or of options.dtype.
  assertAllClose(new Float32Array([1.0000019]), [1]);
  assert.match(
    failure(() => assertAllClose(new Float32Array([1.0000025]), [1])),
    /^Not equal to tolerance rtol=1e-06, atol=1e-06\n/,
  );
  assertAllClose([1.0000019], new Float32Array([1])); // either side's type
  // atol applies alone near 0 (numpy's atol would be 0): 1e-6 + 1e-6 * 0.
  assertAllClose(new Float32Array([1e-6]), [0]);
  failure(() => assertAllClose(new Float32Array([1.1e-6]), [0]));
  // F64: 1e-15.
  assertAllClose(new Float64Array([1 + 1e-15]), [1]);
  failure(() => assertAllClose(new Float64Array([1 + 1e-14]), [1]));
  // The larger of the two sides' tolerances.
  assertAllClose(new Float32Array([1.0000019]), new Float64Array([1]));
  // BF16 1e-2, F16 1e-3, complex as its parts.
  assertAllClose({ data: encodeFloats(DataType.BF16, [1]), dtype: DataType.BF16 }, [1.015]);
  failure(() =>
    assertAllClose({ data: encodeFloats(DataType.BF16, [1]), dtype: DataType.BF16 }, [1.03])
  );
  assertAllClose(encodeFloats(DataType.BF16, [1]), [1.015], { dtype: DataType.BF16 });
  assertAllClose(new Float16Array([1]), [1.0015]);
  failure(() => assertAllClose(new Float16Array([1]), [1.003]));
  assertAllClose(complex64([1], [0]), complex64([1.0000015], [0]));
  failure(() => assertAllClose(complex64([1], [0]), complex64([1.00001], [0])));
  // Each of rtol and atol defaults alone: given rtol 0, atol stays F32's 1e-6.
  assertAllClose(new Float32Array([1e-6]), [0], { rtol: 0 });
  assert.match(
    failure(() => assertAllClose(new Float32Array([2]), [1], { rtol: 0 })),
    /^Not equal to tolerance rtol=0, atol=1e-06\n/,
  );
  // No floating type on either side: numpy's rtol 1e-7, atol 0.
  assertAllClose([1 + 1e-8], [1]);
  assert.match(
    failure(() => assertAllClose([1 + 1e-6], [1])),
    /^Not equal to tolerance rtol=1e-07, atol=0\n/,
  );
  assert.match(
    failure(() => assertAllClose(new Int32Array([2]), [1])),
    /^Not equal to tolerance rtol=1e-07, atol=0\n/,
  );
});

Deno.test("assertFfiError: sync and async, the code by value or name, the message by string or pattern", async () => {
  const thrower = (code: ErrorCode, message: string) => () => {
    throw new FfiError(code, message);
  };
  // Sync: returns the error.
  const e = assertFfiError(thrower(ErrorCode.NOT_FOUND, "No FFI handler"), ErrorCode.NOT_FOUND);
  assert.ok(e instanceof FfiError);
  assert.equal(e.message, "No FFI handler");
  assertFfiError(thrower(ErrorCode.INTERNAL, "boom at 3"), "INTERNAL", "boom");
  assertFfiError(thrower(ErrorCode.INTERNAL, "boom at 3"), "INTERNAL", /at \d$/);
  // Its failures are AssertionErrors saying what differs.
  assert.equal(
    failure(() => assertFfiError(() => {}, "INTERNAL", undefined, "the call")),
    "Expected an FfiError INTERNAL, but nothing was thrown: the call",
  );
  assert.equal(
    failure(() => assertFfiError(thrower(ErrorCode.ABORTED, "x"), ErrorCode.INTERNAL)),
    "Expected an FfiError INTERNAL, but it is ABORTED\nMessage: x",
  );
  assert.equal(
    failure(() => assertFfiError(thrower(ErrorCode.INTERNAL, "x"), "INTERNAL", "y")),
    'Expected the FfiError\'s message to include "y"\nMessage: x',
  );
  assert.equal(
    failure(() => assertFfiError(thrower(ErrorCode.INTERNAL, "x"), "INTERNAL", /^y/)),
    "Expected the FfiError's message to match /^y/\nMessage: x",
  );
  assert.equal(
    failure(() =>
      assertFfiError(() => {
        throw new TypeError("not an FfiError");
      }, "INTERNAL")
    ),
    "Expected an FfiError INTERNAL, but TypeError: not an FfiError was thrown",
  );
  assert.throws(() => assertFfiError(() => {}, "NOPE" as "INTERNAL"), TypeError);
  assert.throws(() => assertFfiError(() => {}, 0), TypeError);
  // Async: a promise, or a function returning one, gives a promise of the error.
  const rejected = Promise.reject(new FfiError("UNIMPLEMENTED", "later"));
  const p: Promise<FfiError> = assertFfiError(rejected, "UNIMPLEMENTED", "later");
  assert.ok(p instanceof Promise);
  assert.equal((await p).codeName, "UNIMPLEMENTED");
  const q = assertFfiError(async () => {
    await Promise.resolve();
    throw new FfiError(ErrorCode.CANCELLED, "stopped");
  }, ErrorCode.CANCELLED);
  assert.equal((await q).message, "stopped");
  await assert.rejects(
    assertFfiError(Promise.resolve(1), "INTERNAL"),
    (err: unknown) =>
      err instanceof AssertionError &&
      err.message === "Expected an FfiError INTERNAL, but nothing was thrown",
  );
  await assert.rejects(
    assertFfiError(Promise.reject(new FfiError("ABORTED", "a")), "INTERNAL"),
    AssertionError,
  );
  // A call on a host.
  using rt = new Runtime({ threads: 0 });
  using fails = Ffi.bind().ret(DataType.F32).to(() => {
    throw new FfiError("DATA_LOSS", "lost");
  });
  const err = await assertFfiError(
    rt.ffiCall(fails, { results: [{ dtype: DataType.F32, shape: [] }] }),
    "DATA_LOSS",
    "lost",
  );
  assert.equal(err.code, ErrorCode.DATA_LOSS);
  await assertFfiError(
    () => rt.ffiCall("no.such.target", { results: [], hasSideEffect: true }),
    "NOT_FOUND",
  );
});

Deno.test("assertAllClose: every data type read as its values", () => {
  // 16-, 8- and 4-bit floats through their views.
  assertAllClose(new Float16Array([0.5, 1.5]), [0.5, 1.5]);
  assertAllClose({ data: encodeFloats(DataType.BF16, [1, -2.5]), dtype: DataType.BF16 }, [1, -2.5]);
  assertAllClose(encodeFloats(DataType.BF16, [3]), [3], { dtype: DataType.BF16 });
  assertAllClose({ data: encodeFloats(DataType.F8E4M3FN, [0.5, 448]), dtype: DataType.F8E4M3FN }, [
    0.5,
    448,
  ]);
  assertAllClose({ data: encodeFloats(DataType.F4E2M1FN, [1.5, -6]), dtype: DataType.F4E2M1FN }, [
    1.5,
    -6,
  ]);
  assert.match(
    failure(() =>
      assertAllClose({ data: encodeFloats(DataType.F8E5M2, [1]), dtype: DataType.F8E5M2 }, [1.5])
    ),
    /\[0\]: 1 vs 1\.5/,
  );
  // Sub-byte integers sign-extended, PRED as 0/1.
  const s4 = Uint8Array.from([-8, 7, -1], (v) => numberToSubByte(DataType.S4, v));
  assertArrayEqual({ data: s4, dtype: DataType.S4 }, [-8, 7, -1]);
  assertArrayEqual({ data: new Uint8Array([1, 0]), dtype: DataType.PRED }, [true, false]);
  // 64-bit integers exact: 2^62 + 1 differs from 2^62 (a float64 comparison would not see it).
  assertArrayEqual(new BigInt64Array([2n ** 62n, -1n]), [2n ** 62n, -1n]);
  assert.match(
    failure(() => assertArrayEqual(new BigInt64Array([2n ** 62n + 1n]), [2n ** 62n])),
    /\[0\]: 4611686018427387905 vs 4611686018427387904/,
  );
  assertArrayEqual(new BigUint64Array([2n ** 64n - 1n]), [2n ** 64n - 1n]);
  failure(() => assertArrayEqual(new BigUint64Array([2n ** 64n - 1n]), [2n ** 64n - 2n]));
  assertArrayEqual(new BigInt64Array([5n]), [5]); // integral numbers beside bigints: exact
  assertAllClose(new BigInt64Array([1000n]), [1001n], { atol: 1 });
  // Complex as interleaved pairs; a bare Float32Array beside a complex value is read as pairs.
  assertAllClose(complex64([1, 2], [3, 4]), complex64([1, 2], [3, 4]));
  assertAllClose(new Float32Array([1, 3, 2, 4]), complex64([1, 2], [3, 4]));
  assertAllClose(new Float64Array([0, 1]), new Float64Array([0, 1]), { dtype: DataType.C128 });
  assert.match(
    failure(() => assertAllClose(complex128([1], [-2]), complex128([1], [2]))),
    /\[0\]: 1-2j vs 1\+2j/,
  );
  // The modulus of the difference: |(0+1i) - (0+0i)| = 1 <= atol 1.
  assertAllClose(complex64([0], [1]), complex64([0], [0]), { atol: 1 });
  // Complex against a real expected value: imaginary parts must be 0.
  assertAllClose(complex64([1, 2]), [1, 2]);
  failure(() => assertAllClose(complex64([1, 2], [0, 1]), [1, 2]));
});

Deno.test("like and the complex helpers", () => {
  assert.deepEqual(like({ data: new Float32Array(6), shape: [2, 3] }), {
    dtype: DataType.F32,
    shape: [2, 3],
  });
  assert.deepEqual(like({ data: new Float32Array(4), dtype: DataType.C64 }), {
    dtype: DataType.C64,
    shape: [2],
  });
  assert.deepEqual(like(new BigInt64Array(3)), { dtype: DataType.S64, shape: [3] });
  assert.deepEqual(like({ data: new Float64Array(1), shape: [] }), {
    dtype: DataType.F64,
    shape: [],
  });
  const z = complex64([1, 2, 3, 4], [5, 6, 7, 8], [2, 2]);
  assert.deepEqual(z.shape, [2, 2]);
  assert.equal(z.dtype, DataType.C64);
  assert.deepEqual([...z.data], [1, 5, 2, 6, 3, 7, 4, 8]);
  assert.deepEqual(realPart(z), new Float32Array([1, 2, 3, 4]));
  assert.deepEqual(imagPart(z), new Float32Array([5, 6, 7, 8]));
  assert.deepEqual(imagPart(new Float64Array([1, 2])), new Float64Array([2]));
  assert.deepEqual(complexPairs(complex128([0.5], [0.25])), [[0.5, 0.25]]);
  assert.throws(() => complex64([1, 2], [1]), /2 real parts but 1 imaginary parts/);
  assert.throws(() => complex64([1, 2], undefined, [3]), /does not hold 2 values/);
  assert.throws(() => realPart({ data: new Float32Array(2), dtype: DataType.F32 }), /not C64/);
  assert.throws(() => realPart(new Int32Array(2)), /Float32Array or Float64Array/);
});

// ---------------------------------------------------------------------------
// numpy.testing's verdicts on the same arrays.

const PYTHON = Deno.env.get("XLA_FFI_DENO_PYTHON") || "python3";
const haveNumpy = (() => {
  try {
    return new Deno.Command(PYTHON, {
      args: ["-c", "import numpy"],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
})();

const NUMPY_SCRIPT = `
import json, sys, numpy as np
out = []
for c in json.load(sys.stdin):
    a = np.array([complex(*map(float, v)) if isinstance(v, list) else float(v) for v in c["a"]])
    e = np.array([complex(*map(float, v)) if isinstance(v, list) else float(v) for v in c["e"]])
    close = np.isclose(a, e, rtol=c["rtol"], atol=c["atol"], equal_nan=c["nan"])
    out.append(int(np.count_nonzero(~close)))
print(json.dumps(out))
`;

Deno.test({
  name: "assertAllClose agrees with numpy (isclose, assert_allclose's test) on mismatch counts" +
    (haveNumpy ? "" : ` (ignored: no numpy for ${PYTHON})`),
  ignore: !haveNumpy,
  fn: async () => {
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const special = [NaN, Infinity, -Infinity, 0, -0];
    const cases = [];
    for (let k = 0; k < 40; k++) {
      const complex = k % 4 === 3;
      const n = 1 + Math.floor(rand() * 30);
      const a: (number | [number, number])[] = [], e: (number | [number, number])[] = [];
      for (let i = 0; i < n; i++) {
        const x = rand() < 0.1 ? special[Math.floor(rand() * 5)]! : (rand() - 0.5) * 10;
        const changeRate = [0, 0.05, 0.5][Math.floor(k / 4) % 3]!;
        const y = rand() >= changeRate
          ? x
          : rand() < 0.1
          ? special[Math.floor(rand() * 5)]!
          : x + (rand() - 0.5) * 10 ** -Math.floor(rand() * 8);
        if (complex) {
          a.push([x, rand() < 0.5 ? 0 : x / 2]);
          e.push([y, Object.is(y, x) ? (a.at(-1) as [number, number])[1] : y]);
        } else {
          a.push(x);
          e.push(y);
        }
      }
      const rtol = [0, 1e-7, 1e-4, 1e-2][k % 4]!, atol = [0, 1e-6, 1e-3][k % 3]!;
      cases.push({ a, e, rtol, atol, nan: k % 5 !== 0 });
    }
    const child = new Deno.Command(PYTHON, {
      args: ["-c", NUMPY_SCRIPT],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(
      new TextEncoder().encode(
        JSON.stringify(
          cases,
          (_k, v) =>
            typeof v === "number" && !Number.isFinite(v)
              ? (Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf")
              : v,
        ),
      ),
    );
    await w.close();
    const r = await child.output();
    assert.ok(r.success, new TextDecoder().decode(r.stderr));
    const numpy = JSON.parse(new TextDecoder().decode(r.stdout)) as number[];
    const failing = numpy.filter((n) => n > 0).length;
    assert.ok(failing >= 10 && failing <= 30, `${failing} of 40 cases mismatch`);
    cases.forEach((c, k) => {
      const flat = (vs: (number | [number, number])[]) =>
        typeof vs[0] === "number"
          ? Float64Array.from(vs as number[])
          : complex128(vs.map((v) => (v as number[])[0]!), vs.map((v) => (v as number[])[1]!));
      let ours = 0;
      try {
        assertAllClose(flat(c.a), flat(c.e), { rtol: c.rtol, atol: c.atol, equalNan: c.nan });
      } catch (err) {
        ours = Number(/Mismatched elements: (\d+)/.exec((err as Error).message)![1]);
      }
      assert.equal(ours, numpy[k], `case ${k}: ${JSON.stringify(c)}`);
    });
  },
});

Deno.test("assertAllClose: a detached array is a TypeError saying so, not an empty array", () => {
  const x = new Float32Array([1, 2]);
  structuredClone(x, { transfer: [x.buffer as ArrayBuffer] });
  assert.throws(
    () => assertAllClose(x, [1, 2]),
    (e: Error) =>
      e instanceof TypeError &&
      e.message === "actual: its ArrayBuffer is detached (transferred); compare a copy made " +
          "before the transfer (array.slice())",
  );
  assert.throws(
    () => assertAllClose([1, 2], { data: x, shape: [2] }),
    (e: Error) => e instanceof TypeError && e.message.startsWith("expected: its ArrayBuffer"),
  );
});

Deno.test("assertBitsEqual: 0 and -0, NaN payloads, and every width compared by their bits", () => {
  // Equal values, different bits: numpy's rule passes, the bitwise one fails.
  const zero = new Float32Array([0, 1]), negZero = new Float32Array([-0, 1]);
  assertArrayEqual(zero, negZero);
  assert.throws(
    () => assertBitsEqual(zero, negZero),
    (e: unknown) =>
      e instanceof AssertionError &&
      e.message ===
        "Arrays are not bitwise equal\nMismatched elements: 1 / 2 (50.0%)\n" +
          "First mismatches (index: actual vs expected):\n  [0]: 0 (0x00000000) vs -0 (0x00000080)",
  );
  assert.throws(
    () => assertArrayEqual(zero, negZero, "host vs build", { bitwise: true }),
    /^AssertionError: Arrays are not bitwise equal: host vs build\n/,
  );
  // NaNs: the same payload is equal, another payload is not.
  const nanA = new Float64Array(new BigUint64Array([0x7ff8000000000001n]).buffer);
  const nanB = new Float64Array(new BigUint64Array([0x7ff8000000000002n]).buffer);
  assertArrayEqual(nanA, nanB);
  assertBitsEqual(nanA, nanA.slice());
  assert.throws(() => assertBitsEqual(nanA, nanB), /nan \(0x010000000000f87f\) vs nan/);
  // BF16 bits, complex pairs, shapes, data types and sizes.
  assertBitsEqual(
    new Uint16Array([0x3f80]),
    { data: new Uint16Array([0x3f80]), dtype: DataType.BF16 },
    "",
    {
      dtype: DataType.BF16,
    },
  );
  assertArrayEqual(complex64([1], [-0]), complex64([1], [-0]), "", { bitwise: true });
  assert.throws(
    () => assertBitsEqual(complex64([1], [0]), complex64([1], [-0])),
    /\[0\]: 1\+0j \(0x0000803f00000000\) vs 1-0j \(0x0000803f00000080\)/,
  );
  assert.throws(
    () => assertBitsEqual(new Float32Array(2), new Int32Array(2)),
    /\(data types F32, S32 mismatch\)/,
  );
  assert.throws(
    () =>
      assertBitsEqual({ data: new Float32Array(4), shape: [2, 2] }, {
        data: new Float32Array(4),
        shape: [4],
      }),
    /\(shapes \(2, 2\), \(4,\) mismatch\)/,
  );
  assert.throws(() => assertBitsEqual(new Float32Array(2), new Float32Array(3)), /sizes 2, 3/);
  // Plain numbers have no bits of their own.
  assert.throws(() => assertBitsEqual(new Float32Array(1), [0]), TypeError);
  assert.throws(() => assertBitsEqual(new Float32Array(1), 0), TypeError);
});

Deno.test("assertAllClose prints tolerances as numpy does ({:g}: 1e-05, 0.001, 1.5e+06)", () => {
  const header = (rtol: number, atol: number) => {
    try {
      assertAllClose([1], [2], { rtol, atol });
    } catch (e) {
      return (e as Error).message.split("\n")[0];
    }
    return "passed";
  };
  assert.equal(header(1e-5, 0), "Not equal to tolerance rtol=1e-05, atol=0");
  assert.equal(header(0.001, 1e-4), "Not equal to tolerance rtol=0.001, atol=0.0001");
  assert.equal(header(1.5e-7, 0.1), "Not equal to tolerance rtol=1.5e-07, atol=0.1");
  assert.equal(header(0, 0.25), "Not equal to tolerance rtol=0, atol=0.25");
  assert.equal(header(0, 1e-15), "Not equal to tolerance rtol=0, atol=1e-15");
});
