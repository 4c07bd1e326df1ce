/**
 * Tests of the embedded runtime's CUDA platform: `new Runtime({ platform:
 * "CUDA" })`, Stream_Get, stream-ordered DeviceMemory_Allocate/Free, the
 * device ordinal, the context handlers run in, device buffers in call frames,
 * and the copy helpers.
 *
 * - Without a CUDA driver: creating a CUDA runtime fails cleanly (UNAVAILABLE).
 * - Everywhere a C compiler exists: the scenarios run against the stand-in
 *   driver (native/tests/cuda_standin.c, device memory = host memory), which
 *   checks the context is current on the calling thread and records the
 *   stream of every stream-ordered allocation.
 * - With a CUDA device: the scenarios run on the GPU.
 */
import assert from "node:assert/strict";
import { standinDriver } from "./_cuda_standin.ts";
import { buildSharedLibrary } from "../build.ts";
import {
  CallFrameBuilder,
  DataType,
  DeviceBuffer,
  ErrorCode,
  ExecutionStage,
  HandlerLibrary,
  Runtime,
  runtimeDebugStats,
} from "../mod.ts";
import { _driverLibraryPath, _useDriverLibrary } from "../src/cuda/driver.ts";
import {
  cudaAvailable,
  cudaUnavailableReason,
  DeviceMemory,
  init,
  Stream,
} from "../src/cuda/mod.ts";
import { openTestHandlers } from "./_runtime_handlers.ts";
import { isFfi } from "./_assert.ts";

const gpuReason = cudaUnavailableReason();
/** A GPU test's name, with the reason it is ignored when there is no usable GPU. */
const gpuName = (name: string) =>
  gpuReason === undefined
    ? name
    : `${name} (ignored: ${gpuReason.replace(/: Could not open library: .*$/s, "")})`;
const hasCuda = gpuReason === undefined;
if (!hasCuda) console.log(`CUDA runtime GPU tests skipped: ${gpuReason}`);

const standinPath = standinDriver("CUDA runtime stand-in tests").path;
let handlersPath: string | undefined;
try {
  // Compiled here, or prebuilt (XLA_FFI_DENO_PREBUILT) on a GPU machine without a compiler.
  handlersPath = buildSharedLibrary({
    name: "xrt_cuda_test_handlers",
    sources: ["native/tests/runtime_cuda_handlers.c", "native/tests/test_handler_util.h"],
  });
} catch (e) {
  console.log(`CUDA runtime tests with C handlers skipped: ${(e as Error).message}`);
}

/** Test hooks of the stand-in (the same loaded copy the bindings and the runtime use). */
const standin = standinPath
  ? Deno.dlopen(standinPath, {
    standin_live_allocations: { parameters: [], result: "i64" },
    standin_primary_refs: { parameters: [], result: "i32" },
    standin_async_allocs: { parameters: [], result: "i64" },
    standin_async_frees: { parameters: [], result: "i64" },
    standin_last_async_stream_is: { parameters: ["pointer"], result: "i32" },
    standin_set_memory_pools: { parameters: ["i32"], result: "void" },
  }).symbols
  : undefined;

if (standinPath) {
  // Open the driver once outside any test, so no test sees a new resource;
  // the first context taken keeps device 0's primary context for the process.
  _useDriverLibrary(standinPath);
  assert.ok(cudaAvailable());
  init(0).close();
  _useDriverLibrary(undefined);
}

function onStandin(fn: () => void | Promise<void>): () => Promise<void> {
  return async () => {
    _useDriverLibrary(standinPath);
    try {
      await fn();
    } finally {
      _useDriverLibrary(undefined);
    }
  };
}

async function rejectsFfi(p: Promise<unknown>, code: ErrorCode, message?: string | RegExp) {
  await assert.rejects(p, isFfi(code, message));
}

/** Report slots written by test_cuda_scratch (see runtime_cuda_handlers.c). */
const R = {
  STREAM: 0,
  ORDINAL: 1,
  SCRATCH: 2,
  ALIGNED: 3,
  CONTEXT: 4,
  POOL: 5,
  COPIED: 6,
  CALLS: 7,
};

let reportType = 0;
function reportTypeId(rt: Runtime): number {
  if (reportType === 0) reportType = rt.registerType(`xrt_cuda_report.${Deno.pid}`);
  return reportType;
}

/**
 * arg → scratch → result through the handler, with its report checked
 * (`pools`: whether the stand-in reports memory pools, so allocations are stream-ordered).
 */
