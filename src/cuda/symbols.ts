/**
 * The CUDA driver API (`libcuda.so.1`) symbols the module uses, as
 * `Deno.dlopen` wants them. Every symbol is optional so an old driver that
 * lacks one (e.g. `cuMemAllocAsync` before CUDA 11.2) still loads; calling a
 * missing one throws a clear error.
 *
 * Types: `CUresult` and `CUdevice` are `i32`, `CUdeviceptr` is `u64`, handles
 * (`CUcontext`, `CUstream`, `CUevent`, `CUmodule`, `CUfunction`) are
 * pointers, out-parameters are buffers.
 *
 * @module
 */

const r = "i32" as const;
const opt = true as const;

/** The driver API symbol table. */
export const CUDA_SYMBOLS = {
  cuInit: { parameters: ["u32"], result: r, optional: opt },
  cuDriverGetVersion: { parameters: ["buffer"], result: r, optional: opt },
  cuGetErrorName: { parameters: ["i32", "buffer"], result: r, optional: opt },
  cuGetErrorString: { parameters: ["i32", "buffer"], result: r, optional: opt },
  cuDeviceGetCount: { parameters: ["buffer"], result: r, optional: opt },
  cuDeviceGet: { parameters: ["buffer", "i32"], result: r, optional: opt },
  cuDeviceGetName: { parameters: ["buffer", "i32", "i32"], result: r, optional: opt },
  cuDeviceGetAttribute: { parameters: ["buffer", "i32", "i32"], result: r, optional: opt },
  cuDeviceTotalMem_v2: { parameters: ["buffer", "i32"], result: r, optional: opt },
  cuDevicePrimaryCtxRetain: { parameters: ["buffer", "i32"], result: r, optional: opt },
  cuDevicePrimaryCtxRelease_v2: { parameters: ["i32"], result: r, optional: opt },
  cuDevicePrimaryCtxGetState: { parameters: ["i32", "buffer", "buffer"], result: r, optional: opt },
  cuCtxSetCurrent: { parameters: ["pointer"], result: r, optional: opt },
  cuCtxGetCurrent: { parameters: ["buffer"], result: r, optional: opt },
  cuCtxSynchronize: { parameters: [], result: r, optional: opt },
  cuMemGetInfo_v2: { parameters: ["buffer", "buffer"], result: r, optional: opt },
  cuMemAlloc_v2: { parameters: ["buffer", "usize"], result: r, optional: opt },
  cuMemFree_v2: { parameters: ["u64"], result: r, optional: opt },
  cuMemAllocAsync: { parameters: ["buffer", "usize", "pointer"], result: r, optional: opt },
  cuMemFreeAsync: { parameters: ["u64", "pointer"], result: r, optional: opt },
  cuMemcpyHtoD_v2: { parameters: ["u64", "buffer", "usize"], result: r, optional: opt },
  cuMemcpyDtoH_v2: { parameters: ["buffer", "u64", "usize"], result: r, optional: opt },
  cuMemcpyDtoD_v2: { parameters: ["u64", "u64", "usize"], result: r, optional: opt },
  cuMemcpyHtoDAsync_v2: {
    parameters: ["u64", "buffer", "usize", "pointer"],
    result: r,
    optional: opt,
  },
  cuMemcpyDtoHAsync_v2: {
    parameters: ["buffer", "u64", "usize", "pointer"],
    result: r,
    optional: opt,
  },
  cuMemcpyDtoDAsync_v2: {
    parameters: ["u64", "u64", "usize", "pointer"],
    result: r,
    optional: opt,
  },
  cuMemsetD8_v2: { parameters: ["u64", "u8", "usize"], result: r, optional: opt },
  cuMemsetD32_v2: { parameters: ["u64", "u32", "usize"], result: r, optional: opt },
  cuMemsetD8Async: { parameters: ["u64", "u8", "usize", "pointer"], result: r, optional: opt },
  cuMemsetD32Async: { parameters: ["u64", "u32", "usize", "pointer"], result: r, optional: opt },
  cuStreamCreate: { parameters: ["buffer", "u32"], result: r, optional: opt },
  cuStreamSynchronize: { parameters: ["pointer"], result: r, optional: opt },
  cuStreamQuery: { parameters: ["pointer"], result: r, optional: opt },
  cuStreamDestroy_v2: { parameters: ["pointer"], result: r, optional: opt },
  cuStreamWaitEvent: { parameters: ["pointer", "pointer", "u32"], result: r, optional: opt },
  cuEventCreate: { parameters: ["buffer", "u32"], result: r, optional: opt },
  cuEventRecord: { parameters: ["pointer", "pointer"], result: r, optional: opt },
  cuEventSynchronize: { parameters: ["pointer"], result: r, optional: opt },
  cuEventQuery: { parameters: ["pointer"], result: r, optional: opt },
  cuEventElapsedTime_v2: { parameters: ["buffer", "pointer", "pointer"], result: r, optional: opt },
  cuEventElapsedTime: { parameters: ["buffer", "pointer", "pointer"], result: r, optional: opt },
  cuEventDestroy_v2: { parameters: ["pointer"], result: r, optional: opt },
  cuModuleLoadDataEx: {
    parameters: ["buffer", "buffer", "u32", "buffer", "buffer"],
    result: r,
    optional: opt,
  },
  cuModuleUnload: { parameters: ["pointer"], result: r, optional: opt },
  cuModuleGetFunction: { parameters: ["buffer", "pointer", "buffer"], result: r, optional: opt },
  cuFuncGetAttribute: { parameters: ["buffer", "i32", "pointer"], result: r, optional: opt },
  cuPointerGetAttribute: { parameters: ["buffer", "i32", "u64"], result: r, optional: opt },
  cuLaunchKernel: {
    parameters: [
      "pointer",
      "u32",
      "u32",
      "u32",
      "u32",
      "u32",
      "u32",
      "u32",
      "pointer",
      "pointer",
      "pointer",
    ],
    result: r,
    optional: opt,
  },
} as const;

/** The type of {@link CUDA_SYMBOLS}. */
export type CudaSymbols = typeof CUDA_SYMBOLS;
