/**
 * The complete decoder of a TS handler's flat frame: a binding's compiled
 * form (Entry), the arity and attribute-name checks with ffi.h's messages,
 * the fast decode's fallback, and the context operands (run id, stream,
 * scratch, user data, state) read through the context helpers.
 *
 * @module
 */
import { type ExecutionStage, stageName } from "../abi/enums.ts";
import { attrRecordValue, type AttrSpec, DecodeFailure, Dictionary, readName } from "./_attrs.ts";
import {
  attrPlan,
  bufferPlan,
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
  flatDv,
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
import { checkBufferRecord, readBufferRecord, RemainingBuffers } from "./buffer.ts";
import { ScratchAllocator, ThreadPool } from "./context.ts";
import { _auxMessage, _auxValue, _hostLib, _states } from "./_host_state.ts";

const encoder = new TextEncoder();

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

/** @internal takes the scratch allocator of the call just decoded (its caller releases it). */
export function _takeScratch(): ScratchAllocator | undefined {
  const s = callScratch;
  callScratch = undefined;
  return s;
}

/** @internal releases the scratch allocator of a call that will not run. */
export function dropScratch(): void {
  callScratch?._release();
  callScratch = undefined;
}

/**
 * Decodes the flat frame into `e.params`: the fast decode (_fast.ts) when the
 * frame decodes cleanly, else the complete decoder. Returns a failure message
 * or undefined.
 */
export function decode(e: Entry): string | undefined {
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
  const l = _hostLib();
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
      return _states.has(key)
        ? _states.get(key)
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
