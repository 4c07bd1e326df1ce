/**
 * Array assertions for handler tests, with `numpy.testing`'s semantics and
 * failure report and `@std/assert`'s conventions (an {@link AssertionError},
 * an optional message last).
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { dataTypeInfo } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import {
  _asComplex,
  type _Flat,
  _flatten,
  type _Raw,
  _rawOf,
  type ArrayLikeInput,
} from "./_values.ts";

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
  /**
   * Relative tolerance. Default: the data type's ({@link defaultTolerance},
   * the larger of the two sides'), as jax's `assertAllClose`; 1e-7
   * (numpy's) when neither side has a floating or complex type.
   */
  rtol?: number;
  /**
   * Absolute tolerance. Default: the data type's, as `rtol`; 0 (numpy's)
   * when neither side has a floating or complex type.
   */
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

/**
 * A tolerance as numpy's report prints it (`f"{rtol:g}"`): six significant
 * digits, an exponent of at least two digits below 1e-4 and from 1e6
 * (`1e-05`, `1e-07`, `0.001`, `0`).
 */
function toleranceText(v: number): string {
  if (!Number.isFinite(v)) return num(v);
  if (v === 0) return "0";
  const [mantissa, exp] = v.toExponential(5).split("e") as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) {
    const m = mantissa.replace(/\.?0+$/, "");
    return `${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  return String(Number(v.toPrecision(6)));
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

/** jax's `public_test_util.default_tolerance`, for the floating and complex types. */
const TOLERANCES: Partial<Record<DataType, number>> = {
  [DataType.F4E2M1FN]: 1e0,
  [DataType.F8E8M0FNU]: 1e0,
  [DataType.F8E3M4]: 1e-1,
  [DataType.F8E4M3]: 1e-1,
  [DataType.F8E4M3B11FNUZ]: 1e-1,
  [DataType.F8E4M3FN]: 1e-1,
  [DataType.F8E4M3FNUZ]: 1e-1,
  [DataType.F8E5M2]: 1e-1,
  [DataType.F8E5M2FNUZ]: 1e-1,
  [DataType.BF16]: 1e-2,
  [DataType.F16]: 1e-3,
  [DataType.F32]: 1e-6,
  [DataType.F64]: 1e-15,
  [DataType.C64]: 1e-6,
  [DataType.C128]: 1e-15,
};

/**
 * The tolerance {@link assertAllClose} uses for a data type when `rtol` or
 * `atol` is not given: jax's test utilities' default
 * (`jax._src.public_test_util.default_tolerance`). BF16 1e-2, F16 1e-3,
 * F32 and C64 1e-6, F64 and C128 1e-15, the F8 types 1e-1 (F8E8M0FNU and
 * F4E2M1FN 1, as jax has them); 0 for integers, PRED and the rest, for
 * which numpy's defaults apply.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { defaultTolerance } from "@deno-xla/ffi/testing";
 * console.log(defaultTolerance(DataType.F32)); // 0.000001
 * console.log(defaultTolerance(DataType.BF16)); // 0.01
 * console.log(defaultTolerance(DataType.S32)); // 0
 * ```
 *
 * @param dtype the data type
 * @returns its default relative and absolute tolerance
 */
export function defaultTolerance(dtype: DataType): number {
  return TOLERANCES[dtype] ?? 0;
}

/** The larger default tolerance of two sides, or undefined when neither has one (numpy's then). */
function sidesTolerance(a: _Flat, e: _Flat): number | undefined {
  const t = Math.max(
    a.dtype === undefined ? 0 : defaultTolerance(a.dtype),
    e.dtype === undefined ? 0 : defaultTolerance(e.dtype),
  );
  return t > 0 ? t : undefined;
}

function check(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  tolerances: { rtol?: number; atol?: number },
  equalNan: boolean,
  dtype: DataType | undefined,
  header: (rtol: number, atol: number) => string,
  msg: string | undefined,
): void {
  let a = _flatten(actual, "actual", dtype);
  let e = _flatten(expected, "expected", dtype);
  const typed = sidesTolerance(a, e);
  const rtol = tolerances.rtol ?? typed ?? 1e-7, atol = tolerances.atol ?? typed ?? 0;
  const bare = (x: ArrayLikeInput) => ArrayBuffer.isView(x);
  // A bare float array beside a complex one holds interleaved (re, im) pairs.
  if (e.im !== null && a.im === null && bare(actual) && a.n === 2 * e.n) a = _asComplex(a);
  if (a.im !== null && e.im === null && bare(expected) && e.n === 2 * a.n) e = _asComplex(e);
  const head = `${header(rtol, atol)}${msg ? `: ${msg}` : ""}`;
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
 * Tolerances not given default to the data type's, as in jax's
 * `assertAllClose`: both `rtol` and `atol` are the larger
 * {@link defaultTolerance} of the two sides' types (F32 1e-6, F64 1e-15,
 * BF16 1e-2, ...), a side's type being its typed array's, its `dtype`, or
 * `options.dtype`. Plain numbers and nested JS arrays have no type; when
 * neither side has a floating or complex type the defaults are numpy's
 * (rtol 1e-7, atol 0).
 *
 * On failure it throws an {@link AssertionError} with numpy's report: the
 * mismatched count and percentage, the largest absolute and relative
 * difference among them, and the first mismatching indices with both values.
 *
 * @example
 * ```ts
 * import { assertAllClose } from "@deno-xla/ffi/testing";
 * assertAllClose(new Float32Array([1, 2.000001]), [1, 2]); // F32: rtol = atol = 1e-6
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
  const { rtol, atol } = options;
  if ((rtol !== undefined && !(rtol >= 0)) || (atol !== undefined && !(atol >= 0))) {
    throw new RangeError(`rtol and atol must be non-negative numbers (rtol ${rtol}, atol ${atol})`);
  }
  check(
    actual,
    expected,
    { rtol, atol },
    options.equalNan ?? true,
    options.dtype,
    (r, t) => `Not equal to tolerance rtol=${toleranceText(r)}, atol=${toleranceText(t)}`,
    msg,
  );
}

/** Options of {@link assertArrayEqual}. */
export interface ArrayEqualOptions {
  /** The data type of bare typed arrays whose own type is not theirs (BF16 bits, complex pairs). */
  dtype?: DataType;
  /**
   * Compare the bits of the elements instead of their values
   * ({@link assertBitsEqual}): `0` and `-0` differ, NaNs are equal only
   * with the same payload.
   */
  bitwise?: boolean;
}

/**
 * Asserts that two arrays hold the same values (`numpy.testing.
 * assert_array_equal`): shapes where given, every element equal (NaNs in
 * the same places are equal, `0` equals `-0`), with the same report as
 * {@link assertAllClose}. With `bitwise: true` the elements' bits are
 * compared instead ({@link assertBitsEqual}).
 *
 * @example
 * ```ts
 * import { assertArrayEqual } from "@deno-xla/ffi/testing";
 * assertArrayEqual(new Int32Array([1, 2, 3]), [1, 2, 3]);
 * assertArrayEqual(new BigInt64Array([2n ** 62n]), [2n ** 62n]); // exact
 * assertArrayEqual(new Float32Array([0]), new Float32Array([-0])); // equal values
 * try {
 *   assertArrayEqual(new Float32Array([0]), new Float32Array([-0]), "", { bitwise: true });
 * } catch (e) {
 *   console.log((e as Error).message.split("\n")[0]); // Arrays are not bitwise equal
 * }
 * ```
 *
 * @param actual the array under test
 * @param expected the reference
 * @param msg a message to add to the failure's first line
 * @param options the data type of bare typed arrays; `bitwise` to compare bits
 */
export function assertArrayEqual(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  msg?: string,
  options: ArrayEqualOptions = {},
): void {
  if (options.bitwise === true) {
    assertBitsEqual(actual, expected, msg, { dtype: options.dtype });
    return;
  }
  check(
    actual,
    expected,
    { rtol: 0, atol: 0 },
    true,
    options.dtype,
    () => "Arrays are not equal",
    msg,
  );
}

/** The bits of element i, as hexadecimal (the first byte in memory first). */
function hexAt(r: _Raw, i: number): string {
  let out = "";
  for (let b = i * r.width; b < (i + 1) * r.width; b++) {
    out += r.bytes[b]!.toString(16).padStart(2, "0");
  }
  return `0x${out}`;
}

/**
 * Asserts that two arrays hold the same bits, element by element: what
 * comparing two hosts or two builds needs, where {@link assertArrayEqual}
 * (numpy's rule) takes `0` for `-0` and any NaN for any other. Both sides
 * must be typed arrays or `{ data, shape, dtype }` of the same data type and
 * element count (and shape, where both give one); plain numbers and nested
 * arrays have no bits of their own and are refused with a `TypeError`.
 *
 * On failure it throws an {@link AssertionError} listing the mismatched
 * count and the first mismatching indices with both values and their bits
 * (hexadecimal, bytes in memory order).
 *
 * @example
 * ```ts
 * import { assertBitsEqual } from "@deno-xla/ffi/testing";
 * const nan = new Float32Array(new Uint32Array([0x7fc00001]).buffer); // a NaN with a payload
 * assertBitsEqual(nan, nan.slice());
 * try {
 *   assertBitsEqual(new Float32Array([0, NaN]), new Float32Array([-0, NaN]));
 * } catch (e) {
 *   console.log((e as Error).message);
 *   // Arrays are not bitwise equal
 *   // Mismatched elements: 1 / 2 (50.0%)
 *   // First mismatches (index: actual vs expected):
 *   //   [0]: 0 (0x00000000) vs -0 (0x00000080)
 * }
 * ```
 *
 * @param actual the array under test
 * @param expected the reference
 * @param msg a message to add to the failure's first line
 * @param options the data type of bare typed arrays whose own type is not theirs
 */
export function assertBitsEqual(
  actual: ArrayLikeInput,
  expected: ArrayLikeInput,
  msg?: string,
  options: { dtype?: DataType } = {},
): void {
  const a = _rawOf(actual, "actual", options.dtype);
  const e = _rawOf(expected, "expected", options.dtype);
  const head = `Arrays are not bitwise equal${msg ? `: ${msg}` : ""}`;
  if (a.dtype !== e.dtype) {
    throw new AssertionError(
      `${head}\n(data types ${dataTypeInfo(a.dtype).name}, ${dataTypeInfo(e.dtype).name} mismatch)`,
    );
  }
  if (a.shape !== undefined && e.shape !== undefined) {
    if (a.shape.length !== e.shape.length || a.shape.some((d, i) => d !== e.shape![i])) {
      throw new AssertionError(
        `${head}\n(shapes ${shapeText(a.shape)}, ${shapeText(e.shape)} mismatch)`,
      );
    }
  }
  if (a.n !== e.n) {
    throw new AssertionError(
      `${head}\n(sizes ${a.n}, ${e.n} mismatch: actual has ${a.n} ${
        dataTypeInfo(a.dtype).name
      } elements, expected ${e.n})`,
    );
  }
  const bad: number[] = [];
  let count = 0;
  for (let i = 0; i < a.n; i++) {
    let same = true;
    for (let b = i * a.width; b < (i + 1) * a.width; b++) {
      if (a.bytes[b] !== e.bytes[b]) {
        same = false;
        break;
      }
    }
    if (same) continue;
    count++;
    if (bad.length < SHOWN) bad.push(i);
  }
  if (count === 0) return;
  const fa = _flatten(actual, "actual", options.dtype);
  const fe = _flatten(expected, "expected", options.dtype);
  const shape = a.shape ?? e.shape;
  const pct = (100 * count) / a.n;
  const pctText = pct >= 99.95 && count < a.n ? "99.9" : pct.toFixed(pct < 0.1 ? 3 : 1);
  throw new AssertionError(
    `${head}\n` +
      `Mismatched elements: ${count} / ${a.n} (${pctText}%)\n` +
      `First mismatches (index: actual vs expected)${
        count > SHOWN ? `, ${SHOWN} of ${count}` : ""
      }:\n` +
      bad.map((i) =>
        `  ${indexText(i, shape)}: ${valueText(fa, i)} (${hexAt(a, i)}) vs ${valueText(fe, i)} (${
          hexAt(e, i)
        })`
      ).join("\n"),
  );
}

/** The code an {@link assertFfiError} expects: an {@link ErrorCode} or its name. */
export type FfiErrorCode = ErrorCode | keyof typeof ErrorCode;

/**
 * What {@link assertFfiError} returns for a function returning `R`: a
 * promise of the error when `R` is a promise (an async function), the error
 * itself otherwise (a function that only throws returns `never`).
 *
 * @example
 * ```ts
 * import type { FfiError } from "@deno-xla/ffi";
 * import type { FfiErrorOf } from "@deno-xla/ffi/testing";
 * const sync: FfiErrorOf<never> = undefined as unknown as FfiError;
 * const async: FfiErrorOf<Promise<void>> = Promise.resolve(sync);
 * ```
 */
export type FfiErrorOf<R> = [R] extends [never] ? FfiError
  : [R] extends [PromiseLike<unknown>] ? Promise<FfiError>
  : FfiError;

function codeName(code: ErrorCode): string {
  return ErrorCode[code] ?? `CODE_${code}`;
}

function expectedCode(code: FfiErrorCode): ErrorCode {
  if (typeof code === "string") {
    const c = (ErrorCode as unknown as Record<string, ErrorCode>)[code];
    if (typeof c !== "number" || c === ErrorCode.OK) {
      throw new TypeError(`assertFfiError: ${JSON.stringify(code)} is not an error code's name`);
    }
    return c;
  }
  if (typeof code !== "number" || ErrorCode[code] === undefined || code === ErrorCode.OK) {
    throw new TypeError(`assertFfiError: ${String(code)} is not an error code (1..16)`);
  }
  return code;
}

