/**
 * The command line on a Python extension module's handlers: `inspect
 * --python-module` and `run --python-module` on jaxlib's LAPACK (needs jax,
 * else ignored with the reason), and the parsing of their options.
 */
import assert from "node:assert/strict";
import { runDeno } from "./_child.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";
import { _pythonModuleArgs } from "../src/cli/python_module.ts";

const ignore = XLA_SKIP !== undefined;
const cli = new URL("../cli.ts", import.meta.url);
const LAPACK = "jaxlib.cpu._lapack";
const GETRF = [
  "lapack_sgetrf_ffi",
  "--arg",
  "f32[2,2]=4,6,3,3",
  "--ret",
  "f32[2,2]",
  "--ret",
  "s32[2]",
  "--ret",
  "s32",
];

Deno.test("cli python module: --python-module options are taken out, the module in the target's place", () => {
  assert.equal(_pythonModuleArgs(["run", "lib.so", "h"]), undefined);
  assert.equal(_pythonModuleArgs(["help", "--python-module", "m"]), undefined);
  assert.deepEqual(
    _pythonModuleArgs(["run", "--python-module", "a.b", "--initialize=init", "h", "--ret", "f32"]),
    {
      command: "run",
      module: "a.b",
      initialize: "init",
      platform: undefined,
      argv: ["run", "a.b", "h", "--ret", "f32"],
    },
  );
  assert.deepEqual(
    _pythonModuleArgs(["inspect", "--json", "--python-module=m", "--module-platform", "CUDA"]),
    {
      command: "inspect",
      module: "m",
      initialize: undefined,
      platform: "CUDA",
      argv: ["inspect", "--json"],
    },
  );
  assert.deepEqual(
    _pythonModuleArgs(["fuzz", "--python-module", "a.b", "h", "--runs", "5"]),
    {
      command: "fuzz",
      module: "a.b",
      initialize: undefined,
      platform: undefined,
      argv: ["fuzz", "a.b", "h", "--runs", "5"],
    },
  );
  assert.throws(
    () => _pythonModuleArgs(["inspect", "--python-module", "m", "lib.so"]),
    /takes no library path, got 'lib.so'/,
  );
  assert.throws(
    () => _pythonModuleArgs(["run", "--python-module"]),
    /--python-module needs a value/,
  );
  assert.throws(
    () => _pythonModuleArgs(["run", "--python-module", "a", "--python-module", "b"]),
    /--python-module is given more than once/,
  );
});

Deno.test({
  name: xlaName("cli python module: inspect lists LAPACK's handlers with API version and traits"),
  ignore,
  async fn() {
    const r = await runDeno(cli, ["inspect", "--python-module", LAPACK], { timeoutMs: 180_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^jaxlib\.cpu\._lapack \(.*_lapack.*\.so\): \d+ XLA FFI handlers for cpu\n/,
    );
    assert.match(r.stdout, /\nhandler +api +traits\n/);
    assert.match(r.stdout, /\nlapack_sgetrf_ffi +0\.\d+ +-\n/);
    const j = await runDeno(cli, ["inspect", "--python-module", LAPACK, "--json"], {
      timeoutMs: 180_000,
    });
    assert.equal(j.code, 0, j.stderr);
    const out = JSON.parse(j.stdout);
    assert.equal(out.module, LAPACK);
    assert.deepEqual(out.platforms, ["cpu"]);
    assert.deepEqual(out.skipped, []);
    const getrf = out.handlers.find((h: { name: string }) => h.name === "lapack_dgetrf_ffi");
    assert.match(getrf.apiVersion, /^0\.\d+$/);
    assert.deepEqual(getrf.traits, []);
  },
});

Deno.test({
  name: xlaName(
    "cli python module: run LAPACK sgetrf with --initialize; without, a crash and a hint",
  ),
  ignore,
  async fn() {
    const ok = await runDeno(
      cli,
      ["run", "--python-module", LAPACK, "--initialize", "initialize", ...GETRF],
      { timeoutMs: 180_000 },
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /result 0: f32\[2,2\]\n\[\[ *6\.0, 0\.6666667\],\n \[ *3\.0, +1\.0\]\]\n/,
    );
    assert.match(ok.stdout, /result 1: s32\[2\]\n\[2, 2\]\nresult 2: s32\[\]\n0\n/);
    const crash = await runDeno(cli, ["run", "--python-module", LAPACK, ...GETRF], {
      timeoutMs: 180_000,
    });
    assert.equal(crash.code, 6, crash.stderr);
    // Under AddressSanitizer (abort_on_error) the child reports the SEGV and aborts.
    const signal = Deno.env.get("XLA_FFI_DENO_SANITIZE") !== undefined ? "SIGABRT" : "SIGSEGV";
    assert.match(
      crash.stderr,
      new RegExp(`handler 'jaxlib\\.cpu\\._lapack:lapack_sgetrf_ffi' crashed: signal ${signal}`),
    );
    assert.match(crash.stderr, /the command line runs a Python module's handlers in a child/);
    assert.match(crash.stderr, /hint: .*jaxlib\.cpu\._lapack needs --initialize initialize/);
    const missing = await runDeno(
      cli,
      ["run", "--python-module", LAPACK, "lapack_sgetrf", "--arg", "f32[2,2]=1"],
      { timeoutMs: 180_000 },
    );
    assert.equal(missing.code, 4, missing.stderr);
    assert.match(
      missing.stderr,
      /'lapack_sgetrf' is not a handler of the Python module jaxlib\.cpu\._lapack \(did you mean 'lapack_sgetrf_ffi'\?\)/,
    );
    const noModule = await runDeno(cli, ["inspect", "--python-module", "no_such_module_x"], {
      timeoutMs: 180_000,
    });
    assert.equal(noModule.code, 5, noModule.stderr);
    assert.match(noModule.stderr, /no_such_module_x/);
  },
});

Deno.test({
  name: xlaName("cli python module: fuzz --python-module names a module or handler it cannot take"),
  ignore,
  async fn() {
    const noModule = await runDeno(cli, ["fuzz", "--python-module", "no_such_module_x", "h"], {
      timeoutMs: 180_000,
    });
    assert.equal(noModule.code, 4, noModule.stderr);
    assert.match(
      noModule.stderr,
      /error: The isolated process could not take the handlers of the Python module no_such_module_x: ModuleNotFoundError/,
    );
    const noHandler = await runDeno(
      cli,
      ["fuzz", "--python-module", "jaxlib.cpu._sparse", "nope", "--runs", "1"],
      { timeoutMs: 180_000 },
    );
    assert.equal(noHandler.code, 4, noHandler.stderr);
    assert.match(noHandler.stderr, /error: jaxlib\.cpu\._sparse registers no handler "nope"/);
    const stateful = await runDeno(
      cli,
      ["fuzz", "--python-module", "jaxlib.cpu._sparse", "h", "--instantiate", "i"],
      { timeoutMs: 180_000 },
    );
    assert.equal(stateful.code, 2, stateful.stderr);
    assert.match(stateful.stderr, /--instantiate and --type are for a shared library's handlers/);
  },
});

Deno.test("cli python module: without the permissions to host Python, a usage error naming them", async () => {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", new URL(cli).pathname, "inspect", "--python-module", LAPACK],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 2);
  const err = new TextDecoder().decode(r.stderr);
  assert.match(
    err,
    /'inspect --python-module' hosts Python and needs --allow-env .*--allow-run --allow-ffi/,
  );
});
