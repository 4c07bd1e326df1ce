/**
 * The one symbol table of the module's native library, composed of the
 * symbols each area declares in its own file.
 *
 * @module
 */
import { ABI_SYMBOLS } from "./symbols_abi.ts";
import { RUNTIME_SYMBOLS } from "./symbols_runtime.ts";
import { HANDLER_SYMBOLS } from "./symbols_handler.ts";
import { RUNTIME_CUDA_SYMBOLS } from "./symbols_runtime_cuda.ts";
import { PYTHON_SYMBOLS } from "./symbols_python.ts";
import { ISOLATE_SYMBOLS } from "./symbols_isolate.ts";

/**
 * Every symbol of `libxla_ffi_deno.so`, as `Deno.dlopen` wants them. Above
 * each entry in the area files, a comment gives the C function's parameter
 * names in order and its C result type: `(rt, h, fr) → XLA_FFI_Error*`
 * (tests/exports_test.ts checks them against the C definitions).
 */
export const SYMBOLS = {
  ...ABI_SYMBOLS,
  ...RUNTIME_SYMBOLS,
  ...HANDLER_SYMBOLS,
  ...RUNTIME_CUDA_SYMBOLS,
  ...PYTHON_SYMBOLS,
  ...ISOLATE_SYMBOLS,
} as const;

/** The type of {@link SYMBOLS}. */
export type NativeSymbols = typeof SYMBOLS;
