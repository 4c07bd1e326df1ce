/**
 * Child of tests/leaks_test.ts (run with `--v8-flags=--expose-gc`): jits
 * XLA programs and opens an Xla host, never closes them, lets them be
 * collected and prints what the hosted Python still holds, as JSON.
 *
 * @module
 */
import { Xla } from "../src/xla/mod.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");

await using xla = await Xla.open();
for (let i = 0; i < 5; i++) await xla.jit("def f(x):\n    return x + 1\n");
const before = (await xla.pythonStats()).programs;
let after = before;
const deadline = Date.now() + 10_000;
while (after > 0 && Date.now() < deadline) {
  gc();
  await new Promise((r) => setTimeout(r, 20)); // finalizers run, their release requests go out
  after = (await xla.pythonStats()).programs;
}
// A host never closed: released in Python when collected.
const hosts0 = (await xla.pythonStats()).hosts;
await (async () => {
  const forgotten = await Xla.open();
  await forgotten.jit("def f(x):\n    return x + 1\n");
})();
const hostsWith = (await xla.pythonStats()).hosts;
let hostsAfter = hostsWith;
const until = Date.now() + 10_000;
while (hostsAfter > hosts0 && Date.now() < until) {
  gc();
  await new Promise((r) => setTimeout(r, 20));
  hostsAfter = (await xla.pythonStats()).hosts;
}
console.log(
  JSON.stringify({ before, after, hostsAdded: hostsWith - hosts0, hostsLeft: hostsAfter - hosts0 }),
);
