/**
 * The JavaScript side of the TS handler entry points: the shared flat
 * buffer, the two callbacks the C slots call (inline on the JS thread, and a
 * thread-safe one for calls from other threads), the decoder with ffi.h's
 * checks and messages, and completion of futures.
 *
 * @module
 */
import { ErrorCode, ExecutionStage, stageName } from "../abi/enums.ts";
import { _errorCode, _handlerFailure, _recordOrigin, FfiError } from "../errors.ts";
import { Future } from "../future.ts";
import { type Native, native } from "../native/lib.ts";
import { attrRecordValue, type AttrSpec, DecodeFailure, readName } from "./_attrs.ts";
import {
  _setFastReuse,
  attrPlan,
  bufferPlan,
  compileDecoder,
  fastValue,
  K_API,
  K_ARG,
  K_ARGS,
  K_ATTRS,
  K_CTX,
  K_OTHER,
  K_RET,
  K_RETS,
  K_STAGE,
  MISMATCH,
  type OpPlan,
  otherPlan,
} from "./_fast.ts";
import {
  copyFlatWords,
  FLAT_SLOTS,
  flatDv,
  flatF64,
  flatI32,
  flatI64,
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
  initFlat,
} from "./_flat.ts";
import { checkBufferRecord, Dictionary, readBufferRecord, RemainingBuffers } from "./buffer.ts";
import { ScratchAllocator, ThreadPool } from "./context.ts";

/** Context values a binding can ask for with `.ctx(kind)`. */
export type CtxKind =
  | "runId"
  | "deviceOrdinal"
  | "stream"
  | "api"
  | "executionContext"
  | "stage"
  | "scratch"
  | "threadPool";

/** @internal one bound operand. */
export type Op =
  | { k: "arg" | "ret"; dtype: number; rank: number; optional: boolean }
  | { k: "args" | "rets" }
  | { k: "attr"; name: string; spec: AttrSpec; optional?: boolean }
  | { k: "attrs" }
  | { k: "ctx"; what: CtxKind }
  | { k: "userData"; typeId: number }
  | { k: "state"; stage: ExecutionStage };

const DRAIN_BUDGET = 4096; // foreign calls served per wake-up of the JS thread
// How long the drainer waits for the next foreign call when the queue is
// empty (callers in a loop come back within microseconds; a fresh wake-up of
// the JS thread costs tens of them). Once a Promise of this batch is pending
// (its future completes only after the drainer returns): only up to 5 µs after
// the last synchronous call that completed with its result, whose caller is
// likely to come back (negative: next_job's "after the last synchronous call"
// mode); a caller given a future waits for the drainer to return instead.
const LINGER_NS = 30_000;
const LINGER_PENDING_NS = -5_000;

let lib: Native | undefined;
let msgBytes: Uint8Array;
let aux: ArrayBuffer;
let auxDv: DataView;
let completeBytes: Uint8Array;
let inlineCb: Deno.UnsafeCallback<{ readonly parameters: ["i32"]; readonly result: "i32" }>;
let threadCb: Deno.UnsafeCallback<{ readonly parameters: []; readonly result: "i32" }>;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const entries: (Entry | undefined)[] = [];
let liveHandlers = 0;
const states = new Map<number, unknown>();
let nextStateKey = 1;
let failedCompletions = 0;

/** @internal the native symbols, with the handler host initialised. */
export function _lib(): Native {
  if (lib === undefined) init();
  return lib!;
}

/** @internal the value a context helper left in the aux area. */
export function _auxValue(): number {
  return auxDv.getFloat64(0, true);
}

/** @internal the message a failed context helper left in the aux area. */
export function _auxMessage(): string {
  const n = auxDv.getInt32(8, true);
  return new TextDecoder().decode(new Uint8Array(aux, 16, n));
}

