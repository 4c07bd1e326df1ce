/**
 * Reading and writing NumPy `.npy` files (format versions 1.0, 2.0 and 3.0)
 * as {@link NpyArray}s: a {@link DataType}, a shape and a native-endian,
 * C-order TypedArray.
 *
 * NumPy dtypes map to XLA data types: `b1` PRED, `i1`…`i8` S8…S64, `u1`…`u8`
 * U8…U64, `f2` F16, `f4` F32, `f8` F64, `c8` C64, `c16` C128. NumPy has no
 * names for BF16, the F8 family, F4E2M1FN, F8E8M0FNU or the sub-byte
 * integers: when ml_dtypes' types are saved, the file says only "void of N
 * bytes" (`'<V2'` for bfloat16, `'|V1'` for float8_* , float4_e2m1fn, int4,
 * uint4, …). Reading such a file needs `{ voidAs: DataType.BF16 }` (or the
 * one-byte type) to say what the bytes are; {@link writeNpy} writes these
 * types the same way, so NumPy with ml_dtypes reads them back with
 * `np.load(f).view(ml_dtypes.bfloat16)`.
 *
 * Reading byte-swaps big-endian data to native order and turns Fortran-order
 * data into C order (`fortranOrder` reports what the file had); writing is
 * always little-endian, C order, format 1.0 (2.0 for headers over 64 KiB).
 * Both refuse a rank above {@link NPY_MAX_DIMS} (64, NumPy 2.x's limit).
 *
 * @example
 * ```ts
 * import { readNpy, writeNpy } from "@deno-xla/ffi/npy";
 * import { DataType } from "@deno-xla/ffi";
 *
 * const bytes = writeNpy({ dtype: DataType.F32, shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) });
 * const back = readNpy(bytes);
 * console.log(back.shape, back.data); // [ 2, 2 ] Float32Array(4) [ 1, 2, 3, 4 ]
 * ```
 *
 * @module
 */
import { type DataType, ErrorCode } from "./abi/enums.ts";
import { FfiError } from "./errors.ts";
import { type DataTypedArray, dataTypeInfo, dataTypeName } from "./abi/dtype.ts";
import { _DATA_TYPE_FACTS } from "./abi/_facts.generated.ts";

/** An n-dimensional array as read from or written to a `.npy` file. */
export interface NpyArray {
  /** The element type. */
  dtype: DataType;
  /** Dimensions, outermost first; `[]` for a 0-d (scalar) array. */
  shape: number[];
  /**
   * The elements in C order, native-endian, viewed as
   * {@link typedArrayFor}`(dtype)` (C64/C128 interleave real and imaginary
   * parts).
   */
  data: DataTypedArray;
  /** Whether the file stored the data in Fortran order (the data here is C order). */
  fortranOrder: boolean;
}

/** What {@link writeNpy} needs: any view of the right byte length will do. */
export interface NpyArrayLike {
  /** The element type. */
  dtype: DataType;
  /** Dimensions, outermost first. */
  shape: readonly number[];
  /** Product(shape) × ByteWidth bytes of C-order, native-endian elements. */
  data: ArrayBufferView;
}

/** Options of {@link readNpy} and {@link loadNpy}. */
export interface ReadNpyOptions {
  /**
   * The data type of a void dtype (`'<V2'`, `'|V1'`), as NumPy writes
   * ml_dtypes' types: BF16 for `V2`, or one of the F8 types, F4E2M1FN,
   * F8E8M0FNU, S4/U4/S2/U2/S1/U1 for `V1`.
   */
  voidAs?: DataType;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // "\x93NUMPY"

/**
 * The most dimensions a `.npy` array may have: NumPy 2.x's `NPY_MAXDIMS`
 * (64; NumPy 1.x allowed 32). NumPy itself cannot create or load an array of
 * higher rank, so {@link readNpy} and {@link writeNpy} refuse one.
 *
 * @example
 * ```ts
 * import { NPY_MAX_DIMS } from "@deno-xla/ffi/npy";
 * console.log(NPY_MAX_DIMS); // 64
 * ```
 */
export const NPY_MAX_DIMS = 64;
const _LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A value as an error message shows it (never throws). */
function _shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}…` : v);
  if (typeof v === "bigint") return `${v}n`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor?.name ?? "typed array"}`;
  if (v instanceof ArrayBuffer) return "an ArrayBuffer";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "function") return "a function";
  if (v !== null && typeof v === "object") return "an object";
  return String(v);
}

