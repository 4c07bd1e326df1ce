/**
 * XLA:GPU calls a TS handler (run in a child by tests/xla_gpu_test.ts, and
 * by `tests/gpu/run.sh --gpu-only`, whose block of figures shows its last
 * line): jax's CUDA backend hosted with `Xla.open({ platform: "cuda" })`, a
 * handler registered for platform CUDA that gets XLA's stream and launches
 * the saxpy kernel (examples/kernels/saxpy.ptx) on it, asynchronously, in
 * the device's primary context (the one XLA uses); a jitted program uses
 * its result, checked against the same formula in plain jnp.
 *
 * Prints `XLA:GPU: …` with versions, calls and the largest difference, then
 * `ok gpu`. Exits 1 with the reason when anything differs or fails.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env tests/_xla_gpu_case.ts
 *
 * @module
 */
import assert from "node:assert/strict";
import { DataType, Ffi } from "../mod.ts";
import { Context, DeviceMemory, Module, Stream } from "../src/cuda/mod.ts";
import { Xla } from "../src/xla/mod.ts";

const N = 4096;
const BLOCK = 256;

async function main(): Promise<void> {
  const started = performance.now();
  await using xla = await Xla.open({
    platform: "cuda",
    env: { XLA_PYTHON_CLIENT_PREALLOCATE: "false" }, // leave memory for the kernel's module
  });
  assert.equal(xla.platform, "gpu", `jax started the ${xla.platform} backend, not the GPU's`);
  const opened = performance.now();

  // XLA uses the device's primary context; the handler runs on this (the JS) thread, so that
  // context is made current here once, and the module is loaded into it.
  using ctx = Context.primary(0);
  using mod = Module.load(
    Deno.readTextFileSync(new URL("../examples/kernels/saxpy.ptx", import.meta.url)),
  );
  const kernel = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);

  let calls = 0;
  const streams = new Set<number>();
  using saxpy = Ffi.bind()
    .arg(DataType.F32, 1) // x
    .arg(DataType.F32, 1) // y
    .ret(DataType.F32, 1) // out = alpha * x + y
    .attr("alpha", "f32")
    .ctx("stream")
    .to((x, y, out, alpha, stream) => {
      calls++;
      streams.add(Number(stream));
      const n = out.elementCount;
      using s = Stream.wrap(stream); // XLA's stream, not owned
      DeviceMemory.wrap(out.data, out.byteSize)
        .copyFromDeviceAsync(DeviceMemory.wrap(y.data, y.byteSize), s);
      kernel.launch({ grid: Math.ceil(n / BLOCK), block: BLOCK, stream: s }, alpha, x, out, n);
      // No wait: XLA orders what follows on the same stream.
    });
  await xla.register("gpu_case.saxpy", saxpy, { platform: "CUDA" });

  const model = (h: string) => `
def model(x, y):
    h = ${h}
    return jnp.sin(h) * 3 + jnp.sum(h) / h.size
`;
  const spec = [{ dtype: DataType.F32, shape: [N] }, { dtype: DataType.F32, shape: [N] }];
  await using viaTs = await xla.jit(
    model(
      `ffi.ffi_call("gpu_case.saxpy", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y, alpha=np.float32(2))`,
    ),
    { args: spec },
  );
  await using viaJnp = await xla.jit(model("2 * x + y"), { args: spec });
  const x = Float32Array.from({ length: N }, (_, i) => (i % 97) / 10);
  const y = Float32Array.from({ length: N }, (_, i) => 1 - (i % 13));
  const [got] = await viaTs.run(x, y);
  const [want] = await viaJnp.run(x, y);
  const t0 = performance.now();
  const runs = 20;
  for (let i = 0; i < runs; i++) await viaTs.run(x, y);
  const perRun = (performance.now() - t0) / runs;
  let diff = 0;
  for (let i = 0; i < N; i++) {
    diff = Math.max(diff, Math.abs(Number(got!.data[i]) - Number(want!.data[i])));
  }
  ctx.synchronize();
  const v = xla.version;
  console.log(
    `XLA:GPU: jax ${v.jax}, jaxlib ${v.jaxlib}, XLA FFI API ${v.ffiApi?.major}.${v.ffiApi?.minor}, ` +
      `Python ${v.python}; a TS handler launched saxpy on XLA's stream ${calls}x ` +
      `(${streams.size} stream(s)), ${perRun.toFixed(2)} ms per run of the jitted program; ` +
      `max |diff| vs jnp ${diff.toExponential(1)}; ${diff < 1e-4 ? "matches jnp" : "DIFFERS"} ` +
      `(open ${((opened - started) / 1000).toFixed(1)} s)`,
  );
  assert.equal(calls, runs + 1);
  assert.ok(!streams.has(0), "XLA handed the handler a null stream");
  assert.ok(diff < 1e-4, `max |diff| ${diff}`);
}

try {
  await main();
  console.log("ok gpu");
} catch (e) {
  console.error(`XLA:GPU case failed: ${(e as Error).stack ?? e}`);
  Deno.exit(1);
}
