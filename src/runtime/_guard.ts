/**
 * Guarded buffers in the caller's process: each result of a guarded frame is
 * backed by a shadow followed by canary bytes, and each argument is compared
 * with a copy taken before the call. No inaccessible page is used here: a
 * write into one would end the caller's process (see docs/faults.md). After
 * a guarded call, the guard's findings win over the handler's own error.
 * Private to the runtime.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _takeError } from "./_native_error.ts";
import type { HandlerTarget } from "./runtime.ts";

/** Canary bytes after each result's shadow (and its alignment slack). */
export const _CANARY_BYTES = 64;
/** Alignment of each result's shadow. */
const ALIGN = 64;

/** Byte `i` of a canary zone: a pattern a handler is unlikely to write by chance. */
export function _canaryByte(i: number): number {
  return (0xcb + i * 37) & 0xff;
}

/** A buffer's current data, as bytes (a view over a typed array or native memory). */
export type _BytesOf = () => Uint8Array | null;

/** An operand of a guarded frame: its byte size and where its data is now. */
export interface _GuardOperand {
  size: number;
  bytes: _BytesOf;
}

/** The canary and copy checks of one guarded frame, run around every in-process call. */
export class _FrameGuard {
  /** Shadow memory of every result with the canary zones after them. */
  readonly shadow: Uint8Array<ArrayBuffer>;
  /** Offset of each result's shadow in {@link shadow}. */
  readonly offsets: number[];
  readonly args: _GuardOperand[];
  readonly rets: _GuardOperand[];
  #copies: (Uint8Array | null)[];

  constructor(args: _GuardOperand[], rets: _GuardOperand[]) {
    this.args = args;
    this.rets = rets;
    this.offsets = [];
    let off = 0;
    for (const r of rets) {
      this.offsets.push(off);
      off = (off + r.size + _CANARY_BYTES + ALIGN - 1) & ~(ALIGN - 1);
    }
    this.shadow = new Uint8Array(Math.max(off, 8));
    this.#copies = args.map(() => null);
  }

  /** The result's shadow (where the handler writes). */
  shadowOf(i: number): Uint8Array {
    const r = this.rets[i]!;
    return this.shadow.subarray(this.offsets[i]!, this.offsets[i]! + r.size);
  }

  /** Before a call: results' data into their shadows, fresh canaries, copies of the arguments. */
  before(): void {
    const s = this.shadow;
    for (let i = 0; i < this.rets.length; i++) {
      const r = this.rets[i]!;
      const start = this.offsets[i]!;
      const end = i + 1 < this.offsets.length ? this.offsets[i + 1]! : s.length;
      const data = r.bytes();
      if (data !== null) s.set(data.subarray(0, r.size), start);
      for (let k = start + r.size, j = 0; k < end; k++, j++) s[k] = _canaryByte(j);
    }
    for (let i = 0; i < this.args.length; i++) {
      const data = this.args[i]!.bytes();
      if (data === null) {
        this.#copies[i] = null;
        continue;
      }
      let copy = this.#copies[i];
      if (copy === null || copy === undefined || copy.length !== data.length) {
        copy = this.#copies[i] = new Uint8Array(data.length);
      }
      copy.set(data);
    }
  }

  /**
   * After a call: checks canaries and arguments (FfiError DATA_LOSS naming
   * `handler`, the operand and the byte offset), then copies the results'
   * shadows back to their buffers (also when a check failed).
   */
  after(handler: string): void {
    const s = this.shadow;
    let fault: FfiError | undefined;
    for (let i = 0; i < this.rets.length && fault === undefined; i++) {
      const r = this.rets[i]!;
      const start = this.offsets[i]! + r.size;
      const end = i + 1 < this.offsets.length ? this.offsets[i + 1]! : s.length;
      for (let k = start, j = 0; k < end; k++, j++) {
        if (s[k] !== _canaryByte(j)) {
          fault = _pastEnd(handler, i, r.size + j, r.size, "a canary after the call");
          break;
        }
      }
    }
    for (let i = 0; i < this.args.length && fault === undefined; i++) {
      const copy = this.#copies[i];
      const data = this.args[i]!.bytes();
      if (copy === null || copy === undefined || data === null) continue;
      const at = _firstDifference(copy, data);
      if (at >= 0) fault = _argWrite(handler, i, at, "a copy compared after the call");
    }
    for (let i = 0; i < this.rets.length; i++) {
      const data = this.rets[i]!.bytes();
      if (data !== null) data.set(this.shadowOf(i));
    }
    if (fault !== undefined) throw fault;
  }
}

/** The first byte offset where `a` and `b` differ, or -1. */
export function _firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  // Eight bytes at a time where both are aligned alike.
  if (n >= 64 && (a.byteOffset & 7) === 0 && (b.byteOffset & 7) === 0) {
    const w = n >>> 3;
    const a64 = new BigUint64Array(a.buffer, a.byteOffset, w);
    const b64 = new BigUint64Array(b.buffer, b.byteOffset, w);
    let k = 0;
    while (k < w && a64[k] === b64[k]) k++;
    i = k << 3;
  }
  for (; i < n; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** The error of a write past the end of result `i`. */
export function _pastEnd(
  handler: string,
  i: number,
  offset: number,
  size: number,
  how: string,
): FfiError {
  return new FfiError(
    ErrorCode.DATA_LOSS,
    `Handler '${handler}' wrote past the end of result ${i} at byte offset ${offset} ` +
      `(the result has ${size} bytes; found by ${how})`,
  );
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
