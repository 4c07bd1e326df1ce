/**
 * The fast decode of a TS handler's operands: each bound operand compiled
 * once into an {@link OpPlan}, then read per call straight from the flat
 * buffer's typed-array views through the record index the C side writes (no
 * walk over the records, no DataView offsets computed twice). It only
 * accepts a frame that decodes cleanly: anything unexpected (a count, type,
 * dtype, rank, name or value a binding does not accept) returns
 * {@link MISMATCH}, and the caller decodes the frame again with the complete
 * decoder (_decode.ts), which writes ffi.h's diagnostics. So every message comes
 * from one place, and this file holds no error text.
 *
 * Reuse across calls (the rule): a value handed to a handler never changes
 * afterwards. Values that cannot change are handed again, as the same
 * object, to a later call of the same operand whose frame holds exactly the
 * same bytes for it: FfiBuffer (compared field by field with the frame, so a
 * handler that wrote to one does not get it back; frozen before it is handed
 * out a second time, and its dims are a frozen copy, so no call can change
 * what another kept),
 * strings and bigints (primitives), Dictionary and RemainingBuffers (private
 * immutable copies, compared word by word). Mutable values (arrays of
 * numbers or bigints) are made fresh for every call. Nothing is ever reused
 * without comparing it with the current frame first.
 *
 * @module
 */
import { AttrType, DataType } from "../abi/enums.ts";
import {
  type AttrSpec,
  Dictionary,
  dictionaryOfRecord,
  readArray,
  readBigArray,
  readScalar,
  readString,
} from "./_attrs.ts";
import {
  copyFlatWords,
  flatDv,
  flatF32,
  flatF64,
  flatI32,
  H_API,
  H_ATTRS_AT,
  H_ATTRS_END,
  H_CTX,
  H_INDEX,
  H_NARGS,
  H_NATTRS,
  H_NRETS,
  H_RETS_AT,
  H_STAGE,
} from "./_flat.ts";
import { FfiBuffer, RemainingBuffers } from "./buffer.ts";

/** Operand kinds the fast decode reads itself (K_OTHER: the complete decoder's). */
export const K_ARG = 0, K_RET = 1, K_ATTR = 2, K_ARGS = 3, K_RETS = 4, K_ATTRS = 5;
export const K_STAGE = 6, K_API = 7, K_CTX = 8, K_OTHER = 9;

/** How an attribute's value is read. */
const V_S32 = 0, V_U32 = 1, V_F32 = 2, V_F64 = 3, V_S64 = 4, V_U64 = 5, V_BIG = 6;
const V_SCALAR = 7, V_POINTER = 8, V_ARRAY = 9, V_BIG_ARRAY = 10, V_STRING = 11, V_DICT = 12;

/** Returned when the frame needs the complete decoder. */
export const MISMATCH: unique symbol = Symbol("mismatch");

/** Benchmarks only (bench/handler_speed.ts): false makes every object fresh. */
let reuse = true;

/**
 * @internal benchmarks only (host.ts _setReuse, which also drops compiled
 * decoders, since they read this when compiled): turns reuse of unchanged
 * objects on or off.
 */
export function _setFastReuse(on: boolean): void {
  reuse = on;
}

/** One bound operand, compiled (every plan has the same shape). */
export class OpPlan {
  kind = K_OTHER;
  /** Arguments/results: position among its kind; attributes: position in the sorted frame. */
  index = 0;
  dtype = -1;
  rank = -1;
  optional = false;
  /** Attributes: expected name (length, zero-padded int32 words), type and how to read it. */
  nameLen = 0;
  nameWords: Int32Array = new Int32Array(0);
  valueSkip = 0;
  attrType = 0;
  read = 0;
  allowed: readonly number[] | undefined = undefined;
  /** The last object handed out (see the module's reuse rule), and what it was made from. */
  last: unknown = undefined;
  /** Buffers: `last` was handed out twice or more (it is frozen). */
  shared = false;
  lastWords: number[] = [];
  lastLo = 0;
  lastHi = 0;
}

function attrRead(spec: AttrSpec): number {
  if (spec.pointer) return V_POINTER;
  switch (spec.type) {
    case AttrType.SCALAR:
      if (spec.big) return V_BIG;
      switch (spec.dtype) {
        case DataType.S32:
          return V_S32;
        case DataType.U32:
          return V_U32;
        case DataType.F32:
          return V_F32;
        case DataType.F64:
          return V_F64;
        case DataType.S64:
          return V_S64;
        case DataType.U64:
          return V_U64;
        default:
          return V_SCALAR;
      }
    case AttrType.ARRAY:
      return spec.big ? V_BIG_ARRAY : V_ARRAY;
    case AttrType.STRING:
      return V_STRING;
    default:
      return V_DICT;
  }
}

