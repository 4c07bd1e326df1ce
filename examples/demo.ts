/**
 * `deno task demo`: the main examples, end to end, each in its own process
 * (as a user would run it): a TS handler and C handlers in the embedded
 * runtime, an async handler, a stateful handler, attributes of every kind,
 * the command line on the C library, (optional) a TS handler launching a
 * kernel on a CUDA runtime's stream, which reports `skipped: <reason>`
 * without a driver, and (when jax is importable) real XLA calling TS and C
 * handlers; without jax the demo prints one line saying how to install it.
 * Last, it names examples/real_xla_multiprocess.ts (a job of several
 * processes, started on its own).
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/demo.ts
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The examples the demo runs, in order (the TS-handler example first when present). */
export const DEMO_EXAMPLES: readonly string[] = [
  "saxpy.ts",
  "c_handlers.ts",
  "async_handler.ts",
  "stateful_handler.ts",
  "attributes.ts",
  "cli_demo.ts",
  "cuda_saxpy.ts",
  "real_xla.ts",
  "real_xla_state.ts",
];

/** Examples that need hardware: they print `skipped: <reason>` and exit 0 without it. */
export const OPTIONAL_EXAMPLES: ReadonlySet<string> = new Set(["cuda_saxpy.ts"]);

/** Examples that host Python with jax (`@deno-xla/ffi/xla`): run only when jax is importable. */
export const JAX_EXAMPLES: ReadonlySet<string> = new Set(["real_xla.ts", "real_xla_state.ts"]);

/** Why jax cannot be used here (`undefined` when it can), in one line. */
async function jaxMissing(): Promise<string | undefined> {
  const { findPython, probePython } = await import("../src/xla/mod.ts");
  const python = findPython();
  try {
    const info = await probePython(python);
    return info.jax === null ? `jax is not installed for ${info.executable}` : undefined;
  } catch (e) {
    return (e as Error).message.split("\n")[0];
  }
}

const PERMISSIONS = [
  "--allow-ffi",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
];

if (import.meta.main) {
  let failed = 0;
  for (const name of DEMO_EXAMPLES) {
    const url = new URL(`./${name}`, import.meta.url);
    try {
      Deno.statSync(url);
    } catch {
      continue; // an example not in this checkout
    }
    if (JAX_EXAMPLES.has(name)) {
      const missing = await jaxMissing();
      if (missing !== undefined) {
        console.log(
          `\n== examples/${name} skipped: ${missing}; install jax as docs/real-xla.md says ` +
            `(python3 -m venv <dir> && <dir>/bin/pip install jax==0.10.2 jaxlib==0.10.2), then ` +
            `set XLA_FFI_DENO_PYTHON=<dir>/bin/python ==`,
        );
        continue;
      }
    }
    const note = OPTIONAL_EXAMPLES.has(name) ? " (optional: needs a CUDA driver and device)" : "";
    console.log(`\n== examples/${name}${note} ==`);
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, fileURLToPath(url)],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (code !== 0) {
      console.log(`examples/${name} exited with code ${code}`);
      failed++;
    }
  }
  console.log(
    "\nMore: one jax program over several Deno processes (docs/distributed.md): deno run " +
      `${PERMISSIONS.join(" ")} --allow-net=127.0.0.1 examples/real_xla_multiprocess.ts`,
  );
  if (failed > 0) Deno.exit(1);
}
