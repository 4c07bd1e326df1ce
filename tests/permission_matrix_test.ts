/**
 * The permission flags a script of the published module is given, against
 * what it says: each missing or too narrow flag is named exactly (scoped to
 * the path or program where there is one), in one line without a stack trace,
 * and only what the chosen way needs is asked for.
 */
import assert from "node:assert/strict";
import { readmeFirstHandler, runDeno, servePublished } from "./_published.ts";

const here = `${Deno.build.os}-${Deno.build.arch}`;
const shipped = ["linux-x86_64", "linux-aarch64"].includes(here);

/** The lines of stderr that are the script's, not Deno's downloads. */
function errorLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l !== "" && !l.startsWith("Download "));
}

Deno.test({
  name: "permission matrix: each message names the exact flag",
  ignore: !shipped,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const server = servePublished();
    const home = Deno.makeTempDirSync();
    const importFlag = `--allow-import=${server.host}`;
    const handler = readmeFirstHandler().replaceAll(
      `from "@deno-xla/ffi"`,
      `from "http://${server.host}/mod.ts"`,
    );
    const base = { HOME: home, DENO_DIR: `${home}/deno`, PATH: Deno.env.get("PATH") ?? "" };
    // Cache A holds the library (installed by a run with every flag); each case below that
    // needs an empty cache gets a folder of its own.
    const cacheA = `${home}/a`;
    let n = 0;
    const fresh = () => `${home}/empty-${++n}`;
    const run = (flags: string[], cache: string, code = handler, env = {}) =>
      runDeno([importFlag, ...flags], code, { ...base, XDG_CACHE_HOME: cache, ...env });
    /** Expects one line `error: ...` that contains every one of `flags`. */
    const refused = async (
      r: Promise<{ code: number; stdout: string; stderr: string }>,
      flags: string[],
      pattern?: RegExp,
    ) => {
      const { code, stderr } = await r;
      const lines = errorLines(stderr);
      assert.equal(code, 1, stderr);
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0]!, /^error: /);
      for (const f of flags) assert.ok(lines[0]!.includes(` ${f}`), `${f} in: ${lines[0]}`);
      if (pattern) assert.match(lines[0]!, pattern);
    };
    try {
      const all = await run(
        ["--allow-env", "--allow-read", "--allow-write", "--allow-ffi"],
        cacheA,
      );
      assert.equal(all.code, 0, all.stderr);
      assert.match(all.stdout, /\[ 2, 4, 6 \]/);

      await t.step(
        "cached, --allow-read of the cache only: runs (no PATH folder looked at)",
        async () => {
          const r = await run(["--allow-env", `--allow-read=${cacheA}`, "--allow-ffi"], cacheA);
          assert.equal(r.code, 0, r.stderr);
          assert.deepEqual(errorLines(r.stderr), []);
        },
      );
      await t.step("cached, no --allow-read: names --allow-read=<cache>", async () => {
        await refused(
          run(["--allow-env", "--allow-ffi"], cacheA),
          [`--allow-read=${cacheA}/deno-xla-ffi`],
          /cannot load its native library without/,
        );
      });
      await t.step(
        "not cached, read but no write: names --allow-write=<cache>, not --allow-run",
        async () => {
          const cache = fresh();
          await refused(
            run(["--allow-env", `--allow-read=${cache}`, "--allow-ffi"], cache),
            [`--allow-write=${cache}/deno-xla-ffi`],
            /^error: @deno-xla\/ffi needs \S+ to copy its prebuilt native library into the cache on first use/,
          );
          const { stderr } = await run(
            ["--allow-env", `--allow-read=${cache}`, "--allow-ffi"],
            cache,
          );
          assert.doesNotMatch(stderr, /--allow-run/);
        },
      );
      await t.step("no --allow-env: names it; some variables only: names the others", async () => {
        await refused(run([`--allow-read=${cacheA}`, "--allow-ffi"], cacheA), ["--allow-env"]);
        await refused(
          run(["--allow-env=HOME,XDG_CACHE_HOME", `--allow-read=${cacheA}`, "--allow-ffi"], cacheA),
          ["--allow-env=XLA_FFI_DENO_LIB,"],
        );
      });
      await t.step(
        "--allow-ffi=<dir>: loads, but TS handlers need --allow-ffi for all",
        async () => {
          await refused(
            run(["--allow-env", `--allow-read=${cacheA}`, `--allow-ffi=${cacheA}`], cacheA),
            ["--allow-ffi"],
            /needs --allow-ffi without a path list for TS handlers/,
          );
        },
      );
      await t.step("no --allow-ffi: names it", async () => {
        await refused(run(["--allow-env", `--allow-read=${cacheA}`], cacheA), ["--allow-ffi"]);
      });
      await t.step(
        "XLA_FFI_DENO_BUILD=source, no --allow-run: names --allow-run=<compiler>",
        async () => {
          const cache = fresh();
          const r = run(
            ["--allow-env", "--allow-read", "--allow-write", "--allow-ffi"],
            cache,
            handler,
            {
              XLA_FFI_DENO_BUILD: "source",
            },
          );
          await refused(r, ["--allow-run=/"], /needs --allow-run=\S+ to build its native library/);
        },
      );
      await t.step("Xla.open without --allow-run: one line naming --allow-run", async () => {
        const code = `import { Xla } from "http://${server.host}/src/xla/mod.ts";
          await Xla.open({ python: "python3" });`;
        await refused(
          run(["--allow-env", "--allow-read", "--allow-write", "--allow-ffi"], cacheA, code),
          ["--allow-run"],
          /Python interpreter/,
        );
      });
    } finally {
      await server.close();
      Deno.removeSync(home, { recursive: true });
    }
  },
});