/** A plan for a buffer operand. */
export function bufferPlan(kind: number, index: number, dtype: number, rank: number, opt: boolean) {
  const p = new OpPlan();
  p.kind = kind;
  p.index = index;
  p.dtype = dtype;
  p.rank = rank;
  p.optional = opt;
  return p;
}

/** A plan for an attribute bound by name (`name` as UTF-8, `index` in the sorted frame). */
export function attrPlan(index: number, name: Uint8Array, spec: AttrSpec): OpPlan {
  const p = new OpPlan();
  p.kind = K_ATTR;
  p.index = index;
  p.nameLen = name.length;
  const words = new Int32Array((name.length + 3) >> 2);
  new Uint8Array(words.buffer).set(name);
  p.nameWords = words;
  p.valueSkip = 4 + 2 * ((name.length + 7) >> 3);
  p.attrType = spec.pointer ? AttrType.SCALAR : spec.type;
  p.dtype = spec.pointer ? DataType.S64 : spec.dtype;
  p.read = attrRead(spec);
  p.allowed = spec.allowed;
  return p;
}

/** A plan for any other operand kind. */
export function otherPlan(kind: number, index = 0): OpPlan {
  const p = new OpPlan();
  p.kind = kind;
  p.index = index;
  return p;
}

/** The value of a K_ARG/K_RET/K_ATTR/K_ARGS/K_RETS/K_ATTRS/K_STAGE/K_API/K_CTX operand. */
export function fastValue(p: OpPlan, nargs: number, nrets: number): unknown {
  const i32 = flatI32;
  switch (p.kind) {
    case K_ARG:
    case K_RET: {
      if (p.index >= (p.kind === K_ARG ? nargs : nrets)) return p.optional ? undefined : MISMATCH;
      return buffer(p, i32[H_INDEX + (p.kind === K_ARG ? 0 : nargs) + p.index]!);
    }
    case K_ATTR:
      return attr(p, i32[H_INDEX + nargs + nrets + p.index]!);
    case K_ARGS:
    case K_RETS:
    case K_ATTRS:
      return remaining(p, nargs, nrets);
    case K_STAGE:
      return i32[H_STAGE];
    case K_API:
      return flatF64[H_API];
    case K_CTX:
      return flatF64[H_CTX];
  }
  return MISMATCH;
}

function buffer(p: OpPlan, r: number): unknown {
  const i32 = flatI32, f64 = flatF64;
  if (i32[r] !== 1) return MISMATCH;
  const dtype = i32[r + 1]!, rank = i32[r + 4]!;
  if ((p.dtype >= 0 && dtype !== p.dtype) || (p.rank >= 0 && rank !== p.rank)) return MISMATCH;
  const data = f64[(r + 2) >> 1]!;
  const d0 = (r + 6) >> 1;
  const last = p.last as FfiBuffer | undefined;
  if (reuse && last !== undefined && last.data === data && last.dtype === dtype) {
    const dims = FfiBuffer._dimsOf(last);
    let same = dims.length === rank;
    for (let d = 0; same && d < rank; d++) same = dims[d] === f64[d0 + d];
    if (same) return p.shared ? last : share(p);
  }
  return freshBuffer(p, r);
}

/** The operand's last FfiBuffer, handed out again: frozen first. */
function share(p: OpPlan): FfiBuffer {
  const b = p.last as FfiBuffer;
  Object.freeze(b);
  p.shared = true;
  return b;
}

/** A new FfiBuffer of the (checked) buffer record at `r`, remembered for reuse. */
function freshBuffer(p: OpPlan, r: number): FfiBuffer {
  const i32 = flatI32, f64 = flatF64;
  const dtype = i32[r + 1]!, rank = i32[r + 4]!, data = f64[(r + 2) >> 1]!, d0 = (r + 6) >> 1;
  const dims = new Array<number>(rank);
  for (let d = 0; d < rank; d++) dims[d] = f64[d0 + d]!;
  const b = FfiBuffer._adopt(dtype, data, dims);
  p.last = b;
  p.shared = false;
  return b;
}

