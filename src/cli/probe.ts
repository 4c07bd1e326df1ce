/**
 * The child-process side of `inspect`: opens a library, asks each symbol
 * named on the command line for its XLA FFI metadata, and prints one line
 * per symbol, in order, as soon as it has the answer. Calling an arbitrary
 * export with a metadata frame may crash, end or hang the process; the
 * parent ({@link queryInChild}) sees which symbol did that from the answers
 * missing, and carries on with the rest in a new child.
 *
 * Protocol (stdout, anywhere in a line, so output of the symbols themselves
 * cannot be mistaken for it): `PROBE_MARK` + JSON, first `{"ready":true}`,
 * then per symbol `{"symbol","ok":true,"major","minor","traits"}` (with
 * `"stateType"`, the type id function of the state an ffi.h instantiate
 * handler makes, or `"needsType":true` when the library exports none that
 * fits) or `{"symbol","ok":false,"message"}`.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError, toFfiError } from "../errors.ts";
import { HandlerLibrary } from "../runtime/handler_library.ts";
import { Runtime } from "../runtime/runtime.ts";
import type { HandlerMetadata, MetadataAnswer } from "./runtime_api.ts";
import {
  registerLibraryTypes,
  typeIdSymbols,
  typeNameOf,
  UNREGISTERED_TYPE,
} from "./state_types.ts";

/**
 * The path to open a library given on the command line by: a bare file name
 * (`libfoo.so`) of a file in the working folder becomes `./libfoo.so`, since
 * the loader searches only the system's folders for bare names.
 */
export function _localLibrary(path: string): string {
  if (path.includes("/")) return path;
  try {
    if (Deno.statSync(path).isFile) return `./${path}`;
  } catch { /* not here: the loader's search applies */ }
  return path;
}

/** Marks the protocol lines among whatever else the child prints. */
const PROBE_MARK = "\u001exla-ffi-probe ";

/** Options of {@link queryInChild}. */
export interface ProbeOptions {
  /** Milliseconds one symbol may take before its child is killed (default 5000). */
  timeoutMs?: number;
  /** Milliseconds the child may take to start and open the library (default 30000). */
  startupMs?: number;
}

function _emit(obj: unknown): void {
  const bytes = new TextEncoder().encode(`\n${PROBE_MARK}${JSON.stringify(obj)}\n`);
  let rest = bytes;
  while (rest.length > 0) rest = rest.subarray(Deno.stdout.writeSync(rest));
}

/** The child: query `symbols` of `libPath` in order. */
function _child(libPath: string, symbols: readonly string[]): void {
  let lib: HandlerLibrary;
  let rt: Runtime;
  try {
    lib = HandlerLibrary.open(_localLibrary(libPath));
    rt = new Runtime({ threads: 0 });
  } catch (e) {
    const err = toFfiError(e);
    _emit({ ready: false, code: err.code, message: err.message });
    return;
  }
  _emit({ ready: true });
  // The state types of ffi.h instantiate handlers, registered on first need.
  let typeIds: Map<string, number> | undefined;
  for (const symbol of symbols) {
    try {
      let md: HandlerMetadata & { stateTypeId: number };
      let stateType: string | undefined;
      try {
        md = rt.metadata(lib.handler(symbol));
      } catch (e) {
        if (!UNREGISTERED_TYPE.test(toFfiError(e).message)) throw e;
        if (typeIds === undefined) {
          const types = typeIdSymbols(symbols).map((s) => ({ name: typeNameOf(s), symbol: s }));
          try {
            typeIds = registerLibraryTypes(rt, lib, types, new Set(symbols));
          } catch {
            typeIds = new Map();
          }
        }
        try {
          md = rt.metadata(lib.handler(symbol));
        } catch {
          // A state type the library exports no type id function for.
          _emit({ symbol, ok: true, major: 0, minor: 0, traits: 0, needsType: true });
          continue;
        }
      }
      // Asked after the types were registered (for this symbol or one before it).
      if (typeIds !== undefined && md.stateTypeId !== 0) {
        stateType = [...typeIds].find(([, id]) => id === md.stateTypeId)?.[0];
      }
      _emit({
        symbol,
        ok: true,
        major: md.apiVersion.major,
        minor: md.apiVersion.minor,
        traits: md.traits,
        ...(stateType === undefined ? {} : { stateType }),
      });
    } catch (e) {
      _emit({ symbol, ok: false, message: toFfiError(e).message });
    }
  }
  rt.close();
  lib.close();
}

interface _Line {
  ready?: boolean;
  code?: number;
  symbol?: string;
  ok?: boolean;
  major?: number;
  minor?: number;
  traits?: number;
  message?: string;
  stateType?: string;
  needsType?: boolean;
}

function _answer(line: _Line, symbol: string): MetadataAnswer {
  if (!line.ok) {
    return new FfiError(
      ErrorCode.NOT_FOUND,
      `'${symbol}' does not answer the metadata query: ${line.message ?? "error"}`,
    );
  }
  if (line.needsType) {
    return { apiVersion: { major: 0, minor: 0 }, traits: 0, stateType: null };
  }
  if (line.major === 0 && line.minor === 0) {
    return new FfiError(
      ErrorCode.NOT_FOUND,
      `'${symbol}' returned without filling in the metadata (not a handler)`,
    );
  }
  const md: HandlerMetadata = {
    apiVersion: { major: line.major ?? 0, minor: line.minor ?? 0 },
    traits: line.traits ?? 0,
  };
  if (line.stateType !== undefined) md.stateType = line.stateType;
  return md;
}

