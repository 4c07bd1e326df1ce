/**
 * A call in flight whose typed array JS code detaches meanwhile (a transfer
 * to a larger buffer, which frees the old memory), then fills fresh
 * memory: the call must neither crash the process nor write into freed
 * memory, and must fail naming the array. Prints `rejected: <message>` or
 * `resolved`.
 *
 * Modes: `pool` (Runtime.call of a native handler that sleeps on the pool,
 * then writes its result), `threads` (Runtime.callOnThreads of it), `ffi`
 * (Runtime.ffiCall of it: called on this thread, it leaves a future its
 * task completes; its argument detached), `untouched` (the pool call with
 * nothing detached).
 *
 * @module
 */
import { CallFrameBuilder, DataType, HandlerLibrary, Runtime, scalar } from "../mod.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

const mode = Deno.args[0] ?? "pool";
const n = 1 << 20; // 4 MiB arrays: the allocator maps them apart and unmaps them when freed
using lib = HandlerLibrary.open(testHandlersPath());
using rt = new Runtime({ threads: 2 });
const x = new Float32Array(n).fill(1);
const y = new Float32Array(n);
const slow = lib.handler("test_async"); // y = x + 1 on the pool, after delay_ms
using frame = new CallFrameBuilder().arg(x).ret(y).attrs({ delay_ms: scalar(DataType.S64, 100) })
  .build();

let call: Promise<unknown>;
let victim: Float32Array = y;
if (mode === "threads") call = rt.callOnThreads(slow, frame, { threads: 2, iterations: 2 });
else if (mode === "ffi") {
  victim = x;
  call = rt.ffiCall(slow, {
    args: [x],
    results: [{ dtype: DataType.F32, shape: [n] }],
    attrs: { delay_ms: scalar(DataType.S64, 100) },
  });
} else call = rt.call(slow, frame);
await new Promise((r) => setTimeout(r, 20));
if (mode !== "untouched") {
  const moved = (victim.buffer as ArrayBuffer).transfer(8 * n);
  new Uint8Array(moved).fill(0x7f);
  for (let i = 0; i < 8; i++) new Uint8Array(4 * n).fill(0x5a);
}
try {
  await call;
  console.log(`resolved; y[0] = ${y[0]}`);
} catch (e) {
  console.log(`rejected: ${(e as Error).message}`);
}
