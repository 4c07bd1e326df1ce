/**
 * Array assertions for handler tests, with `numpy.testing`'s semantics and
 * failure report and `@std/assert`'s conventions (an {@link AssertionError},
 * an optional message last).
 *
 * @module
 */
import { DataType } from "../abi/enums.ts";
import { dataTypeInfo } from "../abi/dtype.ts";
import { _asComplex, type _Flat, _flatten, type ArrayLikeInput } from "./_values.ts";

/**
 * The error an assertion throws (the same name and shape as
 * `@std/assert`'s).
 *
 * @example
 * ```ts
 * import { AssertionError, assertArrayEqual } from "@deno-xla/ffi/testing";
 * try {
 *   assertArrayEqual([1, 2], [1, 3]);
 * } catch (e) {
 *   console.log(e instanceof AssertionError); // true
 * }
 * ```
 */
export class AssertionError extends Error {
  /**
   * Makes an assertion error.
   *
   * @param message what failed
   * @param options the cause, if any
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AssertionError";
  }
}

/** Options of {@link assertAllClose}. */
export interface AllCloseOptions {
  /** Relative tolerance (default 1e-7, numpy's). */
  rtol?: number;
  /** Absolute tolerance (default 0). */
  atol?: number;
  /** NaNs in the same places are equal (default true, numpy's). */
  equalNan?: boolean;
  /**
   * The data type of arguments given as bare typed arrays whose own type is
   * not theirs: BF16 and F8 results (`Uint16Array`, `Uint8Array` bits),
   * complex ones (interleaved `Float32Array`/`Float64Array`), PRED.
   */
  dtype?: DataType;
}

/** Mismatches listed in a failure report. */
const SHOWN = 10;

function shapeText(s: readonly number[]): string {
  return `(${s.join(", ")}${s.length === 1 ? "," : ""})`;
}

function indexText(i: number, shape: readonly number[] | undefined): string {
  if (shape === undefined || shape.length <= 1) return `[${i}]`;
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    const n = shape[d]!;
    idx[d] = n === 0 ? 0 : i % n;
    i = n === 0 ? 0 : Math.floor(i / n);
  }
  return `[${idx.join(", ")}]`;
}

/** A number as text: the shortest that reads back as the same float32 when `single`. */
function num(v: number, single = false): string {
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  if (Object.is(v, -0)) return "-0";
  if (single && Math.fround(v) === v) {
    for (let p = 1; p < 10; p++) {
      const t = Number(v.toPrecision(p));
      if (Math.fround(t) === v) return String(t);
    }
  }
  return String(v);
}

/** Whether a flat's values are of 32 bits or fewer (printed as float32 would be). */
function single(f: _Flat): boolean {
  return f.dtype !== undefined && f.dtype !== DataType.F64 && f.dtype !== DataType.C128 &&
    dataTypeInfo(f.dtype).kind !== "signed" && dataTypeInfo(f.dtype).kind !== "unsigned";
}

function valueText(f: _Flat, i: number): string {
  if (f.big !== null) return String(f.big[i]);
  const s = single(f);
  const re = f.re![i]!;
  if (f.im === null) return num(re, s);
  const im = f.im[i]!;
  return `${num(re, s)}${im < 0 || Object.is(im, -0) ? "-" : "+"}${num(Math.abs(im), s)}j`;
}

function kindName(f: _Flat): string {
  return f.dtype === undefined ? "" : ` ${dataTypeInfo(f.dtype).name}`;
}

interface Diff {
  ok: boolean;
  abs: number;
  rel: number;
}

/** A 64-bit integer element, or an integral number beside one, as an exact bigint. */
function exact(f: _Flat, i: number): bigint | undefined {
  if (f.big !== null) return f.big[i]!;
  if (f.im !== null && f.im[i] !== 0) return undefined;
  const v = f.re![i]!;
  return Number.isInteger(v) ? BigInt(v) : undefined;
}

function realAt(f: _Flat, i: number): number {
  return f.big !== null ? Number(f.big[i]) : f.re![i]!;
}

