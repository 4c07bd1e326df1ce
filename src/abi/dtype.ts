/**
 * Facts about every {@link DataType}: its name as `ffi.h` prints it, its
 * `ByteWidth`, its bit width, its kind, the TypedArray that views a buffer of
 * it, and exact conversions between JavaScript numbers and the bit patterns of
 * the 16-, 8- and 4-bit float types (F16, BF16, the F8 family, F4E2M1FN,
 * F8E8M0FNU).
 *
 * Storage of sub-byte types (S1, S2, S4, U1, U2, U4, F4E2M1FN): one element per
 * byte, the value in the low {@link bitWidth} bits, exactly as `ffi.h`'s
 * `ByteWidth` (1) and `size_bytes() = ByteWidth × element count` describe a
 * buffer, and as ml_dtypes stores `int4`/`uint4`/`float4_e2m1fn`. Reading
 * ignores the high bits (signed types sign-extend from bit `bitWidth - 1`);
 * writing leaves them zero. Such buffers are viewed as `Uint8Array`.
 *
 * Rounding from a JavaScript number (a float64) is done once, directly from
 * the float64 value, to nearest with ties to even (the C++ `static_cast` of
 * XLA/ml_dtypes from `double`). NumPy's array `astype` from float64 to an
 * ml_dtypes type goes through float32 first and so can round twice; for
 * float32-representable inputs both agree. Out-of-range and special values
 * follow ml_dtypes' default, non-saturating conversion:
 *
 * | kind | types | ±Inf in | overflow | NaN in | −0 |
 * |---|---|---|---|---|---|
 * | IEEE-like | F16, BF16, F8E5M2, F8E4M3, F8E3M4 | ±Inf | ±Inf | quiet NaN (sign kept) | kept |
 * | FN | F8E4M3FN | NaN (sign kept, `S.1111.111`) | NaN | NaN | kept |
 * | FNUZ | F8E4M3B11FNUZ, F8E5M2FNUZ, F8E4M3FNUZ | NaN `0x80` | NaN `0x80` | `0x80` | becomes +0 |
 * | F4E2M1FN | (no NaN, no Inf) | saturates to ±6 | saturates to ±6 | `0x8` (ml_dtypes maps NaN to −0; a NaN with the sign bit set to +0) | kept |
 * | F8E8M0FNU | 2^(e−127) only, no sign, no zero | NaN `0xFF` | NaN `0xFF` | `0xFF` | zero, −0 and negatives are NaN `0xFF` |
 *
 * F8E8M0FNU rounds to the nearest power of two with ties (1.5 × 2^e) upwards;
 * as in ml_dtypes, positive values below 2^−127 become 2^−127 and values in
 * (2^−127, 2^−126) become 2^−126.
 *
 * @module
 */
import { DataType } from "./enums.ts";
import { ErrorCode } from "./enums.ts";
import { _DATA_TYPE_FACTS, type _DataTypeFact, _FLOAT_FORMAT_FACTS } from "./_facts.generated.ts";
import { FfiError } from "../errors.ts";

/** Every TypedArray type a buffer of some {@link DataType} is viewed as. */
export type DataTypedArray =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float16Array
  | Float32Array
  | Float64Array;

/** A constructor of a {@link DataTypedArray}. */
export type DataTypedArrayConstructor =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Int16ArrayConstructor
  | Int32ArrayConstructor
  | BigInt64ArrayConstructor
  | Uint16ArrayConstructor
  | Uint32ArrayConstructor
  | BigUint64ArrayConstructor
  | Float16ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

/** The kind of values a {@link DataType} holds. */
export type DataTypeKind =
  | "invalid"
  | "pred"
  | "signed"
  | "unsigned"
  | "float"
  | "complex"
  | "token";

/** Everything known about one {@link DataType}. */
export interface DataTypeInfo {
  /** The enum value. */
  readonly dataType: DataType;
  /** Upper-case name as `ffi.h` prints it (`"F32"`, `"F8E4M3FN"`). */
  readonly name: string;
  /** `ffi.h`'s `ByteWidth`: bytes per element (sub-byte types 1, TOKEN/INVALID 0). */
  readonly byteWidth: number;
  /** Bits of one value (S4 4, U1 1, C64 64, PRED 8, TOKEN/INVALID 0). */
  readonly bitWidth: number;
  /** What the values are. */
  readonly kind: DataTypeKind;
  /** The TypedArray that views a buffer of this type, or null (TOKEN, INVALID). */
  readonly typedArray: DataTypedArrayConstructor | null;
  /** TypedArray elements per value: 2 for C64/C128 (real, imaginary), else 1 (0 if none). */
  readonly lanes: number;
}