function _describeExit(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

/** The permissions a child process of the command line may get: those this process holds. */
const CHILD_PERMISSIONS = ["ffi", "read", "write", "run", "env"] as const;

/**
 * @internal The permission flags of a child process: each of ffi, read,
 * write, run and env that this process holds in full, and for `scoped` ones
 * it holds only in part, the listed paths it holds (`--allow-write=y.npy`).
 * A child never gets a permission this process lacks.
 *
 * @example
 * ```ts ignore
 * import { _childPermissions } from "./probe.ts";
 * // Under `deno run --allow-read --allow-write=y.npy cli.ts …`:
 * console.log(_childPermissions({ write: ["y.npy"] })); // ["--allow-read", "--allow-write=y.npy"]
 * ```
 */
export function _childPermissions(
  scoped: Partial<Record<"read" | "write", readonly string[]>> = {},
): string[] {
  const granted = (d: Deno.PermissionDescriptor) =>
    Deno.permissions.querySync(d).state === "granted";
  const flags: string[] = [];
  for (const name of CHILD_PERMISSIONS) {
    if (granted({ name })) {
      flags.push(`--allow-${name}`);
      continue;
    }
    const paths = (name === "read" || name === "write" ? scoped[name] ?? [] : [])
      .filter((path) => !path.includes(",") && granted({ name, path }));
    if (paths.length > 0) flags.push(`--allow-${name}=${paths.join(",")}`);
  }
  return flags;
}

/**
 * @internal `deno run --quiet --no-prompt <permissions> entry ...args` with
 * stdin closed and stdout/stderr piped; the permissions are those of this
 * process ({@link _childPermissions}, with `scoped`). A failed spawn throws
 * FfiError "`what` runs a child process, which failed: …" (PERMISSION_DENIED
 * without `--allow-run`).
 */
export function _spawnChild(
  entry: string,
  args: readonly string[],
  what: string,
  env?: Record<string, string>,
  scoped?: Partial<Record<"read" | "write", readonly string[]>>,
): Deno.ChildProcess {
  try {
    return new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", ..._childPermissions(scoped), entry, ...args],
      // The parent reports a crash of the child itself (the handler, the
      // signal, what it means): no in-process crash line from the child.
      env: { XLA_FFI_DENO_CRASH_REPORT: "0", ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    const err = toFfiError(e);
    throw new FfiError(
      e instanceof Deno.errors.NotCapable ? ErrorCode.PERMISSION_DENIED : err.code,
      `${what} runs a child process, which failed: ${err.message}`,
      { cause: e },
    );
  }
}

/**
 * Queries the metadata of `symbols` in child processes (the running Deno
 * binary, this module as entry point); a symbol that crashes, ends or hangs
 * its child gets an ABORTED or DEADLINE_EXCEEDED answer and the rest go to a
 * new child. Throws FfiError when the library cannot be opened at all
 * (UNAVAILABLE with the loader's message, or PERMISSION_DENIED without
 * `--allow-run`).
 */
export async function queryInChild(
  libPath: string,
  symbols: readonly string[],
  options: ProbeOptions = {},
): Promise<Map<string, MetadataAnswer>> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const startupMs = options.startupMs ?? 30000;
  const answers = new Map<string, MetadataAnswer>();
  let rest = [...symbols];
  const entry = new URL(import.meta.url).href;
  while (rest.length > 0) {
    const child = _spawnChild(entry, [libPath, ...rest], "Querying handler metadata");
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    let ready = false;
    let timedOut = false;
    const queue: _Line[] = [];
    // Reads protocol lines until the child ends or the deadline passes.
    const next = async (ms: number): Promise<_Line | "eof" | "timeout"> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), ms);
      });
      try {
        while (queue.length === 0) {
          const r = await Promise.race([reader.read(), deadline]);
          if (r === "timeout") return "timeout";
          if (r.done) return "eof";
          buffered += r.value;
          let nl: number;
          while ((nl = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            const at = line.indexOf(PROBE_MARK);
            if (at >= 0) queue.push(JSON.parse(line.slice(at + PROBE_MARK.length)) as _Line);
          }
        }
        return queue.shift()!;
      } finally {
        clearTimeout(timer);
      }
    };
    let i = 0;
    let stop: "eof" | "timeout" | undefined;
    while (i < rest.length || !ready) {
      const line = await next(ready ? timeoutMs : startupMs);
      if (line === "eof" || line === "timeout") {
        stop = line;
        break;
      }
      if (!ready) {
        if (line.ready === false) {
          await reader.cancel().catch(() => {});
          await child.status;
          await stderr;
          throw new FfiError(line.code ?? ErrorCode.UNAVAILABLE, line.message ?? "cannot open");
        }
        ready = true;
        continue;
      }
      const symbol = rest[i]!;
      answers.set(symbol, _answer(line, symbol));
      i++;
    }
    if (stop === "timeout") {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }
    await reader.cancel().catch(() => {});
    const status = await child.status;
    const errText = (await stderr).trim();
    if (!ready) {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `The metadata query process ${timedOut ? "did not start in time" : "failed to start"}` +
          ` (${_describeExit(status)})${errText ? `: ${errText.split("\n")[0]}` : ""}`,
      );
    }
    if (i < rest.length) {
      const symbol = rest[i]!;
      answers.set(
        symbol,
        timedOut
          ? new FfiError(
            ErrorCode.DEADLINE_EXCEEDED,
            `'${symbol}' did not answer the metadata query within ${timeoutMs} ms`,
          )
          : new FfiError(
            ErrorCode.ABORTED,
            `'${symbol}' ended the query process (${_describeExit(status)})`,
          ),
      );
      i++;
    }
    rest = rest.slice(i);
  }
  return answers;
}

if (import.meta.main) {
  const [libPath, ...symbols] = Deno.args;
  if (libPath !== undefined) _child(libPath, symbols);
}
