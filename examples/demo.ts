/**
 * `deno task demo`: the main examples, end to end, each in its own process
 * (as a user would run it): a TS handler and C handlers in the embedded
 * runtime, an async handler, a stateful handler, attributes of every kind,
 * the command line on the C library, and (optional) a TS handler launching a
 * kernel on a CUDA runtime's stream, which reports `skipped: <reason>`
 * without a driver.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/demo.ts
 *
 * @module
 */

/** The examples the demo runs, in order (the TS-handler example first when present). */
export const DEMO_EXAMPLES: readonly string[] = [
  "saxpy.ts",
  "c_handlers.ts",
  "async_handler.ts",
  "stateful_handler.ts",
  "attributes.ts",
  "cli_demo.ts",
  "cuda_saxpy.ts",
];

/** Examples that need hardware: they print `skipped: <reason>` and exit 0 without it. */
export const OPTIONAL_EXAMPLES: ReadonlySet<string> = new Set(["cuda_saxpy.ts"]);

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
    const note = OPTIONAL_EXAMPLES.has(name) ? " (optional: needs a CUDA driver and device)" : "";
    console.log(`\n== examples/${name}${note} ==`);
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, url.pathname],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (code !== 0) {
      console.log(`examples/${name} exited with code ${code}`);
      failed++;
    }
  }
  if (failed > 0) Deno.exit(1);
}
