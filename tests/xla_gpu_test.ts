/**
 * XLA:GPU calls a TS handler: jax's CUDA backend hosted in the process, a
 * handler registered for platform CUDA launching saxpy on XLA's stream, a
 * jitted program using its result, checked against jnp
 * (tests/_xla_gpu_case.ts, in a child). Needs a CUDA device and a Python
 * whose jax has the CUDA plugin (`XLA_FFI_DENO_PYTHON`, else `python3`); ignored
 * with the reason otherwise. `tests/gpu/run.sh --gpu-only` runs the case too
 * and prints its line among the GPU figures.
 */
import assert from "node:assert/strict";
import { cudaUnavailableReason } from "../src/cuda/mod.ts";
import { findPython } from "../src/xla/mod.ts";
import { childContext, runDeno } from "./_child.ts";

/** Why the case cannot run here, or undefined. */
function reason(): string | undefined {
  const cuda = cudaUnavailableReason();
  if (cuda !== undefined) {
    return `no CUDA device: ${cuda.replace(/: Could not open library: .*$/s, "")}`;
  }
  const python = findPython();
  try {
    const r = new Deno.Command(python, {
      args: [
        "-c",
        "import importlib.util as u, sys; sys.exit(0 if any(u.find_spec(n) for n in " +
        "('jax_cuda13_plugin', 'jax_cuda12_plugin')) and u.find_spec('jax') else 1)",
      ],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    if (!r.success) return `no jax CUDA plugin for ${python}`;
  } catch (e) {
    return `cannot run ${python}: ${(e as Error).message}`;
  }
  return undefined;
}

const why = reason();

Deno.test({
  name: "GPU: XLA:GPU runs a jitted program whose custom call is a TS handler launching a kernel " +
    `on XLA's stream${why === undefined ? "" : ` (ignored: ${why})`}`,
  ignore: why !== undefined,
  async fn() {
    const r = await runDeno(new URL("./_xla_gpu_case.ts", import.meta.url), [], {
      timeoutMs: 150_000,
    });
    const context = childContext("XLA:GPU case", r);
    console.log(r.stdout.trim());
    assert.equal(r.code, 0, context);
    assert.match(r.stdout, /^XLA:GPU: .*; matches jnp .*\nok gpu\n$/m, context);
  },
});
