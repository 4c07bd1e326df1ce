/**
 * Readers for every struct of the XLA FFI C ABI, built on
 * `Deno.UnsafePointerView` and the layout tables of `layout.ts`. They return
 * plain objects whose keys are the C field names; embedded structs are read
 * recursively, a `ByteSpan` becomes a string, attribute scalars and arrays
 * become typed values (bigint for 64-bit integers, typed-array copies for
 * arrays).
 *
 * These are the complete, validating readers for inspection and tools: each
 * field costs one `UnsafePointerView` read (60–90 ns), so they are not meant
 * for the per-call hot path of a handler.
 *
 * Every reader validates what it reads and throws {@link FfiError} with
 * {@link ErrorCode.INVALID_ARGUMENT} in the message shapes of XLA's `ffi.h`
 * (e.g. `Unexpected XLA_FFI_Buffer size: expected at least 48 got 16. Check
 * installed software versions.`; for the call frame, as `ffi.h` words it,
 * `Unexpected XLA_FFI_CallFrame size: expected 168 got 120. …`, although a
 * larger frame is accepted) on: a null pointer, a `struct_size`
 * smaller than the layout needs, a negative or too large rank, count or size,
 * and an unknown enum value. The upper limits are {@link READ_LIMITS}; they
 * keep a garbage frame from making a reader allocate gigabytes.
 *
 * @module
 */
import {
  ArgType,
  AttrType,
  DataType,
  ErrorCode,
  ExecutionStage,
  ExtensionType,
  RetType,
} from "./enums.ts";
import { FfiError } from "../errors.ts";
import { byteWidth, type DataTypedArray, typedArrayFor } from "./dtype.ts";
import {
  API,
  API_SLOTS_V0_5,
  API_VERSION,
  ARGS,
  ARRAY,
  ATTRS,
  BUFFER,
  BYTE_SPAN,
  CALL_FRAME,
  DEVICE_MEMORY_ALLOCATE_ARGS,
  DEVICE_MEMORY_FREE_ARGS,
  DEVICE_ORDINAL_GET_ARGS,
  type EmbeddedLayouts,
  ERROR_CREATE_ARGS,
  ERROR_DESTROY_ARGS,
  ERROR_GET_CODE_ARGS,
  ERROR_GET_MESSAGE_ARGS,
  EXECUTION_CONTEXT_GET_ARGS,
  EXTENSION_BASE,
  type FieldLayout,
  type FieldType,
  FUTURE_CREATE_ARGS,
  FUTURE_SET_AVAILABLE_ARGS,
  FUTURE_SET_ERROR_ARGS,
  HANDLER_BUNDLE,
  HANDLER_REGISTER_ARGS,
  METADATA,
  METADATA_EXTENSION,
  METADATA_V0_2,
  RETS,
  RUN_ID_GET_ARGS,
  SCALAR,
  STATE_GET_ARGS,
  STATE_GET_ARGS_V0_3,
  STATE_SET_ARGS,
  STATE_SET_ARGS_V0_2,
  STATE_SET_ARGS_V0_3,
  STREAM_GET_ARGS,
  type StructLayout,
  THREAD_POOL_NUM_THREADS_ARGS,
  THREAD_POOL_SCHEDULE_ARGS,
  TYPE_ID,
  TYPE_ID_REGISTER_ARGS,
  TYPE_INFO_V0_2,
  TYPE_REGISTER_ARGS_V0_2,
} from "./layout.ts";

/**
 * Upper limits the readers enforce (anything larger is treated as a corrupt
 * struct): buffer rank ≤ 1024; arguments, results and attributes per frame or
 * dictionary ≤ 65 536; array attribute ≤ 16 777 216 elements (≤ 256 MiB for
 * C128); string or name ≤ 16 MiB; dictionary nesting ≤ 64 levels.
 *
 * @example
 * ```ts
 * import { READ_LIMITS } from "@deno-xla/ffi/abi";
 * console.log(READ_LIMITS.maxRank); // 1024
 * ```
 */
export const READ_LIMITS: Readonly<{
  /** Largest buffer rank. */
  maxRank: number;
  /** Most arguments, results or attributes in one list. */
  maxCount: number;
  /** Most elements of an array attribute. */
  maxArrayElements: number;
  /** Longest string or name, in bytes. */
  maxStringBytes: number;
  /** Deepest dictionary nesting. */
  maxDepth: number;
}> = Object.freeze({
  maxRank: 1024,
  maxCount: 65536,
  maxArrayElements: 16 * 1024 * 1024,
  maxStringBytes: 16 * 1024 * 1024,
  maxDepth: 64,
});

// ---------------------------------------------------------------------------
// Value types
// ---------------------------------------------------------------------------

const NESTED = {
  XLA_FFI_Api_Version: API_VERSION,
  XLA_FFI_Handler_Bundle: HANDLER_BUNDLE,
  XLA_FFI_Extension_Base: EXTENSION_BASE,
  XLA_FFI_Args: ARGS,
  XLA_FFI_Rets: RETS,
  XLA_FFI_Attrs: ATTRS,
} as const;

/** The JS value a field of C type `T` reads as. */
export type FieldValue<T extends FieldType, K = string> = K extends "struct_size" ? number
  : T extends "size_t" | "int64" | "XLA_FFI_TypeId" ? bigint
  : T extends "int32" | "uint32" | "enum" ? number
  : T extends "ptr" | "fnptr" ? Deno.PointerValue
  : T extends "XLA_FFI_ByteSpan" ? string
  : T extends keyof EmbeddedLayouts ? StructValue<EmbeddedLayouts[T]>
  : never;

/**
 * The plain object a struct reads as: one key per C field (see
 * {@link FieldValue} for the value types).
 */
export type StructValue<L extends StructLayout> = {
  -readonly [K in keyof L["fields"]]: L["fields"][K] extends FieldLayout
    ? FieldValue<L["fields"][K]["type"], K>
    : never;
};

/** Typed value of a scalar attribute. Complex scalars read as `[re, im]`. */
export type ScalarValue = boolean | number | bigint | [number, number] | Uint8Array;

/** Typed-array copy of an array attribute's elements. */
export type ArrayValue = DataTypedArray;

