/**
 * The command line's work behind `cli.ts`: parsing, the `inspect`, `run`
 * and `fuzz` commands, permissions and exit codes. Its {@link main} takes
 * the runtime and progress sink as options, so tests drive it in process
 * with a runtime of their own; `cli.ts` exports only `main`, its
 * {@link CliIo} and {@link ExitCode}.
 *
 * @module
 */
import { DataType, ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { missingNativePermissions } from "../native/loader.ts";
import { typeFacts, typeName } from "../spec/type_names.ts";
import { assertAllClose, AssertionError } from "../testing/assert.ts";
import { FfiError, toFfiError } from "../errors.ts";
import { type ElfSymbolTable, readElfSymbols } from "../native/elf.ts";
import { classifyExports, type CxxName, isMangled } from "./cxx.ts";
import { typeIdSymbols, typeNameOf } from "./state_types.ts";
import { _closest as _closestName } from "../_closest.ts";
import {
  ExitCode,
  parseCommandLine,
  type ParsedFuzz,
  type ParsedInspect,
  type ParsedRun,
  usage,
} from "./args.ts";
import type { CallArg, CliRuntime, HandlerMetadata, MetadataAnswer } from "./runtime_api.ts";
import { _runChild, _runChildMark, embeddedRuntime } from "./embedded.ts";
import { _fuzz, _inspectSignature } from "./fuzz.ts";
import { _jaxlibApi, _refuses, type JaxlibApi } from "./jaxlib_skew.ts";
import { _configuredPython } from "../xla/interpreter.ts";
import { _closeRunModule, _importForRun, _isProvided, _provideForRun } from "./module_target.ts";
import {
  _formatModuleInspect,
  _openModule,
  _pythonModuleArgs,
  type ModuleHandlerRow,
  type PythonModuleArgs,
} from "./python_module.ts";
import { Runtime } from "../runtime/runtime.ts";
import {
  type ArrayData,
  type ExpectReport,
  formatArray,
  formatShape,
  formatTiming,
  ProgressLine,
  type ResultReport,
  runReportLine,
  summarizeTimings,
} from "./format.ts";

function _unavailable(what: string): FfiError {
  return new FfiError(
    ErrorCode.UNAVAILABLE,
    `${what} is not available: this command line runs without a runtime`,
  );
}

/**
 * A runtime without any of the parts: every operation throws
 * {@link FfiError} (UNAVAILABLE) saying so. For tools that only parse and
 * list (e.g. `inspect` without querying handlers), and for tests.
 *
 * @example
 * ```ts
 * import { unavailableRuntime } from "./main.ts";
 * await unavailableRuntime.queryMetadata("./lib.so", "h").catch((e) => console.log(e.codeName));
 * // "UNAVAILABLE"
 * ```
 */
export const unavailableRuntime: CliRuntime = {
  queryMetadata: () => Promise.reject(_unavailable("querying handler metadata")),
  prepare: () => Promise.reject(_unavailable("running a handler")),
  readNpy: () => {
    throw _unavailable("reading .npy files");
  },
  writeNpy: () => {
    throw _unavailable("writing .npy files");
  },
};

/**
 * Queries the XLA FFI metadata (API version, traits) of one exported symbol
 * of a shared library, with the embedded runtime, in a child process (so a
 * symbol that is no handler cannot crash the caller). Needs `--allow-run`.
 *
 * @example
 * ```ts ignore
 * import { queryMetadata } from "./main.ts";
 * const { apiVersion, traits } = await queryMetadata("./libscale.so", "scale");
 * ```
 */
export function queryMetadata(libPath: string, symbol: string): Promise<HandlerMetadata> {
  return embeddedRuntime().queryMetadata(libPath, symbol);
}

/** Where the command line writes, and which runtime it uses. */
export interface CliIo {
  /** Standard output text. */
  stdout: (text: string) => void;
  /** Standard error text (messages, progress). */
  stderr: (text: string) => void;
  /** The progress sink (default `Deno.stderr`). */
  progress?: ConstructorParameters<typeof ProgressLine>[1];
  /** The runtime (default {@link embeddedRuntime}`()`). */
  runtime?: CliRuntime;
}

function _writer(file: { writeSync(p: Uint8Array): number }): (text: string) => void {
  const encoder = new TextEncoder();
  return (text) => {
    let bytes = encoder.encode(text);
    while (bytes.length > 0) bytes = bytes.subarray(file.writeSync(bytes));
  };
}

/** A failure with the exit code of the phase it happened in. */
class _Exit {
  constructor(readonly code: ExitCode, readonly error: FfiError) {}
}

async function _phase<T>(code: ExitCode, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof _Exit) throw e;
    const error = toFfiError(e);
    throw new _Exit(error.code === ErrorCode.UNAVAILABLE ? ExitCode.UNAVAILABLE : code, error);
  }
}

function _functionNames(table: ElfSymbolTable): string[] {
  return [...new Set(table.symbols.map((s) => s.name))];
}

function _traitNames(traits: number): string[] {
  const names: string[] = [];
  if (traits & 1) names.push("command_buffer_compatible");
  const rest = traits & ~1;
  if (rest) names.push(`0x${rest.toString(16)}`);
  return names;
}

/** The reason in a probe message, without the leading `'symbol' `. */
function _reason(symbol: string, message: string): string {
  const prefix = `'${symbol}' `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}

