/**
 * TS handlers on the GPU: a handler bound with `.ctx("stream")` in a CUDA
 * runtime gets the runtime's stream, launches the saxpy kernel on it with
 * its buffers' device addresses, and a failed launch becomes the handler's
 * XLA error with the CUDA error name. Also examples/cuda_saxpy.ts end to end.
 *
 * - Everywhere a C compiler exists: on the stand-in driver
 *   (native/tests/cuda_standin.c), which runs saxpy on the host by reading
 *   kernelParams and records the stream of the last launch.
 * - With a CUDA device: the same on the GPU (skipped with the reason otherwise).
 * - Without any driver: UNAVAILABLE, and the example reports why it skipped.
 */
import assert from "node:assert/strict";
import { standinDriver } from "./_cuda_standin.ts";
import {
  CallFrameBuilder,
  DataType,
  DeviceBuffer,
  ErrorCode,
  Ffi,
  FfiBuffer,
  Runtime,
} from "../mod.ts";
import { _useDriverLibrary } from "../src/cuda/driver.ts";
import {
  failedLaunchScenario,
  PTX,
  saxpyScenario,
  STANDIN_HOOKS,
  typedOnDeviceScenario,
} from "./_cuda_handler_scenarios.ts";
import { isFfi } from "./_assert.ts";
import {
  cudaAvailable,
  cudaUnavailableReason,
  DeviceMemory,
  f32,
  i32,
  init,
  launch,
  Module,
  Stream,
} from "../src/cuda/mod.ts";
import { runDeno } from "./_child.ts";

const gpuReason = cudaUnavailableReason();
/** A GPU test's name, with the reason it is ignored when there is no usable GPU. */
const gpuName = (name: string) =>
  gpuReason === undefined
    ? name
    : `${name} (ignored: ${gpuReason.replace(/: Could not open library: .*$/s, "")})`;
const hasCuda = gpuReason === undefined;
if (!hasCuda) console.log(`CUDA TS-handler GPU tests skipped: ${gpuReason}`);

const standinPath = standinDriver("CUDA TS-handler stand-in tests").path;

/** Test hooks of the stand-in (the same loaded copy the bindings and the runtime use). */
const standin = standinPath ? Deno.dlopen(standinPath, STANDIN_HOOKS).symbols : undefined;

if (standinPath) {
  // Open the driver once outside any test, so no test sees a new resource.
  _useDriverLibrary(standinPath);
  assert.ok(cudaAvailable());
  _useDriverLibrary(undefined);
}

const MISSING_DRIVER = "/nonexistent/libcuda-missing.so.1";

function withDriver(path: string | undefined, fn: () => void | Promise<void>) {
  return async () => {
    _useDriverLibrary(path);
    try {
      await fn();
    } finally {
      _useDriverLibrary(undefined);
    }
  };
}

Deno.test({
  name: "stand-in: a TS handler launches saxpy on the runtime's stream with its buffers",
  ignore: !standinPath,
  fn: withDriver(standinPath, () => saxpyScenario(standin, false)),
});

Deno.test({
  name: "stand-in: a failed launch is the handler's XLA error with the CUDA error name",
  ignore: !standinPath,
  fn: withDriver(standinPath, () => failedLaunchScenario(false)),
});

Deno.test({
  name: "stand-in: typed() refuses device buffers; host buffers still read while CUDA is up",
  ignore: !standinPath,
  fn: withDriver(standinPath, () => {
    const live = standin!.standin_live_allocations();
    typedOnDeviceScenario();
    // A Host runtime's buffers are host memory: typed() works with the driver initialised.
    using rt = new Runtime();
    let sum = 0;
    using h = Ffi.bind().arg(DataType.F32, 1).to((x) => {
      for (const v of x.typed()) sum += v;
    });
    using frame = new CallFrameBuilder().arg(new Float32Array([1, 2, 3])).build();
    rt.callSync(h, frame);
    assert.equal(sum, 6);
    assert.equal(standin!.standin_live_allocations(), live);
  }),
});

