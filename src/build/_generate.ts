/**
 * The files `deno task embed` generates from the checkout's sources, and the
 * prebuilt sets `deno task prebuild` writes: build-time tools of the root
 * `build.ts`, never imported by the module itself.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { abiFactsModule } from "../native/_abi_facts.ts";
import type { PrebuiltFile, PrebuiltSet } from "../native/prebuilt.ts";
import { PYTHON_SOURCES, pythonSourcesModule } from "../xla/_python_embed.ts";
import {
  _HEADER,
  type _OutputKind,
  type BuildOptions,
  C_FLAGS,
  CXX_FLAGS,
  EMBEDDED_SOURCES_FILE,
  GUARD_LIBRARY,
  GUARD_SOURCES,
  ISOLATE_PROGRAM,
  ISOLATE_SOURCES,
  MAIN_LIBRARY,
  NATIVE_SOURCES,
  sourceKey,
} from "../native/compile.ts";

/** The module's root folder (a checkout: these tools read its files). */
const ROOT = new URL("../../", import.meta.url);

function readText(rel: string): string {
  return Deno.readTextFileSync(new URL(rel, ROOT));
}

/**
 * The text of {@link EMBEDDED_SOURCES_FILE}: every file of
 * {@link NATIVE_SOURCES}, {@link GUARD_SOURCES} and {@link ISOLATE_SOURCES}
 * by module-relative path, one JSON object, so that a module imported from
 * a URL (JSR) or a copy of its published files can build the library.
 * `deno task embed` writes it; a test checks it is current.
 *
 * @example
 * ```ts ignore
 * import { embeddedSourcesJson } from "./_generate.ts";
 * console.log(Object.keys(JSON.parse(embeddedSourcesJson())));
 * ```
 */
export function embeddedSourcesJson(): string {
  const files = [...NATIVE_SOURCES, ...GUARD_SOURCES, ...ISOLATE_SOURCES];
  return JSON.stringify(Object.fromEntries(files.map((rel) => [rel, readText(rel)])), null, 2) +
    "\n";
}

/**
 * Every file `deno task embed` writes, relative to the module root, with its
 * current text: the embedded C sources, the TypeScript tables generated
 * from `native/abi_facts.h` and the real-XLA host's Python files
 * (`src/xla/python/*.py`) as strings.
 *
 * @example
 * ```ts ignore
 * import { generatedFiles } from "./_generate.ts";
 * for (const [rel] of generatedFiles()) console.log(rel);
 * ```
 */
export function generatedFiles(): [string, string][] {
  const facts = readText("native/abi_facts.h");
  const python = Object.fromEntries(PYTHON_SOURCES.map((rel) => [rel, readText(rel)]));
  return [
    [EMBEDDED_SOURCES_FILE, embeddedSourcesJson()],
    ["src/abi/_facts.generated.ts", abiFactsModule(facts)],
    ["src/xla/_python.generated.ts", pythonSourcesModule(python)],
  ];
}

/**
 * The compilers of each shipped platform: the GNU cross compilers by their
 * target names (on a host of that architecture, the native ones).
 */
export const PREBUILT_COMPILERS: Readonly<Record<string, { cc: string; cxx: string }>> = {
  "linux-x86_64": { cc: "x86_64-linux-gnu-gcc", cxx: "x86_64-linux-gnu-g++" },
  "linux-aarch64": { cc: "aarch64-linux-gnu-gcc", cxx: "aarch64-linux-gnu-g++" },
};

/**
 * Flags that make a prebuilt library the same bytes on every rebuild with
 * the same compiler: no build id, no symbol table or debug information, no
 * paths of the machine (sources are compiled by relative path from the
 * module's folder).
 */
export const PREBUILT_FLAGS: readonly string[] = [
  "-ffile-prefix-map=./=",
  "-Wl,--build-id=none",
  "-Wl,--hash-style=gnu",
  "-s",
];

/**
 * Builds the module's own libraries (the main library, the exception guard
 * library and the isolated child program) for `platform` from the sources
 * in `native/`, with `-Werror` and {@link PREBUILT_FLAGS}, and returns the
 * prebuilt set `native/prebuilt/<platform>.json` holds. `deno task prebuild`
 * writes it for every platform whose compiler is installed.
 *
 * @example
 * ```ts ignore
 * import { prebuildSet } from "./_generate.ts";
 * const set = await prebuildSet("linux-x86_64");
 * console.log(Object.keys(set.files));
 * ```
 */
export async function prebuildSet(platform: string): Promise<PrebuiltSet> {
  const tools = PREBUILT_COMPILERS[platform];
  if (tools === undefined) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `No prebuilt platform '${platform}'`);
  }
  const root = fileURLToPath(ROOT);
  const work = Deno.makeTempDirSync({ prefix: "xla-ffi-prebuild-" });
  const version = new TextDecoder().decode(
    (await new Deno.Command(tools.cc, { args: ["--version"], stdout: "piped" }).output()).stdout,
  ).split("\n")[0]!;
  try {
    const targets: [BuildOptions, _OutputKind][] = [
      [MAIN_LIBRARY, "shared"],
      [GUARD_LIBRARY, "shared"],
      [ISOLATE_PROGRAM, "executable"],
    ];
    const built = await Promise.all(targets.map(async ([options, kind]) => {
      const { file, key } = sourceKey(options, kind);
      const out = `${work}/${file}`;
      const args = [
        ...(options.baseFlags ?? (options.cxx ? CXX_FLAGS : C_FLAGS)),
        ...(options.extraFlags ?? []),
        ...PREBUILT_FLAGS,
        "-Inative",
        ...(kind === "shared" ? ["-shared"] : []),
        "-o",
        out,
        ...options.sources.map(String).filter((f) => !_HEADER.test(f)),
        ...(options.linkFlags ?? []),
      ];
      const compiler = options.cxx ? tools.cxx : tools.cc;
      const result = await new Deno.Command(compiler, {
        args,
        cwd: root,
        stdout: "piped",
        stderr: "piped",
        env: { LC_ALL: "C", SOURCE_DATE_EPOCH: "0" },
      }).output();
      if (!result.success) {
        throw new FfiError(
          ErrorCode.INTERNAL,
          `Compiling ${file} for ${platform} failed (${compiler} ${args.join(" ")}):\n` +
            new TextDecoder().decode(result.stderr),
        );
      }
      const bytes = Deno.readFileSync(out);
      const entry: PrebuiltFile = {
        key,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        size: bytes.length,
        executable: kind === "executable",
        gzip: btoa(
          Array.from(gzipSync(bytes, { level: 9 }), (b) => String.fromCharCode(b)).join(""),
        ),
      };
      return [file, entry] as const;
    }));
    return { platform, compiler: version, files: Object.fromEntries(built) };
  } finally {
    Deno.removeSync(work, { recursive: true });
  }
}
