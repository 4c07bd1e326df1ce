/**
 * A script that leaves its TS handlers (and runtime) open and returns, as a
 * user's script would: the process must exit by itself once the work is done.
 * Prints `done <mode>` before returning.
 *
 * Modes:
 * - `bind`: binds a handler and returns (no runtime);
 * - `threads`: calls a synchronous handler from 4 runtime threads
 *   (`Runtime.callOnThreads`), closing neither handler nor runtime;
 * - `async`: the same with an `async` handler;
 * - `pending`: an `async` handler called from a runtime thread whose Promise
 *   settles on a timer after the script's last statement; the process waits
 *   for it and then exits.
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, Runtime } from "../mod.ts";

const mode = Deno.args[0] ?? "bind";
const x = new Float32Array([1, 2, 3, 4]);
const y = new Float32Array(4);
let calls = 0;
const sync = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to((a, b) => {
  calls++;
  b.typed().set(a.typed());
});
const later = Ffi.bind().ret(DataType.F32, 1).to(async (b) => {
  calls++;
  await new Promise((r) => setTimeout(r, 300));
  b.typed().fill(7);
  console.log(`settled after the script returned (${calls} call)`);
});
const asyncH = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(async (a, b) => {
  calls++;
  await Promise.resolve();
  b.typed().set(a.typed());
});

if (mode !== "bind") {
  const rt = new Runtime({ threads: 2 });
  const frame = new CallFrameBuilder().arg(x).ret(y).build();
  if (mode === "threads" || mode === "async") {
    const r = await rt.callOnThreads(mode === "threads" ? sync : asyncH, frame, {
      threads: 4,
      iterations: 50,
    });
    if (r.failed !== 0 || calls !== 200 || y[3] !== 4) {
      throw new Error(`unexpected: ${JSON.stringify(r)} calls ${calls} y ${y}`);
    }
  } else if (mode === "pending") {
    const out = new CallFrameBuilder().ret(y).build();
    // Not awaited: the call is still running when the script returns.
    rt.callOnThreads(later, out, { threads: 1 }).then((r) => {
      console.log(`callOnThreads settled: ${r.ok} ok, y[0] = ${y[0]}`);
    });
  }
}
console.log(`done ${mode}`);