function init(): void {
  const l = native();
  const cap = l.xla_ffi_deno_handler_msg_cap();
  initFlat();
  msgBytes = new Uint8Array(cap);
  aux = new ArrayBuffer(cap);
  auxDv = new DataView(aux);
  completeBytes = new Uint8Array(cap);
  inlineCb = new Deno.UnsafeCallback(
    { parameters: ["i32"], result: "i32" } as const,
    (slot: number) => dispatch(slot),
  );
  threadCb = new Deno.UnsafeCallback(
    { parameters: [], result: "i32" } as const,
    () => {
      // Serve queued calls from other threads; yield to the event loop after a budget.
      // Once a Promise of this batch is pending, linger less (LINGER_PENDING_NS): its
      // completion runs after this callback returns. One crossing per call:
      // next_job completes the previous call, then takes the next.
      if (draining) {
        draining = false;
        _holdLoop(-1);
      }
      let linger = LINGER_NS, status = -1;
      for (let n = 0; n < DRAIN_BUDGET; n++) {
        const slot = l.xla_ffi_deno_handler_next_job(status, linger);
        if (slot < 0) return 0;
        status = dispatch(slot);
        if (status === 2) linger = LINGER_PENDING_NS;
      }
      l.xla_ffi_deno_handler_job_done(status);
      // The drainer calls again at once for the calls still queued: keep the loop alive till then.
      draining = true;
      _holdLoop(1);
      return 1;
    },
  );
  // Not ref'ed: open handlers alone do not keep the process alive (see _holdLoop).
  threadCb.unref();
  auxBytes = new Uint8Array(aux);
  try {
    host(l);
  } catch (e) {
    inlineCb.close();
    threadCb.close();
    throw e;
  }
  lib = l;
}

let auxBytes: Uint8Array;
let loopHolds = 0;
let draining = false;

/**
 * @internal Keeps the event loop alive while `holds` > 0 (by ref'ing the
 * thread-safe callback). Deno runs an unref'ed thread-safe callback called
 * from another thread whenever its event loop is alive for any reason (a
 * pending nonblocking FFI call such as `Runtime.callOnThreads`, a timer), so
 * open handlers need no ref of their own: the loop is held only while a
 * foreign call is being served in batches, while a TS handler's future is
 * pending, and while a caller (e.g. a hosted XLA session) holds it.
 */
export function _holdLoop(delta: number): void {
  if (lib === undefined) return;
  const before = loopHolds;
  loopHolds += delta;
  if (before === 0 && loopHolds > 0) threadCb.ref();
  else if (before > 0 && loopHolds <= 0) {
    loopHolds = 0;
    threadCb.unref();
  }
}

/** Makes this JS thread the host (again, if another took over while it had no handler). */
function host(l: Native): void {
  const rc = l.xla_ffi_deno_handler_init(
    flatI64,
    BigInt(FLAT_SLOTS),
    msgBytes,
    auxBytes,
    inlineCb.pointer,
    threadCb.pointer,
  );
  if (rc !== 0) {
    throw new FfiError(
      ErrorCode.FAILED_PRECONDITION,
      "TS handlers are hosted by one JS thread per process, and another thread (a Worker or " +
        "the main thread) already hosts them",
    );
  }
}

/**
 * Writes an error result; returns status 1. Never throws. A value a handler
 * threw is mapped as XLA maps a C++ handler's exception (`_handlerFailure`)
 * and remembered as the origin of the caller's error; `own`: an error of this
 * module (a decode failure, a released entry point), written as it is.
 */
function writeError(e: unknown, own = false): number {
  const fe = _handlerFailure(e);
  let written = 0;
  try {
    written = encoder.encodeInto(fe.message, msgBytes.subarray(0, msgBytes.length - 1)).written;
    if (!own) _recordOrigin(decoder.decode(msgBytes.subarray(0, written)), e);
  } catch { /* an empty message */ }
  flatI32[0] = _errorCode(fe.code);
  flatI32[2] = written;
  return 1;
}

const argOff: number[] = [];
const retOff: number[] = [];
const attrOff: number[] = [];

/** @internal the compiled form of a binding. */
export class Entry {
  readonly ops: Op[];
  readonly fn: (...args: unknown[]) => unknown;
  readonly stage: ExecutionStage;
  /** Before arity messages: "[stage] " from 0.2 on, none in 0.1. */
  readonly arityPrefix: string;
  /** Before decode failures: "[stage] " at every version. */
  readonly decodePrefix: string;
  readonly checkZero: boolean;
  readonly reqArgs: number;
  readonly optArgs: number;
  readonly remArgs: boolean;
  readonly reqRets: number;
  readonly optRets: number;
  readonly remRets: boolean;
  readonly hasAttrs: boolean;
  readonly nAttrs: number;
  /** Bound attribute names that are all optional (by sorted index); undefined when none is. */
  readonly attrOptional: boolean[] | undefined;
  /** Bound attribute names in sorted order, as bytes. */
  readonly sortedNames: Uint8Array[];
  readonly nReqAttrs: number;
  /** For each op: the frame attribute index of a bound attribute. */
  readonly attrIndex: number[];
  readonly attrNames: Uint8Array[];
  /** Each op compiled for the fast decode. */
  readonly plans: OpPlan[];
  /** Counts the arity checks accept (max: Infinity when unbounded). */
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly minRets: number;
  readonly maxRets: number;
  readonly minAttrs: number;
  readonly maxAttrs: number;
  /** The parameters of the call being decoded (reused: the handler gets them spread). */
  readonly params: unknown[];
  /** The compiled decode-and-call (_fast.ts compileDecoder); null: none; undefined: not yet. */
  run: (() => unknown) | null | undefined = undefined;
  /** The same without the handler call (benchmarks only: _phaseStop(5)). */
  runNoCall: (() => unknown) | null | undefined = undefined;

