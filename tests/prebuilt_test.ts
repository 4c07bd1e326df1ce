/**
 * The prebuilt native libraries shipped with the module: current against the
 * sources, reproducible, found from the module's URL and copied into the
 * per-user cache, so that the published package runs with no compiler.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import {
  GUARD_LIBRARY,
  ISOLATE_PROGRAM,
  MAIN_LIBRARY,
  prebuildSet,
  PREBUILT_COMPILERS,
  sourceKey,
} from "../build.ts";
import { PREBUILT_PLATFORMS, type PrebuiltSet } from "../src/native/prebuilt.ts";
import { publishedFiles, readmeFirstHandler, runDeno, servePublished } from "./_published.ts";

const sanitized = (Deno.env.get("XLA_FFI_DENO_SANITIZE") ?? "") !== "";

function readSet(platform: string): PrebuiltSet {
  return JSON.parse(
    Deno.readTextFileSync(new URL(`../native/prebuilt/${platform}.json`, import.meta.url)),
  );
}

function bytesOf(gzip: string): Uint8Array {
  return new Uint8Array(gunzipSync(Uint8Array.from(atob(gzip), (c) => c.charCodeAt(0))));
}

// The sanitized run's keys carry its flags: the shipped libraries are checked by the plain run.
const SANITIZED = "a sanitized build's libraries carry its flags; the plain run checks them";

Deno.test({
  name: "the shipped prebuilt libraries are current: built from these sources, with their SHA-256" +
    (sanitized ? ` (ignored: ${SANITIZED})` : ""),
  ignore: sanitized,
  fn() {
    for (const platform of PREBUILT_PLATFORMS) {
      const set = readSet(platform);
      assert.equal(set.platform, platform);
      const expected = {
        "libxla_ffi_deno.so": sourceKey(MAIN_LIBRARY, "shared").key,
        "libxla_ffi_deno_guard.so": sourceKey(GUARD_LIBRARY, "shared").key,
        "xla_ffi_deno_isolate": sourceKey(ISOLATE_PROGRAM, "executable").key,
      };
      assert.deepEqual(Object.keys(set.files).sort(), Object.keys(expected).sort());
      for (const [file, key] of Object.entries(expected)) {
        const e = set.files[file]!;
        assert.ok(
          e.key === key,
          `native/prebuilt/${platform}.json: ${file} is stale against native/: ` +
            "run `deno task prebuild`",
        );
        const bytes = bytesOf(e.gzip);
        assert.equal(bytes.length, e.size);
        assert.equal(createHash("sha256").update(bytes).digest("hex"), e.sha256);
      }
    }
  },
});

/** The memory size of an ELF64 little-endian file's PT_TLS segment (0: none). */
function tlsBytes(elf: Uint8Array): number {
  const dv = new DataView(elf.buffer, elf.byteOffset, elf.byteLength);
  const phoff = Number(dv.getBigUint64(0x20, true));
  const size = dv.getUint16(0x36, true), count = dv.getUint16(0x38, true);
  for (let i = 0; i < count; i++) {
    const at = phoff + i * size;
    if (dv.getUint32(at, true) === 7) return Number(dv.getBigUint64(at + 0x28, true));
  }
  return 0;
}

Deno.test("the shipped libraries keep their thread-local block small (loaded again and again)", () => {
  // The main library has an initial-exec thread-local (crash.c), so each load of it takes its
  // whole block from the loader's static TLS reserve: with a 1 KiB block, the library failed to
  // load for the third test file of a `deno test` run on aarch64 ("cannot allocate memory in
  // static TLS block").
  for (const platform of PREBUILT_PLATFORMS) {
    for (const [file, e] of Object.entries(readSet(platform).files)) {
      const bytes = tlsBytes(bytesOf(e.gzip));
      assert.ok(bytes <= 64, `${platform}/${file}: a ${bytes}-byte thread-local block`);
    }
  }
});

function compilerVersion(cc: string): string | undefined {
  try {
    const out = new Deno.Command(cc, { args: ["--version"], stdout: "piped", stderr: "null" })
      .outputSync();
    return new TextDecoder().decode(out.stdout).split("\n")[0];
  } catch {
    return undefined;
  }
}

const x86 = readSet("linux-x86_64");
const x86Compiler = compilerVersion(PREBUILT_COMPILERS["linux-x86_64"]!.cc);

Deno.test({
  name: "a rebuild with the same compiler gives the same bytes (linux-x86_64)" +
    (sanitized
      ? ` (ignored: ${SANITIZED})`
      : x86Compiler !== x86.compiler
      ? ` (ignored: built with ${x86.compiler}, this machine has ${x86Compiler})`
      : ""),
  ignore: sanitized || x86Compiler !== x86.compiler,
  async fn() {
    const again = await prebuildSet("linux-x86_64");
    for (const [file, e] of Object.entries(x86.files)) {
      assert.equal(again.files[file]!.sha256, e.sha256, file);
    }
  },
});

Deno.test("the published files hold each native source once: in the embedded sources", () => {
  const files = publishedFiles();
  assert.deepEqual(files.filter((f) => /\.(c|cc|h)$/.test(f)), []);
  for (const platform of PREBUILT_PLATFORMS) {
    assert.ok(files.includes(`native/prebuilt/${platform}.json`), platform);
  }
  assert.ok(files.includes("src/native/embedded_sources.json"));
});

const here = `${Deno.build.os}-${Deno.build.arch}`;

