/**
 * NVRTC: compiles CUDA C++ source to PTX at run time, when `libnvrtc` can be
 * found. Looks in `$XLA_FFI_DENO_NVRTC` (a file or folder), `$CUDA_HOME`,
 * `$CUDA_PATH`, the standard CUDA folders, the `nvidia/<pkg>/lib` folders
 * of Python installs, then the loader's search path.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _loaderMessage, FfiError } from "../errors.ts";

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

const NAME = /^libnvrtc\.so(\.[0-9]+)*$/;

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

function tryOpen(path: string, errors: string[]): Nvrtc | undefined {
  try {
    const l = opened.get(path) ?? Deno.dlopen(path, NVRTC_SYMBOLS);
    opened.set(path, l);
    libPath = path;
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
 * NVRTC's version and the path it was loaded from.
 *
 * @example
 * ```ts ignore
 * import { nvrtcVersion } from "@deno-xla/ffi/cuda";
 * console.log(nvrtcVersion()); // { major: 12, minor: 4, path: "/usr/local/cuda/lib64/libnvrtc.so" }
 * ```
 */
export function nvrtcVersion(): { major: number; minor: number; path: string } {
  const s = open().symbols;
  const major = new Int32Array(1), minor = new Int32Array(1);
  check(s, s.nvrtcVersion(major, minor), "nvrtcVersion");
  return { major: major[0]!, minor: minor[0]!, path: libPath! };
}

function check(s: Nvrtc["symbols"], rc: number, fn: string, log?: string): void {
  if (rc === 0) return;
  const p = s.nvrtcGetErrorString(rc);
  const name = p ? Deno.UnsafePointerView.getCString(p) : `NVRTC_ERROR_${rc}`;
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

/** Options of {@link compileToPtx}. */
export interface CompileOptions {
  /** Program name used in messages (default `"kernel.cu"`). */
  name?: string;
  /** NVRTC options, e.g. `["--gpu-architecture=compute_90", "-default-device"]`. */
  options?: readonly string[];
}

/**
 * Compiles CUDA C++ source to PTX with NVRTC. Compile errors are FfiError
 * INVALID_ARGUMENT with NVRTC's log; when NVRTC cannot be found, FfiError
 * UNAVAILABLE listing where it looked.
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
    const size = new BigUint64Array(1);
    check(s, s.nvrtcGetPTXSize(handle, size), "nvrtcGetPTXSize");
    const ptx = new Uint8Array(Number(size[0]!));
    check(s, s.nvrtcGetPTX(handle, ptx), "nvrtcGetPTX");
    const end = ptx.indexOf(0);
    return new TextDecoder().decode(ptx.subarray(0, end < 0 ? ptx.length : end));
  } finally {
    s.nvrtcDestroyProgram(prog);
  }
}

/** Forgets a failed NVRTC search so the next call searches again (tests). */
export function _resetNvrtcSearch(): void {
  if (!lib) failure = undefined;
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
}