/** One attribute of a frame or dictionary, in frame order. */
export type AttrEntry =
  | { name: string; type: AttrType.SCALAR; dtype: DataType; value: ScalarValue }
  | { name: string; type: AttrType.ARRAY; dtype: DataType; value: ArrayValue }
  | { name: string; type: AttrType.STRING; value: string }
  | { name: string; type: AttrType.DICTIONARY; value: AttrEntry[] };

/** A buffer argument or result (a token is a buffer of dtype TOKEN). */
export interface BufferValue {
  /** The `XLA_FFI_Buffer`'s own struct_size. */
  struct_size: number;
  /** Its extension chain (normally null). */
  extension_start: Deno.PointerValue;
  /** Element type. */
  dtype: DataType;
  /** Data pointer (null for tokens). */
  data: Deno.PointerValue;
  /** Number of dimensions. */
  rank: number;
  /** Dimensions (a copy). */
  dims: number[];
  /** True when `dtype` is TOKEN. */
  token: boolean;
}

/** An argument (`XLA_FFI_ArgType`) with its buffer. */
export interface ArgValue extends BufferValue {
  /** The argument type (always BUFFER in ABI 0.1). */
  type: ArgType;
}

/** A result (`XLA_FFI_RetType`) with its buffer. */
export interface RetValue extends BufferValue {
  /** The result type (always BUFFER in ABI 0.1). */
  type: RetType;
}

/** A fully read `XLA_FFI_CallFrame`. */
export interface CallFrameValue {
  /** Declared struct_size (168 for ABI 0.1). */
  struct_size: number;
  /** Extension chain (e.g. a metadata extension), else null. */
  extension_start: Deno.PointerValue;
  /** `const XLA_FFI_Api*`. */
  api: Deno.PointerValue;
  /** `XLA_FFI_ExecutionContext*`. */
  ctx: Deno.PointerValue;
  /** Execution stage. */
  stage: ExecutionStage;
  /** Arguments in order. */
  args: ArgValue[];
  /** Results in order. */
  rets: RetValue[];
  /** Attributes in frame order (sorted by name in well-formed frames). */
  attrs: AttrEntry[];
  /** The `future` out field at offset 168. */
  future: Deno.PointerValue;
}

/** `XLA_FFI_Api`: version, internal API and every function slot present. */
export interface ApiValue {
  /** Declared struct_size (192 for 0.1–0.3, 200 from 0.4 on, with Error_GetCode). */
  struct_size: number;
  /** Extension chain. */
  extension_start: Deno.PointerValue;
  /** The runtime's API version. */
  api_version: StructValue<typeof API_VERSION>;
  /** Opaque internal API (same-build handlers only). */
  internal_api: Deno.PointerValue;
  /**
   * Function pointers by slot name; slots beyond the declared struct_size are
   * absent (`undefined`).
   */
  functions: Partial<Record<(typeof API_SLOTS_V0_5)[number], Deno.PointerValue>>;
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

function _invalid(message: string): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

function _view(ptr: Deno.PointerValue, name: string): Deno.UnsafePointerView {
  if (ptr === null) throw _invalid(`Unexpected null ${name} pointer`);
  return new Deno.UnsafePointerView(ptr);
}

function _checkSize(actual: number, expected: number, name: string): void {
  if (actual < expected) {
    throw _invalid(
      `Unexpected ${name} size: expected ${
        name === CALL_FRAME.name ? "" : "at least "
      }${expected} got ${actual}. Check installed software versions.`,
    );
  }
}

function _count(value: bigint, limit: number, what: string, struct: string): number {
  if (value < 0n || value > BigInt(limit)) {
    throw _invalid(`Unexpected ${what} in ${struct}: expected 0..${limit} got ${value}`);
  }
  return Number(value);
}

function _structSize(v: Deno.UnsafePointerView, off: number, layout: StructLayout): number {
  const raw = v.getBigUint64(off);
  const size = raw > 0xffffffffn ? Number.MAX_SAFE_INTEGER : Number(raw);
  if (layout.structSize !== null) _checkSize(size, layout.structSize, layout.name);
  return size;
}

function _enum(value: number, e: Record<number, string>, enumName: string, where: string): number {
  if (e[value] === undefined) throw _invalid(`Unexpected ${enumName} value ${value} in ${where}`);
  return value;
}

const _decoder = new TextDecoder();

function _string(ptr: Deno.PointerValue, len: bigint, where: string): string {
  const n = _count(len, READ_LIMITS.maxStringBytes, "string length", where);
  if (n === 0) return "";
  if (ptr === null) throw _invalid(`Unexpected null string data with length ${n} in ${where}`);
  const bytes = new Uint8Array(n);
  new Deno.UnsafePointerView(ptr).copyInto(bytes);
  return _decoder.decode(bytes);
}

function _readField(
  v: Deno.UnsafePointerView,
  base: number,
  key: string,
  f: FieldLayout,
  owner: string,
): unknown {
  const off = base + f.offset;
  switch (f.type) {
    case "size_t":
      return key === "struct_size" ? Number(v.getBigUint64(off)) : v.getBigUint64(off);
    case "int64":
    case "XLA_FFI_TypeId":
      return v.getBigInt64(off);
    case "int32":
      return v.getInt32(off);
    case "uint32":
    case "enum":
      return v.getUint32(off);
    case "ptr":
    case "fnptr":
      return v.getPointer(off);
    case "XLA_FFI_ByteSpan":
      return _string(v.getPointer(off), v.getBigUint64(off + 8), `${owner}.${key}`);
    default:
      return _readInto(v, off, NESTED[f.type]);
  }
}

function _readInto<L extends StructLayout>(
  v: Deno.UnsafePointerView,
  base: number,
  layout: L,
): StructValue<L> {
  const out: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(layout.fields)) {
    out[key] = _readField(v, base, key, f, layout.name);
  }
  return out as StructValue<L>;
}

/**
 * Reads any struct of the ABI with its layout: every field of the layout
 * (the layout chooses the version), after checking the pointer and that the
 * declared `struct_size` is at least the layout's STRUCT_SIZE. Embedded
 * structs are read recursively; pointers are returned as pointers.
 *
 * @example
 * ```ts
 * import { readStruct, RUN_ID_GET_ARGS, writeStruct } from "@deno-xla/ffi/abi";
 * const bytes = new Uint8Array(RUN_ID_GET_ARGS.sizeof);
 * writeStruct(RUN_ID_GET_ARGS, bytes, 0, { ctx: null, run_id: 42n });
 * const args = readStruct(RUN_ID_GET_ARGS, Deno.UnsafePointer.of(bytes));
 * console.log(args.struct_size, args.run_id); // 32 42n
 * ```
 */