function attr(p: OpPlan, r: number): unknown {
  const i32 = flatI32;
  if (i32[r + 2] !== p.nameLen || i32[r] !== p.attrType) return MISMATCH;
  const name = p.nameWords;
  for (let k = 0; k < name.length; k++) if (i32[r + 4 + k] !== name[k]) return MISMATCH;
  const v = r + p.valueSkip;
  switch (p.read) {
    case V_STRING:
      return string(p, v);
    case V_DICT:
      return dictionary(p, r);
    case V_ARRAY:
      return array(p, v);
    case V_BIG_ARRAY:
      return i32[v] === p.dtype ? readBigArray(flatDv, 4 * v) : MISMATCH;
  }
  // Scalars: [dtype lo] [value].
  if (i32[v] !== p.dtype) return MISMATCH;
  let x: number | boolean;
  switch (p.read) {
    case V_S32:
      x = i32[v + 2]!;
      break;
    case V_U32:
      x = i32[v + 2]! >>> 0;
      break;
    case V_F32:
      x = flatF32[v + 2]!;
      break;
    case V_F64:
      x = flatF64[(v + 2) >> 1]!;
      break;
    case V_S64:
    case V_U64:
      x = (p.read === V_S64 ? i32[v + 3]! : i32[v + 3]! >>> 0) * 4294967296 + (i32[v + 2]! >>> 0);
      if (!Number.isSafeInteger(x)) return MISMATCH;
      break;
    case V_POINTER:
      return i32[v + 3]! * 4294967296 + (i32[v + 2]! >>> 0);
    case V_BIG:
      return bigScalar(p, v + 2);
    default:
      x = readScalar(flatDv, 4 * (v + 2), p.dtype);
  }
  if (p.allowed !== undefined && !p.allowed.includes(x as number)) return MISMATCH;
  return x;
}

function bigScalar(p: OpPlan, w: number): unknown {
  const lo = flatI32[w]!, hi = flatI32[w + 1]!;
  if (reuse && p.last !== undefined && p.lastLo === lo && p.lastHi === hi) return p.last;
  const b = p.dtype === DataType.U64
    ? flatDv.getBigUint64(4 * w, true)
    : flatDv.getBigInt64(4 * w, true);
  p.last = b;
  p.lastLo = lo;
  p.lastHi = hi;
  return b;
}

function array(p: OpPlan, v: number): unknown {
  const i32 = flatI32;
  const dt = i32[v]!;
  if (dt !== p.dtype) return MISMATCH;
  const n = i32[v + 1]!, e = v + 2;
  switch (dt) {
    case DataType.F32: {
      const out = new Array<number>(n), f32 = flatF32;
      for (let k = 0; k < n; k++) out[k] = f32[e + k]!;
      return out;
    }
    case DataType.F64: {
      const out = new Array<number>(n), f64 = flatF64, e2 = e >> 1;
      for (let k = 0; k < n; k++) out[k] = f64[e2 + k]!;
      return out;
    }
    case DataType.S32: {
      const out = new Array<number>(n);
      for (let k = 0; k < n; k++) out[k] = i32[e + k]!;
      return out;
    }
    case DataType.S64:
    case DataType.U64: {
      const out = new Array<number>(n), signed = dt === DataType.S64;
      for (let k = 0; k < n; k++) {
        const hi = i32[e + 2 * k + 1]!;
        const x = (signed ? hi : hi >>> 0) * 4294967296 + (i32[e + 2 * k]! >>> 0);
        if (!Number.isSafeInteger(x)) return MISMATCH;
        out[k] = x;
      }
      return out;
    }
  }
  return readArray(flatDv, 4 * v);
}

function string(p: OpPlan, v: number): unknown {
  const i32 = flatI32;
  const len = i32[v]!, n = (len + 3) >> 2, from = v + 2;
  if (reuse && p.last !== undefined && p.lastLo === len) {
    const words = p.lastWords;
    let same = true;
    for (let k = 0; same && k < n; k++) same = i32[from + k] === words[k];
    if (same) return p.last;
  }
  const s = readString(flatDv, 4 * from, len);
  p.last = s;
  p.lastLo = len;
  p.lastWords = copyFlatWords(from, from + n);
  return s;
}

function dictionary(p: OpPlan, r: number): unknown {
  const end = r + 2 * flatI32[r + 1]!;
  const last = p.last as Dictionary | undefined;
  if (reuse && last !== undefined && last._sameAs(r, end)) return last;
  const d = dictionaryOfRecord(copyFlatWords(r, end), 0);
  p.last = d;
  return d;
}

