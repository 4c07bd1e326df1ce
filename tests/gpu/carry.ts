/**
 * Prepares `.carry/` (ignored by git) for `tests/gpu/run.sh` on a GPU machine
 * that has no network, no Deno and perhaps no C compiler:
 *
 * - `.carry/lib/`: the native library and the C test-handler libraries the GPU
 *   tests load, built here, with `manifest.json` (each file's source key). With
 *   no compiler there, run.sh sets `XLA_FFI_DENO_PREBUILT=.carry/lib`, and
 *   build.ts uses a prebuilt file only while the sources it was built from are
 *   unchanged.
 * - `.carry/bin/driver_bench`: the C baseline of the GPU benches, built against
 *   the toolkit's cuda.h when one is found.
 * - `.carry/deno-linux-x64-glibc-<version>.tgz`: this Deno, as the npm package
 *   `@deno/linux-x64-glibc` (fetched with `npm pack`; `--no-deno` skips it).
 *
 * Run: `deno task carry [--no-deno]`; then carry `.carry` with the tree and run
 * `bash tests/gpu/run.sh --gpu-only` there.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import {
  buildExecutable,
  type BuildOptions,
  buildSharedLibrary,
  GUARD_LIBRARY,
  MAIN_LIBRARY,
  PREBUILT_MANIFEST,
  sourceKey,
} from "../../build.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CARRY = `${ROOT}.carry`;

/** Every library the GPU tests build, exactly as the tests ask for them (the keys must match). */
const LIBRARIES: readonly BuildOptions[] = [
  MAIN_LIBRARY,
  GUARD_LIBRARY, // C++ exceptions of handlers become errors
  // tests/runtime_cuda_test.ts
  {
    name: "xrt_cuda_test_handlers",
    sources: ["native/tests/runtime_cuda_handlers.c", "native/tests/test_handler_util.h"],
  },
  // tests/cli_runtime_test.ts
  {
    name: "cli_cuda_handlers",
    sources: [
      new URL("../../native/tests/cli_cuda_handlers.c", import.meta.url),
      new URL("../../native/tests/test_handler_util.h", import.meta.url),
    ],
  },
];

/** The CUDA toolkit's include folder holding cuda.h, if any (as run.sh looks for it). */
function cudaInclude(): string | undefined {
  const roots = [Deno.env.get("CUDA_HOME"), "/usr/local/cuda"].filter((r): r is string => !!r);
  return roots.map((r) => `${r}/include`).find((d) => {
    try {
      return Deno.statSync(`${d}/cuda.h`).isFile;
    } catch {
      return false;
    }
  });
}

function size(path: string): number {
  return Deno.statSync(path).size;
}

if (Deno.env.get("XLA_FFI_DENO_SANITIZE")) {
  console.error("XLA_FFI_DENO_SANITIZE is set: carried libraries must be plain builds");
  Deno.exit(2);
}
Deno.mkdirSync(`${CARRY}/lib`, { recursive: true });
Deno.mkdirSync(`${CARRY}/bin`, { recursive: true });
const carried: string[] = [];

const manifest: Record<string, string> = {};
for (const options of LIBRARIES) {
  const built = buildSharedLibrary(options);
  const { file, key } = sourceKey(options);
  Deno.copyFileSync(built, `${CARRY}/lib/${file}`);
  manifest[file] = key;
  carried.push(`${CARRY}/lib/${file}`);
}
Deno.writeTextFileSync(
  `${CARRY}/lib/${PREBUILT_MANIFEST}`,
  JSON.stringify(manifest, null, 2) + "\n",
);

const include = cudaInclude();
const bench = buildExecutable({
  name: "driver_bench",
  sources: ["bench/gpu/driver_bench.c"],
  extraFlags: include ? ["-DUSE_CUDA_H", `-I${include}`] : [],
  linkFlags: ["-ldl"],
});
Deno.copyFileSync(bench, `${CARRY}/bin/driver_bench`);
Deno.chmodSync(`${CARRY}/bin/driver_bench`, 0o755);
carried.push(`${CARRY}/bin/driver_bench`);
console.log(
  `driver_bench built ${include ? `against ${include}/cuda.h` : "with its own declarations"}`,
);

if (!Deno.args.includes("--no-deno")) {
  const version = Deno.version.deno;
  const tgz = `${CARRY}/deno-linux-x64-glibc-${version}.tgz`;
  for (const e of Deno.readDirSync(CARRY)) {
    if (e.isFile && e.name.endsWith(".tgz") && `${CARRY}/${e.name}` !== tgz) {
      Deno.removeSync(`${CARRY}/${e.name}`); // run.sh takes the first .tgz: keep one
    }
  }
  try {
    Deno.statSync(tgz);
  } catch {
    const out = new Deno.Command("npm", {
      args: ["pack", `@deno/linux-x64-glibc@${version}`, "--pack-destination", CARRY],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!out.success) {
      console.error(`npm pack @deno/linux-x64-glibc@${version} failed:`);
      console.error(new TextDecoder().decode(out.stderr));
      Deno.exit(1);
    }
  }
  carried.push(tgz);
}

let total = 0;
for (const f of carried) {
  total += size(f);
  console.log(`${(size(f) / 2 ** 20).toFixed(1).padStart(7)} MiB  ${f.slice(ROOT.length)}`);
}
console.log(`${(total / 2 ** 20).toFixed(1).padStart(7)} MiB  in all`);
console.log("On the GPU machine (with .carry beside the tree): bash tests/gpu/run.sh --gpu-only");
