/**
 * Values a TS handler receives: buffers, remaining arguments/results, and
 * attribute dictionaries. Remaining operands and dictionaries keep a private
 * copy of their part of the flattened call frame and decode on access, with
 * the error messages of XLA's `ffi.h`.
 *
 * @module
 */
import { type DataType, ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _deviceMemoryCheck } from "./_device_memory.ts";
import {
  type AnyTypedArray,
  dtypeName,
  dtypeWidth,
  type TypedArrayOf,
  typedView,
} from "./_dtype.ts";
import { sameFlatWords, toScratch } from "./_flat.ts";

/** The next FfiBuffer takes its dims array as is (FfiBuffer._adopt). */
let adopting = false;

/**
 * A buffer argument or result: dtype, dims and the data address, with a
 * TypedArray view of host memory created on first use.
 *
 * @example
 * ```ts
 * import { DataType, FfiBuffer } from "@deno-xla/ffi";
 * const b = new FfiBuffer(DataType.F32, 0, [2, 3]);
 * console.log(b.elementCount, b.byteSize); // 6 24
 * ```
 */
export class FfiBuffer<D extends DataType = DataType> {
  /** Element type. */
  readonly dtype: D;
  /** Address of the first element (0 for tokens and empty buffers). */
  readonly data: number;
  /** The dims, never handed out (the decoder compares them with later frames). */
  readonly #dims: readonly number[];
  #frozenDims: readonly number[] | undefined;
  #view: AnyTypedArray | undefined;

  /** Describes a buffer; handlers receive these from the runtime. */
  constructor(dtype: D, data: number, dims: readonly number[]) {
    this.dtype = dtype;
    this.data = data;
    this.#dims = adopting ? dims : [...dims];
    adopting = false;
  }

  /** @internal the decoder's: a buffer that takes `dims`, a fresh array no one else holds. */
  static _adopt(dtype: number, data: number, dims: number[]): FfiBuffer {
    adopting = true;
    return new FfiBuffer(dtype, data, dims);
  }

  /** @internal the dims the decoder compares with a frame (not to be handed out). */
  static _dimsOf(b: FfiBuffer): readonly number[] {
    return b.#dims;
  }

  /** Dimensions, outermost first (a frozen array: a buffer's shape never changes). */
  get dims(): readonly number[] {
    return this.#frozenDims ??= Object.freeze(this.#dims.slice());
  }

  /** Number of dimensions. */
  get rank(): number {
    return this.#dims.length;
  }

  /** Product of the dims (1 for rank 0). */
  get elementCount(): number {
    const dims = this.#dims;
    let n = 1;
    for (let i = 0; i < dims.length; i++) n *= dims[i]!;
    return n;
  }

  /** ffi.h size_bytes: ByteWidth × element count. */
  get byteSize(): number {
    return dtypeWidth(this.dtype) * this.elementCount;
  }

  /** The data address as a pointer (null for address 0). */
  get pointer(): Deno.PointerValue {
    return this.data === 0 ? null : Deno.UnsafePointer.create(BigInt(this.data));
  }

  /**
   * A TypedArray over the buffer's host memory (no copy; valid while the
   * runtime keeps the buffer alive, i.e. during the handler call). Made on
   * first use and then reused. A buffer in CUDA device memory (a CUDA
   * runtime's buffers) has no host view: FfiError FAILED_PRECONDITION; pass
   * such a buffer to a kernel launch, or copy it with the CUDA bindings.
   */
  typed(): TypedArrayOf<D> {
    // A view made before is handed out again unless a handler detached its ArrayBuffer
    // (`view.buffer.transfer()`): a detached view has no bytes, and the buffer still has them.
    const made = this.#view;
    if (made === undefined || (made.byteLength === 0 && this.byteSize !== 0)) {
      const bytes = this.byteSize;
      const data = this.data;
      const why = _deviceMemoryCheck !== undefined && data !== 0 && bytes > 0
        ? _deviceMemoryCheck(data)
        : undefined;
      if (why !== undefined) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `FfiBuffer.typed(): the buffer at 0x${this.data.toString(16)} is ${why}, which the ` +
            `host cannot read: pass the buffer to a kernel (launch(kernel, config, buffer)) or ` +
            `copy it with DeviceMemory.wrap(buffer.data, buffer.byteSize)`,
        );
      }
      if (bytes > Number.MAX_SAFE_INTEGER) {
        // V8 holds at most 2^53 - 1 bytes in an ArrayBuffer; asking for more aborts the process.
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `FfiBuffer.typed(): the ${dtypeName(this.dtype)}[${this.#dims.join(",")}] buffer ` +
            `covers ${bytes} bytes, more than a JS ArrayBuffer can view ` +
            `(${Number.MAX_SAFE_INTEGER}); read it through its address (buffer.data)`,
        );
      }
      if (data === 0 || bytes === 0) {
        this.#view = typedView(this.dtype, new ArrayBuffer(0), 0);
      } else {
        // A direct-mapped table: a slot per address hash, no allocation but the view. The hash
        // multiplies by 2^32 / φ (Fibonacci hashing), which spreads the evenly spaced addresses of
        // an allocator's buffers over the slots: a loop's outputs spaced 0x6c0 apart, 600 of them,
        // meet in 126 slots under a hash of shifts and xor, in none under this one.
        const slot = Math.imul(data >>> 4, 0x9e3779b1) >>> (32 - RECENT_VIEW_BITS);
        const kept = keptViews[slot];
        if (
          keptAddresses[slot] === data && kept !== undefined && keptTypes[slot] === this.dtype &&
          kept.byteLength === bytes
        ) {
          this.#view = kept;
        } else {
          // The address as an offset from a pointer made once: no BigInt and no
          // pointer object per view (about 0.1 µs of the 0.5 µs a view costs).
          const ab = Deno.UnsafePointerView.getArrayBuffer(
            addressOne ??= Deno.UnsafePointer.create(1n)!,
            bytes,
            data - 1,
          );
          const view = typedView(this.dtype, ab, bytes);
          this.#view = view;
          // Kept from an address's second sighting on: where every call brings a new address
          // (XLA run inline on the JS thread), nothing but a number is kept.
          if (seenAddresses[slot] === data && bytes <= RECENT_VIEW_BYTES) {
            keptAddresses[slot] = data;
            keptTypes[slot] = this.dtype;
            keptViews[slot] = view;
          } else {
            seenAddresses[slot] = data;
          }
        }
      }
    }
    return this.#view as TypedArrayOf<D>;
  }
}

