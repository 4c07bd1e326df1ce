/**
 * Real XLA in the Deno process: {@link Xla} hosts CPython with jax/jaxlib
 * (CPU), registers TS and C handlers as XLA FFI targets, and runs jitted
 * programs whose custom calls are those handlers.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { _withHint, FfiError } from "../errors.ts";
import { _withTypeRemedy } from "../runtime/_registry.ts";
import { _describeRegistered, native } from "../native/lib.ts";
import {
  _asHandlerOrStages,
  _checkHandler,
  type HandlerRef,
  type HandlerStages,
  TypeIdRef,
} from "../runtime/handler_library.ts";
import {
  _checkAliases,
  _checkCallOptions,
  _identity,
  type ArraySpec,
  type FfiCallOptions,
  type FfiCallResults,
  type FfiCallTarget,
  type FfiHost,
  type FfiRegisterTypeOptions,
} from "../runtime/ffi_call.ts";
import { _withAttrHint } from "../runtime/_hints.ts";
import { _checkLayouts, _jaxLayouts } from "../runtime/_layout.ts";
import type { DataTypedArray } from "../abi/dtype.ts";
import { _closest } from "../_closest.ts";
import {
  type _Arg,
  _attrHints,
  _encodeAttrs,
  _normaliseSpec,
  type _Reply,
  type XlaArg,
  type XlaArray,
  type XlaArraySpec,
} from "./_codec.ts";
import { _hostPython, _request, _requestSync, PythonError } from "./_host.ts";
import {
  _FfiPlans,
  type _FfiSignature,
  _normaliseArgs,
  _normaliseSpecs,
  _Plan,
  _Plans,
} from "./_prepared.ts";
import type {
  _FfiCallRequest,
  _HostOp,
  _InitReply,
  _ReplyHeaders,
  _RequestOf,
  _Unhosted,
} from "./_protocol.ts";
import { _pin } from "../handler/host.ts";
import { _register, _unregister } from "../_resources.ts";
import { findPython, probePython, type PythonInfo } from "./interpreter.ts";
import {
  _distributedRequest,
  _inJob,
  _markJoined,
  _rendezvous,
  type DistributedInfo,
  type DistributedOptions,
} from "./_distributed.ts";
import { _checkFfiApi, _checkHandlerVersion, _ffiApiSupport } from "./_ffi_api.ts";
import { Runtime } from "../runtime/runtime.ts";
import type { ApiVersion } from "../abi/version.ts";
import { _moduleHandlers, type HandlersFromOptions, type ModuleHandlers } from "./modules.ts";

/** Options of {@link Xla.open}. */
export interface XlaOptions {
  /** The Python interpreter (path or command); default `$XLA_FFI_DENO_PYTHON`, else `python3`. */
  python?: string;
  /**
   * XLA flags (e.g. `--xla_force_host_platform_device_count=4`), appended to
   * `$XLA_FLAGS`. They apply only when jax is first imported in the process:
   * a later `open` asking for other flags fails with FAILED_PRECONDITION.
   */
  xlaFlags?: readonly string[];
  /**
   * Environment variables set in the hosted Python's `os.environ` (which is
   * the process environment) before jax is imported. `JAX_PLATFORMS` is
   * `cpu` unless set here or in the environment.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * The backend jax starts: `"cpu"` (the default, unless `JAX_PLATFORMS` is
   * set), `"cuda"` (XLA:GPU through jax's CUDA plugin: docs/xla-gpu.md), or
   * `"auto"` (jax's own choice: a GPU when its plugin finds one, else the
   * CPU). Sets `JAX_PLATFORMS` for the hosted Python.
   */
  platform?: "cpu" | "cuda" | "auto";
  /** 64-bit types in jax (`jax_enable_x64`); default true, so F64/S64/U64 arrays stay 64-bit. */
  x64?: boolean;
  /** Also print the traceback of every Python error to stderr (default false). */
  tracebacks?: boolean;
  /**
   * Join a job of several processes running one jax program
   * (`jax.distributed.initialize`; docs/distributed.md). Only the first
   * `open` of a process can join; later ones share its job.
   */
  distributed?: DistributedOptions;
}

/** Versions of what an {@link Xla} host runs. */
export interface XlaVersion {
  /** `jax.__version__`. */
  readonly jax: string;
  /** `jaxlib.__version__`. */
  readonly jaxlib: string;
  /** The XLA FFI API version jaxlib's headers declare (null if they are not shipped). */
  readonly ffiApi: { readonly major: number; readonly minor: number } | null;
  /** The hosted Python's version. */
  readonly python: string;
}

/** Options of {@link Xla.register}. */
export interface XlaRegisterOptions {
  /**
   * The platform: `"cpu"` or `"CUDA"` (XLA:GPU); default the host's
   * (`"CUDA"` when {@link Xla.platform} is `"gpu"`, else `"cpu"`).
   */
  platform?: string;
  /** Handler traits passed to the registration (e.g. COMMAND_BUFFER_COMPATIBLE). */
  traits?: number;
  /**
   * Guard the execute stage (docs/faults.md, "Under real XLA"): XLA calls a
   * guarded entry point that gives the handler shadow results with canaries
   * before and after each, and copies of the arguments to compare. A write
   * past the end or before the start of a result, or into an argument, fails
   * the call with DATA_LOSS naming the handler, the operand and the byte
   * offset; XLA's buffers are only written, within bounds, after a clean
   * return. The `"cpu"` platform only (XLA:GPU buffers are device memory).
   *
   * @example
   * ```ts ignore
   * using lib = HandlerLibrary.open("./libmine.so");
   * await xla.register("my.op", lib.handler("my_op"), { guard: true });
   * ```
   */
  guard?: boolean;
  /**
   * Hand every `run` and `ffiCall` of a program calling this target to a
   * worker, so the event loop stays free while it runs. By default a
   * program that calls no TS handler starts on the JS thread, as a jitted
   * function's call starts in Python, and XLA runs a program on small arrays
   * inline there: a native handler that takes long on small arrays (one
   * that waits on I/O, say) then holds the event loop meanwhile. TS handlers
   * are always handed off so. (`Xla.ffiCall`'s own `offThread: true` does
   * it for one call.)
   *
   * @example
   * ```ts ignore
   * await xla.register("my.fetch", lib.handler("my_fetch"), { offThread: true });
   * ```
   */
  offThread?: boolean;
}

export type { FfiCallOptions, FfiCallResults, VmapMethod } from "../runtime/ffi_call.ts";

/** Options of {@link Xla.registerType}. */
export interface XlaRegisterTypeOptions extends FfiRegisterTypeOptions {
  /** The platform (default `"cpu"`). */
  platform?: string;
}

