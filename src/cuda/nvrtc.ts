/**
 * NVRTC: compiles CUDA C++ source to PTX or CUBIN at run time, when
 * `libnvrtc` can be found. Looks in `$XLA_FFI_DENO_NVRTC` (a file or
 * folder), `$CUDA_HOME`, `$CUDA_PATH`, the standard CUDA folders, the
 * `nvidia/<pkg>/lib` folders of Python installs, then the loader's search
 * path. NVRTC opens `libnvrtc-builtins` by name when it compiles, which
 * finds it only on the loader's search path: so the one in the folder of the
 * `libnvrtc` found is loaded first.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _loaderMessage, FfiError } from "../errors.ts";
import { Device } from "./device.ts";

const NVRTC_SYMBOLS = {
  nvrtcVersion: { parameters: ["buffer", "buffer"], result: "i32" },
  nvrtcGetErrorString: { parameters: ["i32"], result: "pointer" },
  nvrtcCreateProgram: {
    parameters: ["buffer", "buffer", "buffer", "i32", "pointer", "pointer"],
    result: "i32",
  },
  nvrtcCompileProgram: { parameters: ["pointer", "i32", "buffer"], result: "i32" },
  nvrtcGetPTXSize: { parameters: ["pointer", "buffer"], result: "i32" },
  nvrtcGetPTX: { parameters: ["pointer", "buffer"], result: "i32" },
  // CUDA 11.1 on.
  nvrtcGetCUBINSize: { parameters: ["pointer", "buffer"], result: "i32", optional: true },
  nvrtcGetCUBIN: { parameters: ["pointer", "buffer"], result: "i32", optional: true },
  nvrtcGetProgramLogSize: { parameters: ["pointer", "buffer"], result: "i32" },
  nvrtcGetProgramLog: { parameters: ["pointer", "buffer"], result: "i32" },
  nvrtcDestroyProgram: { parameters: ["buffer"], result: "i32" },
} as const;

type Nvrtc = Deno.DynamicLibrary<typeof NVRTC_SYMBOLS>;

let lib: Nvrtc | undefined;
let libPath: string | undefined;
let failure: FfiError | undefined;
let override: string | undefined;
/** Libraries opened by path, kept open for the process's life. */
const opened = new Map<string, Nvrtc>();
/** The builtins library loaded for `libPath` (its path), or why none was. */
let builtins: { path?: string; problem?: string } = {};
/** Builtins libraries opened by path, kept open for the process's life. */
const openedBuiltins = new Map<string, Deno.DynamicLibrary<Record<string, never>>>();

const NAME = /^libnvrtc\.so(\.[0-9]+)*$/;
const BUILTINS_NAME = /^libnvrtc-builtins\.so(\.[0-9]+)*$/;

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

function listDir(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name);
  } catch {
    return [];
  }
}

/** Library files named like libnvrtc in `dir`, the unversioned name first, then newest. */
function candidatesIn(dir: string): string[] {
  const names = listDir(dir).filter((n) => NAME.test(n));
  const version = (n: string) =>
    n.slice("libnvrtc.so".length).split(".").filter(Boolean).map(Number);
  names.sort((a, b) => {
    const va = version(a), vb = version(b);
    if (va.length === 0) return -1;
    if (vb.length === 0) return 1;
    for (let i = 0; i < Math.max(va.length, vb.length); i++) {
      const d = (vb[i] ?? 0) - (va[i] ?? 0);
      if (d !== 0) return d;
    }
    return 0;
  });
  return names.map((n) => `${dir}/${n}`);
}

function pythonSitePackages(): string[] {
  const roots: string[] = [];
  const venv = env("VIRTUAL_ENV");
  const conda = env("CONDA_PREFIX");
  const home = env("HOME");
  for (const prefix of [venv, conda, "/usr/local", "/usr", home ? `${home}/.local` : undefined]) {
    if (!prefix) continue;
    for (const py of listDir(`${prefix}/lib`).filter((n) => /^python3(\.\d+)?$/.test(n))) {
      for (const kind of ["site-packages", "dist-packages"]) {
        roots.push(`${prefix}/lib/${py}/${kind}`);
      }
    }
  }
  roots.push("/usr/lib/python3/dist-packages");
  return roots;
}

/**
 * The folders {@link compileToPtx} searches for `libnvrtc.so*`, in order
 * (after `$XLA_FFI_DENO_NVRTC`).
 *
 * @example
 * ```ts
 * import { nvrtcSearchPath } from "@deno-xla/ffi/cuda";
 * console.log(nvrtcSearchPath().includes("/usr/local/cuda/lib64")); // true
 * ```
 */