/**
 * FfiError INVALID_ARGUMENT unless `options` is undefined, null or an object
 * whose `voidAs`, when given, is a data type (whether it is one NumPy stores
 * as void bytes is checked when a void dtype is read).
 */
function _checkOptions(options: unknown, fn: string): void {
  if (options === undefined || options === null) return;
  if (typeof options !== "object") {
    throw _bad(`${fn}: options must be an object, got ${_shown(options)}`);
  }
  const voidAs = (options as ReadNpyOptions).voidAs;
  if (voidAs !== undefined && !_isDataType(voidAs)) {
    throw _bad(`${fn}: voidAs ${_shown(voidAs)} is not a data type`);
  }
}

function _isDataType(dt: unknown): boolean {
  try {
    dataTypeInfo(dt as DataType);
    return true;
  } catch {
    return false;
  }
}

/** FfiError INVALID_ARGUMENT unless `path` is a string or a URL. */
function _checkPath(path: unknown, fn: string): void {
  if (typeof path !== "string" && !(path instanceof URL)) {
    throw _bad(`${fn}: the path must be a string or a URL, got ${_shown(path)}`);
  }
}

/** A view's byte length; 0 for a DataView whose buffer was shrunk below it (its getter throws). */
function _viewBytes(view: ArrayBufferView): number {
  try {
    return view.byteLength;
  } catch {
    return 0;
  }
}

function _bad(message: string): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

// ---------------------------------------------------------------------------
// The header: a Python dict literal.

type _PyValue = string | number | boolean | null | _PyValue[] | Map<string, _PyValue>;

const _ATOM = /[-+]?\d+L?|True|False|None/y;

class _Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw _bad(
      `Malformed .npy header: ${what} at offset ${this.pos} in ${JSON.stringify(this.text)}`,
    );
  }

  skip(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] as string)) this.pos++;
  }

  peek(): string {
    this.skip();
    return this.text[this.pos] ?? "";
  }

  expect(c: string): void {
    if (this.peek() !== c) this.fail(`expected '${c}'`);
    this.pos++;
  }

  value(depth = 0): _PyValue {
    if (depth > 32) this.fail("nesting too deep");
    const c = this.peek();
    if (c === "{") return this.dict(depth);
    if (c === "(") return this.sequence(")", depth);
    if (c === "[") return this.sequence("]", depth);
    if (c === "'" || c === '"') return this.string();
    _ATOM.lastIndex = this.pos; // sticky: no copy of the rest of the header per value
    const m = _ATOM.exec(this.text);
    if (m === null) this.fail("expected a value");
    this.pos += m[0].length;
    if (m[0] === "True") return true;
    if (m[0] === "False") return false;
    if (m[0] === "None") return null;
    return Number(m[0].replace("L", ""));
  }

  string(): string {
    const quote = this.text[this.pos] as string;
    let out = "";
    this.pos++;
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail("unterminated string");
      if (c === quote) return out;
      if (c === "\\") {
        const e = this.text[this.pos++];
        if (e === undefined) this.fail("unterminated string");
        out += e === "n" ? "\n" : e === "t" ? "\t" : e;
      } else out += c;
    }
  }

  sequence(close: string, depth: number): _PyValue[] {
    this.pos++;
    const items: _PyValue[] = [];
    while (this.peek() !== close) {
      items.push(this.value(depth + 1));
      if (this.peek() === ",") this.pos++;
      else if (this.peek() !== close) this.fail(`expected ',' or '${close}'`);
    }
    this.pos++;
    return items;
  }

  dict(depth: number): Map<string, _PyValue> {
    this.pos++;
    const map = new Map<string, _PyValue>();
    while (this.peek() !== "}") {
      const c = this.peek();
      if (c !== "'" && c !== '"') this.fail("expected a string key");
      const key = this.string();
      this.expect(":");
      map.set(key, this.value(depth + 1));
      if (this.peek() === ",") this.pos++;
      else if (this.peek() !== "}") this.fail("expected ',' or '}'");
    }
    this.pos++;
    return map;
  }
}