/** RemainingArgs/RemainingRets from position p.index, or the whole attribute dictionary. */
function remaining(p: OpPlan, nargs: number, nrets: number): unknown {
  const i32 = flatI32;
  let first: number, n: number, start: number, end: number;
  if (p.kind === K_ATTRS) {
    first = H_INDEX + nargs + nrets;
    n = i32[H_NATTRS]!;
    start = i32[H_ATTRS_AT]!;
    end = i32[H_ATTRS_END]!;
  } else {
    const args = p.kind === K_ARGS;
    const count = args ? nargs : nrets;
    first = H_INDEX + (args ? 0 : nargs) + p.index;
    n = Math.max(0, count - p.index);
    end = i32[args ? H_RETS_AT : H_ATTRS_AT]!;
    start = n > 0 ? i32[first]! : end;
  }
  const last = p.last as Dictionary | RemainingBuffers | undefined;
  if (reuse && last !== undefined && last.size === n && last._sameAs(start, end)) return last;
  const at = new Array<number>(n);
  for (let j = 0; j < n; j++) at[j] = i32[first + j]! - start;
  const words = copyFlatWords(start, end);
  const made = p.kind === K_ATTRS
    ? new Dictionary(words, at)
    : new RemainingBuffers(words, at, p.kind === K_ARGS ? "argument" : "result");
  p.last = made;
  return made;
}

/** What {@link compileDecoder} needs of an entry. */
export interface CompileInput {
  plans: readonly OpPlan[];
  fn: (...args: unknown[]) => unknown;
  minArgs: number;
  maxArgs: number;
  minRets: number;
  maxRets: number;
  minAttrs: number;
  maxAttrs: number;
}

/** Names longer than this many int32 words are compared by a loop, not inline. */
const INLINE_NAME_WORDS = 8;

function nameMatches(p: OpPlan, r: number): boolean {
  const i32 = flatI32, name = p.nameWords;
  for (let k = 0; k < name.length; k++) if (i32[r + 4 + k] !== name[k]) return false;
  return true;
}

function allowed(p: OpPlan, x: number): boolean {
  return p.allowed!.includes(x);
}

/**
 * Compiles an entry's plans into one function that decodes the flat frame
 * and calls the handler with the values as arguments (or, with `call`
 * false, returns 0 after decoding: benchmarks only), or returns
 * {@link MISMATCH} before calling anything when the frame needs the complete
 * decoder. Straight-line code: the expected counts, dtypes, ranks,
 * attribute types and name bytes, and the flat header's indices (_flat.ts
 * `H_*`, spliced in as numbers), are constants in it, and no parameter
 * array is built. The generated source holds only numbers and fixed
 * identifiers (names enter as their int32 words); everything else is passed
 * in. Undefined when an operand kind has no fast decode (context values) or
 * code generation is unavailable.
 */
