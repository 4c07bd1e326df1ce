/**
 * Instantiate -> execute state on real XLA: a TS `HandlerBundle` whose
 * instantiate stage (run once, when XLA instantiates the program's custom
 * call) returns a counter that the execute stage bumps on every run, and the
 * C demo counter pair (`State_Set` in instantiate, `State_Get` in execute)
 * from examples/native/demo_handlers.c. Each run of the compiled program
 * prints the next count: 42, 43, 44.
 *
 * XLA FFI 0.3 (jaxlib 0.10.2) reads its own `State_Set` layout: handlers
 * must set state with it (see docs/real-xla.md, "Limits").
 *
 * Needs a Python with jax (docs/real-xla.md): XLA_FFI_DENO_PYTHON=<venv>/bin/python.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/real_xla_state.ts
 *
 * @module
 */
import { DataType, Ffi, HandlerBundle, HandlerLibrary } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

await using xla = await Xla.open();

using counter = new HandlerBundle({
  instantiate: Ffi.bindInstantiate().attr("start", "i64").to((start) => ({ count: start })),
  execute: Ffi.bind().ret(DataType.S64, 0).state<{ count: number }>().to((out, state) => {
    out.typed()[0] = BigInt(++state.count);
  }),
});
await xla.register("example.ts_counter", counter);
using lib = HandlerLibrary.open(buildDemoLibrary());
await xla.register("example.c_counter", {
  instantiate: lib.handler("demo_counter_instantiate"),
  execute: lib.handler("demo_counter_execute"),
});

for (const [what, target] of [["TS", "example.ts_counter"], ["C", "example.c_counter"]]) {
  await using prog = await xla.jit(`
def count():
    return ffi.ffi_call("${target}", jax.ShapeDtypeStruct((), jnp.int64))(start=np.int64(41))
`);
  const counts: bigint[] = [];
  for (let run = 0; run < 3; run++) counts.push((await prog.run())[0]!.data[0] as bigint);
  console.log(`${what} counter, 3 runs of one compiled program: ${counts.join(", ")}`);
}
