/**
 * The GPU check's machinery, tested where there is no GPU:
 * - build.ts honours prebuilt libraries (`XLA_FFI_DENO_PREBUILT`, as
 *   `deno task carry` makes them) only while their sources are unchanged;
 * - `tests/gpu/run.sh --gpu-only` fails where CUDA is unavailable, and on the
 *   stand-in driver runs the GPU tests, the example and the benches, prints
 *   the block of figures, and fails because a GPU test was ignored (NVRTC
 *   hidden from it).
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { buildSharedLibrary, findCompiler, PREBUILT_MANIFEST, sourceKey } from "../build.ts";
import { ErrorCode } from "../src/abi/enums.ts";

let compiler: string | undefined;
try {
  compiler = findCompiler().path;
} catch (e) {
  console.log(`GPU-check tests that build skipped: ${(e as Error).message}`);
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const LIB = { name: "gpu_run_prebuilt", sources: ["native/lib_info.c"] } as const;

/** Runs a command from the repository root with extra environment; sanitizer settings dropped. */
async function sh(args: string[], extra: Record<string, string>) {
  const env = Deno.env.toObject();
  delete env.LD_PRELOAD;
  delete env.XLA_FFI_DENO_SANITIZE;
  const r = await new Deno.Command("bash", {
    args,
    cwd: ROOT,
    env: { ...env, ...extra },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

function withEnv<T>(name: string, value: string | undefined, fn: () => T): T {
  const saved = Deno.env.get(name);
  if (value === undefined) Deno.env.delete(name);
  else Deno.env.set(name, value);
  try {
    return fn();
  } finally {
    if (saved === undefined) Deno.env.delete(name);
    else Deno.env.set(name, saved);
  }
}

Deno.test({
  name: "XLA_FFI_DENO_PREBUILT: a carried library is used only while its sources are unchanged",
  ignore: !compiler,
  fn() {
    const compiled = buildSharedLibrary(LIB);
    const { file, key } = sourceKey(LIB);
    assert.equal(file, "libgpu_run_prebuilt.so");
    assert.match(key, /^[0-9a-f]{16}$/);
    // The key follows the sources and flags, not the compiler or where the tree is.
    assert.notEqual(sourceKey({ ...LIB, extraFlags: ["-DX=1"] }).key, key);
    const dir = Deno.makeTempDirSync();
    try {
      Deno.copyFileSync(compiled, `${dir}/${file}`);
      Deno.writeTextFileSync(`${dir}/${PREBUILT_MANIFEST}`, JSON.stringify({ [file]: key }));
      withEnv("XLA_FFI_DENO_PREBUILT", dir, () => {
        assert.equal(buildSharedLibrary(LIB), `${dir}/${file}`);
      });
      // Built from other sources: not used; compiled here instead.
      Deno.writeTextFileSync(`${dir}/${PREBUILT_MANIFEST}`, JSON.stringify({ [file]: "0" + key }));
      withEnv("XLA_FFI_DENO_PREBUILT", dir, () => {
        assert.equal(buildSharedLibrary(LIB), compiled);
      });
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "XLA_FFI_DENO_PREBUILT without a compiler: the prebuilt library, or why it cannot be used",
  ignore: !compiler,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const noTools = Deno.makeTempDirSync();
    try {
      const { file, key } = sourceKey(LIB);
      Deno.copyFileSync(buildSharedLibrary(LIB), `${dir}/${file}`);
      const code = `import { buildSharedLibrary } from ${JSON.stringify(`${ROOT}build.ts`)};
        for (const name of ["gpu_run_prebuilt", "gpu_run_absent"]) {
          try { console.log(buildSharedLibrary({ name, sources: ["native/lib_info.c"] })); }
          catch (e) { console.log(e.code + " " + e.message); }
        }`;
      const run = async (manifest: Record<string, string>) => {
        Deno.writeTextFileSync(`${dir}/${PREBUILT_MANIFEST}`, JSON.stringify(manifest));
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["eval", code],
          env: { PATH: noTools, XLA_FFI_DENO_PREBUILT: dir, CC: "" },
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(out.success, new TextDecoder().decode(out.stderr));
        return new TextDecoder().decode(out.stdout).trim().split("\n");
      };
      const unavailable = ErrorCode.UNAVAILABLE;
      const [ok, absent] = await run({ [file]: key });
      assert.equal(ok, `${dir}/${file}`);
      assert.equal(
        absent,
        `${unavailable} No C compiler found to build the native library (tried cc, gcc, clang). ` +
          `Install one (e.g. gcc) or set XLA_FFI_DENO_LIB to a prebuilt library. ` +
          `(no prebuilt libgpu_run_absent.so in ${dir}: run \`deno task carry\` again)`,
      );
      const [stale] = await run({ [file]: "0" + key });
      assert.match(
        stale ?? "",
        new RegExp(
          `^${unavailable} No C compiler found .*\\(the prebuilt ${dir}/${file} was built from ` +
            "other sources: run `deno task carry` again\\)$",
        ),
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
      Deno.removeSync(noTools, { recursive: true });
    }
  },
});

Deno.test({
  name: "tests/gpu/run.sh --gpu-only fails where CUDA is unavailable",
  async fn() {
    const r = await sh(["tests/gpu/run.sh", "--gpu-only"], {
      XLA_FFI_DENO_CUDA: "/nonexistent/libcuda-missing.so.1",
    });
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(
      r.err,
      /FAILED: (no usable GPU here|a GPU is present but CUDA reports it unavailable): CUDA unavailable: CUDA is not available: cannot load the CUDA driver \/nonexistent\/libcuda-missing\.so\.1/,
    );
  },
});

Deno.test({
  name:
    "tests/gpu/run.sh --gpu-only on the stand-in driver: figures printed; an ignored GPU test fails it",
  ignore: !compiler,
  async fn() {
    // A plain build: the child runs without the sanitizer runtimes tests/sanitize.sh preloads.
    const standin = withEnv("XLA_FFI_DENO_SANITIZE", undefined, () =>
      buildSharedLibrary({
        name: "cuda_standin",
        sources: ["native/tests/cuda_standin.c"],
      }));
    const r = await sh(["tests/gpu/run.sh", "--gpu-only"], {
      XLA_FFI_DENO_CUDA: standin,
      XLA_FFI_DENO_NVRTC: "/nonexistent/libnvrtc.so.13", // the NVRTC GPU test is ignored
      BENCH_MIB: "4",
      BENCH_LAUNCHES: "500",
    });
    const all = `${r.out}\n${r.err}`;
    assert.equal(r.code, 1, all);
    assert.match(r.out, /== device: Stand-in CUDA device \(compute 9\.0, 132 SMs, 4 GiB\)/, all);
    const tests = /- GPU tests: (\d+) passed, 0 failed, 1 ignored/.exec(r.out);
    assert.ok(tests && Number(tests[1]) >= 15, all);
    assert.match(r.err, /FAILED: 1 GPU test\(s\) ignored:\nGPU: NVRTC compiles/);
    assert.match(r.out, /- examples\/cuda_saxpy\.ts: all results correct \(exit 0\)/);
    // No jax CUDA plugin here: the XLA:GPU case is reported as skipped, with the reason.
    assert.match(
      r.out,
      /- XLA:GPU, TS handler on XLA's stream: skipped: no jax with the CUDA plugin for \S+ \(exit 0\)/,
    );
    const block = r.out.slice(r.out.indexOf("===== GPU figures"));
    for (const m of ["h2d_gbps", "d2h_gbps", "d2d_gbps", "launch_empty_us", "launch_saxpy_us"]) {
      assert.match(
        block,
        new RegExp(`^\\| ${m} \\| [0-9.]+ (GB/s|µs) \\| [0-9.]+ (GB/s|µs) \\| `, "m"),
      );
    }
  },
});
