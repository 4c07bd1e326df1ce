/**
 * The handler fuzzer: finds the signature of a handler by calling it with
 * probing frames and reading its decode diagnostics, then calls it with
 * generated frames of that signature (shapes at their edges, values at their
 * edges, attributes at their edges), in the isolated, guarded process of its
 * library, and reports each distinct failure (a crash, a write outside a
 * result or into an argument, a hang, a result that differs between two
 * calls with the same input, an error code outside XLA's range, a mismatch
 * with a reference), shrunk, with `.npy` inputs and the `cli run` line that
 * reproduces it. `cli fuzz` and `cli inspect --signature` are built on it.
 * See docs/fuzzing.md.
 *
 * Its parts live in src/testing/fuzz/, one concern a file: the public
 * shapes (types.ts), what calls the handler (caller.ts), the user's hints
 * (hints.ts), signature discovery (signature.ts), generating calls
 * (generate.ts), running and judging one (judge.ts), shrinking (shrink.ts)
 * and reporting (report.ts). This file runs them ({@link fuzzHandler}) and
 * re-exports what `@deno-xla/ffi/testing` and the command line use.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import type { FuzzFailure, FuzzOptions, FuzzReport, FuzzTarget } from "./fuzz/types.ts";
import { _Caller } from "./fuzz/caller.ts";
import { _hintAttrs } from "./fuzz/hints.ts";
import { _defaultRules, _generate, _parseRule, type _Plan, _Rng } from "./fuzz/generate.ts";
import { _isValid, _key, _runCase, type _Runner } from "./fuzz/judge.ts";
import { _shrink } from "./fuzz/shrink.ts";
import { _writeFailures } from "./fuzz/report.ts";
import { _discover } from "./fuzz/signature.ts";

export type {
  ArgValues,
  AttrSignature,
  BufferSignature,
  FuzzCase,
  FuzzFailure,
  FuzzFailureKind,
  FuzzOptions,
  FuzzReport,
  FuzzTarget,
  HandlerSignature,
  ReferenceArray,
  ReferenceAttrs,
  ResultRule,
} from "./fuzz/types.ts";
export { _ffiAttrs } from "./fuzz/caller.ts";
export { discoverSignature, formatSignature } from "./fuzz/signature.ts";
export { _parseRule } from "./fuzz/generate.ts";
export { _runCommand, _shellWord, formatFuzzReport } from "./fuzz/report.ts";

// ------------------------------------------------------------------ the fuzzer

/**
 * Fuzzes a handler: discovers its signature ({@link discoverSignature}),
 * then makes up to `runs` calls (or `seconds` of them) with generated
 * arguments and attributes, seeded and reproducible, in the isolated,
 * guarded process of its library, or of its Python module (a
 * `{ module, handler }` target, or a `handlersFrom` handler with
 * `isolate: true`; a TS handler object runs in this process). Each
 * distinct failure ({@link FuzzFailureKind} and what it names) is shrunk
 * and reported once; with `outDir`, its arguments are written as `.npy`
 * files, and for a library or a module `command` is the `cli run` line
 * that reproduces it. Throws FfiError for bad options or a library or
 * module that cannot be opened; failures of the handler are never thrown.
 *
 * @example
 * ```ts
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * import { fuzzHandler } from "@deno-xla/ffi/testing";
 * // Writes its argument when a value is negative: a failure the fuzzer finds.
 * using relu = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
 *   const xs = x.typed(), ys = y.typed();
 *   for (let i = 0; i < xs.length; i++) ys[i] = Math.max(0, xs[i]!);
 * });
 * const report = await fuzzHandler(relu, { runs: 50, seed: 1, results: ["like:0"] });
 * console.log(report.failures.length); // 0
 * ```
 */
export async function fuzzHandler(
  target: FuzzTarget,
  options: FuzzOptions = {},
): Promise<FuzzReport> {
  const runs = options.runs ?? 1000;
  if (!Number.isInteger(runs) || runs < 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: runs must be a whole number, got ${runs}`,
    );
  }
  if (options.seconds !== undefined && !(options.seconds > 0)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: seconds must be more than 0, got ${options.seconds}`,
    );
  }
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: seed must be an integer, got ${seed}`,
    );
  }
  const rules = (options.results ?? []).map((r, i) => _parseRule(r, `result rule ${i}`));
  const hints = _hintAttrs(options.attrs);
  const caller = await _Caller.open(target, options);
  try {
    const sig = await _discover(caller, options);
    const resultsChecked = options.results !== undefined;
    if (resultsChecked && rules.length !== sig.results.length && !sig.variadicResults) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `fuzzHandler: ${rules.length} result rules for a handler with ${sig.results.length} ` +
          `results`,
      );
    }
    const plan: _Plan = {
      sig,
      args: sig.args,
      rules: resultsChecked ? rules : _defaultRules(sig),
      hints,
      argValues: options.argValues ?? [],
    };
    const runner: _Runner = { caller, options, resultsChecked, calls: 0 };
    const rng = new _Rng(seed);
    const found = new Map<string, FuzzFailure>();
    const failures: FuzzFailure[] = [];
    let done = 0, rejected = 0, skipped = 0;
    const start = performance.now();
    const deadline = options.seconds !== undefined ? start + options.seconds * 1000 : Infinity;
    let runTime = 0;
    while (done < runs && performance.now() < deadline) {
      const c = _generate(rng, plan);
      const t0 = performance.now();
      done++;
      if (c === undefined) continue;
      if (!_isValid(options, c)) {
        skipped++;
        continue;
      }
      const v = await _runCase(runner, c);
      runTime += performance.now() - t0;
      if (v === "rejected") rejected++;
      else if (v !== null) {
        const key = _key(v);
        const seen = found.get(key);
        if (seen) seen.count++;
        else {
          const s = await _shrink(runner, plan, c, key);
          const f: FuzzFailure = {
            kind: v.kind,
            detail: v.detail,
            message: s.message || v.message,
            case: s.case,
            original: c,
            run: done - 1,
            count: 1,
            shrinkSteps: s.steps,
          };
          const expected = s.verdict.expected ?? v.expected;
          if (v.kind === "mismatch" && expected !== undefined) f.expected = [...expected];
          found.set(key, f);
          failures.push(f);
        }
      }
      options.onProgress?.(done, failures.length);
    }
    if (options.outDir !== undefined) _writeFailures(failures, options, caller);
    const seconds = runTime / 1000;
    const output = caller.isolated && (options.handlerOutput ?? "keep") === "keep"
      ? caller.output()
      : undefined;
    return {
      ...(output !== undefined ? { output } : {}),
      signature: sig,
      runs: done,
      rejected,
      ...(skipped > 0 ? { skipped } : {}),
      seconds,
      runsPerSecond: seconds > 0 ? done / seconds : 0,
      resultsChecked,
      failures,
      seed,
    };
  } finally {
    caller.close();
  }
}