  constructor(
    ops: Op[],
    fn: (...args: unknown[]) => unknown,
    stage: ExecutionStage,
    version: readonly [number, number],
  ) {
    this.ops = ops;
    this.fn = fn;
    this.stage = stage;
    const v02 = version[0] > 0 || version[1] >= 2;
    this.decodePrefix = `[${stageName(stage)}] `;
    this.arityPrefix = v02 ? this.decodePrefix : "";
    this.checkZero = !v02;
    let reqArgs = 0, optArgs = 0, reqRets = 0, optRets = 0;
    let remArgs = false, remRets = false, hasAttrs = false;
    const names: string[] = [];
    const required = new Set<string>();
    for (const op of ops) {
      if (op.k === "attr" && !op.optional) required.add(op.name);
      if (op.k === "arg") op.optional ? optArgs++ : reqArgs++;
      else if (op.k === "ret") op.optional ? optRets++ : reqRets++;
      else if (op.k === "args") remArgs = true;
      else if (op.k === "rets") remRets = true;
      else if (op.k === "attrs") hasAttrs = true;
      else if (op.k === "attr") names.push(op.name);
    }
    const sorted = [...new Set(names)].sort((a, b) => compareBytes(a, b));
    this.attrIndex = ops.map((op) => op.k === "attr" ? sorted.indexOf(op.name) : -1);
    this.attrNames = ops.map((op) => encoder.encode(op.k === "attr" ? op.name : ""));
    this.sortedNames = sorted.map((n) => encoder.encode(n));
    // Optional attributes are found by name (a merge of the two sorted lists);
    // without them, by sorted position as ffi.h does.
    this.nReqAttrs = required.size;
    this.attrOptional = required.size < sorted.length
      ? sorted.map((n) => !required.has(n))
      : undefined;
    this.reqArgs = reqArgs;
    this.optArgs = optArgs;
    this.remArgs = remArgs;
    this.reqRets = reqRets;
    this.optRets = optRets;
    this.remRets = remRets;
    this.hasAttrs = hasAttrs;
    this.nAttrs = sorted.length;
    [this.minArgs, this.maxArgs] = countRange(reqArgs, optArgs, remArgs, this.checkZero);
    [this.minRets, this.maxRets] = countRange(reqRets, optRets, remRets, this.checkZero);
    const exactAttrs = !hasAttrs && (this.checkZero || this.nAttrs > 0);
    this.minAttrs = exactAttrs ? this.nAttrs : 0;
    this.maxAttrs = exactAttrs ? this.nAttrs : Infinity;
    let ai = 0, ri = 0;
    this.plans = ops.map((op, i) => {
      switch (op.k) {
        case "arg":
          return bufferPlan(K_ARG, ai++, op.dtype, op.rank, op.optional);
        case "ret":
          return bufferPlan(K_RET, ri++, op.dtype, op.rank, op.optional);
        case "args":
          return otherPlan(K_ARGS, ai);
        case "rets":
          return otherPlan(K_RETS, ri);
        case "attrs":
          return otherPlan(K_ATTRS);
        case "attr":
          // Optional attributes are matched by name: the complete decoder does it.
          return this.attrOptional !== undefined
            ? otherPlan(K_OTHER)
            : attrPlan(this.attrIndex[i]!, this.attrNames[i]!, op.spec);
        case "ctx":
          return otherPlan(
            op.what === "stage"
              ? K_STAGE
              : op.what === "api"
              ? K_API
              : op.what === "executionContext"
              ? K_CTX
              : K_OTHER,
          );
        default:
          return otherPlan(K_OTHER);
      }
    });
    this.params = new Array(ops.length);
  }