// ---------------------------------------------------------------------------
// dtypes.

interface _Descr {
  dtype: DataType;
  /** Bytes per element. */
  itemsize: number;
  /** Bytes per byte-swapped unit (half the item for complex). */
  swapUnit: number;
  bigEndian: boolean;
}

/** NumPy's kind letters of .npy type codes. */
const _LETTERS: Readonly<Record<string, string>> = {
  pred: "b",
  signed: "i",
  unsigned: "u",
  float: "f",
  complex: "c",
};

/** The .npy type code (kind letter and bytes, `f4`) of each data type NumPy has itself. */
const _NUMPY: Record<string, DataType> = Object.fromEntries(
  _DATA_TYPE_FACTS.filter((f) => f.module === "numpy").map((f) => [
    `${_LETTERS[f.kind]}${f.byteWidth}`,
    f.value,
  ]),
);

/** Data types NumPy can only store as void bytes (ml_dtypes' types). */
const _VOID_TYPES = new Set<number>(
  _DATA_TYPE_FACTS.filter((f) => f.module === "ml_dtypes").map((f) => f.value),
);

function _parseDescr(descr: _PyValue, options: ReadNpyOptions): _Descr {
  if (typeof descr !== "string") {
    throw _bad(
      `Unsupported .npy dtype ${_repr(descr)}: structured dtypes have no XLA data type`,
    );
  }
  const m = /^([<>|=]?)([a-zA-Z?])(\d*)$/.exec(descr);
  if (m === null) throw _bad(`Unsupported .npy dtype '${descr}'`);
  const order = m[1] as string;
  let kind = m[2] as string;
  let size = m[3] === "" ? NaN : Number(m[3]);
  if (kind === "?") [kind, size] = ["b", isNaN(size) ? 1 : size];
  const bigEndian = order === ">" || (order === "=" && !_LITTLE);
  if (kind === "V") {
    const dt = options.voidAs;
    if (dt === undefined) {
      throw _bad(
        `Unsupported .npy dtype '${descr}': NumPy stores ml_dtypes types (bfloat16, float8_*, ` +
          `int4, …) as raw void bytes; pass voidAs (e.g. DataType.BF16) to read them`,
      );
    }
    if (!_VOID_TYPES.has(dt) || dataTypeInfo(dt).byteWidth !== size) {
      throw _bad(
        `Cannot read .npy dtype '${descr}' as ${dataTypeName(dt)}: voidAs must be a data type ` +
          `NumPy has no name for, of ${size} byte(s)`,
      );
    }
    return { dtype: dt, itemsize: size, swapUnit: size, bigEndian };
  }
  const key = `${kind}${size}`;
  const dt = Object.hasOwn(_NUMPY, key) ? _NUMPY[key] : undefined;
  if (dt === undefined) {
    throw _bad(`Unsupported .npy dtype '${descr}': no XLA data type matches it`);
  }
  const itemsize = size;
  return { dtype: dt, itemsize, swapUnit: kind === "c" ? itemsize / 2 : itemsize, bigEndian };
}

function _descrOf(dt: DataType): string {
  const info = dataTypeInfo(dt);
  if (info.byteWidth === 0) throw _bad(`Cannot write ${info.name} to a .npy file: it has no data`);
  const endian = info.byteWidth === 1 ? "|" : "<";
  if (_VOID_TYPES.has(dt)) return `${endian}V${info.byteWidth}`;
  for (const [key, value] of Object.entries(_NUMPY)) {
    if (value === dt) return `${endian}${key}`;
  }
  throw _bad(`Cannot write ${info.name} to a .npy file`);
}

