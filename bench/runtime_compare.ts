/**
 * Prints medians (ns/op, 7 runs) of (a) Runtime.callSync of a no-op C handler
 * vs a direct Deno FFI call of the same function, with the difference and the
 * ratio, and (b) building the standard call frame.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env bench/runtime_compare.ts
 */
import { HandlerLibrary, Runtime } from "../mod.ts";
import { handlersPath, standardBuilder } from "./_runtime_fixture.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function measure(n: number, fn: () => void): number {
  for (let i = 0; i < n / 10; i++) fn(); // warm-up
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    runs.push(((performance.now() - t0) * 1e6) / n);
  }
  return median(runs);
}

using lib = HandlerLibrary.open(handlersPath);
const direct = Deno.dlopen(handlersPath, {
  test_noop: { parameters: ["pointer"], result: "pointer" },
});
using rt = new Runtime({ threads: 1 });
const noop = lib.handler("test_noop");
using frame = standardBuilder().build();
const fp = frame.pointer;

const tDirect = measure(2_000_000, () => direct.symbols.test_noop(fp));
const tSync = measure(2_000_000, () => rt.callSync(noop, frame));
const tBuild = measure(50_000, () => standardBuilder().build().close());
direct.close();

console.log(`(a) direct FFI call of the no-op handler: ${tDirect.toFixed(1)} ns`);
console.log(`(a) Runtime.callSync, reused frame:       ${tSync.toFixed(1)} ns`);
console.log(
  `(a) overhead: ${(tSync - tDirect).toFixed(1)} ns over the direct call ` +
    `(ratio ${(tSync / tDirect).toFixed(2)}x; target ≤ 50 ns)`,
);
console.log(
  `(b) build the standard frame: ${(tBuild / 1000).toFixed(2)} µs median (target ≤ 2 µs)`,
);
