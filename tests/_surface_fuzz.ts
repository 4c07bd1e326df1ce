/**
 * A generative fuzzer of the module's TypeScript surface: CallFrameBuilder
 * (buffers and attributes), the frame setters, Runtime.callSync/call and
 * their options, Runtime.ffiCall and its options, readNpy and the command
 * line's parsers. Every case's outcome must be a success (checked against
 * a model: the right result, no invalid input accepted) or a thrown FfiError
 * with a valid code; anything else is a violation.
 *
 * Run as a script (tests/surface_fuzz_test.ts runs it in a child process, so
 * that a crash or a hang is reported instead of taking the runner down):
 *
 *   deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env \
 *     tests/_surface_fuzz.ts PROGRESS_FILE
 *
 * Before each case the script writes `seed`, the case number, the target and
 * a description of the input to PROGRESS_FILE (then the same for the few
 * cases before it); at the end it prints one line
 * `SURFACE_FUZZ_SUMMARY {json}` ({@link FuzzSummary}).
 *
 * Environment: XLA_FFI_DENO_SURFACE_FUZZ_SEED (default 20260104),
 * XLA_FFI_DENO_SURFACE_FUZZ_CASES (default 3000),
 * XLA_FFI_DENO_SURFACE_FUZZ_CASE (run only this case number: each case has
 * its own generator, seeded from the seed and its number),
 * XLA_FFI_DENO_SURFACE_FUZZ_TARGETS (comma-separated subset of
 * {@link TARGETS}), XLA_FFI_DENO_SURFACE_FUZZ_BUDGET_MS (stop starting new
 * cases after this long; default 20000).
 *
 * @module
 */
import {
  allDataTypes,
  array,
  CallFrame,
  CallFrameBuilder,
  DataType,
  dataTypeInfo,
  ErrorCode,
  ExecutionStage,
  Ffi,
  type FfiCallOptions,
  FfiError,
  Runtime,
  scalar,
} from "../mod.ts";
import type { Handler } from "../src/handler/mod.ts";
import { HandlerLibrary, type NativeHandler } from "../src/runtime/handler_library.ts";
import { OPTIONS as FFI_CALL_OPTIONS } from "../src/runtime/ffi_call.ts";
import { readNpy, type ReadNpyOptions, writeNpy } from "../src/npy.ts";
import { parseCommandLine } from "../src/cli/args.ts";
import {
  addAttr,
  type AttrDictionary as CliAttrs,
  parseArgSpec,
  parseAttrValue,
  parseDims,
  parseRetSpec,
  parseValues,
} from "../src/spec/grammar.ts";
import { openTestHandlers, testHandlersPath } from "./_runtime_handlers.ts";

/** The parts of the surface the fuzzer drives. */
export const TARGETS = [
  "builder",
  "attrs",
  "setters",
  "call-options",
  "ffiCall",
  "npy",
  "cli",
  "valid",
] as const;
export type Target = typeof TARGETS[number];

/** The line prefix of the summary the script prints. */
export const SUMMARY_TAG = "SURFACE_FUZZ_SUMMARY ";

/** One distinct violation (the first case that showed it, and how many did). */
export interface ViolationRecord {
  target: string;
  kind: string;
  detail: string;
  case: number;
  input: string;
  count: number;
}

/** What the script prints at the end. */
export interface FuzzSummary {
  seed: number;
  /** Cases run. */
  cases: number;
  /** Cases that broke no rule. */
  passed: number;
  /** Surface calls that succeeded, and that threw an FfiError. */
  calls: { ok: number; ffiError: number };
  violations: ViolationRecord[];
  perTarget: Record<string, number>;
  ms: number;
}

/** Default seed, case count and time budget. */
export const DEFAULT_SEED = 20260104;
export const DEFAULT_CASES = 3000;
export const DEFAULT_BUDGET_MS = 20000;

// ---------------------------------------------------------------------------
// Seeded generator.

/** mulberry32: small, fast, and the same sequence on every machine. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  u32(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** The seed of case `n` of a run seeded `seed`. */
export function caseSeed(seed: number, n: number): number {
  let h = (seed ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------
// Describing inputs.

/** A short, readable description of any value (typed arrays by kind, length and state). */
export function show(v: unknown, depth = 0): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "number") {
    if (Object.is(v, -0)) return "-0";
    if (Number.isInteger(v) && Math.abs(v) >= 2 ** 31) {
      return `2**${Math.log2(Math.abs(v)).toFixed(2)}`.replace(".00", "") + (v < 0 ? "(neg)" : "");
    }
    return String(v);
  }
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") {
    return v.length > 80
      ? `${JSON.stringify(v.slice(0, 60))}…(${v.length} chars)`
      : JSON.stringify(v);
  }
  if (typeof v === "boolean") return String(v);
  if (typeof v === "symbol") return v.toString();
  if (typeof v === "function") return `function ${v.name || "anonymous"}`;
  if (v instanceof DataView || ArrayBuffer.isView(v)) {
    const view = v as ArrayBufferView;
    const detached = (view.buffer as ArrayBuffer).detached === true;
    const len = "length" in view ? (view as unknown as { length: number }).length : view.byteLength;
    const shared = typeof SharedArrayBuffer === "function" &&
      view.buffer instanceof SharedArrayBuffer;
    return `${view.constructor.name}(${len}${view.byteOffset ? ` @+${view.byteOffset}` : ""}${
      detached ? ", detached" : ""
    }${shared ? ", shared" : ""})`;
  }
  if (v instanceof CallFrame) return `CallFrame(${v.numArgs} args, ${v.numRets} rets)`;
  if (depth > 3) return "…";
  if (Array.isArray(v)) {
    const head = v.slice(0, 8).map((x) => show(x, depth + 1)).join(", ");
    return `[${head}${v.length > 8 ? `, …(${v.length} items)` : ""}]`;
  }
  if (v instanceof Map) {
    const items = [...v].slice(0, 6).map(([k, x]) =>
      `${show(k, depth + 1)} => ${show(x, depth + 1)}`
    );
    return `Map{${items.join(", ")}${v.size > 6 ? `, …(${v.size})` : ""}}`;
  }
  if (typeof v === "object") {
    const proto = Object.getPrototypeOf(v);
    const name = proto === null
      ? "[null prototype]"
      : proto === Object.prototype
      ? ""
      : `${proto.constructor?.name ?? "?"} `;
    const keys = Object.keys(v);
    const items = keys.slice(0, 6).map((k) =>
      `${k}: ${show((v as Record<string, unknown>)[k], depth + 1)}`
    );
    return `${name}{${items.join(", ")}${keys.length > 6 ? `, …(${keys.length} keys)` : ""}}`;
  }
  return String(v);
}

// ---------------------------------------------------------------------------
// Outcomes.

/** A case broke the module's rule (or the model of what success means). */
export class Violation extends Error {
  constructor(readonly kind: string, readonly detail: string) {
    super(`${kind}: ${detail}`);
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: FfiError };

/** Outcomes of the surface calls made so far: successes and FfiErrors. */
export const tally = { ok: 0, ffiError: 0 };

function classify(what: string, e: unknown, op?: string): FfiError {
  if (e instanceof Violation) throw e;
  const at = op === undefined ? "" : ` [at ${op}]`;
  if (e instanceof FfiError) {
    if (typeof e.code === "number" && e.code >= 1 && e.code <= 16) return e;
    throw new Violation(`${what} threw an FfiError with code ${show(e.code)}`, e.message + at);
  }
  const name = e instanceof Error ? e.constructor.name : typeof e;
  const message = e instanceof Error ? e.message : show(e);
  throw new Violation(`${what} threw ${name}`, message + at);
}

/**
 * Runs one call of the surface (`what`: the API; `op`: the call as written,
 * for the report): its value, or the FfiError it threw; anything else is a
 * violation.
 */
function attempt<T>(what: string, fn: () => T, op?: string): Outcome<T> {
  try {
    const value = fn();
    tally.ok++;
    return { ok: true, value };
  } catch (e) {
    const error = classify(what, e, op);
    tally.ffiError++;
    return { ok: false, error };
  }
}

async function attemptAsync<T>(
  what: string,
  fn: () => Promise<T>,
  op?: string,
): Promise<Outcome<T>> {
  try {
    const value = await fn();
    tally.ok++;
    return { ok: true, value };
  } catch (e) {
    const error = classify(what, e, op);
    tally.ffiError++;
    return { ok: false, error };
  }
}

/** Validity of an input by the model: true, false (with why), or "either" (both outcomes fine). */
type Verdict = { valid: true } | { valid: false; why: string; detail?: string } | {
  valid: "either";
};

function judge(
  what: string,
  verdict: Verdict,
  outcome: Outcome<unknown>,
  op: string,
  rankLimitOk = true,
): void {
  if (verdict.valid === false && outcome.ok) {
    throw new Violation(`${what} accepted ${verdict.why}`, `${verdict.detail ?? ""} [at ${op}]`);
  }
  if (verdict.valid === true && !outcome.ok && rankLimitOk) {
    throw new Violation(`${what} rejected a valid input`, `${outcome.error.message} [at ${op}]`);
  }
}

// ---------------------------------------------------------------------------
// Shared generators.

const DTYPES = allDataTypes();
const REAL_DTYPES = DTYPES.filter((t) => dataTypeInfo(t).byteWidth > 0);
const SUB_BYTE = [
  DataType.S4,
  DataType.U4,
  DataType.S2,
  DataType.U2,
  DataType.S1,
  DataType.U1,
  DataType.F4E2M1FN,
];
const JUNK_DTYPES: unknown[] = [
  -1,
  13,
  14,
  34,
  99,
  1.5,
  NaN,
  Infinity,
  2 ** 32 + 11,
  "F32",
  "f32",
  null,
  {},
  11n,
  true,
];

const f16 = (globalThis as { Float16Array?: new (n: number | ArrayBuffer) => ArrayBufferView })
  .Float16Array;

type ViewCtor = new (buffer: ArrayBuffer, byteOffset?: number, length?: number) => ArrayBufferView;
const VIEW_KINDS: { ctor: ViewCtor; bytes: number }[] = [
  { ctor: Float32Array, bytes: 4 },
  { ctor: Float64Array, bytes: 8 },
  { ctor: Int8Array, bytes: 1 },
  { ctor: Uint8Array, bytes: 1 },
  { ctor: Uint8ClampedArray, bytes: 1 },
  { ctor: Int16Array, bytes: 2 },
  { ctor: Uint16Array, bytes: 2 },
  { ctor: Int32Array, bytes: 4 },
  { ctor: Uint32Array, bytes: 4 },
  { ctor: BigInt64Array, bytes: 8 },
  { ctor: BigUint64Array, bytes: 8 },
  ...(f16 ? [{ ctor: f16 as unknown as ViewCtor, bytes: 2 }] : []),
];

/** The dtype a typed array's kind implies (what the builder infers), or undefined. */
function inferredDtype(v: ArrayBufferView): DataType | undefined {
  const map = new Map<unknown, DataType>([
    [Int8Array, DataType.S8],
    [Int16Array, DataType.S16],
    [Int32Array, DataType.S32],
    [BigInt64Array, DataType.S64],
    [Uint8Array, DataType.U8],
    [Uint8ClampedArray, DataType.U8],
    [Uint16Array, DataType.U16],
    [Uint32Array, DataType.U32],
    [BigUint64Array, DataType.U64],
    [Float32Array, DataType.F32],
    [Float64Array, DataType.F64],
  ]);
  if (f16) map.set(f16, DataType.F16);
  return map.get(v.constructor);
}

function isDetached(v: ArrayBufferView): boolean {
  return (v.buffer as ArrayBuffer).detached === true;
}

/**
 * Detaches a view's buffer: `transfer()` (the memory moves to a new buffer) or,
 * with `grow`, `transfer(length)` to a larger size (the memory may be freed).
 */
function detach(v: ArrayBufferView, grow = 0): ArrayBuffer | undefined {
  const b = v.buffer as ArrayBuffer & { transfer?: (n?: number) => ArrayBuffer };
  if (!(b instanceof ArrayBuffer) || b.detached) return;
  return grow > 0 ? b.transfer!(b.byteLength + grow) : b.transfer!();
}

/** A view of `bytes` bytes (rounded down to the kind's element size), sometimes at an offset, random contents. */
function makeView(
  rng: Rng,
  bytes: number,
  kind?: { ctor: ViewCtor; bytes: number },
): ArrayBufferView {
  const k = kind ?? rng.pick(VIEW_KINDS);
  const n = Math.floor(bytes / k.bytes);
  const offset = rng.chance(0.2) ? k.bytes * rng.range(1, 3) : 0;
  const buf = new ArrayBuffer(offset + n * k.bytes + (rng.chance(0.2) ? 8 : 0));
  const u8 = new Uint8Array(buf);
  for (let i = 0; i < u8.length; i++) u8[i] = rng.int(256);
  return new k.ctor(buf, offset, n);
}

/** A Float32Array of n finite values (small integers and fractions). */
function floats(rng: Rng, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.int(2001) - 1000) / 8;
  return out;
}