export function readStruct<L extends StructLayout>(
  layout: L,
  ptr: Deno.PointerValue,
): StructValue<L> {
  const v = _view(ptr, layout.name);
  if ("struct_size" in layout.fields) _structSize(v, 0, layout);
  return _readInto(v, 0, layout);
}

// ---------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------

/** Byte width of an attribute element (1 for the 8-bit float and sub-byte types). */
function _attrWidth(dtype: DataType, where: string): number {
  if (dtype === DataType.INVALID || dtype === DataType.TOKEN) {
    throw _invalid(`Unexpected XLA_FFI_DataType ${DataType[dtype]} in ${where}`);
  }
  return byteWidth(dtype);
}

const _scratch = new DataView(new ArrayBuffer(8));

function _dtype(value: number, where: string): DataType {
  return _enum(value, DataType, "XLA_FFI_DataType", where) as DataType;
}

/**
 * Reads the value an `XLA_FFI_Scalar` points to, typed by its dtype: PRED →
 * boolean; S8…S32, U8…U32, F16, BF16, F32, F64 → number; S64, U64 → bigint;
 * C64, C128 → `[re, im]`; the 8-bit float and sub-byte types → a 1-byte
 * `Uint8Array` copy of the raw bits.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readScalar, writeScalar } from "@deno-xla/ffi/abi";
 * const value = new Float64Array([2.5]);
 * const bytes = new Uint8Array(16);
 * writeScalar(bytes, 0, { dtype: DataType.F64, value: Deno.UnsafePointer.of(value) });
 * console.log(readScalar(Deno.UnsafePointer.of(bytes))); // { dtype: 12, value: 2.5 }
 * ```
 */
export function readScalar(ptr: Deno.PointerValue): { dtype: DataType; value: ScalarValue } {
  const v = _view(ptr, SCALAR.name);
  const dtype = _dtype(v.getUint32(SCALAR.fields.dtype.offset), SCALAR.name);
  const width = _attrWidth(dtype, SCALAR.name);
  const p = v.getPointer(SCALAR.fields.value.offset);
  const d = _view(p, "XLA_FFI_Scalar value");
  let value: ScalarValue;
  switch (dtype) {
    case DataType.PRED:
      value = d.getUint8() !== 0;
      break;
    case DataType.S8:
      value = d.getInt8();
      break;
    case DataType.S16:
      value = d.getInt16();
      break;
    case DataType.S32:
      value = d.getInt32();
      break;
    case DataType.S64:
      value = d.getBigInt64();
      break;
    case DataType.U8:
      value = d.getUint8();
      break;
    case DataType.U16:
      value = d.getUint16();
      break;
    case DataType.U32:
      value = d.getUint32();
      break;
    case DataType.U64:
      value = d.getBigUint64();
      break;
    case DataType.F16:
      _scratch.setUint16(0, d.getUint16(), true);
      value = _scratch.getFloat16(0, true);
      break;
    case DataType.BF16:
      _scratch.setUint32(0, d.getUint16() << 16, true);
      value = _scratch.getFloat32(0, true);
      break;
    case DataType.F32:
      value = d.getFloat32();
      break;
    case DataType.F64:
      value = d.getFloat64();
      break;
    case DataType.C64:
      value = [d.getFloat32(0), d.getFloat32(4)];
      break;
    case DataType.C128:
      value = [d.getFloat64(0), d.getFloat64(8)];
      break;
    default: {
      const raw = new Uint8Array(width);
      d.copyInto(raw);
      value = raw;
    }
  }
  return { dtype, value };
}

/** The elements of an attribute array (dtype neither INVALID nor TOKEN), viewed as its dtype. */
function _typedArray(dtype: DataType, buf: ArrayBuffer): ArrayValue {
  return new (typedArrayFor(dtype) ?? Uint8Array)(buf);
}

/**
 * Reads an `XLA_FFI_Array` into a typed-array copy of its elements: S8…S64 →
 * Int8Array…BigInt64Array, U8…U64 → Uint8Array…BigUint64Array, F16 →
 * Float16Array, BF16 → Uint16Array (raw bits), F32/F64 → Float32Array/
 * Float64Array, C64/C128 → interleaved re/im Float32Array/Float64Array,
 * PRED and other 1-byte types → Uint8Array.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readArray, writeArray } from "@deno-xla/ffi/abi";
 * const data = new Int32Array([1, 2, 3]);
 * const bytes = new Uint8Array(24);
 * writeArray(bytes, 0, { dtype: DataType.S32, size: 3, data: Deno.UnsafePointer.of(data) });
 * console.log(readArray(Deno.UnsafePointer.of(bytes)).value); // Int32Array(3) [ 1, 2, 3 ]
 * ```
 */
export function readArray(ptr: Deno.PointerValue): { dtype: DataType; value: ArrayValue } {
  const v = _view(ptr, ARRAY.name);
  const dtype = _dtype(v.getUint32(ARRAY.fields.dtype.offset), ARRAY.name);
  const width = _attrWidth(dtype, ARRAY.name);
  const n = _count(
    v.getBigUint64(ARRAY.fields.size.offset),
    READ_LIMITS.maxArrayElements,
    "array size",
    ARRAY.name,
  );
  const buf = new ArrayBuffer(n * width);
  if (n > 0) {
    const data = v.getPointer(ARRAY.fields.data.offset);
    if (data === null) throw _invalid(`Unexpected null data with size ${n} in ${ARRAY.name}`);
    new Deno.UnsafePointerView(data).copyInto(new Uint8Array(buf));
  }
  return { dtype, value: _typedArray(dtype, buf) };
}

/**
 * Reads an `XLA_FFI_ByteSpan` as a UTF-8 string.
 *
 * @example
 * ```ts
 * import { readByteSpan, writeByteSpan } from "@deno-xla/ffi/abi";
 * const text = new TextEncoder().encode("hello");
 * const bytes = new Uint8Array(16);
 * writeByteSpan(bytes, 0, { ptr: Deno.UnsafePointer.of(text), len: text.length });
 * console.log(readByteSpan(Deno.UnsafePointer.of(bytes))); // "hello"
 * ```
 */
