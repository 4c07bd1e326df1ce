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
import { attrRecordValue, type AttrSpec, DecodeFailure, naturalAttrValue } from "./_attrs.ts";
import { sameFlatWords, toScratch } from "./_flat.ts";

/** The next FfiBuffer takes its dims array as is (FfiBuffer._adopt). */
let adopting = false;

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
  /** The dims, never handed out (the decoder compares them with later frames). */
  readonly #dims: readonly number[];
  #frozenDims: readonly number[] | undefined;
  #view: AnyTypedArray | undefined;

  /** Describes a buffer; handlers receive these from the runtime. */
  constructor(dtype: D, data: number, dims: readonly number[]) {
    this.dtype = dtype;
    this.data = data;
    this.#dims = adopting ? dims : [...dims];
    adopting = false;
  }

  /** @internal the decoder's: a buffer that takes `dims`, a fresh array no one else holds. */
  static _adopt(dtype: number, data: number, dims: number[]): FfiBuffer {
    adopting = true;
    return new FfiBuffer(dtype, data, dims);
  }

  /** @internal the dims the decoder compares with a frame (not to be handed out). */
  static _dimsOf(b: FfiBuffer): readonly number[] {
    return b.#dims;
  }

  /** Dimensions, outermost first (a frozen array: a buffer's shape never changes). */
  get dims(): readonly number[] {
    return this.#frozenDims ??= Object.freeze(this.#dims.slice());
  }

  /** Number of dimensions. */
  get rank(): number {
    return this.#dims.length;
  }

  /** Product of the dims (1 for rank 0). */
  get elementCount(): number {
    const dims = this.#dims;
    let n = 1;
    for (let i = 0; i < dims.length; i++) n *= dims[i]!;
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
    // A view made before is handed out again unless a handler detached its ArrayBuffer
    // (`view.buffer.transfer()`): a detached view has no bytes, and the buffer still has them.
    const made = this.#view;
    if (made === undefined || (made.byteLength === 0 && this.byteSize !== 0)) {
      const bytes = this.byteSize;
      const data = this.data;
      const why = _deviceMemoryCheck !== undefined && data !== 0 && bytes > 0
        ? _deviceMemoryCheck(data)
        : undefined;
      if (why !== undefined) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `FfiBuffer.typed(): the buffer at 0x${this.data.toString(16)} is ${why}, which the ` +
            `host cannot read: pass the buffer to a kernel (launch(kernel, config, buffer)) or ` +
            `copy it with DeviceMemory.wrap(buffer.data, buffer.byteSize)`,
        );
      }
      if (bytes > Number.MAX_SAFE_INTEGER) {
        // V8 holds at most 2^53 - 1 bytes in an ArrayBuffer; asking for more aborts the process.
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `FfiBuffer.typed(): the ${dtypeName(this.dtype)}[${this.#dims.join(",")}] buffer ` +
            `covers ${bytes} bytes, more than a JS ArrayBuffer can view ` +
            `(${Number.MAX_SAFE_INTEGER}); read it through its address (buffer.data)`,
        );
      }
      if (data === 0 || bytes === 0) {
        this.#view = typedView(this.dtype, new ArrayBuffer(0), 0);
      } else {
        // A direct-mapped table: a slot per address hash, no allocation but the view. The hash
        // multiplies by 2^32 / φ (Fibonacci hashing), which spreads the evenly spaced addresses of
        // an allocator's buffers over the slots: a loop's outputs spaced 0x6c0 apart, 600 of them,
        // meet in 126 slots under a hash of shifts and xor, in none under this one.
        const slot = Math.imul(data >>> 4, 0x9e3779b1) >>> (32 - RECENT_VIEW_BITS);
        const kept = keptViews[slot];
        if (
          keptAddresses[slot] === data && kept !== undefined && keptTypes[slot] === this.dtype &&
          kept.byteLength === bytes
        ) {
          this.#view = kept;
        } else {
          // The address as an offset from a pointer made once: no BigInt and no
          // pointer object per view (about 0.1 µs of the 0.5 µs a view costs).
          const ab = Deno.UnsafePointerView.getArrayBuffer(
            addressOne ??= Deno.UnsafePointer.create(1n)!,
            bytes,
            data - 1,
          );
          const view = typedView(this.dtype, ab, bytes);
          this.#view = view;
          // Kept from an address's second sighting on: where every call brings a new address
          // (XLA run inline on the JS thread), nothing but a number is kept.
          if (seenAddresses[slot] === data && bytes <= RECENT_VIEW_BYTES) {
            keptAddresses[slot] = data;
            keptTypes[slot] = this.dtype;
            keptViews[slot] = view;
          } else {
            seenAddresses[slot] = data;
          }
        }
      }
    }
    return this.#view as TypedArrayOf<D>;
  }
}