Deno.test({
  name: "published over HTTP, no compiler on PATH, empty cache: the first handler runs in < 3 s",
  ignore: !PREBUILT_PLATFORMS.includes(here),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = servePublished();
    const home = Deno.makeTempDirSync();
    try {
      const code = readmeFirstHandler().replaceAll(
        `from "@deno-xla/ffi"`,
        `from "http://${server.host}/mod.ts"`,
      );
      // Fetch and compile the module once (Deno's own first import), then time a run
      // with an empty library cache.
      const denoDir = `${home}/deno`;
      const flags = [
        `--allow-import=${server.host}`,
        "--allow-env",
        "--allow-read",
        "--allow-write",
        "--allow-ffi",
      ];
      const env = { HOME: home, DENO_DIR: denoDir, PATH: "/nonexistent" };
      const first = await runDeno(flags, code, { ...env, XDG_CACHE_HOME: `${home}/c1` });
      assert.equal(first.code, 0, first.stderr);
      const r = await runDeno(flags, code, { ...env, XDG_CACHE_HOME: `${home}/c2` });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Float32Array\(3\) \[ 2, 4, 6 \]/);
      assert.equal(r.stderr, "", "no compiler ran, nothing to say");
      const dirs = [...Deno.readDirSync(`${home}/c2/deno-xla-ffi`)].map((e) => e.name);
      const lib = dirs.map((d) => `${home}/c2/deno-xla-ffi/${d}/libxla_ffi_deno.so`)
        .find((p) => {
          try {
            return Deno.statSync(p).isFile;
          } catch {
            return false;
          }
        });
      assert.ok(lib, dirs.join(","));
      const sha = createHash("sha256").update(Deno.readFileSync(lib)).digest("hex");
      assert.equal(sha, readSet(here).files["libxla_ffi_deno.so"]!.sha256);
      console.log(
        `first run: ${first.ms.toFixed(0)} ms; empty library cache: ${r.ms.toFixed(0)} ms`,
      );
      assert.ok(first.ms < 3000, `the first run took ${first.ms.toFixed(0)} ms`);
    } finally {
      await server.close();
      Deno.removeSync(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "a FIFO, a device or a symlink at the cached library's path: no hang, repaired",
  ignore: !PREBUILT_PLATFORMS.includes(here),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = servePublished();
    const home = Deno.makeTempDirSync();
    try {
      const code = `import { Runtime } from "http://${server.host}/mod.ts";
        new Runtime().close();
        console.log("ok");`;
      const flags = [`--allow-import=${server.host}`, "--allow-env", "--allow-read"];
      const env = {
        HOME: home,
        DENO_DIR: `${home}/deno`,
        XDG_CACHE_HOME: `${home}/c`,
        PATH: "/nonexistent",
      };
      const writes = [...flags, "--allow-write", "--allow-ffi"];
      const first = await runDeno(writes, code, env, 60_000);
      assert.equal(first.code, 0, first.stderr);
      const entry = readSet(here).files["libxla_ffi_deno.so"]!;
      const lib = `${home}/c/deno-xla-ffi/prebuilt-${entry.sha256.slice(0, 16)}/libxla_ffi_deno.so`;
      const repaired = () => {
        const st = Deno.lstatSync(lib);
        assert.ok(st.isFile && !st.isSymlink, "a regular file again");
        assert.equal(st.size, entry.size);
        assert.equal(
          createHash("sha256").update(Deno.readFileSync(lib)).digest("hex"),
          entry.sha256,
        );
      };
      repaired();
      const fifo = () => {
        Deno.removeSync(lib);
        const made = new Deno.Command("mkfifo", { args: [lib] }).outputSync();
        assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
        assert.ok(Deno.lstatSync(lib).isFile === false);
      };
      const cases: [string, () => void][] = [
        ["a FIFO", fifo],
        ["a symlink to /dev/zero", () => {
          Deno.removeSync(lib);
          Deno.symlinkSync("/dev/zero", lib);
        }],
        ["a symlink to a FIFO", () => {
          Deno.removeSync(lib);
          const made = new Deno.Command("mkfifo", { args: [`${home}/fifo`] }).outputSync();
          assert.equal(made.code, 0);
          Deno.symlinkSync(`${home}/fifo`, lib);
        }],
        ["a file of another size", () => Deno.writeFileSync(lib, new Uint8Array(entry.size + 1))],
      ];
      for (const [what, plant] of cases) {
        plant();
        const r = await runDeno(writes, code, env, 60_000);
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        assert.equal(r.stdout.trim(), "ok", what);
        repaired();
      }
    } finally {
      await server.close();
      Deno.removeSync(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "no prebuilt library for the platform and no compiler: UNIMPLEMENTED naming both",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = servePublished([`native/prebuilt/${here}.json`]);
    const home = Deno.makeTempDirSync();
    try {
      const code = `import { Runtime, FfiError } from "http://${server.host}/mod.ts";
        try { new Runtime(); } catch (e) {
          console.log(e instanceof FfiError, e.code, e.message);
        }`;
      const r = await runDeno(["-A"], code, {
        HOME: home,
        DENO_DIR: `${home}/deno`,
        XDG_CACHE_HOME: `${home}/c`,
        PATH: "/nonexistent",
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^true 12 @deno-xla\/ffi cannot run on /);
      assert.ok(r.stdout.includes(here), r.stdout);
      assert.match(r.stdout, /linux-x86_64 and linux-aarch64 \(glibc\)/);
      assert.match(r.stdout, /no C compiler was found/);
    } finally {
      await server.close();
      Deno.removeSync(home, { recursive: true });
    }
  },
});
