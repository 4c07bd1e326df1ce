/**
 * CUDA from TypeScript through the CUDA driver API (`libcuda.so.1`):
 * devices, primary contexts, device memory, copies, streams (owned or
 * wrapped, such as the stream XLA hands a handler), events, modules from
 * PTX/cubin/fatbin, kernel launches, and NVRTC run-time compilation (to
 * PTX, or to a CUBIN for the device).
 *
 * The driver is opened on first use, so this module imports and its
 * non-CUDA helpers work on machines without CUDA; there every CUDA entry
 * throws an `FfiError` with code UNAVAILABLE and the loader's message.
 *
 * @example
 * ```ts
 * import { cudaAvailable, cudaUnavailableReason } from "@deno-xla/ffi/cuda";
 * console.log(cudaAvailable() ? "CUDA ready" : `no CUDA: ${cudaUnavailableReason()}`);
 * ```
 *
 * @example
 * ```ts ignore
 * import { DeviceMemory, init, Module } from "@deno-xla/ffi/cuda";
 * using ctx = init(0);
 * using mod = Module.load(Deno.readTextFileSync("examples/kernels/saxpy.ptx"));
 * const saxpy = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
 * const x = new Float32Array([1, 2, 3, 4]), y = new Float32Array([10, 20, 30, 40]);
 * using dx = DeviceMemory.alloc(x.byteLength);
 * using dy = DeviceMemory.alloc(y.byteLength);
 * dx.copyFromHost(x);
 * dy.copyFromHost(y);
 * saxpy.launch({ grid: 1, block: 128 }, 2, dx, dy, x.length);
 * dy.copyToHost(y); // [12, 24, 36, 48]
 * ```
 *
 * @module
 */
export { ErrorCode } from "../abi/enums.ts";
export { FfiError } from "../errors.ts";
export {
  CUDA_DRIVER_LIBRARY,
  cudaAvailable,
  cudaErrorCode,
  cudaUnavailableReason,
} from "./driver.ts";
export { Device, DeviceAttribute, deviceCount, driverVersion } from "./device.ts";
export { Context, init } from "./context.ts";
export { DeviceMemory, type HostBuffer } from "./memory.ts";
export { Stream, type StreamLike } from "./stream.ts";
export { Event } from "./event.ts";
export { Kernel, launch, Module } from "./module.ts";
export {
  type DeviceAddressLike,
  type Dim3,
  f32,
  f64,
  i32,
  i64,
  type KernelArg,
  type LaunchConfig,
  ptr,
  Scalar,
  type ScalarType,
  u32,
  u64,
} from "./launch.ts";
export {
  type CompileOptions,
  compileToCubin,
  compileToPtx,
  type CubinOptions,
  nvrtcAvailable,
  nvrtcSearchPath,
  nvrtcVersion,
} from "./nvrtc.ts";
