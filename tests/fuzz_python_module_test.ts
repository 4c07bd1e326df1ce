/**
 * Fuzzing a Python extension module's handler in a child process that hosts
 * the module: `cli fuzz --python-module`, `fuzzHandler({ module, handler })`
 * and `fuzzHandler(handlersFromHandler, { isolate: true })` on jaxlib's
 * `cpu_csr_sparse_dense_ffi`, which crashes on column indices out of range
 * (needs jax, else ignored with the reason); docs/fuzzing.md's CSR and LAPACK
 * recipes as written (for a few seconds, not the guide's 20); a write through
 * a zero-sized result, whose row and line agree; and the options refused
 * without Python.
 */
import assert from "node:assert/strict";
import { DataType, ErrorCode, Ffi, FfiError } from "../mod.ts";
import { formatSignature, fuzzHandler } from "../src/testing/mod.ts";
import { childContext, runDeno } from "./_child.ts";
import { XLA_SKIP, xlaName, xlaRecipe } from "./_xla_env.ts";

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

Deno.test("fuzz python module: a module handler's signature text has a cli run --python-module line", () => {
  const text = formatSignature({
    args: [{ dtype: DataType.F32, rank: 2 }],
    results: [{ dtype: DataType.S32, rank: 0 }],
    attrs: [{ name: "uplo", kind: "scalar", dtype: DataType.U8 }],
    variadicArgs: false,
    variadicResults: false,
    decodes: true,
    unknown: [],
    probes: 4,
  }, { module: "jaxlib.cpu._lapack", initialize: "initialize", handler: "lapack_spotrf_ffi" });
  assert.match(
    text,
    /^ {2}cli run --python-module jaxlib\.cpu\._lapack --initialize initialize lapack_spotrf_ffi --arg 'f32\[3,4\]=0' --ret 's32\[\]' --attr uplo=u8:0$/m,
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

/**
 * A recipe of docs/fuzzing.md: the first `ts ignore` block after `heading`, its imports pointed at
 * this checkout and its 20 s cut to `seconds` (the documented 20 s runs are the figures in the
 * guide; a test keeps CI short).
 */
function recipe(heading: string, seconds: number): string {
  const guide = Deno.readTextFileSync(new URL("../docs/fuzzing.md", import.meta.url));
  const section = guide.slice(guide.indexOf(heading));
  const start = section.indexOf("```ts ignore\n") + "```ts ignore\n".length;
  const root = new URL("../", import.meta.url);
  const text = section.slice(start, section.indexOf("```", start));
  assert.match(text, /seconds: 20,/);
  return text
    .replaceAll("seconds: 20,", `seconds: ${seconds},`)
    .replace(`"@deno-xla/ffi/testing"`, `"${new URL("src/testing/mod.ts", root).href}"`)
    .replace(`"@deno-xla/ffi"`, `"${new URL("mod.ts", root).href}"`);
}

/** Runs a recipe's text in a child; resolves to its stdout. */
async function runRecipe(what: string, source: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "fuzz_recipe" });
  try {
    await Deno.writeTextFile(`${dir}/recipe.ts`, source);
    const r = await runDeno(new URL(`file://${dir}/recipe.ts`), [], { timeoutMs: 240_000 });
    const context = childContext(what, r);
    assert.equal(r.code, 0, context);
    return r.stdout;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  ...xlaRecipe("fuzz python module: docs/fuzzing.md's CSR recipe finds no crash, then the crash"),
  async fn() {
    const source = recipe("## A Python module's handlers", 3);
    assert.match(source, /module: "jaxlib\.cpu\._sparse"/);
    assert.match(source, /offsetsInto: \[0, 0\]/);
    assert.equal(await runRecipe("docs/fuzzing.md's CSR recipe", source), "0\ntrue\n");
  },
});

Deno.test({
  ...xlaRecipe("fuzz python module: docs/fuzzing.md's LAPACK recipe (potrf, syevd) finds nothing"),
  async fn() {
    const source = recipe("### LAPACK's `potrf` and `syevd`", 2);
    assert.match(source, /handler: "lapack_spotrf_ffi"/);
    assert.match(source, /handler: "lapack_ssyevd_ffi"/);
    assert.equal(await runRecipe("docs/fuzzing.md's LAPACK recipe", source), "0\n0\n");
  },
});

Deno.test({
  name: xlaName(
    "fuzz python module: a zero-sized result written through is a result-write, as its line shows",
  ),
  ignore,
  async fn() {
    // potrf of f32[1,0] (not square: outside its contract) writes into the zero-sized factor.
    const out = await Deno.makeTempDir({ prefix: "fuzz_zero" });
    try {
      const report = await fuzzHandler(
        { module: "jaxlib.cpu._lapack", initialize: "initialize", handler: "lapack_spotrf_ffi" },
        {
          runs: 40,
          args: ["f32[1,1]"],
          results: ["like:0", "s32[]"],
          attrs: ["uplo=u8:{'L','U'}"],
          valid: ([a]) => a!.shape[1] === 0 && a!.shape[0]! > 0,
          outDir: out,
        },
      );
      const context = JSON.stringify(report.failures.map((f) => f.message));
      assert.equal(report.failures.length, 1, context);
      const [f] = report.failures;
      assert.equal(`${f!.kind} ${f!.detail}`, "result-write result 0", context);
      assert.match(f!.message, /\(the result has 0 bytes; found by the inaccessible page after it/);
      // Alone, the line's canary finds the same write: exit 1, as the row's kind says.
      const alone = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", cli.href, ...f!.command!],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(alone.stderr);
      assert.equal(alone.code, 1, err);
      assert.match(err, /DATA_LOSS.*result 0 at byte offset 0 \(the result has 0 bytes/);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