export function nvrtcSearchPath(): string[] {
  const dirs: string[] = [];
  for (const v of ["CUDA_HOME", "CUDA_PATH"]) {
    const root = env(v);
    if (root) dirs.push(`${root}/lib64`, `${root}/lib`);
  }
  dirs.push(
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
  );
  for (const site of pythonSitePackages()) {
    for (const pkg of listDir(`${site}/nvidia`).sort()) dirs.push(`${site}/nvidia/${pkg}/lib`);
  }
  return dirs;
}

/**
 * Loads the `libnvrtc-builtins.so*` beside the NVRTC library at `path`
 * (`.so.<major>.<minor>` of its version first), so that NVRTC's own
 * by-name open finds it loaded. A bare name (no folder) is left to the
 * loader. Records what happened in `builtins`; never throws.
 */
function loadBuiltins(l: Nvrtc, path: string): void {
  builtins = {};
  const slash = path.lastIndexOf("/");
  if (slash < 0) return;
  const dir = path.slice(0, slash) || "/";
  const major = new Int32Array(1), minor = new Int32Array(1);
  const exact = l.symbols.nvrtcVersion(major, minor) === 0
    ? `libnvrtc-builtins.so.${major[0]}.${minor[0]}`
    : undefined;
  const names = listDir(dir).filter((n) => BUILTINS_NAME.test(n)).sort().reverse();
  if (exact && names.includes(exact)) names.unshift(exact);
  if (names.length === 0) {
    builtins.problem = `no libnvrtc-builtins.so* beside ${path}`;
    return;
  }
  const problems: string[] = [];
  for (const name of names) {
    const file = `${dir}/${name}`;
    try {
      if (!openedBuiltins.has(file)) openedBuiltins.set(file, Deno.dlopen(file, {}));
      builtins.path = file;
      return;
    } catch (e) {
      problems.push(`${file}: ${(e as Error).message}`);
    }
  }
  builtins.problem = problems.join("; ");
}