function checkFfiError(
  error: unknown,
  code: ErrorCode,
  message: string | RegExp | undefined,
  msg: string | undefined,
): FfiError {
  const suffix = msg ? `: ${msg}` : "";
  if (!(error instanceof FfiError)) {
    const what = error instanceof Error
      ? `${error.name}: ${error.message}`
      : `a non-error value (${String(error)})`;
    throw new AssertionError(
      `Expected an FfiError ${codeName(code)}, but ${what} was thrown${suffix}`,
      { cause: error },
    );
  }
  if (error.code !== code) {
    throw new AssertionError(
      `Expected an FfiError ${codeName(code)}, but it is ${error.codeName}${suffix}\n` +
        `Message: ${error.message}`,
      { cause: error },
    );
  }
  if (message !== undefined) {
    const ok = typeof message === "string"
      ? error.message.includes(message)
      : message.test(error.message);
    if (!ok) {
      throw new AssertionError(
        `Expected the FfiError's message to ${
          typeof message === "string" ? `include ${JSON.stringify(message)}` : `match ${message}`
        }${suffix}\nMessage: ${error.message}`,
        { cause: error },
      );
    }
  }
  return error;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === "object" || typeof v === "function") &&
    typeof (v as { then?: unknown }).then === "function";
}

function notThrown(code: ErrorCode, msg: string | undefined): AssertionError {
  return new AssertionError(
    `Expected an FfiError ${codeName(code)}, but nothing was thrown${msg ? `: ${msg}` : ""}`,
  );
}