export function compileDecoder(
  e: CompileInput,
  call = true,
): (() => unknown) | undefined {
  const plans = e.plans;
  if (plans.some((p) => p.kind === K_OTHER)) return undefined;
  const num = (x: number) => (Number.isFinite(x) ? String(x | 0) : "Infinity");
  const lines: string[] = [
    `const na = I[${H_NARGS}], nr = I[${H_NRETS}], nt = I[${H_NATTRS}];`,
    `if (na < ${num(e.minArgs)} || na > ${num(e.maxArgs)} || nr < ${num(e.minRets)} || ` +
    `nr > ${num(e.maxRets)} || nt < ${num(e.minAttrs)} || nt > ${num(e.maxAttrs)}) return M;`,
    "let r = 0, v = 0, c, d;",
  ];
  const names: string[] = [];
  for (let k = 0; k < plans.length; k++) {
    const p = plans[k]!, x = `x${k}`, pk = `P[${k}]`;
    names.push(x);
    switch (p.kind) {
      case K_ARG:
      case K_RET: {
        const count = p.kind === K_ARG ? "na" : "nr";
        const at = p.kind === K_ARG ? `I[${H_INDEX + p.index}]` : `I[${H_INDEX + p.index} + na]`;
        if (p.optional || p.dtype < 0 || p.rank < 0) {
          lines.push(
            p.optional
              ? `const ${x} = ${p.index} < ${count} ? buffer(${pk}, ${at}) : undefined;`
              : `const ${x} = buffer(${pk}, ${at});`,
            `if (${x} === M) return M;`,
          );
          break;
        }
        // Dtype and rank known: the checks and the comparison with the last
        // FfiBuffer of this operand inline, unrolled over the dims.
        lines.push(
          `r = ${at};`,
          `if (I[r] !== 1 || I[r + 1] !== ${p.dtype} || I[r + 4] !== ${p.rank}) return M;`,
        );
        if (reuse) {
          const same = ["c !== undefined", "c.data === D[(r + 2) >> 1]", `c.dtype === ${p.dtype}`];
          same.push(`(d = FB._dimsOf(c)).length === ${p.rank}`);
          for (let j = 0; j < p.rank; j++) same.push(`d[${j}] === D[((r + 6) >> 1) + ${j}]`);
          lines.push(
            `c = ${pk}.last;`,
            `const ${x} = ${same.join(" && ")} ? (${pk}.shared ? c : share(${pk})) : ` +
              `freshBuffer(${pk}, r);`,
          );
        } else {
          lines.push(`const ${x} = freshBuffer(${pk}, r);`);
        }
        break;
      }
      case K_ATTR: {
        lines.push(`r = I[${H_INDEX + p.index} + na + nr];`);
        const w = p.nameWords;
        const checks = [`I[r] !== ${p.attrType}`, `I[r + 2] !== ${p.nameLen}`];
        if (w.length <= INLINE_NAME_WORDS) {
          for (let j = 0; j < w.length; j++) checks.push(`I[r + ${4 + j}] !== ${w[j]! | 0}`);
        } else {
          checks.push(`!nameMatches(${pk}, r)`);
        }
        lines.push(`if (${checks.join(" || ")}) return M;`, `v = r + ${p.valueSkip};`);
        const scalar = (expr: string) => {
          lines.push(`if (I[v] !== ${p.dtype}) return M;`, `const ${x} = ${expr};`);
        };
        switch (p.read) {
          case V_S32:
            scalar("I[v + 2]");
            break;
          case V_U32:
            scalar("I[v + 2] >>> 0");
            break;
          case V_F32:
            scalar("F[v + 2]");
            break;
          case V_F64:
            scalar("D[(v + 2) >> 1]");
            break;
          case V_S64:
          case V_U64:
            scalar(
              `(I[v + 3]${p.read === V_U64 ? " >>> 0" : ""}) * 4294967296 + (I[v + 2] >>> 0)`,
            );
            lines.push(`if (!Number.isSafeInteger(${x})) return M;`);
            break;
          case V_POINTER:
            scalar("I[v + 3] * 4294967296 + (I[v + 2] >>> 0)");
            break;
          case V_SCALAR:
            scalar(`readScalar(DV, 4 * (v + 2), ${p.dtype})`);
            break;
          case V_BIG:
            scalar(`bigScalar(${pk}, v + 2)`);
            break;
          case V_ARRAY:
            lines.push(`const ${x} = array(${pk}, v);`, `if (${x} === M) return M;`);
            break;
          case V_BIG_ARRAY:
            lines.push(
              `if (I[v] !== ${p.dtype}) return M;`,
              `const ${x} = readBigArray(DV, 4 * v);`,
            );
            break;
          case V_STRING:
            lines.push(`const ${x} = string(${pk}, v);`);
            break;
          default:
            lines.push(`const ${x} = dictionary(${pk}, r);`);
        }
        if (p.allowed !== undefined && p.read <= V_SCALAR && p.read !== V_BIG) {
          lines.push(`if (!allowed(${pk}, ${x})) return M;`);
        }
        break;
      }
      case K_ARGS:
      case K_RETS:
      case K_ATTRS:
        lines.push(`const ${x} = remaining(${pk}, na, nr);`);
        break;
      case K_STAGE:
        lines.push(`const ${x} = I[${H_STAGE}];`);
        break;
      case K_API:
        lines.push(`const ${x} = D[${H_API}];`);
        break;
      case K_CTX:
        lines.push(`const ${x} = D[${H_CTX}];`);
        break;
    }
  }
  lines.push(call ? `return fn(${names.join(", ")});` : "return 0;");
  const helpers = {
    I: flatI32,
    F: flatF32,
    D: flatF64,
    DV: flatDv,
    M: MISMATCH,
    P: plans,
    fn: e.fn,
    buffer,
    freshBuffer,
    share,
    FB: FfiBuffer,
    array,
    string,
    dictionary,
    remaining,
    bigScalar,
    readScalar,
    readBigArray,
    nameMatches,
    allowed,
  };
  const keys = Object.keys(helpers);
  try {
    const factory = new Function(
      ...keys,
      `"use strict";\nreturn function decodeAndCall() {\n${lines.join("\n")}\n};`,
    );
    return factory(...keys.map((k) => helpers[k as keyof typeof helpers]));
  } catch {
    return undefined; // code generation from strings disallowed: the plan decoder serves
  }
}