async function scratchScenario(onStandinDriver: boolean, pools = true): Promise<void> {
  using lib = HandlerLibrary.open(handlersPath!);
  const h = lib.handler("test_cuda_scratch");
  using rt = new Runtime({ platform: "CUDA" });
  assert.equal(rt.platform, "CUDA");
  assert.equal(rt.device, 0);
  assert.equal(rt.threads, 0);
  const stream = rt.stream!;
  assert.ok(stream.owned);
  const streamValue = BigInt(Deno.UnsafePointer.value(stream.handle));
  const n = 1000;
  const xs = new Float32Array(n).map((_, i) => i * 0.5 - 7);
  using x = rt.deviceArg(xs, [10, 100]);
  assert.deepEqual([x.dtype, x.dims, x.bytes], [DataType.F32, [10, 100], 4 * n]);
  using y = rt.deviceBuffer(DataType.F32, [10, 100]);
  assert.deepEqual(rt.toHost(y), new Float32Array(n)); // zeroed
  const report = new BigInt64Array(8);
  const userData = [[reportTypeId(rt), Deno.UnsafePointer.of(report)]] as const;
  using frame = new CallFrameBuilder()
    .arg(x)
    .ret(y)
    .attr("report_type", reportTypeId(rt), DataType.S64)
    .attr("alignment", 16, DataType.S64)
    .attr("driver", _driverLibraryPath())
    .build();
  // The stand-in's counters (only when it is the driver in use).
  const probe = onStandinDriver ? standin : undefined;
  const allocs = probe?.standin_async_allocs();
  const frees = probe?.standin_async_frees();

  // On the JS thread.
  rt.callSync(h, frame, { userData });
  assert.deepEqual(rt.toHost(y), xs);
  assert.equal(report[R.STREAM], streamValue, "Stream_Get returns the runtime's stream");
  assert.equal(report[R.ORDINAL], 0n);
  assert.notEqual(report[R.SCRATCH], 0n);
  assert.equal(report[R.ALIGNED], 1n);
  assert.notEqual(report[R.CONTEXT], 0n, "the runtime's context is current in the handler");
  assert.equal(
    report[R.POOL],
    12n,
    "ThreadPool: UNIMPLEMENTED XLA FFI CPU context is not available",
  );
  assert.equal(report[R.COPIED], BigInt(4 * n));
  if (probe) {
    assert.equal(probe.standin_async_allocs() - allocs!, pools ? 1n : 0n);
    assert.equal(probe.standin_async_frees() - frees!, pools ? 1n : 0n);
    // Freed in the order of the handlers' stream.
    if (pools) assert.equal(probe.standin_last_async_stream_is(stream.handle), 1);
  }
  const context = report[R.CONTEXT];

  // Off the JS thread (Runtime.call) and from runtime threads: the runtime
  // makes its context current there (the stand-in fails allocations otherwise).
  const y2 = rt.deviceBuffer(DataType.F32, [10, 100]);
  try {
    frame.setRet(0, y2);
    report.fill(0n);
    await rt.call(h, frame, { userData });
    assert.equal(report[R.CONTEXT], context);
    assert.deepEqual(rt.toHost(y2), xs);
    report.fill(0n);
    const res = await rt.callOnThreads(h, frame, { userData, threads: 4, iterations: 5 });
    assert.deepEqual(res, { ok: 20, failed: 0 });
    assert.equal(report[R.CALLS], 20n);
    assert.equal(report[R.STREAM], streamValue);
    assert.deepEqual(rt.toHost(y2), xs);
  } finally {
    y2.close();
  }
  if (probe) {
    assert.equal(probe.standin_async_allocs() - allocs!, pools ? 22n : 0n);
    assert.equal(probe.standin_async_frees() - frees!, pools ? 22n : 0n);
  }
  if (!onStandinDriver) return;
  // A misaligned request never reaches the driver.
  using bad = new CallFrameBuilder()
    .arg(x)
    .ret(y)
    .attr("report_type", reportTypeId(rt), DataType.S64)
    .attr("alignment", 64, DataType.S64)
    .attr("driver", _driverLibraryPath())
    .build();
  assert.throws(
    () => rt.callSync(h, bad, { userData }),
    isFfi(ErrorCode.INVALID_ARGUMENT, "Unsupported alignment: 64"),
  );
}

// --- Without a driver -------------------------------------------------------------