export function readByteSpan(ptr: Deno.PointerValue): string {
  const v = _view(ptr, BYTE_SPAN.name);
  return _string(
    v.getPointer(BYTE_SPAN.fields.ptr.offset),
    v.getBigUint64(BYTE_SPAN.fields.len.offset),
    BYTE_SPAN.name,
  );
}

function _attrsAt(v: Deno.UnsafePointerView, base: number, depth: number): AttrEntry[] {
  if (depth > READ_LIMITS.maxDepth) {
    throw _invalid(`Unexpected dictionary nesting deeper than ${READ_LIMITS.maxDepth} levels`);
  }
  const f = ATTRS.fields;
  _structSize(v, base, ATTRS);
  const n = _count(v.getBigInt64(base + f.size.offset), READ_LIMITS.maxCount, "size", ATTRS.name);
  const out: AttrEntry[] = [];
  if (n === 0) return out;
  const types = _view(v.getPointer(base + f.types.offset), "XLA_FFI_Attrs types");
  const names = _view(v.getPointer(base + f.names.offset), "XLA_FFI_Attrs names");
  const attrs = _view(v.getPointer(base + f.attrs.offset), "XLA_FFI_Attrs attrs");
  for (let i = 0; i < n; i++) {
    const where = `XLA_FFI_Attrs attribute ${i}`;
    const type = _enum(types.getUint32(i * 4), AttrType, "XLA_FFI_AttrType", where) as AttrType;
    const name = readByteSpan(names.getPointer(i * 8));
    const p = attrs.getPointer(i * 8);
    switch (type) {
      case AttrType.SCALAR: {
        const s = readScalar(p);
        out.push({ name, type, dtype: s.dtype, value: s.value });
        break;
      }
      case AttrType.ARRAY: {
        const a = readArray(p);
        out.push({ name, type, dtype: a.dtype, value: a.value });
        break;
      }
      case AttrType.STRING:
        out.push({ name, type, value: readByteSpan(p) });
        break;
      case AttrType.DICTIONARY:
        out.push({ name, type, value: _attrsAt(_view(p, ATTRS.name), 0, depth + 1) });
        break;
    }
  }
  return out;
}

/**
 * Reads an `XLA_FFI_Attrs` (a frame's attributes or a dictionary) into
 * entries in frame order; dictionaries are read recursively.
 *
 * @example
 * ```ts
 * import { AttrType, readAttrs, writeAttrs, writeByteSpan } from "@deno-xla/ffi/abi";
 * const [name, value] = [new TextEncoder().encode("mode"), new TextEncoder().encode("fast")];
 * const spans = new Uint8Array(32);
 * writeByteSpan(spans, 0, { ptr: Deno.UnsafePointer.of(name), len: name.length });
 * writeByteSpan(spans, 16, { ptr: Deno.UnsafePointer.of(value), len: value.length });
 * const base = Deno.UnsafePointer.value(Deno.UnsafePointer.of(spans));
 * const names = new BigUint64Array([base]);
 * const values = new BigUint64Array([base + 16n]);
 * const types = new Uint32Array([AttrType.STRING]);
 * const b = new Uint8Array(48);
 * writeAttrs(b, 0, {
 *   size: 1,
 *   types: Deno.UnsafePointer.of(types),
 *   names: Deno.UnsafePointer.of(names),
 *   attrs: Deno.UnsafePointer.of(values),
 * });
 * console.log(readAttrs(Deno.UnsafePointer.of(b))); // [ { name: "mode", type: 4, value: "fast" } ]
 * ```
 */
export function readAttrs(ptr: Deno.PointerValue): AttrEntry[] {
  return _attrsAt(_view(ptr, ATTRS.name), 0, 0);
}

// ---------------------------------------------------------------------------
// Buffers, args, rets
// ---------------------------------------------------------------------------

/**
 * Reads an `XLA_FFI_Buffer`: dtype, data pointer, rank and a copy of the dims.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readBuffer, writeBuffer } from "@deno-xla/ffi/abi";
 * const dims = new BigInt64Array([2n, 3n]);
 * const bytes = new Uint8Array(48);
 * writeBuffer(bytes, 0, {
 *   dtype: DataType.F32, data: null, rank: 2, dims: Deno.UnsafePointer.of(dims),
 * });
 * const b = readBuffer(Deno.UnsafePointer.of(bytes));
 * console.log(b.dtype, b.rank, b.dims); // 11 2 [ 2, 3 ]
 * ```
 */
export function readBuffer(ptr: Deno.PointerValue): BufferValue {
  const v = _view(ptr, BUFFER.name);
  const f = BUFFER.fields;
  const struct_size = _structSize(v, 0, BUFFER);
  const dtype = _dtype(v.getUint32(f.dtype.offset), BUFFER.name);
  const rankRaw = v.getBigInt64(f.rank.offset);
  if (rankRaw < 0n || rankRaw > BigInt(READ_LIMITS.maxRank)) {
    throw _invalid(
      `Unexpected ${BUFFER.name} rank: expected 0..${READ_LIMITS.maxRank} got ${rankRaw}`,
    );
  }
  const rank = Number(rankRaw);
  const dims: number[] = [];
  if (rank > 0) {
    const d = _view(v.getPointer(f.dims.offset), "XLA_FFI_Buffer dims");
    for (let i = 0; i < rank; i++) {
      const dim = d.getBigInt64(i * 8);
      if (dim < 0n || dim > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw _invalid(`Unexpected ${BUFFER.name} dimension ${i}: ${dim}`);
      }
      dims.push(Number(dim));
    }
  }
  return {
    struct_size,
    extension_start: v.getPointer(f.extension_start.offset),
    dtype,
    data: v.getPointer(f.data.offset),
    rank,
    dims,
    token: dtype === DataType.TOKEN,
  };
}

function _list(
  v: Deno.UnsafePointerView,
  base: number,
  layout: typeof ARGS | typeof RETS,
  e: Record<number, string>,
  enumName: string,
): Array<BufferValue & { type: number }> {
  _structSize(v, base, layout);
  const size = v.getBigInt64(base + layout.fields.size.offset);
  const n = _count(size, READ_LIMITS.maxCount, "size", layout.name);
  const out: Array<BufferValue & { type: number }> = [];
  if (n === 0) return out;
  const types = _view(v.getPointer(base + layout.fields.types.offset), `${layout.name} types`);
  const [ptrName, ptrField] = "args" in layout.fields
    ? ["args", layout.fields.args]
    : ["rets", layout.fields.rets];
  const ptrs = _view(v.getPointer(base + ptrField.offset), `${layout.name} ${ptrName}`);
  for (let i = 0; i < n; i++) {
    const type = _enum(types.getUint32(i * 4), e, enumName, `${layout.name} entry ${i}`);
    out.push({ type, ...readBuffer(ptrs.getPointer(i * 8)) });
  }
  return out;
}

