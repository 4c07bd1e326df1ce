/**
 * Call-frame attribute values: typed scalars and arrays, strings and nested
 * dictionaries, with the element types XLA's CallFrameBuilder accepts.
 *
 * @module
 */
import { AttrType, DataType, ErrorCode } from "../abi/enums.ts";
import { _describeValue, FfiError } from "../errors.ts";
import { _FRAME_LIMITS } from "../abi/_facts.generated.ts";

/**
 * A scalar attribute with an explicit element type (made by {@link scalar},
 * which checks the value).
 *
 * @example
 * ```ts
 * import { DataType, scalar } from "@deno-xla/ffi";
 * console.log(scalar(DataType.U8, 255).value); // 255
 * ```
 */
export class ScalarAttr {
  /** The element type. */
  readonly dtype: DataType;
  /** The value. */
  readonly value: number | bigint | boolean;
  /**
   * Makes a scalar attribute without checking it (prefer {@link scalar}).
   *
   * @param dtype element type
   * @param value the value
   */
  constructor(dtype: DataType, value: number | bigint | boolean) {
    this.dtype = dtype;
    this.value = value;
  }
}

/**
 * An array attribute with an explicit element type (made by {@link array},
 * which checks the values).
 *
 * @example
 * ```ts
 * import { array, DataType } from "@deno-xla/ffi";
 * console.log(array(DataType.S32, [1, 2]).values); // [ 1, 2 ]
 * ```
 */
export class ArrayAttr {
  /** The element type. */
  readonly dtype: DataType;
  /** The elements. */
  readonly values: ArrayLike<number | bigint>;
  /**
   * Makes an array attribute without checking it (prefer {@link array}); its
   * elements are checked when a call frame is laid out with it.
   *
   * @param dtype element type
   * @param values the elements
   */
  constructor(dtype: DataType, values: ArrayLike<number | bigint>) {
    this.dtype = dtype;
    this.values = values;
  }
}

/** Integer typed arrays and float typed arrays usable as array attributes. */
export type NumericTypedArray =
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/**
 * Any attribute value: `boolean` (PRED), `number` (S64 when an integer, else
 * F64), `bigint` (S64), `string`, a numeric typed array (array of its element
 * type), `number[]` (S64 or F64 array), {@link ScalarAttr}, {@link ArrayAttr},
 * or a nested dictionary (plain object or `Map`).
 */
export type AttrInput =
  | boolean
  | number
  | bigint
  | string
  | ScalarAttr
  | ArrayAttr
  | NumericTypedArray
  | readonly number[]
  | AttrDictionary;

/** A dictionary of attributes (nested dictionaries allowed). */
export type AttrDictionary =
  | { readonly [name: string]: AttrInput }
  | ReadonlyMap<string, AttrInput>;

/** Scalar/array element types attributes may use, with byte width and range. */
const NUMERIC: ReadonlyMap<
  DataType,
  { width: number; min?: number | bigint; max?: number | bigint }
> = new Map<DataType, { width: number; min?: number | bigint; max?: number | bigint }>([
  [DataType.PRED, { width: 1, min: 0, max: 1 }],
  [DataType.S8, { width: 1, min: -128, max: 127 }],
  [DataType.S16, { width: 2, min: -32768, max: 32767 }],
  [DataType.S32, { width: 4, min: -2147483648, max: 2147483647 }],
  [DataType.S64, { width: 8, min: -(2n ** 63n), max: 2n ** 63n - 1n }],
  [DataType.U8, { width: 1, min: 0, max: 255 }],
  [DataType.U16, { width: 2, min: 0, max: 65535 }],
  [DataType.U32, { width: 4, min: 0, max: 4294967295 }],
  [DataType.U64, { width: 8, min: 0n, max: 2n ** 64n - 1n }],
  [DataType.F32, { width: 4 }],
  [DataType.F64, { width: 8 }],
]);

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** Checks one value against a dtype; returns it as number or bigint. */
export function _checkValue(dtype: DataType, v: unknown, what: string): number | bigint {
  const info = NUMERIC.get(dtype);
  if (!info) {
    bad(`Unsupported attribute data type ${DataType[dtype] ?? dtype} for ${what}`);
  }
  if (dtype === DataType.PRED) {
    if (typeof v === "boolean") return v ? 1 : 0;
    if (v === 0 || v === 1) return v;
    bad(`${what}: PRED expects a boolean, got ${String(v)}`);
  }
  if (dtype === DataType.F32 || dtype === DataType.F64) {
    if (typeof v === "number") return v;
    bad(`${what}: ${DataType[dtype]} expects a number, got ${typeof v}`);
  }
  const wide = info.width === 8;
  if (typeof v === "bigint") {
    if (v < BigInt(info.min!) || v > BigInt(info.max!)) {
      bad(`${what}: ${v} is out of range for ${DataType[dtype]}`);
    }
    return wide ? v : Number(v);
  }
  if (typeof v === "number") {
    if (!Number.isInteger(v)) bad(`${what}: ${DataType[dtype]} expects an integer, got ${v}`);
    if (wide) {
      if (!Number.isSafeInteger(v)) {
        bad(`${what}: ${v} is not a safe integer; pass ${DataType[dtype]} values as bigint`);
      }
      const b = BigInt(v);
      if (b < BigInt(info.min!) || b > BigInt(info.max!)) {
        bad(`${what}: ${v} is out of range for ${DataType[dtype]}`);
      }
      return b;
    }
    if (v < (info.min as number) || v > (info.max as number)) {
      bad(`${what}: ${v} is out of range for ${DataType[dtype]}`);
    }
    return v;
  }
  bad(`${what}: ${DataType[dtype]} expects a number or bigint, got ${typeof v}`);
}

