/** Native symbols of the embedded runtime's CUDA platform (`native/runtime_cuda.c`). */
export const RUNTIME_CUDA_SYMBOLS = {
  /** (rt, driver, ctx, device) → XLA_FFI_Error* */
  xla_ffi_deno_runtime_set_cuda: {
    parameters: ["pointer", "buffer", "pointer", "i32"],
    result: "pointer",
  },
} as const;
