/**
 * Using a checkout of the module from another project, as the README says
 * (before the package is on JSR): an import map entry in the project's
 * deno.json, a path import, and `deno task cli` started from the project's
 * folder, whose relative paths resolve from there (INIT_CWD).
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import { CHILD_PERMISSIONS } from "./_child.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url)).replace(/\/$/, "");

const SCRIPT = `import { CallFrameBuilder, DataType, Ffi, Runtime } from "@deno-xla/ffi";
import { saveNpy } from "@deno-xla/ffi/npy";
import { CALL_FRAME } from "@deno-xla/ffi/abi";
import { cudaAvailable } from "@deno-xla/ffi/cuda";
import { ExitCode } from "@deno-xla/ffi/cli";

using twice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
  y.typed().set(x.typed().map((v) => 2 * v));
});
using rt = new Runtime();
const y = new Float32Array(3);
using frame = new CallFrameBuilder().arg(new Float32Array([1, 2, 3])).ret(y).build();
rt.callSync(twice, frame);
saveNpy("y.npy", { dtype: DataType.F32, shape: [3], data: y });
console.log([...y].join(","), CALL_FRAME.sizeof, typeof cudaAvailable(), ExitCode.USAGE);
`;

function run(cwd: string, args: string[]) {
  return runIn(cwd, args, {});
}

async function runIn(cwd: string, args: string[], extra: Record<string, string>) {
  // As from a shell: deno task keeps an INIT_CWD it inherits (from `deno task test`).
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { ...env, NO_COLOR: "1", ...extra },
    clearEnv: true,
    stdin: "null",
  }).output();
  const t = new TextDecoder();
  return { code: out.code, stdout: t.decode(out.stdout), stderr: t.decode(out.stderr) };
}

Deno.test("a local checkout through an import map entry in the project's deno.json", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "project" });
  try {
    // The README's import map, with the checkout's path: it names every export of deno.json.
    const readme = Deno.readTextFileSync(`${ROOT}/README.md`);
    const block = readme.match(/```json\n(\{\n {2}"imports"[\s\S]*?)```/);
    assert.ok(block, "the README shows an import map");
    const shown = JSON.parse(block[1]!).imports as Record<string, string>;
    const exports = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`)).exports;
    assert.deepEqual(
      Object.keys(shown).sort(),
      Object.keys(exports).map((k) => k === "." ? "@deno-xla/ffi" : `@deno-xla/ffi${k.slice(1)}`)
        .sort(),
    );
    const imports = Object.fromEntries(
      Object.entries(shown).map(([k, v]) => [k, v.replace("../deno-xla-ffi", ROOT)]),
    );
    for (const [k, v] of Object.entries(imports)) {
      assert.ok(Deno.statSync(v).isFile, `${k} → ${v}`);
    }
    Deno.writeTextFileSync(`${dir}/deno.json`, JSON.stringify({ imports }, null, 2));
    Deno.writeTextFileSync(`${dir}/main.ts`, SCRIPT);
    const r = await run(dir, ["run", ...CHILD_PERMISSIONS, "main.ts"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "2,4,6 176 boolean 2\n");
    assert.ok(Deno.statSync(`${dir}/y.npy`).isFile);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a checkout served over HTTP through the README's URL import map, and --allow-import", async () => {
  // The checkout's files, as a web server sends them (TypeScript as TypeScript).
  const types: Record<string, string> = {
    ts: "application/typescript",
    json: "application/json",
    js: "text/javascript",
  };
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (path.includes("..")) return new Response("no", { status: 403 });
    try {
      const body = Deno.readFileSync(`${ROOT}${path}`);
      const type = types[path.split(".").pop()!] ?? "application/octet-stream";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  const host = `127.0.0.1:${server.addr.port}`;
  const dir = Deno.makeTempDirSync({ prefix: "project" });
  try {
    // The README's URL form names every export of deno.json too.
    const readme = Deno.readTextFileSync(`${ROOT}/README.md`);
    const blocks = [...readme.matchAll(/```json\n(\{\n {2}"imports"[\s\S]*?)```/g)];
    const urls = blocks.map((b) => JSON.parse(b[1]!).imports as Record<string, string>)
      .find((m) => Object.values(m).every((v) => v.startsWith("https://")));
    assert.ok(urls, "the README shows an import map of URLs");
    const exports = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`)).exports;
    assert.deepEqual(
      Object.entries(urls).map(([k, v]) => [k, v.replace(/^https:\/\/[^/]+\/deno-xla-ffi\//, "./")])
        .sort(),
      Object.entries(exports).map((
        [k, v],
      ) => [k === "." ? "@deno-xla/ffi" : `@deno-xla/ffi${k.slice(1)}`, v])
        .sort(),
    );
    const imports = Object.fromEntries(
      Object.entries(urls).map((
        [k, v],
      ) => [k, v.replace(/^https:\/\/[^/]+\/deno-xla-ffi/, `http://${host}`)]),
    );
    Deno.writeTextFileSync(`${dir}/deno.json`, JSON.stringify({ imports }, null, 2));
    Deno.writeTextFileSync(`${dir}/main.ts`, SCRIPT);
    // A cache of its own: nothing this run fetches stays behind.
    const cache = ["--config", `${dir}/deno.json`];
    const env = { DENO_DIR: `${dir}/.deno` };
    const go = (flags: string[]) =>
      runIn(dir, ["run", "--no-prompt", ...flags, ...cache, "main.ts"], env);
    const refused = await go([...CHILD_PERMISSIONS]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      new RegExp(`Requires import access to "${host}", run again with the --allow-import flag`),
    );
    const allowed = await go([...CHILD_PERMISSIONS, `--allow-import=${host}`]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, "2,4,6 176 boolean 2\n");
    // -A allows imports from any host, and Deno refuses it together with --allow-import.
    const all = await go(["-A"]);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, "2,4,6 176 boolean 2\n");
    const both = await go(["-A", `--allow-import=${host}`]);
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /--allow-all conflicts with --allow-import/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a local checkout through a path import", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "project" });
  try {
    const script = SCRIPT
      .replace('"@deno-xla/ffi"', JSON.stringify(`${ROOT}/mod.ts`))
      .replace('"@deno-xla/ffi/npy"', JSON.stringify(`${ROOT}/src/npy.ts`))
      .replace('"@deno-xla/ffi/abi"', JSON.stringify(`${ROOT}/src/abi/mod.ts`))
      .replace('"@deno-xla/ffi/cuda"', JSON.stringify(`${ROOT}/src/cuda/mod.ts`))
      .replace('"@deno-xla/ffi/cli"', JSON.stringify(`${ROOT}/cli.ts`));
    Deno.writeTextFileSync(`${dir}/main.ts`, script);
    const r = await run(dir, ["run", ...CHILD_PERMISSIONS, "main.ts"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "2,4,6 176 boolean 2\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("deno task cli resolves relative paths from the folder it was started in", async () => {
  const lib = buildSharedLibrary({
    name: "demo_handlers",
    sources: [new URL("../examples/native/demo_handlers.c", import.meta.url)],
  });
  const dir = Deno.makeTempDirSync({ prefix: "project" });
  try {
    Deno.copyFileSync(lib, `${dir}/libdemo.so`);
    const task = ["task", "--config", `${ROOT}/deno.json`, "cli"];
    const inspect = await run(dir, [...task, "inspect", "./libdemo.so"]);
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.match(inspect.stdout, /^\.\/libdemo\.so: x86_64, 5 exported functions\n/);
    const saxpy = [
      ...task,
      "run",
      "libdemo.so",
      "demo_saxpy",
      "--arg",
      "f32[2]=1,2",
      "--arg",
      "f32[2]=1",
      "--ret",
      "f32[2]",
      "--attr",
      "alpha=f32:2",
      "--out",
      "out/y.npy",
    ];
    const r = await run(dir, saxpy);
    // Resolved from the project's folder, which has no out/ yet.
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /error: --out 1: folder out of out\/y\.npy does not exist/);
    Deno.mkdirSync(`${dir}/out`);
    const ok = await run(dir, saxpy);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, "result 0: f32[2] written to out/y.npy\n");
    assert.ok(Deno.statSync(`${dir}/out/y.npy`).isFile);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