function tryOpen(path: string, errors: string[]): Nvrtc | undefined {
  try {
    const l = opened.get(path) ?? Deno.dlopen(path, NVRTC_SYMBOLS);
    opened.set(path, l);
    libPath = path;
    loadBuiltins(l, path);
    return l;
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Opening NVRTC (${path}) needs --allow-ffi (${(e as Error).message})`,
        { cause: e },
      );
    }
    errors.push(`${path}: ${_loaderMessage(e)}`);
    return undefined;
  }
}

function open(): Nvrtc {
  if (lib) return lib;
  if (failure) throw failure;
  const looked: string[] = [];
  const errors: string[] = [];
  if (override !== undefined) {
    if ((lib = tryOpen(override, errors))) return lib;
    throw new FfiError(ErrorCode.UNAVAILABLE, `Cannot load NVRTC: ${errors.join("; ")}`);
  }
  const explicit = env("XLA_FFI_DENO_NVRTC");
  if (explicit) {
    let files = [explicit];
    try {
      if (Deno.statSync(explicit).isDirectory) files = candidatesIn(explicit);
    } catch { /* try it as given */ }
    looked.push(`$XLA_FFI_DENO_NVRTC=${explicit}`);
    for (const f of files) if ((lib = tryOpen(f, errors))) return lib;
  }
  for (const dir of nvrtcSearchPath()) {
    looked.push(dir);
    for (const f of candidatesIn(dir)) if ((lib = tryOpen(f, errors))) return lib;
  }
  for (const bare of ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"]) {
    if ((lib = tryOpen(bare, []))) return lib;
  }
  looked.push("the loader's search path (libnvrtc.so, .so.13, .so.12, .so.11.2)");
  failure = new FfiError(
    ErrorCode.UNAVAILABLE,
    `NVRTC (libnvrtc.so) not found. Set XLA_FFI_DENO_NVRTC to the library or its folder. ` +
      `Looked in: ${looked.join(", ")}` +
      (errors.length ? `. Load errors: ${errors.join("; ")}` : ""),
  );
  throw failure;
}

/**
 * Whether NVRTC can be loaded. Never throws.
 *
 * @example
 * ```ts
 * import { nvrtcAvailable } from "@deno-xla/ffi/cuda";
 * console.log(nvrtcAvailable());
 * ```
 */
export function nvrtcAvailable(): boolean {
  try {
    open();
    return true;
  } catch {
    return false;
  }
}

/**
 * NVRTC's version, the path it was loaded from, and the path of the
 * `libnvrtc-builtins` loaded from its folder (absent when none was: then
 * NVRTC looks for it on the loader's search path).
 *
 * @example
 * ```ts ignore
 * import { nvrtcVersion } from "@deno-xla/ffi/cuda";
 * console.log(nvrtcVersion());
 * // { major: 13, minor: 0, path: ".../nvidia/cu13/lib/libnvrtc.so.13",
 * //   builtins: ".../nvidia/cu13/lib/libnvrtc-builtins.so.13.0" }
 * ```
 */
export function nvrtcVersion(): { major: number; minor: number; path: string; builtins?: string } {
  const s = open().symbols;
  const major = new Int32Array(1), minor = new Int32Array(1);
  check(s, s.nvrtcVersion(major, minor), "nvrtcVersion");
  const out: { major: number; minor: number; path: string; builtins?: string } = {
    major: major[0]!,
    minor: minor[0]!,
    path: libPath!,
  };
  if (builtins.path) out.builtins = builtins.path;
  return out;
}

function check(s: Nvrtc["symbols"], rc: number, fn: string, log?: string): void {
  if (rc === 0) return;
  const p = s.nvrtcGetErrorString(rc);
  const name = p ? Deno.UnsafePointerView.getCString(p) : `NVRTC_ERROR_${rc}`;
  // 7 = NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: say why the builtins were not loaded.
  if (rc === 7 && builtins.problem) log = `${log ? `${log}\n` : ""}(${builtins.problem})`;
  // 6 = NVRTC_ERROR_COMPILATION, 3 = INVALID_INPUT, 5 = INVALID_OPTION.
  const code = rc === 6 || rc === 3 || rc === 5
    ? ErrorCode.INVALID_ARGUMENT
    : rc === 1
    ? ErrorCode.RESOURCE_EXHAUSTED
    : ErrorCode.INTERNAL;
  throw new FfiError(code, `${name} (${fn})${log ? `:\n${log}` : ""}`);
}

function cstr(s: string): Uint8Array {
  return new TextEncoder().encode(s + "\0");
}

/** Options of {@link compileToPtx} and {@link compileToCubin}. */
export interface CompileOptions {
  /** Program name used in messages (default `"kernel.cu"`). */
  name?: string;
  /** NVRTC options, e.g. `["--gpu-architecture=compute_90", "-default-device"]`. */
  options?: readonly string[];
}

/** Options of {@link compileToCubin}. */
export interface CubinOptions extends CompileOptions {
  /**
   * The real architecture, e.g. `"sm_90"`. Default: that of `device`
   * (`-arch=sm_<major><minor>` from its compute capability). Ignored when
   * `options` already name an architecture.
   */
  arch?: string;
  /** The device (or ordinal) whose architecture to build for when `arch` is absent (default 0). */
  device?: Device | number;
}

type Program = { s: Nvrtc["symbols"]; handle: Deno.PointerValue };

/** Creates and compiles a program, hands it to `take`, and always destroys it. */
function compile<T>(source: string, options: CompileOptions, take: (p: Program) => T): T {
  const s = open().symbols;
  const prog = new BigUint64Array(1);
  check(
    s,
    s.nvrtcCreateProgram(prog, cstr(source), cstr(options.name ?? "kernel.cu"), 0, null, null),
    "nvrtcCreateProgram",
  );
  const handle = Deno.UnsafePointer.create(prog[0]!);
  try {
    // All option strings in one block of at least 256 bytes: outside the JS
    // heap, so the addresses in the table stay valid until the call.
    const opts = (options.options ?? []).map(cstr);
    const block = new Uint8Array(Math.max(256, opts.reduce((n, o) => n + o.length, 0)));
    const base = Deno.UnsafePointer.value(Deno.UnsafePointer.of(block));
    const table = new BigUint64Array(Math.max(1, opts.length));
    let at = 0;
    opts.forEach((o, i) => {
      block.set(o, at);
      table[i] = base + BigInt(at);
      at += o.length;
    });
    const rc = s.nvrtcCompileProgram(handle, opts.length, table);
    if (rc !== 0) {
      const size = new BigUint64Array(1);
      let log = "";
      if (s.nvrtcGetProgramLogSize(handle, size) === 0 && size[0]! > 1n) {
        const buf = new Uint8Array(Number(size[0]!));
        if (s.nvrtcGetProgramLog(handle, buf) === 0) {
          log = new TextDecoder().decode(buf.subarray(0, buf.length - 1)).trim();
        }
      }
      check(s, rc, "nvrtcCompileProgram", log);
    }
    return take({ s, handle });
  } finally {
    s.nvrtcDestroyProgram(prog);
  }
}

/**
 * Compiles CUDA C++ source to PTX with NVRTC. Compile errors are FfiError
 * INVALID_ARGUMENT with NVRTC's log; when NVRTC cannot be found, FfiError
 * UNAVAILABLE listing where it looked. The driver JIT-compiles PTX when the
 * module is loaded, so the driver must be at least as new as NVRTC's PTX
 * ISA; {@link compileToCubin} has no such limit.
 *
 * @example
 * ```ts ignore
 * import { compileToPtx, init, Module } from "@deno-xla/ffi/cuda";
 * const ptx = compileToPtx(
 *   'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }',
 *   { options: ["--gpu-architecture=compute_80"] },
 * );
 * using _ctx = init();
 * using mod = Module.load(ptx);
 * ```
 */
export function compileToPtx(source: string, options: CompileOptions = {}): string {
  return compile(source, options, ({ s, handle }) => {
    const size = new BigUint64Array(1);
    check(s, s.nvrtcGetPTXSize(handle, size), "nvrtcGetPTXSize");
    const ptx = new Uint8Array(Number(size[0]!));
    check(s, s.nvrtcGetPTX(handle, ptx), "nvrtcGetPTX");
    const end = ptx.indexOf(0);
    return new TextDecoder().decode(ptx.subarray(0, end < 0 ? ptx.length : end));
  });
}

const ARCH_OPTION = /^(-arch|--gpu-architecture)(=|$)/;

/**
 * Compiles CUDA C++ source to a CUBIN (machine code for one real
 * architecture) with NVRTC: `-arch=sm_XY` from `options.arch`, else from the
 * compute capability of `options.device` (default device 0, which needs the
 * CUDA driver). `Module.load` takes the bytes. Unlike PTX, a CUBIN needs no
 * JIT by the driver, so it loads even when NVRTC is newer than the driver.
 * Errors as {@link compileToPtx}; a virtual architecture (`compute_XY`)
 * gives no CUBIN: FfiError INVALID_ARGUMENT.
 *
 * @example
 * ```ts ignore
 * import { compileToCubin, init, Module } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * const cubin = compileToCubin('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }');
 * using mod = Module.load(cubin); // built for device 0, e.g. -arch=sm_90 on Hopper
 * ```
 */
export function compileToCubin(source: string, options: CubinOptions = {}): Uint8Array {
  const given = options.options ?? [];
  let extra: string[] = [];
  if (!given.some((o) => ARCH_OPTION.test(o))) {
    let arch = options.arch;
    if (arch === undefined) {
      const d = options.device ?? 0;
      const cc = (typeof d === "number" ? Device.get(d) : d).computeCapability;
      arch = `sm_${cc.major}${cc.minor}`;
    }
    if (!/^sm_[0-9]+[a-z]?$/.test(arch)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `compileToCubin: arch must be a real architecture such as "sm_90", got "${arch}"`,
      );
    }
    extra = [`-arch=${arch}`];
  }
  const s0 = open().symbols;
  if (!s0.nvrtcGetCUBINSize || !s0.nvrtcGetCUBIN) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `NVRTC ${libPath} has no nvrtcGetCUBIN (NVRTC 11.1 or later makes CUBINs)`,
    );
  }
  return compile(source, { ...options, options: [...given, ...extra] }, ({ s, handle }) => {
    const size = new BigUint64Array(1);
    check(s, s.nvrtcGetCUBINSize!(handle, size), "nvrtcGetCUBINSize");
    if (size[0] === 0n) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "NVRTC made no CUBIN: the options name a virtual architecture (compute_XY); " +
          "a CUBIN needs a real one (sm_XY)",
      );
    }
    const cubin = new Uint8Array(Number(size[0]!));
    check(s, s.nvrtcGetCUBIN!(handle, cubin), "nvrtcGetCUBIN");
    return cubin;
  });
}

/**
 * Uses the NVRTC library at `path` (undefined: search again) from the next
 * call on. For tests (a stand-in library); not for normal use.
 */
export function _useNvrtcLibrary(path: string | undefined): void {
  override = path;
  lib = undefined;
  libPath = undefined;
  failure = undefined;
  builtins = {};
}
