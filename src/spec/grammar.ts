/**
 * The grammar of array specs, element values and attributes that the
 * command line (`--arg`, `--ret`, `--attr`) and the handler fuzzer (its
 * `cli run` reproductions, its hints) both speak, and the encoding of
 * parsed values into a buffer of their data type. It sits low, beside the
 * type names, so that neither room reaches into the other.
 *
 * Grammar:
 *
 * - argument: `dtype[d0,d1,…]=v0,v1,…` (one value fills the whole array, a
 *   zero-sized one such as `s32[0,3]` needs none; brackets in the values are
 *   ignored, so `f32[2,2]=[[1,2],[3,4]]` works; at most
 *   {@link MAX_INLINE_VALUES} values),
 *   `dtype=v` for a scalar, `token`, or a path ending in `.npy`;
 * - result: `dtype[d0,d1,…]`, `dtype` for a scalar, `token`, or `like:N` (the
 *   dtype and shape of argument N, counted from 0);
 * - attribute: `name=value`; the value is a string unless typed:
 *   `f32:2.5`, `bool:true`, `u8:7`, `i64[]:0,2` (array; `i64[]:` is empty),
 *   `str:text` (a string that may contain `:`); dotted names make nested
 *   dictionaries (`cfg.scale=f32:2` → dictionary `cfg` with `scale`).
 *
 * Values: integers in decimal, `0x`, `0o` or `0b` form, range-checked per
 * type; floats as decimal numbers or `inf`, `-inf`, `nan`; `pred` as
 * `true`, `false`, `1`, `0`; complex as `1.5`, `2j`, `1+2j`, `1e-3-4.5j`.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { dataTypeInfo, encodeFloats, numberToSubByte } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import { lookupTypeName, TYPE_NAMES, typeFacts, typeName } from "./type_names.ts";

/** Element values: `number`s, or `bigint`s for `s64`/`u64`; `pred` as 0/1; complex interleaved (re, im). */
export type ElementValues = number[] | bigint[];

/** An array given inline: `f32[2,3]=1,2,3,4,5,6`. */
export interface InlineArraySpec {
  /** Discriminant. */
  kind: "inline";
  /** Element type. */
  dtype: DataType;
  /** Dimensions (row-major). */
  dims: number[];
  /** One value per element (two per complex element), filled from a single value if one was given. */
  values: ElementValues;
}

/** An array read from a `.npy` file. */
export interface NpyFileSpec {
  /** Discriminant. */
  kind: "npy";
  /** The file path as given. */
  path: string;
}

/** A token argument or result. */
export interface TokenSpec {
  /** Discriminant. */
  kind: "token";
}

/** One `--arg`. */
export type ArgSpec = InlineArraySpec | NpyFileSpec | TokenSpec;

/** A result buffer's type and shape: `f32[2,3]`. */
export interface BufferSpec {
  /** Discriminant. */
  kind: "buffer";
  /** Element type. */
  dtype: DataType;
  /** Dimensions (row-major). */
  dims: number[];
}

/** A result with the dtype and shape of an argument: `like:N`. */
export interface LikeSpec {
  /** Discriminant. */
  kind: "like";
  /** The argument's index, from 0. */
  arg: number;
}

/** One `--ret`. */
export type RetSpec = BufferSpec | TokenSpec | LikeSpec;

/** An attribute value. */
export type AttrValue =
  | { kind: "string"; value: string }
  | { kind: "scalar"; dtype: DataType; value: number | bigint }
  | { kind: "array"; dtype: DataType; values: ElementValues }
  | AttrDictionary;

/** A dictionary of attributes (the top level is one too). */
export interface AttrDictionary {
  /** Discriminant. */
  kind: "dictionary";
  /** Entries in the order given (the runtime sorts by name). */
  entries: Map<string, AttrValue>;
}

