/**
 * Values a TS handler receives: buffers, remaining arguments/results, and
 * attribute dictionaries. Remaining operands and dictionaries keep a private
 * copy of their part of the flattened call frame and decode on access, with
 * the error messages of XLA's `ffi.h`.
 *
 * @module
 */
import { AttrType, DataType, ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _deviceMemoryCheck } from "./_device_memory.ts";
import {
  type AnyTypedArray,
  dtypeName,
  dtypeWidth,
  type TypedArrayOf,
  typedView,
} from "./_dtype.ts";
import {
  attrRecordValue,
  type AttrSpec,
  DecodeFailure,
  naturalAttrValue,
  readName,
} from "./_attrs.ts";

/**
 * A buffer argument or result: dtype, dims and the data address, with a
 * TypedArray view of host memory created on first use.
 *
 * @example
 * ```ts
 * import { DataType, FfiBuffer } from "@deno-xla/ffi";
 * const b = new FfiBuffer(DataType.F32, 0, [2, 3]);
 * console.log(b.elementCount, b.byteSize); // 6 24
 * ```
 */
export class FfiBuffer<D extends DataType = DataType> {
  /** Element type. */
  readonly dtype: D;
  /** Address of the first element (0 for tokens and empty buffers). */
  readonly data: number;
  /** Dimensions, outermost first. */
  readonly dims: readonly number[];
  #view: AnyTypedArray | undefined;

  /** Describes a buffer; handlers receive these from the runtime. */
  constructor(dtype: D, data: number, dims: readonly number[]) {
    this.dtype = dtype;
    this.data = data;
    this.dims = dims;
  }

  /** Number of dimensions. */
  get rank(): number {
    return this.dims.length;
  }

  /** Product of the dims (1 for rank 0). */
  get elementCount(): number {
    let n = 1;
    for (let i = 0; i < this.dims.length; i++) n *= this.dims[i]!;
    return n;
  }

  /** ffi.h size_bytes: ByteWidth × element count. */
  get byteSize(): number {
    return dtypeWidth(this.dtype) * this.elementCount;
  }

  /** The data address as a pointer (null for address 0). */
  get pointer(): Deno.PointerValue {
    return this.data === 0 ? null : Deno.UnsafePointer.create(BigInt(this.data));
  }

  /**
   * A TypedArray over the buffer's host memory (no copy; valid while the
   * runtime keeps the buffer alive, i.e. during the handler call). Made on
   * first use and then reused. A buffer in CUDA device memory (a CUDA
   * runtime's buffers) has no host view: FfiError FAILED_PRECONDITION; pass
   * such a buffer to a kernel launch, or copy it with the CUDA bindings.
   */
  typed(): TypedArrayOf<D> {
    if (this.#view === undefined) {
      const bytes = this.byteSize;
      const ptr = this.pointer;
      const why = _deviceMemoryCheck !== undefined && ptr !== null && bytes > 0
        ? _deviceMemoryCheck(this.data)
        : undefined;
      if (why !== undefined) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `FfiBuffer.typed(): the buffer at 0x${this.data.toString(16)} is ${why}, which the ` +
            `host cannot read: pass the buffer to a kernel (launch(kernel, config, buffer)) or ` +
            `copy it with DeviceMemory.wrap(buffer.data, buffer.byteSize)`,
        );
      }
      const ab = ptr === null || bytes === 0
        ? new ArrayBuffer(0)
        : Deno.UnsafePointerView.getArrayBuffer(ptr, bytes);
      this.#view = typedView(this.dtype, ab, ptr === null ? 0 : bytes);
    }
    return this.#view as TypedArrayOf<D>;
  }
}

/** Reads the buffer record at byte offset `o` (type, dtype, data, rank, dims). */
export function readBufferRecord(dv: DataView, o: number): FfiBuffer {
  const rank = dv.getInt32(o + 16, true);
  const dims = new Array<number>(rank);
  for (let d = 0; d < rank; d++) dims[d] = dv.getFloat64(o + 24 + 8 * d, true);
  return new FfiBuffer(dv.getInt32(o + 4, true), dv.getFloat64(o + 8, true), dims);
}

