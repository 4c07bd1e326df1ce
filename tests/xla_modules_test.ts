/**
 * Handlers from Python extension modules (`Xla.handlersFrom`): jaxlib's
 * LAPACK on the embedded runtime and under real XLA, what happens without
 * its `initialize()`, both shapes of `registrations()`, and the lifetime.
 * Each case runs in a child (tests/_xla_module_cases.ts).
 */
import assert from "node:assert/strict";
import { runDeno } from "./_child.ts";
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;
const script = new URL("./_xla_module_cases.ts", import.meta.url);
const cases: [string, string][] = [
  [
    "lapackRuntime",
    "xla modules: LAPACK sgetrf on the embedded runtime (ffiCall, register, callSync), P·L·U = A, as scipy",
  ],
  ["lapackXla", "xla modules: LAPACK sgetrf as a target of Xla.ffiCall"],
  [
    "lapackHints",
    "xla modules: a name one off jax's LAPACK target: XLA's NOT_FOUND, the same hint on both hosts",
  ],
  [
    "lapackErrors",
    "xla modules: LAPACK getrf given a wrong dtype, result count or argument count: the same " +
    "code, message and hint on both hosts",
  ],
  [
    "sparseErrors",
    "xla modules: jaxlib's CSR x dense handler given wrong dtypes, counts or a name one letter " +
    "off: the same code, message and hint on both hosts",
  ],
  ["platformsForm", "xla modules: {platform: [...]} form, initialize called when asked, skips"],
  ["flatForm", "xla modules: flat dict form, stage dicts, errors naming the module"],
  [
    "oddRegistrations",
    "xla modules: a name listed twice with different handlers is refused naming both; None named",
  ],
  ["afterClose", "xla modules: handlers refuse with FAILED_PRECONDITION after the host closed"],
];
for (const [name, title] of cases) {
  Deno.test({
    name: xlaName(title),
    ignore,
    fn: () => runXlaCase(name, { script }).then(() => {}),
  });
}

Deno.test({
  name: xlaName("xla modules: LAPACK without initialize() dies of SIGSEGV, named by the runtime"),
  ignore,
  async fn() {
    const r = await runDeno(script, ["lapackNoInitialize"], { timeoutMs: 180_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /died of SIGSEGV \(segmentation fault at address 0x0\)/);
  },
});
