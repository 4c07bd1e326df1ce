/**
 * The binding DSL for TS handlers, in the spirit of ffi.h's `Ffi::Bind()`:
 * declare arguments, results, attributes and context values, then `.to(fn)`
 * makes an `XLA_FFI_Handler*` any XLA runtime can call. TypeScript infers
 * the handler's parameter types from the binding.
 *
 * @module
 */
import { DataType, ErrorCode, ExecutionStage, type HandlerTraits } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _apiMinor, type ApiVersion, NEWEST_API_VERSION } from "../abi/version.ts";
import { type AttrKind, attrSpecOf, type Dictionary, type ScalarKind } from "./_attrs.ts";
import type { FfiBuffer, RemainingBuffers } from "./buffer.ts";
import type { ScratchAllocator, ThreadPool } from "./context.ts";
import {
  _acquire,
  _reclaimSlot,
  _release,
  _slotPointer,
  type CtxKind,
  Entry,
  type Op,
} from "./host.ts";
import { _register, _unregister } from "../_resources.ts";
import { _describeHandler } from "../native/lib.ts";

/** The JS type of an attribute kind. */
export type AttrValueOf<K extends AttrKind> = K extends "bool" ? boolean
  : K extends "string" ? string
  : K extends "dict" ? Dictionary
  : K extends "i64n" | "u64n" ? bigint
  : K extends "i64n[]" | "u64n[]" ? bigint[]
  : K extends `${string}[]` ? number[]
  : number;

/** The JS type of a context kind. */
export type CtxValueOf<K extends CtxKind> = K extends "scratch" ? ScratchAllocator
  : K extends "threadPool" ? ThreadPool
  : number;

/** Options of {@link Binding.to}. */
export interface HandlerOptions {
  /** Traits reported in the metadata reply (e.g. COMMAND_BUFFER_COMPATIBLE). */
  traits?: HandlerTraits | number;
  /**
   * The XLA FFI API version the handler reports in its metadata reply and
   * whose decoding rules it follows (ffi.h of that version: 0.1 checks counts
   * even when none are bound and prints no stage before arity messages).
   * Default: the newest both sides speak, i.e. "0.4" (jaxlib 0.11), or the
   * calling runtime's version where that is older and at least 0.2 (from
   * the `api` of the metadata query): so an unversioned handler registers
   * with jaxlib 0.10's XLA (0.3), which refuses a 0.4 handler, and with an
   * embedded `Runtime({ apiVersion: "0.3" })`. A 0.1 runtime passes no `api`
   * and is answered "0.4" (it takes 0.1 handlers only). A version given
   * here is reported as given, and `Xla.register` refuses one newer than
   * the hosted XLA's. Whatever it reports, the handler uses the
   * State/Type layouts of the runtime that calls it (from
   * `api->api_version`). A `[major, minor]` pair is reported as given (to test
   * a runtime's version check) and decoded by the nearest version's rules.
   */
  apiVersion?: ApiVersion | readonly [number, number];
  /**
   * Calls from threads other than the JS thread get a future within the
   * settle wait (`settleWaitUs`) instead of blocking until JS ran. Default:
   * true for `async` functions.
   */
  async?: boolean;
  /**
   * The settled-early path of a handler that returns a Promise (or a
   * `Future`) when called from another thread (XLA's): how long, in
   * microseconds, that thread waits for it to settle before it takes a
   * pending future. One settled within it returns XLA an available future
   * (as a C++ handler returning a ready `ffi::Future` does), which XLA
   * continues on at once; one that takes longer returns the pending future,
   * completed when it settles, so the calling thread never waits longer than
   * this for it. 0: never wait. Default 50; at most 1000. Calls on the JS
   * thread itself are not affected.
   */
  settleWaitUs?: number;
}

/** The default of HandlerOptions.settleWaitUs (µs; docs/threading.md says how it was chosen). */
const DEFAULT_SETTLE_WAIT_US = 50;

/**
 * A TS function exposed as an `XLA_FFI_Handler*`. Close it when no runtime
 * will call it again; later calls into its entry point return an error. An
 * open handler does not keep the process alive by itself: it waits only for
 * calls being served and for the handler's pending Promises. Calls from other
 * threads run when the JS thread is free (awaiting); never wait for them in a
 * blocking native call on the JS thread.
 *
 * @example
 * ```ts ignore
 * using h = Ffi.bind().arg(DataType.F32).to((x) => console.log(x.dims));
 * console.log(h.pointer); // pass to Handler_Register or a call frame invoker
 * ```
 */
export class Handler {
  /** The execution stage this handler is bound to. */
  readonly stage: ExecutionStage;
  readonly #slot: number;
  readonly #pointer: Deno.PointerObject;
  #open = true;

