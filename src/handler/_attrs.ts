/**
 * Decoding of flattened attribute records (layout in native/handler_flatten.c),
 * the {@link Dictionary} over them and the attribute kinds a binding or a
 * lookup asks for. A dictionary decodes its entries with the record
 * decoders, which give a dictionary attribute as a Dictionary: one file
 * holds both ends.
 *
 * @module
 */
import { AttrType, attrTypeName, DataType } from "../abi/enums.ts";
import { dtypeName, dtypeWidth } from "./_dtype.ts";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { copyWords, sameFlatWords, toScratch } from "./_flat.ts";

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