/** Compares element i of a and e: numpy's `|a - e| <= atol + rtol * |e|`. */
function compare(
  a: _Flat,
  i: number,
  e: _Flat,
  j: number,
  rtol: number,
  atol: number,
  nan: boolean,
): Diff {
  const x = exact(a, i), y = exact(e, j);
  if (x !== undefined && y !== undefined && (a.big !== null || e.big !== null)) {
    if (x === y) return { ok: true, abs: 0, rel: 0 };
    const d = x > y ? x - y : y - x;
    const ye = y < 0n ? -y : y;
    const abs = Number(d), mag = Number(ye);
    return { ok: abs <= atol + rtol * mag, abs, rel: mag === 0 ? Infinity : abs / mag };
  }
  const ar = realAt(a, i), er = realAt(e, j);
  const ai = a.im === null ? 0 : a.im[i]!, ei = e.im === null ? 0 : e.im[j]!;
  if (ar === er && ai === ei) return { ok: true, abs: 0, rel: 0 };
  const aNan = Number.isNaN(ar) || Number.isNaN(ai), eNan = Number.isNaN(er) || Number.isNaN(ei);
  if (aNan || eNan) return { ok: nan && aNan && eNan, abs: NaN, rel: NaN };
  const abs = Math.hypot(ar - er, ai - ei);
  const mag = Math.hypot(er, ei);
  // Infinities are equal only to themselves (handled above): inf - inf is NaN here.
  const ok = Number.isFinite(abs) && abs <= atol + rtol * mag;
  return { ok, abs, rel: mag === 0 || !Number.isFinite(abs) ? Infinity : abs / mag };
}

function check(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  rtol: number,
  atol: number,
  equalNan: boolean,
  dtype: DataType | undefined,
  header: string,
  msg: string | undefined,
): void {
  let a = _flatten(actual, "actual", dtype);
  let e = _flatten(expected, "expected", dtype);
  const bare = (x: ArrayLikeInput) => ArrayBuffer.isView(x);
  // A bare float array beside a complex one holds interleaved (re, im) pairs.
  if (e.im !== null && a.im === null && bare(actual) && a.n === 2 * e.n) a = _asComplex(a);
  if (a.im !== null && e.im === null && bare(expected) && e.n === 2 * a.n) e = _asComplex(e);
  const head = `${header}${msg ? `: ${msg}` : ""}`;
  if (a.shape !== undefined && e.shape !== undefined) {
    if (a.shape.length !== e.shape.length || a.shape.some((d, i) => d !== e.shape![i])) {
      throw new AssertionError(
        `${head}\n(shapes ${shapeText(a.shape)}, ${shapeText(e.shape)} mismatch)`,
      );
    }
  } else if (a.n !== e.n && e.n !== 1) {
    throw new AssertionError(
      `${head}\n(sizes ${a.n}, ${e.n} mismatch: actual has ${a.n}${kindName(a)} elements, ` +
        `expected ${e.n}${kindName(e)})`,
    );
  }
  const shape = a.shape ?? e.shape;
  const scalarExpected = e.n === 1 && a.n !== 1; // numpy broadcasts a scalar
  let bad = 0;
  let maxAbs = NaN, maxRel = NaN;
  const lines: string[] = [];
  for (let i = 0; i < a.n; i++) {
    const d = compare(a, i, e, scalarExpected ? 0 : i, rtol, atol, equalNan);
    if (d.ok) continue;
    bad++;
    if (!Number.isNaN(d.abs)) maxAbs = Number.isNaN(maxAbs) ? d.abs : Math.max(maxAbs, d.abs);
    if (!Number.isNaN(d.rel)) maxRel = Number.isNaN(maxRel) ? d.rel : Math.max(maxRel, d.rel);
    if (lines.length < SHOWN) {
      lines.push(
        `  ${indexText(i, shape)}: ${valueText(a, i)} vs ${valueText(e, scalarExpected ? 0 : i)}`,
      );
    }
  }
  if (bad === 0) return;
  const pct = (100 * bad) / a.n;
  const pctText = pct >= 99.95 && bad < a.n ? "99.9" : pct.toFixed(pct < 0.1 ? 3 : 1);
  throw new AssertionError(
    `${head}\n` +
      `Mismatched elements: ${bad} / ${a.n} (${pctText}%)\n` +
      `Max absolute difference among violations: ${num(maxAbs)}\n` +
      `Max relative difference among violations: ${num(maxRel)}\n` +
      `First mismatches (index: actual vs expected)${
        bad > SHOWN ? `, ${SHOWN} of ${bad}` : ""
      }:\n` +
      lines.join("\n"),
  );
}

