/**
 * Checks against a real CUDA toolkit, on machines without a GPU: the NVRTC
 * binding drives a real NVRTC (`$XLA_FFI_DENO_NVRTC`, else the usual search;
 * CI installs NVRTC 13 from the Python package nvidia-cuda-nvrtc) to compile
 * examples/kernels/saxpy.cu to PTX, which the toolkit's ptxas assembles for
 * sm_90, and to a CUBIN for sm_90, which must be the kind of ELF ptxas makes
 * for sm_90; and the C sources that call the driver compile against the
 * toolkit's cuda.h with -Werror (their calls checked against the real
 * prototypes). Each test is ignored, with the reason printed, only where that
 * part of the toolkit is absent.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { C_FLAGS, findCompiler, findNvcc } from "../build.ts";
import { compileToCubin, compileToPtx, nvrtcAvailable, nvrtcVersion } from "../src/cuda/mod.ts";

const SAXPY_CU = new URL("../examples/kernels/saxpy.cu", import.meta.url);
const ROOT = fileURLToPath(new URL("../", import.meta.url));

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Toolkit folders to look in: $CUDA_HOME, $CUDA_PATH, nvcc's, /usr/local/cuda, newest /usr/local/cuda-*. */
function toolkitRoots(): string[] {
  const roots: string[] = [];
  for (const v of ["CUDA_HOME", "CUDA_PATH"]) {
    const r = Deno.env.get(v);
    if (r) roots.push(r);
  }
  const nvcc = findNvcc();
  if (nvcc) roots.push(nvcc.replace(/\/bin\/nvcc$/, ""));
  roots.push("/usr/local/cuda");
  try {
    const versioned = [...Deno.readDirSync("/usr/local")]
      .map((e) => e.name)
      .filter((n) => /^cuda-[0-9.]+$/.test(n))
      .sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
    roots.push(...versioned.map((n) => `/usr/local/${n}`));
  } catch { /* no /usr/local */ }
  return roots;
}

const roots = toolkitRoots();
const ptxas = roots.map((r) => `${r}/bin/ptxas`).find(isFile);
const cudaInclude = roots.map((r) => `${r}/include`).find((d) => isFile(`${d}/cuda.h`));
const nvrtc = nvrtcAvailable() ? nvrtcVersion() : undefined;
let cc: string | undefined;
try {
  cc = findCompiler().path;
} catch { /* reported below */ }

if (!nvrtc) {
  console.log(
    "NVRTC toolkit tests skipped: NVRTC not found (set XLA_FFI_DENO_NVRTC to libnvrtc or its folder)",
  );
} else {
  console.log(`NVRTC ${nvrtc.major}.${nvrtc.minor}: ${nvrtc.path} (builtins: ${nvrtc.builtins})`);
}
if (!ptxas) console.log(`ptxas tests skipped: no bin/ptxas in ${roots.join(", ")}`);
if (!cudaInclude) console.log(`cuda.h tests skipped: no include/cuda.h in ${roots.join(", ")}`);
if (!cc) console.log("cuda.h tests skipped: no C compiler");

/** Runs a tool without a preloaded sanitizer runtime (tests/sanitize.sh sets one). */
function run(cmd: string, args: string[]): string {
  const env = Deno.env.toObject();
  delete env.LD_PRELOAD;
  const out = new Deno.Command(cmd, { args, env, clearEnv: true, stdout: "piped", stderr: "piped" })
    .outputSync();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assert.ok(out.success, `${cmd} ${args.join(" ")}:\n${text}`);
  return text;
}

/** `e_machine` and `e_flags` of a 64-bit little-endian ELF file. */
function elfHeader(bytes: Uint8Array): { machine: number; flags: number } {
  assert.deepEqual([...bytes.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], "an ELF file");
  assert.equal(bytes[4], 2, "ELFCLASS64");
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { machine: v.getUint16(18, true), flags: v.getUint32(48, true) };
}

