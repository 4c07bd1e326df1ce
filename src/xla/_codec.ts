/**
 * Requests to and replies from the Python bridge (`python/bridge.py`; the
 * headers of each request and reply are typed in `_protocol.ts`), and the
 * conversions between TypeScript values and what jax gets: arrays (dtype,
 * shape, bytes), array specs, and attributes.
 *
 * Request: uint32 JSON length, 4 bytes padding, the JSON header, then the
 * arrays' bytes from the next 64-byte boundary, at the offsets the header
 * names (relative to that boundary). Reply: int32 status, uint32 JSON
 * length, uint64 bytes needed (status 2), the JSON at byte 16, then result
 * bytes from the next 64-byte boundary.
 *
 * @module
 */
import { AttrType, DataType, ErrorCode } from "../abi/enums.ts";
import { byteWidth, type DataTypedArray, dataTypeName, viewAs } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import {
  _attrBytes,
  type _AttrEntry,
  _attrWidth,
  _makeEntry,
  _sameTyped,
  _writeAttrValues,
  ArrayAttr,
  type AttrDictionary,
  ScalarAttr,
} from "../runtime/attributes.ts";
import { type _ImplicitAttr, _implicitAttrs } from "../runtime/_hints.ts";
import type { _Request, _ResultsReply } from "./_protocol.ts";
import {
  type _Arg,
  _normaliseArg,
  _normaliseSpec,
  type ArrayArg,
  type ArrayInput,
  type ArraySpec,
} from "../runtime/ffi_call.ts";

/** An array for XLA: its data with a shape (and a dtype when the data's type is ambiguous). */
export type XlaArrayInput = ArrayInput;

/**
 * An argument: a typed array (1-D, of its own element type), or an
 * {@link XlaArrayInput} such as an `NpyArray` from `loadNpy`.
 */
export type XlaArg = ArrayArg;

/** Element type and shape of an array. */
export type XlaArraySpec = ArraySpec;

/**
 * An array XLA returned: element type, shape and C-order data.
 *
 * @example
 * ```ts ignore
 * // prog as in the module example
 * const [y] = await prog.run(new Float32Array([1, 2]));
 * console.log(y); // { dtype: 11, dtypeName: "F32", shape: [ 2 ], data: Float32Array(2) [ … ] }
 * ```
 */
export interface XlaArray {
  /** The element type. */
  readonly dtype: DataType;
  /** The element type's name, as `dataTypeName(dtype)` gives it (`"F32"`). */
  readonly dtypeName: string;
  /** Dimensions, outermost first. */
  readonly shape: number[];
  /** The elements, viewed as `typedArrayFor(dtype)` (its own buffer). */
  readonly data: DataTypedArray;
}

export { type _Arg, _normaliseArg, _normaliseSpec };

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

const align64 = (n: number) => (n + 63) & ~63;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A request: JSON header with `args` specs (offsets filled here) and the arrays' bytes. */
export function _encodeRequest(
  header: _Request,
  args: readonly _Arg[] = [],
): Uint8Array {
  let off = 0;
  const specs = args.map((a) => {
    const s = { dtype: a.dtype, shape: a.shape, offset: off };
    off = align64(off + a.bytes.byteLength);
    return s;
  });
  const json = encoder.encode(JSON.stringify({ ...header, args: specs }));
  const base = align64(8 + json.length);
  const req = new Uint8Array(base + off);
  new DataView(req.buffer).setUint32(0, json.length, true);
  req.set(json, 8);
  for (let i = 0; i < args.length; i++) req.set(args[i]!.bytes, base + specs[i]!.offset);
  return req;
}

/** What a reply holds; `H` is the header of a status-0 reply (`_protocol.ts`). */
export interface _Reply<H = Record<string, unknown>> {
  status: number;
  /** The JSON header (status 0, 1, 2) or null. */
  header: H | null;
  /** The text (status 3). */
  text: string;
  /** Bytes needed (status 2). */
  need: number;
  /** Where result data starts. */
  dataStart: number;
  bytes: Uint8Array;
}

/** Reads a reply's header. */
export function _decodeReply(reply: Uint8Array): _Reply {
  const dv = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
  const status = dv.getInt32(0, true);
  const len = dv.getUint32(4, true);
  const need = Number(dv.getBigUint64(8, true));
  if (len > reply.byteLength - 16) {
    throw new FfiError(ErrorCode.INTERNAL, `Malformed reply from the Python host (length ${len})`);
  }
  const body = decoder.decode(reply.subarray(16, 16 + len));
  const isJson = status >= 0 && status <= 2;
  return {
    status,
    header: isJson && len > 0 ? JSON.parse(body) as Record<string, unknown> : isJson ? {} : null,
    text: isJson ? "" : body,
    need,
    dataStart: align64(16 + len),
    bytes: reply,
  };
}

/** The result arrays of a status-0 reply (each copied into its own buffer). */
export function _replyArrays(reply: _Reply<_ResultsReply>): XlaArray[] {
  const metas = reply.header?.results ?? [];
  return metas.map((m) => {
    const n = m.shape.reduce((a, b) => a * b, 1) * byteWidth(m.dtype);
    const start = reply.dataStart + m.offset;
    const copy = reply.bytes.slice(start, start + n);
    return {
      dtype: m.dtype as DataType,
      dtypeName: dataTypeName(m.dtype),
      shape: m.shape,
      data: viewAs(m.dtype, copy),
    };
  });
}