/**
 * Reads an `XLA_FFI_Args`: every argument with its type and buffer.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readArgs, writeArgs, writeBuffer } from "@deno-xla/ffi/abi";
 * const buffer = new Uint8Array(48);
 * writeBuffer(buffer, 0, { dtype: DataType.TOKEN });
 * const types = new Uint32Array([1]); // BUFFER
 * const ptrs = new BigUint64Array([Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer))]);
 * const b = new Uint8Array(40);
 * writeArgs(b, 0, { size: 1, types: Deno.UnsafePointer.of(types), args: Deno.UnsafePointer.of(ptrs) });
 * console.log(readArgs(Deno.UnsafePointer.of(b))[0]?.token); // true
 * ```
 */
export function readArgs(ptr: Deno.PointerValue): ArgValue[] {
  return _list(_view(ptr, ARGS.name), 0, ARGS, ArgType, "XLA_FFI_ArgType");
}

/**
 * Reads an `XLA_FFI_Rets`: every result with its type and buffer.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readRets, writeBuffer, writeRets } from "@deno-xla/ffi/abi";
 * const buffer = new Uint8Array(48);
 * writeBuffer(buffer, 0, { dtype: DataType.F32, data: 0x1000n });
 * const types = new Uint32Array([1]); // BUFFER
 * const ptrs = new BigUint64Array([Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer))]);
 * const b = new Uint8Array(40);
 * writeRets(b, 0, { size: 1, types: Deno.UnsafePointer.of(types), rets: Deno.UnsafePointer.of(ptrs) });
 * console.log(readRets(Deno.UnsafePointer.of(b))[0]?.dtype); // 11
 * ```
 */
export function readRets(ptr: Deno.PointerValue): RetValue[] {
  return _list(_view(ptr, RETS.name), 0, RETS, RetType, "XLA_FFI_RetType");
}

/**
 * Reads a whole `XLA_FFI_CallFrame`: header, stage, every argument and result
 * buffer, every attribute (dictionaries nested) and the `future` out field.
 * The declared struct_size must be at least 168.
 *
 * @example
 * ```ts
 * import { ExecutionStage } from "@deno-xla/ffi";
 * import { readCallFrame, writeCallFrame } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(176);
 * writeCallFrame(b, 0, { stage: ExecutionStage.EXECUTE, ctx: 0x10n });
 * const f = readCallFrame(Deno.UnsafePointer.of(b));
 * console.log(f.struct_size, f.stage, f.args.length, f.rets.length, f.attrs.length); // 168 3 0 0 0
 * ```
 */
export function readCallFrame(ptr: Deno.PointerValue): CallFrameValue {
  const v = _view(ptr, CALL_FRAME.name);
  const f = CALL_FRAME.fields;
  const struct_size = _structSize(v, 0, CALL_FRAME);
  const stage = _enum(
    v.getUint32(f.stage.offset),
    ExecutionStage,
    "XLA_FFI_ExecutionStage",
    CALL_FRAME.name,
  ) as ExecutionStage;
  return {
    struct_size,
    extension_start: v.getPointer(f.extension_start.offset),
    api: v.getPointer(f.api.offset),
    ctx: v.getPointer(f.ctx.offset),
    stage,
    args: _list(v, f.args.offset, ARGS, ArgType, "XLA_FFI_ArgType"),
    rets: _list(v, f.rets.offset, RETS, RetType, "XLA_FFI_RetType"),
    attrs: _attrsAt(v, f.attrs.offset, 0),
    future: v.getPointer(f.future.offset),
  };
}

// ---------------------------------------------------------------------------
// Metadata and the API table
// ---------------------------------------------------------------------------

/**
 * Reads an `XLA_FFI_Metadata` (a handler's answer to the metadata query).
 * `state_type_id` is read only when the reported API version is 0.2 or later
 * (the 0.2+ layout, 48 bytes), else it is `null`.
 *
 * @example
 * ```ts
 * import { readMetadata, writeMetadata } from "@deno-xla/ffi/abi";
 * const bytes = new Uint8Array(48);
 * writeMetadata(bytes, 0, { api_version: { major_version: 0, minor_version: 1 }, traits: 1 });
 * const m = readMetadata(Deno.UnsafePointer.of(bytes));
 * console.log(m.api_version.minor_version, m.traits, m.state_type_id); // 1 1 null
 * ```
 */
export function readMetadata(
  ptr: Deno.PointerValue,
): StructValue<typeof METADATA> & { state_type_id: bigint | null } {
  const m = readStruct(METADATA, ptr);
  const { major_version: major, minor_version: minor } = m.api_version;
  const v2 = major > 0 || minor >= 2;
  const state_type_id = v2
    ? new Deno.UnsafePointerView(ptr!).getBigInt64(METADATA_V0_2.fields.state_type_id.offset)
    : null;
  return { ...m, state_type_id };
}

/**
 * Reads an `XLA_FFI_Metadata_Extension`: its extension base (type must be
 * METADATA = 1) and the pointer to the metadata the handler fills.
 *
 * @example
 * ```ts
 * import { readMetadataExtension, writeMetadataExtension } from "@deno-xla/ffi/abi";
 * const bytes = new Uint8Array(32);
 * writeMetadataExtension(bytes, 0, { metadata: 0x1000n });
 * const ext = readMetadataExtension(Deno.UnsafePointer.of(bytes));
 * console.log(ext.extension_base.type, Deno.UnsafePointer.value(ext.metadata)); // 1 4096n
 * ```
 */
export function readMetadataExtension(
  ptr: Deno.PointerValue,
): StructValue<typeof METADATA_EXTENSION> {
  const v = _view(ptr, METADATA_EXTENSION.name);
  _checkSize(Number(v.getBigUint64(0)), METADATA_EXTENSION.structSize, METADATA_EXTENSION.name);
  const ext = _readInto(v, 0, METADATA_EXTENSION);
  _enum(ext.extension_base.type, ExtensionType, "XLA_FFI_Extension_Type", METADATA_EXTENSION.name);
  return ext;
}

