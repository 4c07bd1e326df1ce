import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import { DataType, ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { ExitCode, type ParsedRun, usage } from "../src/cli/args.ts";
import type { ArrayData } from "../src/cli/format.ts";
import { unavailableRuntime } from "../src/cli/main.ts";
import type { CallArg, CliRuntime, PreparedCall } from "../src/cli/runtime_api.ts";
import { captureCli } from "./_cli_capture.ts";

const LIB = () =>
  buildSharedLibrary({
    name: "elf_symbols_both",
    sources: [new URL("../native/tests/elf_symbols.c", import.meta.url)],
    linkFlags: ["-Wl,--hash-style=both"],
  });

function cli(argv: string[], runtime?: CliRuntime) {
  return captureCli(argv, { runtime: runtime ?? unavailableRuntime });
}

/**
 * A small TS runtime for the dispatcher's own tests: "scale" multiplies its
 * one inline f32 argument by the `alpha` attribute; "fail" returns an error.
 */
function scaleRuntime(written: Map<string, ArrayData>): CliRuntime {
  return {
    queryMetadata(_lib, symbol) {
      if (symbol === "elf_global_function") {
        return Promise.resolve({ apiVersion: { major: 0, minor: 1 }, traits: 1 });
      }
      return Promise.reject(new FfiError(ErrorCode.NOT_FOUND, `${symbol} is not a handler`));
    },
    prepare(run: ParsedRun, args: readonly CallArg[]): Promise<PreparedCall> {
      const arg = args[0];
      const alpha = run.attrs.entries.get("alpha");
      if (arg?.kind !== "buffer" || arg.dtype !== DataType.F32 || alpha?.kind !== "scalar") {
        return Promise.reject(new FfiError(ErrorCode.INVALID_ARGUMENT, "scale needs x and alpha"));
      }
      let out: number[] = [];
      return Promise.resolve({
        call: () => {
          if (run.handler === "elf_weak_function") {
            return Promise.resolve(
              new FfiError(ErrorCode.INVALID_ARGUMENT, "Wrong number of attributes"),
            );
          }
          out = Array.from(arg.values as ArrayLike<number>).map((v) => v * Number(alpha.value));
          return Promise.resolve(undefined);
        },
        results: () => [{ kind: "buffer", dtype: DataType.F32, dims: arg.dims, values: out }, {
          kind: "token",
        }],
        close() {},
        [Symbol.dispose]() {},
      });
    },
    readNpy(path) {
      if (path.endsWith("three.npy")) return { dtype: DataType.F32, dims: [3], values: [1, 2, 3] };
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${path}: not a .npy file`);
    },
    writeNpy(path, array) {
      written.set(path, array);
    },
  };
}

Deno.test("help and usage errors", async () => {
  const help = await cli([]);
  assert.equal(help.code, ExitCode.OK);
  assert.match(help.out, /^Usage: cli <command>/);
  const runHelp = await cli(["run", "--help"]);
  assert.match(runHelp.out, /--repeat N/);
  // One value fills an array: parsing passes, and the missing library is the error.
  const fill = await cli(["run", "/nonexistent/lib.so", "h", "--arg", "f32[2]=1"]);
  assert.equal(fill.code, ExitCode.LIBRARY);
  assert.match(fill.err, /^error: \/nonexistent\/lib\.so: no such file\n$/);
  const wrong = await cli(["run", "lib.so", "h", "--arg", "f32[2]=1,2,3"]);
  assert.equal(wrong.code, ExitCode.USAGE);
  assert.equal(wrong.err, "error: --arg 1: 3 values for the 2 elements of f32[2]\n");
  assert.equal(wrong.out, "");
});

Deno.test("inspect lists exported functions, then says the metadata query is not available", async () => {
  const lib = LIB();
  const r = await cli(["inspect", lib]);
  assert.equal(r.code, ExitCode.UNAVAILABLE);
  assert.match(r.out, /exported functions \(handler candidates\):\n/);
  assert.match(r.out, / {2}elf_global_function\n/);
  assert.ok(!r.out.includes("elf_hidden_function"));
  assert.match(r.err, /^error: querying handler metadata is not available/);
  const j = await cli(["inspect", "--json", lib]);
  assert.equal(j.code, ExitCode.UNAVAILABLE);
  const obj = JSON.parse(j.out);
  assert.ok(obj.exportedFunctions.includes("elf_protected_function"));
  assert.equal(obj.handlers, null);
  assert.equal(obj.error.code, "UNAVAILABLE");
  await assert.rejects(
    unavailableRuntime.queryMetadata(lib, "elf_global_function"),
    (e: unknown) => e instanceof FfiError && e.code === ErrorCode.UNAVAILABLE,
  );
});

Deno.test("inspect with a runtime: handlers with version and traits", async () => {
  const r = await cli(["inspect", LIB()], scaleRuntime(new Map()));
  assert.equal(r.code, ExitCode.OK);
  assert.match(r.out, /elf_global_function\s+0\.1\s+command_buffer_compatible\n/);
  assert.ok(!r.out.includes("elf_weak_function"));
  const j = JSON.parse((await cli(["inspect", "--json", LIB()], scaleRuntime(new Map()))).out);
  assert.deepEqual(j.handlers, [{
    symbol: "elf_global_function",
    name: "elf_global_function",
    apiVersion: "0.1",
    traits: ["command_buffer_compatible"],
  }]);
});

Deno.test("library and file errors have their exit codes", async () => {
  const missing = await cli(["inspect", "/nonexistent/lib.so"]);
  assert.equal(missing.code, ExitCode.LIBRARY);
  assert.match(missing.err, /\/nonexistent\/lib\.so: no such file/);
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/not.so`, "hello");
    const notElf = await cli(["inspect", `${dir}/not.so`]);
    assert.equal(notElf.code, ExitCode.LIBRARY);
    assert.match(notElf.err, /not\.so: not an ELF file/);
    const lib = LIB();
    const noSym = await cli(["run", lib, "elf_global_functon"]);
    assert.equal(noSym.code, ExitCode.LIBRARY);
    assert.match(noSym.err, /'elf_global_functon' is not an exported function of .*; 'inspect /);
    const near = await cli(["run", lib, "ELF_GLOBAL_FUNCTION"]);
    assert.match(near.err, /did you mean 'elf_global_function'\?/);
    const npy = await cli(["run", lib, "elf_global_function", "--arg", `${dir}/x.npy`]);
    assert.equal(npy.code, ExitCode.FILE);
    assert.match(npy.err, /--arg 1: .*x\.npy/);
    const out = await cli([
      "run",
      lib,
      "elf_global_function",
      "--ret",
      "f32[1]",
      "--out",
      `${dir}/no/y.npy`,
    ]);
    assert.equal(out.code, ExitCode.FILE);
    assert.match(out.err, /--out 1: folder .*\/no of .*y\.npy does not exist/);
    const unavailable = await cli(["run", lib, "elf_global_function", "--arg", "f32[1]=1"]);
    assert.equal(unavailable.code, ExitCode.UNAVAILABLE);
    assert.match(unavailable.err, /running a handler is not available/);
    Deno.writeTextFileSync(`${dir}/handlers.ts`, "export const scale = 1;\n");
    const noExport = await cli(["run", `${dir}/handlers.ts`, "scal"]);
    assert.equal(noExport.code, ExitCode.LIBRARY);
    assert.match(
      noExport.err,
      /has no export 'scal' \(did you mean 'scale'\?\) \(exports: scale\)/,
    );
    const moduleOk = await cli(["run", `${dir}/handlers.ts`, "scale"]);
    assert.equal(moduleOk.code, ExitCode.UNAVAILABLE);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("run with a runtime: results, --out, timing, JSON, handler errors", async () => {
  const lib = LIB();
  const written = new Map<string, ArrayData>();
  const rt = scaleRuntime(written);
  const base = [
    "run",
    lib,
    "elf_global_function",
    "--arg",
    "f32[2,2]=1,2,3,4",
    "--attr",
    "alpha=f32:2.5",
  ];
  const r = await cli([...base, "--ret", "f32[2,2]", "--ret", "token"], rt);
  assert.equal(r.code, ExitCode.OK, r.err);
  assert.equal(r.out, "result 0: f32[2,2]\n[[ 2.5,  5.0],\n [ 7.5, 10.0]]\nresult 1: token\n");
  const timed = await cli([
    ...base,
    "--ret",
    "f32[2,2]",
    "--ret",
    "token",
    "--repeat",
    "5",
    "--out",
    "y.npy",
  ], rt);
  assert.equal(timed.code, ExitCode.OK, timed.err);
  assert.match(
    timed.out,
    /^result 0: f32\[2,2\] written to y\.npy\nresult 1: token\ntiming: 5 calls: median /,
  );
  assert.deepEqual(written.get("y.npy")?.values, [2.5, 5, 7.5, 10]);
  const json = JSON.parse((await cli([...base, "--json", "--repeat", "3"], rt)).out);
  assert.deepEqual(json.results[0], {
    index: 0,
    dtype: "f32",
    shape: [2, 2],
    values: [2.5, 5, 7.5, 10],
  });
  assert.equal(json.timing.calls, 3);
  const failed = await cli([
    "run",
    lib,
    "elf_weak_function",
    "--arg",
    "f32[1]=1",
    "--attr",
    "alpha=f32:1",
  ], rt);
  assert.equal(failed.code, ExitCode.HANDLER_ERROR);
  assert.equal(
    failed.err,
    "error: handler 'elf_weak_function' failed (INVALID_ARGUMENT): Wrong number of attributes\n",
  );
  const failedJson = await cli([
    "run",
    lib,
    "elf_weak_function",
    "--arg",
    "f32[1]=1",
    "--attr",
    "alpha=f32:1",
    "--json",
  ], rt);
  assert.equal(failedJson.code, ExitCode.HANDLER_ERROR);
  assert.deepEqual(JSON.parse(failedJson.out).error, {
    code: "INVALID_ARGUMENT",
    message: "Wrong number of attributes",
  });
  const prepFail = await cli(["run", lib, "elf_global_function"], rt);
  assert.equal(prepFail.code, ExitCode.LIBRARY);
  assert.match(prepFail.err, /scale needs x and alpha/);
});

Deno.test(".npy arguments go through the runtime's reader; its errors are file errors", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const lib = LIB();
    Deno.writeTextFileSync(`${dir}/three.npy`, "x");
    Deno.writeTextFileSync(`${dir}/bad.npy`, "x");
    const base = ["run", lib, "elf_global_function", "--attr", "alpha=f32:2", "--ret", "f32[3]"];
    const rt = scaleRuntime(new Map());
    const ok = await cli([...base, "--arg", `${dir}/three.npy`], rt);
    assert.equal(ok.code, ExitCode.OK, ok.err);
    assert.equal(ok.out, "result 0: f32[3]\n[2.0, 4.0, 6.0]\nresult 1: token\n");
    const bad = await cli([...base, "--arg", `${dir}/bad.npy`], rt);
    assert.equal(bad.code, ExitCode.FILE);
    assert.match(bad.err, /bad\.npy: not a \.npy file/);
    const none = await cli([...base, "--arg", `${dir}/three.npy`]);
    assert.equal(none.code, ExitCode.UNAVAILABLE);
    assert.match(none.err, /reading \.npy files is not available/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the script's process exit code and output", async () => {
  const script = fileURLToPath(new URL("../cli.ts", import.meta.url));
  const res = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", script, "run", "lib.so", "h", "--stage", "later"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(res.code, ExitCode.USAGE);
  assert.match(new TextDecoder().decode(res.stderr), /error: --stage 'later': expected one of/);
});

Deno.test("exit codes: ExitCode, the help text and the command-line guide list the same codes", () => {
  const codes = Object.values(ExitCode).filter((v): v is number => typeof v === "number").sort((
    a,
    b,
  ) => a - b);
  const help = usage();
  const helpCodes = [...help.slice(help.indexOf("Exit codes:")).matchAll(/^ {2}(\d+) +\S/gm)]
    .map((m) => Number(m[1]));
  assert.deepEqual(helpCodes, codes);
  const guide = Deno.readTextFileSync(new URL("../docs/command-line.md", import.meta.url));
  const section = guide.slice(guide.indexOf("## Exit codes"));
  const table = section.slice(section.indexOf("| exit code |"));
  const guideCodes = [...table.slice(0, table.indexOf("\n\n")).matchAll(/^\| (\d+) +\|/gm)]
    .map((m) => Number(m[1]));
  assert.deepEqual(guideCodes, codes);
  // The same wording for the codes whose meaning grew: modules, CUDA.
  assert.match(help, /4 {3}library or module error/);
  assert.match(table, /\| 4 +\| library or module error/);
  assert.match(help, /--platform cuda without a CUDA driver/);
  assert.match(table, /`--platform cuda` without a CUDA driver/);
  assert.match(help, /6 {3}the handler crashed: a fatal signal/);
  assert.match(table, /\| 6 +\| the handler crashed: a fatal signal/);
});
