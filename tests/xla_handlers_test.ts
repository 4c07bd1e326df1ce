/**
 * Real XLA (jaxlib's CPU backend, hosted by `@deno-xla/ffi/xla`) calling TS
 * and C handlers: sync and async (`await null`, timers), errors of every
 * kind, every attribute kind jax lowers, the C demo handlers, calls from
 * XLA's threads on 4 devices, and 10k repeated calls with balanced counters.
 * Every case runs in its own child process (tests/_xla_cases.ts), so a crash
 * inside XLA fails one test, not the runner.
 */
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;
const cases: [string, string][] = [
  ["sync", "xla: a synchronous TS handler through ffiCall and a jitted program, ranks 0-3"],
  ["async", "xla: async TS handlers (await null, timers), 16 calls in flight"],
  ["errors", "xla: FfiError codes, others UNKNOWN 'XLA FFI call failed', causes; thrown fuzz"],
  ["attrs", "xla: every attribute kind jax lowers; u64 >= 2^63 and bool arrays refused clearly"],
  ["cHandlers", "xla: the C demo handlers (attribute, futures on XLA's pool, attribute text)"],
  ["devices", "xla: 4 devices, shard_map and pmap call the TS handler from XLA's threads"],
  ["repeat", "xla: 10k calls (sync, async, failing): counters balanced, Python memory flat"],
  ["detachedViews", "xla: a handler that detached its result view gets a whole one next call"],
];
for (const [name, title] of cases) {
  Deno.test({ name: xlaName(title), ignore, fn: () => runXlaCase(name).then(() => {}) });
}
