/**
 * The embedded XLA runtime: registration, metadata, type ids, synchronous and
 * asynchronous calls, calls from runtime threads, and handler instances.
 *
 * @module
 */
import { ErrorCode, ExecutionStage, type HandlerTraits } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";
import { _check, _takeError, _utf8 } from "./_native_error.ts";
import type { CallFrame } from "./call_frame.ts";
import { _checkHandler, Handler, type HandlerBundle } from "./handler_library.ts";

/** Options of {@link Runtime}. */
export interface RuntimeOptions {
  /** "Host" (also host, cpu, Cpu, CPU) or "CUDA" (also cuda, gpu, GPU). Default "Host". */
  platform?: string;
  /** Thread-pool size on Host (default: the number of cores; 0 = no pool). */
  threads?: number;
}

/** Options of {@link Runtime.register}. */
export interface RegisterOptions {
  /** Platform name (default: the runtime's platform). */
  platform?: string;
  /** Traits OR-ed with those the handler reports. */
  traits?: HandlerTraits | number;
}

/** What {@link Runtime.metadata} reports. */
export interface HandlerMetadata {
  /** The API version the handler implements. */
  apiVersion: { major: number; minor: number };
  /** The handler's traits. */
  traits: number;
  /** The state type id a 0.2+ instantiate handler reports (0 otherwise). */
  stateTypeId: number;
}

/** Per-call options. */
export interface CallOptions {
  /** Execution stage (default EXECUTE). */
  stage?: ExecutionStage;
  /** Run id (`RunId_Get`); default 0. */
  runId?: number | bigint;
  /** Device ordinal (`DeviceOrdinal_Get`); default 0. */
  deviceOrdinal?: number;
  /** User data for `ExecutionContext_Get`: type id → pointer. */
  userData?:
    | ReadonlyMap<number | bigint, Deno.PointerValue>
    | Iterable<
      readonly [number | bigint, Deno.PointerValue]
    >;
  /** The handler instance whose state `State_Set`/`State_Get` use. */
  instance?: Instance;
}

/** Options of {@link Runtime.callOnThreads}. */
export interface ThreadCallOptions extends CallOptions {
  /** Runtime threads to start (default 1). */
  threads?: number;
  /** Calls per thread (default 1). */
  iterations?: number;
}

/** Result of {@link Runtime.callOnThreads}. */
export interface ThreadCallResult {
  /** Calls that succeeded. */
  ok: number;
  /** Calls that failed. */
  failed: number;
  /** The first failure, if any. */
  firstError?: FfiError;
}

/** A handler, a registered bundle's name, or a bundle. */
export type HandlerTarget = Handler | HandlerBundle | string;

const PLATFORMS: Record<string, number> = {
  Host: 0,
  host: 0,
  cpu: 0,
  Cpu: 0,
  CPU: 0,
  HOST: 0,
  CUDA: 1,
  cuda: 1,
  gpu: 1,
  GPU: 1,
  Cuda: 1,
  Gpu: 1,
};

const NO_USER = new BigInt64Array(0);

function stageHandler(bundle: HandlerBundle, stage: ExecutionStage): Handler | null {
  switch (stage) {
    case ExecutionStage.INSTANTIATE:
      return bundle.instantiate ?? null;
    case ExecutionStage.PREPARE:
      return bundle.prepare ?? null;
    case ExecutionStage.INITIALIZE:
      return bundle.initialize ?? null;
    default:
      return bundle.execute;
  }
}

/**
 * A handler instance (XLA's per-call-site execution state): created by
 * {@link Runtime.instantiate}; closing it runs the state's deleter.
 *
 * @example
 * ```ts ignore
 * await using inst = await rt.instantiate(bundle, frame);
 * rt.callSync(bundle, frame, { instance: inst });
 * ```
 */
export class Instance {
  /** @internal */
  _ptr: Deno.PointerObject | null;
  /** @internal calls in flight that use this instance. */
  _inflight = 0;

  /** @internal use {@link Runtime.instantiate}. */
  constructor(ptr: Deno.PointerObject) {
    this._ptr = ptr;
  }

  /** @internal */
  _live(): Deno.PointerObject {
    if (this._ptr === null) {
      throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The handler instance is closed");
    }
    return this._ptr;
  }

