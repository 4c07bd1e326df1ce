/**
 * Runs the command line's `main()` in this process with its output captured
 * (and the progress line discarded), for the CLI tests.
 *
 * @module
 */
import { type CliIo, main } from "../src/cli/main.ts";

/** Exit code and captured output of one `main()` run. */
export interface CliCapture {
  code: number;
  out: string;
  err: string;
}

/**
 * `main(argv)` with stdout and stderr collected; `io` adds or replaces the
 * runtime, the progress sink or the output functions.
 *
 * @example
 * ```ts ignore
 * const r = await captureCli(["--help"], { runtime: embeddedRuntime() });
 * ```
 */
export async function captureCli(argv: string[], io: Partial<CliIo> = {}): Promise<CliCapture> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    progress: { sink: { writeSync: (p) => p.length, isTerminal: () => false } },
    ...io,
  });
  return { code, out: out.join(""), err: err.join("") };
}