/** Bytes a reply of these results needs (header room included). */
export function _replySize(specs: readonly { dtype: number; shape: readonly number[] }[]): number {
  let n = 65536;
  for (const s of specs) n += align64(s.shape.reduce((a, b) => a * b, 1) * byteWidth(s.dtype));
  return n;
}

// ---- attributes -------------------------------------------------------------------

/**
 * One attribute as the bridge reads it. Numbers travel as the hex of their
 * little-endian bytes (`x`), as a frame holds them: JSON would turn every NaN
 * into one (its payload, its sign, a signalling NaN lost), as it would -0.
 */
export type _AttrJson =
  | { k: "s"; t: number; v: boolean }
  | { k: "s"; t: number; x: string }
  | { k: "a"; t: number; x: string }
  | { k: "str"; v: string }
  | { k: "d"; v: [string, _AttrJson][] };

/** Two hex digits per byte value. */
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, b) => b.toString(16).padStart(2, "0"),
);

function hex(bytes: Uint8Array, n = bytes.length): string {
  let s = "";
  for (let i = 0; i < n; i++) s += HEX[bytes[i]!]!;
  return s;
}

/** Where attribute values are converted before they become hex (an ArrayBuffer per attribute costs about 1 µs). */
const SCRATCH = new DataView(new ArrayBuffer(64));
const SCRATCH_BYTES = new Uint8Array(SCRATCH.buffer);

/**
 * `hex(_attrBytes(dtype, values))` without making its array: a typed array
 * of the element type read where it is (empty when it has no bytes left, as
 * `_attrBytes` copies it), other values converted by the same code into
 * scratch memory when they fit.
 */
function attrHex(dtype: DataType, values: ArrayLike<number | bigint>): string {
  if (_sameTyped(values, dtype)) {
    if (values.byteLength === 0) return "";
    return hex(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
  }
  const n = values.length * _attrWidth(dtype);
  if (n > SCRATCH.byteLength) return hex(_attrBytes(dtype, values));
  SCRATCH_BYTES.fill(0, 0, n);
  _writeAttrValues(SCRATCH, dtype, values);
  return hex(SCRATCH_BYTES, n);
}

function entryJson(e: _AttrEntry, path: string): _AttrJson {
  switch (e.type) {
    case AttrType.SCALAR:
      if (e.dtype === DataType.U64 && BigInt(e.value) >= 2n ** 63n) {
        // jax lowers integer attributes through a signed 64-bit value: it fails with a
        // C++ std::bad_cast for these.
        bad(
          `Attribute '${path}': jax cannot lower a u64 scalar attribute of 2^63 or more ` +
            `(${e.value}); pass it as a u64 array of one element, or as s64`,
        );
      }
      if (e.dtype === DataType.PRED) {
        return { k: "s", t: e.dtype, v: e.value !== 0 && e.value !== 0n };
      }
      return { k: "s", t: e.dtype, x: attrHex(e.dtype, [e.value]) };
    case AttrType.ARRAY: {
      if (e.dtype === DataType.PRED) {
        bad(`Attribute '${path}': jax cannot lower a bool (PRED) array attribute`);
      }
      return { k: "a", t: e.dtype, x: attrHex(e.dtype, e.values!) };
    }
    case AttrType.STRING:
      return { k: "str", v: e.str };
    case AttrType.DICTIONARY:
      return { k: "d", v: e.dict!.map((c) => [c.name, entryJson(c, `${path}.${c.name}`)]) };
    default:
      bad(`Attribute '${path}': unsupported attribute type ${e.type}`);
  }
}

function hasBoolArray(v: unknown): boolean {
  return (Array.isArray(v) && v.some((x) => typeof x === "boolean")) ||
    (v instanceof ArrayAttr && v.dtype === DataType.PRED);
}

/** The attributes given as plain JS numbers, for the hint of a wrong-type error. */
export function _attrHints(attrs: AttrDictionary | undefined): _ImplicitAttr[] {
  if (attrs === undefined || attrs === null || typeof attrs !== "object") return [];
  const entries = attrs instanceof Map ? [...attrs] : Object.entries(attrs);
  try {
    return _implicitAttrs(entries.map(([n, v]) => _makeEntry(n, v)));
  } catch {
    return [];
  }
}

/** Attributes as the bridge reads them: sorted [name, value] pairs. */
export function _encodeAttrs(attrs: AttrDictionary | undefined): [string, _AttrJson][] {
  if (attrs === undefined) return [];
  if (attrs === null || typeof attrs !== "object") bad("attrs must be an object of attributes");
  const entries = attrs instanceof Map ? [...attrs] : Object.entries(attrs);
  const out: [string, _AttrJson][] = [];
  const walk = (name: string, v: unknown): void => {
    if (hasBoolArray(v)) bad(`Attribute '${name}': jax cannot lower a bool (PRED) array attribute`);
    if (
      v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !Array.isArray(v) &&
      !(v instanceof ScalarAttr) && !(v instanceof ArrayAttr)
    ) {
      const inner = v instanceof Map ? [...v] : Object.entries(v);
      for (const [k, x] of inner) walk(`${name}.${k}`, x);
    }
  };
  for (const [name, v] of entries) {
    walk(name, v);
    out.push([name, entryJson(_makeEntry(name, v), name)]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
