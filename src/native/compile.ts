/**
 * Builds the module's native C library (and test or example libraries) with
 * the system C compiler, into a cache folder keyed by a hash of the sources,
 * the compiler and the flags. Rebuilds only when that key changes. The
 * module needs this at run time: `loader.ts` asks it for the library's path
 * on first use. The root `build.ts` is its command line, and
 * `src/build/_generate.ts` writes the generated files.
 *
 * `XLA_FFI_DENO_PREBUILT` names a folder of libraries built elsewhere (by
 * `deno task carry`, for a machine without a C compiler): a build whose
 * sources and flags match one of them uses it instead of compiling.
 *
 * When the module is imported from a remote URL (JSR), the C sources come from
 * `src/native/embedded_sources.json` (generated from `native/`, kept in step by a
 * test): they are written to the per-user cache and compiled there, so a JSR
 * import builds the same library with no network access of its own.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import {
  platformName,
  PREBUILT_PLATFORMS,
  type PrebuiltFile,
  type PrebuiltSet,
  prebuiltSet,
} from "../native/prebuilt.ts";

/**
 * The C sources of the TS handler host (what any XLA loads), relative to
 * this file: the entry points, with the shared ABI headers and utilities.
 * They build and link on their own: the host uses nothing of the embedded
 * runtime (see `docs/architecture.md`).
 */
export const HANDLER_HOST_SOURCES: readonly string[] = [
  "native/abi_facts.h",
  "native/xla_ffi.h",
  "native/xla_ffi_dtype.h",
  "native/xla_ffi_versions.h",
  "native/common.h",
  "native/common.c",
  "native/handler_host.h",
  "native/handler_internal.h",
  "native/crash.h",
  "native/crash.c",
  "native/fp_mode.h",
  "native/handler.c",
  "native/handler_future.c",
  "native/handler_queue.c",
  "native/handler_context.c",
  "native/handler_flatten.c",
  "native/handler_guard.c",
];

/** The C sources of the main library, relative to the module root. */
export const NATIVE_SOURCES: readonly string[] = [
  ...HANDLER_HOST_SOURCES,
  "native/lib_info.c",
  "native/runtime_internal.h",
  "native/runtime.c",
  "native/runtime_pool.c",
  "native/runtime_call.c",
  "native/runtime_registry.c",
  "native/runtime_frame.c",
  "native/runtime_library.c",
  "native/runtime_cuda.c",
  "native/runtime_guard.c",
  "native/python_host.c",
  "native/isolate_protocol.h",
  "native/isolate.c",
];

/**
 * The C source of the child program isolated handler libraries run in
 * (`HandlerLibrary.open(path, { isolate: true })`), relative to the module root.
 */
export const ISOLATE_SOURCES: readonly string[] = ["native/isolate_child.c"];

/** How {@link isolateChildPath} builds the child program of isolated handler libraries. */
export const ISOLATE_PROGRAM: BuildOptions = {
  name: "xla_ffi_deno_isolate",
  sources: ISOLATE_SOURCES,
  linkFlags: ["-ldl"],
};

/**
 * The C++ source of the exception guard library, relative to the module root: it
 * calls handlers inside try/catch, as XLA does (see {@link guardLibraryPath}).
 */
export const GUARD_SOURCES: readonly string[] = ["native/invoke_guard.cc"];

/** Header files among a build's sources: hashed into its key, not compiled. */
export const _HEADER = /\.(h|hh|hpp|hxx|inc|inl)$/;
const HEADER = _HEADER;

/** Flags of C and C++ builds alike, after the language standard. */
const COMMON_FLAGS: readonly string[] = ["-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-pthread"];

/** Flags of C++ builds (the exception guard library, C++ test handlers). */
export const CXX_FLAGS: readonly string[] = ["-std=c++17", ...COMMON_FLAGS];

/** Flags every native build uses (DESIGN.md). */
export const C_FLAGS: readonly string[] = ["-std=c11", ...COMMON_FLAGS];

/**
 * Whether the module's own libraries are compiled with `-Werror`:
 * `XLA_FFI_DENO_WERROR=1` or `0` says; otherwise only in a git checkout of
 * the module (its CI and its developers). On a user's machine a newer
 * compiler's new warning must not stop the module from building.
 *
 * @example
 * ```ts ignore
 * import { werrorWanted } from "./build.ts";
 * console.log(werrorWanted()); // true in a checkout
 * ```
 */
export function werrorWanted(): boolean {
  const v = envGet("XLA_FFI_DENO_WERROR");
  if (v === "1") return true;
  if (v === "0") return false;
  if (HERE.protocol !== "file:") return false;
  try {
    Deno.statSync(new URL(".git", HERE));
    return true;
  } catch {
    return false;
  }
}

/** The module's own libraries (built from its sources, shipped prebuilt). */
function isModuleLibrary(options: BuildOptions): boolean {
  return options === MAIN_LIBRARY || options === GUARD_LIBRARY || options === ISOLATE_PROGRAM;
}

