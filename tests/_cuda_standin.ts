/**
 * The stand-in CUDA driver (native/tests/cuda_standin.c): the driver API on
 * host memory, with the saxpy kernel run on the host, so the CUDA paths run
 * for real on machines without a GPU.
 *
 * @module
 */
import { buildSharedLibrary, findCompiler } from "../build.ts";

/**
 * Builds the stand-in driver once (cached by build.ts): its path, or why it
 * cannot be built here (no C compiler), printed with `label` when given.
 */
export function standinDriver(label?: string): { path?: string; reason?: string } {
  try {
    findCompiler();
    return {
      path: buildSharedLibrary({ name: "cuda_standin", sources: ["native/tests/cuda_standin.c"] }),
    };
  } catch (e) {
    const reason = (e as Error).message;
    if (label !== undefined) console.log(`${label} skipped: ${reason}`);
    return { reason };
  }
}
