/**
 * `@deno-xla/ffi/testing`: assertAllClose and assertArrayEqual over every
 * data type of the module, their failure report, like(), the complex
 * helpers, and numpy.testing's verdicts on the same arrays when a Python
 * with numpy is at hand.
 */
import assert from "node:assert/strict";
import { DataType, encodeFloats, numberToSubByte } from "../mod.ts";
import {
  assertAllClose,
  assertArrayEqual,
  AssertionError,
  complex128,
  complex64,
  complexPairs,
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
    "Not equal to tolerance rtol=1e-7, atol=0\n(shapes (2, 3), (3, 2) mismatch)",
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
      assertAllClose({ data: encodeFloats(DataType.F8E5M2, [1]), dtype: DataType.F8E5M2 }, [1.1])
    ),
    /\[0\]: 1 vs 1\.1/,
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

const PYTHON = Deno.env.get("DENO_XLA_PYTHON") || "python3";
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