/** The base flags of a build; `-Werror` left out of the module's own libraries unless wanted. */
function baseFlags(options: BuildOptions): readonly string[] {
  const base = options.baseFlags ?? (options.cxx ? CXX_FLAGS : C_FLAGS);
  if (!isModuleLibrary(options) || werrorWanted()) return base;
  return base.filter((f) => f !== "-Werror");
}

/**
 * Flags from `XLA_FFI_DENO_SANITIZE` (e.g. `address,undefined`): every native
 * build (the main library and test libraries) then carries
 * `-fsanitize=<list> -fno-omit-frame-pointer -fno-sanitize-recover=all -g`.
 * `tests/sanitize.sh` uses it to run the whole suite under ASan and UBSan.
 *
 * @example
 * ```ts ignore
 * import { sanitizerFlags } from "./build.ts";
 * console.log(sanitizerFlags()); // [] unless XLA_FFI_DENO_SANITIZE is set
 * ```
 */
export function sanitizerFlags(): string[] {
  const list = envGet("XLA_FFI_DENO_SANITIZE");
  if (!list) return [];
  if (!/^[a-z,]+$/.test(list)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `XLA_FFI_DENO_SANITIZE must be a comma-separated list of sanitizers, got '${list}'`,
    );
  }
  return [`-fsanitize=${list}`, "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"];
}

/**
 * Environment for compiler processes: the parent's, less `LD_PRELOAD` (a
 * preloaded sanitizer runtime, as `tests/sanitize.sh` sets, breaks nvcc).
 */
export function toolEnv(): { env?: Record<string, string>; clearEnv?: boolean } {
  if (envGet("LD_PRELOAD") === undefined) return {};
  const env = Deno.env.toObject();
  delete env.LD_PRELOAD;
  return { env, clearEnv: true };
}

/** Options of {@link buildSharedLibrary}. */
export interface BuildOptions {
  /** Library base name: `lib<name>.so`. */
  name: string;
  /** Source files (`.c`, `.h`), as URLs or paths relative to this module. */
  sources: readonly (string | URL)[];
  /** Extra compiler flags appended after {@link C_FLAGS} (e.g. `-fsanitize=address`). */
  extraFlags?: readonly string[];
  /** Extra linker flags (e.g. `-ldl`). */
  linkFlags?: readonly string[];
  /** Include folders; `native/` is always included. */
  includeDirs?: readonly (string | URL)[];
  /**
   * Include folders of third-party headers, passed with `-isystem`: their
   * warnings are not reported (nor made errors by `-Werror`).
   */
  systemIncludeDirs?: readonly (string | URL)[];
  /** Replace the base flags (default {@link C_FLAGS}, or {@link CXX_FLAGS} with `cxx`). */
  baseFlags?: readonly string[];
  /** Compile with the C++ compiler ({@link findCxxCompiler}) instead of the C compiler. */
  cxx?: boolean;
  /** Output root; default `.build/` beside this file, else the per-user cache. */
  outDir?: string;
}

/** The module's root folder: sources and folders are relative to it. */
export const HERE = new URL("../../", import.meta.url);

/**
 * A URL for a source or folder: URLs as they are; a path (absolute, or
 * relative to the module) with each part percent-encoded, so a space or a
 * `%` in a file name stays what it is.
 */
export function toUrl(p: string | URL): URL {
  if (p instanceof URL) return p;
  if (/^[a-z][a-z0-9+.-]+:/i.test(p)) return new URL(p);
  return new URL(p.split("/").map(encodeURIComponent).join("/"), HERE);
}

export function permissionError(e: unknown, what: string, flag: string): never {
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    throw new FfiError(
      ErrorCode.PERMISSION_DENIED,
      `${what} needs ${flag} (${(e as Error).message})`,
      { cause: e },
    );
  }
  throw e;
}

export function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch (e) {
    permissionError(e, `reading the environment variable ${name}`, "--allow-env");
  }
}

export function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    return permissionError(e, `looking for ${path}`, "--allow-read");
  }
}

/** A C compiler found on this machine. */
export interface Compiler {
  /** Absolute path. */
  path: string;
  /** Identity used in the cache key (path, size and modification time). */
  identity: string;
}

let compilerCache: Compiler | undefined;

/**
 * Whether this process may look at `path` (a candidate compiler); the
 * folders it may not look in are added to `unreadable`. Scoped
 * `--allow-read` need not cover every `PATH` folder.
 */
function readable(path: string, unreadable: Set<string>): boolean {
  if (Deno.permissions.querySync({ name: "read", path }).state === "granted") return true;
  unreadable.add(path.slice(0, path.lastIndexOf("/")) || "/");
  return false;
}

