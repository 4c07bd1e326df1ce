/**
 * Promise, CountDownPromise and Future with the semantics of XLA's `ffi.h`:
 * a promise completes once (available or with an error); a future's
 * `onReady` callbacks run exactly once, also when added after completion; a
 * count-down promise completes when its count reaches zero, with an error if
 * any count-down carried one. Futures are awaitable and convert to and from
 * JavaScript Promises, so a TS handler can return one to complete work later
 * (for instance from a task it scheduled on the runtime's thread pool).
 *
 * @module
 */
import { ErrorCode } from "./abi/enums.ts";
import { _handlerFailure, FfiError } from "./errors.ts";

/** A callback run once when a {@link Future} completes: the error, or undefined. */
export type ReadyCallback = (error: FfiError | undefined) => void;

const enum State {
  Pending,
  Available,
  Error,
}

/**
 * The consumer side of an asynchronous result (`ffi.h`'s `Future`).
 *
 * @example
 * ```ts
 * import { FfiPromise } from "@deno-xla/ffi";
 * const promise = new FfiPromise();
 * const future = promise.future();
 * future.onReady((error) => console.log("ready", error === undefined));
 * promise.setAvailable();
 * await future; // resolves; an error completion rejects with the FfiError
 * ```
 */
export class Future implements PromiseLike<void> {
  #state = State.Pending;
  #error: FfiError | undefined;
  #callbacks: ReadyCallback[] = [];

  /** @internal use {@link FfiPromise.future} or the static constructors. */
  constructor() {}

  /** A future that is already available. */
  static available(): Future {
    const f = new Future();
    f._complete(undefined);
    return f;
  }

  /**
   * A future that already completed with an error: an `FfiError` as it is,
   * any other value as XLA maps a C++ handler's exception (UNKNOWN "XLA FFI
   * call failed: …", the value as `cause`).
   */
  static failed(error: unknown): Future {
    const f = new Future();
    f._complete(_handlerFailure(error));
    return f;
  }

  /** A future that completes when a JavaScript promise settles (rejections map as in {@link failed}). */
  static fromPromise(promise: PromiseLike<unknown>): Future {
    const f = new Future();
    promise.then(
      () => f._complete(undefined),
      (e) => f._complete(_handlerFailure(e)),
    );
    return f;
  }

  /** True once completed successfully. */
  get isAvailable(): boolean {
    return this.#state === State.Available;
  }

  /** True once completed with an error. */
  get isError(): boolean {
    return this.#state === State.Error;
  }

  /** True once completed either way. */
  get isReady(): boolean {
    return this.#state !== State.Pending;
  }

  /** The error of an error completion, else undefined. */
  get error(): FfiError | undefined {
    return this.#error;
  }

  /**
   * Runs `callback` exactly once when the future completes (at once when it
   * already has), with the error or undefined. A throwing callback is
   * reported, never propagated into the completer.
   */
  onReady(callback: ReadyCallback): void {
    if (this.#state === State.Pending) {
      this.#callbacks.push(callback);
      return;
    }
    runCallback(callback, this.#error);
  }

  /** A JavaScript Promise that resolves on availability and rejects with the FfiError. */
  toPromise(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.onReady((error) => error === undefined ? resolve() : reject(error));
    });
  }

  /** Makes the future awaitable. */
  then<A = void, B = never>(
    onfulfilled?: ((value: void) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.toPromise().then(onfulfilled, onrejected);
  }

  /** @internal completes once; returns false when already complete. */
  _complete(error: FfiError | undefined): boolean {
    if (this.#state !== State.Pending) return false;
    this.#state = error === undefined ? State.Available : State.Error;
    this.#error = error;
    const callbacks = this.#callbacks;
    this.#callbacks = [];
    for (const cb of callbacks) runCallback(cb, error);
    return true;
  }
}

function runCallback(cb: ReadyCallback, error: FfiError | undefined): void {
  try {
    cb(error);
  } catch (e) {
    console.error("deno-xla-ffi: a Future onReady callback threw:", e);
  }
}

/**
 * The producer side of a {@link Future} (`ffi.h`'s `Promise`); completes once.
 *
 * @example
 * ```ts
 * import { ErrorCode, FfiError, FfiPromise } from "@deno-xla/ffi";
 * const p = new FfiPromise();
 * p.setError(new FfiError(ErrorCode.INTERNAL, "Test error"));
 * console.log(p.future().error?.message); // "Test error"
 * ```
 */
export class FfiPromise {
  #future = new Future();

  /** The future this promise completes. */
  future(): Future {
    return this.#future;
  }

  /** Completes successfully; throws FAILED_PRECONDITION when already complete. */
  setAvailable(): void {
    if (!this.#future._complete(undefined)) throw alreadyCompleted();
  }

  /** Completes with an error (mapped as in {@link Future.failed}); throws when already complete. */
  setError(error: unknown): void {
    if (error === undefined || error === null) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Error must not be null or OK");
    }
    const fe = _handlerFailure(error);
    if (!this.#future._complete(fe)) throw alreadyCompleted();
  }
}

function alreadyCompleted(): FfiError {
  return new FfiError(ErrorCode.FAILED_PRECONDITION, "Promise is already completed");
}

/**
 * A promise completed after `count` count-downs (`ffi.h`'s
 * `CountDownPromise`): with the first error any count-down carried, else
 * available.
 *
 * @example
 * ```ts
 * import { CountDownPromise } from "@deno-xla/ffi";
 * const p = new CountDownPromise(2);
 * p.countDown();
 * console.log(p.countDown()); // true: the count reached zero
 * await p.future();
 * ```
 */
export class CountDownPromise {
  #remaining: number;
  #error: FfiError | undefined;
  #future = new Future();

  /**
   * Makes a promise completed by `count` count-downs.
   *
   * @param count how many count-downs complete the promise (≥ 1)
   */
  constructor(count: number) {
    if (!Number.isInteger(count) || count < 1) {
      throw new RangeError(`CountDownPromise count must be a positive integer, got ${count}`);
    }
    this.#remaining = count;
  }

  /** The future this promise completes. */
  future(): Future {
    return this.#future;
  }

  /** Count-downs still missing. */
  get remaining(): number {
    return this.#remaining;
  }

  /**
   * Counts down by `n` (default 1), optionally carrying an error; returns
   * true when this count-down completed the promise. Throws
   * FAILED_PRECONDITION when counting below zero.
   */
  countDown(error?: unknown, n?: number): boolean {
    n ??= 1;
    if (n < 1 || n > this.#remaining) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `CountDownPromise counted down by ${n} with ${this.#remaining} remaining`,
      );
    }
    if (error !== undefined && this.#error === undefined) this.#error = _handlerFailure(error);
    this.#remaining -= n;
    if (this.#remaining > 0) return false;
    this.#future._complete(this.#error);
    return true;
  }
}
