/**
 * Runs the command line's `main()` in this process for each argv given as
 * JSON on stdin, then prints `{ runs: [{ code, out, err }], stats }` (the
 * handler host's statistics after the runs) as JSON and returns without
 * `Deno.exit`: the process only ends when no TS handler was left open.
 *
 * TS handler tests run here, in a child, because the handler host belongs to
 * one JS thread per process, and `deno test` may run later test files on
 * another thread.
 *
 * @module
 */
import { embeddedRuntime, main } from "../cli.ts";
import { handlerHostStats } from "../src/handler/host.ts";

const runs: string[][] = JSON.parse(await new Response(Deno.stdin.readable).text());
const results = [];
for (const argv of runs) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    progress: { sink: { writeSync: (p) => p.length, isTerminal: () => false } },
    runtime: embeddedRuntime({ probe: { timeoutMs: 1500 } }),
  });
  results.push({ code, out: out.join(""), err: err.join("") });
}
const { liveHandlers, liveStates } = handlerHostStats();
console.log(JSON.stringify({ runs: results, stats: { liveHandlers, liveStates } }));
