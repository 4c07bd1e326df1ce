/**
 * Handlers as values (`XLA_FFI_Handler*` with a name), bundles of a
 * handler per stage, and loading handlers from a user's shared library by
 * symbol name.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _describeHandler, native } from "../native/lib.ts";
import { _cString } from "./_native_error.ts";
import { _register, _unregister } from "../_resources.ts";
import {
  _Isolated,
  type _IsolatedPython,
  type IsolatedOutput,
  type IsolateOptions,
} from "./isolate.ts";
import { readElfSymbols } from "../native/elf.ts";
import { _closest } from "../_closest.ts";

/**
 * Options of {@link HandlerLibrary.open}.
 *
 * @example
 * ```ts ignore
 * import { HandlerLibrary } from "@deno-xla/ffi";
 * using lib = HandlerLibrary.open("./libmy_handlers.so", { isolate: { timeoutMs: 5000 } });
 * ```
 */
export interface HandlerLibraryOptions {
  /**
   * Run the library's handlers in a child process of their own (started on
   * first use, and again after it died): a handler that crashes, hangs past
   * the deadline or writes into a guarded page fails its call with an
   * FfiError naming it, and this process lives on. `true` or
   * {@link IsolateOptions}. See docs/faults.md.
   */
  isolate?: boolean | IsolateOptions;
}

/**
 * Anything that is an `XLA_FFI_Handler*`: a {@link NativeHandler} from a
 * library, or a TypeScript handler made with `Ffi.bind()...to(fn)`.
 *
 * @example
 * ```ts ignore
 * import type { HandlerRef } from "@deno-xla/ffi";
 * const ref: HandlerRef = { pointer: somePointer };
 * ```
 */
export interface HandlerRef {
  /** The `XLA_FFI_Handler*` function pointer. */
  readonly pointer: Deno.PointerObject;
  /** A name for messages, if it has one. */
  readonly name?: string;
}

/**
 * An `XLA_FFI_Handler*` given as a C function pointer
 * (`XLA_FFI_Error* fn(XLA_FFI_CallFrame*)`), e.g. a symbol of a handler
 * library compiled against XLA's `ffi.h`.
 *
 * @example
 * ```ts ignore
 * import { NativeHandler } from "@deno-xla/ffi";
 * const h = new NativeHandler(pointerFromSomewhere, "my_handler");
 * ```
 */
export class NativeHandler implements HandlerRef {
  /** The function pointer. */
  readonly pointer: Deno.PointerObject;
  /** A name for messages (e.g. the symbol). */
  readonly name: string;
  /** @internal The isolated library whose process runs this handler (undefined: in-process). */
  _isolated: _Isolated | undefined = undefined;
  /**
   * Wraps a function pointer.
   *
   * @param pointer the function pointer
   * @param name a name for messages (e.g. the symbol)
   */
  constructor(pointer: Deno.PointerObject, name?: string) {
    this.pointer = pointer;
    this.name = name ?? "handler";
  }
}

/**
 * The storage of a type id a handler library owns (`XLA_FFI_TypeId*`, what
 * ffi.h's `&T::id` is): the runtime's type registration writes the id into
 * it, and the library's handlers read it from there. Get one with
 * {@link HandlerLibrary.typeId}; register it with `Runtime.registerType`.
 *
 * @example
 * ```ts ignore
 * import { HandlerLibrary, Runtime } from "@deno-xla/ffi";
 * using lib = HandlerLibrary.open("./libmy_handlers.so");
 * using rt = new Runtime();
 * const id = lib.typeId("my_state_type_id"); // XLA_FFI_TypeId* my_state_type_id(void)
 * rt.registerType("my_state", id, { typeInfo: lib.typeInfo("my_state_type_info") });
 * console.log(id.value); // the id the runtime assigned
 * ```
 */
export class TypeIdRef {
  /** The `XLA_FFI_TypeId*`. */
  readonly pointer: Deno.PointerObject;
  /** A name for messages (e.g. the symbol). */
  readonly name: string;

  /** Wraps the address of a type id's storage. */
  constructor(pointer: Deno.PointerObject, name: string = "type id") {
    this.pointer = pointer;
    this.name = name;
  }