function _plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The `stateType` of an inspected handler's JSON, when it makes a state of a registered type. */
function _stateTypeJson(md: HandlerMetadata): { stateType?: unknown } {
  if (md.stateType === undefined) return {};
  if (md.stateType === null) return { stateType: null };
  return { stateType: { name: typeNameOf(md.stateType), typeId: md.stateType } };
}

/** The line `inspect` prints for a handler whose state type must be registered first. */
function _stateTypeLine(name: string, md: HandlerMetadata, io: CliIo): void {
  if (md.stateType === undefined) return;
  if (md.stateType === null) {
    io.stdout(
      `${name}: makes a state whose type must be registered first, and the library exports ` +
        `no type id function (XLA_FFI_TypeId* NAME_type_id(void)) for it; ` +
        `run registers one with --type NAME=SYMBOL\n`,
    );
    return;
  }
  io.stdout(
    `${name}: makes a state of type ${typeNameOf(md.stateType)} (type id ${md.stateType}), ` +
      `which must be registered first; run registers it (--type NAME=${md.stateType})\n`,
  );
}

async function _inspect(cmd: ParsedInspect, io: CliIo, runtime: CliRuntime): Promise<ExitCode> {
  if (cmd.signature !== undefined) {
    await _phase(ExitCode.LIBRARY, () => _inspectSignature(cmd, io));
    return ExitCode.OK;
  }
  const table = await _phase(ExitCode.LIBRARY, () => readElfSymbols(cmd.path));
  const exported = await classifyExports(_functionNames(table));
  const demangled = exported.some((e) => e.mangled && e.name !== e.symbol);
  const notQueried = exported.filter((e) => e.member || (e.mangled && !cmd.all));
  const candidates = exported.filter((e) => !notQueried.includes(e));
  const names = candidates.map((e) => e.symbol);
  const display = new Map(exported.map((e) => [e.symbol, e.name]));
  const handlers: { symbol: string; metadata: HandlerMetadata }[] = [];
  const skipped: { symbol: string; error: FfiError }[] = [];
  let unavailable: FfiError | undefined;
  let answers: Map<string, MetadataAnswer> | undefined;
  if (runtime.queryMetadataAll && names.length > 0) {
    try {
      answers = await runtime.queryMetadataAll(cmd.path, names);
    } catch (e) {
      const error = toFfiError(e);
      if (error.code !== ErrorCode.UNAVAILABLE) throw new _Exit(ExitCode.LIBRARY, error);
      unavailable = error;
    }
  }
  for (const symbol of unavailable ? [] : names) {
    let answer: MetadataAnswer;
    if (answers) {
      answer = answers.get(symbol) ??
        new FfiError(ErrorCode.NOT_FOUND, `${symbol}: no answer`);
    } else {
      try {
        answer = await runtime.queryMetadata(cmd.path, symbol);
      } catch (e) {
        answer = toFfiError(e);
      }
    }
    if (!(answer instanceof FfiError)) {
      handlers.push({ symbol, metadata: answer });
    } else if (answer.code === ErrorCode.UNAVAILABLE) {
      unavailable = answer;
      break;
    } else if (answer.code === ErrorCode.ABORTED || answer.code === ErrorCode.DEADLINE_EXCEEDED) {
      skipped.push({ symbol, error: answer });
    } else if (answer.code !== ErrorCode.NOT_FOUND) {
      throw new _Exit(ExitCode.LIBRARY, answer);
    }
  }
  // A configured Python's jaxlib: the version its XLA speaks, and which handlers it refuses.
  let jaxlib: JaxlibApi | null = null;
  const python = unavailable || handlers.length === 0 ? undefined : _configuredPython();
  if (python !== undefined) {
    try {
      jaxlib = await _jaxlibApi(python);
    } catch { /* no usable interpreter: nothing to say about jaxlib */ }
  }
  const refused = jaxlib === null
    ? []
    : handlers.filter((h) =>
      h.metadata.stateType !== null && _refuses(jaxlib!.ffiApi, h.metadata.apiVersion)
    );
  const notAskedReason = (e: CxxName) =>
    e.member
      ? "a C++ member function (never a handler)"
      : 'C++ linkage (handlers are extern "C"; --all asks it)';
  const cxx = exported.filter((e) => e.mangled).length;
  if (cmd.json) {
    io.stdout(
      JSON.stringify({
        library: cmd.path,
        machine: table.machineName,
        exportedFunctions: exported.map((e) => e.symbol),
        handlers: unavailable ? null : handlers.map((h) => ({
          symbol: h.symbol,
          name: display.get(h.symbol),
          apiVersion: `${h.metadata.apiVersion.major}.${h.metadata.apiVersion.minor}`,
          traits: _traitNames(h.metadata.traits),
          ..._stateTypeJson(h.metadata),
        })),
        skipped: skipped.map((k) => ({
          symbol: k.symbol,
          name: display.get(k.symbol),
          reason: _reason(k.symbol, k.error.message),
        })),
        notQueried: notQueried.map((e) => ({
          symbol: e.symbol,
          name: e.name,
          reason: notAskedReason(e),
        })),
        error: unavailable ? { code: unavailable.codeName, message: unavailable.message } : null,
        jaxlib: jaxlib === null ? null : {
          version: jaxlib.jaxlib,
          python: jaxlib.python,
          ffiApi: `${jaxlib.ffiApi.major}.${jaxlib.ffiApi.minor}`,
          refuses: refused.map((h) => h.symbol),
        },
      }) + "\n",
    );
  } else {
    io.stdout(
      `${cmd.path}: ${table.machineName}, ${_plural(exported.length, "exported function")}` +
        (cxx > 0 ? ` (${exported.length - cxx} with C linkage, ${cxx} C++)` : "") + "\n",
    );
    if (unavailable) {
      io.stdout(`exported functions (handler candidates):\n`);
      for (const n of names) io.stdout(`  ${display.get(n)}\n`);
    } else if (handlers.length === 0) {
      io.stdout("no XLA FFI handlers\n");
    } else {
      const rows = handlers.map((h) => [display.get(h.symbol)!, h.metadata] as const);
      const width = Math.max(7, ...rows.map(([n]) => n.length));
      io.stdout(`${"handler".padEnd(width)}  api   traits\n`);
      for (const [n, md] of rows) {
        const v = md.stateType === null ? "?" : `${md.apiVersion.major}.${md.apiVersion.minor}`;
        const traits = md.stateType === null ? "?" : _traitNames(md.traits).join(", ") || "-";
        io.stdout(`${n.padEnd(width)}  ${v.padEnd(4)}  ${traits}\n`);
      }
      for (const [n, md] of rows) _stateTypeLine(n, md, io);
      if (jaxlib !== null) {
        const v = (a: { major: number; minor: number }) => `${a.major}.${a.minor}`;
        io.stdout(
          `jaxlib ${jaxlib.jaxlib ?? "(version unknown)"} (${jaxlib.python}) speaks XLA FFI API ` +
            `${v(jaxlib.ffiApi)}: ` +
            (refused.length === 0
              ? "it registers every handler listed\n"
              : `it refuses ${
                refused.map((h) => `${display.get(h.symbol)} (${v(h.metadata.apiVersion)})`)
                  .join(", ")
              } at registration (a newer version than its own)\n`),
        );
      }
    }
    if (cmd.verbose) {
      for (const k of skipped) {
        io.stdout(`skipped ${display.get(k.symbol)}: ${_reason(k.symbol, k.error.message)}\n`);
      }
      for (const e of notQueried) io.stdout(`not asked ${e.name}: ${notAskedReason(e)}\n`);
    } else {
      if (skipped.length > 0) {
        io.stdout(
          `${_plural(skipped.length, "export")} skipped: ` +
            `${skipped.length === 1 ? "it" : "they"} ended the query process or did not ` +
            `answer (--verbose lists ${skipped.length === 1 ? "it" : "them"})\n`,
        );
      }
      if (notQueried.length > 0) {
        const members = notQueried.filter((e) => e.member).length;
        const other = notQueried.length - members;
        const parts: string[] = [];
        if (members > 0) parts.push(`${members} member functions, never handlers`);
        if (other > 0) parts.push(`--all asks the other ${other}`);
        io.stdout(
          `${_plural(notQueried.length, "C++ function")} not asked (${parts.join("; ")}; ` +
            `--verbose lists them)\n`,
        );
      }
    }
    if (cxx > 0 && !demangled) {
      io.stdout("C++ names are shown mangled: c++filt (binutils) is not installed\n");
    }
  }
  if (unavailable) throw new _Exit(ExitCode.UNAVAILABLE, unavailable);
  return ExitCode.OK;
}

