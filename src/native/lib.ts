/**
 * Finding, building and opening the module's native library.
 *
 * @module
 */
import { guardLibraryPath, missingNativePermissions, nativeLibraryPath } from "./loader.ts";
import { ErrorCode } from "../abi/enums.ts";
import { _loaderMessage, FfiError } from "../errors.ts";
import { type NativeSymbols, SYMBOLS } from "./symbols.ts";

/** The opened native library's symbols. */
export type Native = Deno.DynamicLibrary<NativeSymbols>["symbols"];

let opened: Deno.DynamicLibrary<NativeSymbols> | undefined;

/**
 * Opens any shared library with a symbol table, turning Deno's errors into
 * {@link FfiError}s that name the path, the loader's message, or the missing
 * permission.
 */
export function openLibrary<S extends Deno.ForeignLibraryInterface>(
  path: string,
  symbols: S,
): Deno.DynamicLibrary<S> {
  try {
    return Deno.dlopen(path, symbols);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Opening the native library ${path} needs --allow-ffi (${_loaderMessage(e)})`,
        { cause: e },
      );
    }
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `Cannot load the native library ${path}: ${_loaderMessage(e)}`,
      { cause: e },
    );
  }
}

/**
 * The module's native library, built on first use when needed and kept open
 * for the life of the process.
 */
export function native(): Native {
  if (!opened) {
    _checkPermissions();
    opened = openLibrary(nativeLibraryPath(), SYMBOLS);
    installGuard(opened.symbols);
    // A fatal signal in a handler called in-process names it (docs/faults.md).
    if (_crashReportWanted()) opened.symbols.xla_ffi_deno_crash_install();
  }
  return opened.symbols;
}

/**
 * Whether to install the fatal-signal reporter: unless `XLA_FFI_DENO_CRASH_REPORT`
 * is `0` (read only when the environment may be read without a prompt). Child
 * processes that exist to contain a crash, and report it themselves (the
 * command line's), set it.
 */
function _crashReportWanted(): boolean {
  const variable = "XLA_FFI_DENO_CRASH_REPORT";
  try {
    if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") return true;
    return Deno.env.get(variable) !== "0";
  } catch {
    return true;
  }
}

const crashText = new TextEncoder();

/** What each described handler pointer is called, and its library ("" for TS). */
const described = new Map<bigint, { base: string; library: string }>();

function describeNative(pointer: Deno.PointerObject, name: string, library: string): void {
  native().xla_ffi_deno_crash_describe(
    pointer,
    crashText.encode(name + "\0"),
    crashText.encode(library + "\0"),
  );
}

/**
 * @internal What a fatal signal during a call of `pointer` names: `name`
 * (a symbol, a TS function's name) and `library`, the path of its shared
 * object (`""` for a TS handler). A later description of the pointer
 * replaces this one. Costs nothing per call: the table is read only when a
 * signal arrives (docs/faults.md, "Crashes in-process").
 */
export function _describeHandler(pointer: Deno.PointerObject, name: string, library: string): void {
  described.set(BigInt(Deno.UnsafePointer.value(pointer)), { base: name, library });
  describeNative(pointer, `'${name}'`, library);
}

/**
 * @internal `pointer` was registered as `registered`: a crash names it
 * `'registered' (name)`. A pointer never described is named by the shared
 * object holding it.
 */
export function _describeRegistered(pointer: Deno.PointerObject, registered: string): void {
  const d = described.get(BigInt(Deno.UnsafePointer.value(pointer)));
  if (d !== undefined) {
    // An ffiCall's own registration is internal: the handler keeps its own name.
    const name = registered.startsWith("deno_xla.ffi_call.")
      ? `'${d.base}'`
      : `'${registered}' (${d.base})`;
    describeNative(pointer, name, d.library);
    return;
  }
  const buf = new Uint8Array(4096);
  let library = "(no shared object)";
  if (native().xla_ffi_deno_runtime_dladdr(pointer, buf, buf.length) !== 0) {
    const end = buf.indexOf(0);
    library = new TextDecoder().decode(buf.subarray(0, end < 0 ? buf.length : end));
  }
  describeNative(pointer, `'${registered}'`, library);
}

let guardProblem: string | undefined = "not installed yet";

/**
 * Loads the exception guard library (C++, built when a C++ compiler is
 * found) and hands its function to the runtime, which then calls handlers
 * inside try/catch as XLA does. Without it handlers are called directly.
 */
function installGuard(sym: Native): void {
  try {
    const path = guardLibraryPath();
    if (path === undefined) {
      guardProblem = "no C++ compiler was found to build the exception guard library " +
        "(set CXX, or XLA_FFI_DENO_GUARD_LIB to a prebuilt one)";
      return;
    }
    const handle = sym.xla_ffi_deno_runtime_dlopen(new TextEncoder().encode(path + "\0"));
    const fn = handle === null ? null : sym.xla_ffi_deno_runtime_dlsym(
      handle,
      new TextEncoder().encode("xla_ffi_deno_guarded_invoke\0"),
    );
    if (fn === null) {
      const err = sym.xla_ffi_deno_runtime_dlerror();
      guardProblem = `cannot load ${path}: ${
        err === null ? "no symbol" : Deno.UnsafePointerView.getCString(err)
      }`;
      return;
    }
    sym.xla_ffi_deno_runtime_set_invoke_guard(fn); // kept loaded for the life of the process
    guardProblem = undefined;
  } catch (e) {
    guardProblem = `building the exception guard library failed: ${(e as Error).message}`;
  }
}

/**
 * Whether the runtime catches C++ exceptions thrown by handlers (as XLA
 * does, turning them into UNKNOWN "XLA FFI call failed: <what>" errors), and
 * if not, why.
 *
 * @example
 * ```ts
 * import { exceptionGuard } from "@deno-xla/ffi";
 * const g = exceptionGuard();
 * console.log(g.installed ? "C++ exceptions become errors" : g.reason);
 * ```
 */
export function exceptionGuard(): { installed: boolean; reason?: string } {
  const sym = native();
  if (sym.xla_ffi_deno_runtime_invoke_guarded() === 1) return { installed: true };
  return { installed: false, reason: guardProblem };
}

/** Throws one FfiError naming every permission flag the native library needs and lacks. */
function _checkPermissions(): void {
  const { missing, buildOnly, exact, action } = missingNativePermissions();
  if (missing.length === 0) return;
  const flag = (bare: string) => exact.find((f) => f === bare || f.startsWith(`${bare}=`)) ?? bare;
  const now = missing.filter((f) => !buildOnly.includes(f)).map(flag);
  const later = buildOnly.map(flag);
  const first = action === "install"
    ? "copy its prebuilt native library into the cache on first use"
    : "build its native library on first use";
  let message: string;
  if (later.length === 0) {
    message = `@deno-xla/ffi cannot load its native library without ${now.join(" ")}`;
  } else if (now.length === 0) {
    message = `@deno-xla/ffi needs ${later.join(" ")} to ${first} (cached afterwards)`;
  } else {
    message = `@deno-xla/ffi cannot load its native library without ${now.join(" ")}, ` +
      `nor ${first} (cached afterwards) without ${later.join(" ")}`;
  }
  message += `: run again with ${exact.join(" ")}`;
  throw _exitIfUnhandled(new FfiError(ErrorCode.PERMISSION_DENIED, message));
}

/**
 * @internal A `Deno.UnsafeCallback` (a TS function C code calls), with
 * Deno's `NotCapable` turned into a PERMISSION_DENIED FfiError that says what
 * Deno wants: `--allow-ffi` for every library, since `--allow-ffi=<paths>`
 * loads libraries but makes no callbacks.
 */
export function _callback<D extends Deno.UnsafeCallbackDefinition>(
  definition: D,
  fn: Deno.UnsafeCallbackFunction<D["parameters"], D["result"]>,
): Deno.UnsafeCallback<D> {
  try {
    return new Deno.UnsafeCallback(definition, fn);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw _exitIfUnhandled(
        new FfiError(
          ErrorCode.PERMISSION_DENIED,
          "@deno-xla/ffi needs --allow-ffi without a path list for TS handlers and " +
            "asynchronous calls: Deno makes callbacks (TS functions that C code calls) only " +
            "with --allow-ffi for all libraries, and --allow-ffi=<paths> loads libraries but " +
            "makes no callbacks: run again with --allow-ffi",
          { cause: e },
        ),
      );
    }
    throw e;
  }
}

/**
 * @internal Makes `error`, when nothing catches it, end the process with
 * `error: <message>` and exit code 1, as an uncaught error would, but without
 * a stack trace of the module's internals. For errors whose message says all
 * (missing permissions).
 */
export function _exitIfUnhandled<E extends Error>(error: E): E {
  error.stack = `${error.name}: ${error.message}`;
  const report = (e: Event, reason: unknown) => {
    if (reason !== error) return;
    e.preventDefault();
    console.error(`error: ${error.message}`);
    Deno.exit(1);
  };
  globalThis.addEventListener(
    "unhandledrejection",
    (e) => report(e, (e as PromiseRejectionEvent).reason),
  );
  globalThis.addEventListener("error", (e) => report(e, (e as ErrorEvent).error));
  return error;
}

/** Path of the library {@link native} opened (or would open). */
export function nativePath(): string {
  return nativeLibraryPath();
}