/**
 * Reads an `XLA_FFI_Extension_Base` (the head of any extension in a chain).
 *
 * @example
 * ```ts
 * import { readExtensionBase, writeExtensionBase } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeExtensionBase(b, 0, { type: 1 });
 * const a = readExtensionBase(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.type, a.next); // 24 1 null
 * ```
 */
export function readExtensionBase(ptr: Deno.PointerValue): StructValue<typeof EXTENSION_BASE> {
  return readStruct(EXTENSION_BASE, ptr);
}

/**
 * Reads an `XLA_FFI_Api`: version, internal API and every function slot the
 * declared struct_size covers (18 slots for 0.1–0.3, 19 with 0.4's
 * `XLA_FFI_Error_GetCode`; slots named as in 0.1). The struct_size must cover at least the header
 * and the first slot (56 bytes).
 *
 * @example
 * ```ts
 * import { readApi, writeApi } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(192);
 * writeApi(b, 0, {
 *   api_version: { major_version: 0, minor_version: 1 },
 *   functions: { XLA_FFI_Error_Create: 0x10n },
 * });
 * const api = readApi(Deno.UnsafePointer.of(b));
 * const create = Deno.UnsafePointer.value(api.functions.XLA_FFI_Error_Create!);
 * console.log(api.api_version.minor_version, Object.keys(api.functions).length, create); // 1 18 16n
 * ```
 */
export function readApi(ptr: Deno.PointerValue): ApiValue {
  const v = _view(ptr, API.name);
  const raw = v.getBigUint64(0);
  const struct_size = raw > 0xffffffffn ? Number.MAX_SAFE_INTEGER : Number(raw);
  _checkSize(struct_size, API.fields.XLA_FFI_Error_Create.offset + 8, API.name);
  const api_version = _readInto(v, API.fields.api_version.offset, API_VERSION);
  _checkSize(api_version.struct_size, API_VERSION.structSize, API_VERSION.name);
  const functions: ApiValue["functions"] = {};
  API_SLOTS_V0_5.forEach((slot, i) => {
    const off = 48 + 8 * i;
    if (off + 8 <= struct_size) functions[slot] = v.getPointer(off);
  });
  return {
    struct_size,
    extension_start: v.getPointer(8),
    api_version,
    internal_api: v.getPointer(API.fields.internal_api.offset),
    functions,
  };
}

// ---------------------------------------------------------------------------
// Plain structs: one named reader each
// ---------------------------------------------------------------------------

/**
 * Reads an `XLA_FFI_Api_Version`.
 *
 * @example
 * ```ts
 * import { readApiVersion, writeApiVersion } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeApiVersion(b, 0, { major_version: 0, minor_version: 1 });
 * const a = readApiVersion(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.minor_version); // 24 1
 * ```
 */
export const readApiVersion = (ptr: Deno.PointerValue): StructValue<typeof API_VERSION> =>
  readStruct(API_VERSION, ptr);

/**
 * Reads an `XLA_FFI_TypeId` (`{type_id}`).
 *
 * @example
 * ```ts
 * import { readTypeId } from "@deno-xla/ffi/abi";
 * const id = new BigInt64Array([7n]);
 * console.log(readTypeId(Deno.UnsafePointer.of(id)).type_id); // 7n
 * ```
 */
export const readTypeId = (ptr: Deno.PointerValue): StructValue<typeof TYPE_ID> =>
  readStruct(TYPE_ID, ptr);

/**
 * Reads an `XLA_FFI_Handler_Bundle` (four stage handler pointers).
 *
 * @example
 * ```ts
 * import { readHandlerBundle, writeHandlerBundle } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeHandlerBundle(b, 0, { execute: 0x1000n });
 * const a = readHandlerBundle(Deno.UnsafePointer.of(b));
 * console.log(Deno.UnsafePointer.value(a.execute), a.prepare); // 4096n null
 * ```
 */
export const readHandlerBundle = (ptr: Deno.PointerValue): StructValue<typeof HANDLER_BUNDLE> =>
  readStruct(HANDLER_BUNDLE, ptr);

/**
 * Reads `XLA_FFI_Error_Create_Args`; `message` is returned as a pointer
 * (a NUL-terminated C string: read it with `Deno.UnsafePointerView.getCString`).
 *
 * @example
 * ```ts
 * import { readErrorCreateArgs, writeErrorCreateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeErrorCreateArgs(b, 0, { errc: 13 });
 * const a = readErrorCreateArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.errc, a.message); // 28 13 null
 * ```
 */
export const readErrorCreateArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof ERROR_CREATE_ARGS> => readStruct(ERROR_CREATE_ARGS, ptr);

/**
 * Reads `XLA_FFI_Error_GetMessage_Args`.
 *
 * @example
 * ```ts
 * import { readErrorGetMessageArgs, writeErrorGetMessageArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeErrorGetMessageArgs(b, 0, { error: 0x10n });
 * const a = readErrorGetMessageArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.error)); // 32 16n
 * ```
 */
export const readErrorGetMessageArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof ERROR_GET_MESSAGE_ARGS> => readStruct(ERROR_GET_MESSAGE_ARGS, ptr);

/**
 * Reads `XLA_FFI_Error_Destroy_Args`.
 *
 * @example
 * ```ts
 * import { readErrorDestroyArgs, writeErrorDestroyArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeErrorDestroyArgs(b, 0, { error: 0x10n });
 * const a = readErrorDestroyArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.error)); // 24 16n
 * ```
 */
export const readErrorDestroyArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof ERROR_DESTROY_ARGS> => readStruct(ERROR_DESTROY_ARGS, ptr);

/**
 * Reads `XLA_FFI_Error_GetCode_Args` (ABI 0.4+).
 *
 * @example
 * ```ts
 * import { readErrorGetCodeArgs, writeErrorGetCodeArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeErrorGetCodeArgs(b, 0, { errc: 5 });
 * const a = readErrorGetCodeArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.errc); // 28 5
 * ```
 */
export const readErrorGetCodeArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof ERROR_GET_CODE_ARGS> => readStruct(ERROR_GET_CODE_ARGS, ptr);

