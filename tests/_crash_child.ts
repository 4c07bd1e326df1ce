/**
 * A script whose handler crashes in-process: the process must die of the
 * signal with one line on stderr naming the handler (native/crash.c).
 * Prints `calling` on stdout just before the fatal call.
 *
 * Modes:
 * - `native <symbol>`: a fault handler (native/tests/fault_handlers.c)
 *   called by the embedded runtime, directly;
 * - `registered <symbol>`: the same registered as `crash.op` and called by
 *   that name, from a runtime thread (`Runtime.call`);
 * - `unnamed <symbol>`: the same given as a raw pointer (`{ pointer }`), as
 *   a Python extension module's handler is: no library to name;
 * - `ts`: a TS handler reading address 8 through `Deno.UnsafePointerView`,
 *   called on the JS thread;
 * - `ts-thread`: the same called from a runtime thread (the call is queued
 *   for the JS thread, which crashes serving it);
 * - `xla <symbol>`: the fault handler registered with real XLA as
 *   `crash.xla` (`Xla.register`) and called through `Xla.ffiCall`;
 * - `xla-guard <symbol>`: the same registered with `guard: true`;
 * - `wasm`: no crash: a WebAssembly out-of-bounds access inside a TS
 *   handler (V8's own SIGSEGV, which it turns into a trap) is an error of the
 *   handler, and the process exits 0.
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, HandlerLibrary, Runtime } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

const [mode, symbol = "fault_segv"] = Deno.args;
const x = new Float32Array([1, 2, 3]);
const y = new Float32Array(3);

if (mode === "native" || mode === "registered") {
  const lib = HandlerLibrary.open(faultHandlersPath());
  const rt = new Runtime({ threads: 1 });
  const frame = new CallFrameBuilder().arg(x).ret(y).build();
  if (mode === "native") {
    console.log("calling");
    rt.callSync(lib.handler(symbol), frame);
  } else {
    rt.register("crash.op", lib.handler(symbol));
    console.log("calling");
    await rt.call("crash.op", frame);
  }
} else if (mode === "unnamed") {
  // A raw pointer, as a Python extension module's handler is: no library to name.
  const lib = HandlerLibrary.open(faultHandlersPath());
  const rt = new Runtime({ threads: 1 });
  const frame = new CallFrameBuilder().arg(x).ret(y).build();
  console.log("calling");
  rt.callSync({ pointer: lib.symbol(symbol) }, frame);
} else if (mode === "ts" || mode === "ts-thread") {
  const h = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(function readsAddress8() {
    new Deno.UnsafePointerView(Deno.UnsafePointer.create(8n)!).getInt32();
  });
  const rt = new Runtime({ threads: 1 });
  const frame = new CallFrameBuilder().arg(x).ret(y).build();
  console.log("calling");
  if (mode === "ts") rt.callSync(h, frame);
  else await rt.callOnThreads(h, frame, { threads: 1, iterations: 1 });
} else if (mode === "wasm") {
  // (module (memory 1) (func (export "oob") (result i32) (i32.load (i32.const 0x7ffffff0))))
  const bytes = new Uint8Array([
    0,
    97,
    115,
    109,
    1,
    0,
    0,
    0,
    1,
    5,
    1,
    96,
    0,
    1,
    127,
    3,
    2,
    1,
    0,
    5,
    3,
    1,
    0,
    1,
    7,
    7,
    1,
    3,
    111,
    111,
    98,
    0,
    0,
    10,
    13,
    1,
    11,
    0,
    65,
    240,
    255,
    255,
    255,
    7,
    40,
    2,
    0,
    11,
  ]);
  const oob = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.oob as () => number;
  let trapped = "";
  const h = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to(function runsWasm() {
    try {
      oob();
    } catch (e) {
      trapped = (e as Error).message;
    }
  });
  using rt = new Runtime({ threads: 0 });
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  rt.callSync(h, frame);
  h.close();
  console.log(`trapped: ${trapped}`);
} else if (mode === "xla" || mode === "xla-guard") {
  const lib = HandlerLibrary.open(faultHandlersPath());
  const xla = await Xla.open();
  await xla.register("crash.xla", lib.handler(symbol), { guard: mode === "xla-guard" });
  console.log("calling");
  await xla.ffiCall("crash.xla", {
    args: [x],
    results: [{ dtype: DataType.F32, shape: [3] }],
  });
} else if (mode === "module" || mode === "module-xla") {
  // jaxlib's CSR times dense handler, given a column index far outside the dense operand.
  const xla = await Xla.open();
  const sparse = await xla.handlersFrom("jaxlib.cpu._sparse");
  const h = sparse.handler("cpu_csr_sparse_dense_ffi");
  const call = {
    args: [
      { data: new Float32Array([1, 2, 3]), shape: [3] },
      { data: new Int32Array([0, 3]), shape: [2] }, // row pointers: one row of three entries
      { data: new Int32Array([0, 0, 0x7fffffff]), shape: [3] }, // its column indices
      { data: new Float32Array([1, 1]), shape: [2, 1] },
    ],
    results: [{ dtype: DataType.F32, shape: [1, 1] }],
  };
  console.log("calling");
  if (mode === "module") await new Runtime({ threads: 0 }).ffiCall(h, call);
  else await xla.ffiCall(h, call);
} else {
  throw new Error(`unknown mode ${mode}`);
}
console.log("survived");