  /** The id stored there now (0 until a runtime registered it). */
  get value(): bigint {
    return new Deno.UnsafePointerView(this.pointer).getBigInt64(0);
  }
}

/**
 * Handlers whose library was closed: address → the library's path and what
 * the code at the address was before the close (see {@link loadedObject}).
 */
const deadHandlers = new Map<bigint, { path: string; object: string | null }>();

const dladdrBuf = new Uint8Array(4096);

/**
 * What the code at `p` is ("file@load address:symbol"), or null if no loaded
 * object contains it. All three parts matter: a library loaded again at
 * another place, or rebuilt, can cover `p` with other code or data.
 */
function loadedObject(p: Deno.PointerObject): string | null {
  if (native().xla_ffi_deno_runtime_code_identity(p, dladdrBuf, dladdrBuf.length) === 0) {
    return null;
  }
  const end = dladdrBuf.indexOf(0);
  return new TextDecoder().decode(dladdrBuf.subarray(0, end < 0 ? dladdrBuf.length : end));
}

/**
 * @internal Throws FAILED_PRECONDITION if `p` is a handler of a closed
 * {@link HandlerLibrary} whose code is no longer loaded (calling it would jump
 * into unmapped code, or into whatever the loader put there since). A library
 * that another handle keeps loaded, or that was loaded again at the same
 * address (the same function at the same address), still counts as loaded.
 */
export function _checkHandler(p: Deno.PointerObject, name = "handler"): void {
  if (deadHandlers.size === 0) return;
  const v = BigInt(Deno.UnsafePointer.value(p));
  const dead = deadHandlers.get(v);
  if (dead === undefined) return;
  const now = loadedObject(p);
  if (now !== null && now === dead.object) {
    deadHandlers.delete(v); // still (or again) loaded: the code is there
    return;
  }
  throw new FfiError(
    ErrorCode.FAILED_PRECONDITION,
    `The handler ${name} belongs to the closed handler library ${dead.path}`,
  );
}

const ACCEPTS = "a handler (a TS handler made with Ffi.bind()…to(fn), a NativeHandler from " +
  "HandlerLibrary.handler(name), or any object whose 'pointer' is an XLA_FFI_Handler* pointer " +
  "object)";
const STAGES = ["instantiate", "prepare", "initialize", "execute"] as const;

function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "function") return `a function${v.name ? ` (${v.name})` : ""}`;
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  if (typeof v !== "object") return `${typeof v} ${String(v)}`;
  const keys = Object.keys(v);
  const ctor = (v as { constructor?: { name?: string } }).constructor?.name;
  return `${ctor && ctor !== "Object" ? `a ${ctor}` : "an object"}` +
    (keys.length > 0 ? ` with keys ${keys.slice(0, 6).join(", ")}` : "");
}

function isPointerObject(p: unknown): p is Deno.PointerObject {
  return typeof p === "object" && p !== null && Object.getPrototypeOf(p) === null;
}

function notAHandler(value: unknown, what: string, bundles: boolean, names = false): FfiError {
  return new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    `${what} expects ${names ? "a registered handler name, " : ""}${ACCEPTS}` +
      (bundles
        ? `, or a bundle of them by stage ({ execute, instantiate?, prepare?, initialize? }, ` +
          `e.g. a HandlerBundle)`
        : "") +
      `; got ${describe(value)}` +
      (typeof value === "function"
        ? `: bind the function first, e.g. Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(fn)`
        : ""),
  );
}

/**
 * @internal `value` as a handler, or FfiError INVALID_ARGUMENT naming what
 * `what` accepts (a closed TS handler reports FAILED_PRECONDITION).
 */
export function _asHandler(value: unknown, what: string): HandlerRef {
  if (typeof value === "object" && value !== null && "pointer" in value) {
    if (isPointerObject((value as HandlerRef).pointer)) return value as HandlerRef;
  }
  throw notAHandler(value, what, false);
}

