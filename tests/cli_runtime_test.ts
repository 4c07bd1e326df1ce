import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import { DataType, ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { loadNpy, saveNpy } from "../src/npy.ts";
import { ExitCode } from "../src/cli/args.ts";
import { embeddedRuntime } from "../src/cli/embedded.ts";
import { type CliIo, queryMetadata } from "../src/cli/main.ts";
import { _decode, _moduleHandler } from "../src/cli/embedded.ts";
import { encodeValues } from "../src/spec/grammar.ts";
import { NativeHandler } from "../src/runtime/handler_library.ts";
import { cudaUnavailableReason } from "../src/cuda/mod.ts";
import { runDeno } from "./_child.ts";
import { captureCli } from "./_cli_capture.ts";

const DEMO = () =>
  buildSharedLibrary({
    name: "demo_handlers",
    sources: [new URL("../examples/native/demo_handlers.c", import.meta.url)],
  });
const PROBE = () =>
  buildSharedLibrary({
    name: "cli_probe",
    sources: [new URL("../native/tests/cli_probe.c", import.meta.url)],
  });

function cli(argv: string[], io: Partial<CliIo> = {}) {
  return captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 1500 } }), ...io });
}

Deno.test("run: a C handler with inline arrays and an f32 attribute", async () => {
  const lib = DEMO();
  const r = await cli([
    "run",
    lib,
    "demo_saxpy",
    "--arg",
    "f32[2,3]=1,2,3,4,5,6",
    "--arg",
    "f32[2,3]=10",
    "--ret",
    "f32[2,3]",
    "--attr",
    "alpha=f32:2.5",
  ]);
  assert.equal(r.code, ExitCode.OK, r.err);
  assert.equal(r.out, "result 0: f32[2,3]\n[[12.5, 15.0, 17.5],\n [20.0, 22.5, 25.0]]\n");
});

Deno.test("run: async handler, --repeat timing, --json", async () => {
  const r = await cli([
    "run",
    DEMO(),
    "demo_sum_async",
    "--arg",
    "f32[4]=1,2,3,4",
    "--ret",
    "f32[1]",
    "--repeat",
    "20",
    "--threads",
    "2",
    "--json",
  ]);
  assert.equal(r.code, ExitCode.OK, r.err);
  const j = JSON.parse(r.out);
  assert.deepEqual(j.results[0].values, [10]);
  assert.equal(j.timing.calls, 20);
  assert.ok(j.timing.minMs > 0 && j.timing.minMs <= j.timing.medianMs);
});