/** The name most like `name` among `names`; C++ names are also compared without parameters. */
function _closest(name: string, names: readonly string[]): string | undefined {
  const byKey = new Map<string, string>();
  for (const n of names) {
    byKey.set(n, n);
    const base = _withoutParameters(n);
    if (base !== n && !byKey.has(base)) byKey.set(base, n);
  }
  const near = _closestName(name, byKey.keys());
  return near === undefined ? undefined : byKey.get(near);
}

/** A demangled C++ name without its parameter list (`ns::f(int) const` → `ns::f`); C names as they are. */
function _withoutParameters(name: string): string {
  const open = name.indexOf("(");
  return open > 0 ? name.slice(0, open) : name;
}

/** Namespaces of the C++ runtime and standard library: their functions are never handlers. */
const _RUNTIME_NAMESPACES = new Set(["std", "__gnu_cxx", "__cxxabiv1", "__gnu_debug", "abi"]);

/**
 * Whether an export may be offered as "did you mean": no member function, no
 * reserved name (`_init`, `__cxa_*`, a mangled name left undemangled) and
 * nothing of the C++ runtime's namespaces.
 */
function _suggestable(e: CxxName): boolean {
  if (e.member) return false;
  const base = _withoutParameters(e.name);
  return !base.startsWith("_") && !_RUNTIME_NAMESPACES.has(base.split("::")[0]!);
}

/**
 * The handler of `path` most like `want`, or undefined. The closest exports are
 * asked for their metadata (in a child process, as `inspect` does) until one
 * answers as a handler; when the runtime cannot ask, the closest export that
 * may be a handler is offered.
 */
async function _suggestHandler(
  want: string,
  exported: readonly CxxName[],
  path: string,
  runtime: CliRuntime | undefined,
): Promise<string | undefined> {
  let pool = exported.filter(_suggestable);
  for (let tries = 0; tries < 4; tries++) {
    const near = _closest(want, pool.map((x) => x.name));
    if (near === undefined) return undefined;
    const e = pool.find((x) => x.name === near)!;
    if (runtime === undefined) return near;
    try {
      await runtime.queryMetadata(path, e.symbol);
      return near;
    } catch (err) {
      if (toFfiError(err).code === ErrorCode.UNAVAILABLE) return near;
    }
    pool = pool.filter((x) => x !== e);
  }
  return undefined;
}

