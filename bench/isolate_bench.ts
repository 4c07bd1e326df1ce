/**
 * Isolated and guarded calls against the in-process call, all with the
 * standard frame and the no-op C handler: `Runtime.callSync` in-process
 * (baseline), the same library isolated (callSync and call), guarded
 * frames in-process and isolated, and one bare round trip to the child
 * (a symbol lookup: no frame) to show where the isolated call's time goes.
 * docs/faults.md quotes the figures of bench/isolate_speed.ts, which times
 * the same calls in interleaved rounds.
 */
import { HandlerLibrary, Runtime } from "../mod.ts";
import { handlersPath, standardBuilder } from "./_runtime_fixture.ts";

const local = HandlerLibrary.open(handlersPath);
const isolated = HandlerLibrary.open(handlersPath, { isolate: true });
const rt = new Runtime({ threads: 1 });
const noop = local.handler("test_noop");
const noopIsolated = isolated.handler("test_noop");
const frame = standardBuilder().build();
const guarded = standardBuilder({ guard: true }).build();

Deno.bench("in-process callSync (standard frame)", { group: "isolate", baseline: true }, () => {
  rt.callSync(noop, frame);
});

Deno.bench("in-process callSync, guarded frame", { group: "isolate" }, () => {
  rt.callSync(noop, guarded);
});

Deno.bench("isolated callSync (standard frame)", { group: "isolate" }, () => {
  rt.callSync(noopIsolated, frame);
});

Deno.bench("isolated callSync, guarded frame", { group: "isolate" }, () => {
  rt.callSync(noopIsolated, guarded);
});

Deno.bench("isolated call (async)", { group: "isolate" }, async () => {
  await rt.call(noopIsolated, frame);
});

Deno.bench("bare round trip to the child (symbol lookup, no frame)", { group: "isolate" }, () => {
  noopIsolated._isolated!.resolve("test_noop");
});

globalThis.addEventListener("unload", () => {
  frame.close();
  guarded.close();
  rt.close();
  local.close();
  isolated.close();
});
