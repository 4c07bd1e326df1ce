/**
 * The jax installation the tests may use: the interpreter in
 * `DENO_XLA_PYTHON` (CI creates a venv with jax and sets it), and the XLA FFI
 * headers jaxlib ships (`jax.ffi.include_dir()`), read at test time only.
 *
 * @module
 */

let cached: { includeDir?: string; reason?: string } | undefined;

/** jaxlib's include folder, or why there is none (the reason to ignore a test). */
export function jaxlibHeaders(): { includeDir?: string; reason?: string } {
  if (cached) return cached;
  const python = Deno.env.get("DENO_XLA_PYTHON");
  if (!python) {
    cached = { reason: "DENO_XLA_PYTHON is not set (no jax installed for the tests)" };
    return cached;
  }
  try {
    const out = new Deno.Command(python, {
      args: ["-c", "import jax.ffi; print(jax.ffi.include_dir())"],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const dir = new TextDecoder().decode(out.stdout).trim();
    if (!out.success || !dir) {
      cached = {
        reason: `${python} cannot import jax.ffi: ${new TextDecoder().decode(out.stderr).trim()}`,
      };
    } else {
      cached = { includeDir: dir };
    }
  } catch (e) {
    cached = { reason: `cannot run ${python}: ${(e as Error).message}` };
  }
  return cached;
}