/**
 * Views kept for addresses handlers saw, in a table of 4096 slots indexed by
 * the address (a new address in a slot replaces the old one). XLA's
 * allocator hands a handler the same buffers again and again (a jitted call
 * of 8 f32 in a loop from a Python worker: 600 output addresses in 20000
 * calls, an address back after 200 calls at the median and 1200 at the 90th
 * percentile), and making a view of external memory is most of what
 * `typed()` costs (0.3–0.9 µs); a view of the same bytes with the same type
 * is the same view. In that loop 62% of the calls found their view in a table
 * of 256 slots, 94% in this one. A view is reused only while it still covers
 * its bytes, and kept only from an address's second sighting on: XLA run
 * inline on the JS thread hands out a new address nearly every call, and
 * keeping views nobody reuses would cost more than it saves. Views of more
 * than 64 KiB are not kept (their data costs more than the view), which
 * bounds what the table holds to 256 MiB of views.
 */
const RECENT_VIEW_BITS = 12;
const RECENT_VIEWS = 1 << RECENT_VIEW_BITS;
const keptAddresses = new Float64Array(RECENT_VIEWS);
const keptTypes = new Int32Array(RECENT_VIEWS);
const keptViews: (AnyTypedArray | undefined)[] = new Array(RECENT_VIEWS);
/** The last address seen once in each slot ({@link keptViews} keeps a view from the second time on). */
const seenAddresses = new Float64Array(RECENT_VIEWS);
const RECENT_VIEW_BYTES = 1 << 16;

/** Address 1, made on first use (it needs --allow-ffi): views are made at an offset from it. */
let addressOne: Deno.PointerObject | undefined;

