import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import { DataType, ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { loadNpy, saveNpy } from "../src/npy.ts";
import { type CliIo, embeddedRuntime, ExitCode, main, queryMetadata } from "../cli.ts";
import { _decode, _encode, _moduleHandler } from "../src/cli/embedded.ts";
import { NativeHandler } from "../src/runtime/handler_library.ts";

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

async function cli(argv: string[], io: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    progress: { sink: { writeSync: (p) => p.length, isTerminal: () => false } },
    runtime: embeddedRuntime({ probe: { timeoutMs: 1500 } }),
    ...io,
  });
  return { code, out: out.join(""), err: err.join("") };
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
    /returned without filling in the metadata \(not a handler\); 'inspect /,
  );
  // A sanitizer build (tests/sanitize.sh) reports the fault and exits with 1 instead.
  const crash = await cli(["run", probe, "probe_crashes"]);
  assert.equal(crash.code, ExitCode.LIBRARY);
  assert.match(
    crash.err,
    /'probe_crashes' ended the query process \((signal SIGSEGV|exit code 1)\)/,
  );
  const cuda = await cli(["run", lib, "demo_saxpy", "--platform", "cuda"]);
  assert.equal(cuda.code, ExitCode.UNAVAILABLE);
  assert.match(cuda.err, /--platform cuda is not available/);
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/h.ts`, "export function scale() {}\nexport const n = 1;\n");
    const fn = await cli(["run", `${dir}/h.ts`, "scale"]);
    assert.equal(fn.code, ExitCode.LIBRARY);
    assert.match(fn.err, /'scale' in .* is a plain function: export a handler bound/);
    const n = await cli(["run", `${dir}/h.ts`, "n"]);
    assert.equal(n.code, ExitCode.LIBRARY);
    assert.match(n.err, /'n' in .* is not a handler/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  const ptr = Deno.UnsafePointer.create(0x1000n)!;
  assert.equal(_moduleHandler("m.ts", "h", { pointer: ptr }).pointer, ptr);
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
    /^skipped probe_crashes: 'probe_crashes' ended the query process \((signal SIGSEGV|exit code 1)\)$/m,
  );
  assert.match(
    r.out,
    /^skipped probe_exits: 'probe_exits' ended the query process \(exit code 3\)$/m,
  );
  assert.match(r.out, /^skipped probe_hangs: 'probe_hangs' did not answer .* within 1500 ms$/m);
  const j = JSON.parse((await cli(["inspect", "--json", lib])).out);
  assert.deepEqual(j.handlers, [{
    symbol: "probe_handler",
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
    const raw = _encode(dtype, shape, values);
    assert.deepEqual(
      [..._decode(dtype, raw) as ArrayLike<number | bigint> & Iterable<unknown>],
      values,
    );
  }
  assert.throws(() => _encode(DataType.F32, [2], [1]), /1 values for the 2 elements of F32\[2\]/);
});
