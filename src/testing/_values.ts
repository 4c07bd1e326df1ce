/**
 * Arrays as the assertions compare them: every element of every data type of
 * the module as a number (floats of every width decoded, sub-byte integers
 * sign-extended), a bigint (S64/U64, compared exactly), or a complex pair.
 *
 * @module
 */
import { DataType } from "../abi/enums.ts";
import {
  type DataTypedArray,
  dataTypeInfo,
  dataTypeOf,
  decodeFloats,
  subByteToNumber,
  viewAs,
} from "../abi/dtype.ts";
import type { ArrayInput } from "../runtime/ffi_call.ts";
import { _isDetached } from "../runtime/_buffer_size.ts";

/**
 * What the assertions take: a typed array (its own element type unless
 * `dtype` says otherwise), an array with its shape (`{ data, shape, dtype }`,
 * an `NpyArray`, an `XlaArray`), a plain number or bigint (a scalar), or
 * nested JS arrays of numbers or bigints (their nesting is the shape).
 */
export type ArrayLikeInput =
  | DataTypedArray
  | ArrayBufferView
  | ArrayInput
  | number
  | bigint
  | readonly unknown[];

/** An array flattened for comparison. */
export interface _Flat {
  /** The data type, when known (declared or from the typed array). */
  dtype: DataType | undefined;
  /** The shape, when given (`{ shape }`, nested arrays, scalars). */
  shape: number[] | undefined;
  /** Elements (real parts for complex arrays); null where `big` holds them. */
  re: Float64Array | null;
  /** Imaginary parts (complex arrays only). */
  im: Float64Array | null;
  /** S64/U64 elements, exact. */
  big: bigint[] | null;
  /** Element count. */
  n: number;
}

function bytesOf(v: ArrayBufferView): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

function fromNested(x: readonly unknown[], what: string): _Flat {
  const shape: number[] = [];
  let level: unknown = x;
  while (Array.isArray(level)) {
    shape.push(level.length);
    level = level[0];
  }
  const flat: unknown[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth === shape.length) {
      if (Array.isArray(v)) throw new TypeError(`${what}: nested arrays are not rectangular`);
      flat.push(v);
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[depth]) {
      throw new TypeError(`${what}: nested arrays are not rectangular`);
    }
    for (const e of v) walk(e, depth + 1);
  };
  walk(x, 0);
  if (flat.length > 0 && flat.every((v) => typeof v === "bigint")) {
    return { dtype: undefined, shape, re: null, im: null, big: flat as bigint[], n: flat.length };
  }
  const re = new Float64Array(flat.length);
  for (let i = 0; i < flat.length; i++) {
    const v = flat[i];
    if (typeof v === "number") re[i] = v;
    else if (typeof v === "bigint") re[i] = Number(v);
    else if (typeof v === "boolean") re[i] = v ? 1 : 0;
    else throw new TypeError(`${what}: element ${i} is ${typeof v}, not a number`);
  }
  return { dtype: undefined, shape, re, im: null, big: null, n: flat.length };
}