Deno.test("run: .npy in and out, through the runtime", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    saveNpy(`${dir}/x.npy`, {
      dtype: DataType.F32,
      shape: [3],
      data: new Float32Array([1, 2, 3]),
    });
    const r = await cli([
      "run",
      DEMO(),
      "demo_saxpy",
      "--arg",
      `${dir}/x.npy`,
      "--arg",
      "f32[3]=0.5",
      "--ret",
      "f32[3]",
      "--out",
      `${dir}/y.npy`,
      "--attr",
      "alpha=f32:-1",
    ]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.equal(r.out, `result 0: f32[3] written to ${dir}/y.npy\n`);
    const y = loadNpy(`${dir}/y.npy`);
    assert.deepEqual([...y.data as Float32Array], [-0.5, -1.5, -2.5]);
    Deno.writeTextFileSync(`${dir}/bad.npy`, "not npy");
    const bad = await cli(["run", DEMO(), "demo_saxpy", "--arg", `${dir}/bad.npy`]);
    assert.equal(bad.code, ExitCode.FILE);
    assert.match(bad.err, /bad\.npy/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("run: attributes of every kind reach the handler, sorted, nested", async () => {
  const r = await cli([
    "run",
    DEMO(),
    "demo_describe_attrs",
    "--ret",
    "u8[256]",
    "--attr",
    "mode=reflect",
    "--attr",
    "alpha=f32:2.5",
    "--attr",
    "axes=i64[]:0,2",
    "--attr",
    "cfg.scale=f64:2",
    "--attr",
    "cfg.on=bool:true",
    "--attr",
    "n=u8:7",
    "--json",
  ]);
  assert.equal(r.code, ExitCode.OK, r.err);
  const bytes = Uint8Array.from(JSON.parse(r.out).results[0].values as number[]);
  const text = new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  assert.equal(
    text,
    "alpha: f32 2.5\naxes: s64[] [0, 2]\ncfg: dictionary\n  on: pred true\n  scale: f64 2\n" +
      'mode: string "reflect"\nn: u8 7\n',
  );
});

Deno.test("run: handler errors, stages, not-a-handler, module targets", async () => {
  const lib = DEMO();
  const failed = await cli(["run", lib, "demo_saxpy", "--arg", "f32[1]=1", "--ret", "f32[1]"]);
  assert.equal(failed.code, ExitCode.HANDLER_ERROR);
  assert.equal(
    failed.err,
    "error: handler 'demo_saxpy' failed (INVALID_ARGUMENT): saxpy: 2 args, 1 result\n",
  );
  const stage = await cli(["run", lib, "demo_counter_instantiate", "--stage", "execute"]);
  assert.equal(stage.code, ExitCode.HANDLER_ERROR);
  assert.match(stage.err, /called outside the instantiate stage/);
  const inst = await cli([
    "run",
    lib,
    "demo_counter_instantiate",
    "--stage",
    "instantiate",
    "--attr",
    "start=i64:5",
  ]);
  assert.equal(inst.code, ExitCode.OK, inst.err);
  const noState = await cli(["run", lib, "demo_counter_execute", "--ret", "s64"]);
  assert.equal(noState.code, ExitCode.HANDLER_ERROR);
  assert.match(noState.err, /FAILED_PRECONDITION/);
  const counted = await cli([
    "run",
    lib,
    "demo_counter_execute",
    "--instantiate",
    "demo_counter_instantiate",
    "--attr",
    "start=i64:41",
    "--ret",
    "s64",
    "--repeat",
    "3",
    "--json",
  ]);
  assert.equal(counted.code, ExitCode.OK, counted.err);
  assert.deepEqual(JSON.parse(counted.out).results[0].values, [44]);
  const badInst = await cli([
    "run",
    lib,
    "demo_counter_execute",
    "--instantiate",
    "demo_saxpy",
    "--ret",
    "s64",
  ]);
  assert.equal(badInst.code, ExitCode.LIBRARY);
  assert.match(badInst.err, /--instantiate demo_saxpy failed \(INVALID_ARGUMENT\)/);
  const huge = await cli(["run", lib, "demo_saxpy", "--ret", "f32[1000000,1000000]"]);
  assert.equal(huge.code, ExitCode.LIBRARY);
  assert.match(
    huge.err,
    /--ret 1: 4000000000000 bytes for \[1000000,1000000\] cannot be allocated/,
  );
  const probe = PROBE();
  const notHandler = await cli(["run", probe, "probe_returns_null"]);
  assert.equal(notHandler.code, ExitCode.LIBRARY);
  assert.match(
    notHandler.err,
    /returned without filling in the XLA FFI metadata: not a handler; 'inspect /,
  );
  // A sanitizer build (tests/sanitize.sh) reports the fault and exits with 1 instead.
  const crash = await cli(["run", probe, "probe_crashes"]);
  assert.equal(crash.code, ExitCode.LIBRARY);
  assert.match(
    crash.err,
    /'probe_crashes' ended the process running it before the call \((signal SIGSEGV|exit code 1)\): its metadata query or set-up crashed/,
  );
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/h.ts`, "export function scale() {}\nexport const n = 1;\n");
    const fn = await cli(["run", `${dir}/h.ts`, "scale"]);
    assert.equal(fn.code, ExitCode.LIBRARY);
    assert.match(fn.err, /'scale' in .* is a plain function: export a handler bound/);
    const n = await cli(["run", `${dir}/h.ts`, "n"]);
    assert.equal(n.code, ExitCode.LIBRARY);
    assert.match(
      n.err,
      /'n' in .* is not a handler \(an object with an XLA_FFI_Handler pointer\) or a handler bundle/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  const ptr = Deno.UnsafePointer.create(0x1000n)!;
  assert.equal((_moduleHandler("m.ts", "h", { pointer: ptr }) as NativeHandler).pointer, ptr);
  const stages = _moduleHandler("m.ts", "b", { execute: { pointer: ptr }, prepare: null });
  assert.ok(!(stages instanceof NativeHandler) && stages.execute.name === "b.execute");
  assert.throws(
    () => _moduleHandler("m.ts", "b", { execute: { pointer: ptr }, prepare: 3 }),
    /'b' in m\.ts: its prepare stage is not a handler/,
  );
  const h = new NativeHandler(ptr, "h");
  assert.equal(_moduleHandler("m.ts", "h", h), h);
});

Deno.test("inspect: handlers answer; crashing, exiting, hanging exports are skipped", async () => {
  const lib = PROBE();
  const r = await cli(["inspect", lib]);
  assert.equal(r.code, ExitCode.OK, r.err);
  assert.match(r.out, /^probe_handler\s+0\.1\s+command_buffer_compatible$/m);
  assert.ok(!/^probe_returns_null /m.test(r.out));
  assert.match(
    r.out,
    /^3 exports skipped: they ended the query process or did not answer \(--verbose lists them\)$/m,
  );
  const v = await cli(["inspect", "--verbose", lib]);
  assert.match(
    v.out,
    /^skipped probe_crashes: ended the query process \((signal SIGSEGV|exit code 1)\)$/m,
  );
  assert.match(v.out, /^skipped probe_exits: ended the query process \(exit code 3\)$/m);
  assert.match(v.out, /^skipped probe_hangs: did not answer .* within 1500 ms$/m);
  const j = JSON.parse((await cli(["inspect", "--json", lib])).out);
  assert.deepEqual(j.handlers, [{
    symbol: "probe_handler",
    name: "probe_handler",
    apiVersion: "0.1",
    traits: ["command_buffer_compatible"],
  }]);
  assert.deepEqual(
    j.skipped.map((s: { symbol: string }) => s.symbol).sort(),
    ["probe_crashes", "probe_exits", "probe_hangs"],
  );
  const one = await queryMetadata(lib, "probe_handler");
  assert.deepEqual(one, { apiVersion: { major: 0, minor: 1 }, traits: 1 });
  await assert.rejects(
    queryMetadata(lib, "probe_returns_null"),
    (e: unknown) => e instanceof FfiError && e.code === ErrorCode.NOT_FOUND,
  );
});

Deno.test("element encoding round-trips through the buffer formats", () => {
  const cases: [DataType, number[], (number | bigint)[]][] = [
    [DataType.BF16, [1], [1.5, -2]],
    [DataType.F8E4M3FN, [2], [0.5, 448]],
    [DataType.S4, [3], [-8, 7, -1]],
    [DataType.U2, [2], [3, 0]],
    [DataType.S64, [2], [-(2n ** 63n), 5n]],
    [DataType.C64, [1], [1.5, -2]],
  ];
  for (const [dtype, dims, values] of cases) {
    const shape = dtype === DataType.BF16 ? [2] : dims;
    const raw = encodeValues(dtype, shape, values);
    assert.deepEqual(
      [..._decode(dtype, raw) as ArrayLike<number | bigint> & Iterable<unknown>],
      values,
    );
  }
  assert.throws(
    () => encodeValues(DataType.F32, [2], [1]),
    /1 values for the 2 elements of F32\[2\]/,
  );
});

const HANDLERS = fileURLToPath(new URL("../examples/handlers.ts", import.meta.url));

/**
 * Runs the command lines in one child process (tests/_cli_in_child.ts) and
 * checks it ended by itself with every TS handler and state released.
 */
async function tsRuns<K extends string>(
  runs: Record<K, string[]>,
): Promise<Record<K, { code: number; out: string; err: string }>> {
  const r = await runDeno(new URL("./_cli_in_child.ts", import.meta.url), [], {
    stdin: JSON.stringify(Object.values(runs)),
    timeoutMs: 30_000,
  });
  assert.equal(
    r.code,
    0,
    `the process did not end by itself (a TS handler left open?): ${r.stderr}`,
  );
  const { runs: results, stats } = JSON.parse(r.stdout);
  assert.deepEqual(stats, { liveHandlers: 0, liveStates: 0 }, "TS handlers or states left");
  return Object.fromEntries(Object.keys(runs).map((k, i) => [k, results[i]])) as Record<
    K,
    { code: number; out: string; err: string }
  >;
}

Deno.test("run: TS handlers from a module: inline args, attrs, async, --json, --repeat", async () => {
  const r = await tsRuns({
    scale: [
      "run",
      HANDLERS,
      "scale",
      "--arg",
      "f32[2,2]=1,2,3,4",
      "--ret",
      "f32[2,2]",
      "--attr",
      "alpha=f32:2.5",
    ],
    again: [
      "run",
      HANDLERS,
      "scale",
      "--arg",
      "f32[3]=1",
      "--ret",
      "f32[3]",
      "--attr",
      "alpha=f32:-2",
      "--repeat",
      "25",
      "--json",
    ],
    mean: [
      "run",
      HANDLERS,
      "mean",
      "--arg",
      "f64[4]=1,2,3,5",
      "--ret",
      "f64",
      "--repeat",
      "10",
      "--threads",
      "2",
    ],
    attrs: [
      "run",
      HANDLERS,
      "describe",
      "--ret",
      "u8[160]",
      "--attr",
      "mode=reflect",
      "--attr",
      "alpha=f32:2.5",
      "--attr",
      "axes=i64[]:0,2",
      "--attr",
      "cfg.scale=f64:2",
      "--attr",
      "cfg.on=bool:true",
      "--attr",
      "n=u8:7",
      "--json",
    ],
    thrown: [
      "run",
      HANDLERS,
      "scale",
      "--arg",
      "f32[3]=1",
      "--ret",
      "f32[2]",
      "--attr",
      "alpha=f32:1",
    ],
    dtype: [
      "run",
      HANDLERS,
      "scale",
      "--arg",
      "f64[1]=1",
      "--ret",
      "f32[1]",
      "--attr",
      "alpha=f32:1",
    ],
    typo: ["run", HANDLERS, "Scale"],
  });
  assert.equal(r.scale.code, ExitCode.OK, r.scale.err);
  assert.equal(r.scale.out, "result 0: f32[2,2]\n[[ 2.5,  5.0],\n [ 7.5, 10.0]]\n");
  // The same module again: each run has its own module instance.
  assert.equal(r.again.code, ExitCode.OK, r.again.err);
  const j = JSON.parse(r.again.out);
  assert.deepEqual(j.results[0].values, [-2, -2, -2]);
  assert.equal(j.timing.calls, 25);
  assert.equal(j.target, HANDLERS);
  // An async handler (its Promise settles on the JS thread while Runtime.call waits).
  assert.equal(r.mean.code, ExitCode.OK, r.mean.err);
  assert.match(r.mean.out, /^result 0: f64\[\]\n2\.75\ntiming: 10 calls: /);
  assert.equal(r.attrs.code, ExitCode.OK, r.attrs.err);
  const bytes = Uint8Array.from(JSON.parse(r.attrs.out).results[0].values as number[]);
  assert.equal(
    new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0))),
    'alpha: 2.5\naxes: [0, 2]\ncfg:\n  on: true\n  scale: 2\nmode: "reflect"\nn: 7\n',
  );
  // Handler errors: a TS exception and a binding mismatch, with ffi.h's words.
  assert.equal(r.thrown.code, ExitCode.HANDLER_ERROR);
  assert.match(r.thrown.err, /failed \(INVALID_ARGUMENT\): .*x has 3 elements but y has 2/);
  assert.equal(r.dtype.code, ExitCode.HANDLER_ERROR);
  assert.match(r.dtype.err, /Wrong buffer dtype: expected F32 but got F64/);
  assert.equal(r.typo.code, ExitCode.LIBRARY);
  assert.match(r.typo.err, /has no export 'Scale' \(did you mean 'scale'\?\)/);
});

Deno.test("run: TS handler bundles: the instantiate stage, --stage, --instantiate", async () => {
  const r = await tsRuns({
    counted: [
      "run",
      HANDLERS,
      "counter",
      "--attr",
      "start=i64:41",
      "--ret",
      "s64",
      "--repeat",
      "3",
      "--json",
    ],
    inst: [
      "run",
      HANDLERS,
      "counter",
      "--stage",
      "instantiate",
      "--attr",
      "start=i64:1",
    ],
    noPrepare: ["run", HANDLERS, "counter", "--stage", "prepare", "--ret", "s64"],
    noStart: ["run", HANDLERS, "counter", "--ret", "s64"],
    notBundle: [
      "run",
      HANDLERS,
      "counter",
      "--instantiate",
      "scale",
      "--ret",
      "s64",
    ],
    explicit: [
      "run",
      HANDLERS,
      "counter",
      "--instantiate",
      "counter",
      "--attr",
      "start=i64:-5",
      "--ret",
      "s64",
    ],
  });
  // The bundle's instantiate stage runs once; its state counts the calls.
  assert.equal(r.counted.code, ExitCode.OK, r.counted.err);
  assert.deepEqual(JSON.parse(r.counted.out).results[0].values, [44]);
  assert.equal(r.inst.code, ExitCode.OK, r.inst.err);
  assert.equal(r.noPrepare.code, ExitCode.LIBRARY);
  assert.match(
    r.noPrepare.err,
    /'counter' in .* is a handler bundle without a prepare handler \(--stage prepare; it has instantiate, execute\)/,
  );
  assert.equal(r.noStart.code, ExitCode.LIBRARY);
  assert.match(
    r.noStart.err,
    /--instantiate counter\.instantiate failed \(INVALID_ARGUMENT\): \[instantiate\] Wrong number of attributes/,
  );
  assert.equal(r.notBundle.code, ExitCode.LIBRARY);
  assert.match(
    r.notBundle.err,
    /--instantiate scale failed \(INVALID_ARGUMENT\): Wrong execution stage: expected `execute` but got `instantiate`/,
  );
  assert.equal(r.explicit.code, ExitCode.OK, r.explicit.err);
  assert.equal(r.explicit.out, "result 0: s64[]\n-4\n");
});

Deno.test("run: TS handler with .npy in and out", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    saveNpy(`${dir}/x.npy`, {
      dtype: DataType.F32,
      shape: [2, 3],
      data: new Float32Array([1, 2, 3, 4, 5, 6]),
    });
    const r = await tsRuns({
      scaled: [
        "run",
        HANDLERS,
        "scale",
        "--arg",
        `${dir}/x.npy`,
        "--ret",
        "f32[2,3]",
        "--out",
        `${dir}/y.npy`,
        "--attr",
        "alpha=f32:0.5",
      ],
    });
    assert.equal(r.scaled.code, ExitCode.OK, r.scaled.err);
    assert.equal(r.scaled.out, `result 0: f32[2,3] written to ${dir}/y.npy\n`);
    const y = loadNpy(`${dir}/y.npy`);
    assert.deepEqual(y.shape, [2, 3]);
    assert.deepEqual([...y.data as Float32Array], [0.5, 1, 1.5, 2, 2.5, 3]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** Runs cli.ts in a child process with the given environment. */
async function cliProcess(argv: string[], env: Record<string, string>) {
  const r = await runDeno(new URL("../cli.ts", import.meta.url), argv, { env });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

const CUDA_HANDLERS = () =>
  buildSharedLibrary({
    name: "cli_cuda_handlers",
    sources: [
      new URL("../native/tests/cli_cuda_handlers.c", import.meta.url),
      new URL("../native/tests/test_handler_util.h", import.meta.url),
    ],
  });

Deno.test("run --platform cuda without a driver: exit code 5 with the loader's message", async () => {
  const r = await cliProcess(
    ["run", CUDA_HANDLERS(), "cli_cuda_reverse", "--platform", "cuda", "--arg", "f32[2]=1,2"],
    { XLA_FFI_DENO_CUDA: "/nonexistent/libcuda.so.1" },
  );
  assert.equal(r.code, ExitCode.UNAVAILABLE, r.err);
  assert.match(
    r.err,
    /^error: --platform cuda: .*\/nonexistent\/libcuda\.so\.1: cannot open shared object file/,
  );
});

Deno.test("run --platform cuda: device buffers in, results copied back (stand-in driver)", async () => {
  const standin = buildSharedLibrary({
    name: "cuda_standin",
    sources: [new URL("../native/tests/cuda_standin.c", import.meta.url)],
  });
  const lib = CUDA_HANDLERS();
  const env = { XLA_FFI_DENO_CUDA: standin };
  const r = await cliProcess([
    "run",
    lib,
    "cli_cuda_reverse",
    "--platform",
    "cuda",
    "--arg",
    "f32[2,3]=1,2,3,4,5,6",
    "--ret",
    "f32[2,3]",
    "--repeat",
    "3",
    "--json",
  ], env);
  assert.equal(r.code, ExitCode.OK, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.platform, "cuda");
  assert.deepEqual(j.results[0].values, [6, 5, 4, 3, 2, 1]);
  assert.equal(j.timing.calls, 3);
  // The same handler on Host has no stream: XLA's message, exit code 1.
  const host = await cliProcess(
    ["run", lib, "cli_cuda_reverse", "--arg", "f32[2]=1,2", "--ret", "f32[2]"],
    env,
  );
  assert.equal(host.code, ExitCode.HANDLER_ERROR);
  assert.match(host.err, /\(UNIMPLEMENTED\): XLA FFI GPU context is not available/);
  // The handler's error on CUDA, and .npy out from device memory.
  const dir = Deno.makeTempDirSync();
  try {
    const bad = await cliProcess(
      [
        "run",
        lib,
        "cli_cuda_reverse",
        "--platform",
        "cuda",
        "--arg",
        "f32[2]=1,2",
        "--ret",
        "s32[2]",
      ],
      env,
    );
    assert.equal(bad.code, ExitCode.HANDLER_ERROR);
    assert.match(bad.err, /reverse: the result needs the argument's dtype and element count/);
    const out = await cliProcess([
      "run",
      lib,
      "cli_cuda_reverse",
      "--platform",
      "cuda",
      "--arg",
      "s64[3]=7,8,9",
      "--ret",
      "s64[3]",
      "--out",
      `${dir}/r.npy`,
    ], env);
    assert.equal(out.code, ExitCode.OK, out.err);
    assert.deepEqual([...loadNpy(`${dir}/r.npy`).data as BigInt64Array], [9n, 8n, 7n]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

const gpuReason = cudaUnavailableReason();
/** A GPU test's name, with the reason it is ignored when there is no usable GPU. */
const gpuName = (name: string) =>
  gpuReason === undefined
    ? name
    : `${name} (ignored: ${gpuReason.replace(/: Could not open library: .*$/s, "")})`;

Deno.test({
  name: gpuName("GPU: run --platform cuda: device buffers in, results copied back"),
  ignore: gpuReason !== undefined,
  async fn() {
    const r = await cliProcess([
      "run",
      CUDA_HANDLERS(),
      "cli_cuda_reverse",
      "--platform",
      "cuda",
      "--arg",
      "f64[5]=1,2,3,4,5",
      "--ret",
      "f64[5]",
      "--json",
    ], {});
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.deepEqual(JSON.parse(r.out).results[0].values, [5, 4, 3, 2, 1]);
  },
});

Deno.test("inspect: the traits C handlers report (examples/native/demo_handlers.c)", async () => {
  const r = await cli(["inspect", "--json", DEMO()]);
  assert.equal(r.code, ExitCode.OK, r.err);
  const traits = Object.fromEntries(
    (JSON.parse(r.out).handlers as { symbol: string; traits: string[] }[]).map((
      h,
    ) => [h.symbol, h.traits]),
  );
  assert.deepEqual(traits, {
    demo_saxpy: ["command_buffer_compatible"],
    demo_sum_async: [],
    demo_counter_instantiate: [],
    demo_counter_execute: [],
    demo_describe_attrs: [],
  });
  const text = await cli(["inspect", DEMO()]);
  assert.match(text.out, /^demo_saxpy\s+0\.1\s+command_buffer_compatible$/m);
  assert.match(text.out, /^demo_sum_async\s+0\.1\s+-$/m);
});

Deno.test("run: a number sent as a string attribute, or of another type, gets a typed hint", async () => {
  const lib = DEMO();
  const base = ["run", lib, "demo_saxpy", "--arg", "f32[2]=1,2", "--arg", "f32[2]=1", "--ret"];
  const asString = await cli([...base, "f32[2]", "--attr", "alpha=2.5"]);
  assert.equal(asString.code, ExitCode.HANDLER_ERROR);
  assert.equal(
    asString.err,
    "error: handler 'demo_saxpy' failed (INVALID_ARGUMENT): saxpy: missing attribute alpha\n" +
      "hint: attribute alpha=2.5 was sent as a string; a number needs its type, e.g. --attr " +
      "alpha=f32:2.5 (or the type the handler binds: i32, f64, …)\n",
  );
  const scale = (attr: string) => [
    "run",
    HANDLERS,
    "scale",
    "--arg",
    "f32[2]=1,2",
    "--ret",
    "f32[2]",
    "--attr",
    attr,
  ];
  const r = await tsRuns({ string: scale("alpha=2.5"), f64: scale("alpha=f64:2.5") });
  assert.equal(r.string.code, ExitCode.HANDLER_ERROR);
  assert.match(
    r.string.err,
    /Wrong attribute type: expected scalar but got string\nhint: attribute alpha=2\.5 was sent as a string; a number needs its type, e\.g\. --attr alpha=f32:2\.5/,
  );
  assert.equal(r.f64.code, ExitCode.HANDLER_ERROR);
  assert.match(
    r.f64.err,
    /expected F32 but got F64\nhint: attribute alpha was sent as f64; the handler wants f32: --attr alpha=f32:2\.5\n$/,
  );
});

Deno.test("run: ffi.h's diagnostics, run together in XLA's message, are listed one per line after it", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const mod = `${dir}/two_attrs.ts`;
    Deno.writeTextFileSync(
      mod,
      `import { DataType, Ffi } from ${
        JSON.stringify(new URL("../mod.ts", import.meta.url).href)
      };\n` +
        `export const norm = Ffi.bind().arg(DataType.F32).ret(DataType.F32)` +
        `.attr("axis", "i64").attr("eps", "f32").to(() => {});\n`,
    );
    const run = (...attrs: string[]) => [
      "run",
      mod,
      "norm",
      "--arg",
      "f32[2]=1,2",
      "--ret",
      "f32[2]",
      ...attrs.flatMap((a) => ["--attr", a]),
    ];
    const r = await tsRuns({ two: run("axis=-1", "eps=1e-5"), one: run("axis=-1", "eps=f32:1") });
    assert.equal(r.two.code, ExitCode.HANDLER_ERROR);
    const lines = r.two.err.split("\n");
    // XLA's message as it is (ffi.h appends its diagnostics without a separator), then apart.
    assert.deepEqual(lines.slice(0, 6), [
      "error: handler 'norm' failed (INVALID_ARGUMENT): [execute] Failed to decode all FFI " +
      "handler operands (bad operands at: 2, 3)",
      "Diagnostics:",
      "Wrong attribute type: expected scalar but got stringWrong attribute type: expected " +
      "scalar but got string",
      "diagnostics (2; ffi.h writes them without a separator):",
      "  operand 2: Wrong attribute type: expected scalar but got string",
      "  operand 3: Wrong attribute type: expected scalar but got string",
    ]);
    assert.match(lines[6]!, /^hint: attribute axis=-1 was sent as a string;/);
    assert.match(lines[7]!, /^hint: attribute eps=1e-5 was sent as a string;/);
    // One diagnostic: nothing to list apart.
    assert.equal(r.one.code, ExitCode.HANDLER_ERROR);
    assert.doesNotMatch(r.one.err, /^diagnostics /m);
    assert.match(
      r.one.err,
      /\nDiagnostics:\nWrong attribute type: expected scalar but got string\n/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a C handler built against API 0.4: inspect shows 0.4, run gets the codes it read back", async () => {
  const { testHandlersPath } = await import("./_runtime_handlers.ts");
  const lib = testHandlersPath();
  const md = await queryMetadata(lib, "v04_get_code");
  assert.deepEqual(md.apiVersion, { major: 0, minor: 4 });
  const r = await cli(["run", lib, "v04_get_code"]);
  assert.equal(r.code, ExitCode.HANDLER_ERROR);
  assert.match(
    r.err,
    /^error: handler 'v04_get_code' failed \(UNIMPLEMENTED\): read back: created 5, runtime-made 12\n/,
  );
});

Deno.test({
  name:
    "inspect with a configured Python: the version its jaxlib speaks and the handlers it refuses",
  ignore: Deno.env.get("XLA_FFI_DENO_PYTHON") === undefined,
  async fn() {
    const { testHandlersPath } = await import("./_runtime_handlers.ts");
    const lib = testHandlersPath();
    const r = await cli(["inspect", "--json", lib]);
    assert.equal(r.code, ExitCode.OK, r.err);
    const j = JSON.parse(r.out).jaxlib as {
      version: string;
      ffiApi: string;
      refuses: string[];
    };
    assert.match(j.version, /^\d+\.\d+/);
    assert.match(j.ffiApi, /^0\.\d+$/);
    if (j.ffiApi === "0.3") assert.deepEqual(j.refuses.sort(), ["v04_get_code", "v04_inner_code"]);
    if (j.ffiApi === "0.4") assert.deepEqual(j.refuses, []);
    const text = await cli(["inspect", lib]);
    assert.match(
      text.out,
      new RegExp(
        `^jaxlib ${j.version.replaceAll(".", "\\.")} \\(.*\\) speaks XLA FFI API ${
          j.ffiApi.replace(".", "\\.")
        }: `,
        "m",
      ),
    );
  },
});