  /** @internal made by {@link Binding.to}. */
  constructor(slot: number, stage: ExecutionStage) {
    this.#slot = slot;
    this.stage = stage;
    this.#pointer = _slotPointer(slot);
    _register(this, "Handler", _reclaimSlot, slot);
  }

  /** The entry point (`XLA_FFI_Handler*`). */
  get pointer(): Deno.PointerObject {
    if (!this.#open) throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The handler is closed");
    return this.#pointer;
  }

  /** The entry point's address. */
  get address(): bigint {
    return Deno.UnsafePointer.value(this.pointer);
  }

  /** The slot index in the entry-point pool. */
  get slot(): number {
    return this.#slot;
  }

  /** True until {@link close}. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Releases the entry point for reuse. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    _unregister(this);
    _release(this.#slot);
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Handlers for the four execution stages (`XLA_FFI_Handler_Bundle`);
 * `execute` is required. Instantiate may return a state object that later
 * stages read with `.state()`.
 *
 * @example
 * ```ts ignore
 * using bundle = new HandlerBundle({
 *   instantiate: Ffi.bindInstantiate().to(() => ({ calls: 0 })),
 *   execute: Ffi.bind().state<{ calls: number }>().to((s) => void s.calls++),
 * });
 * ```
 */
export class HandlerBundle {
  /** Instantiate-stage handler, if any. */
  readonly instantiate?: Handler;
  /** Prepare-stage handler, if any. */
  readonly prepare?: Handler;
  /** Initialize-stage handler, if any. */
  readonly initialize?: Handler;
  /** Execute-stage handler. */
  readonly execute: Handler;

  /** Groups handlers; checks each is bound to its stage. */
  constructor(
    handlers: { instantiate?: Handler; prepare?: Handler; initialize?: Handler; execute: Handler },
  ) {
    const want: [keyof typeof handlers, ExecutionStage][] = [
      ["instantiate", ExecutionStage.INSTANTIATE],
      ["prepare", ExecutionStage.PREPARE],
      ["initialize", ExecutionStage.INITIALIZE],
      ["execute", ExecutionStage.EXECUTE],
    ];
    if (handlers.execute === undefined) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "A handler bundle needs an execute handler");
    }
    for (const [k, stage] of want) {
      const h = handlers[k];
      if (h !== undefined && h.stage !== stage) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `The ${k} handler of a bundle is bound to stage ${ExecutionStage[h.stage]}`,
        );
      }
    }
    this.instantiate = handlers.instantiate;
    this.prepare = handlers.prepare;
    this.initialize = handlers.initialize;
    this.execute = handlers.execute;
  }

  /** The four entry points (null where absent), in bundle order. */
  pointers(): [Deno.PointerValue, Deno.PointerValue, Deno.PointerValue, Deno.PointerValue] {
    return [
      this.instantiate?.pointer ?? null,
      this.prepare?.pointer ?? null,
      this.initialize?.pointer ?? null,
      this.execute.pointer,
    ];
  }

  /** Closes every handler of the bundle. */
  close(): void {
    this.instantiate?.close();
    this.prepare?.close();
    this.initialize?.close();
    this.execute.close();
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * A binding under construction; each method appends an operand and returns
 * a binding whose handler takes one more parameter.
 *
 * @example
 * ```ts ignore
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * using saxpy = Ffi.bind()
 *   .arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
 *   .to((x, y, alpha) => {
 *     const xs = x.typed(), ys = y.typed();
 *     for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]! + ys[i]!;
 *   });
 * ```
 */
export class Binding<P extends unknown[] = []> {
  readonly #stage: ExecutionStage;
  readonly #ops: Op[];

  /** @internal use {@link Ffi}. */
  constructor(stage: ExecutionStage, ops: Op[] = []) {
    this.#stage = stage;
    this.#ops = ops;
  }

  #add<Q extends unknown[]>(op: Op): Binding<Q> {
    return new Binding<Q>(this.#stage, [...this.#ops, op]);
  }

  #noBufferAfter(kind: "arg" | "ret"): void {
    const opt = this.#ops.some((o) => o.k === kind && o.optional);
    const rem = this.#ops.some((o) => o.k === `${kind}s`);
    const what = kind === "arg" ? "Arg" : "Ret";
    if (rem) throw new TypeError(`${what} cannot follow Remaining${what}s`);
    if (opt) throw new TypeError(`${what} cannot follow Optional${what}`);
  }

  /** A buffer argument of any dtype and rank (`AnyBuffer`). */
  arg(): Binding<[...P, FfiBuffer]>;
  /** A buffer argument of `dtype`, with an exact `rank` when given (`Buffer<dtype, rank>`). */
  arg<D extends DataType>(dtype: D, rank?: number): Binding<[...P, FfiBuffer<D>]>;
  arg(dtype?: DataType, rank?: number): Binding<unknown[]> {
    this.#noBufferAfter("arg");
    return this.#add({ k: "arg", dtype: dtype ?? -1, rank: rank ?? -1, optional: false });
  }

  /** A token argument (`Token` = rank-0 TOKEN buffer). */
  token(): Binding<[...P, FfiBuffer<DataType.TOKEN>]> {
    return this.arg(DataType.TOKEN, 0);
  }

  /** An optional buffer argument: undefined when the frame has no more arguments. */
  optionalArg<D extends DataType = DataType>(
    dtype?: D,
    rank?: number,
  ): Binding<[...P, FfiBuffer<D> | undefined]> {
    if (this.#ops.some((o) => o.k === "args")) {
      throw new TypeError("OptionalArg cannot follow RemainingArgs");
    }
    return this.#add({ k: "arg", dtype: dtype ?? -1, rank: rank ?? -1, optional: true });
  }

  /** All further arguments, decoded on access. */
  remainingArgs(): Binding<[...P, RemainingBuffers]> {
    if (this.#ops.some((o) => o.k === "args")) throw new TypeError("RemainingArgs bound twice");
    return this.#add({ k: "args" });
  }

  /** A buffer result of any dtype and rank. */
  ret(): Binding<[...P, FfiBuffer]>;
  /** A buffer result of `dtype`, with an exact `rank` when given. */
  ret<D extends DataType>(dtype: D, rank?: number): Binding<[...P, FfiBuffer<D>]>;
  ret(dtype?: DataType, rank?: number): Binding<unknown[]> {
    this.#noBufferAfter("ret");
    return this.#add({ k: "ret", dtype: dtype ?? -1, rank: rank ?? -1, optional: false });
  }

  /** A token result. */
  tokenRet(): Binding<[...P, FfiBuffer<DataType.TOKEN>]> {
    return this.ret(DataType.TOKEN, 0);
  }

  /** An optional buffer result. */
  optionalRet<D extends DataType = DataType>(
    dtype?: D,
    rank?: number,
  ): Binding<[...P, FfiBuffer<D> | undefined]> {
    if (this.#ops.some((o) => o.k === "rets")) {
      throw new TypeError("OptionalRet cannot follow RemainingRets");
    }
    return this.#add({ k: "ret", dtype: dtype ?? -1, rank: rank ?? -1, optional: true });
  }

  /** All further results, decoded on access. */
  remainingRets(): Binding<[...P, RemainingBuffers]> {
    if (this.#ops.some((o) => o.k === "rets")) throw new TypeError("RemainingRets bound twice");
    return this.#add({ k: "rets" });
  }

  /** An attribute by name, of a kind (`"f32"`, `"i64[]"`, `"string"`, `"dict"`, `"pointer"`…). */
  attr<K extends AttrKind>(name: string, kind: K): Binding<[...P, AttrValueOf<K>]> {
    this.#noAttrsMix();
    return this.#add({ k: "attr", name, spec: attrSpecOf(kind) });
  }

  /**
   * An optional attribute: `undefined` when the frame has no attribute of
   * that name (an extension: ffi.h has none). A binding with optional
   * attributes finds its attributes by name instead of by sorted position:
   * the frame must hold every required one, may hold each optional one, and
   * nothing else ("Wrong number of attributes: expected R to N (O optional)
   * but got M", "Unexpected attribute(s) with name(s): …").
   *
   * @example
   * ```ts
   * import { CallFrameBuilder, DataType, Ffi, Runtime, scalar } from "@deno-xla/ffi";
   * using rt = new Runtime({ threads: 0 });
   * const seen: (number | undefined)[] = [];
   * using h = Ffi.bind().attr("n", "i32").optionalAttr("scale", "f32")
   *   .to((n, scale) => void seen.push(n * (scale ?? 1)));
   * using a = new CallFrameBuilder().attr("n", scalar(DataType.S32, 3)).build();
   * using b = new CallFrameBuilder().attr("n", scalar(DataType.S32, 3))
   *   .attr("scale", scalar(DataType.F32, 2)).build();
   * rt.callSync(h, a);
   * rt.callSync(h, b);
   * console.log(seen); // [3, 6]
   * ```
   */
  optionalAttr<K extends AttrKind>(
    name: string,
    kind: K,
  ): Binding<[...P, AttrValueOf<K> | undefined]> {
    this.#noAttrsMix();
    return this.#add({ k: "attr", name, spec: attrSpecOf(kind), optional: true });
  }

  /** An enum attribute: an integer scalar of `kind` restricted to `allowed` values. */
  enumAttr<V extends number>(
    name: string,
    kind: ScalarKind,
    allowed: readonly V[],
  ): Binding<[...P, V]> {
    this.#noAttrsMix();
    return this.#add({ k: "attr", name, spec: attrSpecOf(kind, allowed) });
  }

  /** The whole attribute dictionary, looked up lazily by name. */
  attrs(): Binding<[...P, Dictionary]> {
    if (this.#ops.some((o) => o.k === "attr" || o.k === "attrs")) {
      throw new TypeError("Attrs cannot be mixed with Attr or bound twice");
    }
    return this.#add({ k: "attrs" });
  }

  #noAttrsMix(): void {
    if (this.#ops.some((o) => o.k === "attrs")) {
      throw new TypeError("Attr cannot be mixed with Attrs");
    }
  }

  /** A context value: run id, device ordinal, stream, api, execution context, stage, scratch, thread pool. */
  ctx<K extends CtxKind>(kind: K): Binding<[...P, CtxValueOf<K>]> {
    return this.#add({ k: "ctx", what: kind });
  }

  /** The address of user data registered in the execution context under `typeId`. */
  userData(typeId: number): Binding<[...P, number]> {
    return this.#add({ k: "userData", typeId });
  }

  /**
   * The state object a stage's handler returned: the instantiate stage's by
   * default (ffi.h `State<T>`); under API 0.3 runtimes prepare and
   * initialize handlers may set states of their own, read with `stage`.
   */
  state<T = unknown>(stage: ExecutionStage = ExecutionStage.INSTANTIATE): Binding<[...P, T]> {
    if (stage === ExecutionStage.EXECUTE || ExecutionStage[stage] === undefined) {
      throw new TypeError(`The ${ExecutionStage[stage] ?? stage} stage has no state`);
    }
    return this.#add({ k: "state", stage });
  }

  /** Makes the handler. */
  to(fn: (...args: P) => unknown, options?: HandlerOptions): Handler {
    options ??= {};
    if (typeof fn !== "function") throw new TypeError("Binding.to needs a function");
    const v = options.apiVersion ?? NEWEST_API_VERSION;
    const version: readonly [number, number] = typeof v === "string"
      ? [0, _apiMinor(v, "Binding.to")]
      : v;
    const entry = new Entry(
      [...this.#ops],
      fn as (...args: unknown[]) => unknown,
      this.#stage,
      version,
    );
    const isAsync = options.async ?? fn.constructor?.name === "AsyncFunction";
    const wait = options.settleWaitUs ?? DEFAULT_SETTLE_WAIT_US;
    if (!(wait >= 0 && wait <= 1000)) {
      throw new RangeError(`settleWaitUs must be 0 to 1000 µs, got ${wait}`);
    }
    const slot = _acquire(
      entry,
      version,
      options.traits ?? 0,
      isAsync,
      Math.round(wait * 1000),
      options.apiVersion === undefined,
    );
    const h = new Handler(slot, this.#stage);
    // A crash while it runs (a raw pointer read through FFI) names it.
    _describeHandler(h.pointer, fn.name || `anonymous, entry point ${slot}`, "");
    return h;
  }
}

/** The shape of {@link Ffi}. */
export interface FfiBinder {
  /** A binding for a stage (default execute). */
  bind(stage?: ExecutionStage): Binding;
  /** A binding for the instantiate stage (its handler may return a state object). */
  bindInstantiate(): Binding;
  /** A binding for the prepare stage. */
  bindPrepare(): Binding;
  /** A binding for the initialize stage. */
  bindInitialize(): Binding;
  /** A binding for the execute stage. */
  bindExecute(): Binding;
}

/**
 * Entry to the binding DSL: `Ffi.bind()` binds the execute stage;
 * `bindInstantiate/Prepare/Initialize/Execute` choose the stage.
 *
 * @example
 * ```ts ignore
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * using h = Ffi.bind().arg(DataType.F32, 2).ctx("runId").to((x, runId) => {
 *   console.log(x.dims, runId);
 * });
 * ```
 */
export const Ffi: FfiBinder = {
  /** A binding for the execute stage. */
  bind(stage: ExecutionStage = ExecutionStage.EXECUTE): Binding {
    return new Binding(stage);
  },
  /** A binding for the instantiate stage (its handler may return a state object). */
  bindInstantiate(): Binding {
    return new Binding(ExecutionStage.INSTANTIATE);
  },
  /** A binding for the prepare stage. */
  bindPrepare(): Binding {
    return new Binding(ExecutionStage.PREPARE);
  },
  /** A binding for the initialize stage. */
  bindInitialize(): Binding {
    return new Binding(ExecutionStage.INITIALIZE);
  },
  /** A binding for the execute stage. */
  bindExecute(): Binding {
    return new Binding(ExecutionStage.EXECUTE);
  },
};
