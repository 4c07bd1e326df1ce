/**
 * Child of tests/leaks_test.ts (run with `--v8-flags=--expose-gc` and -A,
 * for /proc/self/maps): makes call frames, TS handlers, runtimes and a
 * handler library, never closes them, lets them be collected, and prints
 * what the native counters and the process's mappings say afterwards as
 * JSON. Closed objects are collected too: a second free would show as more
 * frames destroyed than created (or as a crash under the sanitizers).
 *
 * @module
 */
import {
  CallFrameBuilder,
  Ffi,
  handlerHostStats,
  HandlerLibrary,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");

async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((r) => setTimeout(r, 10)); // finalizers run as tasks
  }
}

function mapped(path: string): boolean {
  return Deno.readTextFileSync("/proc/self/maps").includes(path);
}

const n = Number(Deno.args[0] ?? 2000);
const libPath = Deno.realPathSync(testHandlersPath());
using rt = new Runtime({ threads: 0 });
using frame = new CallFrameBuilder().build();
await collect();
const s0 = runtimeDebugStats();
const live0 = handlerHostStats().liveHandlers;
let forgottenCalls = 0;
(() => {
  for (let i = 0; i < n; i++) new CallFrameBuilder().arg(new Float32Array(16)).build();
  for (let i = 0; i < n; i++) new CallFrameBuilder().build().close(); // closed, then collected
  for (let i = 0; i < 50; i++) Ffi.bind().to(() => {});
  for (let i = 0; i < 8; i++) new Runtime({ threads: 1 });
  // Registered by name and forgotten: the name keeps calling it.
  rt.register("reclaim.forgotten", Ffi.bind().to(() => void forgottenCalls++));
  HandlerLibrary.open(libPath).handler("test_echo");
})();
// A handler taken from a library keeps it loaded; once both are unreachable it is unloaded.
let kept: { name: string } | null = HandlerLibrary.open(libPath).handler("test_echo");
await collect();
const keptMapped = mapped(libPath) && kept.name === "test_echo";
kept = null;
await collect();
const unmapped = !mapped(libPath);
const deadline = Date.now() + 10_000;
while (Date.now() < deadline) {
  const s = runtimeDebugStats();
  if (s.runtimesDestroyed - s0.runtimesDestroyed >= 8) break;
  await new Promise((r) => setTimeout(r, 20));
}
rt.callSync("reclaim.forgotten", frame);
const s1 = runtimeDebugStats();
console.log(JSON.stringify({
  framesCreated: s1.framesCreated - s0.framesCreated,
  framesDestroyed: s1.framesDestroyed - s0.framesDestroyed,
  runtimesCreated: s1.runtimesCreated - s0.runtimesCreated,
  runtimesDestroyed: s1.runtimesDestroyed - s0.runtimesDestroyed,
  liveHandlers: handlerHostStats().liveHandlers - live0,
  forgottenCalls,
  keptMapped,
  unmapped,
}));