/** Byte width of an attribute element type (0 if not an attribute type). */
export function _attrWidth(dtype: DataType): number {
  return NUMERIC.get(dtype)?.width ?? 0;
}

/**
 * A scalar attribute of an explicit type (bool → PRED, i8..i64, u8..u64,
 * f32, f64; 64-bit values as bigint or safe number).
 *
 * @example
 * ```ts
 * import { DataType, scalar } from "@deno-xla/ffi";
 * const n = scalar(DataType.S32, 7);
 * console.log(n.dtype === DataType.S32, n.value); // true 7
 * ```
 */
export function scalar(dtype: DataType, value: number | bigint | boolean): ScalarAttr {
  return new ScalarAttr(dtype, _checkValue(dtype, value, "scalar attribute"));
}

/**
 * An array attribute of an explicit element type (i8..i64, u8..u64, f32, f64).
 *
 * @example
 * ```ts
 * import { array, DataType } from "@deno-xla/ffi";
 * const axes = array(DataType.S64, [0, 2, 3]);
 * console.log(axes.values.length); // 3
 * ```
 */
export function array(dtype: DataType, values: ArrayLike<number | bigint>): ArrayAttr {
  if (dtype === DataType.PRED) bad("Array attributes of PRED are not supported by XLA");
  if (_sameTyped(values, dtype)) {
    // A typed array of the element type holds only values of that type: its bytes are kept
    // as they are (a copy), a NaN's payload and a signalling NaN included, which reading
    // each element into a JS number would quiet.
    return new ArrayAttr(dtype, _typedCopy(values));
  }
  const out: (number | bigint)[] = [];
  for (let i = 0; i < values.length; i++) {
    out.push(_checkValue(dtype, values[i], `array attribute element ${i}`));
  }
  return new ArrayAttr(dtype, out);
}

/** A normalised attribute entry (private to the builder). */
export interface _AttrEntry {
  name: string;
  nameBytes: Uint8Array | null; // non-ASCII names only
  nameLen: number;
  type: AttrType;
  dtype: DataType;
  value: number | bigint; // SCALAR
  values: ArrayLike<number | bigint> | NumericTypedArray | null; // ARRAY
  str: string; // STRING
  strBytes: Uint8Array | null; // non-ASCII strings only
  strLen: number;
  dict: _AttrEntry[] | null; // DICTIONARY
  size: number; // serialised bytes
  /** The JS value, when the data type came from a plain number or number[] (for hints). */
  implicit?: string;
}

const encoder = new TextEncoder();

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

const TYPED: ReadonlyMap<unknown, DataType> = new Map<unknown, DataType>([
  [Int8Array, DataType.S8],
  [Int16Array, DataType.S16],
  [Int32Array, DataType.S32],
  [BigInt64Array, DataType.S64],
  [Uint8Array, DataType.U8],
  [Uint16Array, DataType.U16],
  [Uint32Array, DataType.U32],
  [BigUint64Array, DataType.U64],
  [Float32Array, DataType.F32],
  [Float64Array, DataType.F64],
]);

/**
 * @internal Whether `values` is a typed array of element type `dtype`
 * (`Float32Array` for F32): its bytes are the attribute's bytes, copied as
 * they are, never read element by element into JS numbers.
 */
/**
 * A copy of a typed array's bytes in an array of its type: an empty one for
 * a view with no bytes left (its buffer detached, or a resizable one shrunk
 * past it), which reads as no elements, as it does element by element.
 */