function _repr(v: _PyValue): string {
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `'${k}': ${_repr(x)}`).join(", ")}}`;
  if (Array.isArray(v)) return `[${v.map(_repr).join(", ")}]`;
  if (typeof v === "string") return `'${v}'`;
  return String(v);
}

// ---------------------------------------------------------------------------
// Reading.

/**
 * Parses the bytes of a `.npy` file (format 1.0, 2.0 or 3.0). Bad magic,
 * malformed headers, unsupported dtypes (named in the message), truncated
 * data, `bytes` that are not a Uint8Array (or are detached) and options that
 * are not an object or whose `voidAs` is no data type throw FfiError
 * INVALID_ARGUMENT.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { readNpy, writeNpy } from "@deno-xla/ffi/npy";
 * const bytes = writeNpy({ dtype: DataType.S32, shape: [2, 2], data: new Int32Array([1, 2, 3, 4]) });
 * const a = readNpy(bytes);
 * console.log(a.dtype === DataType.S32, a.shape, a.data); // true [ 2, 2 ] Int32Array(4) [ 1, 2, 3, 4 ]
 * ```
 */
export function readNpy(bytes: Uint8Array, options?: ReadNpyOptions): NpyArray {
  if (!(bytes instanceof Uint8Array)) {
    throw _bad(`readNpy: bytes must be a Uint8Array, got ${_shown(bytes)}`);
  }
  if ((bytes.buffer as ArrayBuffer).detached === true) {
    throw _bad("readNpy: the bytes' ArrayBuffer is detached (transferred)");
  }
  _checkOptions(options, "readNpy");
  options ??= {};
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw _bad("Not a .npy file: the magic string \\x93NUMPY is missing");
  }
  const major = bytes[6] as number;
  const minor = bytes[7] as number;
  let headerLength: number;
  let start: number;
  if (major === 1) {
    headerLength = (bytes[8] as number) | ((bytes[9] as number) << 8);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw _bad("Truncated .npy header");
    headerLength = new DataView(bytes.buffer, bytes.byteOffset + 8, 4).getUint32(0, true);
    start = 12;
  } else {
    throw _bad(`Unsupported .npy format version ${major}.${minor} (1.0, 2.0 and 3.0 are known)`);
  }
  if (start + headerLength > bytes.length) {
    throw _bad(
      `Truncated .npy header: ${headerLength} bytes announced, ${bytes.length - start} present`,
    );
  }
  const text = new TextDecoder(major === 3 ? "utf-8" : "latin1")
    .decode(bytes.subarray(start, start + headerLength));
  const parser = new _Parser(text);
  const header = parser.value();
  if (parser.peek() !== "") parser.fail("unexpected text after the header");
  if (
    !(header instanceof Map) || header.size !== 3 || !header.has("descr") ||
    !header.has("fortran_order") || !header.has("shape")
  ) {
    throw _bad(
      `Malformed .npy header: expected a dict with exactly the keys 'descr', 'fortran_order' ` +
        `and 'shape', got ${_repr(header)}`,
    );
  }
  const fortranOrder = header.get("fortran_order");
  if (typeof fortranOrder !== "boolean") {
    throw _bad(
      `Malformed .npy header: fortran_order is ${_repr(fortranOrder ?? null)}, not a bool`,
    );
  }
  const shapeValue = header.get("shape");
  if (
    !Array.isArray(shapeValue) ||
    !shapeValue.every((d) => typeof d === "number" && Number.isSafeInteger(d) && d >= 0)
  ) {
    throw _bad(`Malformed .npy header: shape ${_repr(shapeValue ?? null)} is not a tuple of sizes`);
  }
  const shape = shapeValue as number[];
  if (shape.length > NPY_MAX_DIMS) {
    throw _bad(
      `.npy shape has ${shape.length} dimensions; NumPy allows at most ${NPY_MAX_DIMS} ` +
        `(NPY_MAXDIMS of NumPy 2.x)`,
    );
  }
  const descr = _parseDescr(header.get("descr") ?? null, options);
  const count = shape.reduce((a, b) => a * b, 1);
  const byteLength = count * descr.itemsize;
  if (!Number.isSafeInteger(byteLength)) {
    throw _bad(`.npy shape (${shape.join(", ")}) is too large`);
  }
  const dataStart = start + headerLength;
  const present = bytes.length - dataStart;
  if (present < byteLength) {
    throw _bad(
      `Truncated .npy data: shape (${shape.join(", ")}) of '${header.get("descr")}' needs ` +
        `${byteLength} bytes, the file has ${present}`,
    );
  }
  const raw = bytes.slice(dataStart, dataStart + byteLength); // a fresh, aligned buffer
  if (descr.bigEndian === _LITTLE && descr.swapUnit > 1) _swap(raw, descr.swapUnit);
  const ctor = dataTypeInfo(descr.dtype).typedArray!;
  let data: DataTypedArray = new ctor(raw.buffer, 0, byteLength / ctor.BYTES_PER_ELEMENT);
  if (fortranOrder && shape.length > 1 && count > 0) {
    data = _fortranToC(data, shape, dataTypeInfo(descr.dtype).lanes);
  }
  return { dtype: descr.dtype, shape, data, fortranOrder };
}

