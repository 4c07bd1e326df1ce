/**
 * A TS handler on the GPU: out = alpha * x + y, computed by the saxpy kernel
 * of examples/kernels/saxpy.ptx (from saxpy.cu; `deno task build:ptx`
 * rebuilds it when nvcc exists), launched on the stream XLA hands the
 * handler, with the buffers' device addresses as kernel arguments. The
 * handler is registered in the embedded runtime for platform CUDA and called
 * with device buffers; the result is copied back and checked.
 *
 * Without a CUDA driver (or device) it prints `skipped: <reason>` and exits 0.
 * XLA_FFI_DENO_CUDA names another driver library (the tests use a host
 * stand-in).
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/cuda_saxpy.ts
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, type FfiError, Runtime } from "../mod.ts";
import { cudaUnavailableReason, DeviceMemory, Module, Stream } from "../src/cuda/mod.ts";

const BLOCK = 256;

async function main(): Promise<void> {
  using rt = new Runtime({ platform: "CUDA" }); // retains device 0's context, makes a stream
  using mod = Module.load(Deno.readTextFileSync(new URL("./kernels/saxpy.ptx", import.meta.url)));
  const kernel = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);

  using saxpy = Ffi.bind()
    .arg(DataType.F32, 1) // x
    .arg(DataType.F32, 1) // y
    .ret(DataType.F32, 1) // out = alpha * x + y
    .attr("alpha", "f32")
    .ctx("stream") // XLA's CUstream, as an address
    .to((x, y, out, alpha, stream) => {
      const n = out.elementCount;
      if (x.elementCount !== n || y.elementCount !== n) {
        throw new RangeError(
          `x, y and out need the same length: ${x.dims}, ${y.dims}, ${out.dims}`,
        );
      }
      if (n === 0) return;
      using s = Stream.wrap(stream); // not owned: closing it leaves XLA's stream alone
      // out = y, then out += alpha * x: both queued on XLA's stream, nothing waits here.
      DeviceMemory.wrap(out.data, out.byteSize)
        .copyFromDeviceAsync(DeviceMemory.wrap(y.data, y.byteSize), s);
      kernel.launch({ grid: Math.ceil(n / BLOCK), block: BLOCK, stream: s }, alpha, x, out, n);
    });
  rt.register("example.cuda_saxpy", saxpy); // platform: the runtime's, "CUDA"

  const n = 100_000;
  const xs = new Float32Array(n).map((_, i) => i % 1000);
  const ys = new Float32Array(n).map((_, i) => 1 - (i % 7));
  using x = rt.deviceArg(xs);
  using y = rt.deviceArg(ys);
  using out = rt.deviceBuffer(DataType.F32, [n]);
  using frame = new CallFrameBuilder()
    .arg(x)
    .arg(y)
    .ret(out)
    .attr("alpha", 2, DataType.F32)
    .build();

  rt.callSync("example.cuda_saxpy", frame); // on this thread
  const got = rt.toHost(out) as Float32Array; // waits for the stream
  let wrong = 0;
  for (let i = 0; i < n; i++) if (got[i] !== 2 * xs[i]! + ys[i]!) wrong++;
  console.log(`device ${rt.device}: out = 2 * x + y over ${n} floats`);
  console.log(`out[0..4] = [${[...got.subarray(0, 5)].join(", ")}]`);
  console.log(wrong === 0 ? "all results correct" : `${wrong} results wrong`);

  // From another thread: the runtime waits for the handler there; the JS event loop stays free.
  await rt.call("example.cuda_saxpy", frame);
  rt.synchronize();
  console.log(
    `again through rt.call: ${rt.toHost(out)[n - 1]} (expect ${2 * xs[n - 1]! + ys[n - 1]!})`,
  );

  // Bad input is the handler's XLA error, with ffi.h's words.
  using bad = new CallFrameBuilder().arg(x).arg(x).ret(out).build(); // no alpha
  try {
    rt.callSync("example.cuda_saxpy", bad);
  } catch (e) {
    console.log(`without alpha: ${(e as FfiError).message.split("\n")[0]}`);
  }
  if (wrong !== 0) Deno.exitCode = 1;
}

const reason = cudaUnavailableReason();
if (reason !== undefined) {
  console.log(`skipped: ${reason}`);
} else {
  await main();
}
