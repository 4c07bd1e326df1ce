/**
 * Instantiate -> execute state on real XLA: a TS `HandlerBundle` whose
 * instantiate stage returns the state execute reads, and the C demo counter
 * (State_Set / State_Get). Each runs in a child process: XLA 0.3 reads the
 * 0.3 State_Set layout, so a handler using an older layout can crash it.
 */
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

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