Deno.test({
  name: "stand-in: launches take buffers, { ptr }, pointer objects and raw stream values",
  ignore: !standinPath,
  fn: withDriver(standinPath, () => {
    using _ctx = init();
    using mod = Module.load(PTX);
    const typed = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
    const untyped = mod.kernel("saxpy");
    using stream = Stream.create();
    const raw = Number(Deno.UnsafePointer.value(stream.handle));
    using x = DeviceMemory.alloc(16);
    using y = DeviceMemory.alloc(16);
    x.copyFromHost(new Float32Array([1, 2, 3, 4]));
    y.copyFromHost(new Float32Array([10, 20, 30, 40]));
    const got = new Float32Array(4);
    const xb = new FfiBuffer(DataType.F32, Number(x.ptr), [4]);
    const yb = new FfiBuffer(DataType.F32, Number(y.ptr), [4]);

    // A handler's FfiBuffers and its stream as a number.
    launch(typed, { grid: 1, block: 4, stream: raw }, 2, xb, yb, 4);
    assert.equal(standin!.standin_last_stream_is(stream.handle), 1);
    y.copyToHost(got);
    assert.deepEqual(got, new Float32Array([12, 24, 36, 48]));
    // { ptr } objects (a runtime DeviceBuffer) and a bigint stream.
    using yd = DeviceBuffer.wrap(y, DataType.F32, [4]);
    typed.launch({ grid: 1, block: 4, stream: BigInt(raw) }, 1, { ptr: x.ptr }, yd, 4);
    y.copyToHost(got);
    assert.deepEqual(got, new Float32Array([13, 26, 39, 52]));
    // Pointer objects, without a signature, on a wrapped stream.
    using wrapped = Stream.wrap(raw);
    const xp = Deno.UnsafePointer.create(x.ptr);
    untyped.launch({ grid: 1, block: 4, stream: wrapped }, f32(-1), xp, yb, i32(4));
    y.copyToHost(got);
    assert.deepEqual(got, new Float32Array([12, 24, 36, 48]));
    assert.equal(standin!.standin_last_stream_is(stream.handle), 1);
  }),
});

Deno.test({
  name: "stand-in: launch arguments that are not addresses, and bad streams, are INVALID_ARGUMENT",
  ignore: !standinPath,
  fn: withDriver(standinPath, () => {
    using _ctx = init();
    using mod = Module.load(PTX);
    const typed = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
    using x = DeviceMemory.alloc(16);
    const xb = new FfiBuffer(DataType.F32, Number(x.ptr), [4]);
    const config = { grid: 1, block: 4 };
    assert.throws(
      () => launch(typed, config, xb, xb, xb, 4),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        /^Kernel argument 0 is an address but the kernel takes f32$/,
      ),
    );
    assert.throws(
      () => launch(typed, config, 2, { size: 4 } as never, xb, 4),
      isFfi(ErrorCode.INVALID_ARGUMENT, /^Kernel argument 1 is an object without a device address/),
    );
    assert.throws(
      () => launch(typed, config, 2, { data: -8 }, xb, 4),
      isFfi(ErrorCode.INVALID_ARGUMENT, /^Kernel argument 1 is an object without a device address/),
    );
    for (const stream of [-1, 0.5, -1n, 1n << 64n]) {
      assert.throws(
        () => launch(typed, { ...config, stream }, 2, xb, xb, 4),
        isFfi(ErrorCode.INVALID_ARGUMENT, /^Invalid stream address /),
      );
    }
    const mem = DeviceMemory.alloc(16);
    using closed = DeviceBuffer.wrap(mem, DataType.F32, [4]);
    mem.close();
    assert.throws(
      () => launch(typed, config, 2, xb, closed, 4),
      isFfi(ErrorCode.FAILED_PRECONDITION, /closed/),
    );
  }),
});

/**
 * Runs tests/_cuda_handler_calls.ts (the scenarios through `rt.call` too) in
 * its own process: the JS thread that serves foreign-thread handler calls
 * stays the process's handler host, so later test modules (which Deno may
 * run on another thread) could not bind TS handlers.
 */
