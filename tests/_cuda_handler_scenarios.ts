/**
 * Scenarios of TS handlers on a CUDA runtime, shared by
 * tests/cuda_handler_test.ts (on the JS thread, `callSync`) and
 * tests/_cuda_handler_calls.ts (a subprocess that also calls through
 * `rt.call`, from a runtime thread). They run on whichever driver is in use.
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, ErrorCode, Ffi, type FfiBuffer, Runtime } from "../mod.ts";
import { Context, DeviceMemory, type Kernel, launch, Module } from "../src/cuda/mod.ts";
import { _out64, _sym } from "../src/cuda/driver.ts";
import { isFfi } from "./_assert.ts";

/** The stand-in driver's test hooks (native/tests/cuda_standin.c). */
export const STANDIN_HOOKS = {
  standin_last_stream_is: { parameters: ["pointer"], result: "i32" },
  standin_last_launch: { parameters: ["i32"], result: "u32" },
  standin_live_allocations: { parameters: [], result: "i64" },
} as const;

/** The stand-in's hooks, opened. */
export type StandinProbe = Deno.DynamicLibrary<typeof STANDIN_HOOKS>["symbols"];

/** The saxpy kernel's PTX. */
export const PTX: string = Deno.readTextFileSync(
  new URL("../examples/kernels/saxpy.ptx", import.meta.url),
);

/** What the saxpy handler saw in its last call. */
interface Seen {
  stream: number;
  calls: number;
  /** The CUDA context current on the thread running the handler. */
  context?: bigint;
}

/** The context current on this thread (`cuCtxGetCurrent`), 0n for none. */
function currentContext(): bigint {
  const rc = _sym("cuCtxGetCurrent")(_out64);
  assert.equal(rc, 0, "cuCtxGetCurrent");
  return _out64[0]!;
}

/**
 * out = alpha * x + y as a TS handler: copies y to out and launches saxpy,
 * both on the stream from the context, passing the raw stream value and the
 * FfiBuffers themselves (no wrappers); `block` sets the launch's block size.
 */
function saxpyHandler(kernel: Kernel, seen: Seen, block = 128) {
  return Ffi.bind()
    .arg(DataType.F32, 1)
    .arg(DataType.F32, 1)
    .ret(DataType.F32, 1)
    .attr("alpha", "f32")
    .ctx("stream")
    .to((x: FfiBuffer, y: FfiBuffer, out: FfiBuffer, alpha: number, stream: number) => {
      seen.stream = stream;
      seen.calls++;
      seen.context = currentContext();
      const n = out.elementCount;
      DeviceMemory.wrap(out.data, out.byteSize)
        .copyFromDeviceAsync(DeviceMemory.wrap(y.data, y.byteSize), stream);
      launch(kernel, { grid: Math.ceil(n / block), block, stream }, alpha, x, out, n);
    });
}

