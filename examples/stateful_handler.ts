/**
 * A stateful handler, as XLA runs one: the instantiate stage creates the
 * per-instance state once (State_Set, with a deleter); every execute call
 * reads it (State_Get). `Runtime.instantiate` returns the Instance that
 * holds the state; closing it runs the state's deleter. Two instances keep
 * separate state.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/stateful_handler.ts
 *
 * @module
 */
import { CallFrameBuilder, DataType, HandlerLibrary, Runtime, scalar } from "../mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

using lib = HandlerLibrary.open(buildDemoLibrary());
await using rt = new Runtime({ platform: "Host" });
const bundle = {
  instantiate: lib.handler("demo_counter_instantiate"),
  execute: lib.handler("demo_counter_execute"),
};

const count = new BigInt64Array(1);
using from100 = new CallFrameBuilder()
  .ret(count, [])
  .attr("start", scalar(DataType.S64, 100n))
  .build();
using from0 = new CallFrameBuilder().ret(count, []).build();

using a = await rt.instantiate(bundle, from100);
using b = await rt.instantiate(bundle, from0);
console.log(`instances hold state of type id ${a.stateTypeId}`);
for (let i = 0; i < 3; i++) {
  await rt.call(bundle, from100, { instance: a });
  const ca = count[0];
  await rt.call(bundle, from0, { instance: b });
  console.log(`call ${i + 1}: instance a = ${ca}, instance b = ${count[0]}`);
}

try {
  await rt.call(bundle, from0);
} catch (e) {
  console.log("expected error (called without an instance):", String(e));
}