/** The part of a "no compiler" message naming the folders that could not be looked in. */
function unreadableNote(unreadable: Set<string>): string {
  if (unreadable.size === 0) return "";
  return `; not looked in ${[...unreadable].join(", ")}: that needs --allow-read=${
    [...unreadable].join(",")
  }`;
}

/**
 * Finds a C compiler: `$CC`, then `cc`, `gcc`, `clang` on `PATH`.
 * Throws `FfiError` (UNAVAILABLE) naming what was tried.
 */
export function findCompiler(): Compiler {
  if (compilerCache) return compilerCache;
  const tried: string[] = [];
  const unreadable = new Set<string>();
  const found = searchCompiler("CC", ["cc", "gcc", "clang"], tried, unreadable);
  if (found) return compilerCache = found;
  throw new FfiError(
    ErrorCode.UNAVAILABLE,
    `No C compiler found to build the native library (tried ${tried.join(", ")}${
      unreadableNote(unreadable)
    }). Install one (e.g. gcc) or set XLA_FFI_DENO_LIB to a prebuilt library.`,
  );
}

/**
 * The first of `$<envName>`, then `names` on `PATH`, that is a readable
 * file; each candidate's label goes to `tried`, each unreadable path to
 * `unreadable`.
 */
function searchCompiler(
  envName: string,
  names: readonly string[],
  tried: string[],
  unreadable: Set<string>,
): Compiler | undefined {
  const env = envGet(envName);
  const candidates = env ? [env, ...names] : names;
  const pathDirs = (envGet("PATH") ?? "/usr/bin:/bin").split(":").filter(Boolean);
  for (const c of candidates) {
    tried.push(c === env ? `$${envName}=${c}` : c);
    for (const p of c.includes("/") ? [c] : pathDirs.map((d) => `${d}/${c}`)) {
      if (!readable(p, unreadable)) continue;
      if (isFile(p)) {
        const real = Deno.realPathSync(p);
        const st = Deno.statSync(real);
        return { path: p, identity: `${real}:${st.size}:${st.mtime?.getTime()}` };
      }
    }
  }
  return undefined;
}

let cxxCache: Compiler | null | undefined;

/**
 * Finds a C++ compiler: `$CXX`, then `c++`, `g++`, `clang++` on `PATH`;
 * undefined when there is none.
 *
 * @example
 * ```ts ignore
 * import { findCxxCompiler } from "./build.ts";
 * console.log(findCxxCompiler()?.path ?? "no C++ compiler");
 * ```
 */
export function findCxxCompiler(): Compiler | undefined {
  if (cxxCache === undefined) {
    cxxCache = searchCompiler("CXX", ["c++", "g++", "clang++"], [], new Set()) ?? null;
  }
  return cxxCache ?? undefined;
}

/** Where `deno task embed` writes the module's C sources as one JSON object. */
export const EMBEDDED_SOURCES_FILE = "src/native/embedded_sources.json";

/**
 * The module's C sources by module-relative path, when they come from
 * {@link EMBEDDED_SOURCES_FILE} (see {@link sourcesEmbedded}). A module
 * imported from a URL imports the file with itself (a JSON import, resolved
 * against `import.meta.url`: no `--allow-net` needed), so the synchronous
 * build finds it; a local module reads it only when it builds from it. A
 * checkout never loads it: its sources are the files in `native/`.
 */
let embeddedCache: Readonly<Record<string, string>> | undefined;
/** Why importing the remote module's sources failed, said when they are needed. */
let embeddedProblem: string | undefined;
if (HERE.protocol !== "file:") {
  try {
    embeddedCache =
      (await import("../native/embedded_sources.json", { with: { type: "json" } })).default;
  } catch (e) {
    embeddedProblem = (e as Error).message;
  }
}

function embeddedSources(): Readonly<Record<string, string>> {
  if (embeddedCache !== undefined) return embeddedCache;
  const url = new URL(EMBEDDED_SOURCES_FILE, HERE);
  if (url.protocol !== "file:") {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `The module's C sources could not be imported from ${url.href}: ${embeddedProblem}`,
    );
  }
  try {
    embeddedCache = JSON.parse(Deno.readTextFileSync(url)) as Record<string, string>;
  } catch (e) {
    permissionError(e, `reading ${fileURLToPath(url)}`, "--allow-read");
  }
  return embeddedCache;
}

/** The module-relative path of `url` when it is one of the embedded sources. */
function embeddedPath(url: URL): string | undefined {
  if (!url.href.startsWith(HERE.href)) return undefined;
  const rel = url.href.slice(HERE.href.length);
  return Object.hasOwn(embeddedSources(), rel) ? rel : undefined;
}

let sourcesEmbeddedCache: boolean | undefined;

/**
 * Whether the module's own C sources come from {@link EMBEDDED_SOURCES_FILE}: imported
 * from a URL, or a local copy of the published files (which hold the sources
 * only in that form).
 */