Deno.test("a CUDA runtime without a CUDA driver fails with UNAVAILABLE and leaks nothing", () => {
  const before = runtimeDebugStats();
  _useDriverLibrary("/nonexistent/libcuda-missing.so.1");
  try {
    assert.throws(
      () => new Runtime({ platform: "CUDA" }),
      isFfi(ErrorCode.UNAVAILABLE, /^CUDA is not available: cannot load the CUDA driver/),
    );
    assert.throws(() => new Runtime({ platform: "gpu", device: 1 }), isFfi(ErrorCode.UNAVAILABLE));
  } finally {
    _useDriverLibrary(undefined);
  }
  if (!hasCuda && /cannot load the CUDA driver/.test(gpuReason ?? "")) {
    // The real default driver is absent on this machine.
    assert.throws(() => new Runtime({ platform: "CUDA" }), isFfi(ErrorCode.UNAVAILABLE));
  }
  const after = runtimeDebugStats();
  assert.equal(
    after.runtimesCreated - before.runtimesCreated,
    after.runtimesDestroyed - before.runtimesDestroyed,
  );
});

Deno.test("Host runtimes refuse CUDA options, device buffers and the copy helpers", () => {
  assert.throws(
    () => new Runtime({ device: 0 }),
    isFfi(ErrorCode.INVALID_ARGUMENT, /device and stream are for CUDA runtimes/),
  );
  using rt = new Runtime({ threads: 0 });
  assert.equal(rt.device, undefined);
  assert.equal(rt.stream, undefined);
  rt.synchronize(); // nothing queued on Host
  assert.throws(
    () => rt.deviceArg(new Float32Array(2)),
    isFfi(
      ErrorCode.FAILED_PRECONDITION,
      "Runtime.deviceArg needs a CUDA runtime; this one is Host",
    ),
  );
});

// --- On the stand-in driver -----------------------------------------------------------

Deno.test({
  name: "stand-in: Stream_Get, scratch memory usable at once, ordinal, context, thread pool",
  ignore: !standinPath || !handlersPath,
  fn: onStandin(async () => {
    const refs = standin!.standin_primary_refs();
    const live = standin!.standin_live_allocations();
    await scratchScenario(true);
    assert.equal(standin!.standin_primary_refs(), refs, "the primary context is released");
    assert.equal(standin!.standin_live_allocations(), live, "every allocation is freed");
  }),
});

Deno.test({
  name: "stand-in: without memory pools, DeviceMemory_Allocate uses cuMemAlloc (usable at once)",
  ignore: !standinPath || !handlersPath,
  fn: onStandin(async () => {
    const live = standin!.standin_live_allocations();
    standin!.standin_set_memory_pools(0); // read when a runtime attaches its device
    try {
      await scratchScenario(true, false);
      using lib = openTestHandlers();
      using rt = new Runtime({ platform: "CUDA" });
      using g = new CallFrameBuilder().attr("size", 2 ** 33, DataType.S64).build();
      assert.throws(
        () => rt.callSync(lib.handler("test_device_memory"), g),
        isFfi(
          ErrorCode.RESOURCE_EXHAUSTED,
          "Failed to allocate 8589934592 bytes on device 0: " +
            "CUDA_ERROR_OUT_OF_MEMORY: out of memory (cuMemAlloc_v2)",
        ),
      );
    } finally {
      standin!.standin_set_memory_pools(1);
    }
    assert.equal(standin!.standin_live_allocations(), live, "every allocation is freed");
  }),
});