function _swap(raw: Uint8Array, unit: number): void {
  for (let i = 0; i + unit <= raw.length; i += unit) {
    for (let a = i, b = i + unit - 1; a < b; a++, b--) {
      const t = raw[a] as number;
      raw[a] = raw[b] as number;
      raw[b] = t;
    }
  }
}

/** Reorders Fortran-order elements (first index fastest) into C order. */
function _fortranToC(src: DataTypedArray, shape: number[], lanes: number): DataTypedArray {
  // Move raw bits of element-sized lanes (never through number: NaN payloads stay).
  const unit = src.BYTES_PER_ELEMENT;
  const bytes = new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  const view = unit === 1
    ? bytes
    : unit === 2
    ? new Uint16Array(bytes.buffer)
    : unit === 4
    ? new Uint32Array(bytes.buffer)
    : new BigUint64Array(bytes.buffer);
  // Dimensions of size 1 do not change the order: dropping them keeps the
  // index carry below amortized O(1) per element (every dimension left is ≥ 2).
  const dims: number[] = [];
  const stride: number[] = [];
  let s = lanes;
  for (const d of shape) {
    if (d !== 1) {
      dims.push(d);
      stride.push(s);
    }
    s *= d;
  }
  if (dims.length < 2) return src; // a vector in disguise: Fortran and C order agree
  const out = new (view.constructor as { new (n: number): typeof view })(view.length);
  const rank = dims.length;
  const index = new Array<number>(rank).fill(0);
  let from = 0;
  for (let to = 0; to < out.length; to += lanes) {
    for (let l = 0; l < lanes; l++) {
      (out as Uint8Array)[to + l] = (view as Uint8Array)[from + l] as number;
    }
    // Advance the C-order multi-index (last dimension fastest).
    for (let k = rank - 1; k >= 0; k--) {
      index[k]!++;
      from += stride[k] as number;
      if (index[k]! < (dims[k] as number)) break;
      from -= (index[k] as number) * (stride[k] as number);
      index[k] = 0;
    }
  }
  const ctor = src.constructor as { new (b: ArrayBuffer): DataTypedArray };
  return new ctor(out.buffer as ArrayBuffer);
}

// ---------------------------------------------------------------------------
// Writing.

/**
 * The bytes of a `.npy` file (format 1.0, little-endian, C order) holding
 * an array. `shape` must be an array of integers ≥ 0 and `data` a view
 * holding exactly product(shape) × ByteWidth bytes (FfiError
 * INVALID_ARGUMENT otherwise); BF16 and other types NumPy has no name for are
 * written as void (`'<V2'`, `'|V1'`), as NumPy saves ml_dtypes arrays.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { writeNpy } from "@deno-xla/ffi/npy";
 * const bytes = writeNpy({ dtype: DataType.F32, shape: [3], data: new Float32Array([1, 2, 3]) });
 * console.log(bytes.length); // 140: a 128-byte header and 12 bytes of data
 * ```
 */