async function _checkTarget(run: ParsedRun, runtime?: CliRuntime): Promise<void> {
  const { path, kind } = run.target;
  if (kind === "module" && _isProvided(run)) return _checkProvided(run);
  if (kind === "library") {
    const table = readElfSymbols(path);
    const names = _functionNames(table);
    const wanted = [run.handler, ...(run.instantiate === undefined ? [] : [run.instantiate])];
    if (wanted.every((w) => names.includes(w) && !isMangled(w))) return;
    // A C++ export, by symbol or by its whole demangled name, with or without its parameters.
    const exported = await classifyExports(names);
    const resolve = async (want: string, option: string): Promise<string> => {
      const e = exported.find((x) => x.symbol === want) ??
        exported.find((x) => x.name === want) ??
        exported.find((x) => x.mangled && _withoutParameters(x.name) === want);
      if (e === undefined) {
        const near = await _suggestHandler(want, exported, path, runtime);
        throw new FfiError(
          ErrorCode.NOT_FOUND,
          `${option}'${want}' is not an exported function of ${path}` +
            (near ? ` (did you mean '${near}'?)` : "") +
            `; 'inspect ${path}' lists its handlers`,
        );
      }
      if (e.member) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `${option}'${want}' is a C++ member function (${e.name}), not a handler: a handler ` +
            `is a function XLA_FFI_Error* f(XLA_FFI_CallFrame*), usually extern "C" (as ` +
            `XLA_FFI_DEFINE_HANDLER_SYMBOL makes it); 'inspect ${path}' lists the handlers`,
        );
      }
      return e.symbol;
    };
    run.handler = await resolve(run.handler, "");
    if (run.instantiate !== undefined) {
      run.instantiate = await resolve(run.instantiate, "--instantiate ");
    }
    return;
  }
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    throw new FfiError(ErrorCode.NOT_FOUND, `${path}: ${(e as Error).message}`, { cause: e });
  }
  if (!info.isFile) throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${path}: not a file`);
  let mod: Record<string, unknown>;
  try {
    mod = await _importForRun(run, path);
  } catch (e) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${path} cannot be imported: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  if (!(run.handler in mod)) {
    const names = Object.keys(mod);
    const near = _closest(run.handler, names);
    throw new FfiError(
      ErrorCode.NOT_FOUND,
      `${path} has no export '${run.handler}'` + (near ? ` (did you mean '${near}'?)` : "") +
        ` (exports: ${names.join(", ") || "none"})`,
    );
  }
}

function _checkFiles(run: ParsedRun): void {
  for (const [i, arg] of run.args.entries()) {
    if (arg.kind !== "npy") continue;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(arg.path);
    } catch (e) {
      throw new FfiError(
        ErrorCode.NOT_FOUND,
        `--arg ${i + 1}: ${arg.path}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    if (!info.isFile) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `--arg ${i + 1}: ${arg.path} is not a file`);
    }
  }
  for (const [i, file] of run.expects.entries()) {
    let ok = false;
    try {
      ok = Deno.statSync(file).isFile;
    } catch { /* reported below */ }
    if (!ok) {
      throw new FfiError(ErrorCode.NOT_FOUND, `--expect ${i + 1}: ${file} is not a readable file`);
    }
  }
  for (const [i, out] of run.outs.entries()) {
    const slash = out.lastIndexOf("/");
    const dir = slash < 0 ? "." : slash === 0 ? "/" : out.slice(0, slash);
    let ok = false;
    try {
      ok = Deno.statSync(dir).isDirectory;
    } catch { /* reported below */ }
    if (!ok) {
      throw new FfiError(
        ErrorCode.NOT_FOUND,
        `--out ${i + 1}: folder ${dir} of ${out} does not exist`,
      );
    }
  }
}

const _NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$|^[+-]?(inf|nan)$/i;

/** Every attribute of a dictionary with its dotted name. */
function* _flatAttrs(
  dict: ParsedRun["attrs"],
  prefix = "",
): Generator<[string, ParsedRun["attrs"]["entries"] extends Map<string, infer V> ? V : never]> {
  for (const [name, v] of dict.entries) {
    if (v.kind === "dictionary") yield* _flatAttrs(v, `${prefix}${name}.`);
    else yield [prefix + name, v];
  }
}

/**
 * Hints for a failed handler about the attributes it was given: a number
 * sent as a string (no type given), or a scalar of another type than the
 * one a "Wrong scalar data type" message asks for.
 */
function _attrHints(attrs: ParsedRun["attrs"], message: string): string[] {
  const hints: string[] = [];
  const wrong = /Wrong scalar data type: expected (\w+) but got (\w+)/.exec(message);
  const want = wrong ? DataType[wrong[1] as keyof typeof DataType] : undefined;
  for (const [name, v] of _flatAttrs(attrs)) {
    if (v.kind === "string" && _NUMBER.test(v.value)) {
      const t = want !== undefined ? typeName(want) : /^[+-]?\d+$/.test(v.value) ? "i64" : "f32";
      hints.push(
        `attribute ${name}=${v.value} was sent as a string; a number needs its type, ` +
          `e.g. --attr ${name}=${t}:${v.value}` +
          (want !== undefined ? "" : ` (or the type the handler binds: i32, f64, …)`),
      );
    } else if (
      wrong && want !== undefined && v.kind === "scalar" && DataType[v.dtype] === wrong[2]
    ) {
      hints.push(
        `attribute ${name} was sent as ${typeName(v.dtype)}; the handler wants ${
          typeName(want)
        }: ` +
          `--attr ${name}=${typeName(want)}:${v.value}`,
      );
    }
  }
  return hints;
}

