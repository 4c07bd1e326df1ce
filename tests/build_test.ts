/**
 * `@deno-xla/ffi/build`: handler libraries built from a user's folder (a
 * temporary one outside the module, paths relative to it) and called through
 * the embedded runtime.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { buildHandlerLibrary } from "../src/build/mod.ts";
import { findCxxCompiler } from "../build.ts";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { CallFrameBuilder } from "../src/runtime/call_frame.ts";
import { HandlerLibrary } from "../src/runtime/handler_library.ts";
import { Runtime } from "../src/runtime/runtime.ts";
import { jaxlibHeaders } from "./_jax.ts";
import { servePublished } from "./_published.ts";

/** A temporary user folder with `files` (paths relative to it); removed after `fn`. */
function inUserFolder(files: Record<string, string>, fn: (dir: string) => void): void {
  const dir = Deno.makeTempDirSync({ prefix: "deno-xla-ffi-user-" });
  try {
    for (const [rel, text] of Object.entries(files)) {
      Deno.mkdirSync(`${dir}/${rel}`.replace(/\/[^/]*$/, ""), { recursive: true });
      Deno.writeTextFileSync(`${dir}/${rel}`, text);
    }
    fn(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

function isFfi(code: ErrorCode, pattern: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

/** Calls `symbol` of the library at `path` with out = f32[n]; returns out. */
function callFill(path: string, symbol: string, n: number): number[] {
  using lib = HandlerLibrary.open(path);
  using rt = new Runtime({ threads: 0 });
  const out = new Float32Array(n);
  using frame = new CallFrameBuilder().ret(out).build();
  rt.callSync(lib.handler(symbol), frame);
  return [...out];
}

const FILL_C = `#include "xla_ffi.h"
#include "fill_value.h"

XLA_FFI_Error* fill(XLA_FFI_CallFrame* f) {
  if (f->extension_start != NULL) return NULL;
  XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)f->rets.rets[0];
  for (int64_t i = 0; i < out->dims[0]; i++) ((float*)out->data)[i] = FILL_VALUE;
  return NULL;
}
`;

Deno.test("build: a C handler from the working directory's relative paths; headers key the cache", () => {
  inUserFolder(
    { "src/fill.c": FILL_C, "include/fill_value.h": "#define FILL_VALUE 7.0f\n" },
    (dir) => {
      const cwd = Deno.cwd();
      Deno.chdir(dir);
      try {
        const options = {
          name: "fill",
          sources: ["src/fill.c"],
          includeDirs: ["include"],
          cacheDir: "out",
        };
        const first = buildHandlerLibrary(options);
        assert.ok(first.startsWith(`${Deno.cwd()}/out/`), first); // relative to root: the cwd
        assert.equal(buildHandlerLibrary(options), first); // cached
        assert.deepEqual(callFill(first, "fill", 3), [7, 7, 7]);
        // A changed header is a new build, though no source changed.
        Deno.writeTextFileSync("include/fill_value.h", "#define FILL_VALUE 9.0f\n");
        const second = buildHandlerLibrary(options);
        assert.notEqual(second, first);
        assert.deepEqual(callFill(second, "fill", 2), [9, 9]);
      } finally {
        Deno.chdir(cwd);
      }
    },
  );
});

Deno.test("build: outDir puts the library at a path that stays the same from build to build", () => {
  inUserFolder(
    { "src/fill.c": FILL_C, "include/fill_value.h": "#define FILL_VALUE 7.0f\n" },
    (dir) => {
      const options = {
        name: "fill",
        sources: ["src/fill.c"],
        includeDirs: ["include"],
        root: dir,
        cacheDir: "cache",
        outDir: "lib/native",
      };
      const stable = `${dir}/lib/native/libfill.so`;
      const cached = buildHandlerLibrary({ ...options, outDir: undefined });
      assert.ok(cached.startsWith(`${dir}/cache/`), cached);
      assert.equal(buildHandlerLibrary(options), stable); // the folder made, the build copied
      assert.deepEqual(Deno.readFileSync(stable), Deno.readFileSync(cached));
      assert.deepEqual(callFill(stable, "fill", 2), [7, 7]);
      // Nothing changed: the file is left as it is.
      const before = Deno.statSync(stable);
      assert.equal(
        buildHandlerLibrary({ ...options, outDir: new URL(`file://${dir}/lib/native`) }),
        stable,
      );
      const after = Deno.statSync(stable);
      assert.equal(after.mtime?.getTime(), before.mtime?.getTime());
      assert.equal(after.ino, before.ino);
      // A change: a new build in the cache, replaced at the same path (a new file, renamed in).
      Deno.writeTextFileSync(`${dir}/include/fill_value.h`, "#define FILL_VALUE 9.0f\n");
      assert.equal(buildHandlerLibrary(options), stable);
      const rebuilt = buildHandlerLibrary({ ...options, outDir: undefined });
      assert.notEqual(rebuilt, cached);
      assert.deepEqual(Deno.readFileSync(stable), Deno.readFileSync(rebuilt));
      assert.notEqual(Deno.statSync(stable).ino, before.ino);
      assert.deepEqual(
        [...Deno.readDirSync(`${dir}/lib/native`)].map((e) => e.name),
        ["libfill.so"],
      );
      // Not a folder: INVALID_ARGUMENT naming it.
      Deno.writeTextFileSync(`${dir}/a_file`, "");
      assert.throws(
        () => buildHandlerLibrary({ ...options, outDir: "a_file" }),
        isFfi(ErrorCode.INVALID_ARGUMENT, /^outDir .*\/a_file is not a folder$/),
      );
      assert.throws(
        () => buildHandlerLibrary({ ...options, outDir: "" }),
        isFfi(ErrorCode.INVALID_ARGUMENT, /^outDir must be a folder path or a file: URL/),
      );
    },
  );
});

const TWICE_CC = `#include <cstddef>
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Twice(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float bias) {
  if (x.element_count() != y->element_count())
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, "twice: sizes differ");
  for (size_t i = 0; i < x.element_count(); ++i)
    y->typed_data()[i] = 2 * x.typed_data()[i] + bias;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(twice, Twice,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("bias"));
`;

const jax = jaxlibHeaders();
const cxxReason = findCxxCompiler() === undefined ? "no C++ compiler" : undefined;
const ffiReason = jax.reason ?? cxxReason;

Deno.test({
  name: "build: a C++ handler written with jaxlib's ffi.h runs in the embedded runtime" +
    (ffiReason ? ` (ignored: ${ffiReason})` : ""),
  ignore: ffiReason !== undefined,
  fn: async () => {
    const { scalar } = await import("../src/runtime/attributes.ts");
    const { DataType } = await import("../src/abi/enums.ts");
    inUserFolder({ "handlers/twice.cc": TWICE_CC }, (dir) => {
      // -Wall -Wextra -Werror on the user's code; jaxlib's headers (which
      // have sign-compare warnings) through -isystem.
      const path = buildHandlerLibrary({
        name: "twice",
        root: dir,
        sources: ["handlers/twice.cc"],
        ffiHeaders: "jaxlib",
        cacheDir: `${dir}/out`,
      });
      using lib = HandlerLibrary.open(path);
      using rt = new Runtime({ threads: 0 });
      assert.equal(rt.metadata(lib.handler("twice")).apiVersion.major, 0);
      const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
      using frame = new CallFrameBuilder().arg(x).ret(y).attr("bias", scalar(DataType.F32, 0.5))
        .build();
      rt.callSync(lib.handler("twice"), frame);
      assert.deepEqual([...y], [2.5, 4.5, 6.5]);
      // ffi.h's own decoding errors reach the caller.
      using noAttr = new CallFrameBuilder().arg(x).ret(y).build();
      assert.throws(() => rt.callSync(lib.handler("twice"), noAttr), /attribute/i);
    });
  },
});

Deno.test("build: a compile error names the compiler's first error line", () => {
  inUserFolder({ "broken.c": '#include "xla_ffi.h"\nint f(void) { return missing; }\n' }, (dir) => {
    assert.throws(
      () =>
        buildHandlerLibrary({ name: "broken", root: dir, sources: ["broken.c"], cacheDir: dir }),
      isFfi(
        ErrorCode.INTERNAL,
        /^Compiling libbroken\.so failed: \S*broken\.c:2:\d+: error: .*missing/,
      ),
    );
  });
});

Deno.test("build: bad input gets a clear error before any compile", () => {
  inUserFolder({ "a.c": "int a;\n", "b.cc": "int b;\n", "notes.txt": "" }, (dir) => {
    const build = (o: Partial<Parameters<typeof buildHandlerLibrary>[0]>) => () =>
      buildHandlerLibrary({ name: "x", sources: ["a.c"], root: dir, cacheDir: dir, ...o });
    assert.throws(
      build({ sources: ["nope.c"] }),
      isFfi(ErrorCode.NOT_FOUND, /'nope\.c' not found/),
    );
    assert.throws(build({ sources: [] }), isFfi(ErrorCode.INVALID_ARGUMENT, /at least one/));
    assert.throws(build({ sources: ["a.c", "b.cc"] }), isFfi(ErrorCode.INVALID_ARGUMENT, /mix C/));
    assert.throws(build({ sources: ["notes.txt"] }), isFfi(ErrorCode.INVALID_ARGUMENT, /not a C/));
    assert.throws(build({ name: "../x" }), isFfi(ErrorCode.INVALID_ARGUMENT, /name must be/));
    assert.throws(
      build({ ffiHeaders: "no/such/dir" }),
      isFfi(ErrorCode.NOT_FOUND, /FFI header folder 'no\/such\/dir' not found/),
    );
    assert.throws(
      build({ ffiHeaders: "jaxlib", python: `${dir}/no-python` }),
      isFfi(ErrorCode.UNAVAILABLE, /Cannot run the Python interpreter/),
    );
    assert.throws(build({ includeDirs: ["a.c"] }), isFfi(ErrorCode.NOT_FOUND, /Include folder/));
  });
});

Deno.test("build: a checkout and sources in folders with spaces build and load", async () => {
  // A copy of the module's own files under "with space/" (percent-encoded in its URLs).
  const { nativeLibraryPath } = await import("../build.ts");
  const mainLib = nativeLibraryPath();
  const tmp = Deno.makeTempDirSync({ prefix: "deno-xla-ffi-space-" });
  try {
    const repo = `${tmp}/with space/repo`;
    Deno.mkdirSync(repo, { recursive: true });
    const root = new URL("../", import.meta.url);
    for (const f of ["src", "native", "build.ts", "mod.ts", "deno.json"]) {
      const cp = new Deno.Command("cp", { args: ["-r", fileURLToPath(new URL(f, root)), repo] });
      assert.ok((await cp.output()).success, `copying ${f}`);
    }
    Deno.mkdirSync(`${repo}/user code/include dir`, { recursive: true });
    Deno.writeTextFileSync(`${repo}/user code/fill.c`, FILL_C);
    Deno.writeTextFileSync(`${repo}/user code/include dir/fill_value.h`, "#define FILL_VALUE 5\n");
    Deno.writeTextFileSync(
      `${repo}/child.ts`,
      `import { buildHandlerLibrary } from "./src/build/mod.ts";
import { CallFrameBuilder, HandlerLibrary, Runtime } from "./mod.ts";
const path = buildHandlerLibrary({
  name: "fill",
  root: new URL("./user code/", import.meta.url),
  sources: ["fill.c"],
  includeDirs: ["include dir"],
});
using lib = HandlerLibrary.open(new URL("file://" + path.split("/").map(encodeURIComponent).join("/")));
using rt = new Runtime({ threads: 0 });
const out = new Float32Array(2);
using frame = new CallFrameBuilder().ret(out).build();
rt.callSync(lib.handler("fill"), frame);
console.log(path, JSON.stringify([...out]));
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", `${repo}/child.ts`],
      cwd: repo,
      env: { XLA_FFI_DENO_LIB: mainLib, XLA_FFI_DENO_PREBUILT: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const err = new TextDecoder().decode(out.stderr);
    assert.ok(out.success, err);
    assert.match(text, /\[5,5\]\n$/);
    // The default cache is the working directory's; nothing was made under an encoded name.
    assert.ok(text.startsWith(`${repo}/.deno-xla-ffi/build/`), text);
    const encoded: string[] = [];
    for await (const e of Deno.readDir(tmp)) if (e.name !== "with space") encoded.push(e.name);
    assert.deepEqual(encoded, []);
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
});

/** Every file and folder under `dir`, relative to it, sorted. */
function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of Deno.readDirSync(d)) {
      out.push(`${rel}${e.name}`);
      if (e.isDirectory) walk(`${d}/${e.name}`, `${rel}${e.name}/`);
    }
  };
  walk(dir, "");
  return out.sort();
}

Deno.test("build: user builds land in the working directory, or cacheDir; the module's folder gets nothing", async () => {
  const { nativeLibraryPath } = await import("../build.ts");
  const mainLib = nativeLibraryPath();
  const tmp = Deno.makeTempDirSync({ prefix: "deno-xla-ffi-cache-" });
  try {
    // A copy of the module (as a vendored or checked-out one would be) and a project beside it.
    const mod = `${tmp}/module`, project = `${tmp}/project`;
    Deno.mkdirSync(mod);
    Deno.mkdirSync(project);
    const root = new URL("../", import.meta.url);
    for (const f of ["src", "native", "build.ts", "mod.ts", "deno.json"]) {
      const cp = new Deno.Command("cp", { args: ["-r", fileURLToPath(new URL(f, root)), mod] });
      assert.ok((await cp.output()).success, `copying ${f}`);
    }
    Deno.writeTextFileSync(`${project}/fill.c`, FILL_C);
    Deno.writeTextFileSync(`${project}/fill_value.h`, "#define FILL_VALUE 4.0f\n");
    Deno.writeTextFileSync(
      `${project}/main.ts`,
      `import { buildHandlerLibrary, defaultCacheDir } from "../module/src/build/mod.ts";
console.log(defaultCacheDir());
console.log(buildHandlerLibrary({ name: "fill", sources: ["fill.c"] }));
console.log(buildHandlerLibrary({ name: "fill", sources: ["fill.c"], cacheDir: "elsewhere" }));
`,
    );
    const before = listTree(mod);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", "--no-config", "main.ts"],
      cwd: project,
      env: { XLA_FFI_DENO_LIB: mainLib, XLA_FFI_DENO_PREBUILT: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const [cache, first, second] = new TextDecoder().decode(out.stdout).trim().split("\n");
    assert.equal(cache, `${project}/.deno-xla-ffi/build`);
    assert.ok(first?.startsWith(`${project}/.deno-xla-ffi/build/`), first);
    assert.ok(second?.startsWith(`${project}/elsewhere/`), second);
    assert.deepEqual(callFill(first!, "fill", 2), [4, 4]);
    assert.deepEqual(listTree(mod), before);
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
});

Deno.test({
  name: "build: imported from a URL, user builds land in the per-user cache",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // The published files served over HTTP, as JSR serves them.
    const server = servePublished();
    const host = server.host;
    const tmp = Deno.makeTempDirSync({ prefix: "deno-xla-ffi-remote-" });
    try {
      const project = `${tmp}/project`, cache = `${tmp}/xdg`;
      Deno.mkdirSync(project);
      Deno.writeTextFileSync(`${project}/fill.c`, FILL_C);
      Deno.writeTextFileSync(`${project}/fill_value.h`, "#define FILL_VALUE 6.0f\n");
      const code = `
        import { buildHandlerLibrary, defaultCacheDir } from "http://${host}/src/build/mod.ts";
        console.log(defaultCacheDir());
        console.log(buildHandlerLibrary({ name: "fill", sources: ["fill.c"] }));
      `;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", "--no-lock", "--no-config", `--allow-import=${host}`, "-A", code],
        cwd: project,
        env: { XDG_CACHE_HOME: cache, DENO_DIR: `${tmp}/deno`, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      const [dir, path] = new TextDecoder().decode(out.stdout).trim().split("\n");
      assert.equal(dir, `${cache}/deno-xla-ffi/build`);
      assert.ok(path?.startsWith(`${cache}/deno-xla-ffi/build/`), path);
      assert.deepEqual(callFill(path!, "fill", 2), [6, 6]);
      assert.deepEqual(listTree(project), ["fill.c", "fill_value.h"]);
    } finally {
      await server.close();
      Deno.removeSync(tmp, { recursive: true });
    }
  },
});

Deno.test("build: every file the compiler read keys the cache: headers in subfolders, .def tables", () => {
  inUserFolder(
    {
      "src/fill.c": `#include "xla_ffi.h"
#include "detail/fill_value.h"

static const float kTable[] = {
#include "table.def"
};

XLA_FFI_Error* fill(XLA_FFI_CallFrame* f) {
  if (f->extension_start != NULL) return NULL;
  XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)f->rets.rets[0];
  for (int64_t i = 0; i < out->dims[0]; i++) ((float*)out->data)[i] = FILL_VALUE + kTable[0];
  return NULL;
}
`,
      "src/detail/fill_value.h": "#define FILL_VALUE 1.0f\n",
      "src/table.def": "10.0f,\n",
    },
    (dir) => {
      const options = { name: "fill", root: dir, sources: ["src/fill.c"], cacheDir: `${dir}/out` };
      const first = buildHandlerLibrary(options);
      assert.deepEqual(callFill(first, "fill", 2), [11, 11]);
      assert.equal(buildHandlerLibrary(options), first); // nothing changed: cached
      // A header in a subfolder of the sources' folder changes.
      Deno.writeTextFileSync(`${dir}/src/detail/fill_value.h`, "#define FILL_VALUE 2.0f\n");
      const second = buildHandlerLibrary(options);
      assert.notEqual(second, first);
      assert.deepEqual(callFill(second, "fill", 2), [12, 12]);
      // A file included that is no header by its name changes.
      Deno.writeTextFileSync(`${dir}/src/table.def`, "20.0f,\n");
      const third = buildHandlerLibrary(options);
      assert.ok(third !== first && third !== second, third);
      assert.deepEqual(callFill(third, "fill", 1), [22]);
      assert.equal(buildHandlerLibrary(options), third);
      // Back to the first contents: the first build serves again.
      Deno.writeTextFileSync(`${dir}/src/detail/fill_value.h`, "#define FILL_VALUE 1.0f\n");
      Deno.writeTextFileSync(`${dir}/src/table.def`, "10.0f,\n");
      assert.equal(buildHandlerLibrary(options), first);
      // No temporary files are left behind.
      const stray: string[] = [];
      const walk = (d: string) => {
        for (const e of Deno.readDirSync(d)) {
          if (e.isDirectory) walk(`${d}/${e.name}`);
          else if (/tmp/.test(e.name)) stray.push(`${d}/${e.name}`);
        }
      };
      walk(`${dir}/out`);
      assert.deepEqual(stray, []);
    },
  );
});

Deno.test("build: the same library built at once by several Workers and processes", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "deno-xla-ffi-user-" });
  try {
    Deno.mkdirSync(`${dir}/include`);
    Deno.writeTextFileSync(`${dir}/fill.c`, FILL_C);
    Deno.writeTextFileSync(`${dir}/include/fill_value.h`, "#define FILL_VALUE 3.0f\n");
    const mod = new URL("../src/build/mod.ts", import.meta.url).href;
    const options = JSON.stringify({
      name: "fill",
      root: dir,
      sources: ["fill.c"],
      includeDirs: ["include"],
      cacheDir: `${dir}/out`,
    });
    // JavaScript, so neither a Worker nor a process spends time type-checking before it builds.
    Deno.writeTextFileSync(
      `${dir}/builder.js`,
      `import { buildHandlerLibrary } from ${JSON.stringify(mod)};
const options = ${options};
if (typeof WorkerGlobalScope === "undefined") {
  console.log(buildHandlerLibrary(options));
} else {
  self.onmessage = () => {
    try {
      self.postMessage({ path: buildHandlerLibrary(options) });
    } catch (e) {
      self.postMessage({ error: String(e) });
    }
  };
}
`,
    );
    const workers = Array.from(
      { length: 4 },
      () => new Worker(new URL(`file://${dir}/builder.js`), { type: "module" }),
    );
    const fromWorkers = workers.map((w) =>
      new Promise<{ path?: string; error?: string }>((resolve) => {
        w.onmessage = (e) => resolve(e.data);
        w.onerror = (e) => resolve({ error: e.message });
      })
    );
    const processes = Array.from({ length: 2 }, () =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${dir}/builder.js`],
        stdout: "piped",
        stderr: "piped",
      }).output());
    for (const w of workers) w.postMessage("build");
    const answers = await Promise.all(fromWorkers);
    for (const w of workers) w.terminate();
    const outputs = await Promise.all(processes);
    const paths = answers.map((a) => {
      assert.equal(a.error, undefined);
      return a.path!;
    });
    for (const o of outputs) {
      assert.ok(o.success, new TextDecoder().decode(o.stderr));
      paths.push(new TextDecoder().decode(o.stdout).trim());
    }
    assert.equal(new Set(paths).size, 1, paths.join("\n"));
    assert.deepEqual(callFill(paths[0]!, "fill", 2), [3, 3]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("build: the compiler's dependency lists are read as Make writes them", async () => {
  const { _parseDepFile } = await import("../build.ts");
  assert.deepEqual(
    _parseDepFile(
      "/out\\ dir/lib.so.tmp: /src/a.c /usr/include/stdc-predef.h \\\n" +
        " /with\\ space/b.h /src/t.def \\\r\n /src/c$$.h /src/\\#d.h\n" +
        "x.o: x.c a.h\n",
    ),
    [
      "/src/a.c",
      "/usr/include/stdc-predef.h",
      "/with space/b.h",
      "/src/t.def",
      "/src/c$.h",
      "/src/#d.h",
      "x.c",
      "a.h",
    ],
  );
});