async function runCallScenarios(driver: string | undefined): Promise<void> {
  const env: Record<string, string> = {};
  if (driver !== undefined) {
    env.XLA_FFI_DENO_CUDA = driver;
    env.XLA_FFI_DENO_CUDA_STANDIN = "1";
  }
  const url = new URL("./_cuda_handler_calls.ts", import.meta.url);
  const r = await runDeno(url, [], { env });
  const out = r.stdout;
  assert.equal(r.code, 0, `tests/_cuda_handler_calls.ts:\n${out}\n${r.stderr}`);
  assert.match(out, /rt\.call scenarios passed/);
}

Deno.test({
  name:
    "stand-in: through rt.call and from runtime threads: the runtime's context, same stream, results",
  ignore: !standinPath,
  fn: () => runCallScenarios(standinPath),
});

Deno.test({
  name: gpuName(
    "GPU: through rt.call and from runtime threads: the runtime's context, same stream, results",
  ),
  ignore: !hasCuda,
  fn: () => runCallScenarios(undefined),
});

Deno.test({
  name: gpuName("GPU: a TS handler launches saxpy on the runtime's stream with its buffers"),
  ignore: !hasCuda,
  fn: () => saxpyScenario(undefined, false),
});

Deno.test({
  name: gpuName("GPU: a failed launch is the handler's XLA error with the CUDA error name"),
  ignore: !hasCuda,
  fn: () => failedLaunchScenario(false),
});

Deno.test({
  name: gpuName("GPU: typed() refuses device buffers"),
  ignore: !hasCuda,
  fn: typedOnDeviceScenario,
});

Deno.test(
  "without a CUDA driver: the CUDA runtime and CUDA calls in a handler are UNAVAILABLE",
  withDriver(MISSING_DRIVER, () => {
    const unavailable = /CUDA is not available: cannot load the CUDA driver/;
    assert.throws(
      () => new Runtime({ platform: "CUDA" }),
      isFfi(ErrorCode.UNAVAILABLE, unavailable),
    );
    using rt = new Runtime();
    using h = Ffi.bind().ret(DataType.F32, 1).to((out) => {
      using s = Stream.wrap(0);
      DeviceMemory.wrap(out.data, out.byteSize).fill(0, s);
    });
    using frame = new CallFrameBuilder().ret(new Float32Array(4)).build();
    assert.throws(() => rt.callSync(h, frame), isFfi(ErrorCode.UNAVAILABLE, unavailable));
    // A Host runtime has no stream to hand out: ffi.h's decode error.
    using hs = Ffi.bind().ret(DataType.F32, 1).ctx("stream").to(() => {});
    assert.throws(() => rt.callSync(hs, frame), /XLA FFI GPU context is not available/);
  }),
);

async function runExample(driver: string | undefined): Promise<string> {
  const env: Record<string, string> = {};
  if (driver !== undefined) env.XLA_FFI_DENO_CUDA = driver;
  const url = new URL("../examples/cuda_saxpy.ts", import.meta.url);
  const r = await runDeno(url, [], { env });
  const out = r.stdout;
  assert.equal(r.code, 0, `examples/cuda_saxpy.ts:\n${out}\n${r.stderr}`);
  return out;
}

function checkExampleOutput(out: string): void {
  assert.match(out, /device 0: out = 2 \* x \+ y over 100000 floats/);
  assert.match(out, /out\[0\.\.4\] = \[1, 2, 3, 4, 5\]/);
  assert.match(out, /all results correct/);
  assert.match(out, /again through rt\.call: 1995 \(expect 1995\)/);
  assert.match(out, /without alpha: \[execute\] Wrong number of attributes: expected 1 but got 0/);
}

Deno.test("examples/cuda_saxpy.ts without a driver prints why it skipped and exits 0", async () => {
  const out = await runExample(MISSING_DRIVER);
  assert.match(out, /^skipped: CUDA is not available: cannot load the CUDA driver /);
});

Deno.test({
  name: "examples/cuda_saxpy.ts on the stand-in driver",
  ignore: !standinPath,
  fn: async () => checkExampleOutput(await runExample(standinPath)),
});

Deno.test({
  name: gpuName("GPU: examples/cuda_saxpy.ts"),
  ignore: !hasCuda,
  fn: async () => checkExampleOutput(await runExample(undefined)),
});
