/**
 * Guarded buffers in the caller's process: every operand of a guarded frame
 * (argument and result) is backed by a shadow in guard memory of its own (an
 * anonymous mapping, away from the allocator's heap), between a canary zone
 * before its first byte and one after its last. Results' data is copied in
 * before each call and out after it; arguments' data is copied in and the
 * shadow compared with the caller's data after the call. An argument that is
 * the same memory as a result (an alias) shares that result's shadow: the
 * handler sees one address, and writes to it are the result's. No
 * inaccessible page is used next to an operand: a write into one would end
 * the caller's process (see docs/faults.md). After a guarded call, the
 * guard's findings win over the handler's own error. Private to the runtime.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";
import { _takeError } from "./_native_error.ts";
import type { HandlerTarget } from "./runtime.ts";

/** Canary bytes before each operand's shadow and after it (plus its alignment slack). */
export const _GUARD_ZONE = 4096;
/** Alignment of each operand's shadow. */
const ALIGN = 64;
/** The canary pattern repeats every this many bytes. */
const PERIOD = 256;

/** Byte `i` of a canary zone: a pattern a handler is unlikely to write by chance. */
export function _canaryByte(i: number): number {
  return (0xcb + i * 37) & 0xff;
}

/** One period of the canary pattern (native/runtime_guard.c checks the same bytes). */
const PATTERN = Uint8Array.from({ length: PERIOD }, (_, i) => _canaryByte(i));

/** The canary pattern from byte 0, grown as callers need (see {@link _fillCanaries}). */
let canaries = new Uint8Array(0);
let canaryWords = new Int32Array(0);

function canaryPattern(n: number): Uint8Array {
  if (canaries.length < n) {
    const len = (Math.max(n, 4096) + 3) & ~3;
    canaries = Uint8Array.from({ length: len }, (_, i) => _canaryByte(i));
    canaryWords = new Int32Array(canaries.buffer);
  }
  return canaries;
}

/** Writes canary bytes 0, 1, ... into `mem[from, to)`. */
export function _fillCanaries(mem: Uint8Array, from: number, to: number): void {
  if (to > from) mem.set(canaryPattern(to - from).subarray(0, to - from), from);
}

/**
 * The first offset in `mem[from, to)` whose byte is not canary byte
 * `offset - from` (as {@link _fillCanaries} wrote it), or -1.
 */
export function _changedCanary(mem: Uint8Array, from: number, to: number): number {
  const n = to - from;
  if (n <= 0) return -1;
  const want = canaryPattern(n);
  let i = 0;
  if (((mem.byteOffset + from) & 3) === 0 && n >= 16) {
    const words = new Int32Array(mem.buffer, mem.byteOffset + from, n >>> 2);
    const w = canaryWords;
    let k = 0;
    while (k < words.length && words[k] === w[k]) k++;
    i = k << 2;
  }
  for (; i < n; i++) if (mem[from + i] !== want[i]) return from + i;
  return -1;
}

/** A buffer's current data, as bytes (a view over a typed array or native memory). */
export type _BytesOf = () => Uint8Array | null;

/** An operand of a guarded frame: its byte size, where its data is now and what memory that is. */
export interface _GuardOperand {
  size: number;
  bytes: _BytesOf;
  /**
   * The operand's memory now, for telling aliases: the backing object (an
   * ArrayBuffer) or native address, and the byte offset in it; null when
   * it has none.
   */
  region(): readonly [unknown, number] | null;
}

/** Guard memory no longer reachable: unmapped. */
const unmapped = new FinalizationRegistry<[Deno.PointerObject, number]>(([p, size]) => {
  native().xla_ffi_deno_runtime_guard_unmap(p, size);
});

/** The canary and copy checks of one guarded frame, run around every in-process call. */
export class _FrameGuard {
  readonly args: _GuardOperand[];
  readonly rets: _GuardOperand[];
  /** Offset of each argument's shadow in the guard memory. */
  readonly argAt: number[];
  /** Offset of each result's shadow in the guard memory. */
  readonly retAt: number[];
  /** Per argument: the result whose shadow it shares (an alias), or -1. */
  readonly aliasOf: number[];
  #ptr: Deno.PointerObject | null;
  #base: number;
  #size: number;
  #mem: Uint8Array<ArrayBuffer> | null;
  /** (offset, length) of every canary zone: before and after each result, then each argument. */
  #zones: Float64Array<ArrayBuffer>;
  #hit = new Float64Array(1);
  /** Each argument's own shadow, as a pointer (for the native comparison). */
  #argPtr: Deno.PointerObject[];