/** @internal `value` as a handler or a bundle of handlers by stage, checked as {@link _asHandler}. */
export function _asHandlerOrStages(
  value: unknown,
  what: string,
  names = false,
): HandlerRef | HandlerStages {
  if (typeof value === "object" && value !== null) {
    if ("pointer" in value && isPointerObject((value as HandlerRef).pointer)) {
      return value as HandlerRef;
    }
    if ("execute" in value) {
      const v = value as Record<string, unknown>;
      for (const stage of STAGES) {
        const h = v[stage];
        // A missing execute stage is the registration's error (XLA's message).
        if (h === undefined || h === null) continue;
        if (typeof h !== "object" || h === null || !isPointerObject((h as HandlerRef).pointer)) {
          throw new FfiError(
            ErrorCode.INVALID_ARGUMENT,
            `${what}: the ${stage} stage of the bundle must be ${ACCEPTS}; got ${describe(h)}`,
          );
        }
      }
      return value as HandlerStages;
    }
  }
  throw notAHandler(value, what, true, names);
}

/**
 * Handlers for the stages of one custom call, as `XLA_FFI_Handler_Bundle`:
 * execute is required. A TypeScript `HandlerBundle` is one too.
 *
 * @example
 * ```ts ignore
 * import type { HandlerStages } from "@deno-xla/ffi";
 * const stages: HandlerStages = { instantiate: lib.handler("init"), execute: lib.handler("run") };
 * ```
 */
export interface HandlerStages {
  /** Instantiate stage. */
  readonly instantiate?: HandlerRef | null;
  /** Prepare stage. */
  readonly prepare?: HandlerRef | null;
  /** Initialize stage. */
  readonly initialize?: HandlerRef | null;
  /** Execute stage (required). */
  readonly execute: HandlerRef;
}

/** Whether a handler target is a bundle of stages (else one handler). */
export function _isStages(target: HandlerRef | HandlerStages): target is HandlerStages {
  return "execute" in target;
}

