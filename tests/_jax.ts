/**
 * The XLA FFI headers jaxlib ships (`jax.ffi.include_dir()`), for tests that
 * compile against them at test time (never part of this project), from the
 * Python with jax the real-XLA tests use (`XLA_FFI_DENO_PYTHON`, tests/_xla_env.ts).
 *
 * @module
 */
import { XLA_SKIP } from "./_xla_env.ts";

let cached: { includeDir?: string; reason?: string } | undefined;

/** jaxlib's include folder, or why there is none (the reason to ignore a test). */
export function jaxlibHeaders(): { includeDir?: string; reason?: string } {
  if (cached) return cached;
  if (XLA_SKIP !== undefined) return cached = { reason: XLA_SKIP };
  const out = new Deno.Command(Deno.env.get("XLA_FFI_DENO_PYTHON")!, {
    args: ["-c", "import jax.ffi; print(jax.ffi.include_dir())"],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dir = new TextDecoder().decode(out.stdout).trim();
  cached = out.success && dir
    ? { includeDir: dir }
    : { reason: `jax.ffi.include_dir() failed: ${new TextDecoder().decode(out.stderr).trim()}` };
  return cached;
}
