/**
 * The command line as a test runner: `run … --expect ref.npy [--rtol R
 * --atol A]` compares each result with its reference as
 * numpy.testing.assert_allclose does (exit code 7 and numpy's report on a
 * mismatch, also for shared-library handlers run in a child process),
 * `--ret like:N` takes argument N's dtype and shape, and `--json`'s values
 * are flat C order with complex elements as [re, im] pairs.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { ExitCode, parseCommandLine } from "../src/cli/args.ts";
import { embeddedRuntime } from "../src/cli/embedded.ts";
import { DataType, FfiError } from "../mod.ts";
import { saveNpy } from "../src/npy.ts";
import { buildDemoLibrary } from "../examples/build_native.ts";
import { captureCli } from "./_cli_capture.ts";
import { complex64 } from "../src/testing/mod.ts";

const HANDLERS = fileURLToPath(new URL("../examples/handlers.ts", import.meta.url));
const MOD = new URL("../mod.ts", import.meta.url).href;

function cli(argv: string[]) {
  return captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 5000 } }) });
}

/** A folder with x.npy (f32[2,2] 1..4) and references of 2.5 * x, one off in [1, 0]. */
function files(): { dir: string; x: string; good: string; bad: string } & Disposable {
  const dir = Deno.makeTempDirSync({ prefix: "cli_expect" });
  const f32 = (vs: number[]) => ({
    dtype: DataType.F32,
    shape: [2, 2],
    data: new Float32Array(vs),
  });
  saveNpy(`${dir}/x.npy`, f32([1, 2, 3, 4]));
  saveNpy(`${dir}/good.npy`, f32([2.5, 5, 7.5, 10]));
  saveNpy(`${dir}/bad.npy`, f32([2.5, 5, 7.6, 10]));
  return {
    dir,
    x: `${dir}/x.npy`,
    good: `${dir}/good.npy`,
    bad: `${dir}/bad.npy`,
    [Symbol.dispose]: () => Deno.removeSync(dir, { recursive: true }),
  };
}

Deno.test("cli run --expect: a match exits 0, a mismatch 7 with numpy's report; --atol loosens it", async () => {
  using f = files();
  const base = [
    "run",
    HANDLERS,
    "scale",
    "--arg",
    f.x,
    "--ret",
    "like:0",
    "--attr",
    "alpha=f32:2.5",
  ];
  const ok = await cli([...base, "--expect", f.good]);
  assert.equal(ok.code, ExitCode.OK, ok.err);
  assert.equal(
    ok.out,
    "result 0: f32[2,2]\n[[ 2.5,  5.0],\n [ 7.5, 10.0]]\n" + `result 0 matches ${f.good}\n`,
  );
  const bad = await cli([...base, "--expect", f.bad]);
  assert.equal(bad.code, ExitCode.MISMATCH);
  assert.equal(ExitCode.MISMATCH, 7);
  assert.equal(
    bad.err,
    `error: result 0 does not match ${f.bad}: Not equal to tolerance rtol=1e-07, atol=0\n` +
      "Mismatched elements: 1 / 4 (25.0%)\n" +
      "Max absolute difference among violations: 0.09999990463256836\n" +
      "Max relative difference among violations: 0.0131578823536055\n" +
      "First mismatches (index: actual vs expected):\n" +
      "  [1, 0]: 7.5 vs 7.6\n",
  );
  assert.equal((await cli([...base, "--expect", f.bad, "--atol", "0.2"])).code, ExitCode.OK);
  assert.equal((await cli([...base, "--expect", f.bad, "--rtol", "0.02"])).code, ExitCode.OK);
  const json = await cli([...base, "--expect", f.bad, "--json"]);
  assert.equal(json.code, ExitCode.MISMATCH);
  const report = JSON.parse(json.out);
  assert.equal(report.expect.length, 1);
  assert.equal(report.expect[0].index, 0);
  assert.equal(report.expect[0].match, false);
  assert.match(report.expect[0].message, /Mismatched elements: 1 \/ 4/);
  // Without --expect the JSON has no expect key.
  assert.equal("expect" in JSON.parse((await cli([...base, "--json"])).out), false);
  // A missing reference is a file error.
  const missing = await cli([...base, "--expect", `${f.dir}/none.npy`]);
  assert.equal(missing.code, ExitCode.FILE);
  assert.match(missing.err, /--expect 1: .*none\.npy is not a readable file/);
});

