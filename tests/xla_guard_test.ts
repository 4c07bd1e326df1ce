/**
 * Guarded handlers under real XLA: `Xla.register(…, { guard: true })` and
 * `Xla.ffiCall(…, { guard: true })` with the fault test handlers (a write
 * past a result's end, before its start, into an argument; a clean handler;
 * asynchronous handlers; TS handlers). Each case runs in its own child process
 * (tests/_xla_guard_cases.ts).
 */
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;
const script = new URL("./_xla_guard_cases.ts", import.meta.url);
const cases: [string, string][] = [
  [
    "register",
    "xla guard: registered with guard, jitted calls: past end, before start, into an argument, " +
    "clean, async, zero-sized",
  ],
  ["ffiCall", "xla guard: ffiCall with guard: by handler, by name (a guarded twin), aliased"],
  ["devices", "xla guard: 4 devices under shard_map call guarded handlers, sync and async"],
  ["tsHandlers", "xla guard: TS handlers: a write into an argument; an async one waited for"],
  [
    "tsInline",
    "xla guard: a TS handler called inline (runSync) writes the guard's shadow: past end, " +
    "before start found",
  ],
  [
    "subByte",
    "xla guard: sub-byte results are shadowed as XLA packs them: one byte per element is past " +
    "the end, packed bytes reach XLA",
  ],
];
for (const [name, title] of cases) {
  Deno.test({
    name: xlaName(title),
    ignore,
    fn: () => runXlaCase(name, { script }).then(() => {}),
  });
}
