/**
 * The JavaScript side of the TS handler entry points: the shared flat
 * buffer, the two callbacks the C slots call (inline on the JS thread, and a
 * thread-safe one for calls from other threads), the decoder with ffi.h's
 * checks and messages, and completion of futures.
 *
 * @module
 */
import { ErrorCode, ExecutionStage, stageName } from "../abi/enums.ts";
import { FfiError, toFfiError } from "../errors.ts";
import { Future } from "../future.ts";
import { type Native, native } from "../native/lib.ts";
import {
  attrRecordValue,
  type AttrSpec,
  DecodeFailure,
  readName,
  recordOffsets,
} from "./_attrs.ts";
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

const FLAT_SLOTS = 1 << 15; // 256 KiB
const HEADER = 32; // byte offset of the frame part (after the result area)
const RECORDS = 80;
const DRAIN_BUDGET = 4096; // foreign calls served per wake-up of the JS thread

let lib: Native | undefined;
let flatBuffer: ArrayBuffer;
let dv: DataView;
let msgBytes: Uint8Array;
let aux: ArrayBuffer;
let auxDv: DataView;
let completeBytes: Uint8Array;
let inlineCb: Deno.UnsafeCallback<{ readonly parameters: ["i32"]; readonly result: "i32" }>;
let threadCb: Deno.UnsafeCallback<{ readonly parameters: []; readonly result: "i32" }>;
const encoder = new TextEncoder();
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
  flatBuffer = new ArrayBuffer(FLAT_SLOTS * 8);
  dv = new DataView(flatBuffer);
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
      // Linger for more calls only while no Promise settles in this batch: its
      // completion runs after this callback returns.
      if (draining) {
        draining = false;
        _holdLoop(-1);
      }
      let linger = 1;
      for (let n = 0; n < DRAIN_BUDGET; n++) {
        const slot = l.xla_ffi_deno_handler_next_job(linger);
        if (slot < 0) return 0;
        const status = dispatch(slot);
        if (status === 2) linger = 0;
        l.xla_ffi_deno_handler_job_done(status);
      }
      // The drainer calls again at once for the calls still queued: keep the loop alive till then.
      draining = true;
      _holdLoop(1);
      return 1;
    },
  );
  // Not ref'ed: open handlers alone do not keep the process alive (see _holdLoop).
  threadCb.unref();
  flatSlots = new BigInt64Array(flatBuffer);
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

let flatSlots: BigInt64Array;
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
    flatSlots,
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

/** Writes an error result; returns status 1. Never throws. */
function writeError(e: unknown): number {
  let code = ErrorCode.UNKNOWN;
  let message = "unknown error";
  try {
    const fe = toFfiError(e);
    code = fe.code === ErrorCode.OK ? ErrorCode.UNKNOWN : fe.code;
    message = fe.message;
  } catch { /* keep the defaults */ }
  const { written } = encoder.encodeInto(message, msgBytes.subarray(0, msgBytes.length - 1));
  dv.setInt32(0, code, true);
  dv.setInt32(8, written, true);
  return 1;
}

/** Per-call state the decoder fills for the dispatcher. */
class CallState {
  api = 0;
  ctx = 0;
  stage = 0;
  scratch: ScratchAllocator | undefined;
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
  }

  /** Arity message or undefined (ffi.h §7.3 order: args, results, attributes). */
  arity(nargs: number, nrets: number, nattrs: number, attrStart: number): string | undefined {
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
        const names = recordOffsets(dv, attrStart, nattrs).map((o) => readName(dv, o));
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
  const len = dv.getInt32(o + 8, true);
  const n = Math.min(len, name.length);
  for (let j = 0; j < n; j++) {
    const d = dv.getUint8(o + 16 + j) - name[j]!;
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
      (unexpected ??= []).push(readName(dv, attrOff[i++]!));
    }
  }
  while (i < nattrs) (unexpected ??= []).push(readName(dv, attrOff[i++]!));
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

function scanBuffers(o: number, n: number, out: number[]): number {
  for (let i = 0; i < n; i++) {
    out[i] = o;
    const rank = dv.getInt32(o + 16, true);
    o += 24 + 8 * (rank > 0 ? rank : 0);
  }
  return o;
}

function ctxHelperFailure(what: string): DecodeFailure {
  return new DecodeFailure(`Failed to get ${what} from execution context: ${_auxMessage()}`);
}

