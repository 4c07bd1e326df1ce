/**
 * CUDA streams: created and owned, or wrapped (a stream someone else owns,
 * such as the one XLA passes a handler).
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _check, _closedError, _cudaError, _handle, _out64, _sym } from "./driver.ts";

/** `CU_STREAM_NON_BLOCKING`: no implicit synchronisation with the legacy default stream. */
const NON_BLOCKING = 1;

/**
 * A CUDA stream (`CUstream`). {@link Stream.create} makes one this object
 * owns (destroyed on close); {@link Stream.wrap} wraps a handle owned
 * elsewhere (close only forgets it).
 *
 * @example
 * ```ts ignore
 * import { init, Stream } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * using stream = Stream.create();
 * stream.synchronize();
 * ```
 */
export class Stream {
  /** Whether closing destroys the stream (false for wrapped streams). */
  readonly owned: boolean;
  #handle: Deno.PointerValue;
  #closed = false;

  private constructor(handle: Deno.PointerValue, owned: boolean) {
    this.#handle = handle;
    this.owned = owned;
  }

  /**
   * Creates a stream in the current context (`cuStreamCreate`);
   * `nonBlocking` (default true) does not synchronise with stream 0.
   *
   * @example
   * ```ts ignore
   * import { init, Stream } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using s = Stream.create({ nonBlocking: false });
   * ```
   */
  static create(options: { nonBlocking?: boolean } = {}): Stream {
    const create = _sym("cuStreamCreate");
    _check(create(_out64, (options.nonBlocking ?? true) ? NON_BLOCKING : 0), "cuStreamCreate");
    return new Stream(_handle(_out64[0]!), true);
  }

  /**
   * Wraps a stream owned elsewhere, e.g. the `CUstream` XLA hands a handler:
   * a pointer object, or its address as a bigint or number. Closing the
   * wrapper never destroys the stream. `null`/0 is the legacy default stream.
   *
   * @example
   * ```ts ignore
   * import { DataType, Ffi } from "@deno-xla/ffi";
   * import { DeviceMemory, Stream } from "@deno-xla/ffi/cuda";
   * // A TS handler's `.ctx("stream")` is the stream's address (a number).
   * Ffi.bind().ret(DataType.F32, 1).ctx("stream").to((out, stream) => {
   *   using s = Stream.wrap(stream); // closing the wrapper leaves XLA's stream alone
   *   DeviceMemory.wrap(out.data, out.byteSize).fill(0, s);
   * });
   * ```
   */
  static wrap(handle: Deno.PointerValue | bigint | number): Stream {
    _sym("cuStreamSynchronize"); // CUDA must be usable.
    const p = typeof handle === "bigint" || typeof handle === "number"
      ? _streamPointer(handle)
      : handle;
    return new Stream(p, false);
  }

  /**
   * The legacy default stream (`0`), wrapped.
   *
   * @example
   * ```ts ignore
   * import { Stream } from "@deno-xla/ffi/cuda";
   * Stream.default().synchronize();
   * ```
   */
  static default(): Stream {
    return Stream.wrap(null);
  }

  /** The `CUstream` handle; FfiError FAILED_PRECONDITION after close. */
  get handle(): Deno.PointerValue {
    if (this.#closed) throw _closedError("Stream");
    return this.#handle;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Blocks until all work queued on the stream is done (`cuStreamSynchronize`). */
  synchronize(): void {
    _check(_sym("cuStreamSynchronize")(this.handle), "cuStreamSynchronize");
  }

  /** True when all queued work is done, false while some is pending (`cuStreamQuery`). */
  query(): boolean {
    const rc = _sym("cuStreamQuery")(this.handle);
    if (rc === 0) return true;
    if (rc === 600) return false; // CUDA_ERROR_NOT_READY
    throw _cudaError(rc, "cuStreamQuery");
  }

  /** Destroys an owned stream (`cuStreamDestroy`); forgets a wrapped one. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.owned) _check(_sym("cuStreamDestroy_v2")(this.#handle), "cuStreamDestroy_v2");
  }

  /** Same as {@link Stream.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * A stream where one is queued on: a {@link Stream}, or a raw `CUstream` as
 * a pointer, bigint or number (e.g. the value a TS handler's
 * `.ctx("stream")` receives); `null`/`undefined`/0: the legacy default stream.
 */
export type StreamLike = Stream | Deno.PointerValue | bigint | number | undefined;

let lastAddress: number | bigint = 0;
let lastPointer: Deno.PointerValue = null;

/** The stream handle of an optional stream (null: the legacy default stream). */
export function _streamHandle(stream: StreamLike): Deno.PointerValue {
  if (stream instanceof Stream) return stream.handle;
  if (stream === null || stream === undefined) return null;
  if (typeof stream === "object") return stream;
  if (stream === lastAddress) return lastPointer; // a handler's stream, call after call
  const p = _streamPointer(stream);
  lastAddress = stream;
  lastPointer = p;
  return p;
}

/** A `CUstream` address as a pointer; INVALID_ARGUMENT when it is not an address. */
function _streamPointer(handle: bigint | number): Deno.PointerValue {
  if (typeof handle === "number" && (!Number.isSafeInteger(handle) || handle < 0)) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid stream address ${handle}`);
  }
  if (typeof handle === "bigint" && (handle < 0n || handle >= 1n << 64n)) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid stream address ${handle}`);
  }
  return Deno.UnsafePointer.create(BigInt(handle));
}