export function writeNpy(array: NpyArrayLike): Uint8Array {
  if (array === null || typeof array !== "object") {
    throw _bad(`writeNpy: expected an array { dtype, shape, data }, got ${_shown(array)}`);
  }
  const info = dataTypeInfo(array.dtype);
  const descr = _descrOf(array.dtype);
  if (!Array.isArray(array.shape)) {
    throw _bad(`writeNpy: shape must be an array of dimensions, got ${_shown(array.shape)}`);
  }
  const shape: unknown[] = [...array.shape];
  if (!shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw _bad(
      `Invalid shape [${shape.map(_shown).join(", ")}]: dimensions must be integers ≥ 0`,
    );
  }
  if (shape.length > NPY_MAX_DIMS) {
    throw _bad(
      `Cannot write a .npy array of ${shape.length} dimensions: NumPy allows at most ` +
        `${NPY_MAX_DIMS} (NPY_MAXDIMS of NumPy 2.x)`,
    );
  }
  const count = (shape as number[]).reduce((a, b) => a * b, 1);
  const byteLength = count * info.byteWidth;
  if (ArrayBuffer.isView(array.data) && (array.data.buffer as ArrayBuffer).detached === true) {
    throw _bad("writeNpy: the data's ArrayBuffer is detached (transferred)");
  }
  const have = ArrayBuffer.isView(array.data) ? _viewBytes(array.data) : -1;
  if (have !== byteLength) {
    throw _bad(
      `Data of ${have < 0 ? "no" : have} bytes does not fit shape [${
        shape.join(", ")
      }] of ${info.name} (${byteLength} bytes)`,
    );
  }
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  // NumPy's own layout: spare room for the first dimension to grow to 21 digits, then
  // spaces and a newline up to a multiple of 64 bytes (always at least one space).
  const grow = shape.length > 0 ? " ".repeat(Math.max(0, 21 - String(shape[0]).length)) : "";
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }${grow}`;
  let prefix = 10;
  let pad = 64 - ((prefix + dict.length + 1) % 64);
  if (dict.length + 1 + pad > 0xffff) {
    prefix = 12;
    pad = 64 - ((prefix + dict.length + 1) % 64);
  }
  const version = prefix === 10 ? 1 : 2;
  const header = dict + " ".repeat(pad) + "\n";
  const total = prefix + header.length;
  const out = new Uint8Array(total + byteLength);
  out.set(MAGIC, 0);
  out[6] = version;
  out[7] = 0;
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, header.length, true);
  else dv.setUint32(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[prefix + i] = header.charCodeAt(i);
  const data = array.data;
  out.set(new Uint8Array(data.buffer, data.byteOffset, byteLength), total);
  if (!_LITTLE && info.byteWidth > 1) {
    _swap(out.subarray(total), info.kind === "complex" ? info.byteWidth / 2 : info.byteWidth);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Files.

/**
 * Reads a `.npy` file (see {@link readNpy}). A file that cannot be read
 * throws FfiError NOT_FOUND or INVALID_ARGUMENT naming the path, a path that
 * is not a string or a URL FfiError INVALID_ARGUMENT.
 *
 * @example
 * ```ts ignore
 * import { loadNpy } from "@deno-xla/ffi/npy";
 * const a = loadNpy("weights.npy");
 * console.log(a.shape, a.data.length);
 * ```
 */
export function loadNpy(path: string | URL, options?: ReadNpyOptions): NpyArray {
  _checkPath(path, "loadNpy");
  _checkOptions(options, "loadNpy");
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (e) {
    const code = e instanceof Deno.errors.NotFound
      ? ErrorCode.NOT_FOUND
      : ErrorCode.INVALID_ARGUMENT;
    throw new FfiError(code, `Cannot read ${String(path)}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return readNpy(bytes, options);
  } catch (e) {
    if (e instanceof FfiError) {
      throw new FfiError(e.code, `${String(path)}: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

/**
 * Writes an array to a `.npy` file (see {@link writeNpy}); a path that is not
 * a string or a URL is an FfiError INVALID_ARGUMENT.
 *
 * @example
 * ```ts ignore
 * import { DataType } from "@deno-xla/ffi";
 * import { saveNpy } from "@deno-xla/ffi/npy";
 * saveNpy("out.npy", { dtype: DataType.F64, shape: [2], data: new Float64Array([1, 2]) });
 * ```
 */
export function saveNpy(path: string | URL, array: NpyArrayLike): void {
  _checkPath(path, "saveNpy");
  const bytes = writeNpy(array);
  try {
    Deno.writeFileSync(path, bytes);
  } catch (e) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Cannot write ${String(path)}: ${(e as Error).message}`,
      { cause: e },
    );
  }
}