function sourcesEmbedded(): boolean {
  if (sourcesEmbeddedCache === undefined) {
    let local = false;
    if (HERE.protocol === "file:") {
      try {
        local = Deno.statSync(new URL("native/xla_ffi.h", HERE)).isFile;
      } catch { /* no native/ folder */ }
    }
    sourcesEmbeddedCache = !local;
  }
  return sourcesEmbeddedCache;
}

/** Whether `url` is read from the embedded sources rather than from its own location. */
function fromEmbedded(url: URL): boolean {
  return (url.protocol !== "file:" || sourcesEmbedded()) && url.href.startsWith(HERE.href);
}

function readSource(url: URL): Uint8Array {
  if (fromEmbedded(url)) {
    const rel = embeddedPath(url);
    if (rel !== undefined) return new TextEncoder().encode(embeddedSources()[rel]);
  }
  if (url.protocol !== "file:") {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `Cannot build from ${url.href}: only local files and the module's own native sources ` +
        `can be compiled. Set XLA_FFI_DENO_LIB to a prebuilt library instead.`,
    );
  }
  try {
    return Deno.readFileSync(url);
  } catch (e) {
    return permissionError(e, `reading ${fileURLToPath(url)}`, "--allow-read");
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function cacheRoot(outDir?: string): string {
  if (outDir) return outDir;
  if (HERE.protocol === "file:") {
    const local = fileURLToPath(new URL(".build", HERE));
    // An existing cache needs no write permission.
    if (isDirectory(local)) return local;
    try {
      Deno.mkdirSync(local, { recursive: true });
      return local;
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) {
        permissionError(e, `creating ${local}`, "--allow-write");
      }
      // Read-only checkout: fall through to the per-user cache.
    }
  }
  const xdg = envGet("XDG_CACHE_HOME");
  const home = envGet("HOME") ?? "/tmp";
  return `${xdg ?? `${home}/.cache`}/deno-xla-ffi`;
}

/**
 * Builds a shared library from C sources unless a library with the same key
 * (sources, compiler, flags) is already cached; returns its path.
 *
 * @example
 * ```ts ignore
 * import { buildSharedLibrary } from "./build.ts";
 * const path = buildSharedLibrary({ name: "my_handlers", sources: ["native/tests/handlers.c"] });
 * ```
 */
export function buildSharedLibrary(options: BuildOptions): string {
  return _build(options, "shared");
}

/**
 * Builds an executable program from C sources (same options, flags and cache
 * as {@link buildSharedLibrary}) unless one with the same key is cached;
 * returns its path. The file is named `<name>` (no `lib` prefix or suffix).
 *
 * @example
 * ```ts ignore
 * import { buildExecutable } from "./build.ts";
 * const exe = buildExecutable({ name: "layout_dump", sources: ["native/tests/layout_dump.c"] });
 * const out = new Deno.Command(exe).outputSync();
 * ```
 */
export function buildExecutable(options: BuildOptions): string {
  return _build(options, "executable");
}

/** What a build makes: a shared library or a program. */
export type _OutputKind = "shared" | "executable";

/**
 * Where the compiler reads `url` from: the file itself, or (for the module's
 * own sources imported from a remote URL) a copy written under `srcDir`.
 */
function localPath(url: URL, srcDir: string): string {
  if (!fromEmbedded(url)) return fileURLToPath(url);
  const rel = embeddedPath(url);
  if (rel === undefined) readSource(url); // throws the explanation
  const path = `${srcDir}/${rel}`;
  if (!isFile(path)) {
    try {
      Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      const tmp = _tmpName(path);
      Deno.writeTextFileSync(tmp, embeddedSources()[rel!]!);
      Deno.renameSync(tmp, path);
    } catch (e) {
      permissionError(e, `writing ${path}`, "--allow-write");
    }
  }
  return path;
}

/**
 * The compiler-independent key of a build: its kind, flags and the bytes of
 * its sources and native headers (paths relative to the module). A prebuilt
 * library is used only when its recorded key matches.
 *
 * @example
 * ```ts ignore
 * import { sourceKey } from "./build.ts";
 * console.log(sourceKey({ name: "my_handlers", sources: ["native/tests/handlers.c"] }));
 * ```
 */
export function sourceKey(
  options: BuildOptions,
  kind: "shared" | "executable" = "shared",
): { file: string; key: string } {
  const rel = (u: URL) => u.href.startsWith(HERE.href) ? u.href.slice(HERE.href.length) : u.href;
  const hash = createHash("sha256");
  // -Werror changes no output: a library built with it serves a build without it.
  const flags = [
    ...(options.baseFlags ?? (options.cxx ? CXX_FLAGS : C_FLAGS)).filter((f) => f !== "-Werror"),
    ...(options.extraFlags ?? []),
    ...sanitizerFlags(),
    ...(options.includeDirs ?? []).map((d) => `-I${rel(toUrl(d))}`),
    ...(options.systemIncludeDirs ?? []).flatMap((d) => ["-isystem", rel(toUrl(d))]),
  ];
  hash.update(`${kind}\0${flags.join(" ")}\0${(options.linkFlags ?? []).join(" ")}\0`);
  const headers = NATIVE_SOURCES.filter((s) => s.endsWith(".h")).map(toUrl);
  for (const u of [...headers, ...options.sources.map(toUrl)]) {
    hash.update(rel(u) + "\0");
    hash.update(readSource(u));
  }
  const file = kind === "shared" ? `lib${options.name}.so` : options.name;
  return { file, key: hash.digest("hex").slice(0, 16) };
}