  constructor(args: _GuardOperand[], rets: _GuardOperand[]) {
    this.args = args;
    this.rets = rets;
    let off = 0;
    const place = (o: _GuardOperand) => {
      const at = off + _GUARD_ZONE;
      off = align(at + o.size) + _GUARD_ZONE;
      return at;
    };
    this.retAt = rets.map(place);
    this.argAt = args.map(place);
    this.aliasOf = args.map(() => -1);
    this.#size = Math.max(off, 8);
    checkFits(this.#size);
    const ptr = native().xla_ffi_deno_runtime_guard_map(this.#size);
    if (ptr === null) {
      throw new FfiError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `Cannot map ${this.#size} bytes of guard memory for a guarded frame`,
      );
    }
    this.#ptr = ptr;
    this.#base = Number(Deno.UnsafePointer.value(ptr));
    const mem = new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(ptr, this.#size));
    for (let k = 0; k < mem.length; k += PERIOD) {
      mem.set(PATTERN.subarray(0, Math.min(PERIOD, mem.length - k)), k);
    }
    this.#mem = mem;
    const zones: number[] = [];
    const zone = (at: number, size: number) =>
      zones.push(
        at - _GUARD_ZONE,
        _GUARD_ZONE,
        at + size,
        align(at + size) + _GUARD_ZONE - at - size,
      );
    rets.forEach((r, i) => zone(this.retAt[i]!, r.size));
    args.forEach((a, i) => zone(this.argAt[i]!, a.size));
    this.#zones = new Float64Array(zones);
    this.#argPtr = this.argAt.map((at) => Deno.UnsafePointer.create(BigInt(this.#base + at))!);
    unmapped.register(this, [ptr, this.#size], this);
  }

  /** The native address the frame gives the handler for operand `i` (kind 0: argument, 1: result). */
  address(kind: 0 | 1, i: number): number {
    if (kind === 1) return this.#base + this.retAt[i]!;
    const r = this.aliasOf[i]!;
    return this.#base + (r >= 0 ? this.retAt[r]! : this.argAt[i]!);
  }

  /**
   * Finds the arguments that are now the same memory as a result (and those
   * no longer so), and calls `setArg` with each changed argument's address.
   */
  relink(setArg: (i: number, address: number) => void): void {
    // Results by memory: backing object, then byte offset.
    const byRegion = new Map<unknown, Map<number, number>>();
    for (let j = this.rets.length - 1; j >= 0; j--) {
      const r = this.rets[j]!;
      const rr = r.size > 0 ? r.region() : null;
      if (rr === null) continue;
      let at = byRegion.get(rr[0]);
      if (at === undefined) byRegion.set(rr[0], at = new Map());
      at.set(rr[1], j);
    }
    const taken = new Set<number>();
    for (let i = 0; i < this.args.length; i++) {
      const a = this.args[i]!;
      const ra = byRegion.size > 0 && a.size > 0 ? a.region() : null;
      let alias = ra === null ? -1 : byRegion.get(ra[0])?.get(ra[1]) ?? -1;
      if (alias >= 0 && (this.rets[alias]!.size !== a.size || taken.has(alias))) alias = -1;
      if (alias >= 0) taken.add(alias);
      if (alias !== this.aliasOf[i]) {
        this.aliasOf[i] = alias;
        setArg(i, this.address(0, i));
      }
    }
  }

  #live(): Uint8Array<ArrayBuffer> {
    if (this.#mem === null) {
      throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The call frame is closed");
    }
    return this.#mem;
  }

  /** Before a call: results' and arguments' data into their shadows. */
  before(): void {
    const mem = this.#live();
    for (let i = 0; i < this.rets.length; i++) {
      const r = this.rets[i]!;
      const data = r.bytes();
      if (data !== null) mem.set(data.subarray(0, r.size), this.retAt[i]!);
    }
    for (let i = 0; i < this.args.length; i++) {
      if (this.aliasOf[i]! >= 0) continue; // its result's data is the same
      const a = this.args[i]!;
      const data = a.bytes();
      if (data !== null) mem.set(data.subarray(0, a.size), this.argAt[i]!);
    }
  }

  /**
   * After a call: checks the canaries before and after every operand and
   * compares arguments with the caller's data (FfiError DATA_LOSS naming
   * `handler`, the operand and the byte offset from its first byte), then
   * copies the results' shadows back to their buffers (also when a check
   * failed). Canaries a handler overwrote are made whole for the next call.
   */
  after(handler: string): void {
    const mem = this.#live();
    const sym = native();
    let fault: FfiError | undefined;
    const zones = this.#zones;
    const hit = sym.xla_ffi_deno_runtime_guard_check(this.#ptr, zones, zones.length / 2, this.#hit);
    if (hit >= 0) {
      const n = this.rets.length, o = hit >> 1;
      const kind = o < n ? 1 : 0, i = o < n ? o : o - n;
      const at = kind === 1 ? this.retAt[i]! : this.argAt[i]!;
      const size = kind === 1 ? this.rets[i]!.size : this.args[i]!.size;
      const how = (hit & 1) === 0 ? "a canary before it" : "a canary after the call";
      fault = _outOfBounds(handler, kind, i, this.#hit[0]! - at, size, how);
    }
    for (let i = 0; i < this.args.length; i++) {
      if (this.aliasOf[i]! >= 0) continue;
      const a = this.args[i]!;
      const data = a.bytes();
      if (data === null || a.size === 0) continue;
      const d = sym.xla_ffi_deno_runtime_guard_difference(this.#argPtr[i]!, data, a.size);
      if (d >= 0) {
        fault ??= _argWrite(handler, i, d, "a copy compared after the call");
        mem.set(data.subarray(0, a.size), this.argAt[i]!);
      }
    }
    for (let i = 0; i < this.rets.length; i++) {
      const r = this.rets[i]!;
      const data = r.bytes();
      if (data !== null) data.set(mem.subarray(this.retAt[i]!, this.retAt[i]! + r.size));
    }
    if (fault !== undefined) throw fault;
  }

  /** Unmaps the guard memory (the frame is closed). */
  close(): void {
    if (this.#ptr === null) return;
    unmapped.unregister(this);
    this.#mem = null;
    native().xla_ffi_deno_runtime_guard_unmap(this.#ptr, this.#size);
    this.#ptr = null;
  }
}

/** The largest guard mapping when the memory available cannot be read: 4 GiB. */
export const _MAX_GUARD_BYTES_UNKNOWN = 2 ** 32;

/**
 * The memory available now, in bytes, under `--allow-sys`
 * (`Deno.systemMemoryInfo`, asked without a prompt); undefined otherwise.
 */
function availableMemory(): number | undefined {
  try {
    const p = Deno.permissions;
    if (p.querySync({ name: "sys", kind: "systemMemoryInfo" }).state === "granted") {
      return Deno.systemMemoryInfo().available;
    }
  } catch {
    // No figures.
  }
  return undefined;
}

/**
 * Guard memory is written in full (canaries, then every operand's data), and
 * the results' data is copied back, so a frame needing more than the memory
 * available would not fail: the process would be killed once the pages are
 * touched (or spend minutes writing them). A mapping of 1 GiB or more fails
 * first, with RESOURCE_EXHAUSTED naming the bytes, when it and the operands'
 * own data need more than the memory available (read under `--allow-sys`),
 * or, where that cannot be read, when it is over
 * {@link _MAX_GUARD_BYTES_UNKNOWN}.
 */
function checkFits(bytes: number): void {
  if (bytes < 1 << 30) return;
  const available = availableMemory();
  if (available === undefined) {
    if (bytes <= _MAX_GUARD_BYTES_UNKNOWN) return;
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `Cannot map ${bytes} bytes of guard memory for a guarded frame: without --allow-sys ` +
        `(the memory available) a guarded frame maps at most ${_MAX_GUARD_BYTES_UNKNOWN} bytes`,
    );
  }
  // The results' own buffers are written too (their data comes back after the call).
  if (2 * bytes > available) {
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `Cannot map ${bytes} bytes of guard memory for a guarded frame: ` +
        `it and its operands' own data need twice that, and ${available} bytes of memory ` +
        `are available`,
    );
  }
}

/** `n` rounded up to {@link ALIGN}; exact for any safe integer (bit operators wrap at 2^31). */
function align(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}

/**
 * The error of a write outside operand `i` (kind 0: argument, 1: result) of
 * `size` bytes, at byte `offset` from its first byte: negative before it, at
 * least `size` past its end.
 */
export function _outOfBounds(
  handler: string,
  kind: 0 | 1,
  i: number,
  offset: number,
  size: number,
  how: string,
): FfiError {
  const what = kind === 0 ? "argument" : "result";
  if (offset < 0) {
    const n = -offset;
    return new FfiError(
      ErrorCode.DATA_LOSS,
      `Handler '${handler}' wrote before the start of ${what} ${i} at byte offset ${offset}, ` +
        `${n} byte${n === 1 ? "" : "s"} before its first byte ` +
        `(the ${what} has ${size} bytes; found by ${how})`,
    );
  }
  return new FfiError(
    ErrorCode.DATA_LOSS,
    `Handler '${handler}' wrote past the end of ${what} ${i} at byte offset ${offset} ` +
      `(the ${what} has ${size} bytes; found by ${how})`,
  );
}

/** The error of a write past the end of result `i`. */
export function _pastEnd(
  handler: string,
  i: number,
  offset: number,
  size: number,
  how: string,
): FfiError {
  return _outOfBounds(handler, 1, i, offset, size, how);
}

/** The error of a write into argument `i`. */
export function _argWrite(handler: string, i: number, offset: number, how: string): FfiError {
  return new FfiError(
    ErrorCode.DATA_LOSS,
    `Handler '${handler}' wrote into argument ${i} at byte offset ${offset} ` +
      `(arguments are read-only; found by ${how})`,
  );
}

/** A call target's name for messages: the handler's name or the registered name. */
function targetName(target: HandlerTarget): string {
  if (typeof target === "string") return target;
  if ("execute" in target) return target.execute?.name ?? "handler";
  return target.name ?? "handler";
}

/**
 * After a call with a guarded frame: the guard's checks; a fault found wins
 * over the handler's own error (`err`, then destroyed).
 */
export function _afterGuarded(
  guard: _FrameGuard,
  target: HandlerTarget,
  err: Deno.PointerObject | null,
): void {
  try {
    guard.after(targetName(target));
  } catch (e) {
    if (err !== null) _takeError(err);
    throw e;
  }
}
