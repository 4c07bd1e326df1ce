/**
 * The route-equivalence fuzzer's parts: a seeded generator of calls
 * (handler, operands, attributes), the handlers it calls (TypeScript,
 * synchronous, asynchronous and stateful; native ones from
 * native/tests/runtime_handlers.c) and every route a call can take through
 * the embedded runtime. Only the module's public entry (mod.ts) is used.
 */
import {
  type AttrDictionary,
  type AttrInput,
  type Binding,
  byteWidth,
  CallFrameBuilder,
  DataType,
  Dictionary,
  ErrorCode,
  Ffi,
  type FfiBuffer,
  FfiError,
  type Handler,
  HandlerBundle,
  type HandlerLibrary,
  type HandlerRef,
  type HandlerStages,
  type Instance,
  Runtime,
  scalar,
  ScalarAttr,
  typedArrayFor,
} from "../mod.ts";

// ---------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: a small deterministic PRNG over 32-bit state. */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Helpers over a PRNG. */
export class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.#next() * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.#next() < p;
  }
  /** One element of xs. */
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** A number from the environment (the fuzzer's knobs), or `fallback` when unset. */
export function envNumber(name: string, fallback: number): number {
  const v = Deno.env.get(name);
  return v === undefined || v === "" ? fallback : Number(v);
}

/** The run's seed: `ROUTE_FUZZ_SEED`, or the fixed one. */
export const SEED: number = envNumber("ROUTE_FUZZ_SEED", 20260707);

/** `ROUTE_FUZZ_CASE`: the one case to rerun, if set. */
export const ONE_CASE: string | undefined = Deno.env.get("ROUTE_FUZZ_CASE");

/** A number per family, so that families draw different cases from one seed. */
export function familySalt(family: Family): number {
  let h = 0;
  for (let i = 0; i < family.length; i++) h = Math.imul(h, 31) + family.charCodeAt(i) | 0;
  return h;
}

/** The PRNG seed of case `index` of a run seeded `seed` (cases are independent). */
export function caseSeed(seed: number, index: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (index + 0x85ebca6b), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------
// Operands

/** How an operand's array is made for one route. */
export type ViewKind = "plain" | "offset" | "shared" | "dup";

/** An operand: element type, shape, its bytes, and how its array is made. */
export interface Operand {
  dtype: DataType;
  shape: number[];
  bytes: Uint8Array;
  /** `dup`: the same array object as argument `dupOf`. */
  view: ViewKind;
  dupOf?: number;
}

/** A result spec. */
export interface ResultSpec {
  dtype: DataType;
  shape: number[];
}

/** The element types operands are drawn from. */
export const OPERAND_DTYPES: readonly DataType[] = [
  DataType.F32,
  DataType.F64,
  DataType.S8,
  DataType.U8,
  DataType.S16,
  DataType.S32,
  DataType.S64,
  DataType.U64,
  DataType.C64,
  DataType.S4,
  DataType.U4,
  DataType.PRED,
  DataType.BF16,
  DataType.F16,
];

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Bytes of an operand of this dtype and shape (sub-byte types: one element per byte). */
export function byteSize(dtype: DataType, shape: readonly number[]): number {
  return elementCount(shape) * byteWidth(dtype);
}

/** A valid byte for element byte `k` of a dtype (finite values, sub-byte values in range). */
function validByte(dtype: DataType, k: number, r: number): number {
  switch (dtype) {
    case DataType.PRED:
      return r & 1;
    case DataType.S4:
      return (r & 7) | ((r & 8) ? 0xf8 : 0); // -8..7 as a signed byte
    case DataType.U4:
      return r & 15;
    case DataType.F32:
    case DataType.C64:
      // The exponent byte (the last of each little-endian word) stays below 0x7f.
      return k % 4 === 3 ? r & 0x3f : r;
    case DataType.F64:
      return k % 8 === 7 ? r & 0x3f : r;
    case DataType.BF16:
    case DataType.F16:
      return k % 2 === 1 ? r & 0x3b : r;
    default:
      return r;
  }
}

/**
 * Bit patterns of each float type that a trip through a JS number, a
 * quieting copy or a flush-to-zero mode would change: signalling and quiet
 * NaNs of both signs with payloads, denormals of both signs, -0.
 */
const SPECIAL_OPERAND_BITS: Partial<Record<DataType, readonly bigint[]>> = {
  [DataType.F32]: [
    0x7f800001n,
    0xff800001n,
    0x7fa00005n,
    0x7fc00000n,
    0xffc00123n,
    0x00000001n,
    0x807fffffn,
    0x00400000n,
    0x80000000n,
    0x3f800000n,
  ],
  [DataType.F64]: [
    0x7ff0000000000001n,
    0xfff0000000000002n,
    0x7ff8000000000abcn,
    0xfff8000000000000n,
    0x0000000000000001n,
    0x800fffffffffffffn,
    0x8000000000000000n,
    0x3ff0000000000000n,
  ],
  [DataType.F16]: [0x7c01n, 0xfc01n, 0x7e05n, 0xfe00n, 0x0001n, 0x83ffn, 0x8000n, 0x3c00n],
  [DataType.BF16]: [0x7f81n, 0xff81n, 0x7fc5n, 0xffc0n, 0x0001n, 0x807fn, 0x8000n, 0x3f80n],
};
SPECIAL_OPERAND_BITS[DataType.C64] = SPECIAL_OPERAND_BITS[DataType.F32];

/**
 * Random bytes for an operand: valid values of its dtype, or, for a float
 * dtype with probability `special`, elements drawn from its NaN payloads
 * (quiet and signalling, both signs), denormals and -0 (with some 1.0s).
 */
export function randomBytes(
  rng: Rng,
  dtype: DataType,
  shape: readonly number[],
  special = 0.3,
): Uint8Array {
  const out = new Uint8Array(byteSize(dtype, shape));
  const bits = SPECIAL_OPERAND_BITS[dtype];
  if (bits !== undefined && out.length > 0 && rng.chance(special)) {
    const width = dtype === DataType.C64 ? 4 : byteWidth(dtype);
    const view = new DataView(out.buffer);
    for (let at = 0; at < out.length; at += width) {
      const b = rng.pick(bits);
      if (width === 8) view.setBigUint64(at, b, true);
      else if (width === 4) view.setUint32(at, Number(b), true);
      else view.setUint16(at, Number(b), true);
    }
    return out;
  }
  for (let k = 0; k < out.length; k++) out[k] = validByte(dtype, k, rng.int(256));
  return out;
}

function randomShape(rng: Rng): number[] {
  const rank = rng.int(4);
  const shape: number[] = [];
  for (let i = 0; i < rank; i++) shape.push(rng.chance(0.08) ? 0 : 1 + rng.int(4));
  return shape;
}

/** A typed array of the operand's dtype holding `bytes`, made as `view` says. */
export function makeArray(dtype: DataType, bytes: Uint8Array, view: ViewKind): ArrayBufferView {
  const Ctor = typedArrayFor(dtype)!;
  const per = Ctor.BYTES_PER_ELEMENT;
  const len = bytes.length / per;
  let out: ArrayBufferView;
  if (view === "offset") {
    // A subarray that starts 3 elements in, with spare bytes after it.
    const buf = new ArrayBuffer(bytes.length + 5 * per);
    new Uint8Array(buf).fill(0xee);
    out = new Ctor(buf, 3 * per, len);
  } else if (view === "shared") {
    out = new Ctor(new SharedArrayBuffer(bytes.length) as unknown as ArrayBuffer, 0, len);
  } else {
    out = new Ctor(len);
  }
  bytesOf(out).set(bytes);
  return out;
}

/** The bytes of an array view (no copy). */
export function bytesOf(v: ArrayBufferView): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

// ---------------------------------------------------------------------------
// Attributes

/** Pairs of attribute values that differ but print as the same JSON text. */
export function confusablePairs(): [AttrInput, AttrInput][] {
  return [
    [5n, "5n"],
    [Infinity, "Infinity"],
    [-Infinity, "-Infinity"],
    [scalar(DataType.S32, 5), { dtype: DataType.S32, value: 5 }],
    [new ScalarAttr(DataType.S32, 7), { dtype: DataType.S32, value: 7 }],
    [NaN, "NaN"],
  ];
}

function randomScalar(rng: Rng): AttrInput {
  switch (rng.int(9)) {
    case 0:
      return rng.int(1000) - 500; // S64
    case 1:
      return rng.int(1000) / 8 + 0.5; // F64
    case 2:
      return BigInt(rng.int(1 << 30)) * 3n; // S64 bigint
    case 3:
      return scalar(DataType.S32, rng.int(200) - 100);
    case 4:
      return scalar(DataType.F32, rng.int(64) / 4);
    case 5:
      return new ScalarAttr(DataType.U8, rng.int(256));
    case 6:
      return rng.chance(0.5);
    case 7:
      return scalar(DataType.S64, -(2n ** 40n) - BigInt(rng.int(99)));
    default:
      return scalar(DataType.F64, -0);
  }
}

/** F32 bit patterns a trip through a JS number would change or that flush: NaNs, denormals. */
const SPECIAL_F32 = [
  0x7f800001, // signalling NaN
  0xff800001, // signalling NaN, negative
  0x7fc00000, // quiet NaN
  0xffc00123, // quiet NaN with a payload, negative
  0x7fa00005, // signalling NaN with a payload
  0x00000001, // the smallest denormal
  0x807fffff, // the largest denormal, negative
  0x80000000, // -0
];

/** An F32 (or F64) array attribute of NaNs (quiet, signalling, both signs) and denormals. */
function specialFloats(rng: Rng, n: number): Float32Array | Float64Array {
  if (rng.chance(0.5)) {
    return new Float32Array(
      new Uint32Array(Array.from({ length: n }, () => rng.pick(SPECIAL_F32))).buffer,
    );
  }
  const f64 = [0x7ff0000000000001n, 0xfff8000000000abcn, 1n, 0x800fffffffffffffn];
  return new Float64Array(
    new BigUint64Array(Array.from({ length: n }, () => rng.pick(f64))).buffer,
  );
}

function randomAttr(rng: Rng, depth: number): AttrInput {
  const k = rng.int(depth > 0 ? 6 : 5);
  switch (k) {
    case 0:
    case 1:
      return randomScalar(rng);
    case 2:
      return rng.pick(["", "a", "reflect", "naïve ☃", "x".repeat(40)]) + rng.int(9);
    case 3: {
      const n = rng.int(5);
      if (rng.chance(0.25)) return specialFloats(rng, n);
      return rng.chance(0.5)
        ? new Int32Array(Array.from({ length: n }, () => rng.int(2000) - 1000))
        : new Float64Array(Array.from({ length: n }, () => rng.int(100) / 4));
    }
    case 4:
      return rng.pick(confusablePairs())[rng.int(2)]!;
    default:
      return randomAttrs(rng, depth - 1, 3);
  }
}

/** A random attribute dictionary (nested up to `depth`). */
export function randomAttrs(rng: Rng, depth: number, max: number): Record<string, AttrInput> {
  const out: Record<string, AttrInput> = {};
  const n = rng.int(max + 1);
  for (let i = 0; i < n; i++) {
    out[rng.pick(["a", "b", "k", "mode", "xs", "z", "nested"]) + i] = randomAttr(rng, depth);
  }
  return out;
}

/** A deep copy of a dictionary (typed arrays and nested objects copied; others shared). */
export function cloneAttrs(d: AttrDictionary): Record<string, AttrInput> {
  const out: Record<string, AttrInput> = {};
  for (const [k, v] of Object.entries(d as Record<string, AttrInput>)) {
    if (ArrayBuffer.isView(v)) out[k] = (v as Int32Array).slice();
    else if (
      typeof v === "object" && v !== null && !(v instanceof ScalarAttr) &&
      Object.getPrototypeOf(v) === Object.prototype
    ) out[k] = cloneAttrs(v as AttrDictionary);
    else out[k] = v;
  }
  return out;
}

/** Changes a dictionary in place (a value replaced, a typed array written). */
export function mutateAttrs(rng: Rng, d: Record<string, AttrInput>): void {
  const keys = Object.keys(d).filter((k) => k !== "type_id");
  if (keys.length === 0) {
    d["added"] = rng.int(100);
    return;
  }
  const k = rng.pick(keys);
  const v = d[k];
  if (ArrayBuffer.isView(v) && (v as Int32Array).length > 0) {
    (v as Int32Array)[0] = ((v as Int32Array)[0]! + 1) as never;
  } else if (k === "value") d[k] = rng.pick(confusablePairs())[rng.int(2)]!;
  else if (k === "delay_ms") d[k] = scalar(DataType.S32, rng.int(3)); // a random one could sleep for ages
  else if (k === "inline") d[k] = scalar(DataType.S32, rng.int(2));
  else if (k === "code" || k === "fail") d[k] = scalar(DataType.S32, rng.pick([2, 3, 5, 9, 13]));
  else d[k] = randomScalar(rng);
}

// ---------------------------------------------------------------------------
// TypeScript handlers

/** A description of a dictionary as a handler sees it (types and values). */
export function describe(d: Dictionary): string {
  const parts: string[] = [];
  for (const k of d.keys()) {
    const v = d.get(k);
    let s: string;
    if (v instanceof Dictionary) s = `{${describe(v)}}`;
    else if (Array.isArray(v)) s = `[${v.map((x) => `${typeof x}:${String(x)}`).join(",")}]`;
    else s = `${typeof v}:${Object.is(v, -0) ? "-0" : String(v)}`;
    parts.push(`${k}=${d.typeOf(k)}:${s}`);
  }
  return parts.join(";");
}

function fnv(h: number, b: number): number {
  return Math.imul(h ^ b, 0x01000193) >>> 0;
}

function hashText(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = fnv(h, s.charCodeAt(i) & 0xff);
  return fnv(h, s.length & 0xff);
}

/** What every TS handler computes: a digest of its operands, attributes and state. */
export function digest(args: readonly FfiBuffer[], attrs: Dictionary, tag: string): number {
  let h = 0x811c9dc5;
  for (const a of args) {
    h = hashText(h, `${a.dtype}:${a.dims.join("x")}`);
    const t = a.typed() as ArrayBufferView;
    const b = bytesOf(t);
    for (let i = 0; i < b.length; i++) h = fnv(h, b[i]!);
  }
  h = hashText(h, describe(attrs));
  return hashText(h, tag);
}

/** The bytes a TS handler writes into result `j` for digest `h` (some of them zero). */
export function pattern(h: number, j: number, dtype: DataType, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = (h ^ Math.imul(j + 1, 0x9e3779b1)) >>> 0;
  for (let k = 0; k < n; k++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const r = s >>> 24;
    out[k] = k % 5 === 0
      ? 0
      : (dtype === DataType.PRED
        ? 1
        : dtype === DataType.S4 || dtype === DataType.U4
        ? 1 + (r & 6)
        : r | 1);
  }
  return out;
}

/** Throws as attributes `fail` (an FfiError of that code) or `throw` (a plain Error) ask. */
function maybeFail(attrs: Dictionary, h: number): void {
  if (attrs.has("fail")) {
    throw new FfiError(Number(attrs.get("fail")) as ErrorCode, `fuzz failure ${h.toString(16)}`);
  }
  if (attrs.has("throw")) throw new Error(`fuzz exception ${h.toString(16)}`);
}

function writeResults(rets: readonly FfiBuffer[], h: number): void {
  rets.forEach((r, j) => {
    bytesOf(r.typed() as ArrayBufferView).set(pattern(h, j, r.dtype, r.byteSize));
  });
}

/** Gates async handlers wait on: the test pushes one per call it wants to hold. */
export class Gates {
  #queue: Promise<void>[] = [];
  /** Promises of every async handler body started, settled when it is done. */
  running: Promise<unknown>[] = [];
  /** Where closure-writing handlers write (the caller's result bytes). */
  target: Uint8Array | undefined;
  /** What the last closure-writing handler wrote there. */
  written: Uint8Array | undefined;
  /** A gate for the next async handler to start; resolve it to let it go on. */
  hold(): () => void {
    let open!: () => void;
    this.#queue.push(new Promise<void>((r) => open = r));
    return open;
  }
  /** The gate of the handler starting now (a resolved one if none is held). */
  take(): Promise<void> {
    return this.#queue.shift() ?? Promise.resolve();
  }
  /** Drops gates no handler took. */
  reset(): void {
    this.#queue = [];
  }
  /** Waits until every async handler body started so far settled. */
  async drain(): Promise<void> {
    const all = this.running;
    this.running = [];
    await Promise.allSettled(all);
  }
}

/** TS handler flavours. */
export type TsFlavour =
  | "sync" // returns after writing its results
  | "async" // an async function: awaits its gate, then writes
  | "asyncEarly" // an async function: writes, then awaits its gate
  | "promise" // a plain function returning a Promise that writes when its gate opens
  | "closure"; // synchronous, writes the caller's result array it closes over

type Loose = Binding<unknown[]>;

function variadic(b: Loose, nargs: number, nrets: number): Loose {
  for (let i = 0; i < nargs; i++) b = b.arg() as unknown as Loose;
  for (let i = 0; i < nrets; i++) b = b.ret() as unknown as Loose;
  return b.attrs() as unknown as Loose;
}

function body(
  flavour: TsFlavour,
  gates: Gates,
  nargs: number,
  nrets: number,
  stateful: boolean,
): (...xs: unknown[]) => unknown {
  return (...xs: unknown[]) => {
    const args = xs.slice(0, nargs) as FfiBuffer[];
    const rets = xs.slice(nargs, nargs + nrets) as FfiBuffer[];
    const attrs = xs[nargs + nrets] as Dictionary;
    const tag = stateful ? (xs[nargs + nrets + 1] as { tag: string }).tag : "";
    const h = digest(args, attrs, tag);
    switch (flavour) {
      case "sync":
        maybeFail(attrs, h);
        writeResults(rets, h);
        return;
      case "closure": {
        maybeFail(attrs, h);
        const r = rets[0]!;
        gates.written = pattern(h, 0, r.dtype, r.byteSize);
        gates.target?.set(gates.written);
        return;
      }
      case "async": {
        const gate = gates.take();
        const p = (async () => {
          await gate;
          maybeFail(attrs, h);
          writeResults(rets, h);
        })();
        gates.running.push(p);
        return p;
      }
      case "asyncEarly": {
        const gate = gates.take();
        const p = (async () => {
          maybeFail(attrs, h);
          writeResults(rets, h);
          await gate;
        })();
        gates.running.push(p);
        return p;
      }
      case "promise": {
        const gate = gates.take();
        const p = gate.then(() => {
          maybeFail(attrs, h);
          writeResults(rets, h);
        });
        gates.running.push(p);
        return p;
      }
    }
  };
}

/** TS handlers of one flavour, made once per operand count and kept until close. */
export class TsHandlers {
  readonly #made = new Map<string, Handler | HandlerBundle>();
  constructor(readonly gates: Gates) {}

  /** A handler taking `nargs` buffers, `nrets` results and every attribute. */
  plain(flavour: TsFlavour, nargs: number, nrets: number): Handler {
    const key = `${flavour}:${nargs}:${nrets}`;
    let h = this.#made.get(key) as Handler | undefined;
    if (h === undefined) {
      const fn = body(flavour, this.gates, nargs, nrets, false);
      h = flavour === "async" || flavour === "asyncEarly"
        ? variadic(Ffi.bind() as unknown as Loose, nargs, nrets).to(async (...xs) =>
          await fn(...xs)
        )
        : variadic(Ffi.bind() as unknown as Loose, nargs, nrets).to(fn);
      this.#made.set(key, h);
    }
    return h;
  }

  /** A bundle whose instantiate stage keeps a description of the attributes it saw. */
  stateful(flavour: TsFlavour, nargs: number, nrets: number): HandlerBundle {
    const key = `state:${flavour}:${nargs}:${nrets}`;
    let b = this.#made.get(key) as HandlerBundle | undefined;
    if (b === undefined) {
      const fn = body(flavour, this.gates, nargs, nrets, true);
      const exec = variadic(Ffi.bind() as unknown as Loose, nargs, nrets)
        .state() as unknown as Loose;
      b = new HandlerBundle({
        instantiate: (Ffi.bindInstantiate().attrs() as unknown as Loose).to((...xs: unknown[]) => ({
          tag: describe(xs[0] as Dictionary),
        })),
        execute: flavour === "async" || flavour === "asyncEarly"
          ? exec.to(async (...xs) => await fn(...xs))
          : exec.to(fn),
      });
      this.#made.set(key, b);
    }
    return b;
  }

  close(): void {
    for (const h of this.#made.values()) h.close();
    this.#made.clear();
  }
}

// ---------------------------------------------------------------------------
// Cases

/** Handler families. */
export type Family =
  | "tsSync"
  | "tsAsync"
  | "tsClosure"
  | "tsState"
  | "nativeEcho"
  | "nativeAttrs"
  | "nativeError"
  | "nativeAsync"
  | "nativeState"
  | "nativeScale";

/** One call: what is called, with what. */
export interface Call {
  family: Family;
  flavour: TsFlavour;
  args: Operand[];
  rets: ResultSpec[];
  attrs: Record<string, AttrInput>;
  /** ffiCall's inputOutputAliases (argument → result); frames pass one array for both. */
  aliases: Record<number, number>;
}

/** Everything the routes need to reach the runtime's handlers. */
export interface Env {
  rt: Runtime;
  lib: HandlerLibrary;
  iso: HandlerLibrary | undefined;
  ts: TsHandlers;
  gates: Gates;
  stateTypeId: number;
}

function f32Operand(rng: Rng, shape: number[], view: ViewKind): Operand {
  return { dtype: DataType.F32, shape, bytes: randomBytes(rng, DataType.F32, shape), view };
}

function pickView(rng: Rng, i: number): { view: ViewKind; dupOf?: number } {
  if (i > 0 && rng.chance(0.12)) return { view: "dup", dupOf: rng.int(i) };
  return { view: rng.pick(["plain", "plain", "offset", "shared"] as const) };
}

/** Generates one call of a family. */
export function generate(rng: Rng, family: Family, stateTypeId: number): Call {
  const flavour: TsFlavour = family === "tsSync" || family === "tsState"
    ? "sync"
    : family === "tsClosure"
    ? "closure"
    : family === "tsAsync"
    ? rng.pick(["async", "asyncEarly", "promise"] as const)
    : "sync";
  const call: Call = { family, flavour, args: [], rets: [], attrs: {}, aliases: {} };
  const addArgs = (n: number, make: (i: number) => Omit<Operand, "view">) => {
    for (let i = 0; i < n; i++) {
      const v = pickView(rng, i);
      if (v.view === "dup") {
        const src = call.args[v.dupOf!]!;
        call.args.push({ ...src, view: "dup", dupOf: v.dupOf });
      } else call.args.push({ ...make(i), view: v.view });
    }
  };
  switch (family) {
    case "tsSync":
    case "tsAsync":
    case "tsState":
    case "tsClosure": {
      addArgs(rng.int(4), () => {
        const dtype = rng.pick(OPERAND_DTYPES), shape = randomShape(rng);
        return { dtype, shape, bytes: randomBytes(rng, dtype, shape) };
      });
      const nrets = family === "tsClosure" ? 1 : rng.int(3) + (rng.chance(0.9) ? 1 : 0);
      for (let j = 0; j < nrets; j++) {
        call.rets.push({ dtype: rng.pick(OPERAND_DTYPES), shape: randomShape(rng) });
      }
      if (family === "tsClosure") {
        // Small results: the kind a synchronous handler on the JS thread may be given.
        call.rets[0] = { dtype: rng.pick([DataType.F32, DataType.S32, DataType.U8]), shape: [4] };
      }
      call.attrs = randomAttrs(rng, 2, 4);
      if (rng.chance(0.12)) {
        call.attrs[rng.chance(0.7) ? "fail" : "throw"] = rng.pick([2, 3, 5, 9, 13]);
      }
      // An aliased pair: a result with an argument's dtype and shape.
      if (
        family !== "tsClosure" && call.args.length > 0 && call.rets.length > 0 && rng.chance(0.2)
      ) {
        const i = rng.int(call.args.length), j = rng.int(call.rets.length);
        const a = call.args[i]!;
        if (a.view !== "dup" && !call.args.some((o) => o.dupOf === i)) {
          call.rets[j] = { dtype: a.dtype, shape: a.shape };
          call.aliases[i] = j;
        }
      }
      break;
    }
    case "nativeEcho": {
      const n = rng.int(3);
      // No zero-sized operands: test_echo memcpy()s from their null data (undefined behaviour
      // that the sanitizer run stops at).
      addArgs(n, () => f32Operand(rng, randomShape(rng).map((d) => d || 1), "plain"));
      for (const a of call.args) call.rets.push({ dtype: DataType.F32, shape: a.shape });
      call.attrs = randomAttrs(rng, 2, 3);
      if (n > 0 && rng.chance(0.2) && call.args[0]!.view !== "dup") {
        if (!call.args.some((o) => o.dupOf === 0)) call.aliases[0] = 0;
      }
      break;
    }
    case "nativeAttrs": {
      call.rets.push({ dtype: DataType.U8, shape: [rng.pick([64, 512, 2048])] });
      call.attrs = randomAttrs(rng, 3, 5);
      break;
    }
    case "nativeError": {
      call.attrs = {
        code: scalar(DataType.S32, rng.pick([1, 2, 3, 5, 9, 13])),
        message: `native failure ${rng.int(1e6)}`,
      };
      if (rng.chance(0.5)) call.rets.push({ dtype: DataType.F32, shape: [2] });
      break;
    }
    case "nativeAsync": {
      const shape = randomShape(rng);
      addArgs(1, () => f32Operand(rng, shape, "plain"));
      call.rets.push({ dtype: DataType.F32, shape });
      call.attrs = {
        delay_ms: scalar(DataType.S32, rng.pick([0, 0, 1, 3])),
        inline: scalar(DataType.S32, rng.chance(0.3) ? 1 : 0),
      };
      if (rng.chance(0.15)) call.attrs.fail = scalar(DataType.S32, 1);
      break;
    }
    case "nativeScale": {
      // Float arithmetic in a native handler: denormal operands, factors and products show
      // whether a route computes in the floating-point mode XLA sets (docs/runtime.md).
      const shape = randomShape(rng);
      const bytes = randomBytes(rng, DataType.F32, shape, 0.7);
      call.args.push({ dtype: DataType.F32, shape, bytes, view: pickView(rng, 0).view });
      call.rets.push({ dtype: DataType.F32, shape });
      const factor = rng.pick([0x3f000000, 0x40000000, 0x0d8ec9b8, 0x00000001, 0x80000000]);
      call.attrs = {
        factor: scalar(DataType.F32, new Float32Array(new Uint32Array([factor]).buffer)[0]!),
      };
      if (rng.chance(0.25) && call.args[0]!.view !== "dup") call.aliases[0] = 0;
      break;
    }
    case "nativeState": {
      call.rets.push({ dtype: DataType.S64, shape: [] });
      call.attrs = {
        type_id: scalar(DataType.S64, stateTypeId),
        value: rng.chance(0.5)
          ? rng.pick(confusablePairs())[rng.int(2)]!
          : scalar(DataType.S32, rng.int(1000)),
      };
      if (rng.chance(0.5)) call.attrs.extra = randomAttr(rng, 1);
      break;
    }
  }
  return call;
}

/** The same call with new operand bytes (same signature). */
export function withNewData(rng: Rng, c: Call): Call {
  const args = c.args.map((a) =>
    a.view === "dup" ? a : { ...a, bytes: randomBytes(rng, a.dtype, a.shape) }
  );
  for (const a of args) if (a.view === "dup") a.bytes = args[a.dupOf!]!.bytes;
  return { ...c, args, attrs: cloneAttrs(c.attrs) };
}

/** The call with one attribute swapped for a value of the same JSON text. */
export function confusableTwin(rng: Rng, c: Call): Call | undefined {
  const attrs = cloneAttrs(c.attrs);
  const pairs = confusablePairs();
  const names = Object.keys(attrs).filter((k) => k !== "type_id");
  for (const k of names) {
    for (const [x, y] of pairs) {
      if (sameAttr(attrs[k], x)) {
        attrs[k] = y;
        return { ...c, attrs };
      }
      if (sameAttr(attrs[k], y)) {
        attrs[k] = x;
        return { ...c, attrs };
      }
    }
  }
  if (c.family === "nativeAsync" || c.family === "nativeError") return undefined;
  const [x, y] = rng.pick(pairs);
  const first = cloneAttrs(c.attrs), second = cloneAttrs(c.attrs);
  first.twin = x;
  second.twin = y;
  c.attrs = first;
  return { ...c, attrs: second };
}

function sameAttr(a: AttrInput | undefined, b: AttrInput): boolean {
  if (a instanceof ScalarAttr && b instanceof ScalarAttr) {
    return a.dtype === b.dtype && a.value === b.value && a.constructor === b.constructor;
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    if (a instanceof ScalarAttr || b instanceof ScalarAttr) return false;
    const text = (v: unknown) => JSON.stringify(v, (_k, x) => typeof x === "bigint" ? `${x}n` : x);
    return text(a) === text(b) && !ArrayBuffer.isView(a);
  }
  return Object.is(a, b);
}

/** Makes the arrays of a call's arguments for one route (dup: the same object again). */
export function argArrays(c: Call): ArrayBufferView[] {
  const out: ArrayBufferView[] = [];
  c.args.forEach((a, i) => {
    out[i] = a.view === "dup" ? out[a.dupOf!]! : makeArray(a.dtype, a.bytes, a.view);
  });
  return out;
}

/** The handler a call targets (a bundle for the stateful families). */
export function target(env: Env, c: Call, isolated = false): HandlerRef | HandlerStages {
  const lib = isolated ? env.iso! : env.lib;
  switch (c.family) {
    case "tsSync":
    case "tsAsync":
    case "tsClosure":
      return env.ts.plain(c.flavour, c.args.length, c.rets.length);
    case "tsState":
      return env.ts.stateful(c.flavour, c.args.length, c.rets.length);
    case "nativeEcho":
      return lib.handler("test_echo");
    case "nativeAttrs":
      return lib.handler("test_attrs");
    case "nativeError":
      return lib.handler("test_return_error");
    case "nativeAsync":
      return lib.handler("test_async");
    case "nativeScale":
      return lib.handler("test_scale");
    case "nativeState": {
      const h = lib.handler("test_stateful");
      return { instantiate: h, execute: h };
    }
  }
}

export function isStateful(c: Call): boolean {
  return c.family === "tsState" || c.family === "nativeState";
}

// ---------------------------------------------------------------------------
// Outcomes

/** What a route gave: result bytes, or an error's code and message. */
export type Outcome =
  | { ok: true; bytes: Uint8Array[] }
  | { ok: false; code: number; message: string };

export function errorOutcome(e: unknown): Outcome {
  if (e instanceof FfiError) return { ok: false, code: e.code, message: e.message };
  return { ok: false, code: -1, message: `not an FfiError: ${String(e)}` };
}

function hex(b: Uint8Array, from: number, n: number): string {
  return [...b.subarray(from, from + n)].map((x) => x.toString(16).padStart(2, "0")).join(" ");
}

/** Undefined when equal, else what differs (the first differing bytes). */
export function diff(a: Outcome, b: Outcome): string | undefined {
  if (a.ok !== b.ok) {
    return `one succeeded, one failed: ${show(a)} vs ${show(b)}`;
  }
  if (!a.ok || !b.ok) {
    const x = a as { code: number; message: string }, y = b as typeof x;
    if (x.code !== y.code || x.message !== y.message) {
      return `errors differ: [${x.code}] ${JSON.stringify(x.message)} vs [${y.code}] ${
        JSON.stringify(y.message)
      }`;
    }
    return undefined;
  }
  if (a.bytes.length !== b.bytes.length) {
    return `result counts ${a.bytes.length} vs ${b.bytes.length}`;
  }
  for (let j = 0; j < a.bytes.length; j++) {
    const x = a.bytes[j]!, y = b.bytes[j]!;
    if (x.length !== y.length) return `result ${j}: ${x.length} vs ${y.length} bytes`;
    for (let k = 0; k < x.length; k++) {
      if (x[k] !== y[k]) {
        const from = Math.max(0, k - 4);
        return `result ${j} (${x.length} bytes) differs from byte ${k}: ` +
          `[${from}..] ${hex(x, from, 16)} vs ${hex(y, from, 16)}`;
      }
    }
  }
  return undefined;
}

function show(o: Outcome): string {
  return o.ok
    ? `ok(${o.bytes.map((b) => b.length).join(",")} bytes)`
    : `error [${o.code}] ${JSON.stringify(o.message)}`;
}

/** A copy of the bytes of each array, taken now. */
export function snapshot(arrays: readonly ArrayBufferView[]): Uint8Array[] {
  return arrays.map((a) => bytesOf(a).slice());
}

// ---------------------------------------------------------------------------
// Frames

/** A frame of a call over fresh arrays, and its result arrays. */
export interface Built {
  frame: import("../mod.ts").CallFrame;
  args: ArrayBufferView[];
  rets: ArrayBufferView[];
}

/** Builds a frame over new arrays for a call; aliased results are their argument's array. */
export function buildFrame(c: Call, guard: boolean): Built {
  const args = argArrays(c);
  // An aliased argument gets an array of its own (its result changes it).
  for (const [i] of Object.entries(c.aliases)) {
    const a = c.args[Number(i)]!;
    args[Number(i)] = makeArray(a.dtype, a.bytes, a.view === "dup" ? "plain" : a.view);
  }
  const rets: ArrayBufferView[] = c.rets.map((r) =>
    makeArray(r.dtype, new Uint8Array(byteSize(r.dtype, r.shape)), "plain")
  );
  for (const [i, j] of Object.entries(c.aliases)) rets[j] = args[Number(i)]!;
  const b = new CallFrameBuilder(guard ? { guard: true } : undefined);
  c.args.forEach((a, i) => b.arg({ data: args[i]!, shape: a.shape, dtype: a.dtype }));
  c.rets.forEach((r, j) => b.ret({ data: rets[j]!, shape: r.shape, dtype: r.dtype }));
  b.attrs(c.attrs);
  return { frame: b.build(), args, rets };
}

/** Runs a frame route: builds, instantiates a bundle where needed, calls, closes. */
export async function frameRoute(
  env: Env,
  c: Call,
  how: "callSync" | "call" | "threads",
  opts: { guard?: boolean; isolated?: boolean; rt?: Runtime } = {},
): Promise<Outcome> {
  const rt = opts.rt ?? env.rt;
  let built: Built;
  try {
    built = buildFrame(c, opts.guard === true);
  } catch (e) {
    return errorOutcome(e);
  }
  const t = target(env, c, opts.isolated);
  let inst: Instance | undefined;
  try {
    if (isStateful(c)) inst = await rt.instantiate(t, built.frame);
    if (c.family === "tsClosure") env.gates.target = bytesOf(built.rets[0]!);
    const options = inst ? { instance: inst } : undefined;
    if (how === "callSync") rt.callSync(t, built.frame, options);
    else if (how === "call") {
      await rt.call(t, built.frame, options);
    } else {
      const r = await rt.callOnThreads(t, built.frame, { ...options, threads: 1, iterations: 1 });
      if (r.firstError !== undefined) return errorOutcome(r.firstError);
      if (r.ok !== 1) {
        return { ok: false, code: -2, message: `callOnThreads: ${JSON.stringify(r)}` };
      }
    }
    return { ok: true, bytes: snapshot(built.rets) };
  } catch (e) {
    return errorOutcome(e);
  } finally {
    env.gates.target = undefined;
    await env.gates.drain();
    inst?.close();
    built.frame.close();
  }
}

/** ffiCall's options for a call, over new arrays. */
export function ffiOptions(c: Call, guard: boolean) {
  const arrays = argArrays(c);
  return {
    args: c.args.map((a, i) => ({ data: arrays[i]!, shape: a.shape, dtype: a.dtype })),
    results: c.rets.map((r) => ({ dtype: r.dtype, shape: r.shape })),
    attrs: cloneAttrs(c.attrs),
    inputOutputAliases: Object.keys(c.aliases).length > 0 ? c.aliases : undefined,
    guard: guard || undefined,
    // The frame routes always run the handler; ffiCall runs a call whose results hold no
    // element only with a side effect, as jax and XLA do (the dropped call is checked on its
    // own in the test).
    hasSideEffect: noElements(c) || undefined,
    arrays,
  };
}

/** Whether no result of a call holds an element (none at all, or each with a zero dim). */
export function noElements(c: Call): boolean {
  return c.rets.every((r) => r.shape.includes(0));
}

/** Calls ffiCall; the outcome is taken the moment the call settles. */
export function ffiRoute(
  env: Env,
  c: Call,
  opts: { guard?: boolean; isolated?: boolean; options?: ReturnType<typeof ffiOptions> } = {},
): { promise: Promise<Outcome>; results: Promise<ArrayBufferView[] | undefined> } {
  const o = opts.options ?? ffiOptions(c, opts.guard === true);
  let p: Promise<ArrayBufferView[]>;
  try {
    const { arrays: _, ...options } = o;
    p = env.rt.ffiCall(target(env, c, opts.isolated), options) as Promise<ArrayBufferView[]>;
  } catch (e) {
    p = Promise.reject(e);
  }
  const promise = p.then(
    (rs): Outcome => {
      const gone = rs.findIndex((r) =>
        r.byteLength === 0 && r.buffer.byteLength === 0 &&
        (r.buffer as ArrayBuffer).detached === true
      );
      if (gone >= 0) {
        return { ok: false, code: -3, message: `result ${gone} came back detached` };
      }
      return { ok: true, bytes: snapshot(rs) };
    },
    (e) => errorOutcome(e),
  );
  return { promise, results: p.then((rs) => rs, () => undefined) };
}

/** One macrotask. */
export function tick(ms = 0): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Opens a runtime for the fuzzer (2 pool threads). */
export function openRuntime(): Runtime {
  return new Runtime({ threads: 2 });
}

export { ErrorCode };
