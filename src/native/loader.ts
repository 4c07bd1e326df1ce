/**
 * The module's native programs at run time: the paths of the main library,
 * the exception guard library and the isolated child program (installed
 * from the shipped prebuilt files or compiled by `compile.ts` on first use),
 * and the permissions that first use needs. `lib.ts` opens what this finds.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import {
  _cached,
  _fileSha256,
  _plan,
  _shipped,
  buildExecutable,
  buildSharedLibrary,
  envGet,
  findCxxCompiler,
  GUARD_LIBRARY,
  HERE,
  ISOLATE_PROGRAM,
  MAIN_LIBRARY,
  prebuilt,
} from "./compile.ts";
import { platformName, PREBUILT_PLATFORMS } from "./prebuilt.ts";

/**
 * Path of the child program isolated handler libraries run in:
 * `XLA_FFI_DENO_ISOLATE` when set, else the cached build of
 * {@link ISOLATE_SOURCES} (prebuilt in `XLA_FFI_DENO_PREBUILT` when there).
 *
 * @example
 * ```ts ignore
 * import { isolateChildPath } from "./build.ts";
 * console.log(isolateChildPath());
 * ```
 */
export function isolateChildPath(): string {
  const env = envGet("XLA_FFI_DENO_ISOLATE");
  if (env) return env;
  return buildExecutable(ISOLATE_PROGRAM);
}

/**
 * Path of the module's main native library: `XLA_FFI_DENO_LIB` when set
 * (no build), else the cached build of {@link NATIVE_SOURCES}.
 *
 * @example
 * ```ts ignore
 * import { nativeLibraryPath } from "./build.ts";
 * console.log(nativeLibraryPath());
 * ```
 */
export function nativeLibraryPath(): string {
  const env = envGet("XLA_FFI_DENO_LIB");
  if (env) return env;
  return buildSharedLibrary(MAIN_LIBRARY);
}

/** The environment variables the build reads. */
const BUILD_ENV = [
  "XLA_FFI_DENO_LIB",
  "XLA_FFI_DENO_BUILD",
  "XLA_FFI_DENO_WERROR",
  "XDG_CACHE_HOME",
  "HOME",
  "XLA_FFI_DENO_PREBUILT",
  "XLA_FFI_DENO_GUARD_LIB",
  "CC",
  "CXX",
  "PATH",
  "XLA_FFI_DENO_SANITIZE",
  "LD_PRELOAD",
];

function granted(desc: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(desc).state === "granted";
}

/** What {@link missingNativePermissions} found. */
export interface MissingPermissions {
  /** The flags missing, bare (`--allow-write`), in the order env, read, write, run, ffi. */
  missing: string[];
  /** Those of {@link missing} needed only because the library is not in the cache yet. */
  buildOnly: string[];
  /**
   * The same flags as they would be given, scoped to the path or program
   * where one is known (`--allow-write=/home/me/.cache/deno-xla-ffi`).
   */
  exact: string[];
  /**
   * What the first use does: `install` copies the shipped prebuilt library
   * into the cache, `build` compiles it, `load` only loads it.
   */
  action: "load" | "install" | "build";
}

/**
 * The permission flags that opening the module's native library (installing
 * or building it first when it is not cached) needs and this process lacks,
 * all at once, in the order `--allow-env`, `--allow-read`, `--allow-write`,
 * `--allow-run`, `--allow-ffi`, with the exact (scoped) flag for each.
 * `buildOnly` are those needed only because the library is not in the cache
 * yet (or may not be: without env and read access the cache cannot be looked
 * at). Only what the chosen way needs is asked for: a shipped prebuilt
 * library needs no `--allow-run` and no compiler. Empty lists: nothing is
 * missing.
 *
 * @example
 * ```ts ignore
 * import { missingNativePermissions } from "./build.ts";
 * const { exact } = missingNativePermissions();
 * if (exact.length > 0) console.log(`run again with ${exact.join(" ")}`);
 * ```
 */
