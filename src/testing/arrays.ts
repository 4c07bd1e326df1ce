/**
 * Arrays for handler tests: {@link like} (a result spec shaped like an
 * array) and complex arrays made readable: {@link complex64} /
 * {@link complex128} from real and imaginary parts, {@link realPart},
 * {@link imagPart} and {@link complexPairs} to read them back.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { byteWidth, dataTypeInfo, dataTypeOf } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import type { ArrayArg, ArrayInput, ArraySpec } from "../runtime/ffi_call.ts";

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/**
 * The result spec of an array: its dtype and shape (`jax.ShapeDtypeStruct(
 * x.shape, x.dtype)`). A bare typed array is 1-D of its own element type.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { like } from "@deno-xla/ffi/testing";
 * const x = { data: new Float32Array(6), shape: [2, 3] };
 * console.log(like(x)); // { dtype: 11, shape: [ 2, 3 ] }
 * console.log(like(new Int32Array(4)).dtype === DataType.S32); // true
 * ```
 *
 * @param array a typed array or `{ data, shape, dtype }` (an `NpyArray`)
 */
export function like(array: ArrayArg): ArraySpec {
  if (ArrayBuffer.isView(array)) {
    const dtype = dataTypeOf(array);
    return { dtype, shape: [array.byteLength / byteWidth(dtype)] };
  }
  if (array === null || typeof array !== "object" || !ArrayBuffer.isView(array.data)) {
    bad("like: expected a typed array or { data, shape, dtype }");
  }
  const dtype = array.dtype ?? dataTypeOf(array.data);
  return {
    dtype,
    shape: array.shape !== undefined
      ? [...array.shape]
      : [array.data.byteLength / byteWidth(dtype)],
  };
}

/** A complex array: interleaved (re, im) data, shape and C64/C128. */
export interface ComplexArray<T extends Float32Array | Float64Array = Float32Array | Float64Array>
  extends ArrayInput {
  /** Interleaved real and imaginary parts. */
  readonly data: T;
  /** Dimensions, outermost first. */
  readonly shape: number[];
  /** C64 or C128. */
  readonly dtype: DataType;
}

function interleave<T extends Float32Array | Float64Array>(
  out: T,
  re: ArrayLike<number>,
  im: ArrayLike<number> | undefined,
): T {
  if (im !== undefined && im.length !== re.length) {
    bad(`complex: ${re.length} real parts but ${im.length} imaginary parts`);
  }
  for (let i = 0; i < re.length; i++) {
    out[2 * i] = re[i]!;
    out[2 * i + 1] = im === undefined ? 0 : im[i]!;
  }
  return out;
}

function shaped(n: number, shape: readonly number[] | undefined): number[] {
  const s = shape === undefined ? [n] : [...shape];
  if (s.reduce((a, b) => a * b, 1) !== n) bad(`complex: shape [${s}] does not hold ${n} values`);
  return s;
}

/**
 * A complex64 (C64) array from its real and imaginary parts (imaginary
 * parts default to 0), interleaved as XLA lays it out.
 *
 * @example
 * ```ts
 * import { complex64 } from "@deno-xla/ffi/testing";
 * const z = complex64([1, 3], [2, -1]); // 1+2i, 3-1i
 * console.log(z.data, z.shape); // Float32Array(4) [ 1, 2, 3, -1 ] [ 2 ]
 * ```
 *
 * @param re real parts
 * @param im imaginary parts (default all 0)
 * @param shape dimensions (default `[re.length]`)
 */
export function complex64(
  re: ArrayLike<number>,
  im?: ArrayLike<number>,
  shape?: readonly number[],
): ComplexArray<Float32Array> {
  const data = interleave(new Float32Array(2 * re.length), re, im);
  return { data, shape: shaped(re.length, shape), dtype: DataType.C64 };
}

/**
 * A complex128 (C128) array from its real and imaginary parts.
 *
 * @example
 * ```ts
 * import { complex128 } from "@deno-xla/ffi/testing";
 * console.log(complex128([0.5], [0.25]).data); // Float64Array(2) [ 0.5, 0.25 ]
 * ```
 *
 * @param re real parts
 * @param im imaginary parts (default all 0)
 * @param shape dimensions (default `[re.length]`)
 */
export function complex128(
  re: ArrayLike<number>,
  im?: ArrayLike<number>,
  shape?: readonly number[],
): ComplexArray<Float64Array> {
  const data = interleave(new Float64Array(2 * re.length), re, im);
  return { data, shape: shaped(re.length, shape), dtype: DataType.C128 };
}

/** The interleaved data of a complex array (C64 for a bare Float32Array, C128 for Float64Array). */
function pairs(z: ArrayArg): Float32Array | Float64Array {
  const data = ArrayBuffer.isView(z) ? z : z?.data;
  const dtype = ArrayBuffer.isView(z) ? undefined : z?.dtype;
  if (dtype !== undefined && dataTypeInfo(dtype).kind !== "complex") {
    bad(`complex parts: the array is ${dataTypeInfo(dtype).name}, not C64 or C128`);
  }
  if (!(data instanceof Float32Array || data instanceof Float64Array)) {
    bad("complex parts: expected interleaved (re, im) data in a Float32Array or Float64Array");
  }
  if (data.length % 2 !== 0) bad(`complex parts: ${data.length} is not a whole number of pairs`);
  return data;
}

/**
 * The real parts of a complex array (a copy, of the array's precision):
 * `{ data, dtype: C64 }`, or a bare interleaved `Float32Array` (C64) or
 * `Float64Array` (C128) as `ffiCall` returns it.
 *
 * @example
 * ```ts
 * import { complex64, realPart } from "@deno-xla/ffi/testing";
 * console.log(realPart(complex64([1, 3], [2, -1]))); // Float32Array(2) [ 1, 3 ]
 * ```
 *
 * @param z the complex array
 */
export function realPart(z: ArrayArg): Float32Array | Float64Array {
  const d = pairs(z);
  const out = new (d.constructor as Float32ArrayConstructor | Float64ArrayConstructor)(
    d.length / 2,
  );
  for (let i = 0; i < out.length; i++) out[i] = d[2 * i]!;
  return out;
}

/**
 * The imaginary parts of a complex array (a copy; see {@link realPart}).
 *
 * @example
 * ```ts
 * import { complex64, imagPart } from "@deno-xla/ffi/testing";
 * console.log(imagPart(complex64([1, 3], [2, -1]))); // Float32Array(2) [ 2, -1 ]
 * ```
 *
 * @param z the complex array
 */
export function imagPart(z: ArrayArg): Float32Array | Float64Array {
  const d = pairs(z);
  const out = new (d.constructor as Float32ArrayConstructor | Float64ArrayConstructor)(
    d.length / 2,
  );
  for (let i = 0; i < out.length; i++) out[i] = d[2 * i + 1]!;
  return out;
}

/**
 * The values of a complex array as `[re, im]` pairs (how `cli run --json`
 * prints them).
 *
 * @example
 * ```ts
 * import { complex64, complexPairs } from "@deno-xla/ffi/testing";
 * console.log(complexPairs(complex64([1, 3], [2, -1]))); // [ [ 1, 2 ], [ 3, -1 ] ]
 * ```
 *
 * @param z the complex array
 */
export function complexPairs(z: ArrayArg): [number, number][] {
  const d = pairs(z);
  const out: [number, number][] = [];
  for (let i = 0; i < d.length; i += 2) out.push([d[i]!, d[i + 1]!]);
  return out;
}