function _typedCopy(values: NumericTypedArray): NumericTypedArray {
  if (values.byteLength === 0) {
    return new (values.constructor as new (n: number) => NumericTypedArray)(0);
  }
  return values.slice();
}

export function _sameTyped(values: unknown, dtype: DataType): values is NumericTypedArray {
  return ArrayBuffer.isView(values) && TYPED.get(values.constructor) === dtype;
}

/**
 * @internal The little-endian bytes of numeric attribute values of element
 * type `dtype`, as a frame holds them: a typed array of that type as it is
 * (a NaN's payload, a signalling NaN), other values converted once.
 */
export function _attrBytes(dtype: DataType, values: ArrayLike<number | bigint>): Uint8Array {
  if (_sameTyped(values, dtype)) {
    const c = _typedCopy(values);
    return new Uint8Array(c.buffer, 0, c.byteLength);
  }
  const out = new Uint8Array(values.length * _attrWidth(dtype));
  _writeAttrValues(new DataView(out.buffer), dtype, values);
  return out;
}

/**
 * @internal Writes numeric attribute values that are not a typed array of
 * their element type into `dv` from its start, as {@link _attrBytes} converts
 * them (it calls this): `values.length * width` bytes, little-endian.
 */
export function _writeAttrValues(
  dv: DataView,
  dtype: DataType,
  values: ArrayLike<number | bigint>,
): void {
  const w = _attrWidth(dtype);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!, o = i * w;
    switch (dtype) {
      case DataType.PRED:
      case DataType.U8:
      case DataType.S8:
        dv.setUint8(o, Number(v) & 0xff);
        break;
      case DataType.S16:
      case DataType.U16:
        dv.setUint16(o, Number(v) & 0xffff, true);
        break;
      case DataType.S32:
      case DataType.U32:
        dv.setUint32(o, Number(v) >>> 0, true);
        break;
      case DataType.S64:
      case DataType.U64:
        dv.setBigUint64(o, BigInt.asUintN(64, BigInt(v)), true);
        break;
      case DataType.F32:
        dv.setFloat32(o, Number(v), true);
        break;
      case DataType.F64:
        dv.setFloat64(o, Number(v), true);
        break;
    }
  }
}

/**
 * The limits of a frame's attributes (native/abi_facts.h, docs/reliability.md):
 * entries per dictionary, dictionary nesting, name and string bytes, array
 * elements.
 */
export const _ATTR_LIMITS = {
  entries: _FRAME_LIMITS.maxAttrs,
  depth: _FRAME_LIMITS.maxDepth,
  name: _FRAME_LIMITS.maxName,
  string: _FRAME_LIMITS.maxString,
  array: _FRAME_LIMITS.maxArray,
} as const;

/**
 * @internal Whether a value is an attribute dictionary: a `Map`, or a plain
 * object (its prototype `Object.prototype` or null). Arrays, typed arrays
 * and instances of other classes (a `Date`, a `Set`) are not.
 */