/** The TypedArray that views a buffer of a data type, by its facts. */
function _typedArray(f: _DataTypeFact): DataTypedArrayConstructor | null {
  const raw = [Uint8Array, Uint16Array, Uint32Array, BigUint64Array];
  const at = Math.log2(f.byteWidth); // 1, 2, 4, 8 bytes: 0..3
  switch (f.kind) {
    case "pred":
      return Uint8Array;
    case "signed":
      return f.bitWidth < 8 ? Uint8Array : [Int8Array, Int16Array, Int32Array, BigInt64Array][at]!;
    case "unsigned":
      return raw[at]!;
    case "float": // NumPy's own floats have a TypedArray; ml_dtypes' are viewed as raw bits
      return f.module === "numpy" ? [Float16Array, Float32Array, Float64Array][at - 1]! : raw[at]!;
    case "complex": // (real, imaginary) pairs
      return f.byteWidth === 8 ? Float32Array : Float64Array;
    default:
      return null;
  }
}

const _INFOS: ReadonlyMap<number, DataTypeInfo> = new Map(
  _DATA_TYPE_FACTS.map((f) => {
    const typedArray = _typedArray(f);
    const info: DataTypeInfo = Object.freeze({
      dataType: f.value,
      name: f.name,
      byteWidth: f.byteWidth,
      bitWidth: f.bitWidth,
      kind: f.kind,
      typedArray,
      lanes: typedArray === null ? 0 : f.kind === "complex" ? 2 : 1,
    });
    return [f.value, info];
  }),
);

function _unknown(dt: number): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, `Unknown data type ${dt}`);
}

/**
 * All facts about a data type; throws FfiError INVALID_ARGUMENT for a number
 * that is no {@link DataType}.
 *
 * @example
 * ```ts
 * import { DataType, dataTypeInfo } from "@deno-xla/ffi";
 * const info = dataTypeInfo(DataType.C64);
 * console.log(info.name, info.byteWidth, info.kind, info.lanes); // C64 8 complex 2
 * ```
 */
export function dataTypeInfo(dt: DataType | number): DataTypeInfo {
  const info = _INFOS.get(dt);
  if (info === undefined) throw _unknown(dt);
  return info;
}

/**
 * Every {@link DataType} value, in enum order.
 *
 * @example
 * ```ts
 * import { allDataTypes } from "@deno-xla/ffi";
 * console.log(allDataTypes().length); // 32
 * ```
 */
export function allDataTypes(): DataType[] {
  return [..._INFOS.keys()].sort((a, b) => a - b);
}

/**
 * The upper-case name `ffi.h` prints for a data type (`"F32"`,
 * `"F8E4M3FN"`); `"unknown data type N"` for a number that is none.
 *
 * @example
 * ```ts
 * import { DataType, dataTypeName } from "@deno-xla/ffi";
 * console.log(dataTypeName(DataType.F8E4M3FN)); // "F8E4M3FN"
 * ```
 */
export function dataTypeName(dt: DataType | number): string {
  return _INFOS.get(dt)?.name ?? `unknown data type ${dt}`;
}

/**
 * `ffi.h`'s `ByteWidth`: bytes per element; sub-byte types 1, TOKEN and
 * INVALID 0, C64 8, C128 16.
 *
 * @example
 * ```ts
 * import { byteWidth, DataType } from "@deno-xla/ffi";
 * console.log(byteWidth(DataType.S4), byteWidth(DataType.C128)); // 1 16
 * ```
 */
export function byteWidth(dt: DataType | number): number {
  return dataTypeInfo(dt).byteWidth;
}

/**
 * Bits of one value: S4 4, U1 1, F4E2M1FN 4, PRED 8, C64 64, TOKEN 0.
 *
 * @example
 * ```ts
 * import { bitWidth, DataType } from "@deno-xla/ffi";
 * console.log(bitWidth(DataType.F4E2M1FN)); // 4
 * ```
 */
