/**
 * Runs the command line's `main()` in this process for each argv given as
 * JSON on stdin, then prints `{ runs: [{ code, out, err }], stats }` (the
 * handler host's statistics after the runs, which show any TS handler or
 * state a run left open) as JSON and returns without `Deno.exit`.
 *
 * TS handler tests run here, in a child, because the handler host belongs to
 * one JS thread per process, and `deno test` may run later test files on
 * another thread.
 *
 * @module
 */
import { embeddedRuntime } from "../src/cli/embedded.ts";
import { handlerHostStats } from "../src/handler/host.ts";
import { captureCli } from "./_cli_capture.ts";

const runs: string[][] = JSON.parse(await new Response(Deno.stdin.readable).text());
const results = [];
for (const argv of runs) {
  results.push(
    await captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 1500 } }) }),
  );
}
const { liveHandlers, liveStates } = handlerHostStats();
console.log(JSON.stringify({ runs: results, stats: { liveHandlers, liveStates } }));
