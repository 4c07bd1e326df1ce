/**
 * Result staging: a TS handler writes a small result into storage its
 * binding keeps at a fixed address, and the host copies it into the result's
 * buffer when the handler is done (it returned or threw; and when a Promise
 * it returned settles).
 *
 * XLA has no counterpart: its `ffi.h` hands a C++ handler the buffer's own
 * address (`AnyBuffer::untyped_data()` and `Buffer<dtype>::typed_data()`
 * return the `XLA_FFI_Buffer`'s `data`), which costs a C++ handler nothing
 * to use. Staging is this binding's, and what reaches the buffer is what the
 * handler wrote, as in XLA.
 *
 * Why: a view of a new address is the dearest part of a TS handler's call.
 * XLA hands a handler run on the JS thread a new output address nearly every
 * call (the allocator it shares with V8 there), and each view of external
 * memory costs V8 a backing store record on that heap, allocated and later
 * swept: 0.7–1.1 µs per call in a jax loop, where the whole handler costs
 * 1 µs more than a C++ one (docs/performance.md). Storage at a fixed address
 * gets one view for the binding's life, and one decoded FfiBuffer.
 *
 * What the handler sees is a result buffer like any other, but for its
 * address: its `data` is the storage's (through which native code may write
 * it too), which holds the buffer's bytes when the handler starts, and what
 * it holds when the handler is done, failed or not, is copied into the
 * buffer. A result is staged only where that is exactly what writing the
 * buffer itself would do, and where views cost most:
 * - a call made on the JS thread (XLA run by `runSync`/`runPythonSync`, the
 *   embedded runtime's `callSync`, `call`, `ffiCall`), whose buffers come
 *   from the allocator V8 uses too; calls from other threads (XLA's own, the
 *   runtime's pool) bring a few addresses again and again, whose views the
 *   view table of `FfiBuffer.typed()` keeps;
 * - a buffer address other than the operand's last call's (the same address
 *   again finds its FfiBuffer and view as they were: nothing to save);
 * - host memory: while no GPU runtime is loaded in the process, every buffer
 *   is host memory (native/handler_flatten.c checks as it copies the buffer
 *   in), and while the CUDA bindings (whose driver may be any library) are
 *   not initialised;
 * - whole-byte elements and 1 to {@link STAGE_BYTES} bytes (copying more in
 *   and out costs more than the view saves);
 * - no other operand overlapping it (an output aliased to an input, a frame
 *   built with one array twice; checked on the C side too): the handler
 *   reads and writes the buffer itself;
 * - not in the embedded runtime's guard memory, whose canaries must see a
 *   write past the buffer's end;
 * - the operand's storage not in use by another call still running (a
 *   handler calling its own binding): that call gets the buffer itself;
 * - a binding that is not async: an async handler writes its results after
 *   it returned, while other calls may write the same buffer (a frame shared
 *   by calls on many threads of the embedded runtime), and a copy when it is
 *   done would overwrite their bytes. A synchronous binding whose handler
 *   returned a Promise has its results copied when it returns, and when the
 *   Promise settles the bytes it wrote since (native/handler_future.c:
 *   merge_results).
 * The complete decoder and remaining results (`RemainingRets`) never stage.
 *
 * @module
 */
import { flatF64, flatI32, H_STAGED_FROM, H_STAGED_TO } from "./_flat.ts";
import { _deviceMemoryCheck } from "./_device_memory.ts";
import { _lib } from "./host.ts";

/** The largest result staged, in bytes. */
export const STAGE_BYTES = 4096;
/** Staged results pending at once, over nested and pending async calls. */
const MAX_PENDING = 256;

/** An operand that may stage its result (an OpPlan of _fast.ts). */
export interface StageHolder {
  /** Never staged: an operand of an async binding. */
  noStage: boolean;
  /**
   * Its storage, allocated on first use: {@link STAGE_BYTES} for the handler,
   * then as many for the copy a call that returned a Promise keeps. Never
   * handed out (a view of it could be transferred).
   */
  stageMem: Uint8Array | undefined;
  /** The storage's address. */
  stageAt: number;
  /** A call that has not finished holds the storage. */
  staged: boolean;
  /** The buffer address of the operand's last call. */
  lastReal: number;
}

/**
 * The pending copies, three doubles each (destination, source, bytes), in
 * the order they were staged: a call's copies follow those of the calls it
 * runs inside.
 */
export const pendingList: Float64Array = new Float64Array(3 * MAX_PENDING);
/** {@link pendingList}'s bytes: what native calls take (a Uint8Array keeps Deno's fast call). */
export const pendingBytes: Uint8Array = new Uint8Array(pendingList.buffer);
const pendingHolders: (StageHolder | undefined)[] = new Array(MAX_PENDING);
let pending = 0;

