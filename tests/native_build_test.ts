import assert from "node:assert/strict";
import { buildSharedLibrary, findCompiler, nativeLibraryPath } from "../build.ts";
import { native } from "../src/native/lib.ts";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";

Deno.test("native library builds, is cached and reports its ABI version", () => {
  const first = nativeLibraryPath();
  const second = nativeLibraryPath();
  assert.equal(first, second);
  assert.ok(Deno.statSync(first).isFile);
  assert.equal(native().xla_ffi_deno_abi_version(), 1);
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
