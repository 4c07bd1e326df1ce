/**
 * A call in flight whose operand lies on a resizable ArrayBuffer that JS
 * code shrinks (`resize(0)`: V8 shrinks in place and gives the pages back)
 * or transfers meanwhile. The call must not crash the process, whatever
 * the handler then reads or writes. Prints `refused: <message>` when the
 * frame does not take the operand, `rejected: <message>` when the call
 * fails, or `resolved; <first values>` when it succeeds.
 *
 * Modes, `<how>-<where>`: how is `shrink` (`resize(0)`) or `transfer`
 * (`transfer()` to a fixed-length buffer of twice the size, then fresh
 * memory filled); where is `ts` (Runtime.call of a TS handler that awaits
 * before it touches its buffers), `pool` (Runtime.call of a native handler
 * that sleeps on the runtime's pool, then writes its result), `ffi`
 * (Runtime.ffiCall of that native handler with `offThread: true`, the
 * argument on the resizable buffer) or `ffits` (Runtime.ffiCall of the TS
 * handler). Each ffiCall is the second of its signature, which reuses the
 * frame the first laid out.
 *
 * @module
 */
import {
  CallFrameBuilder,
  DataType,
  Ffi,
  type FfiBuffer,
  HandlerLibrary,
  Runtime,
  scalar,
} from "../mod.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

const [how, where] = (Deno.args[0] ?? "shrink-ts").split("-") as [string, string];
const n = 1 << 20; // 4 MiB: whole pages, which a shrink to 0 gives back to the system
using lib = HandlerLibrary.open(testHandlersPath());
using rt = new Runtime({ threads: 2 });
const rab = new ArrayBuffer(4 * n, { maxByteLength: 8 * n });
const x = new Float32Array(rab, 0, n).fill(1);
const y = new Float32Array(n);

let started!: () => void;
const begun = new Promise<void>((r) => started = r);
using ts = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(
  async (a: FfiBuffer, b: FfiBuffer) => {
    started();
    await new Promise((r) => setTimeout(r, 100));
    const src = a.typed() as Float32Array, dst = b.typed() as Float32Array;
    for (let i = 0; i < src.length; i++) dst[i] = src[i]! + 1;
  },
);
const slow = lib.handler("test_async"); // y = x + 1 on the pool, after delay_ms
const delay = { delay_ms: scalar(DataType.S64, 100) };

let call: Promise<unknown>;
try {
  if (where === "ffi" || where === "ffits") {
    const ffiCall = (arg: Float32Array) =>
      rt.ffiCall(where === "ffi" ? slow : ts, {
        args: [arg],
        results: [{ dtype: DataType.F32, shape: [n] }],
        attrs: where === "ffi" ? delay : {},
        offThread: where === "ffi",
      });
    const first = new ArrayBuffer(4 * n, { maxByteLength: 8 * n });
    await ffiCall(new Float32Array(first, 0, n));
    call = ffiCall(x).then(([r]) => (r as Float32Array)[0]);
    if (where === "ffi") setTimeout(started, 20);
  } else {
    const frame = new CallFrameBuilder().arg(x).ret(y).attrs(where === "ts" ? {} : delay).build();
    call = rt.call(where === "ts" ? ts : slow, frame).then(() => y[0]);
    if (where === "pool") setTimeout(started, 20);
  }
} catch (e) {
  console.log(`refused: ${(e as Error).message}`);
  Deno.exit(0);
}
await begun;
if (how === "transfer") {
  const moved = rab.transferToFixedLength(8 * n);
  new Uint8Array(moved).fill(0x7f);
  for (let i = 0; i < 8; i++) new Uint8Array(4 * n).fill(0x5a);
} else rab.resize(0);
try {
  console.log(`resolved; ${await call}`);
} catch (e) {
  console.log(`rejected: ${(e as Error).message}`);
}
