/**
 * The command line of the module's build: builds the native library (and
 * the exception guard library and the isolated child program) and prints
 * their paths.
 *
 * `deno run --allow-read --allow-write --allow-run --allow-env build.ts`
 * (`--ptx`: the example kernels; `--embed`: regenerate the generated files,
 * see {@link generatedFiles}; `--embed --check`: exit 1 naming the generated
 * files that are stale, writing nothing; `--prebuild`: the generated files
 * and the prebuilt sets in `native/prebuilt/`).
 *
 * The build itself is `src/native/compile.ts` with `src/native/loader.ts`
 * (what the module needs at run time: they do not import this file),
 * `src/build/ptx.ts` (the example kernels) and `src/build/_generate.ts` (the
 * generated files and prebuilt sets); all are re-exported here for scripts
 * and tests of a checkout.
 *
 * @example
 * ```ts ignore
 * import { nativeLibraryPath } from "./build.ts";
 * console.log(nativeLibraryPath());
 * ```
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { PREBUILT_PLATFORMS } from "./src/native/prebuilt.ts";
import { installNative } from "./src/native/loader.ts";
import { buildPtx } from "./src/build/ptx.ts";
import { generatedFiles, prebuildSet, PREBUILT_COMPILERS } from "./src/build/_generate.ts";

export * from "./src/native/compile.ts";
export * from "./src/native/loader.ts";
export * from "./src/build/ptx.ts";
export * from "./src/build/_generate.ts";

if (import.meta.main) {
  if (Deno.args.includes("--ptx")) {
    for (const p of buildPtx()) console.log(p);
  } else if (Deno.args.includes("--embed")) {
    const check = Deno.args.includes("--check");
    const stale: string[] = [];
    for (const [rel, text] of generatedFiles()) {
      const out = new URL(rel, import.meta.url);
      let current: string | undefined;
      try {
        current = Deno.readTextFileSync(out);
      } catch {
        current = undefined;
      }
      if (current === text) continue;
      if (check) stale.push(rel);
      else {
        Deno.writeTextFileSync(out, text);
        console.log(fileURLToPath(out));
      }
    }
    if (stale.length > 0) {
      console.error(`stale generated files (run \`deno task embed\`): ${stale.join(", ")}`);
      Deno.exit(1);
    }
  } else if (Deno.args.includes("--prebuild")) {
    // The generated files first: they and the prebuilt sets come from the same native/.
    for (const [rel, text] of generatedFiles()) {
      Deno.writeTextFileSync(new URL(rel, import.meta.url), text);
    }
    for (const platform of PREBUILT_PLATFORMS) {
      const tools = PREBUILT_COMPILERS[platform]!;
      const out = new URL(`native/prebuilt/${platform}.json`, import.meta.url);
      try {
        const set = await prebuildSet(platform);
        Deno.mkdirSync(new URL("native/prebuilt/", import.meta.url), { recursive: true });
        Deno.writeTextFileSync(out, JSON.stringify(set, null, 1) + "\n");
        for (const [file, e] of Object.entries(set.files)) {
          console.log(`${platform}/${file}: ${e.size} bytes, sha256 ${e.sha256} (${set.compiler})`);
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        console.log(
          `${platform}: skipped, ${tools.cc} is not installed (${fileURLToPath(out)} kept)`,
        );
      }
    }
  } else {
    for (const p of installNative()) console.log(p);
  }
}