/**
 * Reads `XLA_FFI_Handler_Register_Args` (name and platform as strings, the bundle).
 *
 * @example
 * ```ts
 * import { readHandlerRegisterArgs, writeHandlerRegisterArgs } from "@deno-xla/ffi/abi";
 * const [name, platform] = [new TextEncoder().encode("my_handler"), new TextEncoder().encode("Host")];
 * const b = new Uint8Array(88);
 * writeHandlerRegisterArgs(b, 0, {
 *   name: { ptr: Deno.UnsafePointer.of(name), len: name.length },
 *   platform: { ptr: Deno.UnsafePointer.of(platform), len: platform.length },
 *   traits: 1,
 * });
 * const a = readHandlerRegisterArgs(Deno.UnsafePointer.of(b));
 * console.log(a.name, a.platform, a.traits); // my_handler Host 1
 * ```
 */
export const readHandlerRegisterArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof HANDLER_REGISTER_ARGS> => readStruct(HANDLER_REGISTER_ARGS, ptr);

/**
 * Reads `XLA_FFI_Stream_Get_Args`.
 *
 * @example
 * ```ts
 * import { readStreamGetArgs, writeStreamGetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeStreamGetArgs(b, 0, { ctx: 0x10n });
 * const a = readStreamGetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.stream); // 32 null
 * ```
 */
export const readStreamGetArgs = (ptr: Deno.PointerValue): StructValue<typeof STREAM_GET_ARGS> =>
  readStruct(STREAM_GET_ARGS, ptr);

/**
 * Reads `XLA_FFI_TypeId_Register_Args` (0.1).
 *
 * @example
 * ```ts
 * import { readTypeIdRegisterArgs, writeTypeIdRegisterArgs } from "@deno-xla/ffi/abi";
 * const name = new TextEncoder().encode("my_type");
 * const b = new Uint8Array(40);
 * writeTypeIdRegisterArgs(b, 0, { name: { ptr: Deno.UnsafePointer.of(name), len: name.length } });
 * const a = readTypeIdRegisterArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.name); // 40 my_type
 * ```
 */
export const readTypeIdRegisterArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof TYPE_ID_REGISTER_ARGS> => readStruct(TYPE_ID_REGISTER_ARGS, ptr);

/**
 * Reads `XLA_FFI_Type_Register_Args` of ABI 0.2+ (with `type_info`).
 *
 * @example
 * ```ts
 * import { readTypeRegisterArgsV0_2, writeTypeRegisterArgsV0_2 } from "@deno-xla/ffi/abi";
 * const name = new TextEncoder().encode("my_type");
 * const b = new Uint8Array(48);
 * writeTypeRegisterArgsV0_2(b, 0, { name: { ptr: Deno.UnsafePointer.of(name), len: name.length } });
 * const a = readTypeRegisterArgsV0_2(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.name, a.type_info); // 40 my_type null
 * ```
 */
export const readTypeRegisterArgsV0_2 = (
  ptr: Deno.PointerValue,
): StructValue<typeof TYPE_REGISTER_ARGS_V0_2> => readStruct(TYPE_REGISTER_ARGS_V0_2, ptr);

/**
 * Reads `XLA_FFI_TypeInfo` of ABI 0.2-late+.
 *
 * @example
 * ```ts
 * import { readTypeInfoV0_2, writeTypeInfoV0_2 } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeTypeInfoV0_2(b, 0, { deleter: 0x10n });
 * const a = readTypeInfoV0_2(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.deleter)); // 24 16n
 * ```
 */
export const readTypeInfoV0_2 = (ptr: Deno.PointerValue): StructValue<typeof TYPE_INFO_V0_2> =>
  readStruct(TYPE_INFO_V0_2, ptr);

/**
 * Reads `XLA_FFI_ExecutionContext_Get_Args`.
 *
 * @example
 * ```ts
 * import { readExecutionContextGetArgs, writeExecutionContextGetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(40);
 * writeExecutionContextGetArgs(b, 0, { ctx: 0x10n });
 * const a = readExecutionContextGetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.data); // 40 null
 * ```
 */
export const readExecutionContextGetArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof EXECUTION_CONTEXT_GET_ARGS> => readStruct(EXECUTION_CONTEXT_GET_ARGS, ptr);

/**
 * Reads `XLA_FFI_State_Set_Args` of ABI 0.1 (with `deleter`).
 *
 * @example
 * ```ts
 * import { readStateSetArgs, writeStateSetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeStateSetArgs(b, 0, { state: 0x10n });
 * const a = readStateSetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.state)); // 48 16n
 * ```
 */
export const readStateSetArgs = (ptr: Deno.PointerValue): StructValue<typeof STATE_SET_ARGS> =>
  readStruct(STATE_SET_ARGS, ptr);

/**
 * Reads `XLA_FFI_State_Get_Args` of ABI 0.1.
 *
 * @example
 * ```ts
 * import { readStateGetArgs, writeStateGetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(40);
 * writeStateGetArgs(b, 0, { ctx: 0x10n });
 * const a = readStateGetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.state); // 40 null
 * ```
 */
export const readStateGetArgs = (ptr: Deno.PointerValue): StructValue<typeof STATE_GET_ARGS> =>
  readStruct(STATE_GET_ARGS, ptr);

/**
 * Reads `XLA_FFI_State_Set_Args` of ABI 0.2 (40 bytes, no `deleter`).
 *
 * @example
 * ```ts
 * import { readStateSetArgsV0_2, writeStateSetArgsV0_2 } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(40);
 * writeStateSetArgsV0_2(b, 0, { state: 0x10n });
 * const a = readStateSetArgsV0_2(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.state)); // 40 16n
 * ```
 */
export const readStateSetArgsV0_2 = (
  ptr: Deno.PointerValue,
): StructValue<typeof STATE_SET_ARGS_V0_2> => readStruct(STATE_SET_ARGS_V0_2, ptr);

/**
 * Reads `XLA_FFI_State_Set_Args` of ABI 0.3+ (with `stage`; the stage is validated).
 *
 * @example
 * ```ts
 * import { readStateSetArgsV0_3, writeStateSetArgsV0_3 } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeStateSetArgsV0_3(b, 0, { stage: 3 });
 * const a = readStateSetArgsV0_3(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.stage); // 48 3
 * ```
 */