/** Options of {@link Xla.jit}. */
export interface JitOptions {
  /** `"python"` (a JAX function) or `"stablehlo"` (MLIR text); default: guessed from the text. */
  format?: "python" | "stablehlo";
  /** Python: the function to jit; default the one function the source defines. */
  entry?: string;
  /**
   * Python: compile now for arguments of these types and shapes (errors show
   * here, and {@link XlaProgram.outputs} is known); otherwise jax compiles at
   * the first run and again for each new argument signature.
   */
  args?: readonly XlaArraySpec[];
  /** A file name for Python tracebacks. */
  filename?: string;
}

/** What the hosted Python holds (for leak checks). */
export interface PythonStats {
  /** `sys.getallocatedblocks()` after a `gc.collect()`. */
  readonly allocatedBlocks: number;
  /** Objects the garbage collector tracks. */
  readonly gcObjects: number;
  /** Open Xla hosts in the process. */
  readonly hosts: number;
  /** Open programs of this host. */
  readonly programs: number;
  /** Cached `ffiCall` signatures of this host. */
  readonly ffiCache: number;
  /** Replies kept because they did not fit the first buffer (0 when idle). */
  readonly pending: number;
  /** Python threads. */
  readonly threads: number;
  /**
   * Calls of {@link XlaProgram.run} and {@link Xla.ffiCall} in the process
   * that started on the JS thread, as a jitted function's call starts in
   * Python (their program calls no target registered with a TS handler;
   * docs/real-xla.md, "Per call from TypeScript").
   */
  readonly dispatched: number;
  /** Of {@link dispatched}, those whose results were not ready at once: a worker waited for them. */
  readonly dispatchWaited: number;
  /**
   * Prepared calls in the process that the native path ran: a call of
   * `run`, `runSync` or `ffiCall` repeating its last call's request, whose
   * results are written in place without the bridge's Python
   * (docs/real-xla.md, "Per call from TypeScript").
   */
  readonly nativeCalls: number;
}

/** Shared objects kept loaded because XLA holds registrations of their handlers. */
const keptObjects = new Set<string>();

/** Type id storage of registrations made with a number (XLA keeps writing there). */
const keptStorage: BigInt64Array[] = [];

/** The names handlers and bundles given to `ffiCall` were registered under. */
const anonymous = new WeakMap<object, string>();

/** The same for `ffiCall` with `guard: true`. */
const anonymousGuarded = new WeakMap<object, string>();

/** What each name was registered with through this module (registrations are process-wide). */
const registrations = new Map<
  string,
  { bundle: HandlerStages; platform: string; traits: number; guarded: boolean }
>();

/** XLA's canonical platform name: lower case, "cpu" is "host", "gpu" is "cuda". */
function canonicalPlatform(p: string): string {
  const l = p.toLowerCase();
  return l === "cpu" ? "host" : l === "gpu" ? "cuda" : l;
}

/** The guarded entry point XLA calls for `p` (native/handler_guard.c). */
function guardedEntry(p: Deno.PointerObject, name: string): Deno.PointerObject {
  const entry = native().xla_ffi_deno_guard_wrap(p, new TextEncoder().encode(`${name}\0`));
  if (entry === null) {
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `Cannot guard handler '${name}': every guarded entry point is taken (they are ` +
        `never released, since XLA keeps registrations for the life of the process)`,
    );
  }
  return entry;
}

/**
 * XLA keeps a registered handler's address for the life of the process: a TS
 * entry point is pinned (never reused for another handler), and the shared
 * object holding a C handler is opened once more and never closed, so
 * closing its `HandlerLibrary` cannot unmap code XLA may still call.
 */
function keepForXla(p: Deno.PointerObject): void {
  const sym = native();
  if (sym.xla_ffi_deno_handler_slot_of(p) >= 0) {
    _pin(p);
    return;
  }
  const buf = new Uint8Array(4096);
  // Not in a loaded object: the caller's.
  if (sym.xla_ffi_deno_runtime_dladdr(p, buf, buf.length) === 0) return;
  const end = buf.indexOf(0);
  const path = new TextDecoder().decode(buf.subarray(0, end < 0 ? buf.length : end));
  if (keptObjects.has(path)) return;
  const c = new Uint8Array(buf.subarray(0, (end < 0 ? buf.length - 1 : end) + 1));
  if (sym.xla_ffi_deno_runtime_dlopen(c) !== null) keptObjects.add(path);
}

function closedError(what: string): FfiError {
  return new FfiError(ErrorCode.FAILED_PRECONDITION, `${what} is closed`);
}

function isStages(t: HandlerRef | HandlerStages): t is HandlerStages {
  return typeof t === "object" && t !== null && "execute" in t && !("pointer" in t);
}

/** jax's own error when its CUDA backend cannot start is often a bare AssertionError. */
function _cudaBackendError(e: unknown, python: string): unknown {
  if (!(e instanceof PythonError)) return e;
  if (e.pythonType !== "AssertionError" && !/backend|cuda|plugin/i.test(e.message)) return e;
  return new FfiError(
    ErrorCode.UNAVAILABLE,
    `jax could not start its CUDA backend in ${python} (${e.message}): install jax's CUDA ` +
      `plugin there (pip install "jax[cuda13]"), and check that the GPU and its driver are ` +
      `visible (nvidia-smi)`,
    { cause: e },
  );
}

