/**
 * Tests of the CUDA bindings (src/cuda/).
 *
 * - Without a CUDA driver: every CUDA entry throws FfiError UNAVAILABLE with
 *   the loader's message; the module imports; NVRTC reports where it looked.
 * - With a CUDA driver and a device: the scenarios below run on the GPU.
 * - Everywhere a C compiler exists: the same scenarios run against a
 *   stand-in driver (native/tests/cuda_standin.c) that implements the
 *   driver API on host memory and runs the saxpy kernel on the host, so the
 *   bindings' marshalling and error plumbing are exercised for real.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { standinDriver } from "./_cuda_standin.ts";
import { buildPtx, buildSharedLibrary, findNvcc } from "../build.ts";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { _sym, _useDriverLibrary } from "../src/cuda/driver.ts";
import { _useNvrtcLibrary } from "../src/cuda/nvrtc.ts";
import {
  compileToCubin,
  compileToPtx,
  Context,
  cudaAvailable,
  cudaErrorCode,
  cudaUnavailableReason,
  Device,
  deviceCount,
  DeviceMemory,
  driverVersion,
  Event,
  f32,
  i32,
  init,
  launch,
  Module,
  nvrtcAvailable,
  nvrtcSearchPath,
  nvrtcVersion,
  ptr,
  Stream,
} from "../src/cuda/mod.ts";

const PTX_URL = new URL("../examples/kernels/saxpy.ptx", import.meta.url);
const SAXPY_SIG = ["f32", "pointer", "pointer", "i32"] as const;

// --- Which drivers are there? -------------------------------------------------

const gpuReason = cudaUnavailableReason();
/** A GPU test's name, with the reason it is ignored when there is no usable GPU. */
const gpuName = (name: string) =>
  gpuReason === undefined
    ? name
    : `${name} (ignored: ${gpuReason.replace(/: Could not open library: .*$/s, "")})`;
const hasCuda = gpuReason === undefined;
const noDriver = !hasCuda && /cannot load the CUDA driver/.test(gpuReason ?? "");
if (!hasCuda) console.log(`CUDA GPU tests skipped: ${gpuReason}`);

const standinPath = standinDriver("stand-in driver tests").path;

let nvrtcStandinPath: string | undefined;
if (standinPath) {
  nvrtcStandinPath = buildSharedLibrary({
    name: "nvrtc_standin",
    sources: ["native/tests/nvrtc_standin.c"],
  });
}

/** Test hooks of the stand-in library (same loaded copy the bindings use). */
const standin = standinPath
  ? Deno.dlopen(standinPath, {
    standin_live_allocations: { parameters: [], result: "i64" },
    standin_primary_refs: { parameters: [], result: "i32" },
    standin_last_launch: { parameters: ["i32"], result: "u32" },
    standin_last_stream_is: { parameters: ["pointer"], result: "i32" },
  }).symbols
  : undefined;

if (standinPath) {
  // Open them once outside any test, so no test sees a new resource; the
  // first context taken keeps device 0's primary context for the process.
  _useDriverLibrary(standinPath);
  assert.ok(cudaAvailable());
  init(0).close();
  _useDriverLibrary(undefined);
  _useNvrtcLibrary(nvrtcStandinPath);
  assert.ok(nvrtcAvailable());
  _useNvrtcLibrary(undefined);
}
const nvrtcStandin = nvrtcStandinPath
  ? Deno.dlopen(nvrtcStandinPath, {
    standin_nvrtc_destroyed: { parameters: [], result: "i32" },
  }).symbols
  : undefined;

function onStandin(fn: () => void): () => void {
  return () => {
    _useDriverLibrary(standinPath);
    try {
      fn();
    } finally {
      _useDriverLibrary(undefined);
    }
  };
}