/**
 * Views kept for addresses handlers saw, in a table of 4096 slots indexed by
 * the address (a new address in a slot replaces the old one). XLA's
 * allocator hands a handler the same buffers again and again (a jitted call
 * of 8 f32 in a loop from a Python worker: 600 output addresses in 20000
 * calls, an address back after 200 calls at the median and 1200 at the 90th
 * percentile), and making a view of external memory is most of what
 * `typed()` costs (0.3–0.9 µs); a view of the same bytes with the same type
 * is the same view. In that loop 62% of the calls found their view in a table
 * of 256 slots, 94% in this one. A view is reused only while it still covers
 * its bytes, and kept only from an address's second sighting on: XLA run
 * inline on the JS thread hands out a new address nearly every call, and
 * keeping views nobody reuses would cost more than it saves. Views of more
 * than 64 KiB are not kept (their data costs more than the view), which
 * bounds what the table holds to 256 MiB of views.
 */
const RECENT_VIEW_BITS = 12;
const RECENT_VIEWS = 1 << RECENT_VIEW_BITS;
const keptAddresses = new Float64Array(RECENT_VIEWS);
const keptTypes = new Int32Array(RECENT_VIEWS);
const keptViews: (AnyTypedArray | undefined)[] = new Array(RECENT_VIEWS);
/** The last address seen once in each slot ({@link keptViews} keeps a view from the second time on). */
const seenAddresses = new Float64Array(RECENT_VIEWS);
const RECENT_VIEW_BYTES = 1 << 16;

/** Address 1, made on first use (it needs --allow-ffi): views are made at an offset from it. */
let addressOne: Deno.PointerObject | undefined;

/** Reads the buffer record at byte offset `o` (type, dtype, data, rank, dims). */
export function readBufferRecord(dv: DataView, o: number): FfiBuffer {
  const rank = dv.getInt32(o + 16, true);
  const dims = new Array<number>(rank);
  for (let d = 0; d < rank; d++) dims[d] = dv.getFloat64(o + 24 + 8 * d, true);
  return FfiBuffer._adopt(dv.getInt32(o + 4, true), dv.getFloat64(o + 8, true), dims);
}

/** Checks a buffer record against an expected dtype/rank; returns a diagnostic or undefined. */
export function checkBufferRecord(
  dv: DataView,
  o: number,
  dtype: number,
  rank: number,
  what: "argument" | "result",
): string | undefined {
  const type = dv.getInt32(o, true);
  if (type !== 1) return `Wrong ${what} type: expected buffer but got ${type}`;
  const got = dv.getInt32(o + 4, true);
  if (dtype >= 0 && got !== dtype) {
    return `Wrong buffer dtype: expected ${dtypeName(dtype)} but got ${dtypeName(got)}`;
  }
  const r = dv.getInt32(o + 16, true);
  if (rank >= 0 && r !== rank) return `Wrong buffer rank: expected ${rank} but got ${r}`;
  return undefined;
}

/**
 * The remaining arguments or results of a call (`RemainingArgs` /
 * `RemainingRets`), decoded on access.
 *
 * @example
 * ```ts ignore
 * Ffi.bind().remainingArgs().to((rest) => {
 *   for (let i = 0; i < rest.size; i++) console.log(rest.get(i).dims);
 * });
 * ```
 */
export class RemainingBuffers {
  readonly #words: readonly number[];
  readonly #at: readonly number[];
  readonly #what: "argument" | "result";

  /**
   * @internal built by the decoder: a private copy of the records (int32
   * words) and where each buffer's record starts in it.
   */
  constructor(words: readonly number[], at: readonly number[], what: "argument" | "result") {
    this.#words = words;
    this.#at = at;
    this.#what = what;
  }

  /** Number of remaining buffers. */
  get size(): number {
    return this.#at.length;
  }

  /**
   * Buffer `i`, optionally checked against a dtype and rank. Out of range:
   * INVALID_ARGUMENT "Index out of range"; a failed check: INTERNAL with the
   * decode diagnostic.
   */
  get<D extends DataType = DataType>(i: number, dtype?: D, rank?: number): FfiBuffer<D> {
    const w = this.#at[i];
    if (w === undefined || !Number.isInteger(i)) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Index out of range");
    }
    const words = this.#words;
    const dv = toScratch(words, w, 6 + 2 * Math.max(0, words[w + 4]!));
    const diag = checkBufferRecord(dv, 0, dtype ?? -1, rank ?? -1, this.#what);
    if (diag !== undefined) throw new FfiError(ErrorCode.INTERNAL, diag);
    return readBufferRecord(dv, 0) as FfiBuffer<D>;
  }

  /** @internal whether this holds exactly `words` (for reuse across calls). */
  _sameAs(from: number, to: number): boolean {
    return this.#words.length === to - from && sameFlatWords(this.#words, from);
  }
}
