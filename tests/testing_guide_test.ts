/**
 * docs/testing.md's port of jax's rms_norm_test: the block runs as written
 * (the library path and symbol swapped for the C++ RMS norm of
 * native/tests/testing_handlers.cc, built against jaxlib's ffi.h) on the
 * embedded runtime and real XLA, and its line count is the one the guide
 * states.
 */
import assert from "node:assert/strict";
import { childContext } from "./_child.ts";
import { ffiHLibraryPath, ffiHSkip } from "./_host_cases.ts";
import { findCxxCompiler } from "../build.ts";

const GUIDE = new URL("../docs/testing.md", import.meta.url);
const guide = Deno.readTextFileSync(GUIDE);

/** The port: the `ts ignore` block of the rms_norm section. */
function portBlock(): string {
  const section = guide.slice(guide.indexOf("## Porting jax's `rms_norm_test`"));
  const start = section.indexOf("```ts ignore\n") + "```ts ignore\n".length;
  return section.slice(start, section.indexOf("```", start));
}

Deno.test("docs/testing.md: the rms_norm port has the line count its table states", () => {
  const lines = portBlock().split("\n").filter((l) => l.trim() && !l.trim().startsWith("//"));
  const row = /^\| ours: [^|]*\| (\d+) +\|$/m.exec(guide);
  assert.ok(row, "the table has a row for ours");
  assert.equal(lines.length, Number(row[1]));
  const published = /^\| jax's `rms_norm_test.py` as published[^|]*\| (\d+) +\|$/m.exec(guide);
  const wrapper = /^\| plus the forward part of its wrapper[^|]*\| (\d+) +\|$/m.exec(guide);
  assert.ok(lines.length <= Number(published![1]) + Number(wrapper![1]));
});

const reason = ffiHSkip() ?? (findCxxCompiler() === undefined ? "no C++ compiler" : undefined);

Deno.test({
  name: "docs/testing.md: the rms_norm port passes on the embedded runtime and real XLA" +
    (reason ? ` (ignored: ${reason})` : ""),
  ignore: reason !== undefined,
  fn: async () => {
    const root = new URL("../", import.meta.url);
    const source = portBlock()
      .replace(`"@deno-xla/ffi/testing"`, `"${new URL("src/testing/mod.ts", root).href}"`)
      .replace(`"@deno-xla/ffi/xla"`, `"${new URL("src/xla/mod.ts", root).href}"`)
      .replace(`"@deno-xla/ffi"`, `"${new URL("mod.ts", root).href}"`)
      .replace(`"./librms_norm.so"`, JSON.stringify(ffiHLibraryPath()))
      .replace(`handler("RmsNorm")`, `handler("testing_rms_norm")`);
    const dir = Deno.makeTempDirSync({ prefix: "rms_norm_port" });
    try {
      Deno.writeTextFileSync(`${dir}/rms_norm_test.ts`, source);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["test", "-A", "--no-config", `${dir}/rms_norm_test.ts`],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const r = {
        code: out.code,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
      const context = childContext("the rms_norm port", r);
      assert.equal(r.code, 0, context);
      assert.match(r.stdout, /rms_norm: embedded runtime \.\.\. .*ok/, context);
      assert.match(r.stdout, /rms_norm: real XLA \.\.\. .*ok/, context);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