  /** The state's type id, or `undefined` when no state is set. */
  get stateTypeId(): number | undefined {
    const out = new BigInt64Array(1);
    const has = native().xrt_instance_state(this._live(), out);
    return has ? Number(out[0]) : undefined;
  }

  /** Runs the state's deleter and frees the instance. Fails while a call uses it. */
  close(): void {
    if (this._ptr === null) return;
    if (this._inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The handler instance is used by ${this._inflight} call(s) in flight; await them first`,
      );
    }
    native().xrt_instance_free(this._ptr);
    this._ptr = null;
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * The embedded XLA FFI runtime: every `XLA_FFI_Api` function, a thread pool
 * on Host, handler registration (process-wide, as XLA's registry), and calls.
 *
 * `callSync` runs a handler on the calling (JS) thread: fine for handlers that
 * finish synchronously and do not wait on JavaScript. `call` runs the handler
 * on another thread and waits for its future there, so the JS event loop stays
 * free (handlers that call back into JS work). `callOnThreads` calls it from
 * runtime-owned threads, as XLA does.
 *
 * @example
 * ```ts
 * import { Runtime } from "@deno-xla/ffi";
 * using rt = new Runtime({ platform: "Host", threads: 2 });
 * console.log(rt.platform, rt.threads); // Host 2
 * ```
 */
export class Runtime {
  #ptr: Deno.PointerObject | null;
  #inflight = 0;
  #lookupOut = new BigUint64Array(5);
  #cache = new Map<string, HandlerBundle>();
  /** The canonical platform: "Host" or "CUDA". */
  readonly platform: "Host" | "CUDA";
  /** The thread-pool size. */
  readonly threads: number;

  /** Creates a runtime; see {@link RuntimeOptions}. */
  constructor(options: RuntimeOptions = {}) {
    const p = PLATFORMS[options.platform ?? "Host"];
    if (p === undefined) {
      throw new FfiError(
        ErrorCode.NOT_FOUND,
        `Could not find registered platform with name: "${options.platform}". ` +
          `Available platform names are: Host CUDA`,
      );
    }
    const threads = options.threads ?? -1;
    if (!Number.isInteger(threads) || threads < -1 || threads > 4096) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid thread count ${threads}`);
    }
    const sym = native();
    const ptr = sym.xrt_runtime_new(p, threads);
    if (ptr === null) {
      throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Cannot start the runtime's threads");
    }
    this.#ptr = ptr;
    this.platform = p === 0 ? "Host" : "CUDA";
    this.threads = sym.xrt_runtime_num_threads(ptr);
  }

  /** The `XLA_FFI_Api*` handlers receive (ABI 0.1). */
  static get api(): Deno.PointerObject {
    return native().xrt_api()!;
  }

  #live(): Deno.PointerObject {
    if (this.#ptr === null) {
      throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The runtime is closed");
    }
    return this.#ptr;
  }

  /**
   * Registers a handler or bundle under `name` through `XLA_FFI_Handler_Register`
   * (XLA's checks and messages: execute required, version, duplicates).
   */
  register(name: string, handler: Handler | HandlerBundle, options: RegisterOptions = {}): void {
    this.#live();
    const bundle: HandlerBundle = handler instanceof Handler ? { execute: handler } : handler;
    const b = new BigUint64Array(4);
    const ptrs = [bundle.instantiate, bundle.prepare, bundle.initialize, bundle.execute];
    for (let i = 0; i < 4; i++) {
      const h = ptrs[i];
      if (h) _checkHandler(h.pointer, h.name);
      b[i] = h ? Deno.UnsafePointer.value(h.pointer) : 0n;
    }
    const n = _utf8(name);
    const p = _utf8(options.platform ?? this.platform);
    _check(native().xrt_register(n, BigInt(n.length), p, BigInt(p.length), b, options.traits ?? 0));
    this.#cache.delete(name);
  }

  /** The bundle and traits registered under `name` (NOT_FOUND with XLA's message). */
  lookup(name: string, platform?: string): { bundle: HandlerBundle; traits: number } {
    this.#live();
    const n = _utf8(name);
    const p = _utf8(platform ?? this.platform);
    const out = this.#lookupOut;
    _check(native().xrt_lookup(n, BigInt(n.length), p, BigInt(p.length), out));
    const h = (i: number) => {
      const v = out[i]!;
      return v === 0n ? null : new Handler(Deno.UnsafePointer.create(v)!, name);
    };
    return {
      bundle: { instantiate: h(0), prepare: h(1), initialize: h(2), execute: h(3)! },
      traits: Number(out[4]),
    };
  }

  /** Queries a handler's metadata (API version, traits) as XLA does at registration. */
  metadata(handler: Handler): HandlerMetadata {
    this.#live();
    _checkHandler(handler.pointer, handler.name);
    const out = new BigInt64Array(4);
    _check(native().xrt_metadata(handler.pointer, out));
    return {
      apiVersion: { major: Number(out[0]), minor: Number(out[1]) },
      traits: Number(out[2]),
      stateTypeId: Number(out[3]),
    };
  }

  /**
   * Registers a type name through `XLA_FFI_TypeId_Register` and returns its
   * id (`id` 0 = assign the next free one).
   */
  registerType(name: string, id: number | bigint = 0): number {
    this.#live();
    const n = _utf8(name);
    const io = new BigInt64Array([BigInt(id)]);
    _check(native().xrt_register_type(n, BigInt(n.length), io));
    return Number(io[0]);
  }

  #resolve(target: HandlerTarget, stage: ExecutionStage): Deno.PointerObject | null {
    if (target instanceof Handler) {
      _checkHandler(target.pointer, target.name);
      return target.pointer;
    }
    let bundle: HandlerBundle;
    if (typeof target === "string") {
      let b = this.#cache.get(target);
      if (!b) {
        b = this.lookup(target).bundle;
        this.#cache.set(target, b);
      }
      bundle = b;
    } else {
      bundle = target;
    }
    const h = stageHandler(bundle, stage);
    if (h === null) return null;
    _checkHandler(h.pointer, h.name);
    return h.pointer;
  }

  #configure(frame: CallFrame, options: CallOptions | undefined): void {
    const sym = native();
    if (options === undefined) {
      if (frame._dirty) {
        sym.xrt_frame_configure(frame._live(), ExecutionStage.EXECUTE, 0n, 0, null, NO_USER, 0);
        frame._dirty = false;
      }
      return;
    }
    let user = NO_USER;
    let n = 0;
    if (options.userData !== undefined) {
      const pairs = [...options.userData];
      user = new BigInt64Array(pairs.length * 2);
      for (const [id, p] of pairs) {
        user[2 * n] = BigInt(id);
        user[2 * n + 1] = p === null ? 0n : BigInt(Deno.UnsafePointer.value(p));
        n++;
      }
    }
    const ordinal = options.deviceOrdinal ?? 0;
    if (!Number.isInteger(ordinal) || ordinal < -2147483648 || ordinal > 2147483647) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid device ordinal ${ordinal}`);
    }
    sym.xrt_frame_configure(
      frame._live(),
      options.stage ?? ExecutionStage.EXECUTE,
      BigInt(options.runId ?? 0),
      ordinal,
      options.instance ? options.instance._live() : null,
      user,
      n,
    );
    frame._dirty = true;
  }

  #snapshot(rt: Deno.PointerObject, frame: CallFrame): Deno.PointerObject {
    const snap = native().xrt_call_new(rt, frame._live());
    if (snap === null) throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Out of memory");
    return snap;
  }

  /**
   * Calls a handler on the calling thread and returns when it returned.
   * Throws FfiError with the handler's code and message; FAILED_PRECONDITION
   * if it left a pending future (use {@link call} for asynchronous handlers).
   */
  callSync(target: HandlerTarget, frame: CallFrame, options?: CallOptions): void {
    const rt = this.#live();
    const fn = this.#resolve(target, options?.stage ?? ExecutionStage.EXECUTE);
    if (options !== undefined || frame._dirty) this.#configure(frame, options);
    if (fn === null) return; // no handler for this stage: XLA skips it
    const err = native().xrt_call_sync(rt, fn, frame._live());
    if (err !== null) throw _takeError(err);
  }

  /**
   * Calls a handler off the JS thread and settles when it returned and, if it
   * returned a future, when that future completed.
   */
  async call(target: HandlerTarget, frame: CallFrame, options?: CallOptions): Promise<void> {
    const rt = this.#live();
    const fn = this.#resolve(target, options?.stage ?? ExecutionStage.EXECUTE);
    this.#configure(frame, options);
    if (fn === null) return;
    const snap = this.#snapshot(rt, frame);
    const inst = options?.instance;
    this.#inflight++;
    frame._inflight++;
    if (inst) inst._inflight++;
    let err: Deno.PointerObject | null;
    try {
      err = await native().xrt_call_run(snap, fn);
    } finally {
      this.#inflight--;
      frame._inflight--;
      if (inst) inst._inflight--;
    }
    if (err !== null) throw _takeError(err);
  }

  /**
   * Calls a handler `iterations` times from each of `threads` new runtime
   * threads (entirely in C), and reports counts and the first error.
   */
  async callOnThreads(
    target: HandlerTarget,
    frame: CallFrame,
    options: ThreadCallOptions = {},
  ): Promise<ThreadCallResult> {
    const rt = this.#live();
    const threads = options.threads ?? 1;
    const iterations = options.iterations ?? 1;
    if (!Number.isInteger(threads) || threads < 1 || threads > 1024) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid thread count ${threads}`);
    }
    if (!Number.isInteger(iterations) || iterations < 0) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid iteration count ${iterations}`);
    }
    const fn = this.#resolve(target, options.stage ?? ExecutionStage.EXECUTE);
    this.#configure(frame, options);
    if (fn === null) return { ok: threads * iterations, failed: 0 };
    const out = new BigInt64Array(3);
    const msg = new Uint8Array(1024);
    const snap = this.#snapshot(rt, frame);
    const inst = options.instance;
    this.#inflight++;
    frame._inflight++;
    if (inst) inst._inflight++;
    let rc: number;
    try {
      rc = await native().xrt_call_threads(
        snap,
        fn,
        threads,
        BigInt(iterations),
        out,
        msg,
        msg.length,
      );
    } finally {
      this.#inflight--;
      frame._inflight--;
      if (inst) inst._inflight--;
    }
    if (rc !== 0) {
      throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, `Cannot start ${threads} runtime threads`);
    }
    const result: ThreadCallResult = { ok: Number(out[0]), failed: Number(out[1]) };
    if (result.failed > 0) {
      const end = msg.indexOf(0);
      result.firstError = new FfiError(
        Number(out[2]),
        new TextDecoder().decode(msg.subarray(0, end < 0 ? msg.length : end)),
      );
    }
    return result;
  }

  /**
   * Runs the instantiate stage with a new instance and returns the instance
   * (its state is kept for later calls with `{ instance }`).
   */
  async instantiate(
    target: HandlerTarget,
    frame: CallFrame,
    options: Omit<CallOptions, "stage" | "instance"> = {},
  ): Promise<Instance> {
    this.#live();
    const ptr = native().xrt_instance_new();
    if (ptr === null) throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Out of memory");
    const inst = new Instance(ptr);
    try {
      await this.call(target, frame, {
        ...options,
        stage: ExecutionStage.INSTANTIATE,
        instance: inst,
      });
    } catch (e) {
      inst.close();
      throw e;
    }
    return inst;
  }

  /**
   * Stops the thread pool (queued tasks still run) and frees the runtime.
   * Fails while calls are in flight.
   */
  close(): void {
    if (this.#ptr === null) return;
    if (this.#inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The runtime has ${this.#inflight} call(s) in flight; await them before close()`,
      );
    }
    native().xrt_runtime_free(this.#ptr);
    this.#ptr = null;
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Like {@link close}, but joins the pool's threads off the JS thread, so
   * queued tasks that call back into JavaScript can still finish.
   */
  async closeAsync(): Promise<void> {
    if (this.#ptr === null) return;
    if (this.#inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The runtime has ${this.#inflight} call(s) in flight; await them before close()`,
      );
    }
    const p = this.#ptr;
    this.#ptr = null;
    await native().xrt_runtime_free_async(p);
  }

  /** Same as {@link closeAsync}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.closeAsync();
  }
}