function _usage(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

// ---------------------------------------------------------------- values

const INT_RE = /^([+-]?)(0x[0-9a-f]+|0o[0-7]+|0b[01]+|\d+)$/i;
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function _parseInt(text: string, dtype: DataType, where: string): bigint {
  const facts = typeFacts(dtype)!;
  const m = INT_RE.exec(text);
  if (!m) _usage(`${where}: '${text}' is not an integer (${facts.name})`);
  let v = BigInt(m[2]!);
  if (m[1] === "-") v = -v;
  if (v < facts.min! || v > (facts.max as bigint)) {
    _usage(`${where}: ${text} is out of range for ${facts.name} [${facts.min}, ${facts.max}]`);
  }
  return v;
}

function _parseFloat(text: string, dtype: DataType, where: string): number {
  const facts = typeFacts(dtype)!;
  const t = text.toLowerCase();
  let v: number;
  if (/^[+-]?(inf|infinity)$/.test(t)) v = t.startsWith("-") ? -Infinity : Infinity;
  else if (/^[+-]?nan$/.test(t)) v = NaN;
  else if (FLOAT_RE.test(t)) v = Number(t);
  else return _usage(`${where}: '${text}' is not a number (${facts.name})`);
  if (!Number.isFinite(v) && facts.nonFinite === false) {
    _usage(`${where}: ${facts.name} has no ${Number.isNaN(v) ? "NaN" : "infinity"}`);
  }
  if (Number.isFinite(v) && Math.abs(v) > (facts.max as number)) {
    _usage(`${where}: ${text} is out of range for ${facts.name} (largest ${facts.max})`);
  }
  return v;
}

function _parseComplex(text: string, dtype: DataType, where: string): [number, number] {
  const partType = dtype === DataType.C64 ? DataType.F32 : DataType.F64;
  let t = text;
  if (t.startsWith("(") && t.endsWith(")")) t = t.slice(1, -1);
  if (!/[jJ]$/.test(t)) return [_parseFloat(t, partType, where), 0];
  const body = t.slice(0, -1);
  let split = -1;
  for (let i = body.length - 1; i > 0; i--) {
    const c = body[i];
    if ((c === "+" || c === "-") && !/[eE]/.test(body[i - 1]!)) {
      split = i;
      break;
    }
  }
  if (split < 0) return [0, _parseFloat(body, partType, where)];
  return [
    _parseFloat(body.slice(0, split), partType, where),
    _parseFloat(body.slice(split), partType, where),
  ];
}

function _parsePred(text: string, where: string): number {
  const t = text.toLowerCase();
  if (t === "true" || t === "1") return 1;
  if (t === "false" || t === "0") return 0;
  return _usage(`${where}: '${text}' is not a pred (true, false, 1 or 0)`);
}

/**
 * Parses comma-separated element values of a type (see the module doc for
 * the literal forms). Whitespace around values and any `[`/`]` are ignored;
 * an empty text is no values. Complex values come out interleaved (re, im).
 *
 * @param text e.g. `"1, 2.5, -inf"`
 * @param dtype the element type
 * @param where names the option in error messages
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { parseValues } from "./grammar.ts";
 * console.log(parseValues("1,2,0x10", DataType.S32, "--arg")); // [1, 2, 16]
 * console.log(parseValues("1+2j", DataType.C64, "--arg")); // [1, 2]
 * ```
 */
export function parseValues(text: string, dtype: DataType, where: string): ElementValues {
  const facts = typeFacts(dtype);
  if (facts === undefined || facts.kind === "token") {
    _usage(`${where}: ${typeName(dtype)} has no values`);
  }
  const items = text.replace(/[[\]]/g, "").split(",").map((s) => s.trim());
  if (items.length === 1 && items[0] === "") return [];
  const empty = items.findIndex((s) => s === "");
  if (empty >= 0) _usage(`${where}: value ${empty + 1} is empty in '${text}'`);
  switch (facts.kind) {
    case "int":
      if (facts.bits === 64) return items.map((s) => _parseInt(s, dtype, where));
      return items.map((s) => Number(_parseInt(s, dtype, where)));
    case "float":
      return items.map((s) => _parseFloat(s, dtype, where));
    case "pred":
      return items.map((s) => _parsePred(s, where));
    case "complex":
      return items.flatMap((s) => _parseComplex(s, dtype, where));
  }
}

/**
 * Parses a dimension list `2,3` (the text inside the brackets; empty for a
 * scalar) into non-negative integers whose product is a safe integer.
 *
 * @example
 * ```ts
 * import { parseDims } from "./grammar.ts";
 * console.log(parseDims("2, 3", "--ret")); // [2, 3]
 * console.log(parseDims("", "--ret")); // []
 * ```
 */
export function parseDims(text: string, where: string): number[] {
  if (text.trim() === "") return [];
  let count = 1;
  return text.split(",").map((part) => {
    const s = part.trim();
    if (!/^\d+$/.test(s)) _usage(`${where}: dimension '${s}' is not a non-negative integer`);
    const d = Number(s);
    count *= d;
    if (!Number.isSafeInteger(d) || !Number.isSafeInteger(count)) {
      _usage(`${where}: dimensions [${text}] are too large`);
    }
    return d;
  });
}

/** The number of elements of a shape. */
function _count(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/**
 * The most values (elements; two per complex element) an array given on the
 * command line may have: 2^24, 128 MiB as the JS numbers the parser holds
 * them in. A larger array is refused before anything is filled; a `.npy`
 * file holds any size.
 *
 * @example
 * ```ts
 * import { MAX_INLINE_VALUES } from "./grammar.ts";
 * console.log(MAX_INLINE_VALUES); // 16777216
 * ```
 */
export const MAX_INLINE_VALUES = 2 ** 24;

const SPEC_RE = /^([a-z][a-z0-9]*)(?:\[([^\]]*)\])?(?:=([\s\S]*))?$/i;

function _typeOf(name: string, where: string): DataType {
  const dtype = lookupTypeName(name);
  if (dtype === undefined) {
    _usage(`${where}: unknown element type '${name}' (one of ${TYPE_NAMES.join(", ")})`);
  }
  return dtype;
}

/**
 * Parses one `--arg` value: `dtype[dims]=values`, `dtype=value` (scalar),
 * `token`, or a path ending in `.npy`. A zero-sized array (`s32[0,3]`) needs
 * no values.
 *
 * @param text the option's value
 * @param where names the option in error messages, e.g. `--arg 1`
 *
 * @example
 * ```ts
 * import { parseArgSpec } from "./grammar.ts";
 * const spec = parseArgSpec("f32[2,2]=1,2,3,4", "--arg 1");
 * console.log(spec.kind === "inline" && spec.dims); // [2, 2]
 * console.log(parseArgSpec("x.npy", "--arg 2")); // { kind: "npy", path: "x.npy" }
 * ```
 */
export function parseArgSpec(text: string, where: string): ArgSpec {
  if (text.toLowerCase() === "token") return { kind: "token" };
  const m = SPEC_RE.exec(text);
  if (!m && /\.npy$/i.test(text)) return { kind: "npy", path: text };
  if (!m) {
    return _usage(
      `${where}: '${text}' is not an array (dtype[d0,d1,…]=v0,v1,…), 'token' or a .npy file`,
    );
  }
  const [, name, dimsText, valuesText] = m;
  if (lookupTypeName(name!) === undefined && /\.npy$/i.test(text)) {
    return { kind: "npy", path: text };
  }
  const dtype = _typeOf(name!, where);
  if (dtype === DataType.TOKEN) _usage(`${where}: a token has no shape or values: write 'token'`);
  const dims = parseDims(dimsText ?? "", where);
  const shape = `${typeName(dtype)}[${dims.join(",")}]`;
  const count = _count(dims);
  const perElement = typeFacts(dtype)!.kind === "complex" ? 2 : 1;
  if (count * perElement > MAX_INLINE_VALUES) {
    _usage(
      `${where}: ${shape} has ${count} elements (${
        count * dataTypeInfo(dtype).byteWidth
      } bytes), more than the ${MAX_INLINE_VALUES} values an array on the command line may ` +
        `hold; give a larger array as a .npy file`,
    );
  }
  if (valuesText === undefined && count === 0) return { kind: "inline", dtype, dims, values: [] };
  if (valuesText === undefined) {
    _usage(`${where}: ${shape} has no values: write ${shape}=v0,v1,… or give a .npy file`);
  }
  let values = parseValues(valuesText, dtype, where);
  const given = values.length / perElement;
  if (given === 1 && count !== 1) {
    values = _fill(values, count);
  } else if (given !== count) {
    _usage(
      `${where}: ${given} value${given === 1 ? "" : "s"} for the ${count} elements of ${shape}`,
    );
  }
  return { kind: "inline", dtype, dims, values };
}

/** `count` copies of one element's values (one, or re and im): Array.fill, then doubling copies. */
function _fill(values: ElementValues, count: number): ElementValues {
  if (values.length === 1) return new Array(count).fill(values[0]) as ElementValues;
  const out = new Array(count * values.length).fill(values[0]);
  if (out.length === 0) return out as ElementValues;
  for (let i = 0; i < values.length; i++) out[i] = values[i];
  for (let n = values.length; n < out.length; n *= 2) out.copyWithin(n, 0, n);
  return out as ElementValues;
}

/**
 * Parses one `--ret` value: `dtype[dims]`, `dtype` (scalar), `token`, or
 * `like:N` (the dtype and shape of argument N, from 0).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { parseRetSpec } from "./grammar.ts";
 * const spec = parseRetSpec("s32[4]", "--ret 1");
 * console.log(spec.kind === "buffer" && spec.dtype === DataType.S32); // true
 * ```
 */
export function parseRetSpec(text: string, where: string): RetSpec {
  if (text.toLowerCase() === "token") return { kind: "token" };
  const like = /^like:(.*)$/i.exec(text);
  if (like) {
    if (!/^\d+$/.test(like[1]!)) {
      _usage(`${where}: '${text}': like:N takes an argument's index N, counted from 0`);
    }
    return { kind: "like", arg: Number(like[1]) };
  }
  const m = SPEC_RE.exec(text);
  if (!m) _usage(`${where}: '${text}' is not a result type (dtype[d0,d1,…] or 'token')`);
  if (m[3] !== undefined) {
    _usage(`${where}: a result takes no values ('${text}'); write only ${m[1]}[${m[2] ?? ""}]`);
  }
  const dtype = _typeOf(m[1]!, where);
  if (dtype === DataType.TOKEN) return { kind: "token" };
  return { kind: "buffer", dtype, dims: parseDims(m[2] ?? "", where) };
}

// ---------------------------------------------------------------- attributes

const ATTR_TYPED_RE = /^([a-z][a-z0-9]*)(\[\])?:([\s\S]*)$/i;

/**
 * Parses an attribute value: a string unless typed (`f32:2.5`, `bool:true`,
 * `i64[]:0,2`, `str:a:b`). A prefix before `:` that is not a type name is an
 * error, so a typo is not silently taken as a string; write `str:` first.
 *
 * @example
 * ```ts
 * import { parseAttrValue } from "./grammar.ts";
 * console.log(parseAttrValue("reflect", "--attr mode")); // { kind: "string", value: "reflect" }
 * console.log(parseAttrValue("i64[]:0,2", "--attr axes")); // { kind: "array", dtype: 5, values: [0n, 2n] }
 * ```
 */
export function parseAttrValue(text: string, where: string): AttrValue {
  const m = ATTR_TYPED_RE.exec(text);
  if (!m) return { kind: "string", value: text };
  const [, prefix, brackets, rest] = m;
  if (/^(str|string)$/i.test(prefix!) && !brackets) return { kind: "string", value: rest! };
  const dtype = lookupTypeName(prefix!);
  if (dtype === undefined) {
    return _usage(
      `${where}: unknown attribute type '${prefix}' in '${text}' ` +
        `(write str:${text} for a string containing ':')`,
    );
  }
  const kind = typeFacts(dtype)!.kind;
  if (kind === "complex" || kind === "token" || (kind === "float" && typeFacts(dtype)!.bits < 16)) {
    _usage(
      `${where}: ${typeName(dtype)} is not an attribute type ` +
        `(pred, s8…s64, u8…u64, f16, bf16, f32, f64)`,
    );
  }
  if (kind === "int" && typeFacts(dtype)!.bits < 8) {
    _usage(`${where}: ${typeName(dtype)} is not an attribute type (s8…s64, u8…u64)`);
  }
  const values = parseValues(rest!, dtype, where);
  if (brackets) return { kind: "array", dtype, values };
  if (values.length !== 1) {
    _usage(
      `${where}: a ${typeName(dtype)} scalar needs exactly one value, got ${values.length}` +
        ` (write ${typeName(dtype)}[]:… for an array)`,
    );
  }
  return { kind: "scalar", dtype, value: values[0]! };
}

/**
 * Adds one `--attr name=value` to a dictionary; dotted names make nested
 * dictionaries. Duplicates and a name used both as a value and as a
 * dictionary are errors.
 *
 * @example
 * ```ts
 * import { addAttr, type AttrDictionary } from "./grammar.ts";
 * const attrs: AttrDictionary = { kind: "dictionary", entries: new Map() };
 * addAttr(attrs, "cfg.scale=f32:2");
 * addAttr(attrs, "cfg.mode=reflect");
 * console.log([...(attrs.entries.get("cfg") as AttrDictionary).entries.keys()]); // ["scale", "mode"]
 * ```
 */
export function addAttr(attrs: AttrDictionary, text: string): void {
  const eq = text.indexOf("=");
  if (eq < 0) _usage(`--attr '${text}': expected name=value`);
  const name = text.slice(0, eq);
  const where = `--attr ${name}`;
  const path = name.split(".");
  if (path.some((p) => p.trim() === "" || p !== p.trim())) {
    _usage(`--attr '${text}': attribute name '${name}' has an empty or space-padded part`);
  }
  const value = parseAttrValue(text.slice(eq + 1), where);
  let dict = attrs;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const existing = dict.entries.get(key);
    if (existing === undefined) {
      const child: AttrDictionary = { kind: "dictionary", entries: new Map() };
      dict.entries.set(key, child);
      dict = child;
    } else if (existing.kind === "dictionary") {
      dict = existing;
    } else {
      return _usage(
        `${where}: '${path.slice(0, i + 1).join(".")}' is already a ${existing.kind}, ` +
          `not a dictionary`,
      );
    }
  }
  const last = path[path.length - 1]!;
  const existing = dict.entries.get(last);
  if (existing !== undefined) {
    _usage(
      existing.kind === "dictionary"
        ? `${where}: '${name}' is already a dictionary (from dotted names)`
        : `${where}: attribute '${name}' is given twice`,
    );
  }
  dict.entries.set(last, value);
}

