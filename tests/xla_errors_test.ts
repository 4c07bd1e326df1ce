/**
 * Error paths of hosting Python: a XLA_FFI_DENO_PYTHON (or `python` option) that
 * names a folder or a file that is not executable is reported as such, not
 * as a missing `--allow-run`; Ctrl-C while Python runs (importing jax, or a
 * statement) ends the process with exit status 130 as it does any Deno
 * program, instead of becoming a catchable error.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { ErrorCode, FfiError } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";
import { childContext } from "./_child.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";

async function openError(python: string): Promise<FfiError> {
  try {
    await Xla.open({ python });
  } catch (e) {
    assert.ok(e instanceof FfiError, String(e));
    return e;
  }
  assert.fail(`Xla.open({ python: ${python} }) opened`);
}

Deno.test("python path: a folder (a venv) or a non-executable file is said to be one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(`${dir}/bin/python`, "");
    const folder = await openError(dir);
    assert.equal(folder.codeName, "UNAVAILABLE", folder.message);
    assert.match(folder.message, /a folder; expected the path of a Python interpreter executable/);
    assert.ok(folder.message.includes(`use ${dir}/bin/python`), folder.message);
    assert.doesNotMatch(folder.message, /allow-run/);
    const file = await openError(`${dir}/bin/python`);
    assert.equal(file.codeName, "UNAVAILABLE", file.message);
    assert.match(file.message, /a file that is not executable; expected the path of a Python/);
    assert.doesNotMatch(file.message, /allow-run/);
    assert.equal((await openError(`${dir}/missing`)).code, ErrorCode.UNAVAILABLE);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (
  const [mode, title] of [
    ["import", "while Xla.open imports jax"],
    ["raise", "turned into KeyboardInterrupt by Python"],
    ["sync", "while Python runs on the JS thread (runPythonSync)"],
  ]
) {
  Deno.test({
    name: xlaName(`Ctrl-C ${title} ends the process with 130, not a catchable error`),
    ignore: XLA_SKIP !== undefined,
    fn: async () => {
      // -A: the child reads /proc/self/status (Deno asks for all access there).
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          fileURLToPath(new URL("./_interrupt_child.ts", import.meta.url)),
          mode!,
        ],
        stdin: "null",
        signal: AbortSignal.timeout(60_000),
      }).output();
      const text = new TextDecoder();
      const r = {
        code: out.code,
        stdout: text.decode(out.stdout),
        stderr: text.decode(out.stderr),
      };
      const context = childContext(`interrupt ${mode}`, r);
      assert.equal(r.code, 130, context);
      assert.doesNotMatch(r.stdout, /caught|ran on/, context);
    },
  });
}
