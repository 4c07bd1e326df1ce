/**
 * Captures what native code writes to this process's standard error (file
 * descriptor 2) while `fn` runs, so tests that provoke the runtime's warnings
 * on purpose check them instead of printing them among the test results.
 *
 * @module
 */

const libc = Deno.dlopen("libc.so.6", {
  dup: { parameters: ["i32"], result: "i32" },
  dup2: { parameters: ["i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  open: { parameters: ["buffer", "i32", "i32"], result: "i32" },
});

const O_WRONLY = 1, O_CREAT = 0o100, O_TRUNC = 0o1000;

/**
 * Runs `fn` with fd 2 redirected to a temporary file; returns its result and
 * the text written there. Nothing else should write to stderr meanwhile.
 *
 * @example
 * ```ts ignore
 * const { text } = await captureStderr(() => runFuzz(1n, 1000));
 * ```
 */
export async function captureStderr<T>(
  fn: () => T | Promise<T>,
): Promise<{ result: T; text: string }> {
  const path = Deno.makeTempFileSync({ prefix: "stderr" });
  const fd = libc.symbols.open(
    new TextEncoder().encode(path + "\0"),
    O_WRONLY | O_CREAT | O_TRUNC,
    0o600,
  );
  if (fd < 0) throw new Error(`cannot open ${path}`);
  const saved = libc.symbols.dup(2);
  libc.symbols.dup2(fd, 2);
  libc.symbols.close(fd);
  try {
    const result = await fn();
    return { result, text: Deno.readTextFileSync(path) };
  } finally {
    libc.symbols.dup2(saved, 2);
    libc.symbols.close(saved);
    Deno.removeSync(path);
  }
}