/** The file name of the prebuilt folder's manifest: `{ "<file>": "<sourceKey>" }`. */
export const PREBUILT_MANIFEST = "manifest.json";

/**
 * A prebuilt library for this build from `$XLA_FFI_DENO_PREBUILT` (a folder
 * with the files and {@link PREBUILT_MANIFEST}, as `deno task carry` makes
 * it), when its key matches; else why not (undefined when the variable is unset).
 */
export function prebuilt(
  options: BuildOptions,
  kind: _OutputKind,
): { path?: string; note?: string } {
  const dir = envGet("XLA_FFI_DENO_PREBUILT");
  if (!dir) return {};
  const { file, key } = sourceKey(options, kind);
  let manifest: Record<string, string> = {};
  try {
    manifest = JSON.parse(Deno.readTextFileSync(`${dir}/${PREBUILT_MANIFEST}`));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) permissionError(e, `reading ${dir}`, "--allow-read");
  }
  if (manifest[file] === undefined) return { note: `no prebuilt ${file} in ${dir}` };
  if (manifest[file] !== key || !isFile(`${dir}/${file}`)) {
    return { note: `the prebuilt ${dir}/${file} was built from other sources` };
  }
  return { path: `${dir}/${file}` };
}

/**
 * How the module's own libraries are found: `XLA_FFI_DENO_BUILD=source`
 * compiles them from source even where a prebuilt library is shipped;
 * `prebuilt` never compiles them; unset (or `auto`): the prebuilt library
 * when it matches the sources, else a build from source.
 *
 * @example
 * ```ts ignore
 * import { buildMode } from "./build.ts";
 * console.log(buildMode()); // "auto"
 * ```
 */
export function buildMode(): "auto" | "source" | "prebuilt" {
  const v = envGet("XLA_FFI_DENO_BUILD");
  if (v === undefined || v === "" || v === "auto") return "auto";
  if (v === "source" || v === "prebuilt") return v;
  throw new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    `XLA_FFI_DENO_BUILD must be 'auto', 'source' or 'prebuilt', got '${v}'`,
  );
}

/** Where a shipped prebuilt file of a module library goes, and its entry; else why not. */
export interface _Shipped {
  /** The file in the cache (there or not yet). */
  path?: string;
  /** Its entry in the prebuilt set. */
  entry?: PrebuiltFile;
  /** Why no shipped file serves this build. */
  note?: string;
}

/**
 * The shipped prebuilt file for a build of one of the module's own libraries
 * on this platform, when its sources and flags are those it was built from:
 * its path in the cache (`<cache>/prebuilt-<sha256>/<file>`), whether or not
 * it is there yet.
 */
export function _shipped(options: BuildOptions, kind: _OutputKind): _Shipped {
  if (!isModuleLibrary(options)) return {};
  if (buildMode() === "source") return { note: "XLA_FFI_DENO_BUILD=source" };
  let found: { set?: PrebuiltSet; problem?: string };
  try {
    found = prebuiltSet();
  } catch (e) {
    return permissionError(e, "reading the prebuilt native library", "--allow-read");
  }
  if (!found.set) return { note: found.problem };
  const { file, key } = sourceKey(options, kind);
  const entry = found.set.files[file];
  if (entry === undefined) return { note: `no prebuilt ${file} for ${found.set.platform}` };
  if (entry.key !== key) {
    return {
      note: sanitizerFlags().length > 0
        ? `the prebuilt ${file} is not sanitized`
        : `the prebuilt ${file} was built from other sources`,
    };
  }
  const dir = `${cacheRoot()}/prebuilt-${entry.sha256.slice(0, 16)}`;
  return { path: `${dir}/${file}`, entry };
}

/**
 * SHA-256 (hex) of a cached file that should be `size` bytes, or undefined
 * when there is no such file. Anything else at the path (a FIFO, a device, a
 * symlink, a folder, a file of another size) is "not it", with no read at
 * all: opening a FIFO would hang and a device could be endless. At most
 * `size` bytes are read, and a file found grown while it is read is not it
 * either.
 */