export function readStateSetArgsV0_3(
  ptr: Deno.PointerValue,
): StructValue<typeof STATE_SET_ARGS_V0_3> {
  const s = readStruct(STATE_SET_ARGS_V0_3, ptr);
  _enum(s.stage, ExecutionStage, "XLA_FFI_ExecutionStage", STATE_SET_ARGS_V0_3.name);
  return s;
}

/**
 * Reads `XLA_FFI_State_Get_Args` of ABI 0.3+ (with `stage`; the stage is validated).
 *
 * @example
 * ```ts
 * import { readStateGetArgsV0_3, writeStateGetArgsV0_3 } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeStateGetArgsV0_3(b, 0, { stage: 0 });
 * const a = readStateGetArgsV0_3(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.stage); // 48 0
 * ```
 */
export function readStateGetArgsV0_3(
  ptr: Deno.PointerValue,
): StructValue<typeof STATE_GET_ARGS_V0_3> {
  const s = readStruct(STATE_GET_ARGS_V0_3, ptr);
  _enum(s.stage, ExecutionStage, "XLA_FFI_ExecutionStage", STATE_GET_ARGS_V0_3.name);
  return s;
}

/**
 * Reads `XLA_FFI_DeviceMemory_Allocate_Args`.
 *
 * @example
 * ```ts
 * import { readDeviceMemoryAllocateArgs, writeDeviceMemoryAllocateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeDeviceMemoryAllocateArgs(b, 0, { size: 1024, alignment: 64 });
 * const a = readDeviceMemoryAllocateArgs(Deno.UnsafePointer.of(b));
 * console.log(a.size, a.alignment); // 1024n 64n
 * ```
 */
export const readDeviceMemoryAllocateArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof DEVICE_MEMORY_ALLOCATE_ARGS> => readStruct(DEVICE_MEMORY_ALLOCATE_ARGS, ptr);

/**
 * Reads `XLA_FFI_DeviceMemory_Free_Args`.
 *
 * @example
 * ```ts
 * import { readDeviceMemoryFreeArgs, writeDeviceMemoryFreeArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(40);
 * writeDeviceMemoryFreeArgs(b, 0, { size: 1024 });
 * const a = readDeviceMemoryFreeArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.size); // 40 1024n
 * ```
 */
export const readDeviceMemoryFreeArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof DEVICE_MEMORY_FREE_ARGS> => readStruct(DEVICE_MEMORY_FREE_ARGS, ptr);

/**
 * Reads `XLA_FFI_ThreadPool_Schedule_Args`.
 *
 * @example
 * ```ts
 * import { readThreadPoolScheduleArgs, writeThreadPoolScheduleArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(40);
 * writeThreadPoolScheduleArgs(b, 0, { task: 0x10n });
 * const a = readThreadPoolScheduleArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.task)); // 40 16n
 * ```
 */
export const readThreadPoolScheduleArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof THREAD_POOL_SCHEDULE_ARGS> => readStruct(THREAD_POOL_SCHEDULE_ARGS, ptr);

/**
 * Reads `XLA_FFI_ThreadPool_NumThreads_Args`.
 *
 * @example
 * ```ts
 * import { readThreadPoolNumThreadsArgs, writeThreadPoolNumThreadsArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeThreadPoolNumThreadsArgs(b, 0, { num_threads: 0x10n });
 * const a = readThreadPoolNumThreadsArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.num_threads)); // 32 16n
 * ```
 */
export const readThreadPoolNumThreadsArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof THREAD_POOL_NUM_THREADS_ARGS> =>
  readStruct(THREAD_POOL_NUM_THREADS_ARGS, ptr);

/**
 * Reads `XLA_FFI_Future_Create_Args` (the declared struct_size is 16; the
 * `future` out field at 16 is read as part of the 24-byte struct).
 *
 * @example
 * ```ts
 * import { readFutureCreateArgs, writeFutureCreateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeFutureCreateArgs(b, 0, {});
 * const a = readFutureCreateArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.future); // 16 null
 * ```
 */
export const readFutureCreateArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof FUTURE_CREATE_ARGS> => readStruct(FUTURE_CREATE_ARGS, ptr);

/**
 * Reads `XLA_FFI_Future_SetAvailable_Args`.
 *
 * @example
 * ```ts
 * import { readFutureSetAvailableArgs, writeFutureSetAvailableArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeFutureSetAvailableArgs(b, 0, { future: 0x10n });
 * const a = readFutureSetAvailableArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.future)); // 24 16n
 * ```
 */
export const readFutureSetAvailableArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof FUTURE_SET_AVAILABLE_ARGS> => readStruct(FUTURE_SET_AVAILABLE_ARGS, ptr);

/**
 * Reads `XLA_FFI_Future_SetError_Args`.
 *
 * @example
 * ```ts
 * import { readFutureSetErrorArgs, writeFutureSetErrorArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeFutureSetErrorArgs(b, 0, { error: 0x10n });
 * const a = readFutureSetErrorArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, Deno.UnsafePointer.value(a.error)); // 32 16n
 * ```
 */
export const readFutureSetErrorArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof FUTURE_SET_ERROR_ARGS> => readStruct(FUTURE_SET_ERROR_ARGS, ptr);

/**
 * Reads `XLA_FFI_RunId_Get_Args`.
 *
 * @example
 * ```ts
 * import { readRunIdGetArgs, writeRunIdGetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeRunIdGetArgs(b, 0, { run_id: 42 });
 * const a = readRunIdGetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.run_id); // 32 42n
 * ```
 */
export const readRunIdGetArgs = (ptr: Deno.PointerValue): StructValue<typeof RUN_ID_GET_ARGS> =>
  readStruct(RUN_ID_GET_ARGS, ptr);

/**
 * Reads `XLA_FFI_DeviceOrdinal_Get_Args`.
 *
 * @example
 * ```ts
 * import { readDeviceOrdinalGetArgs, writeDeviceOrdinalGetArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeDeviceOrdinalGetArgs(b, 0, { device_ordinal: 3 });
 * const a = readDeviceOrdinalGetArgs(Deno.UnsafePointer.of(b));
 * console.log(a.struct_size, a.device_ordinal); // 28 3
 * ```
 */
export const readDeviceOrdinalGetArgs = (
  ptr: Deno.PointerValue,
): StructValue<typeof DEVICE_ORDINAL_GET_ARGS> => readStruct(DEVICE_ORDINAL_GET_ARGS, ptr);
