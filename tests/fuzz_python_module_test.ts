/**
 * Fuzzing a Python extension module's handler in a child process that hosts
 * the module: `cli fuzz --python-module`, `fuzzHandler({ module, handler })`
 * and `fuzzHandler(handlersFromHandler, { isolate: true })` on jaxlib's
 * `cpu_csr_sparse_dense_ffi`, which crashes on column indices out of range
 * (needs jax, else ignored with the reason); docs/fuzzing.md's CSR recipe as
 * written; and the options refused without Python.
 */
import assert from "node:assert/strict";
import { DataType, ErrorCode, Ffi, FfiError } from "../mod.ts";
import { fuzzHandler } from "../src/testing/mod.ts";
import { childContext, runDeno } from "./_child.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;
const cli = new URL("../cli.ts", import.meta.url);
const SPARSE = "jaxlib.cpu._sparse";
const CSR = "cpu_csr_sparse_dense_ffi";
/** values f32[nnz], row pointers s32[rows + 1], column indices s32[nnz], dense f32[cols, k] */
const HINTS = ["--arg", "f32[1]", "--arg", "s32[1]", "--arg", "s32[1]", "--arg", "f32[1,1]"];
/** Row pointers kept inside the values, column indices far past the dense operand: a crash. */
const CRASHING = ["--values", "1=index:$0.0,sorted", "--values", "2=[1000000000,2000000000]"];

Deno.test("fuzz python module: isolate, a module target's options and its name are checked", async () => {
  using ts = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(() => {});
  await assert.rejects(
    () => fuzzHandler(ts, { runs: 1, isolate: true }),
    (e) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      /isolate moves a Python module's handler/.test(e.message),
  );
  await assert.rejects(
    () => fuzzHandler({ module: SPARSE, handler: "" }, { runs: 1 }),
    /target\.handler is empty/,
  );
  await assert.rejects(
    () => fuzzHandler({ module: SPARSE, handler: CSR }, { runs: 1, instantiate: "x" }),
    /instantiate and stateTypes are for a shared library's handler/,
  );
  await assert.rejects(
    () => fuzzHandler({ module: "not a module", handler: CSR }, { runs: 1 }),
    /A Python module name must be dotted identifiers, got "not a module"/,
  );
});

Deno.test({
  name: xlaName(
    "fuzz python module: cli fuzz --python-module finds the crash, shrinks it, and its line reproduces it",
  ),
  ignore,
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "fuzz_pymod" });
    try {
      const r = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          cli.href,
          "fuzz",
          "--python-module",
          SPARSE,
          CSR,
          ...HINTS,
          "--ret",
          "f32[$1.0,$3.1]",
          ...CRASHING,
          "--runs",
          "30",
          "--json",
          "--out",
          out,
        ],
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(240_000),
      }).output();
      const res = {
        code: r.code,
        stdout: new TextDecoder().decode(r.stdout),
        stderr: new TextDecoder().decode(r.stderr),
      };
      const context = childContext("cli fuzz --python-module", res);
      // The fuzzing process lived through the crashes to report them.
      assert.equal(res.code, 9, context);
      const report = JSON.parse(res.stdout);
      assert.equal(report.module, SPARSE, context);
      const crash = report.failures.find((f: { kind: string }) => f.kind === "crash");
      assert.ok(crash, context);
      assert.equal(crash.detail, "SIGSEGV", context);
      assert.match(
        crash.message,
        /^Handler 'jaxlib\.cpu\._sparse:cpu_csr_sparse_dense_ffi' of the isolated Python module jaxlib\.cpu\._sparse ended its process with SIGSEGV/,
      );
      assert.ok(crash.shrinkSteps > 0, context);
      assert.deepEqual(crash.command.slice(0, 4), ["run", "--python-module", SPARSE, CSR]);
      assert.ok(crash.command.includes("--guard"), context);
      // Run alone (by the fuzzer, then here), the printed line crashes as the row says: exit 6.
      assert.deepEqual(crash.replay, { exitCode: 6, expected: 6 }, context);
      const again = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", cli.href, ...crash.command],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(again.code, 6, new TextDecoder().decode(again.stderr));
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: xlaName(
    "fuzz python module: fuzzHandler(handlersFrom handler, { isolate: true }) reports the crash",
  ),
  ignore,
  async fn() {
    const r = await runDeno(new URL("./_fuzz_module_child.ts", import.meta.url), [], {
      timeoutMs: 240_000,
    });
    const context = childContext("_fuzz_module_child.ts", r);
    assert.equal(r.code, 0, context);
    assert.match(
      r.stdout,
      /^crash SIGSEGV jaxlib\.cpu\._sparse cpu_csr_sparse_dense_ffi$/m,
      context,
    );
    assert.match(r.stdout, /^survived$/m, context);
  },
});

/** docs/fuzzing.md's CSR recipe: the `ts ignore` block of its Python modules' section. */
function csrRecipe(): string {
  const guide = Deno.readTextFileSync(new URL("../docs/fuzzing.md", import.meta.url));
  const section = guide.slice(guide.indexOf("## A Python module's handlers"));
  const start = section.indexOf("```ts ignore\n") + "```ts ignore\n".length;
  return section.slice(start, section.indexOf("```", start));
}

Deno.test({
  name: xlaName("fuzz python module: docs/fuzzing.md's CSR recipe finds no crash, then the crash"),
  ignore,
  async fn() {
    const root = new URL("../", import.meta.url);
    const source = csrRecipe()
      .replace(`"@deno-xla/ffi/testing"`, `"${new URL("src/testing/mod.ts", root).href}"`)
      .replace(`"@deno-xla/ffi"`, `"${new URL("mod.ts", root).href}"`);
    assert.match(source, /module: "jaxlib\.cpu\._sparse"/);
    const dir = await Deno.makeTempDir({ prefix: "csr_recipe" });
    try {
      await Deno.writeTextFile(`${dir}/recipe.ts`, source);
      const r = await runDeno(new URL(`file://${dir}/recipe.ts`), [], { timeoutMs: 240_000 });
      const context = childContext("docs/fuzzing.md's CSR recipe", r);
      assert.equal(r.code, 0, context);
      assert.equal(r.stdout, "0\ntrue\n", context);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
