/**
 * Decoding of flattened attribute records (layout in native/handler_flatten.c).
 *
 * @module
 */
import { AttrType, attrTypeName, DataType } from "../abi/enums.ts";
import { dtypeName, dtypeWidth } from "./_dtype.ts";
import { type Dictionary, dictionaryOfRecord } from "./buffer.ts";
import { copyWords } from "./_flat.ts";

/** What a bound attribute expects. */
export interface AttrSpec {
  type: AttrType;
  dtype: number;
  pointer: boolean;
  allowed?: readonly number[];
  /** 64-bit integers as bigint (kinds `i64n`, `u64n` and their arrays). */
  big?: boolean;
}

/** A 64-bit integer that a JS number cannot hold exactly: a decode failure naming the value. */
function inexact(dv: DataView, o: number, dtype: number): DecodeFailure {
  const exact = dtype === DataType.U64 ? dv.getBigUint64(o, true) : dv.getBigInt64(o, true);
  const kind = dtype === DataType.U64 ? "u64n" : "i64n";
  return new DecodeFailure(
    `Attribute value ${exact} does not fit a JS number exactly; bind it as '${kind}' for a bigint`,
  );
}

function isWide(dtype: number): boolean {
  return dtype === DataType.S64 || dtype === DataType.U64;
}

function readBig(dv: DataView, o: number, dtype: number): bigint {
  return dtype === DataType.U64 ? dv.getBigUint64(o, true) : dv.getBigInt64(o, true);
}

/** A decode diagnostic (allocated only on failure). */
export class DecodeFailure {
  constructor(readonly message: string) {}
}

const decoder = new TextDecoder();

/** Reads `len` bytes at byte offset `o` as a string (ASCII fast path). */
export function readString(dv: DataView, o: number, len: number): string {
  let s = "";
  for (let i = 0; i < len; i++) {
    const c = dv.getUint8(o + i);
    if (c >= 0x80) {
      return decoder.decode(new Uint8Array(dv.buffer, dv.byteOffset + o, len));
    }
    s += String.fromCharCode(c);
  }
  return s;
}

/** Name of the attribute record at `o`. */
export function readName(dv: DataView, o: number): string {
  return readString(dv, o + 16, dv.getInt32(o + 8, true));
}

/** Byte offset of the value part of the attribute record at `o`. */
export function valueOffset(dv: DataView, o: number): number {
  return o + 16 + ((dv.getInt32(o + 8, true) + 7) & ~7);
}

/** Reads one element of dtype at byte offset `o` as a JS number (or boolean for PRED). */
export function readScalar(dv: DataView, o: number, dtype: number): number | boolean {
  switch (dtype) {
    case DataType.PRED:
      return dv.getUint8(o) !== 0;
    case DataType.S8:
      return dv.getInt8(o);
    case DataType.S16:
      return dv.getInt16(o, true);
    case DataType.S32:
      return dv.getInt32(o, true);
    case DataType.S64:
      return dv.getUint32(o, true) + dv.getInt32(o + 4, true) * 4294967296;
    case DataType.U8:
      return dv.getUint8(o);
    case DataType.U16:
      return dv.getUint16(o, true);
    case DataType.U32:
      return dv.getUint32(o, true);
    case DataType.U64:
      return dv.getUint32(o, true) + dv.getUint32(o + 4, true) * 4294967296;
    case DataType.F16:
      return dv.getFloat16(o, true);
    case DataType.F32:
      return dv.getFloat32(o, true);
    case DataType.F64:
      return dv.getFloat64(o, true);
    default:
      return NaN;
  }
}

/** Offsets of `count` consecutive attribute records starting at `o`. */
export function recordOffsets(dv: DataView, o: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    out[i] = o;
    o += dv.getInt32(o + 4, true) * 8;
  }
  return out;
}

/** A Dictionary over a private copy of the dictionary record at `o`. */
export function dictionaryAt(dv: DataView, o: number): Dictionary {
  return dictionaryOfRecord(copyWords(dv, o, 2 * dv.getInt32(o + 4, true)), 0);
}