/** Decodes the flat frame for `e`; returns params, or a failure message. */
function decode(e: Entry, call: CallState): unknown[] | string {
  const l = lib!;
  call.stage = dv.getInt32(HEADER, true);
  call.api = dv.getFloat64(HEADER + 8, true);
  call.ctx = dv.getFloat64(HEADER + 16, true);
  const nargs = dv.getInt32(HEADER + 24, true);
  const nrets = dv.getInt32(HEADER + 32, true);
  const nattrs = dv.getInt32(HEADER + 40, true);
  const retStart = scanBuffers(RECORDS, nargs, argOff);
  const attrStart = scanBuffers(retStart, nrets, retOff);
  const arity = e.arity(nargs, nrets, nattrs, attrStart);
  if (arity !== undefined) return e.arityPrefix + arity;
  let attrEnd = attrStart;
  for (let i = 0; i < nattrs; i++) {
    attrOff[i] = attrEnd;
    attrEnd += dv.getInt32(attrEnd + 4, true) * 8;
  }
  if (e.attrOptional !== undefined) {
    const unexpected = matchAttrs(e, nattrs);
    if (unexpected !== undefined) return e.arityPrefix + unexpected;
  }
  const ops = e.ops;
  const params = new Array(ops.length);
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
        const start = from < n ? offs[from]! : (isArg ? retStart : attrStart);
        const end = isArg ? retStart : attrStart;
        const copy = new DataView(flatBuffer.slice(start, end));
        const rel = new Array<number>(Math.max(0, n - from));
        for (let j = from; j < n; j++) rel[j - from] = offs[j]! - start;
        value = new RemainingBuffers(copy, rel, isArg ? "argument" : "result");
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
        const copy = new DataView(flatBuffer.slice(attrStart, attrEnd));
        value = new Dictionary(copy, recordOffsets(copy, 0, nattrs));
        break;
      }
      case "ctx":
        switch (op.what) {
          case "runId":
            value = l.xla_ffi_deno_ctx_run_id(call.api, call.ctx) === 0
              ? _auxValue()
              : ctxHelperFailure("run id");
            break;
          case "deviceOrdinal":
            value = l.xla_ffi_deno_ctx_device_ordinal(call.api, call.ctx) === 0
              ? _auxValue()
              : ctxHelperFailure("device ordinal");
            break;
          case "stream":
            value = l.xla_ffi_deno_ctx_stream(call.api, call.ctx) === 0
              ? _auxValue()
              : new DecodeFailure(`Failed to get platform stream: ${_auxMessage()}`);
            break;
          case "api":
            value = call.api;
            break;
          case "executionContext":
            value = call.ctx;
            break;
          case "stage":
            value = call.stage;
            break;
          case "scratch":
            value = call.scratch = new ScratchAllocator(call.api, call.ctx);
            break;
          case "threadPool":
            value = new ThreadPool(call.api, call.ctx);
            break;
        }
        break;
      case "userData":
        value = l.xla_ffi_deno_ctx_user_data(call.api, call.ctx, op.typeId) === 0
          ? _auxValue()
          : ctxHelperFailure("user data");
        break;
      case "state": {
        if (l.xla_ffi_deno_ctx_state_get(call.api, call.ctx, op.stage) !== 0) {
          value = ctxHelperFailure("state");
        } else {
          const key = _auxValue();
          value = states.has(key)
            ? states.get(key)
            : new DecodeFailure("Failed to get state from execution context: State is not set");
        }
        break;
      }
    }
    if (value instanceof DecodeFailure) {
      (bad ??= []).push(i);
      diags += value.message;
    } else {
      params[i] = value;
    }
  }
  if (bad !== undefined) {
    call.scratch?._release();
    return `${e.decodePrefix}Failed to decode all FFI handler operands (bad operands at: ${
      bad.join(", ")
    })` + (diags.length > 0 ? `\nDiagnostics:\n${diags}` : "");
  }
  return params;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === "object" || typeof v === "function") &&
    typeof (v as { then?: unknown }).then === "function";
}

/** Runs slot `slot` on the flattened frame; returns 0 ok, 1 error, 2 pending. Never throws. */
function dispatch(slot: number): number {
  try {
    const e = entries[slot];
    if (e === undefined) {
      return writeError(
        new FfiError(ErrorCode.FAILED_PRECONDITION, `TS handler entry point ${slot} was released`),
      );
    }
    const call = new CallState();
    const params = decode(e, call);
    if (typeof params === "string") {
      return writeError(new FfiError(ErrorCode.INVALID_ARGUMENT, params));
    }
    let result: unknown;
    try {
      result = e.fn(...params);
    } catch (err) {
      call.scratch?._release();
      return writeError(err);
    }
    if (result instanceof Future || isThenable(result)) {
      const token = lib!.xla_ffi_deno_handler_token_alloc();
      if (token === 0) {
        call.scratch?._release();
        return writeError(
          new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Too many pending TS handler futures"),
        );
      }
      const scratch = call.scratch;
      // A pending future is a call still running: the process waits for it.
      _holdLoop(1);
      if (result instanceof Future) {
        result.onReady((err) => {
          scratch?._release();
          complete(token, err);
        });
      } else {
        result.then(
          () => {
            scratch?._release();
            complete(token, undefined);
          },
          (err) => {
            scratch?._release();
            complete(token, err ?? new Error("rejected"));
          },
        );
      }
      dv.setInt32(16, token, true);
      return 2;
    }
    call.scratch?._release();
    if (e.stage !== ExecutionStage.EXECUTE && result !== undefined) {
      return setState(call, result, e.stage);
    }
    return 0;
  } catch (err) {
    return writeError(err);
  }
}

function setState(call: CallState, state: unknown, stage: ExecutionStage): number {
  drainDeadStates();
  const key = nextStateKey++;
  states.set(key, state);
  if (lib!.xla_ffi_deno_ctx_state_set(call.api, call.ctx, key, stage) !== 0) {
    states.delete(key);
    return writeError(new FfiError(ErrorCode.INTERNAL, `Failed to set state: ${_auxMessage()}`));
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

/** Completes future `token`; failures are reported loudly. */
function complete(token: number, error: unknown): void {
  _holdLoop(-1);
  let code = 0;
  let written = 0;
  if (error !== undefined) {
    const fe = toFfiError(error);
    code = fe.code === ErrorCode.OK ? ErrorCode.UNKNOWN : fe.code;
    written = encoder.encodeInto(fe.message, completeBytes.subarray(0, completeBytes.length - 1))
      .written;
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
