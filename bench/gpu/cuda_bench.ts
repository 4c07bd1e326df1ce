/**
 * GPU benches of the CUDA bindings, the TypeScript side of
 * bench/gpu/driver_bench.c: the same measurements in the same format, one
 * line per metric (`BENCH <name> <value>`), so tests/gpu/run.sh can print
 * the ratios of one run.
 *
 * Run: `deno run --allow-ffi --allow-read --allow-env bench/gpu/cuda_bench.ts [MiB=64] [launches=20000]`
 *
 * Under `deno bench` it registers a few `Deno.bench` cases, ignored where
 * there is no CUDA device.
 *
 * @module
 */
import {
  Context,
  cudaAvailable,
  cudaUnavailableReason,
  DeviceMemory,
  type Kernel,
  launch,
  Module,
  Stream,
} from "../../src/cuda/mod.ts";

const PTX = new URL("../../examples/kernels/saxpy.ptx", import.meta.url);
const REPS = 15;
const LAUNCH_REPS = 7;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : 0.5 * (s[m - 1]! + s[m]!);
}

function timeCopies(bytes: number, copy: () => void): number {
  for (let i = 0; i < 3; i++) copy();
  const t: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    copy();
    t.push((performance.now() - t0) / 1e3);
  }
  return bytes / 1e9 / median(t);
}

function timeLaunches(launches: number, stream: Stream, one: (i: number) => void): number {
  for (let i = 0; i < 1000; i++) one(i);
  stream.synchronize();
  const t: number[] = [];
  for (let r = 0; r < LAUNCH_REPS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < launches; i++) one(i);
    stream.synchronize();
    t.push((performance.now() - t0) * 1e3 / launches);
  }
  return median(t);
}

/**
 * Runs the benches and prints `BENCH <name> <value>` lines: h2d_gbps,
 * d2h_gbps, d2d_gbps, launch_empty_us, launch_saxpy_us.
 */
export function runCudaBench(mib = 64, launches = 20000): void {
  const bytes = mib * 2 ** 20;
  using ctx = Context.primary(0);
  const host = new Uint8Array(bytes).fill(1);
  using a = DeviceMemory.alloc(bytes);
  using b = DeviceMemory.alloc(bytes);
  console.log(`BENCH h2d_gbps ${timeCopies(bytes, () => a.copyFromHost(host)).toFixed(3)}`);
  console.log(`BENCH d2h_gbps ${timeCopies(bytes, () => a.copyToHost(host)).toFixed(3)}`);
  const d2d = timeCopies(bytes, () => {
    b.copyFromDevice(a);
    ctx.synchronize();
  });
  console.log(`BENCH d2d_gbps ${d2d.toFixed(3)}`);

  using mod = Module.load(Deno.readFileSync(PTX));
  const empty: Kernel = mod.kernel("empty", []);
  const saxpy: Kernel = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
  using stream = Stream.create();
  const cfgEmpty = { grid: 1, block: 32, stream };
  const cfgSaxpy = { grid: 1, block: 256, stream };
  const e = timeLaunches(launches, stream, () => launch(empty, cfgEmpty));
  console.log(`BENCH launch_empty_us ${e.toFixed(3)}`);
  const s = timeLaunches(launches, stream, (i) => launch(saxpy, cfgSaxpy, i & 7, a, b, 256));
  console.log(`BENCH launch_saxpy_us ${s.toFixed(3)}`);
}

if (import.meta.main) {
  if (!cudaAvailable()) {
    console.error(`no CUDA device: ${cudaUnavailableReason()}`);
    Deno.exit(2);
  }
  runCudaBench(Number(Deno.args[0] ?? 64), Number(Deno.args[1] ?? 20000));
} else {
  const ok = cudaAvailable();
  let setup: { launchEmpty: () => void; launchSaxpy: () => void } | undefined;
  const get = () => {
    if (setup) return setup;
    Context.primary(0); // kept for the process's life
    const mod = Module.load(Deno.readFileSync(PTX));
    const empty = mod.kernel("empty", []);
    const saxpy = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
    const stream = Stream.create();
    const x = DeviceMemory.alloc(1024);
    const cfg = { grid: 1, block: 256, stream };
    return setup = {
      launchEmpty: () => launch(empty, cfg),
      launchSaxpy: () => launch(saxpy, cfg, 2, x, x, 256),
    };
  };
  Deno.bench({ name: "cuda launch: empty kernel", ignore: !ok, fn: () => get().launchEmpty() });
  Deno.bench({ name: "cuda launch: saxpy, 4 args", ignore: !ok, fn: () => get().launchSaxpy() });
}
