/**
 * `deno task demo`: end-to-end examples on the embedded runtime.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/demo.ts
 */
import { buildSharedLibrary } from "../build.ts";
import { CallFrameBuilder, DataType, HandlerLibrary, Runtime, scalar } from "../mod.ts";

/** Embedded runtime: a C handler library built from examples/native/. */
async function embeddedRuntimeSection(): Promise<void> {
  console.log("== Embedded runtime: C handlers from examples/native/ ==");
  const path = buildSharedLibrary({
    name: "demo_handlers",
    sources: ["examples/native/demo_handlers.c"],
  });
  using lib = HandlerLibrary.open(path);
  using rt = new Runtime({ platform: "Host", threads: 2 });
  rt.register("demo.saxpy", lib.handler("demo_saxpy"), { platform: "cpu" });
  const meta = rt.metadata(lib.handler("demo_saxpy"));
  console.log(
    `registered demo.saxpy (API ${meta.apiVersion.major}.${meta.apiVersion.minor}, ` +
      `traits ${meta.traits}) on ${rt.platform} with ${rt.threads} pool threads`,
  );

  const x = new Float32Array([1, 2, 3, 4, 5, 6]);
  const y = new Float32Array([10, 20, 30, 40, 50, 60]);
  const out = new Float32Array(6);
  using frame = new CallFrameBuilder()
    .arg(x, [2, 3])
    .arg(y, [2, 3])
    .ret(out, [2, 3])
    .attr("alpha", scalar(DataType.F32, 2.5))
    .build();
  console.log("inputs:     x =", [...x], " y =", [...y]);
  console.log("attributes: alpha = 2.5 (f32)");
  rt.callSync("demo.saxpy", frame);
  console.log("result:     alpha * x + y =", [...out]);

  const sum = new Float32Array(1);
  using sumFrame = new CallFrameBuilder().arg(x, [6]).ret(sum, [1]).build();
  await rt.call(lib.handler("demo_sum_async"), sumFrame);
  console.log("async (thread pool + XLA_FFI_Future): sum(x) =", sum[0]);

  try {
    using bad = new CallFrameBuilder().arg(x).arg(y).ret(out).build();
    rt.callSync("demo.saxpy", bad);
  } catch (e) {
    console.log("a handler error surfaces as:", String(e));
  }
}

await embeddedRuntimeSection();
