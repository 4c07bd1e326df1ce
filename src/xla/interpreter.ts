/**
 * Finding the Python interpreter that `@deno-xla/ffi/xla` hosts, and asking
 * it (in a child process) for what hosting it needs: its shared libpython,
 * its home, its `sys.path` (a virtual environment's site-packages included)
 * and whether jax is importable from it.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _exitIfUnhandled } from "../native/lib.ts";

/** What the interpreter reported about itself. */
export interface PythonInfo {
  /** The interpreter as given (`python` option, `XLA_FFI_DENO_PYTHON` or `python3`). */
  readonly command: string;
  /** `sys.executable`. */
  readonly executable: string;
  /** `major.minor.micro`. */
  readonly version: string;
  /** The shared libpython to load, or null when the interpreter has none. */
  readonly library: string | null;
  /** `sys.base_prefix` (with `:base_exec_prefix` when it differs): the interpreter's home. */
  readonly home: string;
  /** `sys.path` without the current-directory entry. */
  readonly sysPath: string[];
  /** Where `import jax` would load jax from, or null when it cannot be found. */
  readonly jax: string | null;
}

const PROBE = `
import importlib.util, json, os, sys, sysconfig
v = sysconfig.get_config_var
dirs = [d for d in (v("LIBDIR"), v("LIBPL"), os.path.join(sys.base_prefix, "lib")) if d]
lib = None
for name in (v("LDLIBRARY"), v("INSTSONAME")):
    if not name or ".so" not in name:
        continue
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            lib = p
            break
    if lib:
        break
home = sys.base_prefix
if sys.base_exec_prefix != sys.base_prefix:
    home += ":" + sys.base_exec_prefix
spec = importlib.util.find_spec("jax")
print(json.dumps({
    "executable": sys.executable,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "library": lib,
    "home": home,
    "sysPath": [p for p in sys.path if p],
    "jax": (spec.origin or "jax") if spec else None,
}))
`;

/**
 * The environment variables naming the Python to host, in order: the
 * module's prefix, then the older name, still read.
 */
const PYTHON_ENV: readonly string[] = ["XLA_FFI_DENO_PYTHON", "DENO_XLA_PYTHON"];

/** The first of {@link PYTHON_ENV} set (not empty), with its value. */
function pythonFromEnv(): { name: string; value: string } | undefined {
  for (const name of PYTHON_ENV) {
    let value: string | undefined;
    try {
      value = Deno.env.get(name);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
        throw new FfiError(
          ErrorCode.PERMISSION_DENIED,
          `Reading ${name} needs --allow-env (${(e as Error).message})`,
          { cause: e },
        );
      }
      throw e;
    }
    if (value !== undefined && value !== "") return { name, value };
  }
  return undefined;
}

/** @internal The interpreter the environment configures, or undefined when none is set. */
export function _configuredPython(): string | undefined {
  try {
    return pythonFromEnv()?.value || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The interpreter to host: `python` when given, else `$XLA_FFI_DENO_PYTHON`,
 * else `$DENO_XLA_PYTHON` (the older name, still read), else `python3`
 * (looked up on `PATH`).
 *
 * @example
 * ```ts ignore
 * import { findPython } from "@deno-xla/ffi/xla";
 * console.log(findPython()); // "/home/me/venv/bin/python" with XLA_FFI_DENO_PYTHON set
 * ```
 */
export function findPython(python?: string): string {
  if (python !== undefined && python !== "") return python;
  return pythonFromEnv()?.value ?? "python3";
}

/** Where the interpreter's path came from, for messages. */
function origin(python: string): string {
  try {
    const env = pythonFromEnv();
    if (env?.value === python) return env.name;
  } catch { /* no --allow-env: the option */ }
  return "The python option";
}

/** Why `python` could not be started although the system found it (EACCES). */
function notRunnable(python: string): string {
  const from = origin(python);
  let kind: "folder" | "file" | undefined;
  try {
    kind = Deno.statSync(python).isDirectory ? "folder" : "file";
  } catch { /* no --allow-read, or gone: say what is expected */ }
  if (kind === "folder") {
    let hint = "";
    for (const name of ["bin/python", "bin/python3"]) {
      const candidate = `${python.replace(/\/+$/, "")}/${name}`;
      try {
        if (Deno.statSync(candidate).isFile) {
          hint = ` (this looks like a virtual environment: use ${candidate})`;
          break;
        }
      } catch { /* not there */ }
    }
    return `${from} is '${python}', a folder; expected the path of a Python interpreter ` +
      `executable, e.g. <venv>/bin/python${hint}`;
  }
  if (kind === "file") {
    return `${from} is '${python}', a file that is not executable; expected the path of a ` +
      `Python interpreter executable (e.g. <venv>/bin/python)`;
  }
  return `${from} is '${python}', which cannot be executed (permission denied); expected the ` +
    `path of a Python interpreter executable (e.g. <venv>/bin/python)`;
}

/**
 * Runs the interpreter once to learn what hosting it needs. Throws FfiError
 * UNAVAILABLE when it cannot be run (saying so for a folder or a file that
 * is not executable) or has no shared libpython, and PERMISSION_DENIED
 * without `--allow-run`.
 *
 * @example
 * ```ts ignore
 * import { findPython, probePython } from "@deno-xla/ffi/xla";
 * const info = await probePython(findPython());
 * console.log(info.version, info.library, info.jax ?? "jax not installed");
 * ```
 */
export async function probePython(python: string): Promise<PythonInfo> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(python, {
      args: ["-c", PROBE],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    // Deno says NotCapable for a missing --allow-run; PermissionDenied is the
    // system's EACCES: a folder (a venv given instead of its bin/python) or a
    // file that is not executable.
    if (e instanceof Deno.errors.NotCapable) {
      throw _exitIfUnhandled(
        new FfiError(
          ErrorCode.PERMISSION_DENIED,
          `Running the Python interpreter ${python} needs --allow-run (or ` +
            `--allow-run=${python}): run again with it`,
          { cause: e },
        ),
      );
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(ErrorCode.UNAVAILABLE, notRunnable(python), { cause: e });
    }
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `Cannot run the Python interpreter '${python}' (${(e as Error).message}); ` +
        `give its path with the python option or XLA_FFI_DENO_PYTHON`,
      { cause: e },
    );
  }
  const text = new TextDecoder();
  if (!out.success) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `The Python interpreter '${python}' failed (exit code ${out.code}): ${
        text.decode(out.stderr).trim()
      }`,
    );
  }
  let info: Omit<PythonInfo, "command">;
  try {
    info = JSON.parse(text.decode(out.stdout));
  } catch {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `'${python}' does not answer like a Python 3 interpreter: ${text.decode(out.stdout)}`,
    );
  }
  if (info.library === null) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `The Python at ${info.executable} (${info.version}) has no shared libpython, so it cannot ` +
        `be hosted in this process; use a Python built with --enable-shared (most distribution ` +
        `and pyenv builds with PYTHON_CONFIGURE_OPTS=--enable-shared are)`,
    );
  }
  return { command: python, ...info };
}
