/**
 * The prebuilt native libraries shipped with the module: one JSON file per
 * platform (`native/prebuilt/<platform>.json`, written by `deno task prebuild`)
 * holding the main library, the exception guard library and the isolated
 * child program, each gzip-compressed and base64-encoded with its SHA-256 and
 * the key of the sources it was built from.
 *
 * A local module reads the file when asked; a module imported from a URL
 * (JSR) imports it with the module itself (a JSON import, resolved against
 * `import.meta.url`: no `--allow-net` needed), so the synchronous loader finds
 * it in memory.
 *
 * @module
 */

/** One file of a prebuilt set. */
export interface PrebuiltFile {
  /** The key of the sources, flags and kind it was built from (`sourceKey` in build.ts). */
  key: string;
  /** SHA-256 of the file's bytes, hex. */
  sha256: string;
  /** Size in bytes. */
  size: number;
  /** Whether the file is a program (made executable in the cache). */
  executable: boolean;
  /** The bytes, gzip-compressed, base64-encoded. */
  gzip: string;
}

/** The prebuilt files of one platform. */
export interface PrebuiltSet {
  /** `<os>-<arch>`, e.g. `linux-x86_64`. */
  platform: string;
  /** The compiler that made them (`cc --version`, first line). */
  compiler: string;
  /** The files by name (`libxla_ffi_deno.so`, `libxla_ffi_deno_guard.so`, `xla_ffi_deno_isolate`). */
  files: Record<string, PrebuiltFile>;
}

/** The platforms a prebuilt native library is shipped for (glibc). */
export const PREBUILT_PLATFORMS: readonly string[] = ["linux-x86_64", "linux-aarch64"];

/** This process's platform as prebuilt sets name it: `<os>-<arch>`. */
export function platformName(): string {
  return `${Deno.build.os}-${Deno.build.arch}`;
}

const ROOT = new URL("../../", import.meta.url);

/** The remote module's set, imported with it. */
let remote: PrebuiltSet | undefined;
/** Why a remote module has no set. */
let remoteProblem: string | undefined;

async function importSet(platform: string): Promise<PrebuiltSet | undefined> {
  // Literal specifiers: the files are part of the module graph (and the published package).
  switch (platform) {
    case "linux-x86_64":
      return (await import("../../native/prebuilt/linux-x86_64.json", { with: { type: "json" } }))
        .default as PrebuiltSet;
    case "linux-aarch64":
      return (await import("../../native/prebuilt/linux-aarch64.json", { with: { type: "json" } }))
        .default as PrebuiltSet;
    default:
      return undefined;
  }
}

if (ROOT.protocol !== "file:" && PREBUILT_PLATFORMS.includes(platformName())) {
  try {
    remote = await importSet(platformName());
  } catch (e) {
    remoteProblem = `importing the prebuilt set failed: ${(e as Error).message}`;
  }
}

/**
 * The prebuilt set of this platform shipped with the module, or why there is
 * none. Throws Deno's permission errors (reading a local module's file).
 */
export function prebuiltSet(): { set?: PrebuiltSet; problem?: string } {
  const platform = platformName();
  if (!PREBUILT_PLATFORMS.includes(platform)) {
    return { problem: `no prebuilt native library is shipped for ${platform}` };
  }
  if (ROOT.protocol !== "file:") return remote ? { set: remote } : { problem: remoteProblem };
  const url = new URL(`native/prebuilt/${platform}.json`, ROOT);
  let text: string;
  try {
    text = Deno.readTextFileSync(url);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { problem: `no prebuilt native library for ${platform} in this copy of the module` };
    }
    throw e;
  }
  return { set: JSON.parse(text) as PrebuiltSet };
}
