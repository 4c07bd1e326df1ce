/**
 * The JavaScript side of the TS handler entry points: the shared flat
 * buffer, the two callbacks the C slots call (inline on the JS thread, and a
 * thread-safe one for calls from other threads), dispatch to the handler,
 * states, completion of futures and slots. The decoder with ffi.h's checks
 * and messages is in `_decode.ts`.
 *
 * @module
 */
import { ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { _errorCode, _handlerFailure, _recordOrigin, FfiError } from "../errors.ts";
import { Future } from "../future.ts";
import { _callback, type Native, native } from "../native/lib.ts";
import { _setFastReuse, compileDecoder, MISMATCH } from "./_fast.ts";
import {
  FLAT_SLOTS,
  flatF64,
  flatI32,
  flatI64,
  H_API,
  H_CODE,
  H_CTX,
  H_MSG_LEN,
  H_NARGS,
  H_NATTRS,
  H_NRETS,
  H_TOKEN,
  initFlat,
} from "./_flat.ts";
import { _takeScratch, decode, dropScratch, type Entry } from "./_decode.ts";
import { _auxMessage, _startHostState, _states } from "./_host_state.ts";
import type { ScratchAllocator } from "./context.ts";

export type { CtxKind, Op } from "./_decode.ts";
export { Entry } from "./_decode.ts";

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
/** The longest settle wait a binding may ask for (`HandlerOptions.settleWaitUs`), in ns. */
export const MAX_SETTLE_WAIT_NS = 1_000_000;

let lib: Native | undefined;
let msgBytes: Uint8Array;
let aux: ArrayBuffer;
let completeBytes: Uint8Array;
let inlineCb: Deno.UnsafeCallback<{ readonly parameters: ["i32"]; readonly result: "i32" }>;
let threadCb: Deno.UnsafeCallback<{ readonly parameters: []; readonly result: "i32" }>;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const entries: (Entry | undefined)[] = [];
let liveHandlers = 0;
let nextStateKey = 1;
let failedCompletions = 0;

/** @internal the native symbols, with the handler host initialised. */
export function _lib(): Native {
  if (lib === undefined) init();
  return lib!;
}

function init(): void {
  const l = native();
  const cap = l.xla_ffi_deno_handler_msg_cap();
  initFlat();
  msgBytes = new Uint8Array(cap);
  aux = new ArrayBuffer(cap);
  completeBytes = new Uint8Array(cap);
  inlineCb = _callback(
    { parameters: ["i32"], result: "i32" } as const,
    (slot: number) => inlineDispatch(slot),
  );
  threadCb = _callback(
    { parameters: [], result: "i32" } as const,
    () => {
      // Serve queued calls from other threads; yield to the event loop after a budget.
      if (draining) {
        draining = false;
        _holdLoop(-1);
      }
      if (serve(l)) return 0;
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
  _startHostState(l, aux);
  lib = l;
}

let auxBytes: Uint8Array;
let loopHolds = 0;
/** The thread-safe callback is ref'ed (holds the event loop). */
let loopRefd = false;
/** Completions running now ({@link complete}): the loop's ref is dropped when the last ends. */
let completing = 0;
let draining = false;
/** This thread serves queued calls now (the drainer, or a chain continuing it). */
let serving = false;
/** A handler's Promise or Future is being given its completion callbacks (inside its call). */
let attaching = false;

/**
 * Serves queued calls from other threads as the drainer: true when the queue
 * was found empty (the role ended), false after DRAIN_BUDGET calls (the role
 * is kept; the last call is completed). Once a Promise of this batch is
 * pending, linger less (LINGER_PENDING_NS; none while its caller waits for
 * it): its completion runs after this returns. One crossing per call:
 * next_job completes the previous call, then takes the next.
 */
function serve(l: Native): boolean {
  serving = true;
  try {
    let linger = LINGER_NS, status = -1;
    for (let n = 0; n < DRAIN_BUDGET; n++) {
      const slot = l.xla_ffi_deno_handler_next_job(status, linger);
      if (slot < 0) return true;
      status = dispatch(slot);
      if (status === 2) linger = LINGER_PENDING_NS;
    }
    l.xla_ffi_deno_handler_job_done(status);
    return false;
  } finally {
    serving = false;
  }
}

/**
 * A Promise reaction just completed a call from another thread (handed its
 * waiting caller the result, or completed its future): that caller, and
 * others in a loop, come back within microseconds, while the drainer that
 * served the call has returned (its Promise could settle only then) and a
 * fresh wake-up of the JS thread costs tens of microseconds. So this
 * reaction takes over as the drainer when none is active, lingering for the
 * next call as the drainer does. Never throws.
 */
function continueServing(): void {
  // Only from a Promise reaction: never inside a call (its frame still uses the flat buffer).
  if (serving || attaching) return;
  const l = lib!;
  let claimed = false;
  try {
    if (l.xla_ffi_deno_handler_drain_claim(1) !== 1) return;
    claimed = true;
    if (serve(l)) claimed = false; // the queue was empty: next_job ended the role
  } catch (err) {
    // dispatch never throws; a failure here would be the host's own.
    console.error("deno-xla-ffi: serving queued TS handler calls failed:", err);
  } finally {
    // After a budget of calls (or a failure): give the role back to the dispatcher.
    if (claimed) l.xla_ffi_deno_handler_drain_claim(0);
  }
}

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
  loopHolds += delta;
  if (loopHolds > 0) {
    if (!loopRefd) {
      loopRefd = true;
      threadCb.ref();
    }
  } else {
    loopHolds = 0;
    if (loopRefd && completing === 0) {
      loopRefd = false;
      threadCb.unref();
    }
  }
}

/**
 * Drops the loop's ref if nothing holds it, after a completion: inside one
 * (`completing`), the ref is kept, because the completion goes on to serve
 * the next call (continueServing), and an async handler called in a loop
 * holds the loop again at once; each ref and unref is an op (0.1 µs for the
 * pair), saved on every call that way.
 */
function releaseLoopIfIdle(): void {
  if (loopHolds === 0 && loopRefd && completing === 0) {
    loopRefd = false;
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
  flatI32[H_CODE] = _errorCode(fe.code);
  flatI32[H_MSG_LEN] = written;
  return 1;
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
    const scratch = _takeScratch();
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
    // A completion while attaching (a complete Future, a throwing `then`) runs inside this call.
    attaching = true;
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
    } finally {
      attaching = false;
    }
    flatI32[H_TOKEN] = token;
    return 2;
  }
  scratch?._release();
  if (e.stage !== ExecutionStage.EXECUTE && result !== undefined) {
    return setState(api, ctx, result, e.stage);
  }
  return 0;
}

/** What the inline callback runs: {@link dispatch}, or {@link dispatchPhase} while a benchmark stops calls after a phase. */
let inlineDispatch: (slot: number) => number = dispatch;
let phaseStop = 0;
/** The decoders without the handler call, per entry (benchmarks only: phase 5). */
let noCallDecoders = new WeakMap<Entry, (() => unknown) | null>();

/**
 * @internal benchmarks only: calls on the JS thread stop after a phase and
 * return success (bench/handler_speed.ts prints the breakdown). 0: never; 1:
 * after the C entry's own checks; 2: after the frame check and flatten; 3: on
 * entering JS; 4: after the operand counts are checked; 5: after every
 * operand is decoded (the handler is not called). Phases 1 and 2 need a
 * native library built with `-DXFD_PHASES` (FAILED_PRECONDITION otherwise);
 * the normal dispatch checks nothing of this. Returns the previous phase.
 */
export function _phaseStop(phase: number): number {
  if (_lib().xla_ffi_deno_handler_phase_stop(phase) < 0 && (phase === 1 || phase === 2)) {
    throw new FfiError(
      ErrorCode.FAILED_PRECONDITION,
      `phase ${phase} stops in C: the native library was built without -DXFD_PHASES`,
    );
  }
  const previous = phaseStop;
  phaseStop = phase;
  inlineDispatch = phase === 0 ? dispatch : dispatchPhase;
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
  }
  noCallDecoders = new WeakMap();
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
    let run = noCallDecoders.get(e);
    if (run === undefined) noCallDecoders.set(e, run = compileDecoder(e, false) ?? null);
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
  _states.set(key, state);
  if (lib!.xla_ffi_deno_ctx_state_set(api, ctx, key, stage) !== 0) {
    _states.delete(key);
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
    _states.delete(key);
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
  completing++;
  try {
    completeHeld(token, failed, error);
  } finally {
    completing--;
    releaseLoopIfIdle();
  }
}

/** {@link complete}, with the loop's ref kept until it returns. */
function completeHeld(token: number, failed: boolean, error: unknown): void {
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
  // 3: a foreign call's result; 1: kept for a foreign caller still registering its future.
  if (rc === 3 || rc === 1) continueServing();
  else if (rc === -1) {
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
  settleWaitNs = 0,
  followCaller = false,
): number {
  const l = _lib();
  if (liveHandlers === 0) host(l);
  const slot = l.xla_ffi_deno_handler_slot_acquire(
    entry.stage,
    version[0],
    version[1],
    traits >>> 0,
    // Bit 0: async; bits 1-29: how long a foreign caller waits for the Promise
    // (ns); bit 30: report at most the calling runtime's version.
    (Math.max(0, Math.min(settleWaitNs | 0, MAX_SETTLE_WAIT_NS)) * 2) | (isAsync ? 1 : 0) |
      (followCaller ? 1 << 30 : 0),
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
 * needed, async calls from other threads whose Promise settled while the
 * caller waited (`settledEarly`: it got an available future), moves of the
 * JS thread off the CPU of the one thread calling it, where the scheduler
 * had put both (`cpuMoves`), the times it stayed there because more threads
 * than CPUs were runnable (`cpuMovesDeclined`: it leaves only for an idle
 * CPU), and entry points kept out of reuse because a runtime registered them
 * by name (`registeredEntryPoints`).
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
  settledEarly: number;
  cpuMoves: number;
  cpuMovesDeclined: number;
  registeredEntryPoints: number;
} {
  const foreign = new Float64Array(5);
  if (lib !== undefined) {
    drainDeadStates();
    lib.xla_ffi_deno_handler_foreign_stats(foreign);
  }
  // Process-wide, also before this module hosts a handler.
  const nativeFailed = Number(native().xla_ffi_deno_handler_failed_completions());
  return {
    liveHandlers,
    liveStates: _states.size,
    failedCompletions: failedCompletions + nativeFailed,
    foreignCalls: foreign[0]!,
    wakeups: foreign[1]!,
    settledEarly: foreign[2]!,
    cpuMoves: foreign[3]!,
    cpuMovesDeclined: foreign[4]!,
    registeredEntryPoints: native().xla_ffi_deno_handler_pinned_count(),
  };
}