async function _run(run: ParsedRun, io: CliIo, runtime: CliRuntime): Promise<ExitCode> {
  try {
    return await _runTarget(run, io, runtime);
  } finally {
    // The module instance imported for this run: its TS handlers would hold entry points.
    _closeRunModule(run);
  }
}

async function _runTarget(run: ParsedRun, io: CliIo, runtime: CliRuntime): Promise<ExitCode> {
  await _phase(ExitCode.LIBRARY, () => _checkTarget(run, runtime));
  await _phase(ExitCode.FILE, () => _checkFiles(run));
  const args: CallArg[] = [];
  for (const spec of run.args) {
    if (spec.kind === "token") args.push({ kind: "token" });
    else if (spec.kind === "inline") {
      args.push({ kind: "buffer", dtype: spec.dtype, dims: spec.dims, values: spec.values });
    } else {args.push({
        kind: "buffer",
        ...await _phase(ExitCode.FILE, () => runtime.readNpy(spec.path)),
      });}
  }
  using call = await _phase(ExitCode.LIBRARY, () => runtime.prepare(run, args));
  const times = new Float64Array(run.repeat);
  let error: FfiError | undefined;
  let calls = 0;
  {
    using progress = run.repeat > 1 ? new ProgressLine(run.repeat, io.progress) : undefined;
    // The timed region holds only the call itself.
    await _phase(ExitCode.HANDLER_ERROR, async () => {
      for (; calls < run.repeat; calls++) {
        const start = performance.now();
        error = await call.call();
        times[calls] = performance.now() - start;
        progress?.update(calls + 1);
        if (error) break;
      }
    });
  }
  const results: ResultReport[] = error ? [] : call.results().map((r) => ({ ...r }));
  if (!error) {
    for (const [i, out] of run.outs.entries()) {
      const r = results[i]!;
      if (r.kind !== "buffer") continue;
      await _phase(ExitCode.FILE, () => runtime.writeNpy(out, r));
      r.file = out;
    }
  }
  const expect = error || run.expects.length === 0
    ? undefined
    : await _compare(run, results, runtime);
  const timing = run.repeat > 1 && !error ? summarizeTimings(times.subarray(0, calls)) : undefined;
  if (run.json) {
    io.stdout(
      runReportLine(run, {
        results,
        timing,
        error: error ? { code: error.code, message: error.message, hint: error.hint } : undefined,
        expect,
      }),
    );
  } else if (!error) {
    for (const [i, r] of results.entries()) {
      if (r.kind === "token") {
        io.stdout(`result ${i}: token\n`);
      } else if (r.file !== undefined) {
        io.stdout(`result ${i}: ${formatShape(r.dtype, r.dims)} written to ${r.file}\n`);
      } else {
        io.stdout(`result ${i}: ${formatShape(r.dtype, r.dims)}\n${formatArray(r)}\n`);
      }
    }
    if (timing) io.stdout(`timing: ${formatTiming(timing)}\n`);
    for (const e of expect ?? []) {
      if (e.match) io.stdout(`result ${e.index} matches ${e.file}\n`);
    }
  }
  for (const e of expect ?? []) {
    if (!e.match) io.stderr(`error: result ${e.index} does not match ${e.file}: ${e.message}\n`);
  }
  if (error) {
    io.stderr(`error: handler '${run.handler}' failed (${error.codeName}): ${error.message}\n`);
    _diagnosticsApart(error.message, io);
    if (error.hint !== undefined) io.stderr(`hint: ${error.hint}\n`);
    for (const hint of _attrHints(run.attrs, error.message)) io.stderr(`hint: ${hint}\n`);
    return ExitCode.HANDLER_ERROR;
  }
  return expect?.some((e) => !e.match) ? ExitCode.MISMATCH : ExitCode.OK;
}

/**
 * Before a library handler runs without `--instantiate` (in a stage other
 * than instantiate): when the library makes states (it exports ffi.h type
 * id functions, `*_type_id`, and instantiate handlers whose state is of such
 * a type, as `inspect` lists them), a note on stderr naming the
 * `--instantiate` to add: a handler that takes its state (ffi.h's
 * `Ctx<State<T>>`) stops the process with ffi.h's assertion without one.
 * The instantiate handler named is the one whose name shares the longest
 * start with the handler's. Nothing when the library cannot be asked.
 */