  /** Arity message or undefined (ffi.h §7.3 order: args, results, attributes). */
  arity(nargs: number, nrets: number, nattrs: number): string | undefined {
    const a = checkCount(
      "arguments",
      nargs,
      this.reqArgs,
      this.optArgs,
      this.remArgs,
      this.checkZero,
    );
    if (a !== undefined) return a;
    const r = checkCount(
      "results",
      nrets,
      this.reqRets,
      this.optRets,
      this.remRets,
      this.checkZero,
    );
    if (r !== undefined) return r;
    const opt = this.attrOptional !== undefined;
    if (
      !this.hasAttrs && (this.checkZero || this.nAttrs > 0) &&
      (opt ? nattrs < this.nReqAttrs || nattrs > this.nAttrs : nattrs !== this.nAttrs)
    ) {
      let m = opt
        ? `Wrong number of attributes: expected ${this.nReqAttrs} to ${this.nAttrs} ` +
          `(${this.nAttrs - this.nReqAttrs} optional) but got ${nattrs}`
        : `Wrong number of attributes: expected ${this.nAttrs} but got ${nattrs}`;
      if (nattrs > 0) {
        const names = [];
        for (let j = 0; j < nattrs; j++) {
          names.push(readName(flatDv, 4 * flatI32[H_INDEX + nargs + nrets + j]!));
        }
        m += ` with name(s): ${names.join(", ")}`;
      }
      return m;
    }
    return undefined;
  }
}

const attrMap: number[] = [];

/** Compares the name of the attribute record at `o` with `name`, byte-wise. */
function compareName(o: number, name: Uint8Array): number {
  const len = flatDv.getInt32(o + 8, true);
  const n = Math.min(len, name.length);
  for (let j = 0; j < n; j++) {
    const d = flatDv.getUint8(o + 16 + j) - name[j]!;
    if (d !== 0) return d;
  }
  return len - name.length;
}

/**
 * Finds the frame attribute of each bound name (both lists sorted): fills
 * `attrMap` (frame index, or -1 when absent); returns a message naming frame
 * attributes that no binding names.
 */
function matchAttrs(e: Entry, nattrs: number): string | undefined {
  const names = e.sortedNames;
  let i = 0;
  let unexpected: string[] | undefined;
  for (let j = 0; j < names.length; j++) {
    attrMap[j] = -1;
    while (i < nattrs) {
      const c = compareName(attrOff[i]!, names[j]!);
      if (c > 0) break;
      if (c === 0) {
        attrMap[j] = i++;
        break;
      }
      (unexpected ??= []).push(readName(flatDv, attrOff[i++]!));
    }
  }
  while (i < nattrs) (unexpected ??= []).push(readName(flatDv, attrOff[i++]!));
  if (unexpected === undefined) return undefined;
  return `Unexpected attribute(s) with name(s): ${unexpected.join(", ")} (bound: ${
    names.map((n, j) => new TextDecoder().decode(n) + (e.attrOptional![j] ? "?" : "")).join(", ")
  })`;
}

