/**
 * Whether the real-XLA tests can run here, and running one of their cases
 * (`tests/_xla_cases.ts`) in a child process. They need `XLA_FFI_DENO_PYTHON`
 * naming a Python with jax (docs/real-xla.md); without it they are
 * declared ignored with the reason in their names.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { childContext, runDeno } from "./_child.ts";

function reason(): string | undefined {
  const python = Deno.env.get("XLA_FFI_DENO_PYTHON");
  if (python === undefined || python === "") {
    return "XLA_FFI_DENO_PYTHON is not set (a Python with jax, see docs/real-xla.md)";
  }
  try {
    const r = new Deno.Command(python, {
      args: ["-c", "import jax"],
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (!r.success) {
      const err = new TextDecoder().decode(r.stderr).trim().split("\n").pop();
      return `jax is not importable from XLA_FFI_DENO_PYTHON=${python} (${err})`;
    }
  } catch (e) {
    return `cannot run XLA_FFI_DENO_PYTHON=${python} (${(e as Error).message})`;
  }
  return undefined;
}

/** Why the real-XLA tests are ignored here, or undefined when they run. */
export const XLA_SKIP: string | undefined = reason();

/** A test name with the reason it is ignored, when it is. */
export function xlaName(name: string): string {
  return XLA_SKIP === undefined ? name : `${name} (ignored: ${XLA_SKIP})`;
}

/**
 * Whether this run is the sanitized pass (tests/sanitize.sh), which leaves
 * the docs' recipes and the example scripts to the plain suite: the C code
 * they run is run there by the tests written for it.
 */
export const SANITIZED_PASS: boolean = Deno.env.get("XLA_FFI_DENO_SANITIZE") !== undefined;

/**
 * A docs recipe's or an example script's test under real XLA: its name with
 * the reason it is ignored (no jax, or the sanitized pass), and whether it is.
 */
export function xlaRecipe(name: string): { name: string; ignore: boolean } {
  if (XLA_SKIP !== undefined) return { name: xlaName(name), ignore: true };
  if (SANITIZED_PASS) {
    return {
      name: `${name} (ignored under the sanitizers: a recipe of the docs or an example, run by ` +
        `the plain suite)`,
      ignore: true,
    };
  }
  return { name, ignore: false };
}

/** Options of {@link runXlaCase}. */
export interface XlaCaseOptions {
  /** Kill the child after this many milliseconds (default 180 s). */
  timeoutMs?: number;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Whether Python may print a traceback on stderr (default: it must not). */
  tracebacks?: boolean;
  /** The cases' script (default `tests/_xla_cases.ts`). */
  script?: URL;
}

/**
 * Runs `tests/_xla_cases.ts <name>` (or `options.script`) in a child and asserts it ended well:
 * exit code 0, `ok <name>` last on stdout, no Python traceback on stderr.
 * Returns the child's stdout.
 */
export async function runXlaCase(name: string, options: XlaCaseOptions = {}): Promise<string> {
  const r = await runDeno(options.script ?? new URL("./_xla_cases.ts", import.meta.url), [name], {
    timeoutMs: options.timeoutMs ?? 180_000,
    env: options.env,
  });
  const context = childContext(`case ${name}`, r);
  assert.equal(r.code, 0, context);
  assert.match(r.stdout, new RegExp(`ok ${name}\\n$`), context);
  if (!options.tracebacks) assert.doesNotMatch(r.stderr, /Traceback/, context);
  return r.stdout;
}

/** Runs a Deno script (an example) in a child with the suite's permissions; asserts exit 0. */
export async function runXlaScript(script: URL, timeoutMs = 180_000): Promise<string> {
  const r = await runDeno(script, [], { timeoutMs });
  const context = childContext(fileURLToPath(script), r);
  assert.equal(r.code, 0, context);
  assert.doesNotMatch(r.stderr, /Traceback/, context);
  return r.stdout;
}

/**
 * The main of a case file run as `deno run … <file> <case>`: runs the case
 * named by the first argument and prints `ok <case>` last; an unknown name
 * exits with 2, listing the cases.
 */
export async function runCaseFromArgs(cases: Record<string, () => Promise<void>>): Promise<void> {
  const name = Deno.args[0] ?? "";
  const run = cases[name];
  if (run === undefined) {
    console.error(`unknown case '${name}'; cases: ${Object.keys(cases).join(", ")}`);
    Deno.exit(2);
  }
  await run();
  console.log(`ok ${name}`);
}