Deno.test({
  name: "stand-in: DeviceMemory_Allocate/Free messages on a CUDA runtime; ThreadPool unavailable",
  ignore: !standinPath,
  fn: onStandin(() => {
    using lib = openTestHandlers();
    using rt = new Runtime({ platform: "cuda" });
    const mem = (attrs: Record<string, number>) => {
      const b = new CallFrameBuilder();
      for (const [k, v] of Object.entries(attrs)) b.attr(k, v, DataType.S64);
      using g = b.build();
      rt.callSync(lib.handler("test_device_memory"), g);
    };
    const allocs = standin!.standin_async_allocs();
    for (const a of [1, 2, 4, 8, 16]) mem({ alignment: a, size: 100 });
    assert.equal(standin!.standin_async_allocs() - allocs, 5n);
    for (const a of [0, 3, 32, 256]) {
      assert.throws(
        () => mem({ alignment: a }),
        isFfi(ErrorCode.INVALID_ARGUMENT, `Unsupported alignment: ${a}`),
      );
    }
    mem({ size: 0 }); // no memory, a null address; freeing it is a no-op
    assert.equal(standin!.standin_async_allocs() - allocs, 5n);
    assert.throws(
      () => mem({ size: 2 ** 33 }),
      isFfi(
        ErrorCode.RESOURCE_EXHAUSTED,
        "Failed to allocate 8589934592 bytes on device 0: " +
          "CUDA_ERROR_OUT_OF_MEMORY: out of memory (cuMemAllocAsync)",
      ),
    );
    mem({ free: 1 }); // DeviceMemory_Free of a null address
    // Contexts per stage, as XLA:GPU builds them: prepare has a GPU context
    // without stream or allocator; instantiate has no GPU context at all.
    using out = rt.deviceBuffer(DataType.S64, [1]);
    const staged = (handler: string, stage: ExecutionStage, attrs: Record<string, number>) => {
      const b = new CallFrameBuilder().ret(out);
      for (const [k, v] of Object.entries(attrs)) b.attr(k, v, DataType.S64);
      using g = b.build();
      rt.callSync(lib.handler(handler), g, { stage });
    };
    assert.throws(
      () => staged("test_stream", ExecutionStage.PREPARE, {}),
      isFfi(ErrorCode.UNIMPLEMENTED, "XLA FFI GPU stream is not available"),
    );
    assert.throws(
      () => staged("test_device_memory", ExecutionStage.PREPARE, { alignment: 3 }),
      isFfi(ErrorCode.UNIMPLEMENTED, "No device memory allocator available on this platform"),
    );
    assert.throws(
      () => staged("test_stream", ExecutionStage.INSTANTIATE, {}),
      isFfi(ErrorCode.UNIMPLEMENTED, "XLA FFI GPU context is not available"),
    );
    assert.throws(
      () => staged("test_device_memory", ExecutionStage.INSTANTIATE, { alignment: 3 }),
      isFfi(ErrorCode.INVALID_ARGUMENT, "XLA FFI GPU context is not available"),
    );
    using f = new CallFrameBuilder().attr("n", 1, DataType.S64).build();
    assert.throws(
      () => rt.callSync(lib.handler("test_thread_pool"), f),
      isFfi(ErrorCode.UNIMPLEMENTED, "XLA FFI CPU context is not available"),
    );
  }),
});

Deno.test({
  name: "stand-in: Stream_Get returns the runtime's stream; external streams stay the caller's",
  ignore: !standinPath,
  fn: onStandin(() => {
    using lib = openTestHandlers();
    const refs = standin!.standin_primary_refs();
    using ctx = init(0);
    using own = Stream.create();
    const getStream = (rt: Runtime) => {
      using out = rt.deviceBuffer(DataType.S64, [1]);
      using f = new CallFrameBuilder().ret(out).build();
      rt.callSync(lib.handler("test_stream"), f);
      return (rt.toHost(out) as BigInt64Array)[0];
    };
    {
      using rt = new Runtime({ platform: "CUDA", stream: own });
      assert.equal(rt.stream, own);
      assert.equal(getStream(rt), BigInt(Deno.UnsafePointer.value(own.handle)));
    }
    assert.equal(own.closed, false, "a Stream passed in is not closed with the runtime");
    own.synchronize();
    {
      using rt = new Runtime({ platform: "CUDA", stream: own.handle });
      assert.equal(rt.stream!.owned, false);
      assert.equal(getStream(rt), BigInt(Deno.UnsafePointer.value(own.handle)));
    }
    own.synchronize(); // the handle is still valid
    assert.throws(
      () => new Runtime({ platform: "CUDA", stream: null }),
      isFfi(ErrorCode.INVALID_ARGUMENT, /legacy default stream/),
    );
    assert.throws(
      () => new Runtime({ platform: "CUDA", device: 3 }),
      isFfi(ErrorCode.INVALID_ARGUMENT, /CUDA_ERROR_INVALID_DEVICE/),
    );
    assert.throws(
      () => new Runtime({ platform: "CUDA", device: -1 }),
      isFfi(ErrorCode.INVALID_ARGUMENT, "Invalid device ordinal -1"),
    );
    ctx.close();
    assert.equal(standin!.standin_primary_refs(), refs);
  }),
});

Deno.test({
  name: "stand-in: DeviceOrdinal is the runtime's device; a different deviceOrdinal is refused",
  ignore: !standinPath,
  fn: onStandin(() => {
    using lib = openTestHandlers();
    using rt = new Runtime({ platform: "CUDA", device: 0 });
    using out = rt.deviceBuffer(DataType.S32, [1]);
    using f = new CallFrameBuilder().ret(out).build();
    rt.callSync(lib.handler("test_device_ordinal"), f, { runId: 42 });
    assert.deepEqual(rt.toHost(out), new Int32Array([0]));
    rt.callSync(lib.handler("test_device_ordinal"), f, { deviceOrdinal: 0 });
    assert.throws(
      () => rt.callSync(lib.handler("test_device_ordinal"), f, { deviceOrdinal: 2 }),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "This CUDA runtime runs on device 0; deviceOrdinal 2 differs",
      ),
    );
  }),
});