export function _fileSha256(path: string, size: number): string | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    return permissionError(e, `reading ${path}`, `--allow-read=${path}`);
  }
  if (!info.isFile || info.isSymlink || info.size !== size) return NOT_THE_FILE;
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    return permissionError(e, `reading ${path}`, `--allow-read=${path}`);
  }
  try {
    const opened = file.statSync(); // the file opened is still a regular file of that size
    if (!opened.isFile || opened.size !== size) return NOT_THE_FILE;
    const bytes = new Uint8Array(size + 1); // one more: a file that grew is not it
    let got = 0;
    while (got < bytes.length) {
      const n = file.readSync(bytes.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    if (got !== size) return NOT_THE_FILE;
    return createHash("sha256").update(bytes.subarray(0, size)).digest("hex");
  } finally {
    file.close();
  }
}

/** What {@link _fileSha256} says of a path that holds something other than the expected file. */
const NOT_THE_FILE = "not a regular file of the expected size";

/**
 * Copies a shipped prebuilt file into the cache (once: a file already there
 * with the right SHA-256 is used as it is), checking its SHA-256.
 */
function _installShipped(path: string, entry: PrebuiltFile): string {
  // A tampered file, or anything that is not a regular file (a FIFO, a device, a
  // symlink), is replaced below: the rename swaps the directory entry, whatever it was.
  if (_fileSha256(path, entry.size) === entry.sha256) return path;
  const bytes = new Uint8Array(
    gunzipSync(Uint8Array.from(atob(entry.gzip), (c) => c.charCodeAt(0))),
  );
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== entry.sha256) {
    throw new FfiError(
      ErrorCode.DATA_LOSS,
      `The prebuilt ${path.slice(path.lastIndexOf("/") + 1)} shipped with @deno-xla/ffi is ` +
        `corrupt (SHA-256 ${sha}, expected ${entry.sha256}): reinstall the module, or set ` +
        `XLA_FFI_DENO_BUILD=source to compile it`,
    );
  }
  const dir = path.slice(0, path.lastIndexOf("/"));
  try {
    Deno.mkdirSync(dir, { recursive: true });
    const tmp = _tmpName(path);
    Deno.writeFileSync(tmp, bytes, { mode: entry.executable ? 0o755 : 0o644 });
    Deno.renameSync(tmp, path);
  } catch (e) {
    return permissionError(
      e,
      `copying the prebuilt native library into ${dir}`,
      `--allow-write=${dir.slice(0, dir.lastIndexOf("/"))}`,
    );
  }
  return path;
}

/** What a build would do: the compiler, its arguments and the cached output. */
export interface _Plan {
  compiler: Compiler;
  flags: string[];
  links: string[];
  sources: URL[];
  srcDir: string;
  /** The folder of this build's inputs: one subfolder per version of the files it includes. */
  dir: string;
  file: string;
}

/** The C or C++ compiler a build needs; `note` says why no prebuilt library served. */
function _compilerFor(options: BuildOptions, note?: string, shippedNote?: string): Compiler {
  const again = note ? ` (${note}: run \`deno task carry\` again)` : "";
  let compiler: Compiler | undefined;
  try {
    compiler = options.cxx ? findCxxCompiler() : findCompiler();
  } catch (e) {
    if (isModuleLibrary(options) && e instanceof FfiError && e.code === ErrorCode.UNAVAILABLE) {
      throw unsupportedPlatform(e.message, shippedNote);
    }
    if (!note || !(e instanceof FfiError)) throw e;
    throw new FfiError(e.code, `${e.message}${again}`);
  }
  if (compiler === undefined) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `No C++ compiler found (tried $CXX, c++, g++, clang++ on PATH)${again}`,
    );
  }
  return compiler;
}

/**
 * The error of a platform without a usable prebuilt native library and
 * without a C compiler: names the platform and what is supported.
 */
function unsupportedPlatform(noCompiler: string, shippedNote?: string): FfiError {
  const platform = platformName();
  const why = shippedNote ?? `no prebuilt native library is shipped for ${platform}`;
  return new FfiError(
    ErrorCode.UNIMPLEMENTED,
    `@deno-xla/ffi cannot run on ${platform}: ${why}, and ${
      noCompiler.replace(/^No C compiler found/, "no C compiler was found")
    }. Prebuilt libraries are shipped for ${
      PREBUILT_PLATFORMS.join(" and ")
    } (glibc); elsewhere the module compiles its library from source with a C compiler ` +
      `($CC, cc, gcc or clang).`,
  );
}