/** The scenario on whichever driver is in use (`probe`: the stand-in's hooks). */
export async function saxpyScenario(
  probe: StandinProbe | undefined,
  viaCall: boolean,
): Promise<void> {
  using rt = new Runtime({ platform: "CUDA" });
  using mod = Module.load(PTX);
  const kernel = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
  const seen: Seen = { stream: -1, calls: 0 };
  using h = saxpyHandler(kernel, seen);

  const n = 1000;
  const xs = new Float32Array(n).map((_, i) => i - 300);
  const ys = new Float32Array(n).map((_, i) => (i % 9) * 0.5);
  using x = rt.deviceArg(xs);
  using y = rt.deviceArg(ys);
  using out = rt.deviceBuffer(DataType.F32, [n]);
  using frame = new CallFrameBuilder().arg(x).arg(y).ret(out).attr("alpha", 3, DataType.F32)
    .build();
  const expect = xs.map((v, i) => 3 * v + ys[i]!);

  rt.callSync(h, frame);
  assert.equal(seen.stream, Number(Deno.UnsafePointer.value(rt.stream!.handle)));
  assert.notEqual(seen.stream, 0);
  assert.deepEqual(rt.toHost(out), expect);
  assert.deepEqual(rt.toHost(y), ys); // y untouched: out got the copy
  if (probe) {
    assert.equal(
      probe.standin_last_stream_is(rt.stream!.handle),
      1,
      "launched on the runtime's stream",
    );
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => probe.standin_last_launch(i)), [
      8,
      1,
      1,
      128,
      1,
      1,
    ]);
  }

  if (viaCall) {
    // Through rt.call (the handler runs inline on the JS thread) and from runtime-owned
    // threads (as XLA calls: each call is queued to the JS thread). Either way it runs with
    // the runtime's context current, even though the JS thread has none here, and the JS
    // thread's own context (none) is restored after it. Same stream, same results.
    const primary = Context.primary(0, { setCurrent: false });
    const runtimeContext = BigInt(Deno.UnsafePointer.value(primary.handle));
    primary.close();
    assert.equal(_sym("cuCtxSetCurrent")(null), 0);
    await rt.call(h, frame, { runId: 2 });
    assert.equal(currentContext(), 0n, "the JS thread's context is restored after rt.call");
    assert.equal(seen.context, runtimeContext, "the runtime's context is current (rt.call)");
    assert.equal(seen.stream, Number(Deno.UnsafePointer.value(rt.stream!.handle)));
    assert.deepEqual(rt.toHost(out), expect);
    seen.context = undefined;
    assert.equal(_sym("cuCtxSetCurrent")(null), 0);
    const res = await rt.callOnThreads(h, frame, { threads: 2, iterations: 2 });
    assert.deepEqual(res, { ok: 4, failed: 0 });
    assert.equal(currentContext(), 0n, "the JS thread's context is restored after queued calls");
    assert.equal(seen.context, runtimeContext, "the runtime's context is current (queued calls)");
    assert.equal(seen.stream, Number(Deno.UnsafePointer.value(rt.stream!.handle)));
    assert.deepEqual(rt.toHost(out), expect);
    assert.equal(seen.calls, 6);
  } else {
    rt.callSync(h, frame);
    assert.equal(seen.calls, 2);
  }
  const calls = seen.calls;

  // Registered by name for the runtime's platform, as XLA looks it up.
  const name = `test.cuda_handler_saxpy.${probe ? "standin" : "gpu"}.${viaCall ? "call" : "sync"}`;
  rt.register(name, h);
  rt.callSync(name, frame);
  assert.equal(seen.calls, calls + 1);
  assert.deepEqual(rt.toHost(out), expect);
}

/** A launch the driver refuses (2048 threads per block) fails the call with its name. */
export async function failedLaunchScenario(viaCall: boolean): Promise<void> {
  using rt = new Runtime({ platform: "CUDA" });
  using mod = Module.load(PTX);
  const kernel = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
  const seen: Seen = { stream: -1, calls: 0 };
  using h = saxpyHandler(kernel, seen, 2048);
  using x = rt.deviceArg(new Float32Array(4096).fill(1));
  using out = rt.deviceBuffer(DataType.F32, [4096]);
  using frame = new CallFrameBuilder().arg(x).arg(x).ret(out).attr("alpha", 2, DataType.F32)
    .build();
  const launchError = /CUDA_ERROR_INVALID_VALUE: invalid argument \(cuLaunchKernel\)/;
  assert.throws(() => rt.callSync(h, frame), isFfi(ErrorCode.INVALID_ARGUMENT, launchError));
  if (viaCall) {
    await assert.rejects(rt.call(h, frame), isFfi(ErrorCode.INVALID_ARGUMENT, launchError));
    assert.equal(seen.calls, 2);
  }
  // The runtime and the stream stay usable.
  rt.synchronize();
  assert.deepEqual(rt.toHost(out), new Float32Array(4096).fill(1)); // the copy before the launch
}

/** `typed()` on a device buffer is a clear error, not a host read of device memory. */
export function typedOnDeviceScenario(): void {
  using rt = new Runtime({ platform: "CUDA" });
  let address = -1;
  using h = Ffi.bind().arg(DataType.F32, 1).to((x) => {
    address = x.data;
    x.typed();
  });
  using x = rt.deviceArg(new Float32Array([1, 2, 3]));
  using frame = new CallFrameBuilder().arg(x).build();
  assert.throws(
    () => rt.callSync(h, frame),
    isFfi(ErrorCode.FAILED_PRECONDITION, /FfiBuffer\.typed\(\): .* is CUDA device memory/),
  );
  assert.equal(BigInt(address), x.ptr);
}