function compareBytes(a: string, b: string): number {
  const x = encoder.encode(a), y = encoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** [min, max] of the counts checkCount accepts. */
function countRange(req: number, opt: number, rem: boolean, checkZero: boolean): [number, number] {
  if (rem || opt > 0) return [req, Infinity];
  return checkZero || req > 0 ? [req, req] : [0, Infinity];
}

function checkCount(
  what: string,
  n: number,
  req: number,
  opt: number,
  rem: boolean,
  checkZero: boolean,
): string | undefined {
  if (rem || opt > 0) {
    if (n < req) return `Wrong number of ${what}: expected at least ${req} but got ${n}`;
    return undefined;
  }
  if ((checkZero || req > 0) && n !== req) {
    return `Wrong number of ${what}: expected ${req} but got ${n}`;
  }
  return undefined;
}

function ctxHelperFailure(what: string): DecodeFailure {
  return new DecodeFailure(`Failed to get ${what} from execution context: ${_auxMessage()}`);
}

/** The scratch allocator of the call being decoded (released by the dispatcher). */
let callScratch: ScratchAllocator | undefined;

/** Releases the scratch allocator of a call that will not run. */
function dropScratch(): void {
  callScratch?._release();
  callScratch = undefined;
}

/**
 * Decodes the flat frame into `e.params`: the fast decode (_fast.ts) when the
 * frame decodes cleanly, else the complete decoder. Returns a failure message
 * or undefined.
 */
function decode(e: Entry): string | undefined {
  callScratch = undefined;
  const i32 = flatI32;
  const nargs = i32[H_NARGS]!, nrets = i32[H_NRETS]!, nattrs = i32[H_NATTRS]!;
  if (
    e.attrOptional === undefined &&
    nargs >= e.minArgs && nargs <= e.maxArgs && nrets >= e.minRets && nrets <= e.maxRets &&
    nattrs >= e.minAttrs && nattrs <= e.maxAttrs
  ) {
    const plans = e.plans, params = e.params;
    let i = 0;
    for (; i < plans.length; i++) {
      const p = plans[i]!;
      let v: unknown;
      if (p.kind !== K_OTHER) {
        v = fastValue(p, nargs, nrets);
        if (v === MISMATCH) break;
      } else {
        v = contextValue(e.ops[i]!);
        if (v instanceof DecodeFailure) break;
      }
      params[i] = v;
    }
    if (i === plans.length) return undefined;
    dropScratch();
  }
  return decodeComplete(e);
}

/** A context operand's value (ctx, userData, state), or a DecodeFailure. */
function contextValue(op: Op): unknown {
  const l = lib!;
  const api = flatF64[H_API]!, ctx = flatF64[H_CTX]!;
  switch (op.k) {
    case "ctx":
      switch (op.what) {
        case "runId":
          return l.xla_ffi_deno_ctx_run_id(api, ctx) === 0
            ? _auxValue()
            : ctxHelperFailure("run id");
        case "deviceOrdinal":
          return l.xla_ffi_deno_ctx_device_ordinal(api, ctx) === 0
            ? _auxValue()
            : ctxHelperFailure("device ordinal");
        case "stream":
          return l.xla_ffi_deno_ctx_stream(api, ctx) === 0
            ? _auxValue()
            : new DecodeFailure(`Failed to get platform stream: ${_auxMessage()}`);
        case "api":
          return api;
        case "executionContext":
          return ctx;
        case "stage":
          return flatI32[H_STAGE]!;
        case "scratch":
          return callScratch = new ScratchAllocator(api, ctx);
        case "threadPool":
          return new ThreadPool(api, ctx);
      }
      break;
    case "userData":
      return l.xla_ffi_deno_ctx_user_data(api, ctx, op.typeId) === 0
        ? _auxValue()
        : ctxHelperFailure("user data");
    case "state": {
      if (l.xla_ffi_deno_ctx_state_get(api, ctx, op.stage) !== 0) return ctxHelperFailure("state");
      const key = _auxValue();
      return states.has(key)
        ? states.get(key)
        : new DecodeFailure("Failed to get state from execution context: State is not set");
    }
  }
  return new DecodeFailure(`Unsupported operand ${op.k}`);
}

/**
 * The complete decoder: every operand checked in ffi.h's order with its
 * diagnostics (the fast decode hands every frame it does not accept here).
 * Fills `e.params`; returns a failure message or undefined.
 */
function decodeComplete(e: Entry): string | undefined {
  const dv = flatDv, i32 = flatI32;
  const nargs = i32[H_NARGS]!, nrets = i32[H_NRETS]!, nattrs = i32[H_NATTRS]!;
  const arity = e.arity(nargs, nrets, nattrs);
  if (arity !== undefined) return e.arityPrefix + arity;
  for (let j = 0; j < nargs; j++) argOff[j] = 4 * i32[H_INDEX + j]!;
  for (let j = 0; j < nrets; j++) retOff[j] = 4 * i32[H_INDEX + nargs + j]!;
  for (let j = 0; j < nattrs; j++) attrOff[j] = 4 * i32[H_INDEX + nargs + nrets + j]!;
  const retStart = i32[H_RETS_AT]!, attrStart = i32[H_ATTRS_AT]!, attrEnd = i32[H_ATTRS_END]!;
  if (e.attrOptional !== undefined) {
    const unexpected = matchAttrs(e, nattrs);
    if (unexpected !== undefined) return e.arityPrefix + unexpected;
  }
  const ops = e.ops;
  const params = e.params;
  let ai = 0, ri = 0;
  let bad: number[] | undefined;
  let diags = "";
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    let value: unknown;
    switch (op.k) {
      case "arg":
      case "ret": {
        const isArg = op.k === "arg";
        const idx = isArg ? ai++ : ri++;
        if (idx >= (isArg ? nargs : nrets)) {
          value = undefined; // optional and absent
          break;
        }
        const o = isArg ? argOff[idx]! : retOff[idx]!;
        const d = checkBufferRecord(dv, o, op.dtype, op.rank, isArg ? "argument" : "result");
        value = d === undefined ? readBufferRecord(dv, o) : new DecodeFailure(d);
        break;
      }
      case "args":
      case "rets": {
        const isArg = op.k === "args";
        const from = isArg ? ai : ri;
        const n = isArg ? nargs : nrets;
        const offs = isArg ? argOff : retOff;
        const end = isArg ? retStart : attrStart;
        const start = from < n ? offs[from]! / 4 : end;
        const at = new Array<number>(Math.max(0, n - from));
        for (let j = from; j < n; j++) at[j - from] = offs[j]! / 4 - start;
        value = new RemainingBuffers(
          copyFlatWords(start, end),
          at,
          isArg ? "argument" : "result",
        );
        if (isArg) ai = n;
        else ri = n;
        break;
      }
      case "attr": {
        let k = e.attrIndex[i]!;
        if (e.attrOptional !== undefined) {
          k = attrMap[k]!;
          if (k < 0) {
            value = op.optional
              ? undefined
              : new DecodeFailure(`Missing attribute: ${op.name} is not optional`);
            break;
          }
        }
        const o = attrOff[k]!;
        const want = e.attrNames[i]!;
        const len = dv.getInt32(o + 8, true);
        let same = len === want.length;
        for (let j = 0; same && j < len; j++) same = dv.getUint8(o + 16 + j) === want[j];
        value = same
          ? attrRecordValue(dv, o, op.spec)
          : new DecodeFailure(`Attribute name mismatch: ${readName(dv, o)} vs ${op.name}`);
        break;
      }
      case "attrs": {
        const at = new Array<number>(nattrs);
        for (let j = 0; j < nattrs; j++) at[j] = attrOff[j]! / 4 - attrStart;
        value = new Dictionary(copyFlatWords(attrStart, attrEnd), at);
        break;
      }
      default:
        value = contextValue(op);
    }
    if (value instanceof DecodeFailure) {
      (bad ??= []).push(i);
      diags += value.message;
    } else {
      params[i] = value;
    }
  }
  if (bad !== undefined) {
    dropScratch();
    return `${e.decodePrefix}Failed to decode all FFI handler operands (bad operands at: ${
      bad.join(", ")
    })` + (diags.length > 0 ? `\nDiagnostics:\n${diags}` : "");
  }
  return undefined;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === "object" || typeof v === "function") &&
    typeof (v as { then?: unknown }).then === "function";
}