export function bitWidth(dt: DataType | number): number {
  return dataTypeInfo(dt).bitWidth;
}

/**
 * Whether a data type holds real floating-point values (F16…F64, BF16, the
 * F8 family, F4E2M1FN, F8E8M0FNU).
 *
 * @example
 * ```ts
 * import { DataType, isFloat } from "@deno-xla/ffi";
 * console.log(isFloat(DataType.BF16), isFloat(DataType.C64)); // true false
 * ```
 */
export function isFloat(dt: DataType | number): boolean {
  return dataTypeInfo(dt).kind === "float";
}

/**
 * Whether a data type holds integers (S1…S64, U1…U64; not PRED).
 *
 * @example
 * ```ts
 * import { DataType, isInteger } from "@deno-xla/ffi";
 * console.log(isInteger(DataType.U4), isInteger(DataType.PRED)); // true false
 * ```
 */
export function isInteger(dt: DataType | number): boolean {
  const kind = dataTypeInfo(dt).kind;
  return kind === "signed" || kind === "unsigned";
}

/**
 * Whether a data type holds signed integers (S1…S64).
 *
 * @example
 * ```ts
 * import { DataType, isSignedInteger } from "@deno-xla/ffi";
 * console.log(isSignedInteger(DataType.S2)); // true
 * ```
 */
export function isSignedInteger(dt: DataType | number): boolean {
  return dataTypeInfo(dt).kind === "signed";
}

/**
 * Whether a data type is complex (C64, C128).
 *
 * @example
 * ```ts
 * import { DataType, isComplex } from "@deno-xla/ffi";
 * console.log(isComplex(DataType.C128)); // true
 * ```
 */
export function isComplex(dt: DataType | number): boolean {
  return dataTypeInfo(dt).kind === "complex";
}

/**
 * The TypedArray constructor that views a buffer of a data type, or null for
 * TOKEN and INVALID. PRED, sub-byte types, 8-bit floats and F4E2M1FN →
 * `Uint8Array` (raw bits, one element per byte); BF16 → `Uint16Array` (raw
 * bits); F16 → `Float16Array`; C64/C128 → `Float32Array`/`Float64Array` with
 * real and imaginary parts interleaved.
 *
 * @example
 * ```ts
 * import { DataType, typedArrayFor } from "@deno-xla/ffi";
 * console.log(typedArrayFor(DataType.S64)?.name); // "BigInt64Array"
 * ```
 */
export function typedArrayFor(dt: DataType | number): DataTypedArrayConstructor | null {
  return dataTypeInfo(dt).typedArray;
}

/**
 * The data type a TypedArray naturally holds: `Float32Array` → F32,
 * `Uint8Array`/`Uint8ClampedArray` → U8, `Uint16Array` → U16,
 * `Float16Array` → F16, `BigInt64Array` → S64, …; throws FfiError
 * INVALID_ARGUMENT for anything else. (PRED, BF16, complex and the small
 * float types share a TypedArray with another type, so are never inferred.)
 *
 * @example
 * ```ts
 * import { DataType, dataTypeOf } from "@deno-xla/ffi";
 * console.log(dataTypeOf(new Float64Array(2)) === DataType.F64); // true
 * ```
 */
export function dataTypeOf(array: ArrayBufferView): DataType {
  if (array instanceof Float32Array) return DataType.F32;
  if (array instanceof Float64Array) return DataType.F64;
  if (array instanceof Float16Array) return DataType.F16;
  if (array instanceof Uint8Array || array instanceof Uint8ClampedArray) return DataType.U8;
  if (array instanceof Int8Array) return DataType.S8;
  if (array instanceof Int16Array) return DataType.S16;
  if (array instanceof Int32Array) return DataType.S32;
  if (array instanceof BigInt64Array) return DataType.S64;
  if (array instanceof Uint16Array) return DataType.U16;
  if (array instanceof Uint32Array) return DataType.U32;
  if (array instanceof BigUint64Array) return DataType.U64;
  const name = (array as { constructor?: { name?: string } })?.constructor?.name ?? typeof array;
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, `No data type for a ${name}`);
}