async function _stateNote(run: ParsedRun, io: CliIo, runtime: CliRuntime): Promise<void> {
  if (run.instantiate !== undefined || run.stage === ExecutionStage.INSTANTIATE) return;
  if (run.types !== undefined && run.types.length > 0) return;
  const path = run.target.path;
  let answers: Map<string, MetadataAnswer>;
  try {
    const names = _functionNames(readElfSymbols(path));
    const ids = new Set(typeIdSymbols(names));
    if (ids.size === 0 || runtime.queryMetadataAll === undefined) return;
    const candidates = names.filter((n) =>
      n !== run.handler && !ids.has(n) && !n.endsWith("_type_info") && !isMangled(n)
    );
    if (candidates.length === 0) return;
    answers = await runtime.queryMetadataAll(path, candidates);
  } catch {
    return;
  }
  const makers: string[] = [];
  for (const [symbol, md] of answers) {
    if (!(md instanceof FfiError) && md.stateType !== undefined) makers.push(symbol);
  }
  if (makers.length === 0) return;
  const shared = (a: string) => {
    let i = 0;
    while (i < a.length && a[i] === run.handler[i]) i++;
    return i;
  };
  makers.sort((a, b) => shared(b) - shared(a) || (a < b ? -1 : 1));
  const best = makers[0]!;
  const md = answers.get(best) as HandlerMetadata;
  const made = md.stateType
    ? ` makes a state of type ${typeNameOf(md.stateType)}`
    : " makes a state";
  const others = makers.length > 1 ? ` (instantiate handlers: ${makers.join(", ")})` : "";
  io.stderr(
    `note: ${path} makes states ('${best}'${made})${others}; if '${run.handler}' takes its ` +
      `state (ffi.h's Ctx<State<T>>), it stops the process without one (ffi.h asserts): ` +
      `add --instantiate ${best}\n`,
  );
}

/** Where one of ffi.h's decode diagnostics starts (spec §7, item 5). */
const _DIAGNOSTIC_START =
  /(?=Wrong |Unexpected attribute: |Attribute name mismatch: |Failed to (?:get|allocate|free|schedule) )/;

/**
 * ffi.h's decode diagnostics of `message`, one each, with the operand each
 * is of when the message's "bad operands at" list pairs them, when there
 * are several: ffi.h appends them to its "Diagnostics:" section without a
 * separator (`DiagnosticEngine::append` in api.h), and the message keeps
 * that text byte for byte. Empty when there are fewer than two.
 */
function _diagnostics(message: string): string[] {
  const at = message.indexOf("\nDiagnostics:\n");
  if (at < 0) return [];
  const parts = message.slice(at + "\nDiagnostics:\n".length).split(_DIAGNOSTIC_START)
    .filter((d) => d.length > 0);
  if (parts.length < 2) return [];
  const bad = /\(bad operands at: ([\d, ]+)\)/.exec(message.slice(0, at))?.[1]?.split(", ");
  return bad?.length === parts.length ? parts.map((d, i) => `operand ${bad[i]}: ${d}`) : parts;
}

/**
 * After an error line: ffi.h's diagnostics of its message one per line, when
 * several ran together (the error line keeps XLA's text as it is).
 */
function _diagnosticsApart(message: string, io: CliIo): void {
  const parts = _diagnostics(message);
  if (parts.length === 0) return;
  io.stderr(`diagnostics (${parts.length}; ffi.h writes them without a separator):\n`);
  for (const d of parts) io.stderr(`  ${d}\n`);
}

/** The handler of a Python extension module's run is one of the module's. */
async function _checkProvided(run: ParsedRun): Promise<void> {
  const names = Object.keys(await _importForRun(run, run.target.path));
  for (const [want, option] of [[run.handler, ""], [run.instantiate, "--instantiate "]]) {
    if (want === undefined || names.includes(want)) continue;
    const near = _closest(want, names);
    throw new FfiError(
      ErrorCode.NOT_FOUND,
      `${option}'${want}' is not a handler of the Python module ${run.target.path}` +
        (near ? ` (did you mean '${near}'?)` : "") + ` (${_plural(names.length, "handler")})`,
    );
  }
}

/** Hosting Python needs the native library's permissions, all of env and read, and running it. */
function _checkPythonPermissions(command: string): void {
  const missing = new Set(missingNativePermissions().missing);
  if (!_granted({ name: "env" })) missing.add("--allow-env");
  if (!_granted({ name: "read" })) missing.add("--allow-read");
  if (!_granted({ name: "run" })) missing.add("--allow-run");
  if (!_granted({ name: "ffi" })) missing.add("--allow-ffi");
  _missingFlagsExit(
    missing,
    (flags) =>
      `'${command} --python-module' hosts Python and needs ${flags}: run again with ${flags}`,
  );
}

/** Exits with USAGE and PERMISSION_DENIED when `missing` names flags (in the usual order). */
function _missingFlagsExit(missing: Set<string>, message: (flags: string) => string): void {
  if (missing.size === 0) return;
  const order = ["--allow-env", "--allow-read", "--allow-write", "--allow-run", "--allow-ffi"];
  const flags = order.filter((f) => missing.has(f)).join(" ");
  throw new _Exit(ExitCode.USAGE, new FfiError(ErrorCode.PERMISSION_DENIED, message(flags)));
}

