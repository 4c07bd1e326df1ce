/**
 * The command line on the C handler library: `inspect` lists its handlers,
 * `run` calls them with inline arrays, attributes, .npy files, a stateful
 * instance and timing; then on TS handlers exported by examples/handlers.ts. Each command runs as a subprocess, as from a shell:
 *
 *   deno task cli inspect libdemo_handlers.so
 *   deno task cli run libdemo_handlers.so demo_saxpy --arg f32[2,3]=1,2,3,4,5,6 \
 *     --arg f32[2,3]=10 --ret f32[2,3] --attr alpha=f32:2.5
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/cli_demo.ts
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { saveNpy } from "../src/npy.ts";
import { DataType } from "../mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

const lib = buildDemoLibrary();
const cliPath = fileURLToPath(new URL("../cli.ts", import.meta.url));
const dir = Deno.makeTempDirSync({ prefix: "cli_demo_" });

async function cli(...args: string[]): Promise<void> {
  await cliExpecting(0, "", ...args);
}

/** Runs the command line, printing the transcript; `why` says why a failure is expected. */
async function cliExpecting(expected: number, why: string, ...args: string[]): Promise<void> {
  const shown = args.map((a) => a.replace(lib, "libdemo_handlers.so").replace(dir, "<tmp>"));
  if (why) console.log(`# expected to fail: ${why}`);
  console.log(`$ cli ${shown.join(" ")}`);
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-ffi",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      cliPath,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  console.log(text.replaceAll(lib, "libdemo_handlers.so").replaceAll(dir, "<tmp>").trimEnd());
  console.log(
    r.code === expected
      ? `(exit code ${r.code}${expected !== 0 ? ", as expected" : ""})\n`
      : `(exit code ${r.code}, expected ${expected})\n`,
  );
  if (r.code !== expected) Deno.exitCode = 1;
}

try {
  await cli("inspect", lib);
  await cli(
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
  );
  saveNpy(`${dir}/x.npy`, {
    dtype: DataType.F32,
    shape: [1000],
    data: new Float32Array(1000).fill(1),
  });
  await cli(
    "run",
    lib,
    "demo_sum_async",
    "--arg",
    `${dir}/x.npy`,
    "--ret",
    "f32[1]",
    "--repeat",
    "100",
  );
  await cli(
    "run",
    lib,
    "demo_saxpy",
    "--arg",
    `${dir}/x.npy`,
    "--arg",
    `${dir}/x.npy`,
    "--ret",
    "f32[1000]",
    "--out",
    `${dir}/y.npy`,
    "--attr",
    "alpha=f32:3",
  );
  await cli(
    "run",
    lib,
    "demo_counter_execute",
    "--instantiate",
    "demo_counter_instantiate",
    "--attr",
    "start=i64:41",
    "--ret",
    "s64",
    "--json",
  );
  await cliExpecting(
    1,
    "demo_saxpy needs two arguments",
    "run",
    lib,
    "demo_saxpy",
    "--arg",
    "f32[2]=1,2",
    "--ret",
    "f32[2]",
  );
  // TS handlers: a module's exports (examples/handlers.ts), a handler and a stateful bundle.
  const handlers = fileURLToPath(new URL("./handlers.ts", import.meta.url));
  await cli(
    "run",
    handlers,
    "scale",
    "--arg",
    "f32[2,2]=1,2,3,4",
    "--ret",
    "f32[2,2]",
    "--attr",
    "alpha=f32:2.5",
  );
  await cli("run", handlers, "counter", "--attr", "start=i64:41", "--ret", "s64", "--repeat", "3");
} finally {
  Deno.removeSync(dir, { recursive: true });
}