/** Encodes element values (as parsed or decoded) as the buffer of `dtype`. */
export function encodeValues(
  dtype: DataType,
  dims: readonly number[],
  values: ArrayLike<number | bigint | boolean>,
): ArrayBufferView {
  const info = dataTypeInfo(dtype);
  const ctor = info.typedArray;
  if (ctor === null) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${info.name} buffers hold no values`);
  }
  const n = _count(dims) * info.lanes;
  if (values.length !== n) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${values.length} values for the ${n} elements of ${info.name}[${dims.join(",")}]`,
    );
  }
  const nums = () => Array.from(values, (v) => Number(v));
  if (info.kind === "float" && (ctor === Uint8Array || ctor === Uint16Array)) {
    return encodeFloats(dtype, nums());
  }
  if (info.bitWidth < 8 && info.kind !== "float") {
    return Uint8Array.from(values, (v) => numberToSubByte(dtype, Number(v)));
  }
  if (info.kind === "pred") return Uint8Array.from(values, (v) => (v ? 1 : 0));
  if (ctor === BigInt64Array || ctor === BigUint64Array) {
    const big = Array.from(values, (v) => BigInt(v as number | bigint));
    return ctor === BigInt64Array ? BigInt64Array.from(big) : BigUint64Array.from(big);
  }
  return (ctor as Float64ArrayConstructor).from(nums());
}
