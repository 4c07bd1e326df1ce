import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import {
  buildSharedLibrary,
  findCompiler,
  HANDLER_HOST_SOURCES,
  nativeLibraryPath,
} from "../build.ts";
import { native } from "../src/native/lib.ts";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { runDeno, servePublished } from "./_published.ts";

Deno.test("native library builds, is cached and reports its ABI version", () => {
  const first = nativeLibraryPath();
  const second = nativeLibraryPath();
  assert.equal(first, second);
  assert.ok(Deno.statSync(first).isFile);
  assert.equal(native().xla_ffi_deno_abi_version(), 1);
});

Deno.test("the TS handler host builds and links alone: it uses nothing of the embedded runtime", () => {
  // The host's sources name no runtime symbol or header...
  for (const rel of HANDLER_HOST_SOURCES) {
    const text = Deno.readTextFileSync(new URL(`../${rel}`, import.meta.url));
    assert.doesNotMatch(text, /\bxla_ffi_deno_runtime_|\bxrt_|runtime_internal/, rel);
  }
  // ...and link with every symbol resolved (the runtime's files left out).
  const path = buildSharedLibrary({
    name: "xla_ffi_deno_host_only",
    sources: HANDLER_HOST_SOURCES,
    linkFlags: ["-Wl,--no-undefined", "-ldl"],
  });
  const lib = Deno.dlopen(path, {
    xla_ffi_deno_handler_slot_count: { parameters: [], result: "i32" },
  });
  try {
    assert.equal(lib.symbols.xla_ffi_deno_handler_slot_count(), 1024);
  } finally {
    lib.close();
  }
});

Deno.test("a compile failure shows the compiler's output", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeFileSync(`${dir}/bad.c`, new TextEncoder().encode("int f(void) { return x; }\n"));
    assert.throws(
      () =>
        buildSharedLibrary({
          name: "bad",
          sources: [new URL(`file://${dir}/bad.c`)],
          outDir: dir,
        }),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.INTERNAL &&
        /Compiling libbad\.so failed/.test(e.message) && /x/.test(e.message) &&
        /error/.test(e.message),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("no compiler: the error names every candidate tried", async () => {
  // Run in a child process with an empty PATH and a bogus $CC.
  const code = `
    import { findCompiler } from ${JSON.stringify(new URL("../build.ts", import.meta.url).href)};
    try { findCompiler(); console.log("found"); } catch (e) { console.log(e.code + " " + e.message); }
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    env: { PATH: "/nonexistent", CC: "/nonexistent/mycc" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /^14 No C compiler found/);
  assert.match(text, /\$CC=\/nonexistent\/mycc, cc, gcc, clang/);
  assert.ok(findCompiler().path.length > 0);
});

Deno.test("a library that cannot be loaded gives the path and the loader's message", async () => {
  const { openLibrary } = await import("../src/native/lib.ts");
  assert.throws(
    () => openLibrary("/nonexistent/libnope.so", {}),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.UNAVAILABLE &&
      e.message.includes("/nonexistent/libnope.so"),
  );
});

Deno.test("the embedded native sources (for remote imports) match native/", async () => {
  const { embeddedSourcesJson, GUARD_SOURCES, ISOLATE_SOURCES, NATIVE_SOURCES } = await import(
    "../build.ts"
  );
  const url = new URL("../src/native/embedded_sources.json", import.meta.url);
  const current = Deno.readTextFileSync(url);
  assert.deepEqual(Object.keys(JSON.parse(current)), [
    ...NATIVE_SOURCES,
    ...GUARD_SOURCES,
    ...ISOLATE_SOURCES,
  ]);
  assert.ok(
    current === embeddedSourcesJson(),
    "src/native/embedded_sources.json is stale: run `deno task embed`",
  );
});

Deno.test("every generated file (embedded sources, ABI fact tables, Python) is current", async () => {
  const { generatedFiles } = await import("../build.ts");
  const files = generatedFiles();
  assert.ok(files.some(([rel]) => rel === "src/abi/_facts.generated.ts"));
  assert.ok(files.some(([rel]) => rel === "src/xla/_python.generated.ts"));
  for (const [rel, text] of files) {
    const current = Deno.readTextFileSync(new URL(`../${rel}`, import.meta.url));
    assert.ok(current === text, `${rel} is stale: run \`deno task embed\``);
  }
});