function throwsCode(fn: () => unknown, code: ErrorCode, pattern?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof FfiError, `expected FfiError, got ${e}`);
    assert.equal(e.codeName, ErrorCode[code], e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

// --- Scenarios: run on the GPU and on the stand-in driver ----------------------

const scenarios: Record<string, () => void> = {
  "device query"() {
    assert.ok(deviceCount() >= 1);
    assert.ok(driverVersion() >= 1000);
    const dev = Device.get(0);
    assert.ok(dev.name.length > 0);
    const cc = dev.computeCapability;
    assert.ok(cc.major >= 1 && cc.minor >= 0);
    assert.ok(dev.totalMemory > 0);
    assert.ok(dev.multiprocessorCount > 0);
    const info = dev.memoryInfo();
    assert.ok(info.free > 0 && info.free <= info.total);
    assert.equal(Device.all().length, deviceCount());
    throwsCode(() => Device.get(4096), ErrorCode.INVALID_ARGUMENT, /CUDA_ERROR_INVALID_DEVICE/);
    throwsCode(() => Device.get(-1), ErrorCode.INVALID_ARGUMENT);
    using ctx = Context.primary(dev);
    const m = ctx.memoryInfo();
    assert.ok(m.total > 0);
    ctx.synchronize();
  },

  "alloc, copy host to device, device to device, device to host"() {
    using _ctx = init(0);
    const n = 1000;
    const src = new Float32Array(n).map((_, i) => i * 0.5 - 7);
    using a = DeviceMemory.alloc(src.byteLength);
    using b = DeviceMemory.alloc(src.byteLength);
    assert.equal(a.bytes, 4000);
    assert.notEqual(a.ptr, b.ptr);
    a.copyFromHost(src);
    b.copyFromDevice(a);
    const out = new Float32Array(n);
    b.copyToHost(out);
    assert.deepEqual(out, src);
    // Offsets and partial copies: write 4 floats at byte 16, read them back.
    a.copyFromHost(new Float32Array([1, 2, 3, 4]), 16);
    const part = new Float32Array(6);
    a.copyToHost(part, 8);
    assert.deepEqual([...part], [src[2], src[3], 1, 2, 3, 4]);
    // A typed array view with an offset into a larger buffer.
    const big = new Uint8Array(64).map((_, i) => i);
    a.copyFromHost(big.subarray(10, 20));
    const back = new Uint8Array(10);
    a.copyToHost(back);
    assert.deepEqual([...back], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    throwsCode(() => a.copyFromHost(new Uint8Array(8), 3996), ErrorCode.OUT_OF_RANGE, /exceeds/);
    throwsCode(() => a.copyToHost(new Uint8Array(4001)), ErrorCode.OUT_OF_RANGE);
    throwsCode(() => a.copyFromHost(new Uint8Array(4), -4), ErrorCode.INVALID_ARGUMENT);
  },

  "async copies on a stream"() {
    using _ctx = init(0);
    using stream = Stream.create();
    const src = new Int32Array(256).map((_, i) => i * i - 100);
    using a = DeviceMemory.alloc(src.byteLength);
    using b = DeviceMemory.alloc(src.byteLength);
    a.copyFromHostAsync(src, stream);
    b.copyFromDeviceAsync(a, stream);
    const out = new Int32Array(256);
    b.copyToHostAsync(out, stream);
    stream.synchronize();
    assert.deepEqual(out, src);
    assert.equal(stream.query(), true);
  },

  memset() {
    using _ctx = init(0);
    using mem = DeviceMemory.alloc(64);
    mem.fill(0xab);
    const bytes = new Uint8Array(64);
    mem.copyToHost(bytes);
    assert.ok(bytes.every((b) => b === 0xab));
    mem.fill32(0x3f800000); // 1.0f
    const f = new Float32Array(16);
    mem.copyToHost(f);
    assert.ok(f.every((v) => v === 1));
    using stream = Stream.create();
    mem.fill32(-1, stream);
    stream.synchronize();
    const u = new Uint32Array(16);
    mem.copyToHost(u);
    assert.ok(u.every((v) => v === 0xffffffff));
    mem.fill(0, stream);
    stream.synchronize();
    mem.copyToHost(bytes);
    assert.ok(bytes.every((b) => b === 0));
    throwsCode(() => mem.fill(256), ErrorCode.INVALID_ARGUMENT);
    using odd = DeviceMemory.alloc(6);
    throwsCode(() => odd.fill32(1), ErrorCode.INVALID_ARGUMENT, /multiple of 4/);
  },

  "streams and events"() {
    using _ctx = init(0);
    using stream = Stream.create({ nonBlocking: true });
    using blocking = Stream.create({ nonBlocking: false });
    assert.ok(stream.owned);
    using start = Event.create();
    using end = Event.create();
    using marker = Event.create({ timing: false });
    start.record(stream);
    using mem = DeviceMemory.alloc(1 << 16);
    mem.fill(7, stream);
    end.record(stream);
    marker.record(stream);
    marker.wait(blocking);
    end.synchronize();
    assert.equal(end.query(), true);
    const ms = Event.elapsedMs(start, end);
    assert.ok(ms >= 0 && ms < 10_000, `elapsed ${ms}`);
    blocking.synchronize();
    Stream.default().synchronize();
    start.record(); // default stream
    start.synchronize();
  },

  "wrapping an external stream does not own it"() {
    using _ctx = init(0);
    const owner = Stream.create();
    const address = Deno.UnsafePointer.value(owner.handle);
    const wrapped = Stream.wrap(address);
    assert.equal(wrapped.owned, false);
    assert.equal(Deno.UnsafePointer.value(wrapped.handle), address);
    const byNumber = Stream.wrap(Number(address));
    const byPointer = Stream.wrap(owner.handle);
    using mem = DeviceMemory.alloc(16);
    const data = new Uint8Array(16).fill(42);
    mem.copyFromHostAsync(data, wrapped);
    wrapped.synchronize();
    wrapped.close();
    byNumber.close();
    byPointer.close();
    throwsCode(() => wrapped.synchronize(), ErrorCode.FAILED_PRECONDITION, /Stream is closed/);
    // The owner's stream is still alive after the wrappers closed.
    const out = new Uint8Array(16);
    mem.copyToHostAsync(out, owner);
    owner.synchronize();
    assert.ok(out.every((b) => b === 42));
    owner.close();
    throwsCode(() => Stream.wrap(-1), ErrorCode.INVALID_ARGUMENT);
  },

  "module from the shipped PTX: launch saxpy"() {
    using _ctx = init(0);
    using mod = Module.load(Deno.readTextFileSync(PTX_URL));
    const saxpy = mod.kernel("saxpy", SAXPY_SIG);
    assert.ok(saxpy.attribute(0) >= 32); // max threads per block
    const n = 5000;
    const x = new Float32Array(n).map((_, i) => i * 0.25);
    const y = new Float32Array(n).map((_, i) => 100 - i);
    using dx = DeviceMemory.alloc(x.byteLength);
    using dy = DeviceMemory.alloc(y.byteLength);
    dx.copyFromHost(x);
    dy.copyFromHost(y);
    const a = 1.5;
    launch(saxpy, { grid: Math.ceil(n / 256), block: 256 }, a, dx, dy, n);
    const out = new Float32Array(n);
    dy.copyToHost(out);
    for (let i = 0; i < n; i++) {
      const want = Math.fround(Math.fround(a * x[i]!) + y[i]!);
      assert.ok(Math.abs(out[i]! - want) <= 1e-6 * Math.abs(want) + 1e-6, `y[${i}]=${out[i]}`);
    }
    // The same launch with typed scalars and no signature, on a stream,
    // with the pointers given as bigints; then a second time with bytes.
    const untyped = mod.kernel("saxpy");
    using stream = Stream.create();
    untyped.launch(
      { grid: [Math.ceil(n / 128)], block: [128, 1, 1], stream },
      f32(-1),
      dx,
      dy.ptr,
      i32(n),
    );
    stream.synchronize();
    dy.copyToHost(out);
    for (let i = 0; i < n; i += 97) {
      const want = Math.fround(Math.fround(a * x[i]!) + y[i]!) - x[i]!;
      assert.ok(Math.abs(out[i]! - want) <= 1e-5 * Math.abs(want) + 1e-5, `y[${i}]=${out[i]}`);
    }
    using mod2 = Module.load(Deno.readFileSync(PTX_URL));
    const empty = mod2.kernel("empty");
    empty.launch({ grid: 1, block: 1 });
    throwsCode(() => mod.kernel("no_such_kernel"), ErrorCode.NOT_FOUND, /no_such_kernel/);
  },

  "kernel argument and launch configuration errors"() {
    using _ctx = init(0);
    using mod = Module.load(Deno.readTextFileSync(PTX_URL));
    const saxpy = mod.kernel("saxpy", SAXPY_SIG);
    const untyped = mod.kernel("saxpy");
    using d = DeviceMemory.alloc(16);
    const cfg = { grid: 1, block: 4 };
    throwsCode(() => launch(saxpy, cfg, 1, d, d), ErrorCode.INVALID_ARGUMENT, /takes 4 arguments/);
    throwsCode(
      () => launch(untyped, cfg, 1, d, d, 4),
      ErrorCode.INVALID_ARGUMENT,
      /untyped number/,
    );
    throwsCode(() => launch(saxpy, cfg, 1, d, d, 2 ** 31), ErrorCode.INVALID_ARGUMENT, /i32/);
    throwsCode(() => launch(saxpy, cfg, d, d, d, 4), ErrorCode.INVALID_ARGUMENT, /device memory/);
    throwsCode(() => launch(saxpy, { grid: 0, block: 4 }, 1, d, d, 4), ErrorCode.INVALID_ARGUMENT);
    throwsCode(
      () => launch(saxpy, { grid: 1, block: [4, 1.5] }, 1, d, d, 4),
      ErrorCode.INVALID_ARGUMENT,
      /block dimension y/,
    );
    throwsCode(
      () => launch(saxpy, { grid: 1, block: 4, sharedMem: -1 }, 1, d, d, 4),
      ErrorCode.INVALID_ARGUMENT,
    );
    // Too many threads per block: the driver's own error, named.
    throwsCode(
      () => launch(saxpy, { grid: 1, block: 4096 }, 1, d, d, 4),
      ErrorCode.INVALID_ARGUMENT,
      /^CUDA_ERROR_INVALID_VALUE: .* \(cuLaunchKernel\)$/,
    );
  },

  "a bad module image fails with the CUDA error and JIT log"() {
    using _ctx = init(0);
    assert.throws(() => Module.load("this is not PTX"), (e: unknown) => {
      assert.ok(e instanceof FfiError);
      assert.match(e.message, /^CUDA_ERROR_\w+: .* \(cuModuleLoadDataEx\)/);
      return true;
    });
    throwsCode(() => Module.load(""), ErrorCode.INVALID_ARGUMENT, /empty/);
  },

  "stream-ordered alloc and free"() {
    using _ctx = init(0);
    using stream = Stream.create();
    const mem = DeviceMemory.allocAsync(4096, stream);
    mem.fill32(0x01020304, stream);
    const out = new Uint32Array(1024);
    mem.copyToHostAsync(out, stream);
    mem.freeAsync(stream);
    stream.synchronize();
    assert.ok(out.every((v) => v === 0x01020304));
    assert.equal(mem.closed, true);
    throwsCode(() => mem.ptr, ErrorCode.FAILED_PRECONDITION);
    mem.close(); // already freed: nothing to do
  },

  "CUDA errors carry the name, text and function"() {
    using _ctx = init(0);
    throwsCode(
      () => DeviceMemory.alloc(0),
      ErrorCode.INVALID_ARGUMENT,
      /^CUDA_ERROR_INVALID_VALUE: invalid argument \(cuMemAlloc_v2\)$/,
    );
    throwsCode(
      () => DeviceMemory.alloc(2 ** 50),
      ErrorCode.RESOURCE_EXHAUSTED,
      /^CUDA_ERROR_OUT_OF_MEMORY: out of memory \(cuMemAlloc_v2\)$/,
    );
    throwsCode(() => DeviceMemory.alloc(-1), ErrorCode.INVALID_ARGUMENT, /non-negative/);
  },

  "use after close is an FfiError, close is idempotent"() {
    const ctx = init(0);
    const mem = DeviceMemory.alloc(16);
    const stream = Stream.create();
    const event = Event.create();
    const mod = Module.load(Deno.readTextFileSync(PTX_URL));
    const k = mod.kernel("saxpy", SAXPY_SIG);
    mem.close();
    stream.close();
    event.close();
    mod.close();
    for (const r of [mem, stream, event, mod]) r.close();
    throwsCode(
      () => mem.copyFromHost(new Uint8Array(4)),
      ErrorCode.FAILED_PRECONDITION,
      /DeviceMemory is closed/,
    );
    throwsCode(() => mem.fill(0), ErrorCode.FAILED_PRECONDITION);
    throwsCode(() => stream.synchronize(), ErrorCode.FAILED_PRECONDITION, /Stream is closed/);
    throwsCode(() => event.record(), ErrorCode.FAILED_PRECONDITION, /Event is closed/);
    throwsCode(() => mod.kernel("saxpy"), ErrorCode.FAILED_PRECONDITION, /Module is closed/);
    throwsCode(
      () => k.launch({ grid: 1, block: 1 }, 1, ptr(0n), ptr(0n), 0),
      ErrorCode.FAILED_PRECONDITION,
    );
    ctx.close();
    ctx.close();
    throwsCode(() => ctx.setCurrent(), ErrorCode.FAILED_PRECONDITION, /Context is closed/);
  },

  "the process keeps the primary context: still active after the last Context closes"() {
    const dev = Device.get(0);
    init(0).close();
    const flags = new Uint32Array(1), active = new Int32Array(1);
    assert.equal(_sym("cuDevicePrimaryCtxGetState")(dev.handle, flags, active), 0);
    assert.equal(active[0], 1, "never released to zero, so never built again");
  },

  "wrapped device memory is a view that frees nothing"() {
    using _ctx = init(0);
    using owner = DeviceMemory.alloc(32);
    owner.fill(9);
    const view = DeviceMemory.wrap(owner.ptr + 16n, 16);
    assert.equal(view.owned, false);
    const out = new Uint8Array(16);
    view.copyToHost(out);
    assert.ok(out.every((b) => b === 9));
    view.close();
    owner.copyToHost(out, 16); // still allocated
  },
};

for (const [name, body] of Object.entries(scenarios)) {
  Deno.test({ name: gpuName(`GPU: ${name}`), ignore: !hasCuda, fn: body });
}
for (const [name, body] of Object.entries(scenarios)) {
  Deno.test({ name: `stand-in driver: ${name}`, ignore: !standinPath, fn: onStandin(body) });
}

// --- Stand-in only: what reached the driver ------------------------------------

Deno.test({
  name: "stand-in driver: launch dimensions, shared memory and stream reach cuLaunchKernel",
  ignore: !standinPath,
  fn: onStandin(() => {
    using _ctx = init(0);
    using mod = Module.load(Deno.readTextFileSync(PTX_URL));
    const empty = mod.kernel("empty");
    using stream = Stream.create();
    launch(empty, { grid: [2, 3, 4], block: [8, 4, 2], sharedMem: 128, stream });
    const got = [0, 1, 2, 3, 4, 5, 6].map((i) => standin!.standin_last_launch(i));
    assert.deepEqual(got, [2, 3, 4, 8, 4, 2, 128]);
    assert.equal(standin!.standin_last_stream_is(stream.handle), 1);
    launch(empty, { grid: 5, block: 7 });
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((i) => standin!.standin_last_launch(i)), [
      5,
      1,
      1,
      7,
      1,
      1,
      0,
    ]);
    assert.equal(standin!.standin_last_stream_is(null), 1);
  }),
});

Deno.test({
  name:
    "stand-in driver: every allocation and context retain is released, but for the process's own",
  ignore: !standinPath,
  fn: onStandin(() => {
    const before = standin!.standin_live_allocations();
    // The process keeps one reference from the first use on (taken at the top of this file).
    assert.equal(standin!.standin_primary_refs(), 1);
    for (let round = 0; round < 2; round++) {
      {
        using _ctx = init(0);
        using _a = DeviceMemory.alloc(100);
        using stream = Stream.create();
        const b = DeviceMemory.allocAsync(100, stream);
        assert.equal(standin!.standin_live_allocations(), before + 2n);
        b.freeAsync(stream);
        assert.equal(standin!.standin_primary_refs(), 2);
      }
      assert.equal(standin!.standin_live_allocations(), before);
      assert.equal(standin!.standin_primary_refs(), 1, "never released to zero");
    }
    assert.equal(Device.get(0).memoryInfo().total, 2 ** 32);
    assert.equal(standin!.standin_primary_refs(), 1);
    // Without a current context the driver's error comes through, named.
    _sym("cuCtxSetCurrent")(null);
    throwsCode(
      () => DeviceMemory.alloc(16),
      ErrorCode.INVALID_ARGUMENT,
      /^CUDA_ERROR_INVALID_CONTEXT: invalid device context \(cuMemAlloc_v2\)$/,
    );
  }),
});

Deno.test({
  name: "stand-in driver: a JIT failure shows the driver's log",
  ignore: !standinPath,
  fn: onStandin(() => {
    using _ctx = init(0);
    throwsCode(
      () => Module.load("garbage"),
      ErrorCode.INTERNAL,
      /^CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid \(cuModuleLoadDataEx\):\nptxas fatal {3}: stand-in: not PTX text$/,
    );
  }),
});

// --- No driver ---------------------------------------------------------------------

Deno.test({
  name: "no CUDA driver: every CUDA entry throws UNAVAILABLE with the loader's message",
  ignore: !noDriver,
  fn() {
    assert.equal(cudaAvailable(), false);
    const reason = cudaUnavailableReason()!;
    assert.match(reason, /cannot load the CUDA driver libcuda\.so\.1: .*libcuda\.so\.1/);
    const entries: Record<string, () => unknown> = {
      deviceCount,
      driverVersion,
      "Device.get": () => Device.get(0),
      "Device.all": () => Device.all(),
      "Context.primary": () => Context.primary(0),
      init: () => init(),
      "DeviceMemory.alloc": () => DeviceMemory.alloc(16),
      "DeviceMemory.allocAsync": () => DeviceMemory.allocAsync(16),
      "DeviceMemory.wrap": () => DeviceMemory.wrap(4096n, 16),
      "Stream.create": () => Stream.create(),
      "Stream.wrap": () => Stream.wrap(null),
      "Stream.default": () => Stream.default(),
      "Event.create": () => Event.create(),
      "Module.load": () => Module.load(".version 7.0\n"),
    };
    for (const [name, fn] of Object.entries(entries)) {
      assert.throws(fn, (e: unknown) => {
        assert.ok(e instanceof FfiError, `${name}: ${e}`);
        assert.equal(e.code, ErrorCode.UNAVAILABLE, name);
        assert.equal(e.message, reason, name);
        return true;
      });
    }
  },
});

/** Whether the search finds an NVRTC without $XLA_FFI_DENO_NVRTC (then none can be missing). */
const nvrtcOnSearchPath = (() => {
  const saved = Deno.env.get("XLA_FFI_DENO_NVRTC");
  Deno.env.delete("XLA_FFI_DENO_NVRTC");
  _useNvrtcLibrary(undefined);
  try {
    return nvrtcAvailable();
  } finally {
    if (saved !== undefined) Deno.env.set("XLA_FFI_DENO_NVRTC", saved);
    _useNvrtcLibrary(undefined);
  }
})();

Deno.test({
  name: "NVRTC missing: a clear error listing where it looked",
  ignore: nvrtcOnSearchPath,
  fn() {
    const dir = Deno.makeTempDirSync();
    const saved = Deno.env.get("XLA_FFI_DENO_NVRTC");
    try {
      // A file with the right name that is not a library.
      Deno.writeTextFileSync(`${dir}/libnvrtc.so.12`, "not a library");
      Deno.env.set("XLA_FFI_DENO_NVRTC", dir);
      _useNvrtcLibrary(undefined); // forget an NVRTC loaded earlier
      assert.throws(() => compileToPtx("__global__ void k() {}"), (e: unknown) => {
        assert.ok(e instanceof FfiError);
        assert.equal(e.code, ErrorCode.UNAVAILABLE);
        assert.match(e.message, /^NVRTC \(libnvrtc\.so\) not found\. Set XLA_FFI_DENO_NVRTC/);
        assert.ok(e.message.includes(`$XLA_FFI_DENO_NVRTC=${dir}`), e.message);
        assert.ok(e.message.includes("/usr/local/cuda/lib64"), e.message);
        assert.ok(e.message.includes(`${dir}/libnvrtc.so.12: `), e.message);
        return true;
      });
    } finally {
      if (saved === undefined) Deno.env.delete("XLA_FFI_DENO_NVRTC");
      else Deno.env.set("XLA_FFI_DENO_NVRTC", saved);
      _useNvrtcLibrary(undefined);
      Deno.removeSync(dir, { recursive: true });
    }
    assert.ok(nvrtcSearchPath().includes("/usr/local/cuda/lib64"));
  },
});

Deno.test({
  name: gpuName(
    "GPU: NVRTC compiles CUDA C++ to PTX and to a CUBIN for the device; both load and run",
  ),
  ignore: !hasCuda || !nvrtcAvailable(),
  fn() {
    const dev = Device.get(0);
    const cc = dev.computeCapability;
    const src = 'extern "C" __global__ void twice(float* x, int n) {\n' +
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }\n";
    const ptx = compileToPtx(src, {
      name: "twice.cu",
      options: [`--gpu-architecture=compute_${cc.major}${cc.minor}`],
    });
    assert.match(ptx, /\.entry twice/);
    const cubin = compileToCubin(src, { name: "twice.cu" }); // -arch=sm_XY of device 0
    assert.deepEqual([...cubin.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
    using _ctx = init(0);
    // PTX needs a driver at least as new as NVRTC (its PTX ISA); a CUBIN does not.
    const nv = nvrtcVersion();
    const ptxLoads = nv.major * 1000 + nv.minor * 10 <= driverVersion();
    if (!ptxLoads) {
      console.log(`NVRTC ${nv.major}.${nv.minor} is newer than the driver: CUBIN only`);
    }
    for (const image of ptxLoads ? [ptx, cubin] : [cubin]) {
      using mod = Module.load(image);
      const twice = mod.kernel("twice", ["pointer", "i32"]);
      const x = new Float32Array([1, 2, 3, 4, 5]);
      using d = DeviceMemory.alloc(x.byteLength);
      d.copyFromHost(x);
      twice.launch({ grid: 1, block: 32 }, d, x.length);
      d.copyToHost(x);
      assert.deepEqual([...x], [2, 4, 6, 8, 10]);
    }
    throwsCode(
      () => compileToPtx("this is not C++", { name: "bad.cu" }),
      ErrorCode.INVALID_ARGUMENT,
      /NVRTC_ERROR_COMPILATION \(nvrtcCompileProgram\):\n.*bad\.cu/,
    );
  },
});

Deno.test({
  name: "stand-in NVRTC: source, name and options reach the library; the log comes back",
  ignore: !nvrtcStandinPath,
  fn() {
    _useNvrtcLibrary(nvrtcStandinPath);
    try {
      const destroyed = nvrtcStandin!.standin_nvrtc_destroyed();
      const options = [
        "--gpu-architecture=compute_90",
        "-default-device",
        "-DN=" + "9".repeat(300),
      ];
      const src = 'extern "C" __global__ void k(float* x) { x[0] = N; }';
      const out = compileToPtx(src, { name: "k.cu", options });
      assert.equal(out, `// program k.cu\n// options ${options.join(" ")}\n${src}`);
      assert.equal(compileToPtx("x"), "// program kernel.cu\n// options\nx");
      throwsCode(
        () => compileToPtx("#error no", { name: "bad.cu" }),
        ErrorCode.INVALID_ARGUMENT,
        /^NVRTC_ERROR_COMPILATION \(nvrtcCompileProgram\):\nbad\.cu\(1\): error: #error directive/,
      );
      throwsCode(
        () => compileToPtx("x", { options: ["bad-option"] }),
        ErrorCode.INVALID_ARGUMENT,
        /^NVRTC_ERROR_INVALID_OPTION \(nvrtcCompileProgram\)$/,
      );
      // Every program was destroyed, failed ones included.
      assert.equal(nvrtcStandin!.standin_nvrtc_destroyed(), destroyed + 4);
      const v = nvrtcVersion();
      assert.deepEqual([v.major, v.minor, v.path], [12, 4, nvrtcStandinPath]);
    } finally {
      _useNvrtcLibrary(undefined);
    }
  },
});

Deno.test({
  name: "stand-in NVRTC: a CUBIN for -arch=sm_XY from arch or the device; virtual ones refused",
  ignore: !nvrtcStandinPath,
  fn: onStandin(() => {
    _useNvrtcLibrary(nvrtcStandinPath);
    try {
      const text = (b: Uint8Array) => {
        assert.deepEqual([...b.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]); // ELF
        return new TextDecoder().decode(b.subarray(4));
      };
      assert.equal(
        text(compileToCubin("x", { arch: "sm_80", name: "a.cu" })),
        "// program a.cu\n// options -arch=sm_80\nx",
      );
      // From the device's compute capability (the stand-in's is 9.0).
      assert.equal(text(compileToCubin("x")), "// program kernel.cu\n// options -arch=sm_90\nx");
      assert.equal(
        text(compileToCubin("x", { device: Device.get(0), options: ["-G"] })),
        "// program kernel.cu\n// options -G -arch=sm_90\nx",
      );
      // Options that name an architecture are left as they are.
      assert.equal(
        text(compileToCubin("x", { arch: "sm_80", options: ["-arch=sm_75"] })),
        "// program kernel.cu\n// options -arch=sm_75\nx",
      );
      throwsCode(
        () => compileToCubin("x", { options: ["--gpu-architecture=compute_90"] }),
        ErrorCode.INVALID_ARGUMENT,
        /^NVRTC made no CUBIN: the options name a virtual architecture/,
      );
      throwsCode(
        () => compileToCubin("x", { arch: "compute_90" }),
        ErrorCode.INVALID_ARGUMENT,
        /^compileToCubin: arch must be a real architecture such as "sm_90", got "compute_90"$/,
      );
    } finally {
      _useNvrtcLibrary(undefined);
    }
  }),
});

Deno.test({
  name:
    "NVRTC's builtins are loaded from the folder of the libnvrtc found (NVRTC opens them by name)",
  ignore: !nvrtcStandinPath,
  fn() {
    // A stand-in NVRTC that opens libnvrtc-builtins.so.12.4 by name when it compiles.
    const strict = buildSharedLibrary({
      name: "nvrtc_standin_builtins",
      sources: ["native/tests/nvrtc_standin.c"],
      extraFlags: ["-DSTANDIN_NEEDS_BUILTINS"],
      linkFlags: ["-ldl"],
    });
    const builtinsLib = buildSharedLibrary({
      name: "nvrtc_builtins_standin",
      sources: ["native/tests/nvrtc_builtins_standin.c"],
      linkFlags: ["-Wl,-soname,libnvrtc-builtins.so.12.4"],
    });
    const alone = Deno.makeTempDirSync();
    const paired = Deno.makeTempDirSync();
    try {
      // Without builtins beside it, NVRTC's own error says so, and why none were loaded.
      Deno.copyFileSync(strict, `${alone}/libnvrtc.so.12`);
      _useNvrtcLibrary(`${alone}/libnvrtc.so.12`);
      throwsCode(
        () => compileToPtx("x"),
        ErrorCode.INTERNAL,
        new RegExp(
          "^NVRTC_ERROR_BUILTIN_OPERATION_FAILURE \\(nvrtcCompileProgram\\):\\n" +
            "nvrtc: error: failed to open libnvrtc-builtins\\.so\\.12\\.4\\.[^]*" +
            `\\(no libnvrtc-builtins\\.so\\* beside ${alone}/libnvrtc\\.so\\.12\\)$`,
        ),
      );
      assert.equal(nvrtcVersion().builtins, undefined);
      // With them beside it (the loader would not look there): loaded first, then it compiles.
      Deno.copyFileSync(strict, `${paired}/libnvrtc.so.12`);
      Deno.copyFileSync(builtinsLib, `${paired}/libnvrtc-builtins.so.12.4`);
      Deno.writeTextFileSync(`${paired}/libnvrtc-builtins.so.11.8`, "an older one, not a library");
      _useNvrtcLibrary(`${paired}/libnvrtc.so.12`);
      assert.equal(compileToPtx("x"), "// program kernel.cu\n// options\nx");
      assert.equal(nvrtcVersion().builtins, `${paired}/libnvrtc-builtins.so.12.4`);
    } finally {
      _useNvrtcLibrary(undefined);
      Deno.removeSync(alone, { recursive: true });
      Deno.removeSync(paired, { recursive: true });
    }
  },
});

// --- The shipped PTX ----------------------------------------------------------------

const nvcc = findNvcc();
const ptxas = (() => {
  const p = nvcc?.replace(/nvcc$/, "ptxas");
  try {
    return p && Deno.statSync(p).isFile ? p : undefined;
  } catch {
    return undefined;
  }
})();

Deno.test({
  name: "the shipped PTX assembles for Turing and Hopper (ptxas)",
  ignore: !ptxas,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      for (const arch of ["sm_75", "sm_90"]) {
        const out = new Deno.Command(ptxas!, {
          args: [`-arch=${arch}`, fileURLToPath(PTX_URL), "-o", `${dir}/saxpy_${arch}.cubin`],
          stdout: "piped",
          stderr: "piped",
        }).outputSync();
        assert.ok(out.success, new TextDecoder().decode(out.stderr));
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "buildPtx regenerates the shipped PTX from saxpy.cu",
  ignore: !nvcc,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      const cu = `${dir}/saxpy.cu`;
      Deno.copyFileSync(new URL("../examples/kernels/saxpy.cu", import.meta.url), cu);
      const [out] = buildPtx([new URL(`file://${cu}`)]);
      const fresh = Deno.readTextFileSync(out!);
      const shipped = Deno.readTextFileSync(PTX_URL);
      assert.match(fresh, /^\.version 7\.0$/m);
      assert.match(fresh, /\.visible \.entry saxpy\(/);
      // Same toolkit release: the same text. Another release: same entries.
      const release = (t: string) => /Cuda compilation tools, (.*)/.exec(t)?.[1];
      if (release(fresh) === release(shipped)) assert.equal(fresh, shipped);
      else assert.match(shipped, /\.visible \.entry saxpy\(/);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

// --- Pure TS ---------------------------------------------------------------------

Deno.test("CUDA results map to XLA FFI error codes", () => {
  assert.equal(cudaErrorCode(0), ErrorCode.OK);
  assert.equal(cudaErrorCode(1), ErrorCode.INVALID_ARGUMENT);
  assert.equal(cudaErrorCode(2), ErrorCode.RESOURCE_EXHAUSTED);
  assert.equal(cudaErrorCode(3), ErrorCode.UNAVAILABLE);
  assert.equal(cudaErrorCode(100), ErrorCode.UNAVAILABLE);
  assert.equal(cudaErrorCode(400), ErrorCode.INVALID_ARGUMENT);
  assert.equal(cudaErrorCode(500), ErrorCode.NOT_FOUND);
  assert.equal(cudaErrorCode(701), ErrorCode.RESOURCE_EXHAUSTED);
  assert.equal(cudaErrorCode(719), ErrorCode.INTERNAL);
  assert.equal(cudaErrorCode(999), ErrorCode.INTERNAL);
});

Deno.test("the CUDA entry is separate from the main entry", async () => {
  const main = await import("../mod.ts");
  assert.equal("DeviceMemory" in main, false);
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("../deno.json", import.meta.url)),
  ) as { exports: Record<string, string> };
  assert.equal(config.exports["./cuda"], "./src/cuda/mod.ts");
});