/** Reads the buffer record at byte offset `o` (type, dtype, data, rank, dims). */
export function readBufferRecord(dv: DataView, o: number): FfiBuffer {
  const rank = dv.getInt32(o + 16, true);
  const dims = new Array<number>(rank);
  for (let d = 0; d < rank; d++) dims[d] = dv.getFloat64(o + 24 + 8 * d, true);
  return FfiBuffer._adopt(dv.getInt32(o + 4, true), dv.getFloat64(o + 8, true), dims);
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
  readonly #words: readonly number[];
  readonly #at: readonly number[];
  readonly #what: "argument" | "result";

  /**
   * @internal built by the decoder: a private copy of the records (int32
   * words) and where each buffer's record starts in it.
   */
  constructor(words: readonly number[], at: readonly number[], what: "argument" | "result") {
    this.#words = words;
    this.#at = at;
    this.#what = what;
  }

  /** Number of remaining buffers. */
  get size(): number {
    return this.#at.length;
  }

  /**
   * Buffer `i`, optionally checked against a dtype and rank. Out of range:
   * INVALID_ARGUMENT "Index out of range"; a failed check: INTERNAL with the
   * decode diagnostic.
   */
  get<D extends DataType = DataType>(i: number, dtype?: D, rank?: number): FfiBuffer<D> {
    const w = this.#at[i];
    if (w === undefined || !Number.isInteger(i)) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Index out of range");
    }
    const words = this.#words;
    const dv = toScratch(words, w, 6 + 2 * Math.max(0, words[w + 4]!));
    const diag = checkBufferRecord(dv, 0, dtype ?? -1, rank ?? -1, this.#what);
    if (diag !== undefined) throw new FfiError(ErrorCode.INTERNAL, diag);
    return readBufferRecord(dv, 0) as FfiBuffer<D>;
  }

  /** @internal whether this holds exactly `words` (for reuse across calls). */
  _sameAs(from: number, to: number): boolean {
    return this.#words.length === to - from && sameFlatWords(this.#words, from);
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
 * dictionary attribute), decoded lazily by name. Immutable: it reads a
 * private copy of its part of the call frame, valid after the call.
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
  readonly #words: readonly number[];
  readonly #at: readonly number[];
  #names: string[] | undefined;
  /** Nested dictionaries made so far, by entry (immutable, so made once). */
  #nested: (Dictionary | undefined)[] | undefined;
  /**
   * The last immutable value decoded per entry (strings, numbers, bigints,
   * booleans, dictionaries; never arrays, which are fresh on every get) and
   * the spec it was decoded with (NATURAL without a kind).
   */
  #memo: unknown[] | undefined;
  #memoSpec: (AttrSpec | undefined)[] | undefined;

  /**
   * @internal built by the decoder: a private copy of the attribute records
   * (int32 words) and where each entry's record starts in it.
   */
  constructor(words: readonly number[], at: readonly number[]) {
    this.#words = words;
    this.#at = at;
  }

  /** Number of entries. */
  get size(): number {
    return this.#at.length;
  }

  /** Entry names, sorted as the runtime sorted them. */
  keys(): string[] {
    if (this.#names === undefined) {
      const words = this.#words;
      this.#names = this.#at.map((w) => wordsString(words, w + 4, words[w + 2]!));
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
    return i < 0 ? undefined : this.#words[this.#at[i]!] as AttrType;
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
    const spec = kind === undefined ? NATURAL : specOfKind(kind);
    const memoSpec = this.#memoSpec ??= [];
    if (memoSpec[i] === spec) return this.#memo![i] as AttrValue;
    const v = spec === NATURAL ? this.#natural(i) : this.#as(i, spec);
    if (v instanceof DecodeFailure) throw new FfiError(ErrorCode.INTERNAL, v.message);
    if (typeof v !== "object" || v instanceof Dictionary) {
      (this.#memo ??= [])[i] = v;
      memoSpec[i] = spec;
    }
    return v as AttrValue;
  }

  /** Every entry decoded to its natural type. */
  toObject(): Record<string, AttrValue> {
    const out: Record<string, AttrValue> = {};
    const names = this.keys();
    for (let i = 0; i < names.length; i++) out[names[i]!] = this.#natural(i) as AttrValue;
    return out;
  }

  /** @internal whether this holds exactly flat buffer words [from, to) (for reuse). */
  _sameAs(from: number, to: number): boolean {
    return this.#words.length === to - from && sameFlatWords(this.#words, from);
  }

  #natural(i: number): unknown {
    const words = this.#words, w = this.#at[i]!;
    if (words[w] === AttrType.DICTIONARY) return this.#dict(i);
    return naturalAttrValue(toScratch(words, w, 2 * words[w + 1]!), 0);
  }

  #as(i: number, spec: AttrSpec): unknown {
    const words = this.#words, w = this.#at[i]!;
    if (words[w] === AttrType.DICTIONARY && spec.type === AttrType.DICTIONARY && !spec.pointer) {
      return this.#dict(i);
    }
    return attrRecordValue(toScratch(words, w, 2 * words[w + 1]!), 0, spec);
  }

  #dict(i: number): Dictionary {
    const nested = this.#nested ??= [];
    return nested[i] ??= dictionaryOfRecord(this.#words, this.#at[i]!);
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

/** Where `count` consecutive attribute records start in `words`, from word `w`. */
export function recordsAt(words: readonly number[], w: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    out[i] = w;
    w += 2 * words[w + 1]!;
  }
  return out;
}

/** The Dictionary of the dictionary record at word `w` of `words` (shares `words`). */
export function dictionaryOfRecord(words: readonly number[], w: number): Dictionary {
  const v = w + 4 + 2 * ((words[w + 2]! + 7) >> 3);
  return new Dictionary(words, recordsAt(words, v + 2, words[v]!));
}

const wordDecoder = new TextDecoder();

/** `len` bytes from word `w` of `words` as a string (ASCII fast path). */
function wordsString(words: readonly number[], w: number, len: number): string {
  let s = "";
  for (let i = 0; i < len; i++) {
    const c = (words[w + (i >> 2)]! >>> (8 * (i & 3))) & 0xff;
    if (c >= 0x80) {
      const dv = toScratch(words, w, (len + 3) >> 2);
      return wordDecoder.decode(new Uint8Array(dv.buffer, 0, len));
    }
    s += String.fromCharCode(c);
  }
  return s;
}

const SPECS = new Map<string, AttrSpec>();
/** The spec of "no kind: the natural type" in Dictionary's memo. */
const NATURAL: AttrSpec = { type: 0 as AttrType, dtype: 0, pointer: false };

/** attrSpecOf for Dictionary lookups, made once per kind. */
function specOfKind(kind: AttrKind): AttrSpec {
  let spec = SPECS.get(kind);
  if (spec === undefined) SPECS.set(kind, spec = attrSpecOf(kind));
  return spec;
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