Deno.test("cli run --expect on a shared-library handler: the child's exit code 7 comes back", async () => {
  using f = files();
  const lib = buildDemoLibrary();
  const args = ["--arg", f.x, "--arg", "f32[2,2]=0", "--ret", "like:0", "--attr", "alpha=f32:2.5"];
  const ok = await cli(["run", lib, "demo_saxpy", ...args, "--expect", f.good]);
  assert.equal(ok.code, ExitCode.OK, ok.err);
  assert.match(ok.out, /result 0 matches /);
  const bad = await cli(["run", lib, "demo_saxpy", ...args, "--expect", f.bad]);
  assert.equal(bad.code, ExitCode.MISMATCH, bad.err);
  assert.match(bad.err, /\[1, 0\]: 7\.5 vs 7\.6/);
});

Deno.test("cli run --ret like:N and --json's layout: flat C order, complex as [re, im] pairs", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "cli_like" });
  try {
    Deno.writeTextFileSync(
      `${dir}/conj.ts`,
      `import { DataType, Ffi } from "${MOD}";\n` +
        "export const conj = Ffi.bind().arg(DataType.C64).ret(DataType.C64).to((z, out) => {\n" +
        "  const zs = z.typed(), o = out.typed();\n" +
        "  for (let i = 0; i < zs.length; i += 2) { o[i] = zs[i]!; o[i + 1] = -zs[i + 1]!; }\n" +
        "});\n",
    );
    const z = complex64([1, 2, 3, 4, 5, 6], [1, -1, 0, 2, 0.5, 0], [2, 3]);
    saveNpy(`${dir}/z.npy`, z);
    const r = await cli([
      "run",
      `${dir}/conj.ts`,
      "conj",
      "--arg",
      `${dir}/z.npy`,
      "--ret",
      "like:0",
      "--json",
    ]);
    assert.equal(r.code, ExitCode.OK, r.err);
    const result = JSON.parse(r.out).results[0];
    assert.equal(result.dtype, "c64");
    assert.deepEqual(result.shape, [2, 3]);
    assert.deepEqual(result.values, [[1, -1], [2, 1], [3, 0], [4, -2], [5, -0.5], [6, 0]]);
    // An inline argument's type and shape are known when the command line is parsed.
    const inline = await cli([
      "run",
      `${dir}/conj.ts`,
      "conj",
      "--arg",
      "c64[2]=1+2j,3",
      "--ret",
      "like:0",
    ]);
    assert.equal(inline.code, ExitCode.OK, inline.err);
    assert.match(inline.out, /^result 0: c64\[2\]\n/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("cli run: --expect, --rtol, --atol and like:N are checked when parsed", () => {
  const usage = (argv: string[], re: RegExp) =>
    assert.throws(
      () => parseCommandLine(argv),
      (e: unknown) => e instanceof FfiError && re.test(e.message),
    );
  const run = ["run", "lib.so", "h"];
  const p = parseCommandLine([...run, "--arg", "f32[2,3]=1", "--ret", "like:0"]);
  assert.ok(p.command === "run");
  assert.deepEqual(p.rets, [{ kind: "buffer", dtype: DataType.F32, dims: [2, 3] }]);
  const npy = parseCommandLine([
    ...run,
    "--arg",
    "x.npy",
    "--ret",
    "like:0",
    "--expect",
    "r.npy",
    "--rtol",
    "1e-3",
  ]);
  assert.ok(npy.command === "run");
  assert.deepEqual(npy.rets, [{ kind: "like", arg: 0 }]);
  assert.deepEqual(npy.expects, ["r.npy"]);
  assert.equal(npy.rtol, 1e-3);
  usage([...run, "--ret", "like:0"], /--ret 1: like:0 names argument 0, but there are 0 --args/);
  usage([...run, "--arg", "token", "--ret", "like:0"], /argument 0 is a token/);
  usage([...run, "--ret", "like:x"], /like:N takes an argument's index N, counted from 0/);
  usage([...run, "--ret", "f32", "--expect", "r.txt"], /'r\.txt' must be a \.npy file/);
  usage([...run, "--expect", "r.npy"], /1 --expect file for 0 results/);
  usage([...run, "--ret", "token", "--expect", "r.npy"], /result 1 is a token/);
  usage(
    [...run, "--ret", "f32", "--expect", "r.npy", "--rtol", "-1"],
    /--rtol '-1': expected a number/,
  );
  usage([...run, "--ret", "f32", "--atol", "0.1"], /--rtol and --atol go with --expect/);
});