/** The value of the attribute record at `o` checked against `spec`. */
export function attrRecordValue(dv: DataView, o: number, spec: AttrSpec): unknown {
  const type = dv.getInt32(o, true);
  if (spec.pointer) {
    const v = valueOffset(dv, o);
    if (type !== AttrType.SCALAR || dv.getInt32(v, true) !== DataType.S64) {
      return new DecodeFailure(
        `Wrong attribute type: expected i64 scalar for passing pointer but got ${
          type === AttrType.SCALAR ? dtypeName(dv.getInt32(v, true)) : attrTypeName(type)
        }`,
      );
    }
    return readScalar(dv, v + 8, DataType.S64);
  }
  if (type !== spec.type) {
    return new DecodeFailure(
      `Wrong attribute type: expected ${attrTypeName(spec.type)} but got ${attrTypeName(type)}`,
    );
  }
  const v = valueOffset(dv, o);
  switch (type) {
    case AttrType.SCALAR: {
      const dt = dv.getInt32(v, true);
      if (dt !== spec.dtype) {
        return new DecodeFailure(
          `Wrong scalar data type: expected ${dtypeName(spec.dtype)} but got ${dtypeName(dt)}`,
        );
      }
      if (spec.big) return readBig(dv, v + 8, dt);
      const value = readScalar(dv, v + 8, dt);
      if (isWide(dt) && !Number.isSafeInteger(value)) return inexact(dv, v + 8, dt);
      if (spec.allowed !== undefined && !spec.allowed.includes(value as number)) {
        return new DecodeFailure(
          `Wrong enum value: ${value} is not one of ${spec.allowed.join(", ")}`,
        );
      }
      return value;
    }
    case AttrType.ARRAY: {
      const dt = dv.getInt32(v, true);
      if (dt !== spec.dtype) {
        return new DecodeFailure(
          `Wrong array data type: expected ${dtypeName(spec.dtype)} but got ${dtypeName(dt)}`,
        );
      }
      if (spec.big) return readBigArray(dv, v);
      if (isWide(dt)) {
        const n = dv.getInt32(v + 4, true);
        for (let i = 0; i < n; i++) {
          if (!Number.isSafeInteger(readScalar(dv, v + 8 + i * 8, dt))) {
            return inexact(dv, v + 8 + i * 8, dt);
          }
        }
      }
      return readArray(dv, v);
    }
    case AttrType.STRING:
      return readString(dv, v + 8, dv.getInt32(v, true));
    case AttrType.DICTIONARY:
      return dictionaryAt(dv, o);
    default:
      return new DecodeFailure(`Unsupported attribute type ${type}`);
  }
}

/** The elements of the array value at `v` as bigints. */
export function readBigArray(dv: DataView, v: number): bigint[] {
  const dt = dv.getInt32(v, true);
  const n = dv.getInt32(v + 4, true);
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = readBig(dv, v + 8 + i * 8, dt);
  return out;
}

/** The elements of the array value at `v`; 64-bit ones outside the safe range as bigint. */
export function readArray(dv: DataView, v: number): unknown[] {
  const dt = dv.getInt32(v, true);
  const n = dv.getInt32(v + 4, true);
  const w = dtypeWidth(dt);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = readExact(dv, v + 8 + i * w, dt);
  return out;
}

/** A scalar as a number, or as a bigint when a 64-bit value does not fit a number exactly. */
function readExact(dv: DataView, o: number, dtype: number): number | boolean | bigint {
  const value = readScalar(dv, o, dtype);
  return isWide(dtype) && !Number.isSafeInteger(value) ? readBig(dv, o, dtype) : value;
}

/** The value of the attribute record at `o` in its natural JS type. */
export function naturalAttrValue(dv: DataView, o: number): unknown {
  const type = dv.getInt32(o, true);
  const v = valueOffset(dv, o);
  switch (type) {
    case AttrType.SCALAR:
      return readExact(dv, v + 8, dv.getInt32(v, true));
    case AttrType.ARRAY:
      return readArray(dv, v);
    case AttrType.STRING:
      return readString(dv, v + 8, dv.getInt32(v, true));
    case AttrType.DICTIONARY:
      return dictionaryAt(dv, o);
    default:
      return undefined;
  }
}