/**
 * Asserts that two arrays are equal within a tolerance, as
 * `numpy.testing.assert_allclose` does: every element satisfies
 * `|actual − expected| ≤ atol + rtol·|expected|` (complex values by their
 * modulus), NaNs in the same places are equal unless `equalNan: false`, an
 * infinity equals only itself. Shapes are compared where both sides give
 * one; a scalar expected value is compared with every element. Every data
 * type of the module is read as its values: F16, BF16, the F8 and F4 types
 * decoded, sub-byte integers sign-extended, S64/U64 compared as exact
 * bigints, C64/C128 as interleaved (re, im) pairs (a bare `Float32Array`
 * beside a complex expected value is read as pairs). Bare typed arrays whose
 * own type is not the element type (BF16 bits in a `Uint16Array`) need
 * `dtype`.
 *
 * On failure it throws an {@link AssertionError} with numpy's report: the
 * mismatched count and percentage, the largest absolute and relative
 * difference among them, and the first mismatching indices with both values.
 *
 * @example
 * ```ts
 * import { assertAllClose } from "@deno-xla/ffi/testing";
 * assertAllClose(new Float32Array([1, 2.0000001]), [1, 2], { rtol: 1e-6 });
 * assertAllClose({ data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] }, [[1, 2], [3, 4]]);
 * try {
 *   assertAllClose(new Float32Array([1, 2, 3]), [1, 2.5, 3], { atol: 0.1 });
 * } catch (e) {
 *   console.log((e as Error).message.split("\n")[1]); // Mismatched elements: 1 / 3 (33.3%)
 * }
 * ```
 *
 * @param actual the array under test
 * @param expected the reference
 * @param options tolerances, NaN handling, the data type of bare typed arrays
 * @param msg a message to add to the failure's first line
 */
export function assertAllClose(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  options: AllCloseOptions = {},
  msg?: string,
): void {
  const rtol = options.rtol ?? 1e-7, atol = options.atol ?? 0;
  if (!(rtol >= 0) || !(atol >= 0)) {
    throw new RangeError(`rtol and atol must be non-negative numbers (rtol ${rtol}, atol ${atol})`);
  }
  check(
    actual,
    expected,
    rtol,
    atol,
    options.equalNan ?? true,
    options.dtype,
    `Not equal to tolerance rtol=${rtol}, atol=${atol}`,
    msg,
  );
}

/**
 * Asserts that two arrays hold the same values (`numpy.testing.
 * assert_array_equal`): shapes where given, every element equal (NaNs in
 * the same places are equal, `0` equals `-0`), with the same report as
 * {@link assertAllClose}.
 *
 * @example
 * ```ts
 * import { assertArrayEqual } from "@deno-xla/ffi/testing";
 * assertArrayEqual(new Int32Array([1, 2, 3]), [1, 2, 3]);
 * assertArrayEqual(new BigInt64Array([2n ** 62n]), [2n ** 62n]); // exact
 * ```
 *
 * @param actual the array under test
 * @param expected the reference
 * @param msg a message to add to the failure's first line
 * @param options the data type of bare typed arrays
 */
export function assertArrayEqual(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  msg?: string,
  options: { dtype?: DataType } = {},
): void {
  check(actual, expected, 0, 0, true, options.dtype, "Arrays are not equal", msg);
}