Deno.test({
  name: "stand-in: frames with device buffers; host and device memory are not mixed up",
  ignore: !standinPath,
  fn: onStandin(async () => {
    using lib = openTestHandlers();
    using rt = new Runtime({ platform: "CUDA" });
    using host = new Runtime({ threads: 0 });
    const xs = new Float32Array([1, 2, 3, 4, 5, 6]);
    using x = rt.deviceArg(xs, [2, 3]);
    using mem = DeviceMemory.alloc(64);
    mem.fill(0);
    // A DeviceMemory needs dims and dtype; the shape must fit.
    assert.throws(
      () => new CallFrameBuilder().arg(mem),
      isFfi(ErrorCode.INVALID_ARGUMENT, /argument 0: device memory has no data type or dims/),
    );
    assert.throws(
      () => new CallFrameBuilder().ret(mem, [17], DataType.F32),
      isFfi(ErrorCode.INVALID_ARGUMENT, /result 0: f32\[17\] needs 68 bytes/),
    );
    assert.throws(
      () => DeviceBuffer.wrap(mem, DataType.F64, [9]),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        /^DeviceBuffer: f64\[9\] needs 72 bytes but the device memory has 64$/,
      ),
    );
    using f = new CallFrameBuilder().arg(x).ret(mem, [2, 3], DataType.F32).build();
    rt.callSync(lib.handler("test_echo"), f);
    const view = DeviceBuffer.wrap(mem, DataType.F32, [6]);
    assert.deepEqual(rt.toHost(view), xs);
    view.close();
    assert.equal(mem.closed, false, "closing a view keeps the memory");
    // Host arrays on a CUDA runtime, device memory on a Host runtime: refused.
    using mixed = new CallFrameBuilder().arg(x).ret(new Float32Array(6), [2, 3]).build();
    assert.throws(
      () => rt.callSync(lib.handler("test_echo"), mixed),
      isFfi(ErrorCode.INVALID_ARGUMENT, /but result 0 is a host typed array/),
    );
    await rejectsFfi(
      rt.call(lib.handler("test_echo"), mixed),
      ErrorCode.INVALID_ARGUMENT,
      /host typed array/,
    );
    assert.throws(
      () => host.callSync(lib.handler("test_echo"), mixed),
      isFfi(ErrorCode.INVALID_ARGUMENT, /but argument 0 is device memory/),
    );
    mixed.setRet(0, mem); // now all device memory
    rt.callSync(lib.handler("test_echo"), mixed);
    // An empty array is no data for an f32[2,3] argument: refused as any array of the wrong size.
    assert.throws(
      () => mixed.setArg(0, new Float32Array(0)),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        /^argument 0: f32\[2,3\] needs 24 bytes but the array has 0$/,
      ),
    );
    // Copies: toHost into a given array; sizes checked.
    const out = new Float32Array(6);
    assert.equal(rt.toHost(x, out), out);
    assert.deepEqual(out, xs);
    assert.throws(
      () => rt.toHost(x, new Float32Array(5)),
      isFfi(ErrorCode.INVALID_ARGUMENT, "Runtime.toHost: the output has 20 bytes, the buffer 24"),
    );
    assert.throws(
      () => rt.deviceArg(xs, [4]),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        /^Runtime\.deviceArg: f32\[4\] needs 16 bytes but the array has 24$/,
      ),
    );
    using s64 = rt.deviceArg(new BigInt64Array([1n, -2n]));
    assert.deepEqual(rt.toHost(s64), new BigInt64Array([1n, -2n]));
    using empty = rt.deviceArg(new Int32Array(0));
    assert.deepEqual(rt.toHost(empty), new Int32Array(0));
    x.close();
    assert.throws(() => x.ptr, isFfi(ErrorCode.FAILED_PRECONDITION, "DeviceMemory is closed"));
  }),
});

// --- On a real GPU --------------------------------------------------------------------

Deno.test({
  name: gpuName("GPU: Stream_Get, scratch memory usable at once and the context on a CUDA device"),
  ignore: !hasCuda || !handlersPath,
  fn: () => scratchScenario(false),
});