/** Dims the model accepts: rank 0..4 (sometimes up to 8 with ones), at most 64 elements. */
function goodDims(rng: Rng): number[] {
  const rank = rng.chance(0.1) ? rng.range(5, 8) : rng.int(5);
  const dims: number[] = [];
  let n = 1;
  for (let i = 0; i < rank; i++) {
    const d = rng.chance(0.08) ? 0 : n >= 16 ? 1 : rng.range(1, 4);
    dims.push(d);
    n *= d;
  }
  return dims;
}

const HUGE_DIMS: unknown[] = [
  2 ** 31,
  2 ** 32,
  2 ** 32 + 1,
  2 ** 40,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 62,
  1e300,
  Infinity,
  -Infinity,
  -1,
  -0,
  1.5,
  NaN,
  "3",
  null,
  undefined,
  2n,
  {},
];

/** Any dims: mostly good, else with huge, negative, fractional, NaN entries, high ranks, non-arrays. */
function anyDims(rng: Rng): unknown {
  const r = rng.float();
  if (r < 0.55) return goodDims(rng);
  if (r < 0.6) return rng.pick(["2,3", 5, { length: 2, 0: 1, 1: 1 }, true, new Int32Array([1])]);
  const rank = rng.chance(0.15) ? rng.pick([64, 65, 128, 300, 1000]) : rng.int(5);
  const dims: unknown[] = [];
  for (let i = 0; i < rank; i++) {
    dims.push(rng.chance(0.85) ? rng.range(0, 2) : rng.pick(HUGE_DIMS));
  }
  if (rank > 0 && rng.chance(0.5)) dims[rng.int(rank)] = rng.pick(HUGE_DIMS);
  return dims;
}

/** Bytes of dtype × dims as a bigint, or null when dims are not all safe non-negative integers. */
function modelBytes(dtype: DataType, dims: readonly unknown[]): bigint | null {
  let n = BigInt(dataTypeInfo(dtype).byteWidth);
  for (const d of dims) {
    if (typeof d !== "number" || !Number.isSafeInteger(d) || d < 0) return null;
    n *= BigInt(d);
  }
  return n;
}

/**
 * Bytes of dtype × the nonzero dims: a buffer may cover at most 2^53 − 1
 * bytes whatever the order of its dims, so `[0, 2^40, 2^40]` is as invalid
 * as `[2^40, 2^40, 0]` (null: dims that are not all safe non-negative integers).
 */
function spanBytes(dtype: DataType, dims: readonly unknown[]): bigint | null {
  return modelBytes(dtype, dims.filter((d) => d !== 0));
}

/** A dictionary of attributes: a plain object or a Map (or, where optional, undefined). */
function isDictionary(v: unknown, optional: boolean): boolean {
  if (v === undefined) return optional;
  if (v instanceof Map) return true;
  if (v === null || typeof v !== "object" || Array.isArray(v) || ArrayBuffer.isView(v)) {
    return false;
  }
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function knownDtype(dt: unknown): dt is DataType {
  return typeof dt === "number" && DTYPES.includes(dt);
}

// ---------------------------------------------------------------------------
// The model of a buffer operand (CallFrameBuilder.arg/ret).

interface BufferInput {
  data: unknown;
  dims: unknown;
  dtype: unknown;
  /** How many of (data, dims, dtype) are passed. */
  argc: 1 | 2 | 3;
}

function bufferVerdict(input: BufferInput): Verdict {
  let { data, dims, dtype } = input;
  if (input.argc < 3) dtype = undefined;
  if (input.argc < 2) dims = undefined;
  if (
    data !== null && typeof data === "object" && !ArrayBuffer.isView(data) &&
    ArrayBuffer.isView((data as { data?: unknown }).data)
  ) {
    const a = data as { data: ArrayBufferView; shape?: unknown; dtype?: unknown };
    dims ??= a.shape;
    dtype ??= a.dtype;
    data = a.data;
  }
  if (!ArrayBuffer.isView(data)) return { valid: false, why: "data that is not a typed array" };
  if (dtype === undefined) dtype = inferredDtype(data);
  if (dtype === undefined) return { valid: false, why: "data whose data type cannot be inferred" };
  if (dtype === null) return { valid: "either" };
  if (!knownDtype(dtype)) return { valid: false, why: "an unknown data type", detail: show(dtype) };
  const width = dataTypeInfo(dtype).byteWidth;
  if (width === 0) return { valid: "either" }; // TOKEN/INVALID with data: no rule to check
  if (dims === undefined || dims === null) {
    if (isDetached(data)) return { valid: "either" };
    return data.byteLength % width === 0 ? { valid: true } : {
      valid: false,
      why: "a byte length that is not a whole number of elements",
      detail: `${data.byteLength} bytes of ${DataType[dtype]}`,
    };
  }
  if (!Array.isArray(dims)) {
    // An array-like (a typed array of dims) may be taken as one; anything else may not.
    if (dims !== null && typeof dims === "object" && "length" in dims) return { valid: "either" };
    return { valid: false, why: "dims that are not an array", detail: show(dims) };
  }
  const need = modelBytes(dtype, dims);
  if (need === null) return { valid: false, why: "invalid dims", detail: show(dims) };
  if (spanBytes(dtype, dims)! > BigInt(Number.MAX_SAFE_INTEGER)) {
    return { valid: false, why: "dims whose byte size exceeds 2^53 − 1", detail: show(dims) };
  }
  if (isDetached(data)) {
    return need === 0n ? { valid: "either" } : {
      valid: false,
      why: "a detached buffer",
      detail: `${data.constructor.name} for ${DataType[dtype]}${show(dims)} (${need} bytes)`,
    };
  }
  if (BigInt(data.byteLength) !== need) {
    const sub = SUB_BYTE.includes(dtype) ? " (sub-byte type)" : "";
    return {
      valid: false,
      why: `a buffer whose size is not its dims' size${sub}`,
      detail: `${data.byteLength} bytes for ${DataType[dtype]}${show(dims)} (${need} bytes)`,
    };
  }
  return { valid: true };
}

/** A random buffer operand: mostly consistent, then mutated (size, kind, detached, dtype, dims). */
function genBuffer(rng: Rng): BufferInput {
  const dtype = rng.chance(0.25) ? rng.pick(SUB_BYTE) : rng.pick(REAL_DTYPES);
  const dims = goodDims(rng);
  const need = dims.reduce((a, b) => a * b, 1) * dataTypeInfo(dtype).byteWidth;
  const matching = VIEW_KINDS.filter((k) => need % k.bytes === 0);
  let data: unknown = makeView(rng, need, rng.pick(matching));
  let d: unknown = dims;
  let dt: unknown = dtype;
  let argc: 1 | 2 | 3 = 3;
  const m = rng.float();
  if (m < 0.3) {
    // as generated
  } else if (m < 0.4) {
    data = makeView(rng, Math.max(0, need + rng.pick([-8, -4, -1, 1, 4, 8, 64, -need])));
  } else if (m < 0.47) {
    detach(data as ArrayBufferView);
  } else if (m < 0.55) {
    dt = rng.chance(0.5) ? rng.pick(JUNK_DTYPES) : rng.pick(DTYPES);
  } else if (m < 0.68) {
    d = anyDims(rng);
  } else if (m < 0.75) {
    argc = rng.chance(0.5) ? 1 : 2;
    if (rng.chance(0.3)) detach(data as ArrayBufferView);
  } else if (m < 0.8) {
    data = {
      data,
      shape: rng.chance(0.7) ? dims : anyDims(rng),
      dtype: rng.chance(0.8) ? dtype : rng.pick(JUNK_DTYPES),
    };
    argc = 1;
  } else if (m < 0.85) {
    data = rng.pick<unknown>([
      null,
      undefined,
      0,
      4096,
      "abc",
      {},
      [1, 2],
      { data: 5 },
      new ArrayBuffer(8),
      new DataView(new ArrayBuffer(need)),
    ]);
  } else if (m < 0.9 && typeof SharedArrayBuffer === "function") {
    data = new Uint8Array(new SharedArrayBuffer(need));
    if (dataTypeInfo(dtype).byteWidth !== 1 && rng.chance(0.5)) argc = 1;
  } else {
    data = makeView(rng, need);
    if (rng.chance(0.5)) argc = 2;
  }
  return { data, dims: d, dtype: dt, argc };
}

function showBuffer(b: BufferInput): string {
  const parts = [show(b.data)];
  if (b.argc >= 2) parts.push(show(b.dims));
  if (b.argc >= 3) {
    parts.push(
      typeof b.dtype === "number" && DataType[b.dtype]
        ? `DataType.${DataType[b.dtype]}`
        : show(b.dtype),
    );
  }
  return parts.join(", ");
}

// ---------------------------------------------------------------------------
// Attributes.

const ATTR_NAMES: unknown[] = [
  "a",
  "factor",
  "",
  "x.y",
  "__proto__",
  "constructor",
  "é",
  "\u0000",
  "n".repeat(300),
  "\ud800",
  5,
  null,
  Symbol("s"),
];

function genAttrValue(rng: Rng, depth = 0): unknown {
  const r = rng.float();
  if (r < 0.12) {
    return rng.pick([0, 1, -1, 2 ** 53, 2 ** 63, 1.5, NaN, Infinity, -0, 1e308, -(2 ** 70)]);
  }
  if (r < 0.2) return rng.pick([0n, -1n, 2n ** 63n - 1n, 2n ** 63n, -(2n ** 64n), 2n ** 200n]);
  if (r < 0.25) return rng.chance(0.5);
  if (r < 0.33) return rng.pick(["", "reflect", "é\u0000x", "s".repeat(5000), "\ud800"]);
  if (r < 0.45) {
    const dt = rng.chance(0.8) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES);
    const v = rng.pick<unknown>([
      0,
      1,
      -1,
      255,
      256,
      1.5,
      NaN,
      Infinity,
      2 ** 64,
      3n,
      -(2n ** 70n),
      true,
      "1",
      null,
    ]);
    return { scalar: dt, v };
  }
  if (r < 0.55) {
    const dt = rng.chance(0.8) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES);
    const n = rng.pick([0, 1, 3, 1000]);
    const vs: unknown[] = [];
    for (let i = 0; i < n; i++) {
      vs.push(rng.chance(0.9) ? rng.range(-2, 300) : rng.pick<unknown>([1.5, NaN, 2n, "x", null]));
    }
    return { array: dt, vs };
  }
  if (r < 0.65) {
    const v = makeView(rng, rng.pick([0, 8, 16, 4000]));
    if (rng.chance(0.2)) detach(v);
    return v;
  }
  if (r < 0.72) {
    return rng.pick<unknown>([[], [1, 2, 3], [1.5, 2], [1, "2"], [1n, 2n], [NaN], [2 ** 60, 1], [[
      1,
    ]]]);
  }
  if (r < 0.85 && depth < 3) {
    const o: Record<string, unknown> = {};
    const n = rng.range(0, 3);
    for (let i = 0; i < n; i++) {
      o[String(rng.pick(["k", "a", "b", "é", ""]))] = genAttrValue(rng, depth + 1);
    }
    return rng.chance(0.2) ? new Map(Object.entries(o)) : o;
  }
  if (r < 0.88) {
    // A deep dictionary.
    let o: Record<string, unknown> = { leaf: 1 };
    const levels = rng.pick([50, 2000, 20000]);
    for (let i = 0; i < levels; i++) o = { d: o };
    return o;
  }
  return rng.pick<unknown>([
    null,
    undefined,
    Symbol("v"),
    () => 1,
    new Map<unknown, unknown>([[1, 2]]),
    Object.create(null),
    new Date(0),
  ]);
}

