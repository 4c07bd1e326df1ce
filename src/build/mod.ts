/**
 * Building handler libraries: compile C or C++ handlers written against the
 * XLA FFI headers into a shared library that `HandlerLibrary.open` loads
 * (and that real XLA could load too), without a build system of your own.
 *
 * Sources are given relative to the working directory (or to `root`); the
 * FFI headers are found for you: this module's own C header
 * (`ffiHeaders: "module"`, the default: `#include "xla_ffi.h"`) or jaxlib's
 * C++ `ffi.h` (`ffiHeaders: "jaxlib"`: `#include "xla/ffi/api/ffi.h"`,
 * found through the Python in `XLA_FFI_DENO_PYTHON`). Third-party headers are
 * included with `-isystem`, so their warnings are not yours; your own code
 * is compiled with `-Wall -Wextra -Werror` and your `flags` after them. The
 * result is cached by content in your project (`.deno-xla-ffi/build` of the
 * working directory) or, when this module is imported from JSR or a URL, in
 * the per-user cache ({@link defaultCacheDir}; `cacheDir` chooses another
 * folder), never in this module's own folder; a failed compile throws an
 * error that names the compiler's first error line.
 *
 * @example
 * ```ts
 * import { buildHandlerLibrary } from "@deno-xla/ffi/build";
 * import { CallFrameBuilder, HandlerLibrary, Runtime } from "@deno-xla/ffi";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(
 *   `${dir}/fill.c`,
 *   `#include "xla_ffi.h"
 * XLA_FFI_Error* fill(XLA_FFI_CallFrame* f) {
 *   if (f->extension_start != NULL) return NULL; // a metadata query (see docs/build.md)
 *   XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)f->rets.rets[0];
 *   ((float*)out->data)[0] = 42.0f;
 *   return NULL;
 * }
 * `,
 * );
 * const path = buildHandlerLibrary({ name: "fill", sources: ["fill.c"], root: dir, cacheDir: dir });
 * using lib = HandlerLibrary.open(path);
 * using rt = new Runtime({ threads: 0 });
 * const out = new Float32Array(1);
 * using frame = new CallFrameBuilder().ret(out).build();
 * rt.callSync(lib.handler("fill"), frame);
 * console.log(out[0]); // 42
 * Deno.removeSync(dir, { recursive: true });
 * ```
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSharedLibrary } from "../native/compile.ts";
import { installNative } from "../native/loader.ts";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { findPython } from "../xla/interpreter.ts";

/** Options of {@link buildHandlerLibrary}. */
export interface HandlerBuildOptions {
  /** Library base name: the file is `lib<name>.so` (letters, digits, `_`, `-`, `.`). */
  name: string;
  /**
   * Source files, relative to `root`: `.c` (C11) or `.cc`/`.cpp`/`.cxx`
   * (C++17). Headers listed here (`.h`, `.hpp`, ...) are not compiled but
   * count for the cache, as do the headers beside the sources and in the
   * include folders, and every file the compiler read (any header, in any
   * folder, and included files such as `table.def`).
   */
  sources: readonly string[];
  /** The folder relative paths start from: a path or `file:` URL; default the working directory. */
  root?: string | URL;
  /**
   * Where the XLA FFI headers come from, always included with `-isystem`:
   * `"module"` (default) this module's C header `xla_ffi.h`; `"jaxlib"` the
   * headers jaxlib ships (`xla/ffi/api/ffi.h`, C++), found through `python`;
   * or a folder (relative to `root`) that holds them.
   */
  ffiHeaders?: string;
  /** The Python with jaxlib for `ffiHeaders: "jaxlib"`; default `$XLA_FFI_DENO_PYTHON` (or the older `$DENO_XLA_PYTHON`), else `python3`. */
  python?: string;
  /** Folders of your own headers (`-I`), relative to `root`. */
  includeDirs?: readonly string[];
  /** Folders of third-party headers (`-isystem`: their warnings are not reported), relative to `root`. */
  systemIncludeDirs?: readonly string[];
  /** Compiler flags appended after the defaults (e.g. `["-O3"]`, `["-Wno-error"]`, `["-DNDEBUG"]`). */
  flags?: readonly string[];
  /** Linker flags (e.g. `["-lm"]`). */
  linkFlags?: readonly string[];
  /** `"c"` or `"c++"`; default: from the sources' extensions (mixing them needs this). */
  language?: "c" | "c++";
  /**
   * The folder builds are cached in (a path, relative to `root`, or a `file:`
   * URL). Default: {@link defaultCacheDir}, in your project (`.deno-xla-ffi/build`
   * of the working directory) when this module is a local file, in the per-user
   * cache (`$XDG_CACHE_HOME/deno-xla-ffi/build`, else `~/.cache/deno-xla-ffi/build`)
   * when it is imported from JSR or a URL. Never this module's own folder.
   */
  cacheDir?: string | URL;
  /**
   * A folder (a path, relative to `root`, or a `file:` URL; made when
   * missing) to put the library in as `lib<name>.so`, a path that stays the
   * same from build to build, to hand to the command line, a Python script
   * or a build file; `buildHandlerLibrary` then returns that path. The build
   * is still made and cached in `cacheDir`, and copied out: replaced with an
   * atomic rename when its bytes changed, left as it is (its date too) when
   * they did not. A process that loaded the earlier library by this path
   * keeps it (the dynamic loader gives the one it loaded for a path again):
   * to load a new build in the same process, use the cache's path.
   *
   * @example
   * ```ts
   * import { buildHandlerLibrary } from "@deno-xla/ffi/build";
   * const dir = Deno.makeTempDirSync();
   * Deno.writeTextFileSync(
   *   `${dir}/answer.c`,
   *   `#include "xla_ffi.h"
   * XLA_FFI_Error* answer(XLA_FFI_CallFrame* f) { (void)f; return NULL; }
   * `,
   * );
   * const path = buildHandlerLibrary({
   *   name: "answer",
   *   sources: ["answer.c"],
   *   root: dir,
   *   cacheDir: ".cache",
   *   outDir: "lib",
   * });
   * console.log(path === `${dir}/lib/libanswer.so`); // true
   * Deno.removeSync(dir, { recursive: true });
   * ```
   */
  outDir?: string | URL;
}

