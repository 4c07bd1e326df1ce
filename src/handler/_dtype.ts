/**
 * DataType facts for the handler hot path, as plain arrays indexed by the
 * dtype number, built once at module load from the shared tables in
 * `src/abi/dtype.ts` (names as ffi.h prints them, byte widths, the TypedArray
 * that views host memory).
 *
 * @module
 */
import type { DataType } from "../abi/enums.ts";
import {
  allDataTypes,
  byteWidth,
  type DataTypedArray,
  type DataTypedArrayConstructor,
  dataTypeName,
  typedArrayFor,
} from "../abi/dtype.ts";

const NAMES: string[] = [];
const WIDTHS: number[] = [];
const VIEWS: DataTypedArrayConstructor[] = [];
for (const dt of allDataTypes()) {
  NAMES[dt] = dataTypeName(dt);
  WIDTHS[dt] = byteWidth(dt);
  VIEWS[dt] = typedArrayFor(dt) ?? Uint8Array;
}

/** Upper-case dtype name as ffi.h prints it (`F32`, `S32`, …). */
export function dtypeName(dtype: number): string {
  return NAMES[dtype] ?? `UNKNOWN(${dtype})`;
}

/** ffi.h ByteWidth: 0 for INVALID and TOKEN, 1 for sub-byte and 8-bit float types. */
export function dtypeWidth(dtype: number): number {
  return WIDTHS[dtype] ?? 0;
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

/** Any TypedArray a buffer view can be (the shared `DataTypedArray`). */
export type AnyTypedArray = DataTypedArray;

/** Makes the TypedArray view of `byteLength` bytes of `buffer` for a dtype. */
export function typedView(dtype: number, buffer: ArrayBuffer, byteLength: number): AnyTypedArray {
  const View = VIEWS[dtype] ?? Uint8Array;
  return new View(buffer, 0, byteLength / View.BYTES_PER_ELEMENT);
}