/**
 * Views bytes as the TypedArray of a data type, without copying. The byte
 * length must be a multiple of `ByteWidth` and the offset aligned to the
 * TypedArray's element size; else FfiError INVALID_ARGUMENT.
 *
 * @example
 * ```ts
 * import { DataType, viewAs } from "@deno-xla/ffi";
 * const bytes = new Uint8Array(new Float32Array([1.5, -2]).buffer);
 * console.log(viewAs(DataType.F32, bytes)); // Float32Array(2) [ 1.5, -2 ]
 * console.log(viewAs(DataType.C64, bytes).length); // 2 (one complex value)
 * ```
 */
export function viewAs(
  dt: DataType | number,
  bytes: ArrayBuffer | SharedArrayBuffer | Uint8Array,
): DataTypedArray {
  const info = dataTypeInfo(dt);
  const ctor = info.typedArray;
  if (ctor === null) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Data type ${info.name} has no elements to view`,
    );
  }
  const buffer = (ArrayBuffer.isView(bytes) ? bytes.buffer : bytes) as ArrayBuffer;
  const offset = ArrayBuffer.isView(bytes) ? bytes.byteOffset : 0;
  const length = bytes.byteLength;
  if (length % info.byteWidth !== 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${length} bytes are not a whole number of ${info.name} elements of ${info.byteWidth} bytes`,
    );
  }
  const size = ctor.BYTES_PER_ELEMENT;
  if (offset % size !== 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Byte offset ${offset} is not aligned to ${size} bytes for a ${ctor.name} view of ${info.name}`,
    );
  }
  return new ctor(buffer, offset, length / size);
}

// ---------------------------------------------------------------------------
// Sub-byte integers.

/**
 * The integer held in the low bits of one byte of an S1/S2/S4/U1/U2/U4 buffer
 * (high bits ignored, signed types sign-extended). Also accepts S8/U8.
 *
 * @example
 * ```ts
 * import { DataType, subByteToNumber } from "@deno-xla/ffi";
 * console.log(subByteToNumber(DataType.S4, 0x0f), subByteToNumber(DataType.U4, 0xff)); // -1 15
 * ```
 */
export function subByteToNumber(dt: DataType | number, byte: number): number {
  const bits = _intBits(dt);
  const shift = 32 - bits;
  return isSignedInteger(dt) ? ((byte << shift) >> shift) : ((byte << shift) >>> shift);
}

/**
 * The byte storing an integer in an S1/S2/S4/U1/U2/U4 buffer: the value's
 * low bits (wrapping like a C cast), high bits zero. Also accepts S8/U8.
 *
 * @example
 * ```ts
 * import { DataType, numberToSubByte } from "@deno-xla/ffi";
 * console.log(numberToSubByte(DataType.S4, -1)); // 15
 * ```
 */
export function numberToSubByte(dt: DataType | number, value: number): number {
  const bits = _intBits(dt);
  return Math.trunc(value) & ((1 << bits) - 1);
}

function _intBits(dt: DataType | number): number {
  const info = dataTypeInfo(dt);
  if ((info.kind !== "signed" && info.kind !== "unsigned") || info.byteWidth !== 1) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${info.name} is not a one-byte integer type`,
    );
  }
  return info.bitWidth;
}

// ---------------------------------------------------------------------------
// Small float formats.

/** How a float format spends its top exponent and its special values. */
type _Kind = "ieee" | "fn" | "fnuz" | "sat" | "e8m0";

interface _Format {
  readonly name: string;
  readonly ebits: number;
  readonly mbits: number;
  readonly bias: number;
  readonly kind: _Kind;
  decodeTable: Float64Array | null;
}

/** The 16-, 8- and 4-bit float formats (F32 and F64 are JavaScript's own). */
const _FORMATS: ReadonlyMap<number, _Format> = new Map(
  _FLOAT_FORMAT_FACTS.filter((f) => 1 + f.ebits + f.mbits <= 16).map((f) => [
    DataType[f.name as keyof typeof DataType],
    {
      name: f.name,
      ebits: f.ebits,
      mbits: f.mbits,
      bias: f.bias,
      kind: f.specials,
      decodeTable: null,
    },
  ]),
);