/** Calls `fn` with `params` spread (fixed arities without the spread). */
function callWith(fn: (...args: unknown[]) => unknown, p: unknown[]): unknown {
  switch (p.length) {
    case 0:
      return fn();
    case 1:
      return fn(p[0]);
    case 2:
      return fn(p[0], p[1]);
    case 3:
      return fn(p[0], p[1], p[2]);
    case 4:
      return fn(p[0], p[1], p[2], p[3]);
    default:
      return fn(...p);
  }
}

/** Runs slot `slot` on the flattened frame; returns 0 ok, 1 error, 2 pending. Never throws. */
function dispatch(slot: number): number {
  if (phaseStop !== 0) return dispatchPhase(slot);
  try {
    const e = entries[slot];
    if (e === undefined) {
      return writeError(
        new FfiError(ErrorCode.FAILED_PRECONDITION, `TS handler entry point ${slot} was released`),
        true,
      );
    }
    // Read before the handler runs: it may call TS handlers, which reuse the flat buffer.
    const stage = e.stage;
    const api = stage === ExecutionStage.EXECUTE ? 0 : flatF64[H_API]!;
    const ctx = stage === ExecutionStage.EXECUTE ? 0 : flatF64[H_CTX]!;
    let run = e.run;
    if (run === undefined) run = e.run = compileDecoder(e) ?? null;
    if (run !== null) {
      // Decodes and calls the handler; MISMATCH: nothing was called.
      let result: unknown;
      try {
        result = run();
      } catch (err) {
        return writeError(err);
      }
      if (result !== MISMATCH) return settle(e, result, undefined, api, ctx);
    }
    const failure = decode(e);
    if (failure !== undefined) {
      return writeError(new FfiError(ErrorCode.INVALID_ARGUMENT, failure), true);
    }
    const scratch = callScratch;
    callScratch = undefined;
    let result: unknown;
    try {
      result = callWith(e.fn, e.params);
    } catch (err) {
      scratch?._release();
      return writeError(err);
    }
    return settle(e, result, scratch, api, ctx);
  } catch (err) {
    return writeError(err);
  }
}

