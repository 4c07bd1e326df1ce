/**
 * Minimal private DataType facts the handler path needs: names as ffi.h
 * prints them, byte widths, and the TypedArray of host memory per dtype.
 *
 * @module
 */
import { DataType } from "../abi/enums.ts";

/** Upper-case dtype name as ffi.h prints it (`F32`, `S32`, …). */
export function dtypeName(dtype: number): string {
  return DataType[dtype] ?? `UNKNOWN(${dtype})`;
}

const WIDTH: Record<number, number> = {
  [DataType.PRED]: 1,
  [DataType.S8]: 1,
  [DataType.S16]: 2,
  [DataType.S32]: 4,
  [DataType.S64]: 8,
  [DataType.U8]: 1,
  [DataType.U16]: 2,
  [DataType.U32]: 4,
  [DataType.U64]: 8,
  [DataType.F16]: 2,
  [DataType.F32]: 4,
  [DataType.F64]: 8,
  [DataType.C64]: 8,
  [DataType.BF16]: 2,
  [DataType.C128]: 16,
};

/** ffi.h ByteWidth: 0 for INVALID and TOKEN, 1 for sub-byte and 8-bit float types. */
export function dtypeWidth(dtype: number): number {
  const w = WIDTH[dtype];
  if (w !== undefined) return w;
  return dtype >= 19 && dtype <= 33 ? 1 : 0;
}

/** The TypedArray type of host memory of a dtype. */
export type TypedArrayOf<D extends DataType> = D extends DataType.PRED | DataType.U8 ? Uint8Array
  : D extends DataType.S8 ? Int8Array
  : D extends DataType.S16 ? Int16Array
  : D extends DataType.S32 ? Int32Array
  : D extends DataType.S64 ? BigInt64Array
  : D extends DataType.U16 | DataType.BF16 ? Uint16Array
  : D extends DataType.U32 ? Uint32Array
  : D extends DataType.U64 ? BigUint64Array
  : D extends DataType.F16 ? Float16Array
  : D extends DataType.F32 | DataType.C64 ? Float32Array
  : D extends DataType.F64 | DataType.C128 ? Float64Array
  : AnyTypedArray;

/** Any TypedArray a buffer view can be. */
export type AnyTypedArray =
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

/** Makes the TypedArray view of `byteLength` bytes of `buffer` for a dtype. */
export function typedView(dtype: number, buffer: ArrayBuffer, byteLength: number): AnyTypedArray {
  switch (dtype) {
    case DataType.S8:
      return new Int8Array(buffer, 0, byteLength);
    case DataType.S16:
      return new Int16Array(buffer, 0, byteLength >> 1);
    case DataType.S32:
      return new Int32Array(buffer, 0, byteLength >> 2);
    case DataType.S64:
      return new BigInt64Array(buffer, 0, byteLength >> 3);
    case DataType.U16:
    case DataType.BF16:
      return new Uint16Array(buffer, 0, byteLength >> 1);
    case DataType.U32:
      return new Uint32Array(buffer, 0, byteLength >> 2);
    case DataType.U64:
      return new BigUint64Array(buffer, 0, byteLength >> 3);
    case DataType.F16:
      return new Float16Array(buffer, 0, byteLength >> 1);
    case DataType.F32:
    case DataType.C64:
      return new Float32Array(buffer, 0, byteLength >> 2);
    case DataType.F64:
    case DataType.C128:
      return new Float64Array(buffer, 0, byteLength >> 3);
    default:
      return new Uint8Array(buffer, 0, byteLength);
  }
}
