/**
 * Child of handler_staging_test.ts: a TS handler's small result is staged
 * until a library named as a GPU runtime (libcuda.so.1: a copy of glibc's
 * libdl stub, whose path is the argument, in a folder with a space) is loaded
 * into the process, and is the buffer itself from then on. Prints one JSON
 * line.
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, Runtime } from "../mod.ts";

const addressOf = (a: ArrayBufferView) =>
  Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(a)));

using rt = new Runtime({ threads: 1 });
let data = 0;
using h = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).to((x, y) => {
  data = y.data;
  const xs = x.typed(), ys = y.typed();
  for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
});
const x = new Float32Array([1, 2]);
const outs: Float32Array[] = []; // all kept: each call's result is at an address not seen before
const call = () => {
  const out = new Float32Array(2);
  outs.push(out);
  using f = new CallFrameBuilder().arg(x, [2]).ret(out, [2]).build();
  rt.callSync(h, f);
  return { where: data === addressOf(out) ? "buffer" : "staged", values: [...out] };
};
const before = call();
const dir = Deno.makeTempDirSync({ prefix: "gpu runtime " });
try {
  Deno.copyFileSync(Deno.args[0]!, `${dir}/libcuda.so.1`);
  // Kept open: a GPU runtime stays loaded.
  Deno.dlopen(`${dir}/libcuda.so.1`, {});
  const after = call();
  console.log(JSON.stringify({
    before: before.where,
    after: after.where,
    results: [before.values, after.values],
  }));
} finally {
  Deno.removeSync(dir, { recursive: true });
}