export function missingNativePermissions(): MissingPermissions {
  const missingEnv = BUILD_ENV.filter((variable) => !granted({ name: "env", variable }));
  const here = HERE.protocol === "file:" ? fileURLToPath(HERE).replace(/\/$/, "") : undefined;
  const read = here === undefined || granted({ name: "read", path: here });
  const missing: string[] = [];
  const exact: string[] = [];
  if (missingEnv.length > 0) {
    missing.push("--allow-env");
    // None of them: the plain flag; some: exactly those still missing.
    exact.push(
      missingEnv.length === BUILD_ENV.length
        ? "--allow-env"
        : `--allow-env=${missingEnv.join(",")}`,
    );
  }
  if (!read) {
    missing.push("--allow-read");
    exact.push(`--allow-read=${here}`);
  }
  let path: string | undefined;
  let built = false;
  // Until the cache can be looked at: what this platform would do.
  let action: MissingPermissions["action"] = PREBUILT_PLATFORMS.includes(platformName())
    ? "install"
    : "build";
  let writeTo: string | undefined;
  let runs: string | undefined;
  let readCache: string | undefined;
  if (missingEnv.length === 0 && read) {
    path = envGet("XLA_FFI_DENO_LIB") || prebuilt(MAIN_LIBRARY, "shared").path;
    built = path !== undefined;
    if (!built) {
      try {
        const shipped = _shipped(MAIN_LIBRARY, "shared");
        if (shipped.path) {
          action = "install";
          path = shipped.path;
          const dir = path.slice(0, path.lastIndexOf("/"));
          writeTo = dir.slice(0, dir.lastIndexOf("/"));
          if (!granted({ name: "read", path })) readCache = writeTo;
          else built = _fileSha256(path, shipped.entry!.size) === shipped.entry!.sha256;
        } else {
          action = "build";
          const plan = _plan(MAIN_LIBRARY, "shared", undefined, shipped.note);
          path = _cached(plan);
          built = path !== undefined;
          path ??= plan.dir; // the library will be built under it
          writeTo = plan.dir.slice(0, plan.dir.lastIndexOf("/"));
          runs = plan.compiler.path;
        }
      } catch (e) {
        // E.g. the cache folder does not exist and cannot be created: a build is needed.
        if (!(e instanceof FfiError) || e.code !== ErrorCode.PERMISSION_DENIED) throw e;
        const flag = /needs (--allow-[a-z]+)(=\S*)?/.exec(e.message);
        if (flag?.[1] === "--allow-read" && !missing.includes("--allow-read")) {
          missing.push("--allow-read");
          exact.push(flag[0].slice("needs ".length));
        }
      }
    }
  }
  if (readCache !== undefined) {
    if (!missing.includes("--allow-read")) missing.push("--allow-read");
    exact.push(`--allow-read=${readCache}`);
  }
  const buildOnly: string[] = [];
  if (built) action = "load";
  else {
    if (!granted(writeTo ? { name: "write", path: writeTo } : { name: "write" })) {
      buildOnly.push("--allow-write");
      exact.push(writeTo ? `--allow-write=${writeTo}` : "--allow-write");
    }
    if (action === "build" && !granted(runs ? { name: "run", command: runs } : { name: "run" })) {
      buildOnly.push("--allow-run");
      exact.push(runs ? `--allow-run=${runs}` : "--allow-run");
    }
    missing.push(...buildOnly);
  }
  if (!granted(path ? { name: "ffi", path } : { name: "ffi" })) {
    missing.push("--allow-ffi");
    exact.push("--allow-ffi");
  }
  return { missing, buildOnly, exact, action };
}

/**
 * Path of the exception guard library (built from {@link GUARD_SOURCES} with
 * the C++ compiler, or prebuilt in `XLA_FFI_DENO_PREBUILT`):
 * `XLA_FFI_DENO_GUARD_LIB` when set; undefined when `XLA_FFI_DENO_LIB` names
 * a prebuilt main library and the guard's variable is not set, or when it
 * can be neither found prebuilt nor built. Without it, a C++ exception thrown
 * by a handler ends the process instead of becoming an error.
 *
 * @example
 * ```ts ignore
 * import { guardLibraryPath } from "./build.ts";
 * console.log(guardLibraryPath() ?? "handlers are called without the exception guard");
 * ```
 */
export function guardLibraryPath(): string | undefined {
  const env = envGet("XLA_FFI_DENO_GUARD_LIB");
  if (env) return env;
  if (envGet("XLA_FFI_DENO_LIB")) return undefined;
  if (
    prebuilt(GUARD_LIBRARY, "shared").path === undefined &&
    _shipped(GUARD_LIBRARY, "shared").path === undefined && findCxxCompiler() === undefined
  ) {
    return undefined;
  }
  return buildSharedLibrary(GUARD_LIBRARY);
}

/**
 * Installs (the shipped prebuilt files) or builds the module's native
 * libraries into the cache and returns their paths: the main library, the
 * exception guard library (when there is one) and the isolated child program.
 *
 * @example
 * ```ts ignore
 * import { installNative } from "./build.ts";
 * for (const p of installNative()) console.log(p);
 * ```
 */
export function installNative(): string[] {
  const paths = [nativeLibraryPath()];
  const guard = guardLibraryPath();
  if (guard !== undefined) paths.push(guard);
  paths.push(isolateChildPath());
  return paths;
}
