/**
 * Handlers from Python extension modules: jaxlib's own CPU handlers (LAPACK
 * in `jaxlib.cpu._lapack`) and modules built with nanobind or pybind11 keep
 * their handler functions as local symbols and hand out `XLA_FFI_Handler*`
 * addresses as PyCapsules named `xla._CUSTOM_CALL_TARGET` from a
 * `registrations()` function. {@link Xla.handlersFrom} turns them into
 * {@link ModuleHandler}s, usable wherever a C handler is.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { type HandlerStages, NativeHandler } from "../runtime/handler_library.ts";
import { _describeHandler } from "../native/lib.ts";

/** Options of {@link Xla.handlersFrom}. */
export interface HandlersFromOptions {
  /**
   * A function of the module to call (without arguments) before asking for
   * its handlers, e.g. `"initialize"` for `jaxlib.cpu._lapack`, whose
   * handlers crash the process when called before it ran (in plain jax too).
   * Default: none is called.
   */
  initialize?: string;
  /**
   * The platform whose handlers to keep (case-insensitive; `"*"`: every
   * platform's). Default `"cpu"`. A flat `registrations()` dict names no
   * platform: its handlers are taken to be the asked platform's.
   */
  platform?: string;
  /** The function handing out the capsules (default `"registrations"`). */
  registrations?: string;
}

/** A target of a module that {@link Xla.handlersFrom} did not turn into a handler. */
export interface SkippedTarget {
  /** The registered name. */
  readonly name: string;
  /** The platform it was registered for. */
  readonly platform: string;
  /** The custom call API version (0: legacy, 1: XLA FFI). */
  readonly apiVersion: number;
  /** Why it was skipped, e.g. "a legacy custom call (api_version 0), not an XLA FFI handler". */
  readonly reason: string;
}

/**
 * An XLA FFI handler handed out by a Python extension module: a
 * {@link NativeHandler} (its execute stage) that names its module and
 * refuses to be used once the {@link Xla} host that loaded it is closed
 * (FAILED_PRECONDITION naming the handler and the module). CPython never
 * unloads an extension module, so a call already registered keeps working
 * until the process ends; new registrations and calls are refused.
 *
 * @example
 * ```ts ignore
 * const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
 * const getrf = lapack.get("lapack_sgetrf_ffi")!;
 * console.log(getrf.module, getrf.apiVersion); // jaxlib.cpu._lapack 1
 * ```
 */
export class ModuleHandler extends NativeHandler {
  /** The Python module that handed it out. */
  readonly module: string;
  /** The platform it is registered for (`"cpu"`). */
  readonly platform: string;
  /** The custom call API version (always 1: XLA FFI). */
  readonly apiVersion: number;
  /**
   * Every stage when the module gave a dict of stages (`{ instantiate,
   * execute, … }`); undefined for a single execute handler.
   */
  readonly stages: HandlerStages | undefined;
  /** @internal What the module was asked with (its initializer, platform): an isolated process asks the same. */
  readonly _from: HandlersFromOptions;

  /**
   * Wraps an address a module handed out.
   *
   * @param pointer the `XLA_FFI_Handler*`
   * @param name the registered name
   * @param module the module's name
   * @param isOpen whether the host that loaded the module is still open
   * @param info platform, API version, the other stages and what the module was asked with
   */
  constructor(
    pointer: Deno.PointerObject,
    name: string,
    module: string,
    isOpen: () => boolean,
    info: {
      platform?: string;
      apiVersion?: number;
      stages?: HandlerStages;
      from?: HandlersFromOptions;
    } = {},
  ) {
    super(pointer, name);
    this.module = module;
    this.platform = info.platform ?? "cpu";
    this.apiVersion = info.apiVersion ?? 1;
    this.stages = info.stages;
    this._from = info.from ?? {};
    // A crash in it names it as the module registers it, on either host (native/crash.c).
    _describeHandler(pointer, `${module}:${name}`, `python-module:${module}`);
    Object.defineProperty(this, "pointer", {
      enumerable: true,
      get: () => {
        if (!isOpen()) {
          throw new FfiError(
            ErrorCode.FAILED_PRECONDITION,
            `The handler ${name} of the Python module ${module} is unusable: the Xla host ` +
              `that loaded it is closed`,
          );
        }
        return pointer;
      },
    });
  }
}

