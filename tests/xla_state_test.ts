/**
 * Instantiate -> execute state on real XLA: a TS `HandlerBundle` whose
 * instantiate stage returns the state execute reads, and the C demo counter
 * (State_Set / State_Get). Each runs in a child process: XLA 0.3 reads the
 * 0.3 State_Set layout, so a handler using an older layout can crash it.
 */
import assert from "node:assert/strict";
import { runXlaCase, runXlaScript, XLA_SKIP, xlaName, xlaRecipe } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;

Deno.test({
  name: xlaName("xla: a TS handler bundle keeps instantiate state across executes"),
  ignore,
  fn: () => runXlaCase("stateTs").then(() => {}),
});

Deno.test({
  name: xlaName("xla: the C demo counter keeps instantiate state across executes"),
  ignore,
  fn: () => runXlaCase("stateC").then(() => {}),
});

Deno.test({
  ...xlaRecipe("examples/real_xla_state.ts: TS and C counters count 42, 43, 44"),
  fn: async () => {
    const out = await runXlaScript(new URL("../examples/real_xla_state.ts", import.meta.url));
    assert.match(out, /^TS counter, 3 runs of one compiled program: 42, 43, 44$/m);
    assert.match(out, /^C counter, 3 runs of one compiled program: 42, 43, 44$/m);
  },
});
