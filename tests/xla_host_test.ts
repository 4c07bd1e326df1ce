/**
 * `@deno-xla/ffi/xla` hosting jax: versions and hosts, whole programs
 * (Python and StableHLO), dtypes and ranks, errors from Python, tracebacks,
 * a missing interpreter or jax, and the example. Every case runs in its own
 * child process (tests/_xla_cases.ts).
 */
import assert from "node:assert/strict";
import { runXlaCase, runXlaScript, XLA_SKIP, xlaName, xlaRecipe } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;

/** Why jax cannot serialize models here (jax.export needs the flatbuffers package), if so. */
const NO_FLATBUFFERS = ignore ? undefined : (() => {
  const r = new Deno.Command(Deno.env.get("XLA_FFI_DENO_PYTHON")!, {
    args: ["-c", "import flatbuffers"],
    stdout: "null",
    stderr: "null",
  }).outputSync();
  return r.success ? undefined : "jax.export needs the flatbuffers package, not installed there";
})();

Deno.test({
  name: xlaName("xla: versions, a second host in the process, close keeps Python for a reopen"),
  ignore,
  fn: () => runXlaCase("host").then(() => {}),
});

Deno.test({
  name: xlaName("xla: Python runs only on the host's worker threads, which are kept, never ended"),
  ignore,
  fn: () => runXlaCase("threads").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: runSync/runPythonSync call TS handlers inline on the JS thread; what needs the free " +
      "JS thread (a Promise, XLA's own threads, running requests) fails FAILED_PRECONDITION",
  ),
  ignore,
  fn: () => runXlaCase("syncRuns").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: a TS handler computes with IEEE denormals inline (runSync, under XLA's flush-to-zero) " +
      "as from a worker (run, ffiCall)",
  ),
  ignore,
  fn: () => runXlaCase("tsDenormals").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: a TS handler's results reach XLA as written, through its view and its address, " +
      "inline and from a worker",
  ),
  ignore,
  fn: () => runXlaCase("resultsAsWritten").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: run, runSync and ffiCall give the same bytes on a plan's first and later calls, " +
      "small and large, arguments read in place, calls in flight at once",
  ),
  ignore,
  fn: () => runXlaCase("prepared").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: run and ffiCall of a program calling no TS target start on the JS thread, long ones " +
      "waited for on a worker; TS targets and busy workers go to a worker; the same results",
  ),
  ignore,
  fn: () => runXlaCase("dispatch").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: runSyncInto writes results into the caller's arrays (small, large, in place over an " +
      "argument); arrays that cannot hold them refused before the run",
  ),
  ignore,
  fn: () => runXlaCase("into").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: a call repeating its last request runs on the native path with the bridge's results " +
      "and errors; bfloat16 and dict results, clearCache and close handled",
  ),
  ignore,
  fn: () => runXlaCase("native").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: 64 calls of one plan in flight at once (ffiCall, a program's run) each get their own " +
      "results",
  ),
  ignore,
  fn: () => runXlaCase("inFlight").then(() => {}),
});

Deno.test({
  name: xlaName("xla: results and arguments of several dtypes and ranks, NpyArray arguments"),
  ignore,
  fn: () => runXlaCase("dtypes").then(() => {}),
});

Deno.test({
  name: xlaName(
    "xla: models exported by jax.export, loaded with xla.load: parameters, a TS custom call, " +
      "symbolic shapes, bad bytes" + (NO_FLATBUFFERS ? ` (ignored: ${NO_FLATBUFFERS})` : ""),
  ),
  ignore: ignore || NO_FLATBUFFERS !== undefined,
  fn: () => runXlaCase("exported").then(() => {}),
});

Deno.test({
  name: xlaName("xla: StableHLO and Python programs, compile and source errors, large results"),
  ignore,
  fn: () => runXlaCase("programs").then(() => {}),
});

Deno.test({
  name: xlaName("xla: Python prints a traceback only when asked (tracebacks: true)"),
  ignore,
  fn: async () => {
    // The case itself asserts the error; here: the traceback went to stderr.
    await runXlaCase("tracebacks", { tracebacks: true });
  },
});

Deno.test({
  name: xlaName("xla: no interpreter, or one without jax: UNAVAILABLE saying what to do"),
  ignore,
  fn: () => runXlaCase("missing").then(() => {}),
});

Deno.test({
  ...xlaRecipe("examples/real_xla.ts: TS, async TS and C handlers in jitted programs, 4 devices"),
  fn: async () => {
    const out = await runXlaScript(new URL("../examples/real_xla.ts", import.meta.url));
    assert.match(
      out,
      /^jax \d+\.\d+\.\d+, jaxlib \d+\.\d+\.\d+, XLA FFI API 0\.\d+, .*4 cpu devices\n/,
    );
    for (const what of ["sync TS handler", "async TS handler", "C handler demo_saxpy"]) {
      assert.match(
        out,
        new RegExp(`${what}: y = softmax\\(h\\(x\\) \\* 2\\), shape \\[4,8\\], .*; matches jnp`),
      );
    }
    assert.match(
      out,
      /shard_map over 4 devices: 4 handler calls \(shards 0, 1, 2, 3\), 4 in flight at once; y = 10 \* x correct/,
    );
  },
});
