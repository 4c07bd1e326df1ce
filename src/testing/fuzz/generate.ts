/**
 * Generating calls: the seeded generator, dimensions and element values at
 * their edges, attribute values (drawn from hinted domains), result rules
 * and the results they give, argument value constraints, and one generated
 * call of a plan.
 *
 * @module
 */
import { DataType, ErrorCode } from "../../abi/enums.ts";
import { dataTypeInfo } from "../../abi/dtype.ts";
import { FfiError } from "../../errors.ts";
import { typeFacts } from "../../spec/type_names.ts";
import {
  type AttrDictionary as CliAttrs,
  type AttrValue,
  encodeValues,
  parseRetSpec,
} from "../../spec/grammar.ts";
import type { ArraySpec } from "../../runtime/ffi_call.ts";
import type {
  ArgValues,
  AttrSignature,
  BufferSignature,
  FuzzCase,
  HandlerSignature,
  ResultRule,
} from "./types.ts";
import type { _AttrHints, _Domain } from "./hints.ts";

/** A small, fast, seeded generator (mulberry32). */
export class _Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = (seed ^ 0x9e3779b9) >>> 0;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** Dimension sizes: 0, 1, small, odd, prime, past a cache line, past a page (of f32). */
const DIMS_COMMON = [0, 1, 1, 2, 2, 3, 3, 4, 5, 7];
const DIMS_RARE = [8, 11, 13, 16, 17, 31, 33, 64, 127, 1031, 4099];
/** The most bytes one generated argument takes. */
const MAX_BYTES = 1 << 18;

function _dim(rng: _Rng): number {
  return rng.next() < 0.8 ? rng.pick(DIMS_COMMON) : rng.pick(DIMS_RARE);
}

function _floatEdges(dtype: DataType): number[] {
  const f = typeFacts(dtype)!;
  const max = f.max as number;
  const tiny: Record<number, [number, number]> = {
    [DataType.F16]: [5.960464477539063e-8, 6.103515625e-5],
    [DataType.BF16]: [9.183549615799121e-41, 1.1754943508222875e-38],
    [DataType.F32]: [1.401298464324817e-45, 1.1754943508222875e-38],
    [DataType.F64]: [5e-324, 2.2250738585072014e-308],
  };
  const [denorm, normal] = tiny[dtype] ?? [0, 0];
  const edges = [0, -0, 1, -1, 0.5, max, -max, denorm, -denorm, normal];
  if (f.nonFinite) edges.push(NaN, Infinity, -Infinity, NaN);
  return edges;
}

function _intEdges(dtype: DataType): bigint[] {
  const f = typeFacts(dtype)!;
  const min = f.min!, max = f.max as bigint;
  const out = [0n, 1n, 2n, 3n, 7n, 127n, 128n, 255n, 256n, -1n, -2n, min, max, min + 1n, max - 1n];
  return out.filter((v) => v >= min && v <= max);
}

/** Element values of a generated argument: ordinary ones, edges sprinkled, or one edge throughout. */
function _values(rng: _Rng, dtype: DataType, n: number): (number | bigint)[] {
  const f = typeFacts(dtype);
  const info = dataTypeInfo(dtype);
  const lanes = Math.max(1, info.lanes);
  const count = n * lanes;
  if (f === undefined || f.kind === "token") return [];
  if (f.kind === "pred") return Array.from({ length: count }, () => rng.int(2));
  const mode = rng.next();
  if (f.kind === "int") {
    const edges = _intEdges(dtype);
    const big = f.bits === 64;
    const min = Number(f.min!), max = Number(f.max);
    const ordinary = () => {
      const v = Math.max(min, Math.min(max, rng.int(21) - (min < 0 ? 10 : 0)));
      return big ? BigInt(v) : v;
    };
    const edge = () => big ? rng.pick(edges) : Number(rng.pick(edges));
    if (mode < 0.5) return Array.from({ length: count }, ordinary);
    if (mode < 0.85) {
      return Array.from({ length: count }, () => rng.next() < 0.15 ? edge() : ordinary());
    }
    const e = edge();
    return new Array(count).fill(e);
  }
  const part = f.kind === "complex"
    ? (dtype === DataType.C64 ? DataType.F32 : DataType.F64)
    : dtype;
  const edges = _floatEdges(part);
  const ordinary = () => Math.round((rng.next() * 20 - 10) * 8) / 8;
  if (mode < 0.5) return Array.from({ length: count }, ordinary);
  if (mode < 0.85) {
    return Array.from({ length: count }, () => rng.next() < 0.15 ? rng.pick(edges) : ordinary());
  }
  return new Array(count).fill(rng.pick(edges));
}