/** Whether `bytes` holds `text` (e.g. a symbol name in the string table). */
function holds(bytes: Uint8Array, text: string): boolean {
  return new TextDecoder("latin1").decode(bytes).includes(`\0${text}\0`);
}

Deno.test({
  name:
    "CUDA toolkit: NVRTC compiles saxpy.cu to PTX for compute_90 that ptxas assembles for sm_90",
  ignore: !nvrtc || !ptxas,
  fn() {
    const ptx = compileToPtx(Deno.readTextFileSync(SAXPY_CU), {
      name: "saxpy.cu",
      options: ["--gpu-architecture=compute_90"],
    });
    assert.match(ptx, /^\.target sm_90$/m);
    assert.match(ptx, /\.visible \.entry saxpy\(/);
    assert.match(ptx, /\.visible \.entry empty\(\)/);
    const dir = Deno.makeTempDirSync();
    try {
      Deno.writeTextFileSync(`${dir}/saxpy.ptx`, ptx);
      run(ptxas!, ["-arch=sm_90", `${dir}/saxpy.ptx`, "-o", `${dir}/saxpy.cubin`]);
      const cubin = Deno.readFileSync(`${dir}/saxpy.cubin`);
      assert.ok(holds(cubin, "saxpy") && holds(cubin, "empty"), "both kernels assembled");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "CUDA toolkit: NVRTC compiles saxpy.cu to a CUBIN for sm_90, the ELF ptxas makes for sm_90",
  ignore: !nvrtc || !ptxas,
  fn() {
    const src = Deno.readTextFileSync(SAXPY_CU);
    const cubin = compileToCubin(src, { name: "saxpy.cu", arch: "sm_90" });
    const ours = elfHeader(cubin);
    assert.ok(holds(cubin, "saxpy") && holds(cubin, "empty"), "both kernels in the CUBIN");
    // What ptxas makes for sm_90 (and for sm_75, which must differ) from the same source.
    const ptx = compileToPtx(src, { options: ["--gpu-architecture=compute_75"] });
    const dir = Deno.makeTempDirSync();
    try {
      Deno.writeTextFileSync(`${dir}/saxpy.ptx`, ptx);
      const header = (arch: string) => {
        run(ptxas!, [`-arch=${arch}`, `${dir}/saxpy.ptx`, "-o", `${dir}/${arch}.cubin`]);
        return elfHeader(Deno.readFileSync(`${dir}/${arch}.cubin`));
      };
      const sm90 = header("sm_90");
      assert.equal(ours.machine, sm90.machine, "EM_CUDA");
      assert.equal(ours.flags, sm90.flags, "e_flags: the architecture sm_90");
      assert.notEqual(header("sm_75").flags, sm90.flags);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "CUDA toolkit: bench/gpu/driver_bench.c and native/runtime_cuda.c compile against cuda.h",
  ignore: !cudaInclude || !cc,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      // The C baseline of the GPU benches, with the toolkit's declarations.
      run(cc!, [
        ...C_FLAGS,
        "-DUSE_CUDA_H",
        `-I${cudaInclude}`,
        `${ROOT}bench/gpu/driver_bench.c`,
        "-o",
        `${dir}/driver_bench`,
        "-ldl",
      ]);
      // The runtime's CUDA platform: every driver call typed by cuda.h's prototypes.
      run(cc!, [
        ...C_FLAGS,
        "-DXRT_USE_CUDA_H",
        `-I${cudaInclude}`,
        `-I${ROOT}native`,
        "-c",
        `${ROOT}native/runtime_cuda.c`,
        "-o",
        `${dir}/runtime_cuda.o`,
      ]);
      // The same file with its own declarations (the shipped build) matches them.
      run(cc!, [
        ...C_FLAGS,
        `-I${ROOT}native`,
        "-c",
        `${ROOT}native/runtime_cuda.c`,
        "-o",
        `${dir}/own.o`,
      ]);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
