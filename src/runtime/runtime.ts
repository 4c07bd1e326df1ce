/**
 * The embedded XLA runtime: the Runtime class and its options (construction,
 * registration, metadata, type ids, synchronous and asynchronous calls, calls
 * from runtime threads, instantiation, `ffiCall`, device buffers, closing)
 * and its call paths. Parts with a concern of their own live beside it, each
 * private to the runtime: `_registry.ts`, `_cuda_runtime.ts`,
 * `_isolated_dispatch.ts`, `_runtime_ffi_call.ts`, `_begun_calls.ts`.
 *
 * @module
 */
import { type DataType, ErrorCode, ExecutionStage, type HandlerTraits } from "../abi/enums.ts";
import type { DataTypedArray } from "../abi/dtype.ts";
import { _closeCall, _nativeError, _openCall, _withHint, FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";
import { CALL_MODE } from "../native/symbols_runtime.ts";
import { _takeError } from "./_native_error.ts";
import { _apiMinor, type ApiVersion, NEWEST_API_VERSION } from "../abi/version.ts";
import { CallFrame } from "./call_frame.ts";
import type {
  ArraySpec,
  FfiCallOptions,
  FfiCallResults,
  FfiCallTarget,
  FfiHost,
} from "./ffi_call.ts";
import {
  _asHandler,
  _asHandlerOrStages,
  _checkHandler,
  _isStages,
  _stageHandler,
  type HandlerRef,
  type HandlerStages,
  type NativeHandler,
  type TypeIdRef,
} from "./handler_library.ts";
import type { Stream } from "../cuda/stream.ts";
import type { DeviceBuffer } from "./device_buffer.ts";
import { _withAttrHint } from "./_hints.ts";
import { _closest } from "../_closest.ts";
import { _register, _unregister } from "../_resources.ts";
import { _afterGuarded, type _FrameGuard } from "./_guard.ts";
import { _awaitBegun, _isTsEntry, _readyForBegun } from "./_begun_calls.ts";
import { type _IsolatedContext, _OP_CALL, _OP_THREADS } from "./isolate.ts";
import { _newInstance, type Instance } from "./instance.ts";
import {
  _attachCuda,
  type _CudaParts,
  _deviceArg,
  _deviceBuffer,
  _releaseCuda,
  _toHost,
} from "./_cuda_runtime.ts";
import {
  _isolatedContext,
  _isolatedMetadata,
  _isolatedNames,
  _isolatedScope,
  _isolatedTarget,
  _isolatedThreadResult,
  _recordIsolated,
} from "./_isolated_dispatch.ts";
import { _FfiCalls } from "./_runtime_ffi_call.ts";
import { _checkCall, _show, _userData } from "./_call_options.ts";
import {
  _lookup,
  _metadata,
  _registerBundle,
  _registeredNames,
  _registerType,
} from "./_registry.ts";

/** Options of {@link Runtime}. */
export interface RuntimeOptions {
  /**
   * "Host" (any case, or "cpu") or "CUDA" (any case, or "gpu"). Default "Host".
   * Registrations may name any platform (XLA lower-cases it); a runtime runs
   * handlers of its own.
   */
  platform?: string;
  /**
   * The XLA FFI API version the runtime speaks (default "0.4", the newest):
   * its API table (0.4's has `XLA_FFI_Error_GetCode`, 200 bytes; older ones
   * 192), State/Type layouts, metadata query and registration rules
   * are those of XLA of that version. Each version has its own registries, as
   * separate XLA builds do.
   */
  apiVersion?: ApiVersion;
  /** Thread-pool size on Host (default: the number of cores; 0 = no pool). */
  threads?: number;
  /** CUDA: the device ordinal (default 0); its primary context is retained. */
  device?: number;
  /**
   * CUDA: the stream handlers get from `Stream_Get`. Default: a new
   * non-blocking stream the runtime owns. A {@link Stream} or a `CUstream`
   * handle is used as is and stays the caller's (never destroyed here).
   */
  stream?: Stream | Deno.PointerValue | bigint;
}

/** Options of {@link Runtime.register}. */
export interface RegisterOptions {
  /** Platform name (default: the runtime's platform). */
  platform?: string;
  /** Traits OR-ed with those the handler reports. */
  traits?: HandlerTraits | number;
}

/** Options of {@link Runtime.registerType}. */
export interface RegisterTypeOptions {
  /**
   * The type's `XLA_FFI_TypeInfo*` (e.g. from {@link HandlerLibrary.typeInfo}):
   * its deleter frees states of the type (API 0.2+, where `State_Set` takes the
   * deleter from the type registry). Ignored by a 0.1 runtime.
   */
  typeInfo?: Deno.PointerObject;
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

/**
 * Per-call options. A call checks them before anything else: options that
 * are not an object, or an option that is not of its type, fail with
 * FfiError INVALID_ARGUMENT naming the option and the value (an option
 * whose value is `undefined` or `null` is absent; `options` itself may be
 * `undefined`, not `null`).
 *
 * `userData` is what XLA's execution context holds for `ExecutionContext_Get`
 * (ffi.h `Ctx<UserData<T>>`): pointers by type id, the type id being one the
 * runtime assigned ({@link Runtime.registerType}, also for a library's
 * `XLA_FFI_TypeId` storage). As in XLA, a null pointer and a type id given
 * twice are errors.
 *
 * @example
 * ```ts ignore
 * import { CallFrameBuilder, Runtime } from "@deno-xla/ffi";
 * using rt = new Runtime();
 * const id = rt.registerType("my.counter");
 * const counter = new BigInt64Array(1);
 * using frame = new CallFrameBuilder().build();
 * rt.callSync("my.uses_counter", frame, {
 *   userData: [[id, Deno.UnsafePointer.of(counter)]],
 * });
 * ```
 */
export interface CallOptions {
  /** Execution stage, an {@link ExecutionStage} number 0..3 (default EXECUTE). */
  stage?: ExecutionStage;
  /**
   * Run id (`RunId_Get`): a safe integer or a bigint in the int64 range;
   * default -1 (XLA's unset run id).
   */
  runId?: number | bigint;
  /**
   * Device ordinal (`DeviceOrdinal_Get`), an int32 integer; default -1 on
   * Host (unset), the runtime's device on CUDA.
   */
  deviceOrdinal?: number;
  /**
   * User data for `ExecutionContext_Get`: type id (a non-negative safe
   * integer or int64 bigint) → pointer object (not null, ids unique).
   */
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
export type HandlerTarget = HandlerRef | HandlerStages | string;

/** The platform a runtime can run: XLA's canonical name (lower case, cpu → host, gpu → cuda). */
function runtimePlatform(name: string): number | undefined {
  const canonical = name.toLowerCase();
  if (canonical === "host" || canonical === "cpu") return 0;
  if (canonical === "cuda" || canonical === "gpu") return 1;
  return undefined;
}

const NO_USER = new BigInt64Array(0);

/**
 * The routes of a call ({@link Runtime}'s one call path): where the plan of
 * a call runs it. SYNC: on this thread, to its end (a pending future fails:
 * `callSync`). CALL: a TS handler hosted by this thread begun here, anything
 * else off this thread (`call`). INLINE: as CALL, but a native handler begun
 * here too, as XLA's CPU runtime runs a synchronous handler inline
 * (`ffiCall`). THREADS: from runtime threads (`callOnThreads`).
 */
const SYNC = 0, CALL = 1, INLINE = 2, THREADS = 3, WAY = 3;
/** A route's flag: a frame `ffiCall` keeps, that nothing changes while its call is in flight. */
const KEPT = 4;

/** The name a call's option errors give it. */
function callName(way: number, hint: "builder" | "attrs"): string {
  if (way === SYNC) return "Runtime.callSync";
  if (way === THREADS) return "Runtime.callOnThreads";
  return hint === "attrs" ? "Runtime.ffiCall" : "Runtime.call";
}

/**
 * The out-parameter of `xla_ffi_deno_runtime_call`: the error of a call that
 * failed, or the call to await of one begun. Its own ArrayBuffer, so its
 * memory never moves: the call takes its address (made once, on first use).
 */
const callOutWords = new BigUint64Array(new ArrayBuffer(8));
let callOut: Deno.PointerObject | undefined;
/** What a call left in its out-parameter (read only when its result says there is something). */
function callOutPointer(): Deno.PointerObject {
  return Deno.UnsafePointer.create(callOutWords[0]!)!;
}
/** The promise of a call that ended before it returned. */
const DONE: Promise<void> = Promise.resolve();

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
 * On `CUDA` the runtime retains a device's primary context (made current on
 * the calling thread) and holds a stream: handlers get it from `Stream_Get`,
 * and every call runs with the context current (a TS handler called from a
 * runtime thread too, on the JS thread). `DeviceMemory_Allocate` returns
 * memory usable at once, on any stream and by synchronous copies, as XLA's
 * allocator does (from the device's memory pool, waiting only for the
 * runtime's own allocation stream; `cuMemAlloc` without pools);
 * `DeviceMemory_Free` frees after the work queued on the handlers' stream.
 * Frames then carry device memory
 * ({@link DeviceBuffer}); {@link Runtime.deviceArg} and
 * {@link Runtime.toHost} copy in and out.
 *
 * @example
 * ```ts
 * import { Runtime } from "@deno-xla/ffi";
 * using rt = new Runtime({ platform: "Host", threads: 2 });
 * console.log(rt.platform, rt.threads); // Host 2
 * ```
 *
 * @example
 * ```ts ignore
 * import { Runtime } from "@deno-xla/ffi";
 * using rt = new Runtime({ platform: "CUDA", device: 0 }); // UNAVAILABLE without a driver
 * console.log(rt.device, rt.stream?.owned); // 0 true
 * ```
 */
export class Runtime implements FfiHost {
  #ptr: Deno.PointerObject | null;
  #inflight = 0;
  #lookupOut = new BigUint64Array(6);
  #cache = new Map<string, HandlerStages>();
  /** What ffiCall keeps: handler instances per signature (made on first use). */
  #ffi: _FfiCalls | null = null;
  /** The canonical platform: "Host" or "CUDA". */
  readonly platform: "Host" | "CUDA";
  /** The thread-pool size. */
  readonly threads: number;
  #cuda: _CudaParts | null = null;
  /** The registry scope of names registered for isolated libraries' handlers. */
  readonly #isolatedScope: string;

  /** Creates a runtime; see {@link RuntimeOptions}. */
  constructor(options?: RuntimeOptions) {
    options ??= {};
    const minor = _apiMinor(options.apiVersion ?? NEWEST_API_VERSION, "Runtime");
    const p = runtimePlatform(options.platform ?? "Host");
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
    if (p === 0 && (options.device !== undefined || options.stream !== undefined)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        'The options device and stream are for CUDA runtimes (platform: "CUDA")',
      );
    }
    const sym = native();
    const ptr = sym.xla_ffi_deno_runtime_new(p, threads, minor);
    if (ptr === null) {
      throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Cannot start the runtime's threads");
    }
    if (p === 1) {
      try {
        this.#cuda = _attachCuda(ptr, options);
      } catch (e) {
        sym.xla_ffi_deno_runtime_free(ptr);
        throw e;
      }
    }
    this.#ptr = ptr;
    _register(this, "Runtime", reclaimRuntime, { ptr, cuda: this.#cuda });
    this.platform = p === 0 ? "Host" : "CUDA";
    this.threads = sym.xla_ffi_deno_runtime_num_threads(ptr);
    this.apiVersion = `0.${minor}` as ApiVersion;
    this.#isolatedScope = _isolatedScope(this.apiVersion, p);
  }

  /** The XLA FFI API version this runtime speaks. */
  readonly apiVersion: ApiVersion;

  /** The `XLA_FFI_Api*` handlers called by this runtime receive. */
  get api(): Deno.PointerObject {
    return native().xla_ffi_deno_runtime_api(this.#live())!;
  }

  /** The CUDA device ordinal (`undefined` on Host). */
  get device(): number | undefined {
    return this.#cuda?.context.device.ordinal;
  }

  /** The CUDA stream handlers get from `Stream_Get` (`undefined` on Host). */
  get stream(): Stream | undefined {
    return this.#cuda?.stream;
  }

  #gpu(what: string): _CudaParts {
    this.#live();
    const c = this.#cuda;
    if (c === null) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `Runtime.${what} needs a CUDA runtime; this one is ${this.platform}`,
      );
    }
    c.context.setCurrent();
    return c;
  }

  /**
   * Allocates a device buffer of `dtype` and `dims` in the runtime's
   * context (`cuMemAlloc`), zeroed in the runtime's stream order. The
   * caller closes it.
   *
   * @example
   * ```ts ignore
   * import { DataType, Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ platform: "CUDA" });
   * using y = rt.deviceBuffer(DataType.F32, [1024]);
   * ```
   */
  deviceBuffer(dtype: DataType, dims: readonly number[]): DeviceBuffer {
    return _deviceBuffer(this.#gpu("deviceBuffer").stream, dtype, dims);
  }

  /**
   * Copies a typed array to a new device buffer (dims default `[length]`,
   * dtype inferred from the array unless given), in the runtime's stream
   * order; returns when the copy is done. The caller closes the buffer.
   *
   * @example
   * ```ts ignore
   * import { CallFrameBuilder, Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ platform: "CUDA" });
   * using x = rt.deviceArg(new Float32Array([1, 2, 3, 4]), [2, 2]);
   * using frame = new CallFrameBuilder().arg(x).build();
   * ```
   */
  deviceArg(data: ArrayBufferView, dims?: readonly number[], dtype?: DataType): DeviceBuffer {
    return _deviceArg(this.#gpu("deviceArg").stream, data, dims, dtype);
  }

  /**
   * Waits for the runtime's stream, then copies a device buffer to the host:
   * into `out` when given (exactly the buffer's bytes), else into a new
   * typed array of the buffer's data type (see `viewAs`).
   *
   * @example
   * ```ts ignore
   * import { Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ platform: "CUDA" });
   * using x = rt.deviceArg(new Int32Array([1, 2, 3]));
   * console.log(rt.toHost(x)); // Int32Array(3) [ 1, 2, 3 ]
   * ```
   */
  toHost<T extends ArrayBufferView = DataTypedArray>(buffer: DeviceBuffer, out?: T): T {
    return _toHost(this.#gpu("toHost").stream, buffer, out);
  }

  /** Waits for all work queued on the runtime's stream (no-op on Host). */
  synchronize(): void {
    this.#live();
    this.#cuda?.stream.synchronize();
  }

  /**
   * The `XLA_FFI_Api*` of the default version (0.4); {@link apiTable} gives
   * any version's, and an instance's `api` its own.
   */
  static get api(): Deno.PointerObject {
    return native().xla_ffi_deno_runtime_newest_api()!;
  }

  /**
   * The embedded runtime's `XLA_FFI_Api*` of API version `version`.
   *
   * @example
   * ```ts
   * import { Runtime } from "@deno-xla/ffi";
   * const api = new Deno.UnsafePointerView(Runtime.apiTable("0.1"));
   * console.log(api.getInt32(16 + 20)); // minor version: 1
   * ```
   */
  static apiTable(version: ApiVersion): Deno.PointerObject {
    return native().xla_ffi_deno_runtime_api_version(_apiMinor(version, "Runtime.apiTable"))!;
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
   * Registrations are process-wide and permanent, as in XLA: the entry point
   * of a registered TS handler (`Handler`) is never reused for another handler,
   * so after its `close()` the name reports that the handler was released.
   */
  register(name: string, handler: HandlerRef | HandlerStages, options?: RegisterOptions): void {
    options ??= {};
    const rt = this.#live();
    handler = _asHandlerOrStages(handler, "Runtime.register");
    const bundle: HandlerStages = _isStages(handler) ? handler : { execute: handler };
    _registerBundle(rt, name, bundle, options.platform ?? this.platform, options.traits ?? 0);
    this.#cache.delete(name);
    const platform = runtimePlatform(options.platform ?? this.platform);
    _recordIsolated(_isolatedScope(this.apiVersion, platform), name, bundle);
  }

  /**
   * The bundle, traits and (0.2+) state type id registered under `name` in
   * this runtime's registry (NOT_FOUND with XLA's message).
   */
  lookup(
    name: string,
    platform?: string,
  ): { bundle: HandlerStages; traits: number; stateTypeId: number } {
    const rt = this.#live();
    const p = platform ?? this.platform;
    return _lookup(rt, name, p, this.#lookupOut, (e) => this.#notFound(e, name, p));
  }

  /** A lookup's NOT_FOUND with the closest registered name as its hint (the message stays XLA's). */
  #notFound(error: FfiError, name: string, platform: string): FfiError {
    if (error.code !== ErrorCode.NOT_FOUND) return error;
    let hint: string | undefined;
    const near = _closest(name, this.registeredNames(platform));
    if (near !== undefined) hint = `did you mean '${near}'?`;
    else {
      const other = runtimePlatform(platform) === 1 ? "Host" : "CUDA";
      if (this.registeredNames(other).includes(name)) hint = `it is registered for ${other}`;
    }
    return _withHint(error, hint);
  }

  /**
   * The names registered for `platform` (default: the runtime's) in this
   * runtime's registry: through {@link register} or the API table's
   * `Handler_Register`, by any code in the process.
   *
   * @example
   * ```ts
   * import { Ffi, Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ threads: 0 });
   * using h = Ffi.bind().to(() => {});
   * rt.register("doc.registered_names", h);
   * console.log(rt.registeredNames().includes("doc.registered_names")); // true
   * ```
   */
  registeredNames(platform?: string): string[] {
    return _registeredNames(this.#live(), platform ?? this.platform);
  }

  /**
   * Queries a handler's metadata (API version, traits, state type id) as this
   * runtime does at registration (0.1: with no `api` in the query frame; 0.2+:
   * with the runtime's table).
   */
  metadata(handler: HandlerRef): HandlerMetadata {
    const rt = this.#live();
    handler = _asHandler(handler, "Runtime.metadata");
    if ((handler as NativeHandler)._isolated !== undefined) {
      return _isolatedMetadata(handler as NativeHandler, this.apiVersion);
    }
    return _metadata(rt, handler);
  }

  /**
   * Registers a type name with this runtime's registration function
   * (`TypeId_Register` in 0.1, `Type_Register` with a TypeInfo from 0.2 on)
   * and returns its id. `id` 0 (the default) asks the runtime to assign the
   * next free one; a number registers that id; a {@link TypeIdRef} (a
   * library's `XLA_FFI_TypeId` storage, from {@link HandlerLibrary.typeId})
   * is registered in place: the runtime writes the id into it, as XLA does
   * for `XLA_FFI_REGISTER_TYPE`, so the library's handlers see it.
   *
   * @example
   * ```ts
   * import { Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ threads: 0 });
   * const id = rt.registerType(`doc.example.${crypto.randomUUID()}`);
   * console.log(id > 0); // true
   * ```
   */
  registerType(
    name: string,
    id?: number | bigint | TypeIdRef,
    options?: RegisterTypeOptions,
  ): number {
    id ??= 0;
    options ??= {};
    return _registerType(this.#live(), name, id, options);
  }

  #resolve(target: HandlerTarget, stage: ExecutionStage): Deno.PointerObject | null {
    if (typeof target !== "object" || target === null) {
      if (typeof target !== "string") target = _asHandlerOrStages(target, "A runtime call", true);
    } else if (!("execute" in target)) {
      const p = (target as HandlerRef).pointer;
      // A pointer object has no prototype, so no constructor (a cheaper test than getPrototypeOf).
      if (
        typeof p !== "object" || p === null ||
        (p as { constructor?: unknown }).constructor !== undefined
      ) {
        target = _asHandlerOrStages(target, "A runtime call", true);
      }
    } else {
      // A bundle: every stage given is a handler, and execute is there.
      _asHandlerOrStages(target, "A runtime call", true);
      if (target.execute == null) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `A runtime call: the bundle has no execute stage (got ${_show(target.execute)}); ` +
            `XLA requires one`,
        );
      }
    }
    if (typeof target !== "string" && !("execute" in target)) {
      _checkHandler(target.pointer, target.name);
      return target.pointer;
    }
    let bundle: HandlerStages;
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
    const h = _stageHandler(bundle, stage);
    if (h === null) return null;
    _checkHandler(h.pointer, h.name);
    return h.pointer;
  }

  #configure(frame: CallFrame, options: CallOptions | undefined): void {
    const sym = native();
    if (options === undefined) {
      if (frame._dirty) {
        sym.xla_ffi_deno_runtime_frame_configure(
          frame._live(),
          ExecutionStage.EXECUTE,
          -1n,
          -1,
          null,
          NO_USER,
          0,
        );
        frame._dirty = false;
      }
      return;
    }
    let user = NO_USER;
    let n = 0;
    if (options.userData != null) [user, n] = _userData(options.userData, "A runtime call");
    const ordinal = options.deviceOrdinal ?? this.#cuda?.context.device.ordinal ?? -1;
    if (!Number.isInteger(ordinal) || ordinal < -2147483648 || ordinal > 2147483647) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid device ordinal ${ordinal}`);
    }
    const device = this.#cuda?.context.device.ordinal;
    if (device !== undefined && options.deviceOrdinal !== undefined && ordinal !== device) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `This CUDA runtime runs on device ${device}; deviceOrdinal ${ordinal} differs`,
      );
    }
    sym.xla_ffi_deno_runtime_frame_configure(
      frame._live(),
      options.stage ?? ExecutionStage.EXECUTE,
      BigInt(options.runId ?? -1),
      ordinal,
      options.instance != null ? options.instance._live() : null,
      user,
      n,
    );
    frame._dirty = true;
  }

  /** What of a call's options crosses to an isolated library's process. */
  #isolation(frame: CallFrame, options: CallOptions | undefined): _IsolatedContext {
    return _isolatedContext(frame, options, this.apiVersion, this.#cuda !== null);
  }

  /** An asynchronous call of an isolated library's handler, counted in flight. */
  async #isolated(h: NativeHandler, op: number, frame: CallFrame, ctx: _IsolatedContext) {
    this.#inflight++;
    frame._inflight++;
    try {
      return await h._isolated!.call(op, h.name, h.name, frame, ctx);
    } finally {
      this.#inflight--;
      frame._inflight--;
    }
  }

  /** Host runtimes take host buffers, CUDA runtimes device buffers. */
  #placement(frame: CallFrame): void {
    if (this.#cuda !== null ? frame._hostBuffers === 0 : frame._deviceBuffers === 0) return;
    const which = frame._firstPlaced(this.#cuda !== null);
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      this.#cuda !== null
        ? `A CUDA runtime hands handlers device memory, but ${which} is a host typed array ` +
          `(copy it with Runtime.deviceArg)`
        : `A Host runtime hands handlers host memory, but ${which} is device memory`,
    );
  }

  #snapshot(rt: Deno.PointerObject, frame: CallFrame): Deno.PointerObject {
    const snap = native().xla_ffi_deno_runtime_call_new(rt, frame._live());
    if (snap === null) throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Out of memory");
    return snap;
  }

  /**
   * Calls a handler on the calling thread and returns when it returned.
   * Throws FfiError with the handler's code and message; FAILED_PRECONDITION
   * if it left a pending future (use {@link call} for asynchronous handlers).
   */
  callSync(target: HandlerTarget, frame: CallFrame, options?: CallOptions): void {
    this.#run(SYNC, target, frame, options, "builder");
  }

  /**
   * Calls a handler off the JS thread and settles when it returned and, if it
   * returned a future, when that future completed. A TS handler hosted by
   * this thread runs here at once (it would run on this thread anyway); the
   * call settles when the runtime sees its future complete. The frame's
   * typed arrays are used until then: one detached meanwhile (a transfer)
   * is kept alive until the call ends, which then rejects with
   * INVALID_ARGUMENT naming it.
   */
  call(target: HandlerTarget, frame: CallFrame, options?: CallOptions): Promise<void> {
    try {
      return (this.#run(CALL, target, frame, options, "builder") as Promise<void> | undefined) ??
        DONE;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Calls a handler `iterations` times from each of `threads` new runtime
   * threads (entirely in C), and reports counts and the first error.
   */
  callOnThreads(
    target: HandlerTarget,
    frame: CallFrame,
    options?: ThreadCallOptions,
  ): Promise<ThreadCallResult> {
    try {
      return this.#run(THREADS, target, frame, options, "builder") as Promise<ThreadCallResult>;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * The one way a call is made: `callSync`, `call`, `callOnThreads` and
   * `ffiCall`'s calls all come here with their route. The call is planned
   * once: options checked, an isolated library's handler sent to its
   * process, the stage's handler resolved (none: XLA skips the stage), the
   * frame configured, its operands checked to be of the runtime's placement
   * and alive; then where it runs follows from the route and the handler:
   * on this thread to its end (SYNC); begun on this thread, a future left
   * pending awaited without blocking (a TS handler hosted here, or a native
   * one of an INLINE call, as XLA's CPU runtime runs a synchronous handler
   * inline); or off this thread on a snapshot of the frame (CALL's native
   * handlers, and TS handlers hosted by another thread, a Worker's), once or
   * from runtime threads (THREADS). With KEPT (`ffiCall`'s kept frames: no
   * options, not guarded, on a Host runtime, bound to host arrays it checked
   * just before, of the frame's sizes) a call on this thread is made on the
   * frame itself, with no snapshot, since nothing changes or reuses such a
   * frame while its call is in flight.
   *
   * Returns undefined when the call ended before it returned (or throws its
   * error), else a Promise of its end (THREADS: of its counts).
   */
  #run(
    route: number,
    target: HandlerTarget,
    frame: CallFrame,
    options: ThreadCallOptions | undefined,
    hint: "builder" | "attrs",
  ): Promise<void | ThreadCallResult> | undefined {
    const rt = this.#live();
    const way = route & WAY;
    if (options !== undefined || !(frame instanceof CallFrame)) {
      _checkCall(frame, options, callName(way, hint));
    }
    let threads = 0;
    let iterations = 0;
    if (way === THREADS) {
      threads = options?.threads ?? 1;
      iterations = options?.iterations ?? 1;
      if (!Number.isInteger(threads) || threads < 1 || threads > 1024) {
        throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid thread count ${_show(threads)}`);
      }
      if (!Number.isSafeInteger(iterations) || iterations < 0) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `Invalid iteration count ${_show(iterations)}`,
        );
      }
    }
    // One field test on the hot path; the isolated branch does the rest.
    if (
      target != null &&
      ((target as NativeHandler)._isolated !== undefined || _isolatedNames.size !== 0)
    ) {
      const iso = _isolatedTarget(target, options, this.#isolatedScope);
      if (iso !== undefined) {
        return this.#runIsolated(way, iso, frame, options, threads, iterations);
      }
    }
    const fn = this.#resolve(target, options?.stage ?? ExecutionStage.EXECUTE);
    if (options !== undefined || frame._dirty) this.#configure(frame, options);
    if (fn === null) {
      // No handler for this stage: XLA skips it.
      return way === THREADS ? Promise.resolve({ ok: threads * iterations, failed: 0 }) : undefined;
    }
    if ((this.#cuda !== null ? frame._hostBuffers : frame._deviceBuffers) !== 0) {
      this.#placement(frame);
    }
    const guard = frame._guard;
    const kept = (route & KEPT) !== 0 && guard === null;
    if (frame._hostBuffers !== 0 && !kept) frame._checkHost();
    if (way === SYNC) {
      this.#callHere(rt, fn, target, frame, options?.instance, guard);
      return undefined;
    }
    return this.#start(way, kept, rt, fn, target, frame, options, hint, threads, iterations);
  }

  /** {@link #run} on this thread, to the call's end (SYNC). */
  #callHere(
    rt: Deno.PointerObject,
    fn: Deno.PointerObject,
    target: HandlerTarget,
    frame: CallFrame,
    inst: Instance | undefined,
    guard: _FrameGuard | null,
  ): void {
    const on = frame._live();
    callOut ??= Deno.UnsafePointer.of(callOutWords)!;
    this.#inflight++;
    frame._inflight++;
    if (inst) inst._inflight++;
    // A TS handler that fails during the call is the cause of its error, and only of its error.
    const mark = _openCall();
    let rc: number;
    try {
      if (guard !== null) guard.before();
      rc = native().xla_ffi_deno_runtime_call(CALL_MODE.sync, rt, fn, on, callOut);
    } catch (e) {
      this.#ended(frame, inst);
      _closeCall(mark);
      throw e;
    }
    this.#ended(frame, inst);
    this.#settle(rc === 1 ? callOutPointer() : null, target, frame, mark, "builder");
  }

  /** {@link #run} of a call that may end later: begun on this thread, or off it on a snapshot. */
  #start(
    way: number,
    kept: boolean,
    rt: Deno.PointerObject,
    fn: Deno.PointerObject,
    target: HandlerTarget,
    frame: CallFrame,
    options: CallOptions | undefined,
    hint: "builder" | "attrs",
    threads: number,
    iterations: number,
  ): Promise<void | ThreadCallResult> | undefined {
    const guard = frame._guard;
    const sym = native();
    // A TS handler hosted by another thread (a Worker's) is called from the pool.
    const here = way !== THREADS &&
      (_isTsEntry(fn) ? sym.xla_ffi_deno_handler_is_host() === 1 : way === INLINE);
    const snap = here && kept ? null : this.#snapshot(rt, frame);
    const on = snap ?? frame._live();
    callOut ??= Deno.UnsafePointer.of(callOutWords)!;
    const inst = options?.instance;
    this.#inflight++;
    frame._inflight++;
    if (inst) inst._inflight++;
    // A TS handler that fails during the call is the cause of its error, and only of its error.
    const mark = _openCall();
    let made = false;
    let rc = 0;
    try {
      if (guard !== null) guard.before();
      if (here) {
        _readyForBegun();
        made = true;
        rc = sym.xla_ffi_deno_runtime_call(
          kept ? CALL_MODE.beginFrame : CALL_MODE.begin,
          rt,
          fn,
          on,
          callOut,
        );
      }
    } catch (e) {
      if (snap !== null && !made) sym.xla_ffi_deno_runtime_call_finish(snap);
      this.#ended(frame, inst);
      _closeCall(mark);
      throw e;
    }
    if (here && rc !== 2) {
      this.#ended(frame, inst);
      this.#settle(rc === 1 ? callOutPointer() : null, target, frame, mark, hint);
      return undefined;
    }
    const call = here ? callOutPointer() : snap!;
    return this.#away(call, fn, here, target, frame, inst, mark, hint, threads, iterations);
  }

  /** {@link #run} of an isolated library's handler: in its process. */
  #runIsolated(
    way: number,
    h: NativeHandler,
    frame: CallFrame,
    options: CallOptions | undefined,
    threads: number,
    iterations: number,
  ): Promise<void | ThreadCallResult> | undefined {
    const ctx = this.#isolation(frame, options);
    if (way === SYNC) {
      h._isolated!.callSync(h.name, h.name, frame, ctx);
      return undefined;
    }
    if (way !== THREADS) return this.#isolated(h, _OP_CALL, frame, ctx).then(() => {});
    return this.#isolated(h, _OP_THREADS, frame, { ...ctx, threads, iterations })
      .then((r) => _isolatedThreadResult(r!));
  }

  /**
   * The rest of a call that did not end at once: begun here with a pending
   * future, or off this thread on a snapshot (`threads` 0: once, else from
   * runtime threads).
   */
  async #away(
    call: Deno.PointerObject,
    fn: Deno.PointerObject,
    begun: boolean,
    target: HandlerTarget,
    frame: CallFrame,
    inst: Instance | undefined,
    mark: number,
    hint: "builder" | "attrs",
    threads: number,
    iterations: number,
  ): Promise<void | ThreadCallResult> {
    let err: Deno.PointerObject | null;
    // JS code runs while the call is in flight: the memory of the frame's arrays stays alive until
    // it ends, whatever that code does to them, for handlers whose own threads may use it (a call
    // off this thread, a native handler's future completed by its threads); held before the first
    // await, in the caller's turn. Not for a TS handler whose Promise is pending on this thread:
    // a hold costs a nonblocking FFI call (about 18 µs a call; the async TS round trip is 2 µs).
    // Off this thread, the call itself carries its first eight arrays.
    const held = begun && _isTsEntry(fn) ? null : frame._hold(!begun);
    const counts = threads === 0 ? null : new BigInt64Array(3);
    const msg = threads === 0 ? null : new Uint8Array(1024);
    try {
      if (begun) {
        await _awaitBegun(call);
        err = native().xla_ffi_deno_runtime_call_finish(call);
      } else {
        err = await native().xla_ffi_deno_runtime_call_wait(
          call,
          fn,
          threads,
          threads === 0 ? 0n : BigInt(iterations),
          counts,
          msg,
          msg === null ? 0 : msg.length,
          ...held!.views,
        );
      }
    } catch (e) {
      _closeCall(mark);
      throw e;
    } finally {
      held?.release?.();
      this.#ended(frame, inst);
    }
    const lost = frame._lostDuringCall();
    if (lost !== undefined) {
      if (err !== null) _takeError(err);
      _closeCall(mark);
      throw lost;
    }
    if (threads === 0) {
      this.#settle(err, target, frame, mark, hint);
      return;
    }
    // From runtime threads: err only says that threads could not start.
    const result: ThreadCallResult = { ok: Number(counts![0]), failed: Number(counts![1]) };
    let first: FfiError | undefined;
    if (err === null && result.failed > 0) {
      const end = msg!.indexOf(0);
      first = _nativeError(
        Number(counts![2]),
        new TextDecoder().decode(msg!.subarray(0, end < 0 ? msg!.length : end)),
        { failed: true },
      );
    }
    // The first failure's cause is one of this call's; the other failures' are forgotten.
    _closeCall(mark, first);
    if (frame._guard !== null) _afterGuarded(frame._guard, target, null);
    if (err !== null) throw _takeError(err);
    if (first !== undefined) result.firstError = _withAttrHint(first, frame._implicitAttrs);
    return result;
  }

  /** A call is no longer in flight. */
  #ended(frame: CallFrame, inst: Instance | undefined): void {
    this.#inflight--;
    frame._inflight--;
    if (inst) inst._inflight--;
  }

  /** After a call: the guard's checks, its error (with its cause and hints) thrown. */
  #settle(
    err: Deno.PointerObject | null,
    target: HandlerTarget,
    frame: CallFrame,
    mark: number,
    hint: "builder" | "attrs",
  ): void {
    let error: FfiError | undefined;
    try {
      if (frame._guard !== null) _afterGuarded(frame._guard, target, err);
      if (err !== null) error = _takeError(err);
    } finally {
      _closeCall(mark, error);
    }
    if (error !== undefined) throw _withAttrHint(error, frame._implicitAttrs, hint);
  }

  /**
   * Calls a handler once as jax's `ffi_call` does, the way `Xla.ffiCall`
   * does on real XLA (same options, same results, same errors): allocates
   * the results from their specs (`shape: []` is a scalar), lays out the
   * call frame (once per signature: operand types and shapes and attribute
   * values; the frame is kept, up to 64 per runtime, and pointed at each
   * call's arrays), calls the target as XLA's CPU runtime would (a native
   * handler on the calling thread, as XLA runs a synchronous handler inline,
   * or on the pool with `offThread: true`; the future of an async handler
   * awaited; a bundle's instantiate stage runs once per
   * signature, with the attributes only, and its state is kept for later
   * calls of that signature until {@link clearCache}), lets go of the
   * caller's arrays and resolves to the results, each typed by its spec ({@link FfiCallResults}:
   * `{ dtype: DataType.F32, shape }` gives a `Float32Array`). A name not
   * registered is NOT_FOUND with the closest registered name as a hint. A
   * call with no results, or with results that all have a zero dimension,
   * runs only with `hasSideEffect: true`: without it, as jax and XLA drop
   * such a call, nothing is called or looked up and it resolves to its
   * results, empty (docs/runtime.md, "A call without results").
   * `target` is a registered name, a handler or
   * a bundle; a handler or bundle whose execute handler reports an API
   * version this runtime would not register is refused with
   * {@link register}'s INVALID_ARGUMENT (as `Xla.ffiCall` registers it, and
   * XLA checks the version there), under the name `Xla.ffiCall` would
   * register it with (`deno_xla.ffi_call.<n>`); {@link call} and
   * {@link callSync} call any handler as given. `inputOutputAliases` (`{ 0: 0 }`) makes a result the
   * argument's buffer: the handler sees one address for both; the caller's
   * array is copied first, never written. On a CUDA runtime the arguments
   * are copied to device buffers, the results allocated there and copied
   * back once the runtime's stream is done, and the buffers freed. Results
   * of up to 16 KiB are views into buffers shared with other results (each
   * its own bytes, as Node's small Buffers share a pool): transferring a
   * result's `buffer` (`postMessage(r, [r.buffer])`) detaches the others in
   * it, so transfer a copy (`r.slice()`); later calls use a new buffer.
   *
   * @example
   * ```ts
   * import { DataType, Ffi, Runtime } from "@deno-xla/ffi";
   * using sum = Ffi.bind().arg(DataType.F32).ret(DataType.F32, 0).to((x, out) => {
   *   out.typed()[0] = x.typed().reduce((a, b) => a + b, 0);
   * });
   * using rt = new Runtime({ threads: 0 });
   * const [total] = await rt.ffiCall(sum, {
   *   args: [new Float32Array([1, 2, 3])],
   *   results: [{ dtype: DataType.F32, shape: [] }], // a scalar
   * });
   * console.log(total); // Float32Array(1) [ 6 ]
   * ```
   */
  ffiCall<const R extends readonly ArraySpec[]>(
    target: FfiCallTarget,
    options: FfiCallOptions<R>,
  ): Promise<FfiCallResults<R>> {
    this.#ffi ??= new _FfiCalls({
      live: () => {
        this.#live();
      },
      named: (name) => {
        let b = this.#cache.get(name);
        if (!b) {
          b = this.lookup(name).bundle;
          this.#cache.set(name, b);
        }
        return b;
      },
      call: (target, frame, options, inline, kept) =>
        this.#run(
          (inline ? INLINE : CALL) | (kept ? KEPT : 0),
          target,
          frame,
          options,
          "attrs",
        ) as Promise<void> | undefined,
      checkVersion: (handler, name) => this.#checkVersion(handler, name),
      cuda: this.#cuda !== null ? this : null,
    });
    return this.#ffi.call(target, options) as Promise<FfiCallResults<R>>;
  }

  /**
   * Refuses a handler whose reported API version this runtime would not
   * register (native/runtime_registry.c's rule and message, XLA's): 0.1
   * takes 0.1 only, 0.2 and later take 0.1 up to their own version.
   */
  #checkVersion(handler: HandlerRef, name: string): void {
    const { major, minor } = this.metadata(handler).apiVersion;
    const v = Number(this.apiVersion.slice(2));
    const ok = v === 1 ? major === 0 && minor === 1 : major === 0 && minor >= 1 && minor <= v;
    if (ok) return;
    const where = `${name} on platform ${this.platform} (canonical ${this.platform.toLowerCase()})`;
    const why = `failed because the handler's API version (${major}.${minor}) is incompatible ` +
      `with the framework's API version (0.${v})`;
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      v === 1
        ? `FFI handler registration for ${where} ${why}`
        : `XLA FFI handler registration for ${where} ${why}. Minimum supported API version is (0.1).`,
    );
  }

  /**
   * Forgets the handler instances {@link ffiCall} keeps per signature
   * (running their states' deleters), so the next call instantiates again,
   * and frees the call frames it keeps. Fails with FAILED_PRECONDITION,
   * forgetting nothing, while an `ffiCall` using a kept instance is in flight.
   *
   * @example
   * ```ts
   * import { Runtime } from "@deno-xla/ffi";
   * using rt = new Runtime({ threads: 0 });
   * rt.clearCache(); // nothing kept yet
   * ```
   */
  clearCache(): void {
    this.#ffi?.clear();
  }

  /**
   * Runs the instantiate stage with a new instance and returns the instance
   * (its state is kept for later calls with `{ instance }`).
   */
  async instantiate(
    target: HandlerTarget,
    frame: CallFrame,
    options?: Omit<CallOptions, "stage" | "instance">,
  ): Promise<Instance> {
    this.#live();
    _checkCall(frame, options, "Runtime.instantiate");
    const inst = _newInstance();
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
   * Fails while calls are in flight. Never waits long on pool tasks: it
   * joins the pool when its tasks finish within 50 ms; tasks still queued or
   * running after that (one may wait for the JS thread, e.g. a TS handler
   * or a JS callback) are joined, and the runtime freed, by a native thread
   * once they finished; a `HandlerLibrary` closed meanwhile is unloaded
   * after that. {@link closeAsync} waits for everything.
   */
  close(): void {
    if (this.#ptr === null) return;
    if (this.#inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The runtime has ${this.#inflight} call(s) in flight; await them before close()`,
      );
    }
    this.clearCache();
    _unregister(this);
    native().xla_ffi_deno_runtime_free(this.#ptr);
    this.#ptr = null;
    this.#releaseCuda();
  }

  /** Destroys an owned stream and releases the primary context (CUDA runtimes). */
  #releaseCuda(): void {
    const c = this.#cuda;
    if (c === null) return;
    this.#cuda = null;
    _releaseCuda(c);
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
    this.clearCache();
    const p = this.#ptr;
    this.#ptr = null;
    _unregister(this);
    try {
      await native().xla_ffi_deno_runtime_free_async(p);
    } finally {
      this.#releaseCuda();
    }
  }

  /** Same as {@link closeAsync}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.closeAsync();
  }
}

/**
 * Frees a Runtime collected without close(): its pool is joined off the JS
 * thread (no call can be in flight: a call keeps its runtime reachable), then
 * a CUDA runtime's stream and context are released.
 */
function reclaimRuntime(held: { ptr: Deno.PointerObject; cuda: _CudaParts | null }): void {
  native().xla_ffi_deno_runtime_free_async(held.ptr).catch(() => {}).finally(() => {
    if (held.cuda !== null) _releaseCuda(held.cuda);
  });
}