/**
 * The C-order bytes of element values of `dtype` and `shape` (none for a type without a typed
 * array).
 */
export function _bytesOf(
  dtype: DataType,
  shape: readonly number[],
  values: (number | bigint)[],
): Uint8Array {
  if (dataTypeInfo(dtype).typedArray === null) return new Uint8Array(0);
  const v = encodeValues(dtype, shape, values);
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
}

/** The number of elements of a shape. */
export function _count(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A value of a domain: a choice, or a range's ends, middle, neighbours or any value inside. */
function _drawDomain(rng: _Rng, d: _Domain): number | bigint {
  if (d.choices) return rng.pick(d.choices);
  const [lo, hi] = d.range!;
  if (typeof lo === "bigint" || typeof hi === "bigint") {
    const l = BigInt(lo), h = BigInt(hi);
    const span = h - l;
    const picks = [l, h, l + span / 2n, l + (span > 0n ? 1n : 0n), h - (span > 0n ? 1n : 0n)];
    if (rng.next() < 0.6) return rng.pick(picks);
    return l + BigInt(Math.floor(rng.next() * Number(span + 1n)));
  }
  const isInt = typeFacts(d.dtype)!.kind === "int";
  if (isInt) {
    const picks = [lo, hi, Math.floor((lo + hi) / 2), Math.min(hi, lo + 1), Math.max(lo, hi - 1)];
    if (rng.next() < 0.6) return rng.pick(picks);
    return lo + rng.int(hi - lo + 1);
  }
  if (rng.next() < 0.5) return rng.pick([lo, hi, (lo + hi) / 2]);
  const v = Math.fround(lo + rng.next() * (hi - lo));
  return Math.min(hi, Math.max(lo, v));
}

/** Option characters of LAPACK routines (uplo, jobz, trans, diag, side, norm, …). */
const LAPACK_CHARS = ["L", "U", "N", "V", "T", "C", "A", "S", "O", "R", "I", "E", "B", "Y"];

/** The attribute values a generated call gets: edges of the type and of the call's dimensions. */
function _attrValue(
  rng: _Rng,
  a: AttrSignature,
  dims: number[],
  hints: _AttrHints,
): AttrValue {
  const hint = hints.attrs.entries.get(a.name);
  const domain = hints.domains.get(a.name);
  if (domain !== undefined) {
    return { kind: "scalar", dtype: domain.dtype, value: _drawDomain(rng, domain) };
  }
  if (hint !== undefined && !hints.free.has(a.name)) return hint;
  const kind = hint?.kind ?? a.kind;
  const dtype = hint !== undefined && (hint.kind === "scalar" || hint.kind === "array")
    ? hint.dtype
    : a.dtype;
  if (kind === "string") {
    return { kind: "string", value: rng.pick(["", "a", "x".repeat(257), "\u00e9\u4e2d", "0"]) };
  }
  if (kind === "dictionary" || kind === undefined || dtype === undefined) {
    return { kind: "dictionary", entries: new Map() };
  }
  const f = typeFacts(dtype)!;
  const one = (): number | bigint => {
    if (f.kind === "pred") return rng.int(2);
    // A u8 scalar is often a LAPACK-style option character ('U', 'N', …).
    if (dtype === DataType.U8 && kind === "scalar" && rng.next() < 0.35) {
      return rng.pick(LAPACK_CHARS).charCodeAt(0);
    }
    if (f.kind === "int") {
      const min = f.min!, max = f.max as bigint;
      let v: bigint;
      const r = rng.next();
      if (r < 0.45 && dims.length > 0) {
        // Near a dimension of the call: an index or a size one off.
        v = BigInt(rng.pick(dims)) + BigInt(rng.int(3) - 1);
        if (rng.next() < 0.2) v = -v;
      } else if (r < 0.85) v = rng.pick(_intEdges(dtype));
      else v = BigInt(rng.int(64));
      if (v < min) v = min;
      if (v > max) v = max;
      return f.bits === 64 ? v : Number(v);
    }
    const edges = _floatEdges(dtype);
    return rng.next() < 0.6 ? rng.pick(edges) : Math.round((rng.next() * 20 - 10) * 8) / 8;
  };
  if (kind === "array") {
    const n = rng.pick([0, 1, 2, 3, 5]);
    const values = Array.from({ length: n }, one) as number[] | bigint[];
    return { kind: "array", dtype, values };
  }
  return { kind: "scalar", dtype, value: one() };
}

/** A parsed result rule. */
type _Rule =
  | { kind: "like"; arg: number }
  | { kind: "expr"; dtype: DataType; dims: (number | [number, number])[] }
  | { kind: "fn"; fn: (shapes: readonly (readonly number[])[]) => ArraySpec };

/**
 * @internal Parses a result rule: `like:N`, `dtype[e0,e1,…]` with each `e` a
 * size or `$A.D` (dimension D of argument A), or `dtype` (a scalar). Throws
 * FfiError (INVALID_ARGUMENT) naming `where`.
 */
export function _parseRule(rule: ResultRule, where: string): _Rule {
  if (typeof rule === "function") return { kind: "fn", fn: rule };
  if (typeof rule !== "string") {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: a result rule is a string or a function`,
    );
  }
  const text = rule.trim();
  const like = /^like:(\d+)$/.exec(text);
  if (like) return { kind: "like", arg: Number(like[1]) };
  const m = /^([a-z0-9]+)(?:\[([^\]]*)\])?$/i.exec(text);
  const bad = () =>
    new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: '${rule}' is not a result rule (like:N, or dtype[e,...] with each e a size ` +
        `or $A.D, dimension D of argument A, e.g. 's32[$0.1]')`,
    );
  if (!m) throw bad();
  const spec = parseRetSpec(m[1]!, where);
  if (spec.kind !== "buffer") throw bad();
  const dims: (number | [number, number])[] = [];
  if (m[2] !== undefined && m[2].trim() !== "") {
    for (const part of m[2].split(",")) {
      const p = part.trim();
      const ref = /^\$(\d+)\.(\d+)$/.exec(p);
      if (ref) dims.push([Number(ref[1]), Number(ref[2])]);
      else if (/^\d+$/.test(p)) dims.push(Number(p));
      else throw bad();
    }
  }
  return { kind: "expr", dtype: spec.dtype, dims };
}

/** The result specs of a call from the rules, or undefined when a rule does not apply to it. */
export function _applyRules(
  rules: _Rule[],
  shapes: number[][],
  dtypes: DataType[],
): ArraySpec[] | undefined {
  const out: ArraySpec[] = [];
  for (const r of rules) {
    if (r.kind === "like") {
      if (r.arg >= shapes.length) return undefined;
      out.push({ dtype: dtypes[r.arg]!, shape: [...shapes[r.arg]!] });
    } else if (r.kind === "expr") {
      const dims: number[] = [];
      for (const d of r.dims) {
        if (typeof d === "number") dims.push(d);
        else {
          const v = shapes[d[0]]?.[d[1]];
          if (v === undefined) return undefined;
          dims.push(v);
        }
      }
      out.push({ dtype: r.dtype, shape: dims });
    } else {
      const spec = r.fn(shapes);
      out.push({ dtype: spec.dtype, shape: [...spec.shape] });
    }
  }
  return out;
}

/** The rules to use when none are given: like:0 where dtype and rank allow, else a guess. */
export function _defaultRules(sig: HandlerSignature): _Rule[] {
  const a0 = sig.args[0];
  return sig.results.map((r) => {
    if (
      a0 !== undefined && (r.dtype === undefined || r.dtype === a0.dtype) &&
      (r.rank === undefined || a0.rank === undefined || r.rank === a0.rank)
    ) {
      return { kind: "like", arg: 0 } as _Rule;
    }
    const rank = r.rank ?? 1;
    return {
      kind: "expr",
      dtype: r.dtype ?? DataType.F32,
      dims: Array.from({ length: rank }, (_, i) => a0 && i < (a0.rank ?? 0) ? [0, i] : 1),
    } as _Rule;
  });
}

/**
 * What generating a call needs: the signature, argument signatures, result rules, attribute hints
 * and argument values.
 */
export interface _Plan {
  sig: HandlerSignature;
  args: BufferSignature[];
  rules: _Rule[];
  hints: _AttrHints;
  argValues: readonly (ArgValues | undefined)[];
}

/** A case with its arguments' values made to keep `argValues`. */
export function _constrain(c: FuzzCase, argValues: readonly (ArgValues | undefined)[]): FuzzCase {
  if (argValues.every((v) => v === undefined)) return c;
  const args = c.args.slice();
  for (const [i, d] of argValues.entries()) {
    const a = args[i];
    if (d === undefined || a === undefined) continue;
    const f = typeFacts(a.dtype);
    if (f === undefined || (f.kind !== "int" && f.kind !== "float")) continue;
    let lo = d.min, hi = d.max;
    if (d.indexInto !== undefined) {
      const [ai, di] = d.indexInto;
      const n = args[ai]?.shape[di] ?? 0;
      lo = lo === undefined || Number(lo) < 0 ? 0 : lo;
      hi = hi === undefined || Number(hi) > n - 1 ? n - 1 : hi;
    }
    let ends: number | undefined;
    if (d.offsetsInto !== undefined) {
      const [ai, di] = d.offsetsInto;
      ends = args[ai]?.shape[di] ?? 0;
      lo = 0;
      hi = ends;
    }
    const isBig = f.kind === "int" && f.bits === 64;
    const vals = _decodeValues(a).map((v) => {
      if (f.kind === "float") {
        let x = Number(v);
        if (!Number.isFinite(x)) x = lo !== undefined ? Number(lo) : 0;
        if (lo !== undefined && x < Number(lo)) x = Number(lo);
        if (hi !== undefined && x > Number(hi)) x = Number(hi);
        return x;
      }
      let x = BigInt(v);
      if (lo !== undefined && hi !== undefined) {
        const l = BigInt(lo), h = BigInt(hi);
        if (h < l) x = l; // an empty range: the call is left for `valid` (or the handler) to refuse
        else {
          const span = h - l + 1n;
          x = l + (((x - l) % span) + span) % span;
        }
      } else if (lo !== undefined && x < BigInt(lo)) x = BigInt(lo);
      else if (hi !== undefined && x > BigInt(hi)) x = BigInt(hi);
      return isBig ? x : Number(x);
    });
    if (d.sorted || ends !== undefined) vals.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    if (ends !== undefined && vals.length > 0) {
      // Offsets start at 0 and end at the dimension (CSR's row pointers: 0 … nnz).
      vals[0] = isBig ? 0n : 0;
      vals[vals.length - 1] = isBig ? BigInt(ends) : ends;
    }
    if (
      f.kind === "float" && dataTypeInfo(a.dtype).typedArray !== Float32Array &&
      dataTypeInfo(a.dtype).typedArray !== Float64Array
    ) {
      continue; // 16- and 8-bit floats: their bits are not values here
    }
    args[i] = { ...a, data: _bytesOf(a.dtype, [vals.length], vals) };
  }
  return { ...c, args };
}

/** One generated call of the plan, or undefined when a result rule does not apply to its shapes. */
export function _generate(rng: _Rng, plan: _Plan): FuzzCase | undefined {
  const base = Array.from({ length: 6 }, () => _dim(rng));
  const args: FuzzCase["args"] = [];
  for (const s of plan.args) {
    const dtype = s.dtype ?? DataType.F32;
    const rank = s.rank ?? rng.pick([0, 1, 2, 2, 3, 3, 4]);
    const shape = Array.from({ length: rank }, (_, k) => rng.next() < 0.75 ? base[k]! : _dim(rng));
    const width = Math.max(1, dataTypeInfo(dtype).byteWidth);
    while (_count(shape) * width > MAX_BYTES) {
      const k = shape.indexOf(Math.max(...shape));
      shape[k] = Math.max(1, Math.floor(shape[k]! / 4));
    }
    args.push({ dtype, shape, data: _bytesOf(dtype, shape, _values(rng, dtype, _count(shape))) });
  }
  const results = _applyRules(plan.rules, args.map((a) => a.shape), args.map((a) => a.dtype));
  if (results === undefined) return undefined;
  const constrained =
    _constrain({ args, results, attrs: { kind: "dictionary", entries: new Map() } }, plan.argValues)
      .args;
  args.splice(0, args.length, ...constrained);
  const dims = [...new Set(args.flatMap((a) => a.shape))];
  const attrs: CliAttrs = { kind: "dictionary", entries: new Map() };
  for (const a of plan.sig.attrs) {
    attrs.entries.set(a.name, _attrValue(rng, a, dims, plan.hints));
  }
  for (const [name, v] of plan.hints.attrs.entries) {
    if (!attrs.entries.has(name)) attrs.entries.set(name, v);
  }
  return { args, results, attrs };
}

/** Element values of an argument, decoded (numbers or bigints, lanes interleaved). */
export function _decodeValues(a: FuzzCase["args"][number]): (number | bigint)[] {
  const info = dataTypeInfo(a.dtype);
  const ctor = info.typedArray;
  if (ctor === null) return [];
  const copy = a.data.slice();
  const n = copy.byteLength / (ctor as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  const view = new (ctor as unknown as new (
    b: ArrayBuffer,
    o: number,
    n: number,
  ) => ArrayLike<number | bigint>)(
    copy.buffer,
    0,
    n,
  );
  if (info.kind === "float" && (ctor === Uint8Array || ctor === Uint16Array)) {
    // 16- and 8-bit floats: shrink their bits as integers of 0 (0.0) and the rest kept.
    return Array.from(view);
  }
  return Array.from(view);
}
