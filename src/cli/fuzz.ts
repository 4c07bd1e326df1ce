/**
 * The command line's `fuzz` and `inspect --signature`: the handler fuzzer of
 * `@deno-xla/ffi/testing` ({@link fuzzHandler}, {@link discoverSignature})
 * on a shared library's handler, which runs in a child process.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import {
  _shellWord,
  discoverSignature,
  formatFuzzReport,
  formatSignature,
  fuzzHandler,
  type FuzzReport,
} from "../testing/fuzz_handler.ts";
import { DataType } from "../abi/enums.ts";
import type { ParsedFuzz, ParsedInspect } from "./args.ts";
import { _localLibrary } from "./probe.ts";
import { readElfSymbols } from "../native/elf.ts";
import { typeIdSymbols } from "./state_types.ts";

/** Where these commands write. */
export interface _FuzzIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * The state types to register for a stateful handler: the `--type` ones, or
 * with `--instantiate` alone every type id function the library exports.
 */
function _stateOptions(
  library: string,
  instantiate: string | undefined,
  types: readonly { symbol: string }[] | undefined,
): { instantiate?: string; stateTypes?: string[] } {
  const out: { instantiate?: string; stateTypes?: string[] } = {};
  if (instantiate !== undefined) out.instantiate = instantiate;
  if (types !== undefined && types.length > 0) out.stateTypes = types.map((t) => t.symbol);
  else if (instantiate !== undefined) {
    const names = readElfSymbols(library).symbols.map((s) => s.name);
    out.stateTypes = typeIdSymbols(names);
  }
  return out;
}

/**
 * A hint for a library that exports state type ids (a handler taking
 * ffi.h's `Ctx<State<T>>` aborts without its state), or undefined.
 */
function _statefulHint(library: string): string | undefined {
  let ids: string[];
  try {
    ids = typeIdSymbols(readElfSymbols(library).symbols.map((s) => s.name));
  } catch {
    return undefined;
  }
  if (ids.length === 0) return undefined;
  return `${library} exports state type ids (${ids.slice(0, 3).join(", ")}${
    ids.length > 3 ? ", …" : ""
  }): a handler that takes a state (ffi.h's Ctx<State<T>>) aborts without one; ` +
    `--instantiate H runs its instantiate handler H before each call`;
}

/** `inspect --signature lib.so NAME`: the discovered signature. */
export async function _inspectSignature(cmd: ParsedInspect, io: _FuzzIo): Promise<void> {
  const library = _localLibrary(cmd.path);
  const handler = cmd.signature!;
  const sig = await discoverSignature({ library, handler }, {
    args: cmd.args ?? [],
    attrs: cmd.attrs ?? [],
    ..._stateOptions(library, cmd.instantiate, cmd.types),
  });
  if (cmd.json) {
    const buf = (b: { dtype?: DataType; rank?: number }) => ({
      dtype: b.dtype === undefined ? null : DataType[b.dtype],
      rank: b.rank ?? null,
    });
    io.stdout(
      JSON.stringify({
        library: cmd.path,
        handler,
        args: sig.args.map(buf),
        results: sig.results.map(buf),
        attrs: sig.attrs.map((a) => ({
          name: a.name,
          kind: a.kind ?? null,
          dtype: a.dtype === undefined ? null : DataType[a.dtype],
        })),
        variadicArgs: sig.variadicArgs,
        variadicResults: sig.variadicResults,
        decodes: sig.decodes,
        unknown: sig.unknown,
        probes: sig.probes,
      }) + "\n",
    );
    return;
  }
  io.stdout(formatSignature(sig, { library, handler }));
  if (cmd.instantiate === undefined) {
    const hint = _statefulHint(library);
    if (hint !== undefined) io.stderr(`note: ${hint}\n`);
  }
}

/** The exit code of `cli run` that reproduces each kind of failure (nondeterminism: none). */
const EXPECTED_EXIT: Partial<Record<string, number>> = {
  "crash": 6,
  "hang": 8,
  "mismatch": 7,
  "result-write": 1,
  "argument-write": 1,
  "bad-error-code": 1,
};

/** What a printed line came to when run on its own. */
interface _Replay {
  exitCode: number;
  expected: number;
  /** The head of its error line, when it exited otherwise. */
  said?: string;
}

/**
 * Runs each failure's `cli run` line in a process of its own (a line that
 * reproduces its failure exits with that kind's code) and says when it
 * does not: a crash found in the fuzzing process that comes out as a
 * guard's DATA_LOSS alone, a write that needs the calls before it.
 */
