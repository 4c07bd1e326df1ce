/**
 * Runs a Deno script in a child process with the test suite's permissions and
 * returns its exit code and decoded output. Tests use a child where a process
 * of its own matters: the handler host belongs to one JS thread per process,
 * a deadlock must fail at a timeout instead of hanging the suite, or the
 * process's exit code is what is checked.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The permissions a child test script runs with (those of `deno task test`). */
export const CHILD_PERMISSIONS: readonly string[] = [
  "--allow-ffi",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
];

/** Options of {@link runDeno}. */
export interface ChildOptions {
  /** Environment variables added to this process's. */
  env?: Record<string, string>;
  /** Kill the child after this many milliseconds. */
  timeoutMs?: number;
  /** Text written to the child's stdin (then closed); none when absent. */
  stdin?: string;
}

/** Exit code and decoded output of a child. */
export interface ChildResult {
  code: number;
  /** The signal that ended the child, or null when it exited (set by {@link runDeno}). */
  signal?: Deno.Signal | null;
  stdout: string;
  stderr: string;
}

/**
 * `deno run <CHILD_PERMISSIONS> script ...args`, waited for.
 *
 * @example
 * ```ts ignore
 * const r = await runDeno(new URL("./_ts_stress.ts", import.meta.url), ["100"]);
 * ```
 */
export async function runDeno(
  script: URL,
  args: readonly string[] = [],
  options: ChildOptions = {},
): Promise<ChildResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...CHILD_PERMISSIONS, fileURLToPath(script), ...args],
    env: options.env,
    stdin: options.stdin === undefined ? "inherit" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const r = await child.output();
  const text = new TextDecoder();
  return {
    code: r.code,
    signal: r.signal,
    stdout: text.decode(r.stdout),
    stderr: text.decode(r.stderr),
  };
}

/**
 * A child's outcome as an assertion message: exit code, stdout and stderr,
 * then, when stderr holds an AddressSanitizer or UBSan report, the report's
 * first lines again at the end. A CI log keeps only the tail of a failure,
 * and a report's head (the error, the faulting stack) is what explains it.
 */
export function childContext(what: string, r: ChildResult): string {
  const text = `${what} (exit code ${r.code})\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
  const lines = r.stderr.split("\n");
  const at = lines.findIndex((l) => /ERROR: AddressSanitizer|runtime error:/.test(l));
  if (at < 0) return text;
  return `${text}\n--- head of the sanitizer report (repeated) ---\n${
    lines.slice(at, at + 60).join("\n")
  }`;
}