/** Turns generated `{ scalar }` / `{ array }` descriptions into scalar()/array() calls (which may throw). */
function materialise(v: unknown): unknown {
  if (v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !(v instanceof Map)) {
    const o = v as { scalar?: unknown; array?: unknown; v?: unknown; vs?: unknown[] };
    if ("scalar" in o) return scalar(o.scalar as DataType, o.v as number);
    if ("array" in o) return array(o.array as DataType, o.vs as number[]);
  }
  return v;
}

function showAttr(v: unknown): string {
  if (v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !(v instanceof Map)) {
    const o = v as { scalar?: unknown; array?: unknown; v?: unknown; vs?: unknown[] };
    const dt = (x: unknown) =>
      typeof x === "number" && DataType[x] ? `DataType.${DataType[x]}` : show(x);
    if ("scalar" in o) return `scalar(${dt(o.scalar)}, ${show(o.v)})`;
    if ("array" in o) return `array(${dt(o.array)}, ${show(o.vs)})`;
    let depth = 0;
    let p: unknown = v;
    while (p !== null && typeof p === "object" && "d" in (p as object) && depth < 100000) {
      p = (p as { d: unknown }).d;
      depth++;
    }
    if (depth > 10) return `{d: {d: … ${depth} levels … {leaf: 1}}}`;
  }
  return show(v);
}

// ---------------------------------------------------------------------------
// The environment: a runtime and handlers.

export interface Env {
  rt: Runtime;
  /** TS: y = 2x for one F32 argument and one F32 result of the same element count. */
  twice: Handler;
  /** Native test_scale: y = x × attribute factor (f32); F32 buffers of equal size. */
  scale: NativeHandler;
  /** Native test_attrs: a text of every attribute into result 0 (U8). */
  attrs: NativeHandler;
  /** The same two, run in an isolated library's child process. */
  isoScale: NativeHandler;
  isoAttrs: NativeHandler;
  lib: HandlerLibrary;
  isoLib: HandlerLibrary;
}

export function openEnv(): Env {
  const rt = new Runtime();
  const twice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    if (x.elementCount !== y.elementCount) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "twice: argument and result sizes differ");
    }
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < xs.length; i++) ys[i] = 2 * xs[i]!;
  });
  const lib = openTestHandlers();
  const isoLib = HandlerLibrary.open(testHandlersPath(), { isolate: true });
  return {
    rt,
    twice,
    scale: lib.handler("test_scale"),
    attrs: lib.handler("test_attrs"),
    isoScale: isoLib.handler("test_scale"),
    isoAttrs: isoLib.handler("test_attrs"),
    lib,
    isoLib,
  };
}

export function closeEnv(env: Env): void {
  env.twice.close();
  env.rt.close();
  env.isoLib.close();
  env.lib.close();
}

/** The smallest normal F32 magnitude. */
const F32_MIN_NORMAL = 1.1754943508222875e-38;

/** A denormal F32 as XLA's floating-point mode has it (flushed to a zero of its sign). */
function flushed(v: number): number {
  return v !== 0 && Math.abs(v) < F32_MIN_NORMAL ? (v < 0 ? -0 : 0) : v;
}

/**
 * Whether `y` holds 2 × `x` (both read as F32 bytes); `native`: computed by
 * a native handler in XLA's floating-point mode (denormals read and
 * written as zero, docs/runtime.md), a TS one's as JavaScript computes.
 */
function checkDoubled(
  x: ArrayBufferView,
  y: ArrayBufferView,
  what: string,
  native = false,
): void {
  const xs = new Float32Array(bytesCopy(x).buffer, 0, x.byteLength >> 2);
  const ys = new Float32Array(bytesCopy(y).buffer, 0, y.byteLength >> 2);
  if (xs.length !== ys.length) {
    throw new Violation(
      `${what} succeeded with a wrong result`,
      `${xs.length} vs ${ys.length} elements`,
    );
  }
  for (let i = 0; i < xs.length; i++) {
    const want = native ? flushed(Math.fround(2 * flushed(xs[i]!))) : Math.fround(2 * xs[i]!);
    const got = ys[i]!;
    if (!(Object.is(want, got) || (Number.isNaN(want) && Number.isNaN(got)))) {
      throw new Violation(
        `${what} succeeded with a wrong result`,
        `element ${i}: ${got}, expected ${want}`,
      );
    }
  }
}

function bytesCopy(v: ArrayBufferView): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
}

function sameBytes(v: ArrayBufferView, copy: Uint8Array): boolean {
  const now = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  return now.length === copy.length && now.every((b, i) => b === copy[i]);
}

// ---------------------------------------------------------------------------
// Cases. A case is generated first (so that it can be described before it
// runs), then run.

export interface Case {
  target: Target;
  desc: string;
  run(env: Env): Promise<void>;
}

type Op =
  | { op: "arg" | "ret"; b: BufferInput }
  | { op: "token"; which: "arg" | "ret" }
  | { op: "pointer"; which: "arg" | "ret"; address: unknown; dtype: unknown; dims: unknown }
  | { op: "attr"; name: unknown; value: unknown; dtype?: unknown; argc: 2 | 3 }
  | { op: "attrs"; dict: unknown }
  | { op: "bulk"; kind: "tokens" | "rank" | "attrs" | "bigattr" | "bigstring"; count: number };

function showOp(o: Op): string {
  switch (o.op) {
    case "arg":
    case "ret":
      return `.${o.op}(${showBuffer(o.b)})`;
    case "token":
      return o.which === "arg" ? ".tokenArg()" : ".tokenRet()";
    case "pointer":
      return `.${o.which}Pointer(${show(o.address)}, ${show(o.dtype)}, ${show(o.dims)})`;
    case "attr":
      return `.attr(${show(o.name)}, ${showAttr(o.value)}${
        o.argc === 3 ? `, ${show(o.dtype)}` : ""
      })`;
    case "attrs":
      return `.attrs(${showAttr(o.dict)})`;
    case "bulk":
      switch (o.kind) {
        case "tokens":
          return `.tokenArg() × ${o.count}`;
        case "rank":
          return `.arg(Float32Array(1), [1 × ${o.count}])`;
        case "attrs":
          return `.attr("k<i>", i) × ${o.count}`;
        case "bigattr":
          return `.attr("big", Int32Array(${o.count}))`;
        case "bigstring":
          return `.attr("big", "s" × ${o.count})`;
      }
  }
}

/** Frames at and past the size limits: many operands or attributes, high ranks, big attributes. */
function genBulkOp(rng: Rng): Op {
  const kind = rng.pick(["tokens", "rank", "attrs", "bigattr", "bigstring"] as const);
  const counts = {
    tokens: [100, 5000, 70000],
    rank: [64, 65, 300, 1000, 100000],
    attrs: [100, 3000], // adding one checks the names before it: quadratic by design
    bigattr: [1000, 100000, 1000000],
    bigstring: [1000, 100000, 2000000],
  }[kind];
  return { op: "bulk", kind, count: rng.pick(counts) };
}

function genAttrOp(rng: Rng): Op {
  if (rng.chance(0.15)) {
    const d: Record<string, unknown> = {};
    for (let i = rng.range(0, 3); i > 0; i--) {
      d[String(rng.pick(ATTR_NAMES.filter((x) => typeof x === "string")))] = genAttrValue(rng);
    }
    return { op: "attrs", dict: rng.chance(0.15) ? rng.pick<unknown>([null, 5, "x", [1]]) : d };
  }
  const argc = rng.chance(0.2) ? 3 : 2;
  return {
    op: "attr",
    name: rng.chance(0.7) ? `a${rng.int(4)}` : rng.pick(ATTR_NAMES),
    value: genAttrValue(rng),
    dtype: argc === 3 ? (rng.chance(0.7) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES)) : undefined,
    argc,
  };
}

/** Many attributes, or a big one (a bulk op of kind attrs, bigattr or bigstring). */
function bulkAttrs(b: CallFrameBuilder, o: Op & { op: "bulk" }, what: string): void {
  const count = o.count;
  if (o.kind === "attrs") {
    for (let k = 0; k < count; k++) {
      if (!attempt("CallFrameBuilder.attr", () => b.attr(`k${k}`, k), what).ok) break;
    }
  } else if (o.kind === "bigattr") {
    attempt("CallFrameBuilder.attr", () => b.attr("big", new Int32Array(count)), what);
  } else if (o.kind === "bigstring") {
    attempt("CallFrameBuilder.attr", () => b.attr("big", "s".repeat(count)), what);
  }
}

/** The builder with random operands and attributes, then a call of the TS handler when the frame is sound. */
function genBuilderCase(rng: Rng): Case {
  const ops: Op[] = [];
  const n = rng.range(1, 4);
  const guard = rng.chance(0.2);
  for (let i = 0; i < n; i++) {
    const r = rng.float();
    if (r < 0.35) ops.push({ op: "arg", b: genBuffer(rng) });
    else if (r < 0.7) ops.push({ op: "ret", b: genBuffer(rng) });
    else if (r < 0.76) ops.push({ op: "token", which: rng.chance(0.5) ? "arg" : "ret" });
    else if (r < 0.85) {
      ops.push({
        op: "pointer",
        which: rng.chance(0.5) ? "arg" : "ret",
        address: rng.pick<unknown>([
          null,
          -1,
          NaN,
          1.5,
          2 ** 53,
          -1n,
          2n ** 64n,
          "0x10",
          {},
          undefined,
          true,
        ]),
        dtype: rng.chance(0.7) ? DataType.F32 : rng.pick(JUNK_DTYPES),
        dims: anyDims(rng),
      });
    } else if (r < 0.9) ops.push(genBulkOp(rng));
    else ops.push(genAttrOp(rng));
  }
  // Often the shape the handler takes: one F32 argument, one F32 result.
  if (rng.chance(0.3)) {
    const dims = goodDims(rng);
    const count = dims.reduce((a, b) => a * b, 1);
    ops.unshift({
      op: "arg",
      b: { data: floats(rng, count), dims, dtype: DataType.F32, argc: rng.chance(0.5) ? 3 : 2 },
    });
    ops.splice(1, 0, {
      op: "ret",
      b: { data: new Float32Array(count), dims, dtype: DataType.F32, argc: 2 },
    });
    if (rng.chance(0.5)) ops.length = 2;
  }
  const sync = rng.chance(0.5);
  const desc =
    `new CallFrameBuilder(${guard ? "{ guard: true }" : ""})${ops.map(showOp).join("")}.build(); ` +
    `${sync ? "callSync" : "call"}(twice)`;
  return {
    target: "builder",
    desc,
    run: async (env) => {
      const b = new CallFrameBuilder(guard ? { guard: true } : undefined);
      let sound = true; // every buffer is host memory of the size its dims need
      const args: ArrayBufferView[] = [], rets: ArrayBufferView[] = [];
      let argOps = 0, retOps = 0;
      for (const o of ops) {
        const what = showOp(o);
        if (o.op === "arg" || o.op === "ret") {
          const verdict = bufferVerdict(o.b);
          const out = attempt(`CallFrameBuilder.${o.op}`, () => {
            const { data, dims, dtype, argc } = o.b;
            if (argc === 1) return b[o.op](data as ArrayBufferView);
            if (argc === 2) return b[o.op](data as ArrayBufferView, dims as number[]);
            return b[o.op](data as ArrayBufferView, dims as number[], dtype as DataType);
          }, what);
          judge(
            `CallFrameBuilder.${o.op}`,
            verdict,
            out,
            what,
            !Array.isArray(o.b.dims) || o.b.dims.length <= 16,
          );
          if (out.ok) {
            if (verdict.valid !== true) sound = false;
            const raw = o.b.data as { data?: ArrayBufferView };
            const view = ArrayBuffer.isView(raw) ? raw : raw.data!;
            (o.op === "arg" ? args : rets).push(view);
            if (o.op === "arg") argOps++;
            else retOps++;
          }
        } else if (o.op === "token") {
          attempt(
            "CallFrameBuilder.token",
            () => o.which === "arg" ? b.tokenArg() : b.tokenRet(),
            what,
          );
          if (o.which === "arg") argOps++;
          else retOps++;
        } else if (o.op === "pointer") {
          const out = attempt(
            `CallFrameBuilder.${o.which}Pointer`,
            () =>
              o.which === "arg"
                ? b.argPointer(o.address as number, o.dtype as DataType, o.dims as number[])
                : b.retPointer(o.address as number, o.dtype as DataType, o.dims as number[]),
            what,
          );
          const a = o.address;
          const addrOk = a === null ||
            (typeof a === "number" && Number.isSafeInteger(a) && a >= 0) ||
            (typeof a === "bigint" && a >= 0n && a <= BigInt(Number.MAX_SAFE_INTEGER));
          if (out.ok && !addrOk) {
            throw new Violation(
              `CallFrameBuilder.${o.which}Pointer accepted an invalid address`,
              what,
            );
          }
          if (out.ok && !knownDtype(o.dtype)) {
            throw new Violation(
              `CallFrameBuilder.${o.which}Pointer accepted an unknown data type`,
              what,
            );
          }
          const arrayLike = o.dims !== null && typeof o.dims === "object" && "length" in o.dims;
          if (
            out.ok && !arrayLike &&
            (!Array.isArray(o.dims) || modelBytes(DataType.U8, o.dims) === null)
          ) {
            throw new Violation(`CallFrameBuilder.${o.which}Pointer accepted invalid dims`, what);
          }
          if (
            out.ok && Array.isArray(o.dims) && knownDtype(o.dtype) &&
            (spanBytes(o.dtype, o.dims) ?? 0n) > BigInt(Number.MAX_SAFE_INTEGER)
          ) {
            throw new Violation(
              `CallFrameBuilder.${o.which}Pointer accepted dims whose byte size exceeds 2^53 − 1`,
              what,
            );
          }
          if (out.ok) {
            sound = false; // a raw address: not ours to call with
            if (o.which === "arg") argOps++;
            else retOps++;
          }
        } else if (o.op === "attr") {
          attempt("CallFrameBuilder.attr", () => {
            const v = materialise(o.value);
            return o.argc === 3
              ? b.attr(o.name as string, v as number, o.dtype as DataType)
              : b.attr(o.name as string, v as number);
          }, what);
        } else if (o.op === "attrs") {
          const dict = o.dict;
          const out = attempt(
            "CallFrameBuilder.attrs",
            () => b.attrs(dict as Record<string, number>),
            what,
          );
          if (out.ok && !isDictionary(dict, false)) {
            throw new Violation(
              "CallFrameBuilder.attrs accepted a value that is not a dictionary",
              what,
            );
          }
        } else if (o.op === "bulk") {
          const count = o.count;
          if (o.kind === "tokens") {
            for (let k = 0; k < count; k++) {
              if (!attempt("CallFrameBuilder.tokenArg", () => b.tokenArg(), what).ok) break;
              argOps++;
            }
          } else if (o.kind === "rank") {
            const x = new Float32Array([1.5]);
            const out = attempt(
              "CallFrameBuilder.arg",
              () => b.arg(x, new Array(count).fill(1)),
              what,
            );
            if (out.ok) {
              args.push(x);
              argOps++;
            }
          } else bulkAttrs(b, o, what);
        }
      }
      const built = attempt("CallFrameBuilder.build", () => b.build());
      if (!built.ok) return;
      using frame = built.value;
      if (frame.numArgs !== argOps || frame.numRets !== retOps) {
        throw new Violation(
          "CallFrameBuilder.build made a frame with other operand counts",
          `${frame.numArgs}/${frame.numRets} vs ${argOps}/${retOps}`,
        );
      }
      if (!sound) return;
      const before = args.map(bytesCopy);
      const out = sync
        ? attempt("Runtime.callSync(twice)", () => env.rt.callSync(env.twice, frame))
        : await attemptAsync("Runtime.call(twice)", () => env.rt.call(env.twice, frame));
      if (!args.every((a, i) => sameBytes(a, before[i]!))) {
        throw new Violation("a call changed an argument's data", "");
      }
      if (out.ok) {
        if (args.length !== 1 || rets.length !== 1) {
          throw new Violation(
            "twice succeeded on a frame it does not take",
            `${args.length} args, ${rets.length} rets`,
          );
        }
        checkDoubled(args[0]!, rets[0]!, "twice");
      }
    },
  };
}