/** The folder name of the default cache in a working directory. */
const PROJECT_CACHE = ".deno-xla-ffi/build";

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `reading the environment variable ${name} needs --allow-env (${(e as Error).message}); ` +
          `or give buildHandlerLibrary a cacheDir`,
        { cause: e },
      );
    }
    throw e;
  }
}

/**
 * The folder {@link buildHandlerLibrary} caches builds in when no `cacheDir`
 * is given. When this module is a local file (a checkout, or a copy in your
 * project), builds land in your project: `.deno-xla-ffi/build` of the working
 * directory (add `.deno-xla-ffi/` to your `.gitignore`). When it is imported
 * from JSR or a URL, Deno's cache of it is read-only and shared by all your
 * projects, and so are the builds: they land in
 * `$XDG_CACHE_HOME/deno-xla-ffi/build`, else `~/.cache/deno-xla-ffi/build`.
 * Builds are keyed by content, so projects sharing a cache never see each
 * other's stale libraries.
 *
 * @example
 * ```ts
 * import { defaultCacheDir } from "@deno-xla/ffi/build";
 * console.log(defaultCacheDir()); // e.g. "/home/me/project/.deno-xla-ffi/build"
 * ```
 */
export function defaultCacheDir(): string {
  if (new URL(import.meta.url).protocol === "file:") return resolve(Deno.cwd(), PROJECT_CACHE);
  const xdg = envGet("XDG_CACHE_HOME");
  const base = xdg ? xdg : join(envGet("HOME") ?? "/tmp", ".cache");
  return join(base, "deno-xla-ffi", "build");
}

function cacheDirPath(root: string, dir: string | URL | undefined): string {
  if (dir === undefined) return defaultCacheDir();
  return folderPath(root, dir, "cacheDir");
}

function folderPath(root: string, dir: string | URL, option: string): string {
  if (dir instanceof URL && dir.protocol === "file:") return fileURLToPath(dir);
  if (typeof dir !== "string" || dir === "") {
    bad(`${option} must be a folder path or a file: URL, got ${String(dir)}`);
  }
  return dir.startsWith("file:") ? fileURLToPath(dir) : resolve(root, dir);
}

/** Whether the file at `path` holds exactly `bytes` (false when there is none). */
function sameFile(path: string, bytes: Uint8Array): boolean {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return false;
  }
  if (!info.isFile || info.size !== bytes.length) return false;
  const old = Deno.readFileSync(path);
  for (let i = 0; i < bytes.length; i++) if (old[i] !== bytes[i]) return false;
  return true;
}

/**
 * Copies the built library to `<dir>/lib<name>.so` (the folder made when
 * missing): through a temporary file and a rename, so a reader sees the
 * whole old file or the whole new one; nothing when it holds those bytes.
 */