async function _replay(report: FuzzReport): Promise<Map<number, _Replay>> {
  const out = new Map<number, _Replay>();
  const cli = new URL("../../cli.ts", import.meta.url).href;
  for (const [i, f] of report.failures.entries()) {
    const expected = EXPECTED_EXIT[f.kind];
    if (f.command === undefined || expected === undefined || i >= 10) continue;
    let r: Deno.CommandOutput;
    try {
      r = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--no-check", cli, ...f.command],
        stdout: "null",
        stderr: "piped",
        stdin: "null",
      }).output();
    } catch {
      continue; // no permission to run it: nothing said
    }
    const said = new TextDecoder().decode(r.stderr).split("\n").find((l) => l.startsWith("error:"));
    out.set(i, {
      exitCode: r.code,
      expected,
      ...(r.code !== expected && said ? { said: said.slice(0, 200) } : {}),
    });
  }
  return out;
}

/** A Python module's handler to fuzz (`fuzz --python-module M`): the module and its options. */
export interface _FuzzModule {
  name: string;
  initialize?: string;
  platform?: string;
}

/**
 * `fuzz lib.so NAME …` (or `fuzz --python-module M NAME …`, `module`): the
 * report; resolves to whether a failure was found.
 */
export async function _fuzz(cmd: ParsedFuzz, io: _FuzzIo, module?: _FuzzModule): Promise<boolean> {
  if (module !== undefined && (cmd.instantiate !== undefined || (cmd.types ?? []).length > 0)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      "fuzz --python-module: --instantiate and --type are for a shared library's handlers",
    );
  }
  const library = module === undefined ? _localLibrary(cmd.path) : "";
  const target = module === undefined ? { library, handler: cmd.handler } : {
    module: module.name,
    handler: cmd.handler,
    ...(module.initialize !== undefined ? { initialize: module.initialize } : {}),
    ...(module.platform !== undefined ? { platform: module.platform } : {}),
  };
  let report: FuzzReport;
  try {
    report = await fuzzHandler(target, {
      runs: cmd.runs,
      ...(cmd.seconds !== undefined ? { seconds: cmd.seconds } : {}),
      seed: cmd.seed,
      timeoutMs: cmd.timeoutMs,
      ...(cmd.sanitize ? { sanitize: cmd.sanitize } : {}),
      ...(cmd.rets.length > 0 ? { results: cmd.rets } : {}),
      args: cmd.args,
      attrs: cmd.attrs,
      ...(cmd.values.length > 0 ? { argValues: cmd.values } : {}),
      ...(module === undefined ? _stateOptions(library, cmd.instantiate, cmd.types) : {}),
      outDir: cmd.out,
    });
  } catch (e) {
    if (e instanceof FfiError) throw e;
    throw new FfiError(ErrorCode.INTERNAL, `fuzz: ${(e as Error).message}`, { cause: e });
  }
  const replays = await _replay(report);
  if (cmd.json) {
    io.stdout(
      JSON.stringify({
        ...(module === undefined ? { library: cmd.path } : { module: module.name }),
        handler: cmd.handler,
        seed: report.seed,
        runs: report.runs,
        rejected: report.rejected,
        skipped: report.skipped ?? 0,
        seconds: report.seconds,
        runsPerSecond: report.runsPerSecond,
        resultsChecked: report.resultsChecked,
        unknown: report.signature.unknown,
        output: report.output ?? null,
        failures: report.failures.map((f, i) => ({
          replay: replays.get(i) ?? null,
          kind: f.kind,
          detail: f.detail,
          message: f.message,
          count: f.count,
          run: f.run,
          shrinkSteps: f.shrinkSteps,
          files: f.files ?? [],
          command: f.command ?? null,
        })),
      }) + "\n",
    );
  } else {
    if (!report.signature.decodes) {
      io.stderr(
        `warning: no probing frame decoded; ${report.signature.unknown.at(-1) ?? ""}\n`,
      );
    }
    const abort = report.failures.find((f) => f.kind === "crash" && f.detail === "SIGABRT");
    if (
      module === undefined && cmd.instantiate === undefined && abort !== undefined &&
      abort.count >= report.runs / 2
    ) {
      const hint = _statefulHint(library);
      if (hint !== undefined) io.stderr(`warning: most runs aborted; ${hint}\n`);
    }
    let text = formatFuzzReport(report);
    for (const [i, r] of replays) {
      if (r.exitCode === r.expected) continue;
      const f = report.failures[i]!;
      const line = `   ${["cli", ...f.command!].map(_shellWord).join(" ")}\n`;
      const note = `   (run alone, this line exits with ${r.exitCode}, not ${r.expected}: the ` +
        `${f.kind} does not reproduce as such${r.said ? `; ${r.said}` : ""})\n`;
      text = text.replace(line, line + note);
    }
    io.stdout(text);
    if (
      module !== undefined && module.initialize === undefined &&
      report.failures.some((f) => f.kind === "crash")
    ) {
      io.stderr(
        `hint: some modules' handlers crash until the module is initialized: jaxlib.cpu._lapack ` +
          `needs --initialize initialize\n`,
      );
    }
  }
  return report.failures.length > 0;
}