export function _plan(
  options: BuildOptions,
  kind: _OutputKind,
  note?: string,
  shippedNote?: string,
): _Plan {
  const compiler = _compilerFor(options, note, shippedNote);
  const base = baseFlags(options);
  const includes = [new URL("native/", HERE), ...(options.includeDirs ?? []).map(toUrl)];
  const root = cacheRoot(options.outDir);
  // Embedded sources: those of this version live in one folder of the cache.
  const srcDir = sourcesEmbedded()
    ? `${root}/src-${
      createHash("sha256").update(JSON.stringify(embeddedSources())).digest("hex").slice(0, 16)
    }`
    : "";
  const includePath = (u: URL) =>
    !fromEmbedded(u)
      ? fileURLToPath(u)
      : `${srcDir}/${decodeURIComponent(u.href.slice(HERE.href.length))}`;
  const flags = [
    ...base,
    ...(options.extraFlags ?? []),
    ...sanitizerFlags(),
    ...includes.map((u) => `-I${includePath(u)}`),
    ...(options.systemIncludeDirs ?? []).flatMap((d) => ["-isystem", includePath(toUrl(d))]),
  ];
  const links = [...(options.linkFlags ?? [])];
  const sources = options.sources.map(toUrl);
  const hash = createHash("sha256");
  hash.update(
    kind + "\0" + compiler.identity + "\0" + flags.join(" ") + "\0" + links.join(" ") + "\0",
  );
  // Headers in native/ are part of every build's key.
  const headers = NATIVE_SOURCES.filter((s) => s.endsWith(".h")).map(toUrl);
  for (const u of [...headers, ...sources]) {
    hash.update((u.protocol === "file:" ? fileURLToPath(u) : u.href) + "\0");
    hash.update(readSource(u));
  }
  const key = hash.digest("hex").slice(0, 16);
  const dir = `${root}/${key}`;
  const file = kind === "shared" ? `lib${options.name}.so` : options.name;
  return { compiler, flags, links, sources, srcDir, dir, file };
}

/**
 * A temporary name beside `path`, unique to this call: Workers of one
 * process share its id, so the id alone would not do.
 */
function _tmpName(path: string): string {
  return `${path}.${Deno.pid}-${crypto.randomUUID()}.tmp`;
}

/** The file that lists what the latest build of a plan's folder read. */
const DEPS_FILE = "deps.json";

/**
 * The files a Make-style dependency file (`cc -MD -MF f.d`, `cc -M`) names
 * as prerequisites, in order, without the rules' targets. Line
 * continuations, `\ ` (a space in a name), `\#` and `$$` are undone.
 *
 * @example
 * ```ts ignore
 * import { _parseDepFile } from "./build.ts";
 * console.log(_parseDepFile("lib.so: a.c my\\ dir/b.h \\\n t.def\n")); // ["a.c", "my dir/b.h", "t.def"]
 * ```
 */
export function _parseDepFile(text: string): string[] {
  const tokens: string[] = [];
  let cur = "";
  const push = () => {
    if (cur !== "") tokens.push(cur);
    cur = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "\\" && (next === "\n" || (next === "\r" && text[i + 2] === "\n"))) {
      push();
      i += next === "\n" ? 1 : 2;
    } else if (c === "\\" && (next === " " || next === "#" || next === "\\")) {
      cur += next;
      i++;
    } else if (c === "$" && next === "$") {
      cur += "$";
      i++;
    } else if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      push();
    } else {
      cur += c;
    }
  }
  push();
  const files: string[] = [];
  for (const t of tokens) {
    if (t.endsWith(":")) continue; // a target: "out.o:" (its prerequisites follow)
    files.push(t);
  }
  return files;
}

/**
 * The version of the files a build read: a hash of each one's path and
 * bytes (a missing file counts as missing, so it is a change too).
 */
function _depsKey(files: readonly string[]): string {
  const hash = createHash("sha256");
  for (const f of [...new Set(files)].sort()) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = Deno.readFileSync(f);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) permissionError(e, `reading ${f}`, "--allow-read");
    }
    hash.update(f + "\0");
    hash.update(bytes === undefined ? "missing" : createHash("sha256").update(bytes).digest("hex"));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * The cached output of a plan when every file its latest build read (as the
 * compiler listed them) still has the bytes of some cached version:
 * `<dir>/<version>/<file>`. A changed file makes a new version, at a new
 * path, since a process that loaded the old library by its path would get
 * that one again from the dynamic loader.
 */
export function _cached(plan: _Plan): string | undefined {
  let files: string[];
  try {
    const text = Deno.readTextFileSync(`${plan.dir}/${DEPS_FILE}`);
    const parsed = JSON.parse(text) as { files?: unknown };
    if (!Array.isArray(parsed.files) || !parsed.files.every((f) => typeof f === "string")) {
      return undefined;
    }
    files = parsed.files as string[];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof SyntaxError) return undefined;
    return permissionError(e, `reading ${plan.dir}/${DEPS_FILE}`, "--allow-read");
  }
  const out = `${plan.dir}/${_depsKey(files)}/${plan.file}`;
  return isFile(out) ? out : undefined;
}

/** Writes `text` to `path` through a unique temporary file and an atomic rename. */
function _writeAtomic(path: string, text: string): void {
  const tmp = _tmpName(path);
  Deno.writeTextFileSync(tmp, text);
  Deno.renameSync(tmp, path);
}