/** Checks a buffer record against an expected dtype/rank; returns a diagnostic or undefined. */
export function checkBufferRecord(
  dv: DataView,
  o: number,
  dtype: number,
  rank: number,
  what: "argument" | "result",
): string | undefined {
  const type = dv.getInt32(o, true);
  if (type !== 1) return `Wrong ${what} type: expected buffer but got ${type}`;
  const got = dv.getInt32(o + 4, true);
  if (dtype >= 0 && got !== dtype) {
    return `Wrong buffer dtype: expected ${dtypeName(dtype)} but got ${dtypeName(got)}`;
  }
  const r = dv.getInt32(o + 16, true);
  if (rank >= 0 && r !== rank) return `Wrong buffer rank: expected ${rank} but got ${r}`;
  return undefined;
}

/**
 * The remaining arguments or results of a call (`RemainingArgs` /
 * `RemainingRets`), decoded on access.
 *
 * @example
 * ```ts ignore
 * Ffi.bind().remainingArgs().to((rest) => {
 *   for (let i = 0; i < rest.size; i++) console.log(rest.get(i).dims);
 * });
 * ```
 */
export class RemainingBuffers {
  readonly #dv: DataView;
  readonly #offsets: number[];
  readonly #what: "argument" | "result";

  /** @internal built by the decoder from a copy of the flat frame. */
  constructor(dv: DataView, offsets: number[], what: "argument" | "result") {
    this.#dv = dv;
    this.#offsets = offsets;
    this.#what = what;
  }

  /** Number of remaining buffers. */
  get size(): number {
    return this.#offsets.length;
  }

  /**
   * Buffer `i`, optionally checked against a dtype and rank. Out of range:
   * INVALID_ARGUMENT "Index out of range"; a failed check: INTERNAL with the
   * decode diagnostic.
   */
  get<D extends DataType = DataType>(i: number, dtype?: D, rank?: number): FfiBuffer<D> {
    const o = this.#offsets[i];
    if (o === undefined || !Number.isInteger(i)) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Index out of range");
    }
    const diag = checkBufferRecord(this.#dv, o, dtype ?? -1, rank ?? -1, this.#what);
    if (diag !== undefined) throw new FfiError(ErrorCode.INTERNAL, diag);
    return readBufferRecord(this.#dv, o) as FfiBuffer<D>;
  }
}

/** A decoded attribute value of its natural type. */
export type AttrValue =
  | boolean
  | number
  | bigint
  | string
  | number[]
  | bigint[]
  | (number | bigint)[]
  | Dictionary;

/**
 * An attribute dictionary (the whole attribute set with `.attrs()`, or a
 * dictionary attribute), decoded lazily by name.
 *
 * @example
 * ```ts ignore
 * Ffi.bind().attrs().to((attrs) => {
 *   const n = attrs.get("n", "i32"); // number
 *   console.log(attrs.keys(), n);
 * });
 * ```
 */
export class Dictionary {
  readonly #dv: DataView;
  readonly #offsets: number[];
  #names: string[] | undefined;

  /** @internal built by the decoder from a copy of the flat frame. */
  constructor(dv: DataView, offsets: number[]) {
    this.#dv = dv;
    this.#offsets = offsets;
  }

  /** Number of entries. */
  get size(): number {
    return this.#offsets.length;
  }

  /** Entry names, sorted as the runtime sorted them. */
  keys(): string[] {
    if (this.#names === undefined) {
      this.#names = this.#offsets.map((o) => readName(this.#dv, o));
    }
    return this.#names.slice();
  }

  /** True when an entry of this name exists. */
  has(name: string): boolean {
    return this.#find(name) >= 0;
  }

  /** Attribute type of an entry (undefined when absent). */
  typeOf(name: string): AttrType | undefined {
    const i = this.#find(name);
    return i < 0 ? undefined : this.#dv.getInt32(this.#offsets[i]!, true) as AttrType;
  }

