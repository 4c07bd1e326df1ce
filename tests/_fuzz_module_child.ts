/**
 * `fuzzHandler(handler, { isolate: true })` on a handler of `Xla.handlersFrom`
 * (jaxlib's `cpu_csr_sparse_dense_ffi`, fed column indices far out of range):
 * the handler runs in a child process that hosts its module, so its crashes
 * are failures found and this process, which hosts jax too, prints the crash
 * row and then `survived` (tests/fuzz_python_module_test.ts).
 *
 * @module
 */
import { DataType } from "../mod.ts";
import { fuzzHandler } from "../src/testing/mod.ts";
import { Xla } from "../src/xla/mod.ts";

const xla = await Xla.open();
try {
  const sparse = await xla.handlersFrom("jaxlib.cpu._sparse");
  const report = await fuzzHandler(sparse.handler("cpu_csr_sparse_dense_ffi"), {
    isolate: true,
    runs: 20,
    args: ["f32[1]", "s32[1]", "s32[1]", "f32[1,1]"],
    results: [([, pointers, , dense]) => ({
      dtype: DataType.F32,
      shape: [Math.max(0, pointers![0]! - 1), dense![1]!],
    })],
    argValues: [undefined, { indexInto: [0, 0], sorted: true }, {
      min: 1_000_000_000,
      max: 2_000_000_000,
    }],
  });
  for (const f of report.failures) {
    const [, module, name] = /^Handler '([\w.]+):(\w+)'/.exec(f.message) ?? [];
    console.log(`${f.kind} ${f.detail} ${module} ${name}`);
  }
  console.log("survived");
} finally {
  await xla.close();
}