/** The JS thread serves calls from other threads now (host.ts serve): nothing is staged. */
let servingForeign = false;

/** @internal host.ts: the JS thread starts (true) or stops serving calls from other threads. */
export function _servingForeign(on: boolean): void {
  servingForeign = on;
}

/** How many copies are pending: what a call compares with when it ends. */
export function stagedCount(): number {
  return pending;
}

/**
 * The address a result's FfiBuffer is given: the holder's storage, holding
 * the buffer's bytes, with the copy back into the buffer at record `r`
 * pending; or the buffer's own address where staging does not apply (see the
 * module). `width`: the dtype's whole-byte width (0: never staged).
 */
export function stage(p: StageHolder, r: number, width: number): number {
  const f64 = flatF64, i32 = flatI32;
  const real = f64[(r + 2) >> 1]!;
  // The address of the operand's last call again: its FfiBuffer and view are reused as they are.
  const again = real === p.lastReal;
  p.lastReal = real;
  if (
    again || p.staged || p.noStage || servingForeign || width === 0 || real === 0 ||
    _deviceMemoryCheck !== undefined || pending === MAX_PENDING
  ) {
    return real;
  }
  const rank = i32[r + 4]!, d0 = (r + 6) >> 1;
  let bytes = width;
  for (let d = 0; d < rank; d++) bytes *= f64[d0 + d]!;
  if (bytes === 0 || bytes > STAGE_BYTES || (guardMemory.size !== 0 && inGuardMemory(real))) {
    return real;
  }
  if (p.stageMem === undefined) {
    p.stageMem = new Uint8Array(2 * STAGE_BYTES);
    p.stageAt = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(p.stageMem)));
  }
  const k = pending, e = 3 * k;
  pendingList[e] = real;
  pendingList[e + 1] = p.stageAt;
  pendingList[e + 2] = bytes;
  // Copies the buffer in; 0: device memory possible, or another operand overlaps it.
  if (_lib().xla_ffi_deno_handler_stage_result(pendingBytes, k, r) === 0) return real;
  pending = k + 1;
  pendingHolders[k] = p;
  p.staged = true;
  return p.stageAt;
}

/** Live guard memory (src/runtime/_guard.ts): its first byte → its end. */
const guardMemory = new Map<number, number>();

/**
 * @internal the runtime's guard memory, mapped (`on`) or unmapped: a result
 * there is never staged, so that a write past its end (through its address)
 * reaches the guard's canaries, as it would without staging.
 */
export function _guardMemory(at: number, bytes: number, on: boolean): void {
  if (on) guardMemory.set(at, at + bytes);
  else guardMemory.delete(at);
}

function inGuardMemory(a: number): boolean {
  for (const [from, to] of guardMemory) if (a >= from && a < to) return true;
  return false;
}

/**
 * Hands the copies pending from `base` to the C side, which makes them when
 * the call returns to it (native/handler_flatten.c: host_copy_staged), and
 * frees their storage (no JS runs before the copies).
 */
export function handStaged(base: number): void {
  if (pending === base) return;
  flatI32[H_STAGED_FROM] = base;
  flatI32[H_STAGED_TO] = pending;
  dropStaged(base);
}

/** Frees the storage of the copies pending from `base` and drops them (nothing is copied). */
export function dropStaged(base: number): void {
  for (let k = base; k < pending; k++) {
    pendingHolders[k]!.staged = false;
    pendingHolders[k] = undefined;
  }
  pending = base;
}

/**
 * The copies pending from `base` of a call whose handler returned a Promise:
 * made at once (the handler's writes so far), with a copy of each storage
 * kept beside it, and taken out of the pending list; their storage stays
 * held until {@link StagedCopies.settle}.
 */
export class StagedCopies {
  readonly #list: Float64Array;
  readonly #holders: StageHolder[];

  constructor(base: number) {
    _lib().xla_ffi_deno_handler_copy_results(pendingList, base, pending, 1);
    this.#list = pendingList.slice(3 * base, 3 * pending);
    this.#holders = pendingHolders.slice(base, pending) as StageHolder[];
    pendingHolders.fill(undefined, base, pending);
    pending = base;
  }

  /**
   * The call completed (its future `token`; 0: none was made): copies the
   * bytes the handler wrote since it returned, while the call is live
   * (native/handler_future.c: merge_results), and frees the storage.
   */
  settle(token: number): void {
    if (token !== 0) {
      _lib().xla_ffi_deno_handler_merge_results(token, this.#list, this.#list.length / 3);
    }
    for (const h of this.#holders) h.staged = false;
  }
}