  /**
   * Entry `name` decoded as `kind` (e.g. `"i32"`, `"f32[]"`, `"string"`,
   * `"dict"`), or of its natural type without a kind. Missing: NOT_FOUND;
   * wrong type: INTERNAL with ffi.h's diagnostic.
   */
  get(name: string, kind?: AttrKind): AttrValue {
    const i = this.#find(name);
    if (i < 0) {
      throw new FfiError(ErrorCode.NOT_FOUND, `Attribute ${name} not found in the dictionary`);
    }
    const o = this.#offsets[i]!;
    const v = kind === undefined
      ? naturalAttrValue(this.#dv, o)
      : attrRecordValue(this.#dv, o, attrSpecOf(kind));
    if (v instanceof DecodeFailure) throw new FfiError(ErrorCode.INTERNAL, v.message);
    return v as AttrValue;
  }

  /** Every entry decoded to its natural type. */
  toObject(): Record<string, AttrValue> {
    const out: Record<string, AttrValue> = {};
    const names = this.keys();
    for (let i = 0; i < names.length; i++) {
      out[names[i]!] = naturalAttrValue(this.#dv, this.#offsets[i]!) as AttrValue;
    }
    return out;
  }

  #find(name: string): number {
    const names = this.#names ?? this.keys();
    let lo = 0, hi = names.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const n = names[mid]!;
      if (n === name) return mid;
      if (n < name) lo = mid + 1;
      else hi = mid - 1;
    }
    // Byte order and UTF-16 order differ only outside the BMP; fall back.
    return names.indexOf(name);
  }
}

/** Attribute kinds a binding or dictionary lookup can ask for. */
export type ScalarKind =
  | "i8"
  | "i16"
  | "i32"
  | "i64"
  | "u8"
  | "u16"
  | "u32"
  | "u64"
  | "f32"
  | "f64";
/**
 * 64-bit integer kinds decoded as `bigint` (the full range); `i64`/`u64` give
 * a JS number and fail to decode a value that a number cannot hold exactly.
 */
export type BigIntKind = "i64n" | "u64n";
/** Every attribute kind (see {@link ScalarKind}); `pointer` is an S64 scalar address. */
export type AttrKind =
  | ScalarKind
  | BigIntKind
  | "bool"
  | "string"
  | "dict"
  | "pointer"
  | `${ScalarKind}[]`
  | `${BigIntKind}[]`;

const KIND_DTYPE: Record<ScalarKind, DataType> = {
  i8: DataType.S8,
  i16: DataType.S16,
  i32: DataType.S32,
  i64: DataType.S64,
  u8: DataType.U8,
  u16: DataType.U16,
  u32: DataType.U32,
  u64: DataType.U64,
  f32: DataType.F32,
  f64: DataType.F64,
};

/** @internal the decode spec of an attribute kind. */
export function attrSpecOf(kind: AttrKind, allowed?: readonly number[]): AttrSpec {
  if (kind === "bool") return { type: AttrType.SCALAR, dtype: DataType.PRED, pointer: false };
  if (kind === "string") return { type: AttrType.STRING, dtype: 0, pointer: false };
  if (kind === "dict") return { type: AttrType.DICTIONARY, dtype: 0, pointer: false };
  if (kind === "pointer") return { type: AttrType.SCALAR, dtype: DataType.S64, pointer: true };
  if (kind === "i64n" || kind === "u64n") {
    const dtype = kind === "i64n" ? DataType.S64 : DataType.U64;
    return { type: AttrType.SCALAR, dtype, pointer: false, big: true };
  }
  if (kind === "i64n[]" || kind === "u64n[]") {
    const dtype = kind === "i64n[]" ? DataType.S64 : DataType.U64;
    return { type: AttrType.ARRAY, dtype, pointer: false, big: true };
  }
  if (kind.endsWith("[]")) {
    const d = KIND_DTYPE[kind.slice(0, -2) as ScalarKind];
    if (d === undefined) throw new TypeError(`Unknown attribute kind: ${kind}`);
    return { type: AttrType.ARRAY, dtype: d, pointer: false };
  }
  const d = KIND_DTYPE[kind as ScalarKind];
  if (d === undefined) throw new TypeError(`Unknown attribute kind: ${kind}`);
  return { type: AttrType.SCALAR, dtype: d, pointer: false, allowed };
}

export { DecodeFailure };
