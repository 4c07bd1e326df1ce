/**
 * The command line's exit codes: the {@link ExitCode} enum and the table the
 * help text prints (kept side by side so that they agree).
 *
 * @module
 */

/**
 * Exit codes of the command line.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | the handler returned an error (or its CUDA work failed) |
 * | 2 | usage error: unknown or malformed option, spec, value or shape, or a permission flag missing |
 * | 3 | file error: a `.npy` input cannot be read, or an output cannot be written |
 * | 4 | library or module error: not loadable, not ELF, handler missing, not a handler, wrong API version, `--instantiate` failed |
 * | 5 | not available: a feature or platform this machine lacks (`--platform cuda` without a CUDA driver) |
 * | 6 | the handler crashed: a fatal signal (SIGSEGV, SIGBUS, …) or an exit ended the process running it |
 * | 7 | a result does not match its `--expect` reference within `--rtol`/`--atol` |
 * | 8 | the handler did not return within `run --timeout` |
 * | 9 | `fuzz` found at least one failure |
 * | 70 | internal error (a bug: please report it) |
 *
 * @example
 * ```ts
 * import { ExitCode } from "../args.ts";
 * console.log(ExitCode.USAGE); // 2
 * ```
 */
export enum ExitCode {
  OK = 0,
  HANDLER_ERROR = 1,
  USAGE = 2,
  FILE = 3,
  LIBRARY = 4,
  UNAVAILABLE = 5,
  CRASHED = 6,
  MISMATCH = 7,
  TIMEOUT = 8,
  FUZZ_FAILURES = 9,
  INTERNAL = 70,
}

/** The exit code table every help text ends with (see {@link ExitCode}). */
export const EXIT_CODES_TEXT = `Exit codes:
  0   success
  1   the handler returned an error (or its CUDA work failed)
  2   usage error (bad option, spec, value or shape, or a permission flag
      missing)
  3   file error (.npy input or output)
  4   library or module error (not loadable, not ELF, handler missing, not a
      handler, wrong API version, --instantiate failed)
  5   not available (a feature or platform this machine lacks, e.g.
      --platform cuda without a CUDA driver)
  6   the handler crashed: a fatal signal (SIGSEGV, SIGBUS, ...) or an exit
      ended the process running it (shared-library handlers run in a child
      process, so the command line reports it)
  7   a result does not match its --expect reference (--rtol, --atol)
  8   the handler did not return within run --timeout
  9   fuzz found at least one failure
  70  internal error (a bug: please report it)`;
