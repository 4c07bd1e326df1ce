/** Shared set-up of the runtime benchmarks: the standard frame and handlers. */
import { array, CallFrameBuilder, type CallFrameBuilderOptions, DataType, scalar } from "../mod.ts";
import { buildSharedLibrary } from "../build.ts";

/** Path of the C test handlers (built on first use). */
export const handlersPath: string = buildSharedLibrary({
  name: "xrt_test_handlers",
  sources: ["native/tests/runtime_handlers.c"],
});

const a0 = new Float32Array(2 * 3);
const a1 = new Float32Array(5);
const a2 = new Float32Array(2 * 3 * 4);
const a3 = new Float32Array(2 * 2 * 2 * 2);
const r0 = new Float32Array(6);
const alpha = scalar(DataType.F32, 0.5);
const n = scalar(DataType.S32, 3);
const axes = array(DataType.S64, [0, 2, 3]);

/**
 * The standard frame: 4 F32 buffer args of ranks 2, 1, 3, 4, one result, and
 * attributes alpha (f32), n (s32), mode ("reflect"), axes (s64[3]).
 * `options` are the builder's (e.g. `{ guard: true }`).
 */
export function standardBuilder(options?: CallFrameBuilderOptions): CallFrameBuilder {
  return new CallFrameBuilder(options)
    .arg(a0, [2, 3])
    .arg(a1, [5])
    .arg(a2, [2, 3, 4])
    .arg(a3, [2, 2, 2, 2])
    .ret(r0, [2, 3])
    .attr("alpha", alpha)
    .attr("n", n)
    .attr("mode", "reflect")
    .attr("axes", axes);
}