/** What a handler returned, as the call's status (its future, its state). */
function settle(
  e: Entry,
  result: unknown,
  scratch: ScratchAllocator | undefined,
  api: number,
  ctx: number,
): number {
  if (result !== undefined && (result instanceof Future || isThenable(result))) {
    const token = lib!.xla_ffi_deno_handler_token_alloc();
    if (token === 0) {
      scratch?._release();
      return writeError(
        new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Too many pending TS handler futures"),
        true,
      );
    }
    // A pending future is a call still running: the process waits for it
    // (held before the callbacks are attached: an already complete future runs them at once).
    _holdLoop(1);
    const use = tokenUses[token] = nextUse = (nextUse + 1) >>> 0 || 1;
    try {
      if (result instanceof Future) {
        result.onReady((err) => finish(token, use, scratch, err !== undefined, err));
      } else {
        result.then(
          () => finish(token, use, scratch, false, undefined),
          (err: unknown) => finish(token, use, scratch, true, err),
        );
      }
    } catch (err) {
      // `then` threw: the future completes with that (the native side keeps an early completion).
      finish(token, use, scratch, true, err);
    }
    flatI32[4] = token;
    return 2;
  }
  scratch?._release();
  if (e.stage !== ExecutionStage.EXECUTE && result !== undefined) {
    return setState(api, ctx, result, e.stage);
  }
  return 0;
}

let phaseStop = 0;

/**
 * @internal benchmarks only: calls on the JS thread stop after a phase and
 * return success (bench/handler_speed.ts prints the breakdown). 0: never; 1:
 * after the C entry's own checks; 2: after the frame check and flatten; 3: on
 * entering JS; 4: after the operand counts are checked; 5: after every
 * operand is decoded (the handler is not called). Returns the previous phase.
 */
export function _phaseStop(phase: number): number {
  const previous = phaseStop;
  phaseStop = phase;
  _lib().xla_ffi_deno_handler_phase_stop(phase);
  return previous;
}

/**
 * @internal benchmarks only: with false, every value a handler gets is made
 * fresh, as when every call's frame differs (measures what reuse saves).
 */
export function _setReuse(on: boolean): void {
  _setFastReuse(on);
  for (const e of entries) {
    if (e === undefined) continue;
    e.run = undefined;
    e.runNoCall = undefined;
  }
}

/** dispatch() stopped after phase `phaseStop` (no handler call). */
function dispatchPhase(slot: number): number {
  const e = entries[slot];
  if (phaseStop <= 3 || e === undefined) return 0;
  try {
    if (phaseStop === 4) {
      const i32 = flatI32;
      const nargs = i32[H_NARGS]!, nrets = i32[H_NRETS]!, nattrs = i32[H_NATTRS]!;
      return nargs >= e.minArgs && nargs <= e.maxArgs && nrets >= e.minRets &&
          nrets <= e.maxRets && nattrs >= e.minAttrs && nattrs <= e.maxAttrs
        ? 0
        : 1;
    }
    const run = e.runNoCall === undefined
      ? e.runNoCall = compileDecoder(e, false) ?? null
      : e.runNoCall;
    if (run !== null && run() !== MISMATCH) return 0;
    const failure = decode(e);
    dropScratch();
    return failure === undefined ? 0 : writeError(new FfiError(ErrorCode.INTERNAL, failure), true);
  } catch (err) {
    return writeError(err);
  }
}

function setState(api: number, ctx: number, state: unknown, stage: ExecutionStage): number {
  drainDeadStates();
  const key = nextStateKey++;
  states.set(key, state);
  if (lib!.xla_ffi_deno_ctx_state_set(api, ctx, key, stage) !== 0) {
    states.delete(key);
    return writeError(
      new FfiError(ErrorCode.INTERNAL, `Failed to set state: ${_auxMessage()}`),
      true,
    );
  }
  return 0;
}

function drainDeadStates(): void {
  const l = lib!;
  for (;;) {
    const key = l.xla_ffi_deno_handler_dead_state();
    if (key < 0) return;
    states.delete(key);
  }
}

/**
 * Per token: which use of it waits for its handler's Promise (0: none). A
 * callback of an earlier use (a thenable calling back late) finds another
 * number and does nothing.
 */
const tokenUses = new Uint32Array(65536);
let nextUse = 0;

/**
 * Completes use `use` of `token` once, whatever the future or thenable does
 * (calls both callbacks, one twice, or throws after calling one): later
 * calls do nothing.
 */
function finish(
  token: number,
  use: number,
  scratch: ScratchAllocator | undefined,
  failed: boolean,
  error: unknown,
): void {
  if (tokenUses[token] !== use) return;
  tokenUses[token] = 0;
  scratch?._release();
  complete(token, failed, error);
}