async function settle(
  p: PromiseLike<unknown>,
  code: ErrorCode,
  message: string | RegExp | undefined,
  msg: string | undefined,
): Promise<FfiError> {
  try {
    await p;
  } catch (e) {
    return checkFfiError(e, code, message, msg);
  }
  throw notThrown(code, msg);
}

/**
 * Asserts that a call fails with an {@link FfiError} of a code (and a
 * message that includes a string or matches a pattern), and returns the
 * error. Async: given a promise, or a function that returns one (an async
 * function, `() => host.ffiCall(...)`), it returns a promise to `await`.
 * Fails with an {@link AssertionError} when nothing is thrown, something
 * other than an `FfiError` is, or the code or message differ.
 *
 * @example
 * ```ts
 * import { DataType, ErrorCode, Ffi, FfiError, Runtime } from "@deno-xla/ffi";
 * import { assertFfiError } from "@deno-xla/ffi/testing";
 *
 * // Sync: a function that throws.
 * assertFfiError(() => {
 *   throw new FfiError(ErrorCode.INVALID_ARGUMENT, "bad shape");
 * }, ErrorCode.INVALID_ARGUMENT, "shape");
 *
 * // Async: a promise (or an async function).
 * using rt = new Runtime({ threads: 0 });
 * using fails = Ffi.bind().ret(DataType.F32).to(() => {
 *   throw new FfiError("UNIMPLEMENTED", "not yet");
 * });
 * const e = await assertFfiError(
 *   rt.ffiCall(fails, { results: [{ dtype: DataType.F32, shape: [] }] }),
 *   "UNIMPLEMENTED",
 *   /not yet/,
 * );
 * console.log(e.codeName); // UNIMPLEMENTED
 * ```
 *
 * @param promise a promise that rejects
 * @param code the expected code, an {@link ErrorCode} or its name
 * @param messageIncludes a string the message includes, or a pattern it matches
 * @param msg a message to add to the failure
 * @returns the error (a promise of it when async)
 * @throws {AssertionError} when the call does not fail as expected
 */
