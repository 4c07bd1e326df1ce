/**
 * CUDA events: record on a stream, wait, measure elapsed time.
 *
 * @module
 */
import {
  _check,
  _closedError,
  _cudaError,
  _driver,
  _handle,
  _out64,
  _outF32,
  _sym,
} from "./driver.ts";
import { _streamHandle, type StreamLike } from "./stream.ts";

/** `CU_EVENT_DISABLE_TIMING`. */
const DISABLE_TIMING = 2;

/**
 * A CUDA event (`CUevent`), owned and destroyed on close.
 *
 * @example
 * ```ts ignore
 * import { Event, init, Stream } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * using stream = Stream.create();
 * using start = Event.create();
 * using end = Event.create();
 * start.record(stream);
 * // ... queue work on the stream ...
 * end.record(stream);
 * end.synchronize();
 * console.log(Event.elapsedMs(start, end), "ms");
 * ```
 */
export class Event {
  #handle: Deno.PointerValue;
  #closed = false;

  private constructor(handle: Deno.PointerValue) {
    this.#handle = handle;
  }

  /**
   * Creates an event in the current context (`cuEventCreate`); `timing`
   * (default true) lets it be used with {@link Event.elapsedMs}.
   *
   * @example
   * ```ts ignore
   * import { Event, init } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using ev = Event.create({ timing: false });
   * ```
   */
  static create(options: { timing?: boolean } = {}): Event {
    const create = _sym("cuEventCreate");
    _check(create(_out64, (options.timing ?? true) ? 0 : DISABLE_TIMING), "cuEventCreate");
    return new Event(_handle(_out64[0]!));
  }

  /**
   * Milliseconds between two recorded, completed events
   * (`cuEventElapsedTime`).
   *
   * @example
   * ```ts ignore
   * import { Event } from "@deno-xla/ffi/cuda";
   * declare const a: Event, b: Event;
   * console.log(Event.elapsedMs(a, b));
   * ```
   */
  static elapsedMs(start: Event, end: Event): number {
    const cu = _driver();
    const fn = cu.cuEventElapsedTime_v2 ?? cu.cuEventElapsedTime;
    if (!fn) _sym("cuEventElapsedTime");
    _check(fn!(_outF32, start.handle, end.handle), "cuEventElapsedTime");
    return _outF32[0]!;
  }

  /** The `CUevent` handle; FfiError FAILED_PRECONDITION after close. */
  get handle(): Deno.PointerValue {
    if (this.#closed) throw _closedError("Event");
    return this.#handle;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Records the event on a stream (default: the legacy default stream). */
  record(stream?: StreamLike): void {
    _check(_sym("cuEventRecord")(this.handle, _streamHandle(stream)), "cuEventRecord");
  }

  /** Blocks until the recorded work is done (`cuEventSynchronize`). */
  synchronize(): void {
    _check(_sym("cuEventSynchronize")(this.handle), "cuEventSynchronize");
  }

  /** True when the recorded work is done (`cuEventQuery`). */
  query(): boolean {
    const rc = _sym("cuEventQuery")(this.handle);
    if (rc === 0) return true;
    if (rc === 600) return false;
    throw _cudaError(rc, "cuEventQuery");
  }

  /** Makes `stream` wait for this event before running later work (`cuStreamWaitEvent`). */
  wait(stream?: StreamLike): void {
    _check(
      _sym("cuStreamWaitEvent")(_streamHandle(stream), this.handle, 0),
      "cuStreamWaitEvent",
    );
  }

  /** Destroys the event. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    _check(_sym("cuEventDestroy_v2")(this.#handle), "cuEventDestroy_v2");
  }

  /** Same as {@link Event.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
