/**
 * The example CUDA kernels compiled to PTX with `nvcc` (`deno task
 * build:ptx`). The PTX is committed; nothing at run time builds it.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { envGet, isFile, permissionError, toolEnv, toUrl } from "../native/compile.ts";

/** CUDA kernels compiled to PTX by {@link buildPtx}, relative to the module root. */
export const PTX_SOURCES: readonly string[] = ["examples/kernels/saxpy.cu"];

/** The virtual architecture of shipped PTX: JIT-compiled by the driver for Turing up to Hopper and later. */
export const PTX_ARCH = "compute_75";

/**
 * The PTX ISA version the shipped PTX declares. nvcc writes its own newest
 * ISA (9.0 for CUDA 13), which only drivers of that CUDA release can JIT;
 * the example kernels use only instructions of ISA 7.0, so declaring 7.0
 * lets drivers from CUDA 11.0 on load them. A kernel that needs newer
 * instructions fails to load with CUDA_ERROR_INVALID_PTX: then pass
 * `isaVersion: null` to {@link buildPtx} to keep nvcc's version.
 */
export const PTX_ISA_VERSION = "7.0";

/**
 * Finds `nvcc`: `$NVCC`, `$CUDA_HOME/bin/nvcc`, `/usr/local/cuda/bin/nvcc`,
 * then `PATH`. Returns undefined when there is none.
 *
 * @example
 * ```ts ignore
 * import { findNvcc } from "./build.ts";
 * console.log(findNvcc() ?? "no nvcc");
 * ```
 */
export function findNvcc(): string | undefined {
  const candidates: string[] = [];
  const env = envGet("NVCC");
  if (env) candidates.push(env);
  const home = envGet("CUDA_HOME");
  if (home) candidates.push(`${home}/bin/nvcc`);
  candidates.push("/usr/local/cuda/bin/nvcc");
  for (const d of (envGet("PATH") ?? "/usr/bin:/bin").split(":").filter(Boolean)) {
    candidates.push(`${d}/nvcc`);
  }
  return candidates.find(isFile);
}

/**
 * Compiles each `.cu` file of {@link PTX_SOURCES} (or `sources`) to a `.ptx`
 * beside it with `nvcc --ptx -arch=`{@link PTX_ARCH}, declares the PTX ISA
 * version `options.isaVersion` (default {@link PTX_ISA_VERSION}; `null`
 * keeps nvcc's), and returns the PTX paths. The PTX is committed, so machines without nvcc use it as shipped.
 * Throws FfiError UNAVAILABLE when nvcc is missing, INTERNAL when it fails.
 *
 * @example
 * ```ts ignore
 * import { buildPtx } from "./build.ts";
 * console.log(buildPtx()); // [".../examples/kernels/saxpy.ptx"]
 * ```
 */
export function buildPtx(
  sources: readonly (string | URL)[] = PTX_SOURCES,
  options: { isaVersion?: string | null } = {},
): string[] {
  const isa = options.isaVersion === undefined ? PTX_ISA_VERSION : options.isaVersion;
  const nvcc = findNvcc();
  if (!nvcc) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      "nvcc not found ($NVCC, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH): the shipped PTX is used as is",
    );
  }
  const outputs: string[] = [];
  for (const src of sources.map(toUrl)) {
    const input = fileURLToPath(src);
    const out = input.replace(/\.cu$/, ".ptx");
    const args = ["--ptx", `-arch=${PTX_ARCH}`, "-O3", "-o", out, input];
    let result: Deno.CommandOutput;
    try {
      result = new Deno.Command(nvcc, { args, stdout: "piped", stderr: "piped", ...toolEnv() })
        .outputSync();
    } catch (e) {
      return permissionError(e, `running ${nvcc}`, "--allow-run");
    }
    if (!result.success) {
      throw new FfiError(
        ErrorCode.INTERNAL,
        `nvcc failed (${nvcc} ${args.join(" ")}):\n${new TextDecoder().decode(result.stderr)}`,
      );
    }
    if (isa !== null) {
      const ptx = Deno.readTextFileSync(out);
      const m = /^\.version (\d+\.\d+)$/m.exec(ptx);
      if (m && m[1] !== isa) {
        const note = `// build.ts: .version lowered from ${m[1]} to ${isa} (PTX_ISA_VERSION)\n`;
        Deno.writeTextFileSync(out, note + ptx.replace(m[0], `.version ${isa}`));
      }
    }
    outputs.push(out);
  }
  return outputs;
}
