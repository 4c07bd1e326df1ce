/**
 * Real XLA calls our handlers: jax and jaxlib (CPU) hosted in this process
 * run the jitted program `y = softmax(h(x) * 2)`, where the custom call `h`
 * (`h(x) = alpha * x + 1`) is
 *   1. a synchronous TS handler,
 *   2. the same as an `async` TS handler (`await null`),
 *   3. the C handler `demo_saxpy` from examples/native/demo_handlers.c,
 * each checked against the same formula in plain jnp. Then a `shard_map`
 * over 4 CPU devices calls a TS handler once per device, from XLA's threads,
 * all four calls in flight at once.
 *
 * Needs a Python with jax (docs/real-xla.md), e.g.
 *   XLA_FFI_DENO_PYTHON=$HOME/.venvs/jax/bin/python
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/real_xla.ts
 *
 * @module
 */
import { DataType, Ffi, HandlerLibrary } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

await using xla = await Xla.open({ xlaFlags: ["--xla_force_host_platform_device_count=4"] });
const v = xla.version;
console.log(
  `jax ${v.jax}, jaxlib ${v.jaxlib}, XLA FFI API ${v.ffiApi?.major}.${v.ffiApi?.minor}, ` +
    `Python ${v.python}, ${xla.deviceCount} ${xla.platform} devices`,
);

// h(x) = alpha * x + 1, as a TS handler (sync, then async) and in C (saxpy with y = 1).
const affine = (x: Float32Array, y: Float32Array, alpha: number) => {
  for (let i = 0; i < y.length; i++) y[i] = alpha * x[i]! + 1;
};
using hSync = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
  .to((x, y, alpha) => affine(x.typed(), y.typed(), alpha));
using hAsync = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
  .to(async (x, y, alpha) => {
    await null;
    affine(x.typed(), y.typed(), alpha);
  });
using lib = HandlerLibrary.open(buildDemoLibrary());
await xla.register("example.affine", hSync);
await xla.register("example.affine_async", hAsync);
await xla.register("example.saxpy", lib.handler("demo_saxpy"));

const program = (call: string) => `
def model(x):
    h = ${call}
    return jax.nn.softmax(h * 2, axis=-1)
`;
const out = "jax.ShapeDtypeStruct(x.shape, x.dtype)";
const variants = [
  ["sync TS handler", `ffi.ffi_call("example.affine", ${out})(x, alpha=np.float32(0.5))`],
  ["async TS handler", `ffi.ffi_call("example.affine_async", ${out})(x, alpha=np.float32(0.5))`],
  [
    "C handler demo_saxpy",
    `ffi.ffi_call("example.saxpy", ${out})(x, jnp.ones_like(x), alpha=np.float32(0.5))`,
  ],
] as const;

const x = { data: Float32Array.from({ length: 32 }, (_, i) => (i % 8) - 3.5), shape: [4, 8] };
await using reference = await xla.jit(program("0.5 * x + 1"));
const [want] = await reference.run(x);
for (const [what, call] of variants) {
  await using prog = await xla.jit(program(call), {
    args: [{ dtype: DataType.F32, shape: [4, 8] }],
  });
  const [y] = await prog.run(x);
  let diff = 0;
  for (let i = 0; i < y!.data.length; i++) {
    diff = Math.max(diff, Math.abs(Number(y!.data[i]) - Number(want!.data[i])));
  }
  const row = Array.from(y!.data.slice(0, 8) as Float32Array, (v) => v.toFixed(4)).join(" ");
  console.log(
    `${what}: y = softmax(h(x) * 2), shape [${y!.shape}], row 0: ${row}; ` +
      `${diff < 1e-6 ? "matches" : "DIFFERS FROM"} jnp (max |diff| ${diff.toExponential(1)})`,
  );
}

// 4 devices: one call per shard, from XLA's threads. The handler waits (up to 5 s) until
// all four calls have arrived, so it finishes quickly only if XLA ran them concurrently.
const shards: number[] = [];
let inFlight = 0, maxInFlight = 0;
let allArrived!: () => void;
const arrived = new Promise<void>((resolve) => allArrived = resolve);
using perDevice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(async (x, y) => {
  const xs = x.typed(), ys = y.typed();
  shards.push(xs[0]! / xs.length);
  maxInFlight = Math.max(maxInFlight, ++inFlight);
  if (shards.length === 4) allArrived();
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([arrived, new Promise((r) => timer = setTimeout(r, 5000))]);
  clearTimeout(timer);
  for (let i = 0; i < ys.length; i++) ys[i] = 10 * xs[i]!;
  inFlight--;
});
await xla.register("example.per_device", perDevice);
await using sharded = await xla.jit(`
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ("d",))

def per_device(x):
    x = jax.reshard(x, NamedSharding(mesh, P("d")))
    call = lambda xs: ffi.ffi_call("example.per_device", jax.ShapeDtypeStruct(xs.shape, xs.dtype))(xs)
    return jax.shard_map(call, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(x)
`);
const xs = Float32Array.from({ length: 16 }, (_, i) => i);
const [ys] = await sharded.run(xs);
const ok = ys!.data.every((v, i) => v === 10 * i);
console.log(
  `shard_map over ${xla.deviceCount} devices: ${shards.length} handler calls (shards ` +
    `${shards.sort().join(", ")}), ${maxInFlight} in flight at once; y = 10 * x ${
      ok ? "correct" : "WRONG"
    }`,
);
