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
  discoverSignature,
  formatFuzzReport,
  formatSignature,
  fuzzHandler,
  type FuzzReport,
} from "../testing/fuzz_handler.ts";
import { DataType } from "../abi/enums.ts";
import type { ParsedFuzz, ParsedInspect } from "./args.ts";
import { _localLibrary } from "./probe.ts";

/** Where these commands write. */
export interface _FuzzIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** `inspect --signature lib.so NAME`: the discovered signature. */
export async function _inspectSignature(cmd: ParsedInspect, io: _FuzzIo): Promise<void> {
  const library = _localLibrary(cmd.path);
  const handler = cmd.signature!;
  const sig = await discoverSignature({ library, handler }, {
    args: cmd.args ?? [],
    attrs: cmd.attrs ?? [],
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
}

/** `fuzz lib.so NAME …`: the report; resolves to whether a failure was found. */
export async function _fuzz(cmd: ParsedFuzz, io: _FuzzIo): Promise<boolean> {
  const library = _localLibrary(cmd.path);
  let report: FuzzReport;
  try {
    report = await fuzzHandler({ library, handler: cmd.handler }, {
      runs: cmd.runs,
      ...(cmd.seconds !== undefined ? { seconds: cmd.seconds } : {}),
      seed: cmd.seed,
      timeoutMs: cmd.timeoutMs,
      ...(cmd.sanitize ? { sanitize: cmd.sanitize } : {}),
      ...(cmd.rets.length > 0 ? { results: cmd.rets } : {}),
      args: cmd.args,
      attrs: cmd.attrs,
      ...(cmd.values.length > 0 ? { argValues: cmd.values } : {}),
      outDir: cmd.out,
    });
  } catch (e) {
    if (e instanceof FfiError) throw e;
    throw new FfiError(ErrorCode.INTERNAL, `fuzz: ${(e as Error).message}`, { cause: e });
  }
  if (cmd.json) {
    io.stdout(
      JSON.stringify({
        library: cmd.path,
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
        failures: report.failures.map((f) => ({
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
    io.stdout(formatFuzzReport(report));
  }
  return report.failures.length > 0;
}