Deno.test({
  name: "imported from a URL with XLA_FFI_DENO_BUILD=source, the module compiles its library " +
    "into the per-user cache, without -Werror, saying so on one line",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // The published files served over HTTP (as JSR serves them), a fresh cache folder.
    const server = servePublished();
    const home = Deno.makeTempDirSync();
    const cache = `${home}/cache`;
    try {
      const code = `
        import { Runtime, runtimeDebugStats } from "http://${server.host}/mod.ts";
        import { werrorWanted } from "http://${server.host}/build.ts";
        console.log("werror", werrorWanted());
        using rt = new Runtime({ threads: 1 });
        console.log("api", rt.platform, typeof runtimeDebugStats().runtimesCreated);
      `;
      const r = await runDeno(["-A"], code, {
        HOME: home,
        XDG_CACHE_HOME: cache,
        DENO_DIR: `${home}/deno`,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        XLA_FFI_DENO_BUILD: "source",
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^api /m);
      const lines = r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("Download "));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        /^@deno-xla\/ffi: compiling its native library from source with \S+ \(XLA_FFI_DENO_BUILD=source\); cached in /,
      );
      // The library and its sources went to $XDG_CACHE_HOME/deno-xla-ffi.
      const entries = [...Deno.readDirSync(`${cache}/deno-xla-ffi`)].map((e) => e.name);
      assert.ok(entries.some((n) => n.startsWith("src-")), entries.join(","));
      // <key>/<version of the files the compiler read>/libxla_ffi_deno.so
      const libs = entries.filter((n) => !n.startsWith("src-")).filter((n) =>
        [...Deno.readDirSync(`${cache}/deno-xla-ffi/${n}`)].some((v) =>
          v.isDirectory &&
          [...Deno.readDirSync(`${cache}/deno-xla-ffi/${n}/${v.name}`)].some((f) =>
            f.name === "libxla_ffi_deno.so"
          )
        )
      );
      assert.equal(libs.length, 1, entries.join(","));
      // A user's machine builds without -Werror (a checkout, as CI, keeps it).
      assert.match(r.stdout, /^werror false$/m);
    } finally {
      await server.close();
      Deno.removeSync(home, { recursive: true });
    }
  },
});

Deno.test("a missing permission names the flag", async () => {
  // Each child lacks one permission that building (or loading) needs.
  const build = new URL("../build.ts", import.meta.url).href;
  const lib = new URL("../src/native/lib.ts", import.meta.url).href;
  const cases: { flags: string[]; code: string; flag: string; message?: string }[] = [
    {
      // A new output folder cannot be created without write permission.
      flags: ["--allow-read", "--allow-env", "--allow-run"],
      code: `const { buildSharedLibrary } = await import(${JSON.stringify(build)});
        buildSharedLibrary({ name: "x", sources: ["native/lib_info.c"], outDir: "/tmp/xla-ffi-perm-${Deno.pid}" });`,
      flag: "--allow-write",
    },
    {
      // Compiling needs to run the compiler.
      flags: ["--allow-read", "--allow-env", "--allow-write"],
      code: `const { buildSharedLibrary } = await import(${JSON.stringify(build)});
        const dir = Deno.makeTempDirSync();
        try { buildSharedLibrary({ name: "x", sources: ["native/lib_info.c"], outDir: dir }); }
        finally { Deno.removeSync(dir, { recursive: true }); }`,
      flag: "--allow-run",
    },
    {
      // Opening the (already built) library needs --allow-ffi.
      flags: ["--allow-read", "--allow-env", "--allow-write", "--allow-run"],
      code: `const { native } = await import(${JSON.stringify(lib)}); native();`,
      flag: "--allow-ffi",
      // Checked with the others before anything is opened (tests/permissions_test.ts).
      message: "cannot load its native library without --allow-ffi: run again with --allow-ffi",
    },
  ];
  const script = Deno.makeTempFileSync({ suffix: ".ts" });
  for (const c of cases) {
    // `deno eval` would grant every permission: run a script file instead.
    Deno.writeTextFileSync(
      script,
      `try { ${c.code} console.log("no error"); }
       catch (e) { console.log(e.name, e.code, e.message); }`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...c.flags, script],
      cwd: fileURLToPath(new URL("../", import.meta.url)),
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    // FfiError with PERMISSION_DENIED (7) naming the flag.
    assert.match(text, new RegExp(`^FfiError 7 .*${c.message ?? `needs ${c.flag}`}`, "m"), text);
  }
  Deno.removeSync(script);
});

Deno.test("the module does not import the build's command line, and imports its C sources only when it builds from them (dynamically)", async () => {
  // The static import graph of every entry point, from `deno info --json`.
  const entries = ["mod.ts", "cli.ts", "src/build/mod.ts", "src/testing/mod.ts", "src/xla/mod.ts"];
  const graphs: { modules: { specifier: string; dependencies?: Dependency[] }[] }[] = [];
  for (const e of entries) {
    const one = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", new URL(`../${e}`, import.meta.url).href],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(one.success, new TextDecoder().decode(one.stderr));
    graphs.push(JSON.parse(new TextDecoder().decode(one.stdout)));
  }
  interface Dependency {
    specifier: string;
    code?: { specifier: string };
    isDynamic?: boolean;
  }
  const root = new URL("../", import.meta.url).href;
  const buildTools = [
    "build.ts",
    "src/build/_generate.ts",
    "src/build/ptx.ts",
    "src/native/_abi_facts.ts",
  ].map((f) => root + f);
  for (const [i, graph] of graphs.entries()) {
    const statics = new Set<string>([root + entries[i]]);
    // Walk the static edges only.
    const byUrl = new Map(graph.modules.map((m) => [m.specifier, m]));
    const queue = [root + entries[i]];
    while (queue.length > 0) {
      const m = byUrl.get(queue.pop()!);
      for (const d of m?.dependencies ?? []) {
        const to = d.code?.specifier;
        if (to === undefined || d.isDynamic || statics.has(to)) continue;
        statics.add(to);
        queue.push(to);
      }
    }
    for (const tool of buildTools) assert.ok(!statics.has(tool), `${entries[i]} imports ${tool}`);
    assert.ok(
      !statics.has(root + "src/native/embedded_sources.json"),
      `${entries[i]} imports the embedded C sources statically`,
    );
  }
});