/** `inspect --python-module M`: the module's handlers, their metadata, what it left out. */
async function _inspectPythonModule(py: PythonModuleArgs, io: CliIo): Promise<ExitCode> {
  _checkPythonPermissions("inspect");
  const json = py.argv.includes("--json");
  const { xla, handlers } = await _phase(ExitCode.LIBRARY, () => _openModule(py));
  try {
    using rt = new Runtime();
    const rows: ModuleHandlerRow[] = [];
    for (const h of handlers.values()) {
      const md = await _phase(ExitCode.LIBRARY, () => rt.metadata(h));
      rows.push({
        name: h.name,
        apiVersion: `${md.apiVersion.major}.${md.apiVersion.minor}`,
        traits: _traitNames(md.traits),
      });
    }
    if (json) {
      io.stdout(
        JSON.stringify({
          module: handlers.module,
          file: handlers.file,
          platforms: handlers.platforms,
          handlers: rows,
          skipped: handlers.skipped,
        }) + "\n",
      );
    } else {
      io.stdout(_formatModuleInspect(handlers, rows));
    }
    return ExitCode.OK;
  } finally {
    await xla.close();
  }
}

/**
 * `run --python-module M NAME …`: in a child process (a crash of the handler,
 * e.g. LAPACK's without `--initialize initialize`, is reported), which hosts
 * Python and runs the module's handler as a run of a TS module's export.
 */
async function _runPythonModule(
  py: PythonModuleArgs,
  argv: readonly string[],
  io: CliIo,
  runtime: CliRuntime,
  child: { terminal: boolean } | undefined,
): Promise<ExitCode> {
  const cmd = await _phase(ExitCode.USAGE, () => parseCommandLine(py.argv));
  if (cmd.command !== "run") return ExitCode.USAGE;
  cmd.target = { kind: "module", path: py.module };
  _checkPythonPermissions("run");
  if (runtime.runIsolated && !child) {
    await _phase(ExitCode.FILE, () => _checkFiles(cmd));
    const sink = io.progress?.sink ?? Deno.stderr;
    const runIsolated = runtime.runIsolated.bind(runtime);
    const code = await _phase(ExitCode.LIBRARY, () =>
      runIsolated(argv, cmd, {
        stdout: io.stdout,
        stderr: io.stderr,
        progressTerminal: sink.isTerminal(),
      }));
    if (code === ExitCode.CRASHED && py.initialize === undefined) {
      io.stderr(
        `hint: some modules' handlers crash until the module is initialized: jaxlib.cpu._lapack ` +
          `needs --initialize initialize\n`,
      );
    }
    return code;
  }
  const { xla, handlers } = await _phase(ExitCode.LIBRARY, () => _openModule(py));
  try {
    _provideForRun(cmd, Object.fromEntries(handlers));
    return await _run(cmd, io, runtime);
  } finally {
    if (child) _runChildMark("done");
    await xla.close();
  }
}

/**
 * `fuzz --python-module M NAME …`: the handler runs in a child process that
 * hosts the module (src/testing/fuzz/caller.ts, `{ module, handler }`), never here.
 */
async function _fuzzPythonModule(py: PythonModuleArgs, io: CliIo): Promise<ExitCode> {
  const cmd = await _phase(ExitCode.USAGE, () => parseCommandLine(py.argv));
  if (cmd.command !== "fuzz") return ExitCode.USAGE;
  if (cmd.instantiate !== undefined || (cmd.types ?? []).length > 0) {
    throw new _Exit(
      ExitCode.USAGE,
      new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "fuzz --python-module: --instantiate and --type are for a shared library's handlers",
      ),
    );
  }
  _checkPythonPermissions("fuzz");
  if (!_granted({ name: "write", path: cmd.out })) {
    _missingFlagsExit(
      new Set(["--allow-write"]),
      (flags) => `'fuzz' writes failures to ${cmd.out} and needs ${flags}: run again with ${flags}`,
    );
  }
  const module = { name: py.module, initialize: py.initialize, platform: py.platform };
  const found = await _phase(ExitCode.LIBRARY, () => _fuzz(cmd, io, module));
  return found ? ExitCode.FUZZ_FAILURES : ExitCode.OK;
}

/** An array of the command line as `assertAllClose` reads it (values already decoded). */
function _comparable(a: ArrayData): { data: ArrayBufferView; shape: number[]; dtype: DataType } {
  const shape = [...a.dims];
  if (a.dtype === DataType.F32 || a.dtype === DataType.C64) {
    return { data: Float32Array.from(a.values, Number), shape, dtype: a.dtype };
  }
  if (typeFacts(a.dtype)?.kind === "complex") {
    return { data: Float64Array.from(a.values, Number), shape, dtype: DataType.C128 };
  }
  if (a.dtype === DataType.S64) {
    return { data: BigInt64Array.from(a.values, (v) => BigInt(v)), shape, dtype: DataType.S64 };
  }
  if (a.dtype === DataType.U64) {
    return { data: BigUint64Array.from(a.values, (v) => BigInt(v)), shape, dtype: DataType.U64 };
  }
  return { data: Float64Array.from(a.values, Number), shape, dtype: DataType.F64 };
}

/** Compares each result that has an `--expect` file with it. */
async function _compare(
  run: ParsedRun,
  results: readonly ResultReport[],
  runtime: CliRuntime,
): Promise<ExpectReport[]> {
  const out: ExpectReport[] = [];
  for (const [index, file] of run.expects.entries()) {
    const r = results[index]!;
    if (r.kind !== "buffer") continue;
    const ref = await _phase(ExitCode.FILE, () => runtime.readNpy(file));
    try {
      // numpy's defaults, as the command line documents them (not the data type's).
      assertAllClose(_comparable(r), _comparable(ref), {
        rtol: run.rtol ?? 1e-7,
        atol: run.atol ?? 0,
      });
      out.push({ index, file, match: true });
    } catch (e) {
      if (!(e instanceof AssertionError)) throw e;
      out.push({ index, file, match: false, message: e.message });
    }
  }
  return out;
}