/** A bundle's handler for `stage` (null when the bundle has none: XLA skips the stage). */
export function _stageHandler(bundle: HandlerStages, stage: ExecutionStage): HandlerRef | null {
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

/** What keeps a library loaded while something taken from it is reachable. */
const owners = new WeakMap<object, HandlerLibrary>();

/** Unloads a library; its handlers' addresses are remembered as dead (calls fail clearly). */
function unload(
  handle: Deno.PointerObject,
  path: string,
  resolved: Map<bigint, Deno.PointerObject>,
): void {
  const objects = [...resolved].map(([v, p]) => [v, loadedObject(p)] as const);
  native().xla_ffi_deno_runtime_dlclose(handle);
  for (const [v, object] of objects) deadHandlers.set(v, { path, object });
  resolved.clear();
}

/** Unloads a HandlerLibrary collected without close() (and nothing taken from it reachable). */
function reclaimLibrary(
  held: { handle: Deno.PointerObject; path: string; resolved: Map<bigint, Deno.PointerObject> },
): void {
  unload(held.handle, held.path, held.resolved);
}

/** Ends the process of an isolated HandlerLibrary collected without close() (none of its handlers reachable). */
function reclaimIsolated(isolated: _Isolated): void {
  try {
    isolated.close();
  } catch {
    // A call in flight holds the library's handler: it cannot have been collected.
  }
}

/**
 * A user's shared library of XLA FFI handlers, with symbols resolved by name
 * at run time. A library collected without {@link close} is unloaded then;
 * the handlers and type ids taken from it keep it loaded while they are
 * reachable, but raw pointers (`symbol`, `typeInfo`) are valid only while the
 * library itself is reachable and open.
 *
 * @example
 * ```ts ignore
 * import { HandlerLibrary, Runtime } from "@deno-xla/ffi";
 * using lib = HandlerLibrary.open("./libmy_handlers.so");
 * using rt = new Runtime();
 * rt.register("my.echo", lib.handler("echo"));
 * ```
 */
export class HandlerLibrary {
  #handle: Deno.PointerObject | null;
  #cache = new Map<string, NativeHandler>();
  #resolved = new Map<bigint, Deno.PointerObject>();
  #isolated: _Isolated | null = null;
  /** The path the library was opened from. */
  readonly path: string;

  private constructor(handle: Deno.PointerObject | null, path: string, isolated?: _Isolated) {
    this.#handle = handle;
    this.path = path;
    this.#isolated = isolated ?? null;
    if (handle !== null) {
      _register(this, "HandlerLibrary", reclaimLibrary, {
        handle,
        path,
        resolved: this.#resolved,
      });
    } else if (isolated !== undefined) {
      _register(this, "HandlerLibrary", reclaimIsolated, isolated);
    }
  }

  /**
   * Opens a shared library; FfiError UNAVAILABLE with the loader's message.
   * With `{ isolate }` the library is loaded in a child process instead
   * (started at the first {@link handler} lookup; see {@link HandlerLibraryOptions}).
   *
   * @example
   * ```ts ignore
   * import { CallFrameBuilder, HandlerLibrary, Runtime } from "@deno-xla/ffi";
   * using lib = HandlerLibrary.open("./libmy_handlers.so", { isolate: true });
   * using rt = new Runtime();
   * using frame = new CallFrameBuilder().ret(new Float32Array(4)).build();
   * rt.callSync(lib.handler("may_crash"), frame); // a crash is an FfiError here
   * ```
   */
  static open(path: string | URL, options?: HandlerLibraryOptions): HandlerLibrary {
    const p = path instanceof URL ? fileURLToPath(path) : path;
    const isolate = options?.isolate;
    if (isolate !== undefined && isolate !== false) {
      return new HandlerLibrary(null, p, new _Isolated(p, isolate === true ? {} : isolate));
    }
    const sym = native();
    const h = sym.xla_ffi_deno_runtime_dlopen(_cString(p));
    if (h === null) {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `Cannot load the handler library ${p}: ${lastError()}`,
      );
    }
    return new HandlerLibrary(h, p);
  }

  /**
   * @internal The handlers of a Python extension module, isolated: a child
   * process hosts the Python and the module (`python`), and
   * {@link handler} takes the module's registered names. `path` is the
   * module's name.
   */
  static _openPython(options: IsolateOptions, python: _IsolatedPython): HandlerLibrary {
    return new HandlerLibrary(null, python.module, new _Isolated(python.module, options, python));
  }

  /**
   * What an isolated library's handlers wrote to stdout and stderr since
   * the last time asked, with `isolate: { output: "keep" }` (counted, its
   * first bytes kept); zeros otherwise.
   *
   * @example
   * ```ts ignore
   * import { HandlerLibrary } from "@deno-xla/ffi";
   * using lib = HandlerLibrary.open("./libmy_handlers.so", { isolate: { output: "keep" } });
   * // … calls …
   * const { lines, head } = lib.isolatedOutput();
   * console.log(`${lines} lines, the first: ${head.split("\n")[0]}`);
   * ```
   */
  isolatedOutput(): IsolatedOutput {
    return this.#isolated?.output() ?? { bytes: 0, lines: 0, head: "" };
  }

  /** @internal The process of an isolated library (undefined: in-process). */
  get _isolatedProcess(): _Isolated | undefined {
    return this.#isolated ?? undefined;
  }

  /** Whether the library's handlers run in a child process ({@link HandlerLibraryOptions.isolate}). */
  get isolated(): boolean {
    return this.#isolated !== null;
  }

  /**
   * The process id of an isolated library's child process, or undefined
   * while none runs (not started yet, died, or closed; or not isolated).
   */
  get pid(): number | undefined {
    return this.#isolated?.pid;
  }

  #inProcess(what: string): void {
    if (this.#isolated === null) return;
    throw new FfiError(
      ErrorCode.FAILED_PRECONDITION,
      `${what} is not available for the isolated handler library ${this.path}: ` +
        `its code is loaded in its own process`,
    );
  }

  /** The address of any symbol; FfiError NOT_FOUND when it is missing. */
  symbol(name: string): Deno.PointerObject {
    this.#inProcess(`symbol('${name}')`);
    if (this.#handle === null) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The handler library ${this.path} is closed`,
      );
    }
    const p = native().xla_ffi_deno_runtime_dlsym(this.#handle, _cString(name));
    if (p === null) {
      const why = lastError();
      const near = nearestFunction(this.path, name);
      throw new FfiError(
        ErrorCode.NOT_FOUND,
        `Symbol '${name}' not found in handler library ${this.path}: ${why}`,
        { hint: near === undefined ? undefined : `did you mean '${near}'?` },
      );
    }
    const v = BigInt(Deno.UnsafePointer.value(p));
    deadHandlers.delete(v); // a library loaded again at the same address
    this.#resolved.set(v, p);
    return p;
  }

  /** The handler exported under `name` (cached). */
  handler(name: string): NativeHandler {
    let h = this.#cache.get(name);
    if (!h && this.#isolated !== null) {
      const iso = this.#isolated;
      if (iso.closed) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `The handler library ${this.path} is closed`,
        );
      }
      iso.resolve(name);
      h = new NativeHandler(native().xla_ffi_deno_isolate_stub()!, name);
      h._isolated = iso;
      owners.set(h, this); // the process lives on while its handler is reachable
      this.#cache.set(name, h);
    }
    if (!h) {
      h = new NativeHandler(this.symbol(name), name);
      _describeHandler(h.pointer, name, this.path); // named by a crash in it
      owners.set(h, this); // the library stays loaded while its handler is reachable
      this.#cache.set(name, h);
    }
    return h;
  }

  /**
   * Calls the library's exported `XLA_FFI_TypeId* name(void)` (what ffi.h's
   * `XLA_FFI_DECLARE_TYPE_ID_SYMBOL` declares: it returns `&T::id`) and
   * returns that storage, for `Runtime.registerType`. A library's types must
   * be registered before its handlers use them (ffi.h asserts a registered,
   * non-zero id).
   */
  typeId(name: string): TypeIdRef {
    this.#inProcess(`typeId('${name}')`);
    const p = callGetter(this.symbol(name));
    if (p === null) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `'${name}' of handler library ${this.path} returned a null XLA_FFI_TypeId*`,
      );
    }
    const ref = new TypeIdRef(p, name);
    owners.set(ref, this); // the storage is the library's: it stays loaded while ref is reachable
    return ref;
  }

  /**
   * Calls the library's exported `const XLA_FFI_TypeInfo* name(void)` (ffi.h's
   * `XLA_FFI_DECLARE_TYPE_INFO_SYMBOL`) and returns the TypeInfo's address,
   * for the `typeInfo` option of `Runtime.registerType` (its deleter frees
   * states of that type; API 0.2 and later).
   */
  typeInfo(name: string): Deno.PointerObject {
    this.#inProcess(`typeInfo('${name}')`);
    const p = callGetter(this.symbol(name));
    if (p === null) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `'${name}' of handler library ${this.path} returned a null XLA_FFI_TypeInfo*`,
      );
    }
    return p;
  }

  /**
   * Closes the library. Once it is unloaded, calling a handler from it
   * (directly, in a bundle or through a registration) is an FfiError
   * FAILED_PRECONDITION.
   */
  close(): void {
    if (this.#isolated !== null) {
      this.#isolated.close();
      _unregister(this);
      this.#cache.clear();
      return;
    }
    if (this.#handle === null) return;
    _unregister(this);
    unload(this.#handle, this.path, this.#resolved);
    this.#handle = null;
    this.#cache.clear();
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

const GETTER = { parameters: [], result: "pointer" } as const;

/** Calls a C function `void* fn(void)`. */
function callGetter(fn: Deno.PointerObject): Deno.PointerValue {
  return new Deno.UnsafeFnPointer(fn as Deno.PointerObject<typeof GETTER>, GETTER).call();
}

function lastError(): string {
  const p = native().xla_ffi_deno_runtime_dlerror();
  return p === null ? "unknown error" : Deno.UnsafePointerView.getCString(p);
}

/**
 * The function the library at `path` exports whose name is nearest `name`
 * (for a NOT_FOUND message), or undefined when none is near or the file
 * cannot be read (no read permission granted, not ELF): only a hint.
 */
function nearestFunction(path: string, name: string): string | undefined {
  try {
    // Never a permission prompt for a hint.
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return undefined;
    const { symbols } = readElfSymbols(path);
    return _closest(name, symbols.map((s) => s.name));
  } catch {
    return undefined;
  }
}
