/**
 * Deno.bench suite of the TS handler path (`deno task bench`). The script
 * bench/handler_speed.ts prints the P1/P2/P5 medians with their ratios to raw
 * Deno callbacks.
 *
 * @module
 */
import { harness } from "../tests/_handler_harness.ts";
import { rawCallback, standardFrame, standardHandler } from "./_handler_fixture.ts";

const f = standardFrame();
const h = harness();
const handler = standardHandler();
const raw = rawCallback();
addEventListener("unload", () => {
  handler.close();
  raw.close();
  f.close();
});

Deno.bench("P1 TS handler, standard frame, same thread (1000 calls)", { baseline: false }, () => {
  h.hh_loop(handler.pointer, f.pointer, 1000);
});
Deno.bench("raw UnsafeCallback, same C loop (1000 calls)", { baseline: true }, () => {
  h.hh_loop(raw.pointer, f.pointer, 1000);
});