function _granted(desc: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(desc).state === "granted";
}

/**
 * Exits with one message naming every permission flag the command needs and
 * this process lacks (checked only for the embedded runtime's parts).
 */
function _checkPermissions(
  cmd: ParsedInspect | ParsedRun | ParsedFuzz,
  runtime: CliRuntime,
): void {
  const missing = new Set<string>();
  const path = cmd.command === "run" ? cmd.target.path : cmd.path;
  if (!_granted({ name: "read", path })) missing.add("--allow-read");
  if (cmd.command === "fuzz") {
    // The handler runs in an isolated library's process; failures are written to --out.
    if (!_granted({ name: "run" })) missing.add("--allow-run");
    if (!_granted({ name: "env" })) missing.add("--allow-env");
    if (!_granted({ name: "write", path: cmd.out })) missing.add("--allow-write");
    for (const flag of missingNativePermissions().missing) missing.add(flag);
  }
  const child = cmd.command !== "run" || cmd.target.kind === "library";
  if (child && runtime.runIsolated !== undefined) {
    // The queries and library runs are child processes, which get only the permissions this
    // process holds: it needs what they need.
    if (!_granted({ name: "run", command: Deno.execPath() })) missing.add("--allow-run");
    for (const flag of missingNativePermissions().missing) missing.add(flag);
  }
  if (cmd.command === "run" && cmd.target.kind === "module") {
    for (const flag of missingNativePermissions().missing) missing.add(flag);
  }
  if (cmd.command === "run" && cmd.outs.some((out) => !_granted({ name: "write", path: out }))) {
    missing.add("--allow-write");
  }
  _missingFlagsExit(
    missing,
    (flags) =>
      `'${cmd.command}' needs ${flags}: run again with ${flags} ('deno task cli' grants ` +
      `every permission the command line uses)`,
  );
}

/**
 * Runs the command line with the given arguments (without the program
 * name) and returns the exit code; never throws. Messages go to `io.stderr`
 * as `error: …`.
 *
 * @example
 * ```ts
 * import { ExitCode } from "./args.ts";
 * import { main } from "./main.ts";
 * const errors: string[] = [];
 * const code = await main(["run", "lib.so", "h", "--repaet", "3"], {
 *   stdout: () => {},
 *   stderr: (t) => errors.push(t),
 * });
 * console.log(code === ExitCode.USAGE, errors[0]); // true "error: unknown option --repaet … (did you mean --repeat?) …"
 * ```
 */
export async function main(argv: readonly string[], io?: CliIo): Promise<number> {
  const child = _runChild();
  const out: CliIo = io ?? {
    stdout: _writer(Deno.stdout),
    stderr: _writer(Deno.stderr),
    // In an isolated run, the parent relays stderr to its terminal.
    progress: child?.terminal
      ? { sink: { writeSync: (p) => Deno.stderr.writeSync(p), isTerminal: () => true } }
      : undefined,
  };
  const runtime = out.runtime ?? embeddedRuntime();
  try {
    const py = await _phase(ExitCode.USAGE, () => _pythonModuleArgs(argv));
    if (py?.command === "inspect") return await _inspectPythonModule(py, out);
    if (py?.command === "run") return await _runPythonModule(py, argv, out, runtime, child);
    if (py?.command === "fuzz") return await _fuzzPythonModule(py, out);
    const cmd = await _phase(ExitCode.USAGE, () => parseCommandLine(argv));
    if (cmd.command !== "help") _checkPermissions(cmd, runtime);
    switch (cmd.command) {
      case "help":
        out.stdout(usage(cmd.topic));
        return ExitCode.OK;
      case "inspect":
        return await _inspect(cmd, out, runtime);
      case "fuzz": {
        const found = await _phase(ExitCode.LIBRARY, () => _fuzz(cmd, out));
        return found ? ExitCode.FUZZ_FAILURES : ExitCode.OK;
      }
      case "run":
        if (cmd.target.kind === "library" && runtime.runIsolated && !child) {
          // A crash of the handler ends a child process, and is reported here.
          await _phase(ExitCode.LIBRARY, () => _checkTarget(cmd, runtime));
          await _phase(ExitCode.FILE, () => _checkFiles(cmd));
          await _stateNote(cmd, out, runtime);
          const sink = out.progress?.sink ?? Deno.stderr;
          const runIsolated = runtime.runIsolated.bind(runtime);
          return await _phase(ExitCode.LIBRARY, () =>
            runIsolated(argv, cmd, {
              stdout: out.stdout,
              stderr: out.stderr,
              progressTerminal: sink.isTerminal(),
            }));
        }
        try {
          return await _run(cmd, out, runtime);
        } finally {
          if (child) _runChildMark("done");
        }
    }
  } catch (e) {
    if (e instanceof _Exit) {
      out.stderr(`error: ${e.error.message}\n`);
      _diagnosticsApart(e.error.message, out);
      if (e.error.hint !== undefined) out.stderr(`hint: ${e.error.hint}\n`);
      return e.code;
    }
    const error = toFfiError(e);
    out.stderr(`internal error: ${error.message}\n`);
    if (error.hint !== undefined) out.stderr(`hint: ${error.hint}\n`);
    return ExitCode.INTERNAL;
  }
}