/**
 * Completes future `token`, with the handler's failure when `failed` (any
 * value, `undefined` too); failures to complete are reported loudly. Never
 * throws: it runs in Promise reactions, where a throw would end the process.
 */
function complete(token: number, failed: boolean, error: unknown): void {
  _holdLoop(-1);
  let code = 0;
  let written = 0;
  if (failed) {
    const fe = _handlerFailure(error);
    code = _errorCode(fe.code);
    try {
      written = encoder.encodeInto(fe.message, completeBytes.subarray(0, completeBytes.length - 1))
        .written;
      _recordOrigin(decoder.decode(completeBytes.subarray(0, written)), error);
    } catch { /* an empty message */ }
  }
  const rc = lib!.xla_ffi_deno_handler_complete(token, code, completeBytes, written);
  // rc -2: the native side counted it and printed "Failed to signal XLA_FFI_Future
  // completion: <runtime message>" on stderr (it does so for every thread).
  if (rc === -1) {
    failedCompletions++;
    console.error(`deno-xla-ffi: completion of an unknown TS handler future (token ${token})`);
  }
}

/** @internal claims a slot for a compiled binding; returns the slot index. */
export function _acquire(
  entry: Entry,
  version: readonly [number, number],
  traits: number,
  isAsync: boolean,
): number {
  const l = _lib();
  if (liveHandlers === 0) host(l);
  const slot = l.xla_ffi_deno_handler_slot_acquire(
    entry.stage,
    version[0],
    version[1],
    traits >>> 0,
    isAsync ? 1 : 0,
  );
  if (slot < 0) {
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `All ${l.xla_ffi_deno_handler_slot_count()} TS handler entry points are in use; ` +
        `close handlers you no longer need`,
    );
  }
  entries[slot] = entry;
  liveHandlers++;
  return slot;
}

/** @internal releases a slot (calls into it afterwards return an error). */
export function _release(slot: number): void {
  if (entries[slot] === undefined) return;
  lib!.xla_ffi_deno_handler_slot_release(slot);
  entries[slot] = undefined;
  liveHandlers--;
}

/** Slots a registration by name pinned (never reused; see `_pin`). */
const pinnedSlots = new Set<number>();

/**
 * @internal A runtime (embedded or XLA) registered `pointer` by name: when
 * it is a TS entry point, its slot is never handed to another handler, and
 * a Handler collected without close() keeps serving the name.
 */
export function _pin(pointer: Deno.PointerObject): void {
  const slot = native().xla_ffi_deno_handler_pin(pointer);
  if (slot >= 0) pinnedSlots.add(slot);
}

/**
 * @internal Reclaims the slot of a Handler collected without close(),
 * unless a registration by name still calls it (that lasts as long as the
 * process, as in XLA).
 */
export function _reclaimSlot(slot: number): void {
  if (!pinnedSlots.has(slot)) _release(slot);
}

/** @internal the C entry point of a slot. */
export function _slotPointer(slot: number): Deno.PointerObject {
  return _lib().xla_ffi_deno_handler_slot_pointer(slot)!;
}

/**
 * Statistics of the handler host: live handlers, TS states held for the
 * runtime, future completions that failed (each also reported on stderr),
 * calls served from other threads and the wake-ups of the JS thread they
 * needed, and entry points kept out of reuse because a runtime registered
 * them by name (`registeredEntryPoints`).
 *
 * @example
 * ```ts ignore
 * import { handlerHostStats } from "@deno-xla/ffi";
 * console.log(handlerHostStats().liveHandlers);
 * ```
 */
export function handlerHostStats(): {
  liveHandlers: number;
  liveStates: number;
  failedCompletions: number;
  foreignCalls: number;
  wakeups: number;
  registeredEntryPoints: number;
} {
  const foreign = new Float64Array(2);
  if (lib !== undefined) {
    drainDeadStates();
    lib.xla_ffi_deno_handler_foreign_stats(foreign);
  }
  // Process-wide, also before this module hosts a handler.
  const nativeFailed = Number(native().xla_ffi_deno_handler_failed_completions());
  return {
    liveHandlers,
    liveStates: states.size,
    failedCompletions: failedCompletions + nativeFailed,
    foreignCalls: foreign[0]!,
    wakeups: foreign[1]!,
    registeredEntryPoints: native().xla_ffi_deno_handler_pinned_count(),
  };
}