export function _isDictionary(value: unknown): value is AttrDictionary {
  if (value instanceof Map) return true;
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Normalises a value into an entry; throws FfiError INVALID_ARGUMENT.
 * `depth`: how deeply the entry's dictionary nests (1 for an entry of the
 * frame's own dictionary).
 */
export function _makeEntry(
  name: string,
  value: AttrInput,
  dtype?: DataType,
  depth = 1,
): _AttrEntry {
  if (typeof name !== "string") bad(`Attribute names must be strings, got ${typeof name}`);
  const ascii = isAscii(name);
  const nameBytes = ascii ? null : encoder.encode(name);
  const nameLen = ascii ? name.length : nameBytes!.length;
  if (nameLen > _ATTR_LIMITS.name) {
    bad(
      `Attribute name '${name.slice(0, 32)}…' is ${nameLen} bytes, more than the ` +
        `${_ATTR_LIMITS.name} a name may have`,
    );
  }
  const e: _AttrEntry = {
    name,
    nameBytes,
    nameLen,
    type: AttrType.SCALAR,
    dtype: DataType.INVALID,
    value: 0,
    values: null,
    str: "",
    strBytes: null,
    strLen: 0,
    dict: null,
    size: 8 + pad8(nameLen),
  };
  const what = `attribute '${name}'`;
  if (dtype !== undefined && !(value instanceof ScalarAttr) && !(value instanceof ArrayAttr)) {
    if (
      typeof value === "number" || typeof value === "bigint" || typeof value === "boolean"
    ) {
      value = new ScalarAttr(dtype, _checkValue(dtype, value, what));
    } else if (Array.isArray(value) || ArrayBuffer.isView(value)) {
      value = array(dtype, value as ArrayLike<number | bigint>);
    } else {
      bad(`${what}: a data type applies only to numbers, bigints, booleans and arrays`);
    }
  }
  if (typeof value === "boolean") value = new ScalarAttr(DataType.PRED, value ? 1 : 0);
  else if (typeof value === "bigint") {
    value = new ScalarAttr(DataType.S64, _checkValue(DataType.S64, value, what));
  } else if (typeof value === "number") {
    e.implicit = String(value);
    value = Number.isInteger(value) && Number.isSafeInteger(value)
      ? new ScalarAttr(DataType.S64, BigInt(value))
      : new ScalarAttr(DataType.F64, value);
  }
  if (value instanceof ScalarAttr) {
    e.type = AttrType.SCALAR;
    e.dtype = value.dtype;
    e.value = _checkValue(value.dtype, value.value, what);
    e.size += 16;
    return e;
  }
  if (value instanceof ArrayAttr || ArrayBuffer.isView(value) || Array.isArray(value)) {
    let dt: DataType;
    let values: ArrayLike<number | bigint>;
    let recheck = false;
    if (value instanceof ArrayAttr) {
      dt = value.dtype;
      values = value.values;
      // Checked again below, as a ScalarAttr's value is: the attribute may have been made with
      // its constructor (unchecked) or its elements changed since. A typed array of the element
      // type holds only values of that type. XLA's frames hold an array attribute as a typed
      // vector (xla/ffi/call_frame.h: CallFrameBuilder::Array is std::vector<int32_t>, ...), so
      // every element it hands a handler is a value of the element type.
      recheck = !_sameTyped(values, dt);
    } else if (ArrayBuffer.isView(value)) {
      const t = TYPED.get(value.constructor);
      if (t === undefined) bad(`${what}: unsupported array type ${value.constructor.name}`);
      dt = t;
      values = value as NumericTypedArray;
    } else {
      const arr = value as readonly number[];
      e.implicit = `[${arr.join(", ")}]`;
      dt = arr.every((x) => Number.isSafeInteger(x)) ? DataType.S64 : DataType.F64;
      values = array(dt, arr).values;
    }
    if (_attrWidth(dt) === 0 || dt === DataType.PRED) {
      bad(`${what}: unsupported array element type ${DataType[dt] ?? dt}`);
    }
    if (values.length > _ATTR_LIMITS.array) {
      bad(
        `${what}: ${values.length} elements, more than the ${_ATTR_LIMITS.array} an array may have`,
      );
    }
    if (recheck) {
      const out = new Array<number | bigint>(values.length);
      for (let i = 0; i < values.length; i++) {
        out[i] = _checkValue(dt, values[i], `${what}: element ${i}`);
      }
      values = out;
    }
    e.type = AttrType.ARRAY;
    e.dtype = dt;
    e.values = values;
    e.size += 8 + pad8(values.length * _attrWidth(dt));
    return e;
  }
  if (typeof value === "string") {
    e.type = AttrType.STRING;
    e.str = value;
    if (isAscii(value)) e.strLen = value.length;
    else {
      e.strBytes = encoder.encode(value);
      e.strLen = e.strBytes.length;
    }
    if (e.strLen > _ATTR_LIMITS.string) {
      bad(`${what}: ${e.strLen} bytes, more than the ${_ATTR_LIMITS.string} a string may have`);
    }
    e.size += 8 + pad8(e.strLen);
    return e;
  }
  if (_isDictionary(value)) {
    const entries = value instanceof Map
      ? [...(value as ReadonlyMap<string, AttrInput>)]
      : Object.entries(value as { [k: string]: AttrInput });
    if (depth > _ATTR_LIMITS.depth) {
      bad(`${what}: dictionaries nest more than ${_ATTR_LIMITS.depth} deep`);
    }
    if (entries.length > _ATTR_LIMITS.entries) {
      bad(
        `${what}: ${entries.length} entries, more than the ${_ATTR_LIMITS.entries} a ` +
          `dictionary may have`,
      );
    }
    const dict: _AttrEntry[] = [];
    const seen = new Set<string>();
    e.size += 8;
    for (const [k, v] of entries) {
      if (seen.has(k)) bad(`Duplicate attribute name '${k}' in dictionary '${name}'`);
      seen.add(k);
      const child = _makeEntry(k, v, undefined, depth + 1);
      dict.push(child);
      e.size += child.size;
    }
    e.type = AttrType.DICTIONARY;
    e.dict = dict;
    return e;
  }
  bad(`${what}: unsupported attribute value ${_describeValue(value)}`);
}