export function assertFfiError(
  promise: PromiseLike<unknown>,
  code: FfiErrorCode,
  messageIncludes?: string | RegExp,
  msg?: string,
): Promise<FfiError>;
/**
 * Asserts that a function throws an {@link FfiError} of a code (and a
 * message that includes a string or matches a pattern), and returns it; for
 * a function that returns a promise (an async function, `() =>
 * host.ffiCall(...)`), that the promise rejects so, returning a promise of
 * the error.
 *
 * @example
 * ```ts
 * import { ErrorCode, FfiError } from "@deno-xla/ffi";
 * import { assertFfiError } from "@deno-xla/ffi/testing";
 * const e = assertFfiError(() => {
 *   throw new FfiError(ErrorCode.NOT_FOUND, "No FFI handler registered for x");
 * }, "NOT_FOUND");
 * console.log(e.message); // No FFI handler registered for x
 * ```
 *
 * @param fn a function that throws, or returns a promise that rejects
 * @param code the expected code, an {@link ErrorCode} or its name
 * @param messageIncludes a string the message includes, or a pattern it matches
 * @param msg a message to add to the failure
 * @returns the error, or a promise of it when `fn` returns a promise
 * @throws {AssertionError} when the call does not fail as expected
 */
export function assertFfiError<R>(
  fn: () => R,
  code: FfiErrorCode,
  messageIncludes?: string | RegExp,
  msg?: string,
): FfiErrorOf<R>;
export function assertFfiError(
  fnOrPromise: PromiseLike<unknown> | (() => unknown),
  code: FfiErrorCode,
  messageIncludes?: string | RegExp,
  msg?: string,
): FfiError | Promise<FfiError> {
  const c = expectedCode(code);
  if (typeof fnOrPromise !== "function") {
    if (!isThenable(fnOrPromise)) {
      throw new TypeError("assertFfiError: expected a function or a promise");
    }
    return settle(fnOrPromise, c, messageIncludes, msg);
  }
  let result: unknown;
  try {
    result = fnOrPromise();
  } catch (e) {
    return checkFfiError(e, c, messageIncludes, msg);
  }
  if (isThenable(result)) return settle(result, c, messageIncludes, msg);
  throw notThrown(c, msg);
}