function _build(options: BuildOptions, kind: _OutputKind): string {
  const ready = prebuilt(options, kind);
  if (ready.path) return ready.path;
  const shipped = _shipped(options, kind);
  if (shipped.path) return _installShipped(shipped.path, shipped.entry!);
  if (isModuleLibrary(options) && buildMode() === "prebuilt") {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `XLA_FFI_DENO_BUILD=prebuilt, but ${shipped.note ?? "no prebuilt library serves"}`,
    );
  }
  const plan = _plan(options, kind, ready.note, shipped.note);
  const cached = _cached(plan);
  if (cached !== undefined) return cached;
  const { compiler, flags, links, sources, srcDir, dir, file } = plan;
  if (options === MAIN_LIBRARY) {
    // Several seconds, once: say what is happening.
    console.error(
      `@deno-xla/ffi: compiling its native library from source with ${compiler.path} ` +
        `(${shipped.note ?? "no prebuilt library"}); cached in ${dir}`,
    );
  }
  // Each build writes into a folder of its own (Workers and processes may build the same
  // library at once), then renames its results into place.
  const work = _tmpName(`${dir}/build`);
  try {
    Deno.mkdirSync(work, { recursive: true });
  } catch (e) {
    permissionError(e, `creating ${work}`, "--allow-write");
  }
  try {
    if (sourcesEmbedded()) {
      for (const rel of Object.keys(embeddedSources())) localPath(new URL(rel, HERE), srcDir);
    }
    const cfiles = sources.filter((u) => !HEADER.test(u.href)).map((u) => localPath(u, srcDir));
    const tmp = `${work}/${file}`;
    const depFile = `${work}/${file}.d`;
    // The compiler lists every file it reads: one source writes them with the build (-MD);
    // several would overwrite each other's list, so -M lists them all in a pass of their own.
    const oneSource = cfiles.length === 1;
    const args = [
      ...flags,
      ...(kind === "shared" ? ["-shared"] : []),
      ...(oneSource ? ["-MD", "-MF", depFile] : []),
      "-o",
      tmp,
      ...cfiles,
      ...links,
    ];
    _compile(compiler, args, file);
    const depText = oneSource
      ? Deno.readTextFileSync(depFile)
      : _compile(compiler, [...flags, "-M", ...cfiles], file);
    const cwd = Deno.cwd();
    const files = [
      ...new Set(_parseDepFile(depText).map((f) => f.startsWith("/") ? f : `${cwd}/${f}`)),
    ].sort();
    const version = `${dir}/${_depsKey(files)}`;
    Deno.mkdirSync(version, { recursive: true });
    const out = `${version}/${file}`;
    _writeAtomic(`${out}.deps.json`, JSON.stringify({ files }, null, 1) + "\n");
    Deno.renameSync(tmp, out);
    _writeAtomic(`${dir}/${DEPS_FILE}`, JSON.stringify({ files }, null, 1) + "\n");
    return out;
  } catch (e) {
    return permissionError(e, `building ${file} in ${dir}`, "--allow-write");
  } finally {
    try {
      Deno.removeSync(work, { recursive: true });
    } catch { /* already gone */ }
  }
}

/** Runs the compiler; its stdout when it succeeds, else an FfiError with its output. */
function _compile(compiler: Compiler, args: string[], file: string): string {
  let result: Deno.CommandOutput;
  try {
    result = new Deno.Command(compiler.path, {
      args,
      stdout: "piped",
      stderr: "piped",
      ...toolEnv(),
    })
      .outputSync();
  } catch (e) {
    return permissionError(e, `running the C compiler ${compiler.path}`, "--allow-run");
  }
  const stdout = new TextDecoder().decode(result.stdout);
  if (!result.success) {
    const text = new TextDecoder().decode(result.stderr) + stdout;
    const first = firstErrorLine(text);
    throw new FfiError(
      ErrorCode.INTERNAL,
      `Compiling ${file} failed${first ? `: ${first}` : ""}\n` +
        `(${compiler.path} ${args.join(" ")}):\n${text}`,
    );
  }
  return stdout;
}

/**
 * The first line of compiler output that reports an error (`error:` from
 * gcc and clang, `undefined reference` from the linker), or its first line.
 */
function firstErrorLine(text: string): string | undefined {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.find((l) => /\b(fatal )?error\b:/.test(l)) ??
    lines.find((l) => /undefined reference|cannot find/.test(l)) ?? lines[0];
}

/** How {@link guardLibraryPath} builds the exception guard library. */
export const GUARD_LIBRARY: BuildOptions = {
  name: "xla_ffi_deno_guard",
  sources: GUARD_SOURCES,
  cxx: true,
};

/** How {@link nativeLibraryPath} builds the main library. */
export const MAIN_LIBRARY: BuildOptions = {
  name: "xla_ffi_deno",
  sources: NATIVE_SOURCES,
  // C cleanups run when a C++ exception unwinds through C frames: the wrapper
  // real XLA calls a C handler through puts the crash slot back even when the
  // handler throws (native/crash.c).
  extraFlags: ["-fexceptions"],
  linkFlags: ["-ldl"],
};