/** Attributes of every kind, laid out and read back by the native test_attrs handler. */
function genAttrsCase(rng: Rng): Case {
  const isolated = rng.chance(0.3);
  const ops: Op[] = [];
  for (let i = rng.range(1, 4); i > 0; i--) ops.push(genAttrOp(rng));
  if (rng.chance(0.15)) {
    let bulk = genBulkOp(rng);
    while (bulk.op === "bulk" && (bulk.kind === "tokens" || bulk.kind === "rank")) {
      bulk = genBulkOp(rng);
    }
    ops.splice(rng.int(ops.length + 1), 0, bulk);
  }
  const desc =
    `new CallFrameBuilder()${ops.map(showOp).join("")}.ret(new Uint8Array(4096)).build(); ` +
    `${isolated ? "call(isolated test_attrs)" : "callSync(test_attrs)"}`;
  return {
    target: "attrs",
    desc,
    run: async (env) => {
      const b = new CallFrameBuilder();
      const names = new Set<string>();
      for (const o of ops) {
        if (o.op === "attr") {
          const out = attempt("CallFrameBuilder.attr", () => {
            const v = materialise(o.value);
            return o.argc === 3
              ? b.attr(o.name as string, v as number, o.dtype as DataType)
              : b.attr(o.name as string, v as number);
          }, showOp(o));
          if (out.ok && typeof o.name !== "string") {
            throw new Violation(
              "CallFrameBuilder.attr accepted a name that is not a string",
              show(o.name),
            );
          }
          if (out.ok) names.add(o.name as string);
        } else if (o.op === "attrs") {
          const dict = o.dict;
          const out = attempt(
            "CallFrameBuilder.attrs",
            () => b.attrs(dict as Record<string, number>),
            showOp(o),
          );
          if (out.ok && !isDictionary(dict, false)) {
            throw new Violation(
              "CallFrameBuilder.attrs accepted a value that is not a dictionary",
              showOp(o),
            );
          }
        } else if (o.op === "bulk") bulkAttrs(b, o, showOp(o));
      }
      const text = new Uint8Array(4096);
      b.ret(text);
      const built = attempt("CallFrameBuilder.build", () => b.build());
      if (!built.ok) return;
      using frame = built.value;
      const out = isolated
        ? await attemptAsync(
          "Runtime.call(isolated test_attrs)",
          () => env.rt.call(env.isoAttrs, frame),
        )
        : attempt("Runtime.callSync(test_attrs)", () => env.rt.callSync(env.attrs, frame));
      if (!out.ok) {
        throw new Violation("test_attrs failed on a frame the builder made", out.error.message);
      }
      const end = text.indexOf(0);
      if (end < 0) throw new Violation("test_attrs wrote no text", "");
      const s = new TextDecoder("latin1").decode(text.subarray(0, end));
      for (const name of names) {
        if (
          /^[\x20-\x7e]+$/.test(name) && !name.includes("=") && end < 4000 &&
          !s.includes(`${name}=`)
        ) {
          throw new Violation(
            "an attribute is missing from the native frame",
            `'${name}' not in ${JSON.stringify(s.slice(0, 200))}`,
          );
        }
      }
      return;
    },
  };
}

// ---------------------------------------------------------------------------
// Setters.

const BAD_INDICES: unknown[] = [
  -1,
  1.5,
  NaN,
  Infinity,
  2 ** 32,
  2 ** 53,
  "0",
  null,
  undefined,
  0n,
  {},
];
const BAD_ADDRESSES: unknown[] = [
  -1,
  NaN,
  1.5,
  2 ** 53,
  Infinity,
  -1n,
  2n ** 64n,
  "0x1000",
  {},
  [],
  true,
  undefined,
  Symbol("p"),
  () => 0,
];

type SetterOp =
  | { op: "setArg" | "setRet"; index: unknown; data: unknown }
  | { op: "updateBuffers"; args: unknown; rets: unknown }
  | { op: "detach"; which: "arg" | "ret"; grow: number }
  | { op: "close" };

function showSetter(o: SetterOp): string {
  switch (o.op) {
    case "setArg":
    case "setRet":
      return `frame.${o.op}(${show(o.index)}, ${show(o.data)})`;
    case "updateBuffers":
      return `frame.updateBuffers(${show(o.args)}, ${show(o.rets)})`;
    case "detach":
      return `${o.which}.buffer.transfer(${o.grow ? "byteLength + " + o.grow : ""})`;
    case "close":
      return "frame.close()";
  }
}

function genSetterData(rng: Rng, bytes: number): unknown {
  const r = rng.float();
  if (r < 0.4) return floats(rng, bytes / 4);
  if (r < 0.5) {
    return makeView(
      rng,
      bytes,
      rng.pick(VIEW_KINDS.filter((k) => bytes % k.bytes === 0)),
    );
  }
  if (r < 0.65) return makeView(rng, Math.max(0, bytes + rng.pick([-4, -1, 1, 4, 64, -bytes])));
  if (r < 0.75) {
    const v = floats(rng, bytes / 4);
    detach(v);
    return v;
  }
  if (r < 0.8) return new DataView(new ArrayBuffer(bytes));
  if (r < 0.85) return null;
  return rng.pick(BAD_ADDRESSES);
}

function setterDataVerdict(data: unknown, bytes: number): Verdict {
  if (data === null) return { valid: "either" }; // a null address: valid, but nothing to call with
  if (ArrayBuffer.isView(data)) {
    if (isDetached(data)) {
      return bytes === 0
        ? { valid: "either" }
        : { valid: false, why: "a detached buffer", detail: data.constructor.name };
    }
    return data.byteLength === bytes ? { valid: true } : {
      valid: false,
      why: "a buffer whose size is not the operand's",
      detail: `${data.byteLength} bytes for an operand of ${bytes}`,
    };
  }
  if (typeof data === "number" || typeof data === "bigint") {
    return { valid: false, why: "an invalid address", detail: show(data) };
  }
  return {
    valid: false,
    why: "data that is neither a typed array nor an address",
    detail: show(data),
  };
}