const STABLEHLO = /^\s*(?:\/\/[^\n]*\n\s*)*(?:module\b|func\.func\b|#loc)/;

/**
 * A compiled program of an {@link Xla} host: run it as often as needed,
 * then close it.
 *
 * @example
 * ```ts ignore
 * using prog = await xla.jit("def f(x):\n    return jnp.sin(x) * 2\n");
 * const [y] = await prog.run(new Float32Array([0, 1, 2]));
 * console.log(y.shape, y.data);
 * ```
 */
export class XlaProgram {
  /**
   * `"python"` or `"stablehlo"` ({@link Xla.jit}), or `"exported"` (a model
   * serialized by `jax.export`, {@link Xla.load}).
   */
  readonly format: "python" | "stablehlo" | "exported";
  /** Result types and shapes, when known at compile time (`args` given, or StableHLO after a run). */
  outputs: XlaArraySpec[] | null;
  readonly #xla: Xla;
  readonly #id: number;
  #open = true;
  /** Prepared calls of this program, by argument signature. */
  readonly #plans = new _Plans();

  /** @internal made by {@link Xla.jit}. */
  constructor(
    xla: Xla,
    id: number,
    format: "python" | "stablehlo" | "exported",
    outputs: XlaArraySpec[] | null,
  ) {
    this.#xla = xla;
    this.#id = id;
    this.format = format;
    this.outputs = outputs;
    _register(this, "XlaProgram", reclaimProgram, { xla, id });
  }

  /** The id the hosted Python knows the program by (`program(id)` in {@link Xla.runPython}). */
  get id(): number {
    return this.#id;
  }

  /** True until {@link close} (or the host's close). */
  get isOpen(): boolean {
    return this.#open && this.#xla.isOpen;
  }

  /**
   * Runs the program on these arguments; resolves to its results (the
   * leaves of what the function returns, in order). The event loop goes on
   * while XLA runs, and TS handlers the program calls run meanwhile, from
   * XLA's threads.
   *
   * A program that calls no target registered with a TS handler is started
   * on the JS thread, as a jitted function's call starts in Python: XLA runs
   * a cheap one inline and the Promise is settled without a thread
   * hand-off; a longer one runs on XLA's threads while a worker waits for
   * it. Calls made while other requests of the host run, and programs that
   * call a TS handler or a target registered with `offThread: true`, go to
   * a worker whole (docs/real-xla.md, "Per call from TypeScript"). The
   * results are the same either way.
   *
   * @example
   * ```ts ignore
   * // xla as in the module example
   * await using prog = await xla.jit("def f(x):\n    return x + 1\n");
   * const [y] = await prog.run(new Float32Array([1, 2, 3]));
   * console.log(y!.data); // Float32Array(3) [ 2, 3, 4 ]
   * ```
   */
  run(...args: XlaArg[]): Promise<XlaArray[]> {
    try {
      if (!this.isOpen) throw closedError("The program");
      const norm = _normaliseArgs(args);
      const plan = this.#plans.find(norm);
      if (plan === undefined) return this.#planAndRun(norm);
      // A call dispatched on the JS thread may have its results already: no await on the way.
      const out = plan.call(norm);
      return out instanceof Promise
        ? out.then((o) => this.#results(o))
        : Promise.resolve(this.#results(out));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The first call of an argument signature: planned, then run. */
  async #planAndRun(norm: _Arg[]): Promise<XlaArray[]> {
    const r = await this.#xla._request({ op: "plan", ...this.#planned(norm) });
    const plan = this.#plans.add(this.#xla._plan(r.header!.plan, norm), norm);
    return this.#results(await plan.call(norm));
  }

  /** What a plan of this program for these arguments is made of. */
  #planned(norm: readonly _Arg[]) {
    return {
      program: this.#id,
      ffi: null,
      specs: norm.map((a) => ({ dtype: a.dtype, shape: a.shape })),
    };
  }

  /**
   * Runs the program synchronously, with Python on the JS thread, and
   * returns its results. XLA runs a cheap program (few operations on small
   * arrays) inline on the thread that calls it, so the synchronous TS
   * handlers it calls run inline on the JS thread: no thread hand-off, the
   * cost of a C handler's call plus the TS handler's own (docs/real-xla.md,
   * "Synchronous runs"). The event loop waits meanwhile.
   *
   * Fails with FAILED_PRECONDITION, never hangs, when the program needs the
   * free JS thread: an async TS handler (refused before it runs: its
   * Promise could settle only after this call; a handler not declared async
   * that returns a Promise runs its synchronous part and must not use the
   * call's buffers after it, since XLA frees them), a TS handler XLA calls
   * from one of its own threads (it does so for larger programs and for
   * inputs still being transferred; the call fails after the JS thread has
   * been blocked for 0.5 s), or asynchronous requests of the host still
   * running. Use {@link run} there. Ctrl-C meanwhile ends the process with
   * exit status 130, as during {@link run}.
   *
   * XLA reads an argument of more than 4 KiB in place when its address is
   * 64-byte aligned (docs/real-xla.md, "Per call from TypeScript"): a TS
   * handler the program calls must not change it meanwhile.
   *
   * @example
   * ```ts ignore
   * // xla and my.scale as in the module example
   * await using prog = await xla.jit(`
   * def f(x):
   *     return ffi.ffi_call("my.scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, alpha=np.float32(2))
   * `);
   * const [y] = prog.runSync(new Float32Array([1, 2, 3])); // my.scale runs inline
   * console.log(y!.data); // Float32Array(3) [ 2, 4, 6 ]
   * ```
   */
  runSync(...args: XlaArg[]): XlaArray[] {
    if (!this.isOpen) throw closedError("The program");
    const norm = _normaliseArgs(args);
    return this.#results(this.#planSync(norm).callSync(norm));
  }

  /** The plan of these arguments' signature, made synchronously the first time. */
  #planSync(norm: _Arg[]): _Plan {
    const plan = this.#plans.find(norm);
    if (plan !== undefined) return plan;
    const r = this.#xla._requestSync({ op: "plan", ...this.#planned(norm) });
    return this.#plans.add(this.#xla._plan(r.header!.plan, norm), norm);
  }

  /**
   * {@link runSync}, its results written into `out`, one array per result
   * (as NumPy's `out=`), and returned over them: no new array per call. Each
   * must hold exactly its result's bytes, as a typed array of the result's
   * element type (`Float32Array` for F32, `Uint16Array` for BF16,
   * `typedArrayFor`) or as bytes (`Uint8Array`, `DataView`), aligned for
   * it, on a fixed-length `ArrayBuffer` or a `SharedArrayBuffer`. A result of
   * more than 4 KiB is written straight into its array, a smaller one copied
   * there. An array the program also reads as an argument is written only
   * after XLA has run: `prog.runSyncInto([x], x)` updates `x` in place.
   * Anything else fails with INVALID_ARGUMENT before the program runs (the
   * first call of an argument signature checks the arrays against the
   * results it learns, after its run). As with a `runSync` argument, a TS
   * handler the program calls must not change or transfer them meanwhile.
   *
   * At 4 MiB a new result array costs more than the program's whole run in
   * Python (docs/real-xla.md, "Per call from TypeScript"); a loop over large
   * arrays keeps its result arrays and writes into them.
   *
   * @example
   * ```ts ignore
   * // xla as in the module example
   * await using prog = await xla.jit("def f(x):\n    return x + 1\n");
   * const x = new Float32Array(1 << 20), y = new Float32Array(1 << 20);
   * for (let step = 0; step < 10; step++) {
   *   prog.runSyncInto([y], x); // y = x + 1, in y's memory
   *   x.set(y);
   * }
   * console.log(x[0]); // 10
   * ```
   */
  runSyncInto(out: readonly ArrayBufferView[], ...args: XlaArg[]): XlaArray[] {
    if (!this.isOpen) throw closedError("The program");
    const norm = _normaliseArgs(args);
    return this.#results(this.#planSync(norm).callSync(norm, out));
  }

  #results(out: XlaArray[]): XlaArray[] {
    if (this.outputs === null) {
      this.outputs = out.map((a) => ({ dtype: a.dtype, shape: [...a.shape] }));
    }
    return out;
  }

  /**
   * Drops what XLA compiled for the program (`jax.jit`'s `clear_cache`; a
   * program compiled for given `args`, or StableHLO, is compiled again), and
   * with it the state XLA keeps per compiled custom call: the next run
   * instantiates stateful handlers again.
   */
  async clearCache(): Promise<void> {
    if (!this.isOpen) throw closedError("The program");
    await this.#xla._request({ op: "clear_program", id: this.#id });
  }

  /** Releases the compiled program in Python (the host stays open). */
  close(): Promise<void> {
    if (!this.#open) return Promise.resolve();
    this.#open = false;
    _unregister(this);
    if (!this.#xla.isOpen) return Promise.resolve();
    return this.#xla._request({ op: "release", programs: [this.#id] }).then(() => {});
  }

  /** Same as {@link close}; the release finishes in the background. */
  [Symbol.dispose](): void {
    this.close().catch(() => {});
  }

  /** Same as {@link close}, awaited. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The typed arrays of an `ffiCall`'s results. */
function dataOf(out: XlaArray[]): DataTypedArray[] {
  const data: DataTypedArray[] = new Array(out.length);
  for (let i = 0; i < out.length; i++) data[i] = out[i]!.data;
  return data;
}

/** Releases, in Python, the programs, caches and namespace of an Xla host collected without close(). */
function reclaimHost(host: number): void {
  _request({ op: "release", host }).catch(() => {});
}

/** Releases, in Python, an XlaProgram collected without close() (the held value keeps its host). */
function reclaimProgram(held: { xla: Xla; id: number }): void {
  if (!held.xla.isOpen) return;
  held.xla._request({ op: "release", programs: [held.id] }).catch(() => {});
}

/**
 * Real XLA in this process: CPython with jax/jaxlib (CPU) hosted in Deno.
 * Register TS handlers (`Ffi.bind()…to(fn)`), handler bundles and C handlers
 * from a `HandlerLibrary` as XLA FFI targets, then call them through jitted
 * programs. All Python runs off the JS thread, so XLA may call TS handlers
 * (sync or async) from any of its threads while a call is awaited.
 *
 * One interpreter per process; Python cannot be restarted once finalised, so
 * it never is: {@link close} releases this host's programs and caches and
 * keeps the interpreter (and XLA's registrations, which are process-wide and
 * permanent) for a later {@link Xla.open}.
 *
 * @example
 * ```ts ignore
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * import { Xla } from "@deno-xla/ffi/xla";
 *
 * await using xla = await Xla.open(); // XLA_FFI_DENO_PYTHON or python3, with jax installed
 * using twice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
 *   const xs = x.typed(), ys = y.typed();
 *   for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
 * });
 * await xla.register("my.twice", twice);
 * const [y] = await xla.ffiCall("my.twice", {
 *   args: [new Float32Array([1, 2, 3])],
 *   results: [{ dtype: DataType.F32, shape: [3] }],
 * });
 * console.log(y); // Float32Array(3) [ 2, 4, 6 ]
 * ```
 */
export class Xla implements FfiHost {
  /** Versions of jax, jaxlib, the XLA FFI API and Python. */
  readonly version: XlaVersion;
  /** Devices jax sees (`len(jax.devices())`). */
  readonly deviceCount: number;
  /** The devices' platform (`"cpu"`). */
  readonly platform: string;
  /** The XLA flags jax was imported with. */
  readonly xlaFlags: string;
  /** The hosted interpreter. */
  readonly interpreter: PythonInfo;
  /** This process's place in its distributed job, or null outside one. */
  readonly distributed: DistributedInfo | null;
  readonly #host: number;
  #open = true;
  /** Prepared `ffiCall`s, by their signature (compared by value). */
  readonly #ffiPlans = new _FfiPlans();

  private constructor(host: number, info: _InitReply, python: PythonInfo) {
    this.#host = host;
    _register(this, "Xla", reclaimHost, host);
    const api = info.ffiApi;
    this.version = {
      jax: String(info.jax),
      jaxlib: String(info.jaxlib),
      ffiApi: api[0] === null ? null : { major: api[0], minor: api[1]! },
      python: String(info.python),
    };
    this.deviceCount = Number(info.devices);
    this.platform = String(info.platform);
    this.xlaFlags = String(info.xlaFlags ?? "");
    this.interpreter = python;
    this.distributed = info.distributed ?? null;
  }

  /**
   * Finds the interpreter (`python`, `$XLA_FFI_DENO_PYTHON`, `python3`), hosts it
   * in this process (once), imports jax and starts its backend (CPU unless
   * `platform` says otherwise), after joining a job of several processes when
   * `distributed` is given (docs/distributed.md). Throws FfiError UNAVAILABLE
   * when there is no usable Python, no jax or no CUDA backend for `"cuda"`;
   * INVALID_ARGUMENT for bad options; UNIMPLEMENTED for a jaxlib of another
   * XLA FFI API major version.
   */
  static async open(options: XlaOptions = {}): Promise<Xla> {
    const platform = options.platform;
    if (platform !== undefined && !["cpu", "cuda", "auto"].includes(platform)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `platform must be "cpu", "cuda" or "auto", got ${JSON.stringify(platform)}`,
      );
    }
    const distributed = options.distributed === undefined
      ? null
      : _distributedRequest(options.distributed);
    const info = await probePython(findPython(options.python));
    if (info.jax === null) {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `jax is not installed for the Python at ${info.executable} (${info.version}): install it ` +
          `there with 'pip install jax==0.10.2 jaxlib==0.10.2', or point XLA_FFI_DENO_PYTHON (or the ` +
          `python option) at a Python that has it`,
      );
    }
    if (distributed !== null && !_inJob()) await _rendezvous(distributed);
    await _hostPython(info);
    const env: Record<string, string> = { ...options.env };
    if (platform !== undefined) {
      env.JAX_PLATFORMS = platform === "auto" ? "" : platform;
    } else if (env.JAX_PLATFORMS === undefined && Deno.env.get("JAX_PLATFORMS") === undefined) {
      env.JAX_PLATFORMS = "cpu";
    }
    const r = await _request({
      op: "init",
      env,
      xlaFlags: [...(options.xlaFlags ?? [])],
      x64: options.x64 ?? true,
      tracebacks: options.tracebacks ?? false,
      sysPath: info.sysPath,
      executable: info.executable,
      distributed,
    }).catch((e) => {
      throw platform === "cuda" ? _cudaBackendError(e, info.executable) : e;
    });
    const h = r.header!;
    try {
      _checkFfiApi(h.ffiApi, String(h.jaxlib));
    } catch (e) {
      await _request({ op: "release", host: h.host }).catch(() => {});
      throw e;
    }
    if (h.distributed) _markJoined();
    return new Xla(Number(h.host), h, info);
  }

  /** True until {@link close}. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** @internal sends a request of this host, run by Python on the JS thread. */
  _requestSync<O extends _HostOp>(
    header: _Unhosted<O>,
    args: Parameters<typeof _requestSync>[1] = [],
    cap?: number,
  ): _Reply<_ReplyHeaders[O]> {
    if (!this.#open) throw closedError("The Xla host");
    return _requestSync<O>(this.#hosted(header), args, cap);
  }

  /** @internal sends a request of this host. */
  _request<O extends _HostOp>(
    header: _Unhosted<O>,
    args: Parameters<typeof _request>[1] = [],
    cap?: number,
  ): Promise<_Reply<_ReplyHeaders[O]>> {
    if (!this.#open) return Promise.reject(closedError("The Xla host"));
    return _request<O>(this.#hosted(header), args, cap);
  }

  /** @internal a plan the bridge made for this host (`_prepared.ts`). */
  _plan(id: number, args: readonly _Arg[]): _Plan {
    return new _Plan(this.#host, id, args);
  }

  /** A request of this host: the header with its `host`. */
  #hosted<O extends _HostOp>(header: _Unhosted<O>): _RequestOf<O> {
    return { ...header, host: this.#host } as _RequestOf<O>;
  }

  /**
   * Registers a handler as the XLA FFI target `name` (`jax.ffi.register_ffi_target`):
   * a TS handler, a C handler (`HandlerLibrary.handler(...)`), or a bundle of
   * stages (`HandlerBundle`, or `{ instantiate, execute, … }`). Registrations
   * are process-wide and permanent, as in XLA; a TS handler's entry point is
   * never reused for another handler (after its `close()` calls fail with
   * FAILED_PRECONDITION), and a C handler's library stays loaded even after
   * its `HandlerLibrary` is closed. Registering a name again with other handlers fails
   * with XLA's INVALID_ARGUMENT "Duplicate FFI handler registration …". With
   * `guard: true` XLA calls a guarded entry point instead of the execute
   * handler ({@link XlaRegisterOptions.guard}); an asynchronous handler's
   * future is then waited for on XLA's calling thread.
   */
  async register(
    name: string,
    handler: HandlerRef | HandlerStages,
    options: XlaRegisterOptions = {},
  ): Promise<void> {
    if (!this.#open) throw closedError("The Xla host");
    if (typeof name !== "string" || name === "") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "A target name must be a non-empty string");
    }
    const bundle: HandlerStages = isStages(handler) ? handler : { execute: handler };
    const sym = native();
    const platform = options.platform ?? (this.platform === "gpu" ? "CUDA" : "cpu");
    const guard = options.guard === true;
    if (guard && platform.toLowerCase() !== "cpu") {
      throw new FfiError(
        ErrorCode.UNIMPLEMENTED,
        `Xla.register: guard needs host buffers (the "cpu" platform), not ${platform}`,
      );
    }
    const stages: Record<string, number> = {};
    const pointers: Deno.PointerObject[] = [];
    // Whether a stage is a TS entry point: a program calling the target is then never
    // dispatched on the JS thread (`_prepared.ts`), where XLA would wait for that thread.
    let ts = false;
    if (options.offThread !== undefined && typeof options.offThread !== "boolean") {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `Xla.register: offThread must be a boolean, got ${typeof options.offThread}`,
      );
    }
    for (const k of ["instantiate", "prepare", "initialize", "execute"] as const) {
      const h = bundle[k];
      if (h === undefined || h === null) continue;
      const p = h.pointer;
      if (p === null || p === undefined) {
        throw new FfiError(ErrorCode.INVALID_ARGUMENT, `The ${k} handler has no pointer`);
      }
      _checkHandler(p, h.name);
      // Named as the embedded runtime names it: an ffiCall target's own registration is internal.
      const named = h.name ?? (name.startsWith("deno_xla.ffi_call.") ? "handler" : name);
      // XLA calls a C handler itself: through a wrapper that marks the
      // thread's crash slot, so that a fatal signal names it (a TS entry
      // point marks it already); a guard wraps that.
      _describeRegistered(p, name);
      const isTs = sym.xla_ffi_deno_handler_slot_of(p) >= 0;
      ts ||= isTs;
      const called = isTs ? p : sym.xla_ffi_deno_crash_wrap(p)!;
      const entry = guard && k === "execute" ? guardedEntry(called, named) : called;
      stages[k] = Number(Deno.UnsafePointer.value(entry));
      pointers.push(p);
    }
    if (stages.execute === undefined) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "A handler bundle needs an execute handler");
    }
    this.#checkVersions(name, bundle);
    try {
      await this._request({
        op: "register",
        name,
        stages,
        platform,
        traits: options.traits ?? 0,
        offThread: ts || options.offThread === true,
      });
    } catch (e) {
      throw _withTypeRemedy(e, (bundle.instantiate ?? bundle.execute)?.name);
    }
    for (const p of pointers) keepForXla(p);
    registrations.set(name, { bundle, platform, traits: options.traits ?? 0, guarded: guard });
  }

  /**
   * Refuses, before jax sees them, handlers that report an XLA FFI API
   * version newer than the hosted XLA's (it would refuse them at
   * registration): each is asked for its metadata as an embedded runtime of
   * the hosted version asks (so a TS handler bound without a version answers
   * that version). A handler whose query fails here is left to XLA.
   */
  #checkVersions(name: string, bundle: HandlerStages): void {
    const hosted = this.version.ffiApi;
    if (hosted === null || _ffiApiSupport(hosted.major, hosted.minor) !== "spoken") return;
    using rt = new Runtime({ threads: 0, apiVersion: `0.${hosted.minor}` as ApiVersion });
    for (const k of ["instantiate", "prepare", "initialize", "execute"] as const) {
      const h = bundle[k];
      if (h === undefined || h === null) continue;
      let reported: { major: number; minor: number };
      try {
        reported = rt.metadata(h).apiVersion;
      } catch {
        continue;
      }
      _checkHandlerVersion(name, reported, hosted, this.version.jaxlib);
    }
  }

  /**
   * Calls a target once through `jax.jit(jax.ffi.ffi_call(...))` (compiled
   * once per signature and attribute set, then cached until
   * {@link clearCache}) and resolves to its results as typed arrays, each
   * typed by its spec ({@link FfiCallResults}): the same options, results
   * and errors as `Runtime.ffiCall` on the embedded runtime (XLA's NOT_FOUND
   * for a name not registered gets the closest name registered through this
   * module as a hint, as the embedded runtime's does). `target` is a registered name, or a handler or bundle, which is
   * registered once under a name of its own (registrations are permanent in
   * XLA: such a TS handler's entry point stays reserved).
   * `inputOutputAliases` is jax's `input_output_aliases`; `inputLayouts`
   * and `outputLayouts` are jax's `input_layouts` and `output_layouts`. A
   * call with no results and without `hasSideEffect: true` is dropped by
   * `jax.jit` before XLA sees it and resolves to `[]` (its handler is not
   * called, its name not looked up), as on the embedded runtime; one whose
   * results all have a zero dimension is removed by XLA and resolves to
   * them, empty.
   */
  ffiCall<const R extends readonly ArraySpec[]>(
    target: FfiCallTarget,
    options: FfiCallOptions<R>,
  ): Promise<FfiCallResults<R>> {
    let sig: _FfiSignature, args: _Arg[];
    try {
      if (!this.#open) throw closedError("The Xla host");
      _checkCallOptions(options);
      args = _normaliseArgs(options.args ?? []);
      const results = _normaliseSpecs(options.results);
      const aliases = _checkAliases(options.inputOutputAliases, args, results);
      const layouts = _jaxLayouts(
        _checkLayouts(options.inputLayouts, options.outputLayouts, args, results, aliases),
      );
      sig = {
        name: "",
        results,
        attrs: _encodeAttrs(options.attrs),
        vmapMethod: options.vmapMethod ?? null,
        hasSideEffect: options.hasSideEffect ?? false,
        aliases,
        layouts,
      };
    } catch (e) {
      return Promise.reject(e);
    }
    if (options.guard !== true && typeof target === "string") {
      // A name needs no registration first: a repeated call is not held up by an await.
      sig.name = target;
      return this.#ffiCallAs(sig, args, target, options) as Promise<FfiCallResults<R>>;
    }
    return (async () => {
      sig.name = options.guard === true
        ? await this.#guardedName(target)
        : await this.#targetName(target);
      return await this.#ffiCallAs(sig, args, target, options) as FfiCallResults<R>;
    })();
  }

  /**
   * An `ffiCall` of a normalised signature: its plan's call (made first when
   * the signature is new); a failure gets the hints of {@link #ffiFailed}.
   */
  #ffiCallAs(
    sig: _FfiSignature,
    args: _Arg[],
    target: FfiCallTarget,
    options: FfiCallOptions,
  ): Promise<DataTypedArray[]> {
    try {
      const plan = this.#ffiPlans.find(sig, args);
      if (plan === undefined) {
        return this.#ffiPlan(sig, args).then(
          (p) => p.call(args, options.offThread === true),
        ).then(dataOf, (e) => this.#ffiFailed(e, target, options));
      }
      const out = plan.call(args, options.offThread === true);
      return out instanceof Promise
        ? out.then(dataOf, (e) => this.#ffiFailed(e, target, options))
        : Promise.resolve(dataOf(out));
    } catch (e) {
      return this.#ffiFailed(e, target, options);
    }
  }

  /** Plans an `ffiCall` signature in Python (the bridge caches the jitted call under its key). */
  async #ffiPlan(sig: _FfiSignature, args: _Arg[]): Promise<_Plan> {
    const { name, results, attrs, vmapMethod, hasSideEffect, aliases, layouts } = sig;
    const key = JSON.stringify([
      name,
      args.map((a) => [a.dtype, a.shape]),
      results,
      attrs,
      vmapMethod,
      hasSideEffect,
      aliases,
      layouts,
    ]);
    // The signature's arrays as they are (read-only here only): JSON of the request.
    const ffi = {
      key,
      name,
      results,
      attrs,
      vmapMethod,
      hasSideEffect,
      aliases,
      ...layouts,
    } as unknown as Omit<_FfiCallRequest, "host" | "op">;
    const specs = args.map((a) => ({ dtype: a.dtype, shape: a.shape }));
    const r = await this._request({ op: "plan", program: null, ffi, specs });
    return this.#ffiPlans.find(sig, args) ??
      this.#ffiPlans.add(sig, args, this._plan(r.header!.plan, args));
  }

  /** A failed `ffiCall`: XLA's NOT_FOUND with the closest name, a wrong attribute type with the attribute hint. */
  async #ffiFailed(e: unknown, target: FfiCallTarget, options: FfiCallOptions): Promise<never> {
    if (!(e instanceof FfiError)) throw e;
    const found = typeof target === "string" ? await this.#notFound(e, target) : e;
    throw _withAttrHint(found, _attrHints(options.attrs), "attrs");
  }

  /**
   * XLA's NOT_FOUND for a target name with the embedded runtime's hint (its
   * `hint`; the message stays XLA's): the closest name registered in XLA
   * for this host's platform (through this module, or by jax and the
   * modules it loaded, as `lapack_sgetrf_ffi`), or the platform the name is
   * registered for.
   */
  async #notFound(error: FfiError, name: string): Promise<FfiError> {
    if (error.code !== ErrorCode.NOT_FOUND || !error.message.includes(name)) return error;
    const here = canonicalPlatform(this.platform);
    const names = new Set<string>();
    let elsewhere: string | undefined;
    for (const [n, r] of registrations) {
      if (n.startsWith("deno_xla.")) continue; // ffiCall's own registrations
      const p = canonicalPlatform(r.platform);
      if (p === here) names.add(n);
      else if (n === name) elsewhere ??= p;
    }
    for (const n of await this.#xlaTargets()) if (!n.startsWith("deno_xla.")) names.add(n);
    const near = _closest(name, names);
    const hint = near !== undefined
      ? `did you mean '${near}'?`
      : elsewhere !== undefined
      ? `it is registered for ${
        elsewhere === "host" ? "Host" : elsewhere === "cuda" ? "CUDA" : elsewhere
      }`
      : undefined;
    return _withHint(error, hint);
  }

  /**
   * The names XLA's FFI registry holds for this host's platform, whoever
   * registered them (`xla_client.custom_call_targets`); none when it cannot
   * be read.
   */
  async #xlaTargets(): Promise<string[]> {
    const platform = canonicalPlatform(this.platform) === "cuda" ? "CUDA" : "cpu";
    try {
      const r = await this._request({
        op: "python",
        // One expression: nothing left behind in the host's namespace but `result`, taken.
        source: 'result = sorted(__import__("jax._src.lib", fromlist=["xla_client"])' +
          `.xla_client.custom_call_targets(${JSON.stringify(platform)}))`,
      });
      const names = r.header?.result;
      return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
    } catch {
      return [];
    }
  }

  /** A target's registered name: the name itself, or the name a handler or bundle got. */
  async #targetName(target: FfiCallTarget): Promise<string> {
    if (typeof target === "string") return target;
    const t = _asHandlerOrStages(target, "Xla.ffiCall");
    let name = anonymous.get(t);
    if (name === undefined) {
      name = `deno_xla.ffi_call.${_identity(t)}`;
      await this.register(name, t);
      anonymous.set(t, name);
    }
    return name;
  }

  /**
   * The name of a guarded registration of a target: a name registered with
   * `guard: true`; for a name registered without it through this module, a
   * guarded twin (`deno_xla.guarded.<name>`); for a handler or bundle, a
   * guarded registration of its own.
   */
  async #guardedName(target: FfiCallTarget): Promise<string> {
    if (typeof target === "string") {
      const r = registrations.get(target);
      if (r === undefined) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `Xla.ffiCall: guard needs the handler of '${target}', which was not registered ` +
            `through this module: pass the handler itself, or register it with { guard: true }`,
        );
      }
      if (r.guarded) return target;
      const twin = `deno_xla.guarded.${target}`;
      if (!registrations.has(twin)) {
        await this.register(twin, r.bundle, {
          platform: r.platform,
          traits: r.traits,
          guard: true,
        });
      }
      return twin;
    }
    const t = _asHandlerOrStages(target, "Xla.ffiCall");
    let name = anonymousGuarded.get(t);
    if (name === undefined) {
      name = `deno_xla.ffi_call.guarded.${_identity(t)}`;
      await this.register(name, t, { guard: true });
      anonymousGuarded.set(t, name);
    }
    return name;
  }

  /**
   * Registers a state type with XLA, as `jax.ffi.register_ffi_type` does:
   * `id` is a library's `XLA_FFI_TypeId` storage ({@link TypeIdRef}, from
   * `HandlerLibrary.typeId`), which XLA fills in place so the library's
   * `ffi.h` handlers see the id, or a number (0, the default: XLA assigns
   * one). `typeInfo` (`HandlerLibrary.typeInfo`) gives XLA the deleter of
   * the type's states. Resolves to the id. A registration is process-wide and
   * permanent: the library holding the storage stays loaded.
   *
   * @example
   * ```ts ignore
   * using lib = HandlerLibrary.open("./libcounter.so");
   * const id = await xla.registerType("my.Counter", lib.typeId("counter_type_id"), {
   *   typeInfo: lib.typeInfo("counter_type_info"),
   * });
   * ```
   */
  async registerType(
    name: string,
    id?: number | bigint | TypeIdRef,
    options: XlaRegisterTypeOptions = {},
  ): Promise<number> {
    if (!this.#open) throw closedError("The Xla host");
    if (typeof name !== "string" || name === "") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "A type name must be a non-empty string");
    }
    let storage: Deno.PointerObject;
    let read: () => bigint;
    if (id instanceof TypeIdRef) {
      storage = id.pointer;
      read = () => id.value;
    } else {
      // XLA writes the id it assigns here; the storage lives as long as the registration.
      const cell = new BigInt64Array([BigInt(id ?? 0)]);
      keptStorage.push(cell);
      storage = Deno.UnsafePointer.of(cell)!;
      read = () => cell[0]!;
    }
    const info = options.typeInfo;
    if (info === null) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "registerType: typeInfo is null");
    }
    await this._request({
      op: "register_type",
      name,
      typeId: Number(Deno.UnsafePointer.value(storage)),
      typeInfo: info === undefined ? null : Number(Deno.UnsafePointer.value(info)),
      platform: options.platform ?? "cpu",
    });
    keepForXla(storage);
    if (info !== undefined) keepForXla(info);
    return Number(read());
  }

  /**
   * Forgets the calls {@link ffiCall} compiled and cached, and with them the
   * state XLA keeps per compiled call (what an instantiate stage made): the
   * next call compiles and instantiates again.
   */
  async clearCache(): Promise<void> {
    if (!this.#open) throw closedError("The Xla host");
    await this._request({ op: "clear_cache" });
  }

  /**
   * Compiles a whole program: Python source defining a JAX function (with
   * `jax`, `jnp`, `np`, `lax` and `ffi` = `jax.ffi` in scope; custom calls
   * through `ffi.ffi_call("name", …)`), or StableHLO text whose
   * `stablehlo.custom_call @name(...) {api_version = 4 : i32, backend_config = {...}}`
   * targets a registered name. Compile errors are FfiErrors with XLA's or
   * Python's message.
   */
  async jit(source: string, options: JitOptions = {}): Promise<XlaProgram> {
    if (!this.#open) throw closedError("The Xla host");
    if (typeof source !== "string") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "jit needs the program's source text");
    }
    const format = options.format ?? (STABLEHLO.test(source) ? "stablehlo" : "python");
    if (format !== "python" && format !== "stablehlo") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Unknown program format '${String(format)}'`);
    }
    const args = options.args?.map((s, i) => _normaliseSpec(s, `argument spec ${i}`));
    const r = await this._request({
      op: "compile",
      kind: format,
      source,
      entry: options.entry ?? null,
      argSpecs: args ?? null,
      filename: options.filename ?? null,
    });
    const h = r.header!;
    const outputs = h.outputs as { dtype: DataType; shape: number[] }[] | null;
    return new XlaProgram(this, Number(h.id), format, outputs);
  }

  /**
   * Loads a model serialized by `jax.export` (the bytes of
   * `jax.export.export(jax.jit(f))(*specs).serialize()`, made in any Python
   * with the same jax, e.g. where the model was trained) and compiles it: an
   * {@link XlaProgram} as {@link jit} makes, run with `run`, `runSync` or
   * through `program(id)` in {@link runPython}, closed with `close()` or
   * `using`. The arguments are the leaves of what the exported function was
   * called with (its positional and keyword arguments, flattened as
   * `jax.tree_util.tree_leaves((args, kwargs))` orders them: a dict's keys
   * sorted); the results are the leaves of what it returns. A model exported
   * with fixed shapes is compiled here ({@link XlaProgram.outputs} is known);
   * one with symbolic dimensions is compiled at the first run for each
   * argument signature. Custom calls in it run the handlers registered
   * under their target names ({@link register}) when it runs; jax exports a
   * custom call to a target of its own only when told to
   * (`disabled_checks=[jax.export.DisabledSafetyCheck.custom_call("name")]`).
   *
   * Throws FfiError INVALID_ARGUMENT when `bytes` is not a non-empty
   * Uint8Array, or when `jax.export.deserialize` cannot read it (its error
   * quoted); UNAVAILABLE when this Python's jax cannot read serialized
   * models (jax needs the `flatbuffers` package for that); a PythonError
   * when jax cannot compile the model here (e.g. it was exported for
   * another platform).
   *
   * @example
   * ```ts ignore
   * // exported in Python:
   * //   exp = jax.export.export(jax.jit(lambda p, x: jnp.tanh(x @ p["w"] + p["b"])))(params, x)
   * //   open("model.bin", "wb").write(exp.serialize())
   * await using model = await xla.load(await Deno.readFile("model.bin"));
   * // params {"b": f32[2], "w": f32[3, 2]}, then x: f32[4, 3]
   * const [y] = model.runSync(b, { data: w, shape: [3, 2] }, { data: x, shape: [4, 3] });
   * ```
   */
  async load(bytes: Uint8Array): Promise<XlaProgram> {
    if (!this.#open) throw closedError("The Xla host");
    if (!(bytes instanceof Uint8Array)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `Xla.load needs the bytes of a model serialized by jax.export (a Uint8Array), got ${
          bytes === null ? "null" : Array.isArray(bytes) ? "an Array" : typeof bytes
        }`,
      );
    }
    if (bytes.byteLength === 0) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "Xla.load: the bytes are empty, not a model serialized by jax.export",
      );
    }
    const model: _Arg = { dtype: DataType.U8, shape: [bytes.byteLength], bytes };
    const r = await this._request({
      op: "compile",
      kind: "exported",
      source: "",
      entry: null,
      argSpecs: null,
      filename: null,
    }, [model]);
    const h = r.header!;
    const outputs = h.outputs as { dtype: DataType; shape: number[] }[] | null;
    return new XlaProgram(this, Number(h.id), "exported", outputs);
  }

  /**
   * Runs Python statements in this host's namespace (`jax`, `jnp`, `np`,
   * `lax`, `ffi`, and `program(id)` for a compiled {@link XlaProgram}'s
   * callable) and resolves to the JSON value of the variable `result`, if
   * the statements set one. For measurements and checks from the Python side.
   */
  async runPython(source: string): Promise<unknown> {
    if (!this.#open) throw closedError("The Xla host");
    const r = await this._request({ op: "python", source: String(source) });
    return r.header!.result ?? null;
  }

  /**
   * {@link runPython}, run synchronously by Python on the JS thread: the
   * programs it runs call their synchronous TS handlers inline, without a
   * thread hand-off, when XLA runs them on the calling thread (cheap
   * programs). The rules and failures are those of {@link XlaProgram.runSync}.
   *
   * @example
   * ```ts ignore
   * const n = xla.runPythonSync("result = int(jnp.arange(4).sum())"); // 6
   * ```
   */
  runPythonSync(source: string): unknown {
    if (!this.#open) throw closedError("The Xla host");
    return this._requestSync({ op: "python", source: String(source) }).header!.result ?? null;
  }

  /**
   * The XLA FFI handlers a Python extension module hands out as PyCapsules
   * (`xla._CUSTOM_CALL_TARGET`) from its `registrations()`: jaxlib's LAPACK
   * (`"jaxlib.cpu._lapack"`, which needs `initialize: "initialize"`), its
   * sparse kernels, modules built with nanobind. Imports the module in this
   * host (calling `options.initialize` first when given) and keeps it while
   * the host is open. `registrations()` may be a flat dict (name → capsule,
   * or a dict of stage capsules) or `{platform: [(name, capsule,
   * api_version)]}` as `jaxlib.lapack` has; only `options.platform`'s (default
   * `"cpu"`) are kept. Legacy custom calls (api_version 0) and capsules of
   * another name are left out and listed in `skipped` with the reason.
   *
   * The handlers are C handlers in this process: targets of `Runtime.ffiCall`,
   * `register` and `callSync` as well as of {@link ffiCall} and
   * {@link register}. They are usable while this host is open; afterwards
   * they refuse (FAILED_PRECONDITION). Throws PythonError UNAVAILABLE when the
   * module cannot be imported, NOT_FOUND when it has no such functions,
   * INVALID_ARGUMENT when `registrations()` lists one name twice for a
   * platform with different handlers (as XLA refuses that duplicate
   * registration, naming both; the same handler twice counts once) or holds
   * something other than a list for a platform (naming the module and the
   * entry).
   *
   * @example
   * ```ts ignore
   * import { DataType, Runtime } from "@deno-xla/ffi";
   * await using xla = await Xla.open();
   * const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
   * using rt = new Runtime();
   * // LU of A = [[4, 3], [6, 3]], handed to LAPACK column-major as jax does
   * const [lu, ipiv, info] = await rt.ffiCall(lapack.handler("lapack_sgetrf_ffi"), {
   *   args: [{ data: new Float32Array([4, 3, 6, 3]), shape: [2, 2] }],
   *   results: [
   *     { dtype: DataType.F32, shape: [2, 2] },
   *     { dtype: DataType.S32, shape: [2] },
   *     { dtype: DataType.S32, shape: [] },
   *   ],
   *   inputLayouts: [[1, 0]],
   *   outputLayouts: [[1, 0], null, null],
   * });
   * console.log(lu, ipiv, info); // [6, 3, 0.6667, 1] (row-major), [2, 2], [0]
   * ```
   *
   * docs/jax-extension-modules.md walks through LAPACK's routines this way.
   */
  async handlersFrom(module: string, options: HandlersFromOptions = {}): Promise<ModuleHandlers> {
    if (!this.#open) throw closedError("The Xla host");
    if (typeof module !== "string" || !/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(module)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `A Python module name must be dotted identifiers, got ${JSON.stringify(module)}`,
      );
    }
    for (const k of ["initialize", "registrations", "platform"] as const) {
      const v = options[k];
      if (v !== undefined && (typeof v !== "string" || v === "")) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `handlersFrom option ${k} must be a non-empty string, got ${JSON.stringify(v)}`,
        );
      }
    }
    const r = await this._request({
      op: "handlers_from",
      module,
      initialize: options.initialize ?? null,
      registrations: options.registrations ?? null,
      platform: options.platform ?? "cpu",
    });
    return _moduleHandlers(r.header!, () => this.#open, options);
  }

  /** What the hosted Python holds: allocated blocks, tracked objects, this host's programs. */
  async pythonStats(): Promise<PythonStats> {
    if (!this.#open) throw closedError("The Xla host");
    return (await this._request({ op: "stats" })).header!;
  }

  /**
   * Releases this host's programs, cached calls and namespace in Python. The
   * interpreter, jax and XLA's registrations stay (Python cannot be
   * restarted in a process), so a later {@link Xla.open} is quick.
   */
  close(): Promise<void> {
    if (!this.#open) return Promise.resolve();
    _unregister(this);
    const done = _request({ op: "release", host: this.#host });
    this.#open = false;
    return done.then(() => {});
  }

  /** Same as {@link close}; the release finishes in the background. */
  [Symbol.dispose](): void {
    this.close().catch(() => {});
  }

  /** Same as {@link close}, awaited. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