/**
 * The handlers a Python extension module hands out, by registered name,
 * from {@link Xla.handlersFrom}; what it left out (legacy custom calls,
 * capsules of another name) is in {@link skipped}.
 *
 * @example
 * ```ts ignore
 * const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
 * console.log([...lapack.keys()].filter((n) => n.includes("getrf")));
 * ```
 */
export class ModuleHandlers extends Map<string, ModuleHandler> {
  /** The module's name. */
  readonly module: string;
  /** The module's file (`__file__`), or null. */
  readonly file: string | null;
  /** Every platform its `registrations()` named (`["cpu"]` for a flat dict). */
  readonly platforms: readonly string[];
  /** Targets left out, with the reason. */
  readonly skipped: readonly SkippedTarget[];

  /**
   * Collects a module's handlers.
   *
   * @param module the module's name
   * @param file its file, or null
   * @param platforms the platforms it named
   * @param handlers its handlers
   * @param skipped the targets left out
   */
  constructor(
    module: string,
    file: string | null,
    platforms: readonly string[],
    handlers: Iterable<ModuleHandler>,
    skipped: readonly SkippedTarget[],
  ) {
    super();
    for (const h of handlers) this.set(h.name, h);
    this.module = module;
    this.file = file;
    this.platforms = platforms;
    this.skipped = skipped;
  }

  /**
   * The handler registered as `name`; FfiError NOT_FOUND naming the module
   * and saying why when it was skipped or is not there.
   *
   * @example
   * ```ts ignore
   * const getrf = lapack.handler("lapack_sgetrf_ffi");
   * ```
   */
  handler(name: string): ModuleHandler {
    const h = this.get(name);
    if (h !== undefined) return h;
    const s = this.skipped.find((t) => t.name === name);
    if (s !== undefined) {
      throw new FfiError(
        ErrorCode.NOT_FOUND,
        `${this.module} registers ${name} for ${s.platform}, but it is ${s.reason}`,
      );
    }
    const near = [...this.keys()].filter((k) => k.includes(name) || name.includes(k)).slice(0, 5);
    throw new FfiError(
      ErrorCode.NOT_FOUND,
      `${this.module} registers no handler ${JSON.stringify(name)}` +
        (near.length ? ` (similar: ${near.join(", ")})` : ` (it has ${this.size})`),
    );
  }
}

/** The reply of the bridge's `handlers_from` op. */
export interface _HandlersReply {
  module: string;
  file: string | null;
  platforms: string[];
  handlers: {
    name: string;
    platform: string;
    apiVersion: number;
    stages: Record<string, number>;
  }[];
  skipped: SkippedTarget[];
}

/**
 * Builds the handlers of a reply; `isOpen` tells whether the host is still
 * open, `from` what the module was asked with.
 */
export function _moduleHandlers(
  r: _HandlersReply,
  isOpen: () => boolean,
  from: HandlersFromOptions = {},
): ModuleHandlers {
  const out: ModuleHandler[] = [];
  for (const t of r.handlers) {
    const ptr = (a: number) => Deno.UnsafePointer.create(BigInt(a))!;
    const mk = (stage: string) =>
      new ModuleHandler(ptr(t.stages[stage]!), t.name, r.module, isOpen, {
        platform: t.platform,
        apiVersion: t.apiVersion,
        from,
      });
    const names = Object.keys(t.stages);
    let stages: HandlerStages | undefined;
    if (names.some((s) => s !== "execute")) {
      const all: Record<string, ModuleHandler> = {};
      for (const s of names) all[s] = mk(s);
      stages = all as unknown as HandlerStages;
    }
    out.push(
      new ModuleHandler(ptr(t.stages.execute!), t.name, r.module, isOpen, {
        platform: t.platform,
        apiVersion: t.apiVersion,
        stages,
        from,
      }),
    );
  }
  return new ModuleHandlers(r.module, r.file ?? null, r.platforms, out, r.skipped);
}