function placeLibrary(built: string, dir: string, name: string): string {
  const target = join(dir, `lib${name}.so`);
  try {
    const info = Deno.statSync(dir);
    if (!info.isDirectory) bad(`outDir ${dir} is not a folder`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    Deno.mkdirSync(dir, { recursive: true });
  }
  const bytes = Deno.readFileSync(built);
  if (sameFile(target, bytes)) return target;
  const tmp = `${target}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    Deno.writeFileSync(tmp, bytes, { mode: 0o755 });
    Deno.renameSync(tmp, target);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* not made */ }
    throw e;
  }
  return target;
}

const CXX_EXT = /\.(cc|cpp|cxx|c\+\+|C)$/;
const C_EXT = /\.c$/;
const HEADER_EXT = /\.(h|hh|hpp|hxx|inc|inl)$/;
/** Header files taken into the cache key per folder (a guard against huge trees). */
const MAX_KEY_HEADERS = 2000;

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

function rootPath(root: string | URL | undefined): string {
  if (root === undefined) return Deno.cwd();
  if (root instanceof URL || root.startsWith("file:")) return fileURLToPath(root);
  return resolve(root);
}

function kindOf(path: string): "dir" | "file" | undefined {
  try {
    const st = Deno.statSync(path);
    return st.isDirectory ? "dir" : st.isFile ? "file" : undefined;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `reading ${path} needs --allow-read (${(e as Error).message})`,
        { cause: e },
      );
    }
    throw e;
  }
}

function existing(root: string, rel: string, what: string, want: "dir" | "file"): string {
  const path = isAbsolute(rel) ? rel : resolve(root, rel);
  if (kindOf(path) !== want) {
    throw new FfiError(
      ErrorCode.NOT_FOUND,
      `${what} '${rel}' not found: no ${want === "dir" ? "folder" : "file"} ${path}` +
        (isAbsolute(rel) ? "" : ` (relative to ${root})`),
    );
  }
  return path;
}

/** Header files in `dir` (recursively with `deep`), at most MAX_KEY_HEADERS, sorted. */
function headersIn(dir: string, deep: boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const e of entries) {
      if (out.length >= MAX_KEY_HEADERS) return;
      const p = join(d, e.name);
      if (e.isFile && HEADER_EXT.test(e.name)) out.push(p);
      else if (deep && e.isDirectory) walk(p);
    }
  };
  walk(dir);
  return out;
}

const jaxlibDirs = new Map<string, string>();

const JAXLIB_PROBE = `
import os, jaxlib
d = os.path.dirname(os.path.abspath(jaxlib.__file__)) if jaxlib.__file__ else list(jaxlib.__path__)[0]
print(os.path.join(d, "include"))
`;

/**
 * The folder of the XLA FFI headers jaxlib ships (what `jax.ffi.include_dir()`
 * returns), asked of `python` (default `$XLA_FFI_DENO_PYTHON` (or the older `$DENO_XLA_PYTHON`), else `python3`);
 * it holds `xla/ffi/api/ffi.h`. Throws FfiError UNAVAILABLE when the
 * interpreter cannot be run, has no jaxlib, or its jaxlib has no FFI headers.
 *
 * @example
 * ```ts ignore
 * import { jaxlibIncludeDir } from "@deno-xla/ffi/build";
 * console.log(jaxlibIncludeDir()); // ".../site-packages/jaxlib/include"
 * ```
 */
export function jaxlibIncludeDir(python?: string): string {
  const exe = findPython(python);
  const known = jaxlibDirs.get(exe);
  if (known !== undefined) return known;
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command(exe, {
      args: ["-c", JAXLIB_PROBE],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Running the Python interpreter ${exe} needs --allow-run (${(e as Error).message})`,
        { cause: e },
      );
    }
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `Cannot run the Python interpreter '${exe}' to find jaxlib's FFI headers ` +
        `(${(e as Error).message}); set XLA_FFI_DENO_PYTHON or pass python`,
      { cause: e },
    );
  }
  const text = new TextDecoder();
  if (!out.success) {
    const last = text.decode(out.stderr).trim().split("\n").pop() ?? "";
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `jaxlib is not importable from '${exe}' (${last}): install jax there, point ` +
        `XLA_FFI_DENO_PYTHON (or the python option) at a Python that has it, or give ` +
        `ffiHeaders a folder that holds xla/ffi/api/ffi.h`,
    );
  }
  const dir = text.decode(out.stdout).trim();
  if (kindOf(join(dir, "xla/ffi/api/ffi.h")) !== "file") {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `jaxlib of '${exe}' ships no XLA FFI headers (no ${dir}/xla/ffi/api/ffi.h)`,
    );
  }
  jaxlibDirs.set(exe, dir);
  return dir;
}