function _format(dt: DataType | number): _Format {
  const f = _FORMATS.get(dt);
  if (f === undefined) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${dataTypeName(dt)} is not a 16-, 8- or 4-bit float type`,
    );
  }
  return f;
}

const _f64 = new Float64Array(1);
const _u32 = new Uint32Array(_f64.buffer);
const _LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const _HI = _LITTLE ? 1 : 0;

/** Exactly 2^k for an integer k in [-1022, 1023]. */
function _pow2(k: number): number {
  _u32[_HI] = (k + 1023) << 20;
  _u32[1 - _HI] = 0;
  return _f64[0] as number;
}

function _decode(f: _Format, bits: number): number {
  if (f.kind === "e8m0") {
    bits &= 0xff;
    return bits === 0xff ? NaN : _pow2(bits - 127);
  }
  const { ebits, mbits, bias, kind } = f;
  const width = 1 + ebits + mbits;
  bits &= (1 << width) - 1;
  const emask = (1 << ebits) - 1;
  const mmask = (1 << mbits) - 1;
  const negative = (bits >>> (width - 1)) !== 0;
  const e = (bits >>> mbits) & emask;
  const m = bits & mmask;
  if (kind === "fnuz" && bits === 1 << (width - 1)) return NaN;
  if (kind === "ieee" && e === emask) return m === 0 ? (negative ? -Infinity : Infinity) : NaN;
  if (kind === "fn" && e === emask && m === mmask) return NaN;
  const v = e === 0 ? m * _pow2(1 - bias - mbits) : (m + (1 << mbits)) * _pow2(e - bias - mbits);
  return negative ? -v : v;
}

function _encode(f: _Format, x: number): number {
  _f64[0] = x;
  const hi = _u32[_HI] as number;
  const sign = hi >>> 31;
  const biasedF64 = (hi >>> 20) & 0x7ff;
  if (f.kind === "e8m0") {
    if (x !== x || sign !== 0 || x === 0 || x === Infinity) return 0xff;
    if (biasedF64 === 0) return 0; // float64 subnormal: below 2^-127, clamps to it
    if (biasedF64 === 1023 - 127) {
      // [2^-127, 2^-126): ml_dtypes gives 2^-126 for anything above 2^-127.
      return ((hi & 0xfffff) | (_u32[1 - _HI] as number)) !== 0 ? 1 : 0;
    }
    const e = biasedF64 - 1023 + ((hi & 0x80000) !== 0 ? 1 : 0); // ties (1.5 × 2^e) round up
    const biased = e + 127;
    return biased < 0 ? 0 : biased > 254 ? 0xff : biased;
  }
  const { ebits, mbits, bias, kind } = f;
  const width = 1 + ebits + mbits;
  const emask = (1 << ebits) - 1;
  const mmask = (1 << mbits) - 1;
  const signBits = sign << (width - 1);
  const nan = kind === "ieee"
    ? signBits | (emask << mbits) | (1 << (mbits - 1))
    : kind === "fn"
    ? signBits | (emask << mbits) | mmask
    : kind === "fnuz"
    ? 1 << (width - 1)
    : (sign ^ 1) << (width - 1); // "sat" (F4E2M1FN): ml_dtypes maps NaN to ∓0
  if (x !== x) return nan;
  const overflow = kind === "ieee"
    ? signBits | (emask << mbits)
    : kind === "sat"
    ? signBits | (emask << mbits) | mmask
    : nan;
  const zero = kind === "fnuz" ? 0 : signBits;
  if (biasedF64 === 0x7ff) return overflow; // ±Infinity
  if (biasedF64 === 0) return zero; // ±0 and float64 subnormals round to zero
  const e = biasedF64 - 1023;
  const emin = 1 - bias;
  if (e > emask - bias + 1) return overflow;
  const a = x < 0 ? -x : x;
  const subnormal = e < emin;
  if (subnormal && e < emin - mbits - 2) return zero;
  const q = a * _pow2(mbits - (subnormal ? emin : e)); // exact scaling by a power of two
  const floor = Math.floor(q);
  const rest = q - floor;
  const n = rest > 0.5 || (rest === 0.5 && (floor & 1) === 1) ? floor + 1 : floor;
  let biased: number;
  let mant: number;
  if (subnormal) {
    if (n === 0) return zero;
    biased = n >= 1 << mbits ? 1 : 0;
    mant = n & mmask;
  } else if (n === 2 << mbits) {
    biased = e + bias + 1;
    mant = 0;
  } else {
    biased = e + bias;
    mant = n - (1 << mbits);
  }
  if (kind === "ieee" ? biased >= emask : biased > emask) return overflow;
  if (kind === "fn" && biased === emask && mant === mmask) return overflow;
  return signBits | (biased << mbits) | mant;
}

/**
 * Decodes one value of a 16-, 8- or 4-bit float type (F16, BF16, F8E5M2,
 * F8E4M3FN, F8E4M3B11FNUZ, F8E5M2FNUZ, F8E4M3FNUZ, F8E4M3, F8E3M4, F8E8M0FNU,
 * F4E2M1FN) from its bit pattern; exact. Bits above the format's width are
 * ignored. Any NaN pattern gives `NaN`.
 *
 * @example
 * ```ts
 * import { bitsToFloat, DataType } from "@deno-xla/ffi";
 * console.log(bitsToFloat(DataType.F8E4M3FN, 0x7e)); // 448
 * console.log(bitsToFloat(DataType.BF16, 0x3fc0)); // 1.5
 * ```
 */
export function bitsToFloat(dt: DataType | number, bits: number): number {
  const f = _format(dt);
  if (f.ebits + f.mbits < 8) {
    f.decodeTable ??= _table(f);
    return f.decodeTable[bits & 0xff] as number;
  }
  return _decode(f, bits);
}

function _table(f: _Format): Float64Array {
  const t = new Float64Array(256);
  for (let i = 0; i < 256; i++) t[i] = _decode(f, i);
  return t;
}

/**
 * Encodes a number as the bit pattern of a 16-, 8- or 4-bit float type,
 * rounding once to nearest, ties to even, with the special-value rules of
 * the module doc (ml_dtypes' non-saturating defaults).
 *
 * @example
 * ```ts
 * import { DataType, floatToBits } from "@deno-xla/ffi";
 * console.log(floatToBits(DataType.F8E4M3FN, 1.0).toString(16)); // "38"
 * console.log(floatToBits(DataType.F8E4M3FN, 1000).toString(16)); // "7f" (NaN)
 * console.log(floatToBits(DataType.F4E2M1FN, 100)); // 7 (saturates to 6)
 * ```
 */
export function floatToBits(dt: DataType | number, value: number): number {
  return _encode(_format(dt), +value);
}

/**
 * Decodes a whole buffer of a 16-, 8- or 4-bit float type into numbers
 * (into `out` if given, which must be at least as long).
 *
 * @example
 * ```ts
 * import { DataType, decodeFloats } from "@deno-xla/ffi";
 * console.log(decodeFloats(DataType.F8E5M2, new Uint8Array([0x3c, 0x7c]))); // [ 1, Infinity ]
 * ```
 */
export function decodeFloats(
  dt: DataType | number,
  raw: Uint8Array | Uint16Array,
  out?: Float32Array | Float64Array,
): Float32Array | Float64Array {
  const f = _format(dt);
  const result = out ?? new Float64Array(raw.length);
  if (result.length < raw.length) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Output holds ${result.length} values but ${raw.length} are to be decoded`,
    );
  }
  if (f.ebits + f.mbits < 8) {
    const t = f.decodeTable ??= _table(f);
    for (let i = 0; i < raw.length; i++) result[i] = t[(raw[i] as number) & 0xff] as number;
  } else {
    for (let i = 0; i < raw.length; i++) result[i] = _decode(f, raw[i] as number);
  }
  return result;
}

/**
 * Encodes numbers as a buffer of a 16-, 8- or 4-bit float type:
 * `Uint16Array` for F16/BF16, `Uint8Array` otherwise (or into `out`).
 *
 * @example
 * ```ts
 * import { DataType, encodeFloats } from "@deno-xla/ffi";
 * console.log(encodeFloats(DataType.BF16, [1, -2])); // Uint16Array(2) [ 16256, 49152 ]
 * ```
 */
export function encodeFloats(
  dt: DataType | number,
  values: ArrayLike<number>,
  out?: Uint8Array | Uint16Array,
): Uint8Array | Uint16Array {
  const f = _format(dt);
  const result = out ??
    (f.ebits + f.mbits > 8 ? new Uint16Array(values.length) : new Uint8Array(values.length));
  if (result.length < values.length) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Output holds ${result.length} values but ${values.length} are to be encoded`,
    );
  }
  for (let i = 0; i < values.length; i++) result[i] = _encode(f, +(values[i] as number));
  return result;
}