/** Flattens one side of a comparison; `dtype` is the type of a bare typed array. */
export function _flatten(x: ArrayLikeInput, what: string, dtype?: DataType): _Flat {
  if (typeof x === "number" || typeof x === "boolean") {
    return {
      dtype: undefined,
      shape: [],
      re: Float64Array.of(Number(x)),
      im: null,
      big: null,
      n: 1,
    };
  }
  if (typeof x === "bigint") {
    return { dtype: undefined, shape: [], re: null, im: null, big: [x], n: 1 };
  }
  if (Array.isArray(x)) return fromNested(x, what);
  const given = _viewInput(x, dtype);
  if (given === undefined) {
    throw new TypeError(
      `${what}: expected a typed array, { data, shape, dtype }, a number or nested arrays`,
    );
  }
  const { data, shape } = given;
  let dt = given.dt;
  if (_isDetached(data)) {
    // Its elements are gone (a view of it reads as empty): say so rather than compare nothing.
    throw new TypeError(
      `${what}: its ArrayBuffer is detached (transferred); compare a copy made before the ` +
        `transfer (array.slice())`,
    );
  }
  dt ??= dataTypeOf(data);
  const info = dataTypeInfo(dt);
  const view = viewAs(dt, bytesOf(data));
  const n = view.length / info.lanes;
  if (info.kind === "complex") {
    const re = new Float64Array(n), im = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      re[i] = view[2 * i] as number;
      im[i] = view[2 * i + 1] as number;
    }
    return { dtype: dt, shape, re, im, big: null, n };
  }
  if (dt === DataType.S64 || dt === DataType.U64) {
    return { dtype: dt, shape, re: null, im: null, big: Array.from(view as BigInt64Array), n };
  }
  let re: Float64Array;
  if (info.kind === "float" && dt !== DataType.F32 && dt !== DataType.F64) {
    re = dt === DataType.F16
      ? Float64Array.from(view as Float16Array)
      : decodeFloats(dt, view as Uint8Array | Uint16Array) as Float64Array;
  } else if (info.bitWidth < 8) {
    re = new Float64Array(n);
    for (let i = 0; i < n; i++) re[i] = subByteToNumber(dt, (view as Uint8Array)[i]!);
  } else {
    re = Float64Array.from(view as ArrayLike<number>);
  }
  return { dtype: dt, shape, re, im: null, big: null, n };
}

/** An array's element bytes, as a bitwise comparison reads them. */
export interface _Raw {
  /** The data type (declared, or the typed array's). */
  dtype: DataType;
  /** The shape, when given. */
  shape: number[] | undefined;
  /** The bytes of the elements. */
  bytes: Uint8Array;
  /** Bytes per element (`ffi.h`'s ByteWidth; 8 for C64). */
  width: number;
  /** Element count. */
  n: number;
}

/**
 * The bytes of a typed array or `{ data, shape, dtype }`; a TypeError for
 * what has no bits of its own (plain numbers, nested arrays).
 */
export function _rawOf(x: ArrayLikeInput, what: string, dtype?: DataType): _Raw {
  const given = _viewInput(x, dtype);
  if (given === undefined) {
    throw new TypeError(
      `${what}: a bitwise comparison needs a typed array or { data, shape, dtype } (its bits); ` +
        `plain numbers and nested arrays have none`,
    );
  }
  const { data, shape } = given;
  let dt = given.dt;
  if (_isDetached(data)) {
    throw new TypeError(
      `${what}: its ArrayBuffer is detached (transferred); compare a copy made before the ` +
        `transfer (array.slice())`,
    );
  }
  dt ??= dataTypeOf(data);
  const width = dataTypeInfo(dt).byteWidth;
  const bytes = bytesOf(data);
  if (width === 0 || bytes.length % width !== 0) {
    throw new TypeError(
      `${what}: ${bytes.length} bytes are not whole ${dataTypeInfo(dt).name} elements`,
    );
  }
  return { dtype: dt, shape, bytes, width, n: bytes.length / width };
}

/** A complex array's interleaved pairs read as complex when the other side is complex. */
export function _asComplex(f: _Flat): _Flat {
  if (f.im !== null || f.re === null || f.n % 2 !== 0) return f;
  const n = f.n / 2;
  const re = new Float64Array(n), im = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    re[i] = f.re[2 * i]!;
    im[i] = f.re[2 * i + 1]!;
  }
  return { dtype: f.dtype, shape: undefined, re, im, big: null, n };
}

/** A typed array's, or `{ data, shape, dtype }`'s, view, shape and data type; undefined for anything else. */
function _viewInput(
  x: unknown,
  dtype: DataType | undefined,
): { data: ArrayBufferView; shape: number[] | undefined; dt: DataType | undefined } | undefined {
  if (ArrayBuffer.isView(x)) return { data: x, shape: undefined, dt: dtype };
  if (x !== null && typeof x === "object" && ArrayBuffer.isView((x as ArrayInput).data)) {
    const a = x as ArrayInput;
    return {
      data: a.data,
      shape: a.shape === undefined ? undefined : [...a.shape],
      dt: a.dtype ?? dtype,
    };
  }
  return undefined;
}