/**
 * Builds a handler library from C or C++ sources given relative to the
 * working directory (or `root`) and returns the path of the `.so`, cached
 * by content: the sources, the headers beside them and in the include
 * folders, the FFI headers, the compiler, the flags, and every file the
 * compiler read as it lists them (`-MD`): a change to any of them builds
 * anew, at a new path. The cache is `cacheDir`, default
 * {@link defaultCacheDir}: your project's `.deno-xla-ffi/build`, or the
 * per-user cache for a remote import; never this module's folder. With
 * `outDir`, the library is also copied to `<outDir>/lib<name>.so`, a path
 * that stays the same, and that path is returned. Builds of
 * one library at once from several Workers or processes are safe. See the
 * module documentation for an example and the
 * defaults.
 *
 * Throws FfiError: INVALID_ARGUMENT for a bad name, no sources or mixed
 * languages without `language`; NOT_FOUND for a missing source or folder;
 * UNAVAILABLE when no compiler (or jaxlib, for `ffiHeaders: "jaxlib"`) is
 * found; INTERNAL when the compiler fails (the message starts with its first
 * error line, then the command and its whole output).
 *
 * @example
 * ```ts ignore
 * import { buildHandlerLibrary } from "@deno-xla/ffi/build";
 * // ./handlers/scale.cc includes "xla/ffi/api/ffi.h"
 * const path = buildHandlerLibrary({
 *   name: "scale",
 *   sources: ["handlers/scale.cc"],
 *   ffiHeaders: "jaxlib",
 *   flags: ["-O3"],
 * });
 * ```
 */
export function buildHandlerLibrary(options: HandlerBuildOptions): string {
  if (typeof options?.name !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(options.name)) {
    bad(`name must be letters, digits, '_', '-' or '.', got ${JSON.stringify(options?.name)}`);
  }
  if (!Array.isArray(options.sources) || options.sources.length === 0) {
    bad("sources must list at least one .c or .cc file");
  }
  const root = rootPath(options.root);
  const sources = options.sources.map((s) => existing(root, s, "Source", "file"));
  const compiled = sources.filter((s) => !HEADER_EXT.test(s));
  const odd = compiled.find((s) => !C_EXT.test(s) && !CXX_EXT.test(s));
  if (odd !== undefined) bad(`${odd}: not a C (.c) or C++ (.cc, .cpp, .cxx) source`);
  if (compiled.length === 0) bad("sources list only headers: give at least one .c or .cc file");
  let cxx: boolean;
  if (options.language !== undefined) {
    if (options.language !== "c" && options.language !== "c++") {
      bad(`language must be "c" or "c++", got ${JSON.stringify(options.language)}`);
    }
    cxx = options.language === "c++";
  } else {
    const nCxx = compiled.filter((s) => CXX_EXT.test(s)).length;
    if (nCxx > 0 && nCxx < compiled.length) {
      bad(
        `sources mix C and C++ files: compile them all as C++ with language: "c++", ` +
          `or build two libraries`,
      );
    }
    cxx = nCxx > 0;
  }
  const dirs = (list: readonly string[] | undefined, what: string) =>
    (list ?? []).map((d) => existing(root, d, what, "dir"));
  const includeDirs = dirs(options.includeDirs, "Include folder");
  const systemDirs = dirs(options.systemIncludeDirs, "System include folder");
  const ffi = options.ffiHeaders ?? "module";
  let ffiDir: string | URL;
  const keyHeaders: string[] = [];
  if (ffi === "module") {
    ffiDir = new URL("../../native/", import.meta.url); // its headers key every build
  } else if (ffi === "jaxlib") {
    ffiDir = jaxlibIncludeDir(options.python);
    keyHeaders.push(...headersIn(join(ffiDir, "xla/ffi/api"), false));
  } else {
    ffiDir = existing(root, ffi, "FFI header folder", "dir");
    keyHeaders.push(...headersIn(ffiDir, true));
  }
  for (const d of new Set(compiled.map((s) => dirname(s)))) {
    keyHeaders.push(...headersIn(d, false));
  }
  for (const d of [...includeDirs, ...systemDirs]) keyHeaders.push(...headersIn(d, true));
  const listed = new Set(sources);
  const extra = [...new Set(keyHeaders)].filter((h) => !listed.has(h)).sort();
  const outDir = options.outDir === undefined
    ? undefined
    : folderPath(root, options.outDir, "outDir");
  const built = buildSharedLibrary({
    name: options.name,
    sources: [...sources, ...extra].map((p) => pathToFileURL(p)),
    cxx,
    extraFlags: [...(options.flags ?? [])],
    linkFlags: [...(options.linkFlags ?? [])],
    includeDirs: includeDirs.map((d) => pathToFileURL(d)),
    systemIncludeDirs: [ffiDir, ...systemDirs].map((d) => d instanceof URL ? d : pathToFileURL(d)),
    outDir: cacheDirPath(root, options.cacheDir),
  });
  return outDir === undefined ? built : placeLibrary(built, outDir, options.name);
}

// `deno run -A jsr:@deno-xla/ffi/build`: installs the module's native libraries (the shipped
// prebuilt ones, else built from source) into the cache and prints where, for containers and CI.
if (import.meta.main) {
  for (const path of installNative()) console.log(path);
}