/** Frame setters with wrong sizes, detached buffers, bad indices; then a checked call. */
function genSettersCase(rng: Rng): Case {
  const n = rng.chance(0.1) ? 0 : rng.range(1, 8);
  const bytes = 4 * n;
  const guard = rng.chance(0.25);
  const ops: SetterOp[] = [];
  for (let i = rng.range(1, 4); i > 0; i--) {
    const r = rng.float();
    if (r < 0.35 || r >= 0.7 && r < 0.75) {
      const op = r < 0.35 ? "setArg" : "setRet";
      ops.push({
        op,
        index: rng.chance(0.75) ? 0 : rng.pick([...BAD_INDICES, 1]),
        data: genSetterData(rng, bytes),
      });
    } else if (r < 0.7) {
      ops.push({
        op: "setRet",
        index: rng.chance(0.8) ? 0 : rng.pick(BAD_INDICES),
        data: genSetterData(rng, bytes),
      });
    } else if (r < 0.88) {
      const list = (): unknown => {
        if (rng.chance(0.15)) {
          return rng.pick<unknown>([null, undefined, 5, "ab", { length: 1 }, new Float32Array(1)]);
        }
        const len = rng.chance(0.85) ? 1 : rng.pick([0, 2]);
        return Array.from({ length: len }, () => genSetterData(rng, bytes));
      };
      ops.push({ op: "updateBuffers", args: list(), rets: list() });
    } else if (r < 0.95) {
      ops.push({
        op: "detach",
        which: rng.chance(0.5) ? "arg" : "ret",
        grow: rng.pick([0, 0, 1 << 20]),
      });
    } else ops.push({ op: "close" });
  }
  const native = rng.chance(0.35);
  const isolated = native && rng.chance(0.4);
  const sync = rng.chance(0.5);
  const name = isolated ? "isolated test_scale" : native ? "test_scale" : "twice";
  const desc =
    `frame = new CallFrameBuilder(${guard ? "{ guard: true }" : ""}).arg(Float32Array(${n}))` +
    `.ret(Float32Array(${n}))${native ? '.attr("factor", scalar(F32, 2))' : ""}.build(); ` +
    `${ops.map(showSetter).join("; ")}; ${sync ? "callSync" : "call"}(${name})`;
  return {
    target: "setters",
    desc,
    run: async (env) => {
      let x: ArrayBufferView = floats(rng, n);
      let y: ArrayBufferView = new Float32Array(n);
      const b = new CallFrameBuilder(guard ? { guard: true } : undefined).arg(x).ret(y);
      if (native) b.attr("factor", scalar(DataType.F32, 2));
      const frame = b.build();
      let callable = true;
      let closed = false;
      try {
        for (const o of ops) {
          const what = showSetter(o);
          if (o.op === "setArg" || o.op === "setRet") {
            const idxOk = o.index === 0;
            const dv = setterDataVerdict(o.data, bytes);
            const verdict: Verdict = closed
              ? { valid: false, why: "a closed frame" }
              : !idxOk
              ? { valid: false, why: "an invalid index", detail: show(o.index) }
              : dv;
            const out = attempt(
              `CallFrame.${o.op}`,
              () =>
                o.op === "setArg"
                  ? frame.setArg(o.index as number, o.data as ArrayBufferView)
                  : frame.setRet(o.index as number, o.data as ArrayBufferView),
              what,
            );
            judge(`CallFrame.${o.op}`, verdict, out, what);
            if (out.ok) {
              if (verdict.valid === true) {
                if (o.op === "setArg") x = o.data as ArrayBufferView;
                else y = o.data as ArrayBufferView;
              } else callable = false;
            }
          } else if (o.op === "updateBuffers") {
            const lists = [o.args, o.rets];
            let verdict: Verdict = { valid: true };
            if (closed) verdict = { valid: false, why: "a closed frame" };
            for (const l of lists) {
              if (verdict.valid === false) break;
              if (!Array.isArray(l)) {
                verdict = { valid: false, why: "a list that is not an array", detail: show(l) };
              } else if (l.length !== 1) {
                verdict = {
                  valid: false,
                  why: "a list of another length",
                  detail: `${l.length} for 1 operand`,
                };
              } else {
                const dv = setterDataVerdict(l[0], bytes);
                if (dv.valid !== true) verdict = dv;
              }
            }
            const out = attempt(
              "CallFrame.updateBuffers",
              () => frame.updateBuffers(o.args as ArrayBufferView[], o.rets as ArrayBufferView[]),
              what,
            );
            judge("CallFrame.updateBuffers", verdict, out, what);
            if (out.ok && verdict.valid === true) {
              x = (o.args as ArrayBufferView[])[0]!;
              y = (o.rets as ArrayBufferView[])[0]!;
            } else if (out.ok) callable = false;
            else if (!closed) {
              // A failed update may have applied part of itself: point the frame at known data again.
              const again = attempt("CallFrame.setArg after a failed updateBuffers", () => {
                frame.setArg(0, x);
                frame.setRet(0, y);
              });
              if (!again.ok && !(bytes > 0 && (isDetached(x) || isDetached(y)))) {
                throw new Violation(
                  "CallFrame.setArg/setRet rejected the frame's own buffers",
                  again.error.message,
                );
              }
            }
          } else if (o.op === "detach") {
            const v = o.which === "arg" ? x : y;
            const length = v.byteLength;
            if (length > 0) {
              const moved = detach(v, o.grow);
              // Fill the memory a stale pointer might still reach.
              if (moved !== undefined) new Uint8Array(moved).fill(0x7f);
              for (let k = 0; k < 4; k++) new Uint8Array(length + 16).fill(0x5a);
            }
          } else {
            attempt("CallFrame.close", () => frame.close(), what);
            closed = true;
          }
        }
        if (!callable) return;
        const xCopy = isDetached(x) ? null : bytesCopy(x);
        const h = isolated ? env.isoScale : native ? env.scale : env.twice;
        const out = sync
          ? attempt(`Runtime.callSync(${name})`, () => env.rt.callSync(h, frame))
          : await attemptAsync(`Runtime.call(${name})`, () => env.rt.call(h, frame));
        if (out.ok && closed) throw new Violation("a call succeeded on a closed frame", "");
        // Detached after it entered the frame, and not replaced since.
        const stale = bytes > 0 && (isDetached(x) || isDetached(y));
        if (out.ok && stale) {
          throw new Violation(
            `a call succeeded with a buffer detached after it was set`,
            `${name}`,
          );
        }
        if (closed || stale) return;
        if (!out.ok) {
          throw new Violation(
            `Runtime.${sync ? "callSync" : "call"}(${name}) failed on a sound frame`,
            out.error.message,
          );
        }
        if (!sameBytes(x, xCopy!)) throw new Violation("a call changed its argument", name);
        checkDoubled(x, y, name, name !== "twice");
      } finally {
        if (!closed) attempt("CallFrame.close", () => frame.close());
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Call options (callSync, call).

function genJunk(rng: Rng): unknown {
  return rng.pick<unknown>([
    null,
    undefined,
    0,
    -1,
    1.5,
    NaN,
    Infinity,
    2 ** 53,
    2 ** 64,
    -(2 ** 63),
    "",
    "x",
    "12",
    true,
    [],
    [1, 2],
    {},
    { a: { b: { c: 1 } } },
    5n,
    2n ** 70n,
    -(2n ** 64n),
    Symbol("j"),
    () => 1,
    new Map(),
    new Float32Array(2),
  ]);
}

function genCallOptions(rng: Rng): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (rng.chance(0.4)) {
    o.stage = rng.chance(0.5)
      ? rng.pick([0, 1, 2, 3])
      : rng.pick<unknown>([4, -1, 1.5, 99, "execute", ...[genJunk(rng)]]);
  }
  if (rng.chance(0.4)) {
    o.runId = rng.chance(0.4)
      ? rng.pick<unknown>([0, 7, -1, 2n ** 63n - 1n, -(2n ** 63n)])
      : genJunk(rng);
  }
  if (rng.chance(0.4)) o.deviceOrdinal = rng.chance(0.4) ? rng.pick([0, -1, 3]) : genJunk(rng);
  if (rng.chance(0.3)) {
    o.userData = rng.chance(0.5) ? genJunk(rng) : rng.pick<unknown>([
      [[1, null]],
      [[1, 5]],
      [["x", Deno.UnsafePointer.of(new Uint8Array(8))]],
      [[1.5, Deno.UnsafePointer.of(new Uint8Array(8))]],
      [[2n ** 70n, Deno.UnsafePointer.of(new Uint8Array(8))]],
      [null],
      [[]],
      new Map([[1, {}]]),
    ]);
  }
  if (rng.chance(0.25)) o.instance = genJunk(rng);
  return o;
}

function stageOk(s: unknown): boolean {
  return s == null || (typeof s === "number" && [0, 1, 2, 3].includes(s));
}

function runIdOk(v: unknown): boolean {
  if (v == null) return true; // null: absent, as `??` reads it
  if (typeof v === "number") return Number.isSafeInteger(v);
  if (typeof v === "bigint") return v >= -(2n ** 63n) && v < 2n ** 63n;
  return false;
}

/** callSync/call with junk options, targets and frames. */
function genCallOptionsCase(rng: Rng): Case {
  const n = rng.range(0, 6);
  const options: unknown = rng.chance(0.1) ? genJunk(rng) : genCallOptions(rng);
  const targetKind = rng.chance(0.8) ? "twice" : rng.pick(["junk", "name", "closed"]);
  const junkTarget = targetKind === "junk"
    ? rng.pick<unknown>([
      null,
      undefined,
      5,
      {},
      { pointer: 5 },
      { execute: 5 },
      "",
      [],
      Symbol("t"),
    ])
    : undefined;
  const frameKind = rng.chance(0.85) ? "frame" : rng.pick(["closed", "junk"]);
  const junkFrame = frameKind === "junk"
    ? rng.pick<unknown>([null, undefined, {}, 5, { pointer: null }])
    : undefined;
  const sync = rng.chance(0.5);
  const tDesc = targetKind === "twice"
    ? "twice"
    : targetKind === "junk"
    ? show(junkTarget)
    : targetKind === "name"
    ? '"no.such.target"'
    : "closed handler";
  const desc = `${sync ? "callSync" : "call"}(${tDesc}, ${
    frameKind === "junk"
      ? show(junkFrame)
      : `${frameKind === "closed" ? "closed " : ""}frame(F32[${n}] → F32[${n}])`
  }, ${show(options)})`;
  return {
    target: "call-options",
    desc,
    run: async (env) => {
      const x = floats(rng, n), y = new Float32Array(n);
      using frame = new CallFrameBuilder().arg(x).ret(y).build();
      if (frameKind === "closed") frame.close();
      let target: unknown = env.twice;
      let closedHandler: Handler | null = null;
      if (targetKind === "junk") target = junkTarget;
      else if (targetKind === "name") target = "no.such.target";
      else if (targetKind === "closed") {
        closedHandler = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(() => {});
        closedHandler.close();
        target = closedHandler;
      }
      const f = frameKind === "junk" ? junkFrame : frame;
      const out = sync
        ? attempt(
          "Runtime.callSync",
          () => env.rt.callSync(target as Handler, f as CallFrame, options as undefined),
        )
        : await attemptAsync(
          "Runtime.call",
          () => env.rt.call(target as Handler, f as CallFrame, options as undefined),
        );
      if (!out.ok) return;
      const o = options as Record<string, unknown> | null | undefined;
      if (o !== undefined && (o === null || typeof o !== "object")) {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted options that are not an object`,
          show(o),
        );
      }
      if (o && !stageOk(o.stage)) {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted an invalid stage`,
          show(o.stage),
        );
      }
      if (o && !runIdOk(o.runId)) {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted an invalid runId`,
          show(o.runId),
        );
      }
      if (o && o.instance !== undefined && o.instance !== null) {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted an invalid instance`,
          show(o.instance),
        );
      }
      if (targetKind !== "twice" && (o?.stage == null || o.stage === ExecutionStage.EXECUTE)) {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted an invalid target`,
          tDesc,
        );
      }
      if (frameKind !== "frame") {
        throw new Violation(
          `Runtime.${sync ? "callSync" : "call"} accepted an invalid frame`,
          frameKind,
        );
      }
      if (o?.stage === undefined || o.stage === ExecutionStage.EXECUTE) checkDoubled(x, y, "twice");
    },
  };
}

// ---------------------------------------------------------------------------
// ffiCall.

function genArrayArg(rng: Rng): unknown {
  const r = rng.float();
  const n = rng.range(0, 6);
  if (r < 0.5) return floats(rng, n);
  if (r < 0.65) {
    return {
      data: floats(rng, n),
      shape: rng.chance(0.6) ? [n] : anyDims(rng),
      dtype: rng.chance(0.7)
        ? DataType.F32
        : rng.pick([...JUNK_DTYPES, ...SUB_BYTE, DataType.TOKEN]),
    };
  }
  if (r < 0.75) {
    const v = floats(rng, n);
    detach(v);
    return v;
  }
  if (r < 0.85) return makeView(rng, rng.range(0, 24));
  return genJunk(rng);
}

function genSpec(rng: Rng, n: number): unknown {
  const r = rng.float();
  if (r < 0.6) return { dtype: DataType.F32, shape: [n] };
  if (r < 0.75) {
    return { dtype: rng.chance(0.5) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES), shape: [n] };
  }
  if (r < 0.9) {
    return {
      dtype: DataType.F32,
      shape: rng.chance(0.2)
        ? rng.pick<unknown>([[2 ** 33], [2 ** 31, 2], [2 ** 26, 2 ** 26]])
        : anyDims(rng),
    };
  }
  return genJunk(rng);
}

/** ffiCall with junk in every option (or all valid, with the result checked). */
function genFfiCallCase(rng: Rng): Case {
  const n = rng.range(0, 6);
  const x = floats(rng, n);
  const valid: Record<string, unknown> = {
    args: [x],
    results: [{ dtype: DataType.F32, shape: [n] }],
  };
  const nativeTarget = rng.chance(0.3);
  if (nativeTarget || rng.chance(0.3)) valid.attrs = { factor: scalar(DataType.F32, 2) };
  if (rng.chance(0.3)) valid.inputOutputAliases = { 0: 0 };
  if (rng.chance(0.2)) valid.inputLayouts = rng.pick<unknown>([[[0]], [null], []]);
  if (rng.chance(0.2)) valid.outputLayouts = rng.pick<unknown>([[[0]], [undefined]]);
  if (rng.chance(0.3)) valid.guard = rng.chance(0.5);
  let options: unknown = valid;
  let mutated = false;
  let target: "twice" | "scale" | "junk" = nativeTarget ? "scale" : "twice";
  let junkTarget: unknown;
  if (rng.chance(0.7)) {
    mutated = true;
    target = target === "scale" ? "twice" : target; // the native handler trusts its result specs
    const o = { ...valid };
    const fields = [...FFI_CALL_OPTIONS];
    for (let i = rng.range(1, 3); i > 0; i--) {
      const f = rng.pick(fields);
      switch (f) {
        case "args":
          o.args = rng.chance(0.2)
            ? genJunk(rng)
            : Array.from({ length: rng.pick([0, 1, 1, 2]) }, () => genArrayArg(rng));
          break;
        case "results":
          o.results = rng.chance(0.2)
            ? genJunk(rng)
            : Array.from({ length: rng.pick([0, 1, 1, 2]) }, () => genSpec(rng, n));
          break;
        case "attrs":
          o.attrs = rng.chance(0.3)
            ? genJunk(rng)
            : { [rng.pick(["factor", "a", ""])]: genAttrValue(rng) };
          break;
        case "inputOutputAliases":
          o.inputOutputAliases = rng.chance(0.4) ? genJunk(rng) : rng.pick<unknown>([
            { 0: "0" },
            { "-1": 0 },
            { 0: 1.5 },
            [0],
            { 0: 0, 1: 0 },
            { 0: 2 ** 53 },
            { "1e0": 0 },
            { 0: null },
            { " 0": 0 },
          ]);
          break;
        case "inputLayouts":
        case "outputLayouts":
          o[f] = rng.chance(0.4) ? genJunk(rng) : rng.pick<unknown>([
            [[1]],
            [[0, 0]],
            [[-0]],
            [[0.5]],
            [["0"]],
            [[0], [0]],
            [{ 0: 0 }],
            [new Int32Array(1)],
          ]);
          break;
        default:
          o[f] = genJunk(rng);
      }
    }
    options = rng.chance(0.05) ? genJunk(rng) : o;
    if (rng.chance(0.08)) {
      target = "junk";
      junkTarget = rng.pick<unknown>([
        null,
        5,
        {},
        "no.such.target",
        { pointer: 5 },
        { execute: 5 },
        [],
        { execute: null },
      ]);
    }
  }
  const desc = `ffiCall(${
    target === "junk" ? show(junkTarget) : target === "scale" ? "test_scale" : "twice"
  }, ${show(options)})`;
  return {
    target: "ffiCall",
    desc,
    run: async (env) => {
      const xCopy = x.slice();
      const t = target === "junk" ? junkTarget : target === "scale" ? env.scale : env.twice;
      const out = await attemptAsync(
        "Runtime.ffiCall",
        () => env.rt.ffiCall(t as Handler, options as FfiCallOptions),
      );
      if (!mutated) {
        if (!out.ok) {
          throw new Violation("Runtime.ffiCall failed on valid options", out.error.message);
        }
        const [y] = out.value;
        if (out.value.length !== 1 || !(y instanceof Float32Array)) {
          throw new Violation("Runtime.ffiCall returned other results", show(out.value));
        }
        if (!x.every((v, i) => Object.is(v, xCopy[i]))) {
          throw new Violation("Runtime.ffiCall changed the caller's argument", "");
        }
        checkDoubled(x, y, "ffiCall", target === "scale");
        return;
      }
      if (!out.ok) return;
      const o = options as Record<string, unknown>;
      if (o === null || typeof o !== "object") {
        throw new Violation("Runtime.ffiCall accepted options that are not an object", show(o));
      }
      if (!Array.isArray(o.results) || out.value.length !== o.results.length) {
        throw new Violation(
          "Runtime.ffiCall returned a result count other than its specs",
          show(o.results),
        );
      }
      for (const k of ["vmapMethod", "hasSideEffect"] as const) {
        const v = o[k];
        const ok = v === undefined ||
          (k === "hasSideEffect" ? typeof v === "boolean" : typeof v === "string" &&
            [
              "sequential",
              "sequential_unrolled",
              "expand_dims",
              "broadcast_all",
              "legacy_vectorized",
            ].includes(v));
        if (!ok) throw new Violation(`Runtime.ffiCall accepted an invalid ${k}`, show(v));
      }
      for (const k of ["inputLayouts", "outputLayouts"] as const) {
        const v = o[k];
        if (v !== undefined && !Array.isArray(v)) {
          throw new Violation(`Runtime.ffiCall accepted an invalid ${k}`, show(v));
        }
      }
      for (const k of ["guard", "offThread"] as const) {
        if (o[k] !== undefined && typeof o[k] !== "boolean") {
          throw new Violation(`Runtime.ffiCall accepted an invalid ${k}`, show(o[k]));
        }
      }
      if (!isDictionary(o.attrs, true)) {
        throw new Violation(
          "Runtime.ffiCall accepted attrs that are not a dictionary",
          show(o.attrs),
        );
      }
      if (target === "junk") {
        throw new Violation("Runtime.ffiCall accepted the target", show(junkTarget));
      }
    },
  };
}

// ---------------------------------------------------------------------------
// .npy.

const NPY_WRITABLE = REAL_DTYPES.filter((t) => t !== DataType.TOKEN && t !== DataType.INVALID);

function npyHeader(text: string, version: number): Uint8Array {
  const prefix = version === 1 ? 10 : 12;
  const pad = (64 - ((prefix + text.length + 1) % 64)) % 64;
  const header = text + " ".repeat(pad) + "\n";
  const out = new Uint8Array(prefix + header.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, header.length, true);
  else dv.setUint32(8, header.length, true);
  const enc = version === 3
    ? new TextEncoder().encode(header)
    : Uint8Array.from(header, (c) => c.charCodeAt(0) & 0xff);
  if (version === 3) {
    const o2 = new Uint8Array(prefix + enc.length);
    o2.set(out.subarray(0, prefix));
    new DataView(o2.buffer).setUint32(8, enc.length, true);
    o2.set(enc, prefix);
    return o2;
  }
  out.set(enc, prefix);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** C-order bytes of `shape` with `unit`-byte elements, reordered to Fortran order. */
function toFortran(c: Uint8Array, shape: number[], unit: number): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  const out = new Uint8Array(c.length);
  const idx = new Array(shape.length).fill(0);
  for (let e = 0; e < count; e++) {
    let f = 0, s = 1;
    for (let k = 0; k < shape.length; k++) {
      f += idx[k] * s;
      s *= shape[k]!;
    }
    out.set(c.subarray(e * unit, (e + 1) * unit), f * unit);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return out;
}

const NPY_JUNK_SHAPES = [
  "(-1,)",
  "(1.5,)",
  "(2**60,)",
  "(1152921504606846976, 1152921504606846976)",
  "(9007199254740993,)",
  "(4294967296, 4294967296, 0)",
  "(" + "1, ".repeat(300) + ")",
  "(" + "1, ".repeat(20000) + ")",
  "(0, " + "9007199254740991, ".repeat(40) + ")",
  "(" + "2, ".repeat(64) + ")",
  "[".repeat(5000) + "]".repeat(5000),
  "(".repeat(100000),
  "True",
  "None",
  "'3'",
  "(3)",
  "()",
  "(,)",
  "(1,,2)",
  "(1e3,)",
  "(0x10,)",
  "(1_000,)",
];
const NPY_JUNK_DESCRS = [
  "'<f3'",
  "'<V2'",
  "'|V1'",
  "'<V0'",
  "'<V4'",
  "'|b1'",
  "'>c16'",
  "'<U4'",
  "'|O'",
  "'<M8[ns]'",
  "[('a', '<f4')]",
  "'<f4'" + "x".repeat(100),
  "'\u0000'",
  "'<f99999999999999999999'",
  "'<i0'",
  "''",
  "'=f4'",
  "'>f2'",
  "'?'",
  "'b'",
  "{'x': 1}",
  "'" + "<".repeat(1000) + "'",
];

function npyDescr(dt: DataType, bigEndian: boolean): string {
  const info = dataTypeInfo(dt);
  const kinds: Partial<Record<DataType, string>> = {
    [DataType.PRED]: "b1",
    [DataType.S8]: "i1",
    [DataType.S16]: "i2",
    [DataType.S32]: "i4",
    [DataType.S64]: "i8",
    [DataType.U8]: "u1",
    [DataType.U16]: "u2",
    [DataType.U32]: "u4",
    [DataType.U64]: "u8",
    [DataType.F16]: "f2",
    [DataType.F32]: "f4",
    [DataType.F64]: "f8",
    [DataType.C64]: "c8",
    [DataType.C128]: "c16",
  };
  const k = kinds[dt] ?? `V${info.byteWidth}`;
  const order = info.byteWidth === 1 ? "|" : bigEndian ? ">" : "<";
  return `'${order}${k}'`;
}

/** readNpy on valid files (checked after reading) and mutated ones (header bytes, truncation, shapes, dtypes). */
function genNpyCase(rng: Rng): Case {
  const dtype = rng.pick(NPY_WRITABLE);
  const info = dataTypeInfo(dtype);
  const shape = goodDims(rng);
  const count = shape.reduce((a, b) => a * b, 1);
  const cData = new Uint8Array(count * info.byteWidth);
  for (let i = 0; i < cData.length; i++) cData[i] = rng.int(256);
  if (dtype === DataType.PRED) { for (let i = 0; i < cData.length; i++) cData[i]! &= 1; }
  const fortran = rng.chance(0.3);
  const bigEndian = rng.chance(0.2) && info.byteWidth > 1;
  const version = rng.pick([1, 1, 1, 2, 3]);
  const voidAs = info.byteWidth === 0
    ? undefined
    : npyDescr(dtype, false).includes("V")
    ? dtype
    : undefined;
  const unit = info.kind === "complex" ? info.byteWidth / 2 : info.byteWidth;
  const fileData = fortran ? toFortran(cData, shape, info.byteWidth) : cData.slice();
  if (bigEndian) {
    for (let i = 0; i + unit <= fileData.length; i += unit) {
      fileData.subarray(i, i + unit).reverse();
    }
  }
  let descr = npyDescr(dtype, bigEndian);
  let shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let fortranText = fortran ? "True" : "False";
  const muts: string[] = [];
  let options: unknown = voidAs === undefined ? undefined : { voidAs };
  let flips: [number, number][] = [];
  let truncate: number | null = null;
  let bytesJunk: unknown = undefined;
  let lengthField: number | null = null;
  let versionByte: number | null = null;
  if (rng.chance(0.75)) {
    for (let i = rng.range(1, 2); i > 0; i--) {
      const r = rng.float();
      if (r < 0.2) {
        shapeText = rng.pick(NPY_JUNK_SHAPES);
        muts.push(
          `shape ${
            shapeText.length > 60
              ? shapeText.slice(0, 40) + `…(${shapeText.length} chars)`
              : shapeText
          }`,
        );
      } else if (r < 0.35) {
        descr = rng.pick(NPY_JUNK_DESCRS);
        muts.push(`descr ${descr.length > 60 ? descr.slice(0, 40) + "…" : descr}`);
        if (rng.chance(0.5)) {
          options = { voidAs: rng.chance(0.5) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES) };
          muts.push(`options ${show(options)}`);
        }
      } else if (r < 0.42) {
        fortranText = rng.pick(["1", "'True'", "None", "true", "Tru"]);
        muts.push(`fortran_order ${fortranText}`);
      } else if (r < 0.6) {
        const k = rng.range(1, 4);
        flips = Array.from({ length: k }, () => [rng.int(80), rng.int(256)]);
        muts.push(`bytes ${flips.map(([at, b]) => `[${at}]=${b}`).join(",")}`);
      } else if (r < 0.72) {
        truncate = rng.int(200);
        muts.push(`truncated to ${truncate} bytes`);
      } else if (r < 0.78) {
        lengthField = rng.pick([0, 1, 0xffff, 0xffffffff, 2 ** 31]);
        muts.push(`header length field ${lengthField}`);
      } else if (r < 0.83) {
        versionByte = rng.pick([0, 4, 255]);
        muts.push(`version ${versionByte}`);
      } else if (r < 0.88) {
        options = genJunk(rng);
        muts.push(`options ${show(options)}`);
      } else if (r < 0.93) {
        bytesJunk = rng.pick<unknown>([
          null,
          undefined,
          "\x93NUMPY",
          [0x93, 0x4e],
          new DataView(new ArrayBuffer(16)),
          new ArrayBuffer(16),
          "detached",
        ]);
        muts.push(`bytes ${show(bytesJunk)}`);
      } else {
        const extra = rng.pick([
          `{'descr': ${descr}, 'fortran_order': False, 'shape': (1,), 'x': 1}`,
          `{'descr': ${descr}, 'descr': ${descr}, 'shape': (1,)}`,
          `{'descr': ${descr}, 'fortran_order': False, 'shape': (1,)} trailing`,
          `{${"'a': ".repeat(3000)}1}`,
          `{'descr': ${descr}, 'fortran_order': False, 'shape': (1,),,}`,
          `{'descr': ${descr}, 'fortran_order': False, 'shape': (1,)`,
          `{'descr': '\\x00', 'fortran_order': False, 'shape': ()}`,
          `{'descr': u'<f4', 'fortran_order': False, 'shape': ()}`,
          `{'descr': '<f4', 'fortran_order': False, 'shape': ${"(".repeat(3000)}${
            ")".repeat(3000)
          }}`,
        ]);
        shapeText = "";
        muts.push(
          `header ${extra.length > 80 ? extra.slice(0, 60) + `…(${extra.length} chars)` : extra}`,
        );
        descr = extra; // whole header
      }
    }
  }
  const header = shapeText === ""
    ? descr
    : `{'descr': ${descr}, 'fortran_order': ${fortranText}, 'shape': ${shapeText}, }`;
  const mutated = muts.length > 0;
  const desc =
    `readNpy(${DataType[dtype]} ${JSON.stringify(shape)} v${version}${fortran ? " fortran" : ""}${
      bigEndian ? " big-endian" : ""
    }` +
    `${mutated ? `; ${muts.join("; ")}` : ""}${options === undefined ? "" : `, ${show(options)}`})`;
  return {
    target: "npy",
    desc,
    run: () => {
      let bytes = concat(npyHeader(header, version), fileData);
      for (const [at, b] of flips) if (at < bytes.length) bytes[at] = b;
      if (lengthField !== null) {
        if (version === 1) new DataView(bytes.buffer).setUint16(8, lengthField & 0xffff, true);
        else new DataView(bytes.buffer).setUint32(8, lengthField >>> 0, true);
      }
      if (versionByte !== null) bytes[6] = versionByte;
      if (truncate !== null) bytes = bytes.slice(0, truncate);
      let input: unknown = bytes;
      if (bytesJunk !== undefined) {
        if (bytesJunk === "detached") {
          detach(bytes);
          input = bytes;
        } else input = bytesJunk;
      }
      const out = attempt("readNpy", () => readNpy(input as Uint8Array, options as ReadNpyOptions));
      if (!mutated) {
        if (!out.ok) throw new Violation("readNpy rejected a valid file", out.error.message);
        const a = out.value;
        if (
          a.dtype !== dtype || JSON.stringify(a.shape) !== JSON.stringify(shape) ||
          a.fortranOrder !== fortran
        ) {
          throw new Violation(
            "readNpy read a valid file wrong",
            `${DataType[a.dtype]} ${show(a.shape)}`,
          );
        }
        const got = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
        if (!sameBytes(got, cData)) {
          throw new Violation("readNpy read a valid file's data wrong", "");
        }
        const again = attempt(
          "writeNpy",
          () => readNpy(writeNpy(a), voidAs === undefined ? undefined : { voidAs }),
        );
        if (!again.ok) throw new Violation("readNpy(writeNpy(a)) failed", again.error.message);
        const back = again.value.data;
        if (!sameBytes(new Uint8Array(back.buffer, back.byteOffset, back.byteLength), cData)) {
          throw new Violation("readNpy(writeNpy(a)) changed the data", "");
        }
        return Promise.resolve();
      }
      if (!out.ok) return Promise.resolve();
      const a = out.value;
      if (!Array.isArray(a.shape) || !a.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
        throw new Violation("readNpy returned an invalid shape", show(a.shape));
      }
      const w = dataTypeInfo(a.dtype).byteWidth;
      const need = a.shape.reduce((x, y) => x * y, 1) * w;
      if (!ArrayBuffer.isView(a.data) || a.data.byteLength !== need || w === 0) {
        throw new Violation(
          "readNpy returned data of the wrong size",
          `${a.data?.byteLength} bytes for ${show(a.shape)}`,
        );
      }
      if (!Array.isArray(a.shape) || a.shape.length > 64) {
        throw new Violation("readNpy accepted a rank above NumPy's 64", `rank ${a.shape.length}`);
      }
      return Promise.resolve();
    },
  };
}

// ---------------------------------------------------------------------------
// The command line's parsers.

const CLI_TYPES = [
  "f32",
  "F32",
  "s8",
  "i64",
  "u4",
  "s4",
  "pred",
  "bool",
  "c64",
  "c128",
  "bf16",
  "f8e4m3fn",
  "f4e2m1fn",
  "token",
  "s1",
  "u64",
  "f16",
  "f64",
];
const CLI_BAD_TYPES = [
  "constructor",
  "__proto__",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "f33",
  "x",
  "i4",
  "int",
  "float",
];
const CLI_VALUES = [
  "1",
  "0",
  "-1",
  "0x10",
  "-0x8000000000000000",
  "0xffffffffffffffff",
  "0x10000000000000000",
  "0b101",
  "0o17",
  "1.5",
  "-2.5e3",
  "1e999",
  "inf",
  "-inf",
  "nan",
  "NaN",
  "Infinity",
  "1+2j",
  "(1-2j)",
  "3j",
  "true",
  "false",
  "",
  " ",
  "abc",
  "1_000",
  "9".repeat(400),
  "1e-400",
  "+",
  "-",
  "j",
  "()",
  ".5",
  "5.",
  "e5",
  "--1",
  "0x",
  "١",
];

function cliDims(rng: Rng): string {
  const r = rng.float();
  if (r < 0.6) return goodDims(rng).join(",");
  if (r < 0.7) return "";
  const parts: string[] = [];
  for (let i = rng.range(1, 4); i > 0; i--) {
    parts.push(
      rng.chance(0.6) ? String(rng.range(0, 3)) : rng.pick([
        "-1",
        "1.5",
        "",
        " 2 ",
        "0x2",
        "4294967296",
        "2147483648",
        "100000000",
        "9007199254740993",
        "1e3",
        "99999999999999999999",
        "a",
      ]),
    );
  }
  return parts.join(",");
}

function cliValues(rng: Rng): string {
  const n = rng.pick([0, 1, 1, 2, 4, 8]);
  return Array.from(
    { length: n },
    () => rng.chance(0.6) ? String(rng.range(-3, 3)) : rng.pick(CLI_VALUES),
  ).join(rng.chance(0.9) ? "," : ", ");
}

function cliType(rng: Rng): string {
  return rng.chance(0.85) ? rng.pick(CLI_TYPES) : rng.pick(CLI_BAD_TYPES);
}

function cliArg(rng: Rng): string {
  const r = rng.float();
  if (r < 0.08) {
    // One value filling a huge shape.
    const dims = rng.pick(["4294967296", "2147483648,2", "100000,100000", "65536,65536,2", "3"]);
    return `${rng.pick(["f32", "s8", "c64", "u4"])}[${dims}]=${rng.pick(["1", "0", "1+2j"])}`;
  }
  if (r < 0.13) {
    return rng.pick([
      "token",
      "TOKEN",
      "x.npy",
      "f32.npy",
      "constructor.npy",
      ".npy",
      "",
      "=",
      "[]",
      "f32[",
      "f32]2[",
      "f32[2]]=1",
    ]);
  }
  const t = cliType(rng);
  const dims = rng.chance(0.75) ? `[${cliDims(rng)}]` : "";
  const values = rng.chance(0.85) ? `=${cliValues(rng)}` : "";
  return `${t}${dims}${values}`;
}

function cliRet(rng: Rng): string {
  const r = rng.float();
  if (r < 0.15) {
    return rng.pick([
      "like:0",
      "like:1",
      "like:",
      "like:-1",
      "like:99999999999999999999",
      "LIKE:0",
      "like:0x1",
      "token",
    ]);
  }
  return `${cliType(rng)}${rng.chance(0.8) ? `[${cliDims(rng)}]` : ""}${
    rng.chance(0.05) ? "=1" : ""
  }`;
}

function cliAttr(rng: Rng): string {
  const name = rng.chance(0.7) ? rng.pick(["a", "b", "cfg.x", "cfg.y"]) : rng.pick([
    "",
    "a.",
    ".a",
    "a..b",
    " a",
    "__proto__",
    "constructor",
    "a.__proto__.b",
    "toString",
    "cfg",
    "a.b.c.d.e",
  ]);
  const r = rng.float();
  let value: string;
  if (r < 0.3) value = rng.pick(["reflect", "a:b", "str:a:b", "", ":", "string:x"]);
  else {
    const t = rng.chance(0.8)
      ? rng.pick([
        "f32",
        "i64",
        "s8",
        "u8",
        "bool",
        "pred",
        "f16",
        "bf16",
        "u64",
        "c64",
        "s4",
        "f8e5m2",
        "token",
        "f64",
      ])
      : rng.pick(CLI_BAD_TYPES);
    value = `${t}${rng.chance(0.3) ? "[]" : ""}:${cliValues(rng)}`;
  }
  return rng.chance(0.05) ? name : `${name}=${value}`;
}

const STAGE_WORDS = [
  "execute",
  "EXECUTE",
  "prepare",
  "instantiate",
  "initialize",
  "constructor",
  "__proto__",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "4",
];

function cliArgv(rng: Rng): string[] {
  if (rng.chance(0.4)) {
    // A valid command line with one option fuzzed.
    const argv = ["run", "./lib.so", "handler", "--arg", "f32[2]=1,2", "--ret", "f32[2]"];
    const [name, value] = rng.pick<[string, () => string]>([
      ["stage", () => rng.pick(STAGE_WORDS)],
      ["arg", () => cliArg(rng)],
      ["ret", () => cliRet(rng)],
      ["attr", () => cliAttr(rng)],
      ["platform", () => rng.pick(["host", "cuda", "constructor", "__proto__", "HOST"])],
      ["repeat", () => rng.pick(["1", "0", "1e9", "1000000000", "99999999999999999999"])],
      ["threads", () => rng.pick(["1", "1024", "1025", "0x10", " 2"])],
    ]);
    argv.push(`--${name}`, value());
    return argv;
  }
  const argv: string[] = [
    rng.chance(0.9)
      ? "run"
      : rng.pick(["inspect", "help", "--help", "runn", "", "-h", "help run", "constructor"]),
  ];
  if (rng.chance(0.95)) argv.push(rng.chance(0.8) ? "./lib.so" : rng.pick(["h.ts", "", "-", "--"]));
  if (rng.chance(0.95)) argv.push(rng.chance(0.8) ? "handler" : rng.pick(["", "test_scale"]));
  for (let i = rng.range(0, 4); i > 0; i--) {
    const r = rng.float();
    const eq = rng.chance(0.3);
    const opt = (name: string, value: string) =>
      eq ? argv.push(`--${name}=${value}`) : argv.push(`--${name}`, value);
    if (r < 0.25) opt("arg", cliArg(rng));
    else if (r < 0.45) opt("ret", cliRet(rng));
    else if (r < 0.6) opt("attr", cliAttr(rng));
    else if (r < 0.67) opt("stage", rng.pick(STAGE_WORDS));
    else if (r < 0.72) {
      opt(
        rng.pick(["repeat", "threads"]),
        rng.pick([
          "1",
          "0",
          "1e9",
          "1000000000",
          "1000000001",
          "99999999999999999999",
          "-1",
          "1.5",
          "",
          "1025",
        ]),
      );
    } else if (r < 0.77) {
      opt(rng.pick(["out", "expect"]), rng.pick(["o.npy", "", "o.txt", "O.NPY"]));
    } else if (r < 0.81) {
      opt(rng.pick(["rtol", "atol"]), rng.pick(["0", "1e-3", "nan", "-1", "inf", "", "0x10"]));
    } else if (r < 0.85) opt("platform", rng.pick(["host", "cuda", "CUDA", "", "constructor"]));
    else if (r < 0.88) opt("instantiate", rng.pick(["h", ""]));
    else if (r < 0.93) {
      argv.push(
        rng.pick([
          "--json",
          "--guard",
          "--json=1",
          "--help",
          "-x",
          "--unknown",
          "--arg",
          "--",
          "--all",
          "--verbose",
        ]),
      );
    } else argv.push(rng.pick(["extra", "-", "--stage"]));
  }
  return argv;
}

/** Checks a parsed array spec: known dtype, safe dims, values for every element. */
function checkArgSpec(spec: ReturnType<typeof parseArgSpec>, what: string): void {
  if (spec.kind !== "inline") return;
  if (!knownDtype(spec.dtype)) {
    throw new Violation(`${what} returned an unknown data type`, show(spec.dtype));
  }
  if (!spec.dims.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new Violation(`${what} returned invalid dims`, show(spec.dims));
  }
  const count = spec.dims.reduce((a, b) => a * b, 1);
  const per = dataTypeInfo(spec.dtype).kind === "complex" ? 2 : 1;
  if (spec.values.length !== count * per) {
    throw new Violation(
      `${what} returned a value count other than its element count`,
      `${spec.values.length} values for ${count} elements`,
    );
  }
}

/** parseArgSpec/parseRetSpec/parseAttrValue/addAttr/parseDims/parseValues/parseCommandLine on random text. */
function genCliCase(rng: Rng): Case {
  const r = rng.float();
  let desc: string;
  let run: () => void;
  if (r < 0.25) {
    const text = cliArg(rng);
    desc = `parseArgSpec(${JSON.stringify(text)})`;
    run = () => {
      const out = attempt("parseArgSpec", () => parseArgSpec(text, "--arg 1"));
      if (out.ok) checkArgSpec(out.value, "parseArgSpec");
    };
  } else if (r < 0.4) {
    const text = cliRet(rng);
    desc = `parseRetSpec(${JSON.stringify(text)})`;
    run = () => {
      const out = attempt("parseRetSpec", () => parseRetSpec(text, "--ret 1"));
      if (out.ok && out.value.kind === "buffer" && !knownDtype(out.value.dtype)) {
        throw new Violation("parseRetSpec returned an unknown data type", show(out.value.dtype));
      }
    };
  } else if (r < 0.55) {
    const texts = Array.from({ length: rng.range(1, 3) }, () => cliAttr(rng));
    desc = `addAttr(${texts.map((t) => JSON.stringify(t)).join(", ")})`;
    run = () => {
      const attrs: CliAttrs = { kind: "dictionary", entries: new Map() };
      for (const t of texts) attempt("addAttr", () => addAttr(attrs, t));
      const t = texts[0]!;
      const eq = t.indexOf("=");
      if (eq >= 0) {
        const out = attempt("parseAttrValue", () => parseAttrValue(t.slice(eq + 1), "--attr"));
        if (out.ok && out.value.kind === "scalar" && !knownDtype(out.value.dtype)) {
          throw new Violation(
            "parseAttrValue returned an unknown data type",
            show(out.value.dtype),
          );
        }
      }
    };
  } else if (r < 0.65) {
    const text = cliDims(rng);
    desc = `parseDims(${JSON.stringify(text)})`;
    run = () => {
      const out = attempt("parseDims", () => parseDims(text, "--ret"));
      if (out.ok) {
        const c = out.value.reduce((a, b) => a * b, 1);
        if (
          !out.value.every((d) => Number.isSafeInteger(d) && d >= 0) || !Number.isSafeInteger(c)
        ) {
          throw new Violation("parseDims returned invalid dims", show(out.value));
        }
      }
    };
  } else if (r < 0.75) {
    const text = cliValues(rng);
    const dt = rng.chance(0.85) ? rng.pick(DTYPES) : rng.pick(JUNK_DTYPES);
    desc = `parseValues(${JSON.stringify(text)}, ${
      typeof dt === "number" && DataType[dt] ? `DataType.${DataType[dt]}` : show(dt)
    })`;
    run = () => {
      attempt("parseValues", () => parseValues(text, dt as DataType, "--arg"));
    };
  } else {
    const argv = cliArgv(rng);
    desc = `parseCommandLine(${JSON.stringify(argv)})`;
    run = () => {
      const out = attempt("parseCommandLine", () => parseCommandLine(argv));
      if (!out.ok || out.value.command !== "run") return;
      const run = out.value;
      if (![0, 1, 2, 3].includes(run.stage)) {
        throw new Violation("parseCommandLine returned an unknown stage", show(run.stage));
      }
      if (!Number.isSafeInteger(run.repeat) || run.repeat < 1) {
        throw new Violation("parseCommandLine returned a bad repeat", show(run.repeat));
      }
      if (run.platform !== "host" && run.platform !== "cuda") {
        throw new Violation("parseCommandLine returned a bad platform", show(run.platform));
      }
      run.args.forEach((a) => checkArgSpec(a, "parseCommandLine --arg"));
    };
  }
  return {
    target: "cli",
    desc,
    run: () => {
      run();
      return Promise.resolve();
    },
  };
}

// ---------------------------------------------------------------------------
// Valid calls through every path, results checked.

function genValidCase(rng: Rng): Case {
  const dims = goodDims(rng);
  const count = dims.reduce((a, b) => a * b, 1);
  const path = rng.pick(["callSync", "call", "ffiCall"] as const);
  const handler = rng.pick(["twice", "test_scale", "isolated test_scale"] as const);
  const native = handler !== "twice";
  const guard = rng.chance(0.3);
  const viaInput = rng.chance(0.3);
  const desc = `${path}(${handler}) F32${JSON.stringify(dims)}${guard ? " guarded" : ""}${
    viaInput ? " as { data, shape }" : ""
  }`;
  return {
    target: "valid",
    desc,
    run: async (env) => {
      const x = floats(rng, count);
      const h = handler === "twice"
        ? env.twice
        : handler === "test_scale"
        ? env.scale
        : env.isoScale;
      if (path === "ffiCall") {
        const out = await attemptAsync("Runtime.ffiCall", () =>
          env.rt.ffiCall(h, {
            args: [viaInput ? { data: x, shape: dims } : x],
            results: [{ dtype: DataType.F32, shape: viaInput ? dims : [count] }],
            attrs: native ? { factor: scalar(DataType.F32, 2) } : undefined,
            guard,
          }));
        if (!out.ok) {
          throw new Violation("Runtime.ffiCall failed on a valid call", out.error.message);
        }
        checkDoubled(x, out.value[0]!, "ffiCall");
        return;
      }
      const y = new Float32Array(count);
      const b = new CallFrameBuilder({ guard });
      if (viaInput) b.arg({ data: x, shape: dims }).ret({ data: y, shape: dims });
      else b.arg(x, dims).ret(y, dims);
      if (native) b.attr("factor", scalar(DataType.F32, 2));
      using frame = b.build();
      const out = path === "callSync"
        ? attempt("Runtime.callSync", () => env.rt.callSync(h, frame))
        : await attemptAsync("Runtime.call", () => env.rt.call(h, frame));
      if (!out.ok) throw new Violation(`Runtime.${path} failed on a valid call`, out.error.message);
      checkDoubled(x, y, path, native);
    },
  };
}

const GENERATORS: Record<Target, (rng: Rng) => Case> = {
  builder: genBuilderCase,
  attrs: genAttrsCase,
  setters: genSettersCase,
  "call-options": genCallOptionsCase,
  ffiCall: genFfiCallCase,
  npy: genNpyCase,
  cli: genCliCase,
  valid: genValidCase,
};

/** Case `n` of a run: its own generator, so that it can be run alone. */
export function makeCase(seed: number, n: number, targets: readonly Target[]): Case {
  const rng = new Rng(caseSeed(seed, n));
  return GENERATORS[rng.pick(targets)](rng);
}

/** Normalises a violation's text (numbers, quoted text) so that one kind counts once. */
function violationKey(target: string, v: Violation): string {
  const norm = (s: string) =>
    s.replace(/\s*\[at [\s\S]*\]$/, "").replace(/'[^']*'/g, "'…'").replace(/\w*Array\b/g, "Array")
      .replace(/\b[A-Z][A-Z0-9]+\b/g, "T").replace(/-?\d+(\.\d+)?/g, "N").slice(0, 160);
  return `${target}|${norm(v.kind)}|${v.kind.includes(" threw ") ? norm(v.detail) : ""}`;
}

function envInt(name: string, dflt: number): number {
  const v = Deno.env.get(name);
  if (v === undefined || v === "") return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad ${name}=${v}`);
  return n;
}

/** The run's settings from the environment. */
export function settings(): {
  seed: number;
  cases: number;
  only: number | null;
  targets: Target[];
  budgetMs: number;
} {
  const only = Deno.env.get("XLA_FFI_DENO_SURFACE_FUZZ_CASE");
  const t = Deno.env.get("XLA_FFI_DENO_SURFACE_FUZZ_TARGETS");
  const targets = t ? t.split(",").map((s) => s.trim()) as Target[] : [...TARGETS];
  for (const x of targets) {
    if (!TARGETS.includes(x)) throw new Error(`unknown target ${x} (${TARGETS.join(", ")})`);
  }
  return {
    seed: envInt("XLA_FFI_DENO_SURFACE_FUZZ_SEED", DEFAULT_SEED),
    cases: envInt("XLA_FFI_DENO_SURFACE_FUZZ_CASES", DEFAULT_CASES),
    only: only === undefined || only === "" ? null : Number(only),
    targets,
    budgetMs: envInt("XLA_FFI_DENO_SURFACE_FUZZ_BUDGET_MS", DEFAULT_BUDGET_MS),
  };
}

/** A case slower than this is reported (a hang in the making: no case needs a second). */
const SLOW_CASE_MS = 10_000;

/** How many of the latest cases the progress file names. */
const RECENT = 8;

/** Where the script keeps the distinct violations found so far, beside the progress file. */
export function violationsPath(progress: string): string {
  return `${progress}.violations.json`;
}

/** Runs the cases, writing each one's description to `progress` first; returns the summary. */
export async function runSurfaceFuzz(progress: string): Promise<FuzzSummary> {
  const s = settings();
  const env = openEnv();
  const t0 = performance.now();
  const summary: FuzzSummary = {
    seed: s.seed,
    cases: 0,
    passed: 0,
    calls: tally,
    violations: [],
    perTarget: {},
    ms: 0,
  };
  const seen = new Map<string, ViolationRecord>();
  const recent: string[] = [];
  const numbers = s.only === null ? Array.from({ length: s.cases }, (_, i) => i) : [s.only];
  try {
    for (const n of numbers) {
      if (performance.now() - t0 > s.budgetMs) break;
      const c = makeCase(s.seed, n, s.targets);
      // The case being run first, then the ones before it: memory a case
      // corrupted may bring the process down only in a later one.
      recent.unshift(`seed ${s.seed} case ${n} [${c.target}]: ${c.desc.slice(0, 2000)}`);
      recent.length = Math.min(recent.length, RECENT);
      Deno.writeTextFileSync(progress, recent.join("\n") + "\n");
      summary.cases++;
      summary.perTarget[c.target] = (summary.perTarget[c.target] ?? 0) + 1;
      const start = performance.now();
      try {
        await c.run(env);
        summary.passed++;
      } catch (e) {
        const v = e instanceof Violation ? e : (() => {
          try {
            classify("the case", e);
            return null;
          } catch (x) {
            return x as Violation;
          }
        })();
        if (v === null) {
          summary.passed++; // the harness itself got an FfiError: not the surface's fault
        } else {
          const key = violationKey(c.target, v);
          const old = seen.get(key);
          if (old === undefined) {
            seen.set(key, {
              target: c.target,
              kind: v.kind,
              detail: v.detail.slice(0, 300),
              case: n,
              input: c.desc.slice(0, 600),
              count: 1,
            });
            // Kept on disk too: a later crash or hang must not lose them.
            Deno.writeTextFileSync(violationsPath(progress), JSON.stringify([...seen.values()]));
          } else {
            old.count++;
            if (c.desc.length < old.input.length) {
              old.case = n;
              old.kind = v.kind;
              old.input = c.desc.slice(0, 600);
              old.detail = v.detail.slice(0, 300);
            }
          }
        }
      }
      const ms = performance.now() - start;
      if (ms > SLOW_CASE_MS) {
        const key = `${c.target}|slow`;
        if (!seen.has(key)) {
          seen.set(key, {
            target: c.target,
            kind: `a case took ${Math.round(ms)} ms`,
            detail: "",
            case: n,
            input: c.desc.slice(0, 600),
            count: 1,
          });
        }
      }
    }
  } finally {
    closeEnv(env);
  }
  summary.violations = [...seen.values()];
  summary.ms = Math.round(performance.now() - t0);
  return summary;
}

if (import.meta.main) {
  const progress = Deno.args[0];
  if (progress === undefined) {
    console.error("usage: _surface_fuzz.ts PROGRESS_FILE");
    Deno.exit(2);
  }
  const summary = await runSurfaceFuzz(progress);
  console.log(SUMMARY_TAG + JSON.stringify(summary));
}
