/**
 * Permissions as a user meets them: a script run without the flags it needs
 * gets one message naming all of them (no stack trace, no "Uncaught"), and a
 * cached native library needs no write or run permission.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { nativePath } from "../src/native/lib.ts";
import { isolateChildPath } from "../build.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

const SCRIPT = fileURLToPath(new URL("./_permissions_child.ts", import.meta.url));

async function run(
  flags: string[],
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...flags, SCRIPT, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  const t = new TextDecoder();
  return { code: out.code, stdout: t.decode(out.stdout), stderr: t.decode(out.stderr) };
}

function assertOneLine(stderr: string, expected: string): void {
  assert.equal(stderr, `error: ${expected}\n`);
  assert.doesNotMatch(stderr, /Uncaught|\n\s+at /);
}

Deno.test("permissions: without any flag, one message names every flag (no stack trace)", async () => {
  nativePath(); // built and cached by this process
  const r = await run([]);
  assert.equal(r.code, 1);
  // Without env and read access the cache cannot be looked at: the first use may copy the
  // shipped library into it (no compiler, no --allow-run).
  const here = fileURLToPath(new URL("../", import.meta.url)).replace(/\/$/, "");
  assertOneLine(
    r.stderr,
    `@deno-xla/ffi cannot load its native library without --allow-env --allow-read=${here} ` +
      "--allow-ffi, nor copy its prebuilt native library into the cache on first use (cached " +
      `afterwards) without --allow-write: run again with --allow-env --allow-read=${here} ` +
      "--allow-write --allow-ffi",
  );
});

Deno.test("permissions: with the library cached, only the flag still missing is named", async () => {
  nativePath();
  const r = await run(["--allow-env", "--allow-read"]);
  assert.equal(r.code, 1);
  assertOneLine(
    r.stderr,
    "@deno-xla/ffi cannot load its native library without --allow-ffi: run again with " +
      "--allow-ffi",
  );
});

Deno.test("permissions: a cached library needs no --allow-write or --allow-run", async () => {
  nativePath();
  const r = await run(["--allow-env", "--allow-read", "--allow-ffi"]);
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "Host\n");
});

Deno.test("permissions: a library still to build names --allow-write and --allow-run", async () => {
  // Built from source, with another compiler (a wrapper script): another cache entry, not built.
  const dir = Deno.makeTempDirSync();
  try {
    const cc = `${dir}/cc-wrapper`;
    Deno.writeTextFileSync(cc, `#!/bin/sh\nexec cc "$@"\n`, { mode: 0o755 });
    const r = await run(["--allow-env", "--allow-read", "--allow-ffi"], [], {
      CC: cc,
      XLA_FFI_DENO_BUILD: "source",
    });
    assert.equal(r.code, 1);
    const cache = fileURLToPath(new URL("../.build", import.meta.url));
    const flags = `--allow-write=${cache} --allow-run=${cc}`;
    assertOneLine(
      r.stderr,
      `@deno-xla/ffi needs ${flags} to build its native library on first use (cached ` +
        `afterwards): run again with ${flags}`,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("permissions: a script that catches the error goes on", async () => {
  const r = await run([], ["catch"]);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, "caught PERMISSION_DENIED\nwent on\n");
  assert.equal(r.code, 0);
});

Deno.test("permissions: the command line names every flag a command needs, in one line", async () => {
  const cli = fileURLToPath(new URL("../cli.ts", import.meta.url));
  const lib = nativePath(); // any shared library
  const inspect = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", cli, "inspect", lib],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  assert.equal(inspect.code, 2);
  assertOneLine(
    new TextDecoder().decode(inspect.stderr),
    // Its child processes get only this process's permissions: it needs what they need.
    "'inspect' needs --allow-env --allow-read --allow-write --allow-run --allow-ffi: run again " +
      "with --allow-env --allow-read --allow-write --allow-run --allow-ffi ('deno task cli' " +
      "grants every permission the command line uses)",
  );
  const handlers = fileURLToPath(new URL("../examples/handlers.ts", import.meta.url));
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      cli,
      "run",
      handlers,
      "scale",
      "--arg",
      "f32[1]=1",
      "--ret",
      "f32[1]",
      "--attr",
      "alpha=f32:2",
      "--out",
      "y.npy",
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  assert.equal(run.code, 2);
  assertOneLine(
    new TextDecoder().decode(run.stderr),
    // Without env access the library's cache cannot be looked at: copying the shipped
    // library into it may be needed (no compiler runs: no --allow-run).
    "'run' needs --allow-env --allow-write --allow-ffi: run again with " +
      "--allow-env --allow-write --allow-ffi ('deno task cli' grants every " +
      "permission the command line uses)",
  );
});

Deno.test("permissions: a child process gets only the permissions of its parent", async () => {
  nativePath();
  const out = `${Deno.makeTempDirSync()}/y.npy`;
  try {
    const some = await run(["--allow-read", `--allow-write=${out}`], ["child-permissions", out]);
    assert.equal(some.stderr, "");
    assert.deepEqual(JSON.parse(some.stdout), ["--allow-read", `--allow-write=${out}`]);
    const all = await run(
      ["--allow-read", "--allow-write", "--allow-run", "--allow-env", "--allow-ffi"],
      ["child-permissions", out],
    );
    assert.deepEqual(JSON.parse(all.stdout), [
      "--allow-ffi",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
    ]);
  } finally {
    Deno.removeSync(out.slice(0, out.lastIndexOf("/")), { recursive: true });
  }
});

Deno.test("permissions: 'run --out' needs --allow-write, whatever runs the handler", async () => {
  const cli = new URL("../cli.ts", import.meta.url).pathname;
  const lib = faultHandlersPath();
  nativePath();
  const dir = Deno.makeTempDirSync();
  try {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--allow-read",
        "--allow-run",
        "--allow-env",
        "--allow-ffi",
        cli,
        "run",
        lib,
        "fault_ok",
        "--arg",
        "f32[2]=1,2",
        "--ret",
        "f32[2]",
        "--out",
        `${dir}/y.npy`,
      ],
      env: { NO_COLOR: "1" },
      stdin: "null",
    }).output();
    assertOneLine(
      new TextDecoder().decode(r.stderr),
      "'run' needs --allow-write: run again with --allow-write ('deno task cli' grants every " +
        "permission the command line uses)",
    );
    assert.equal(r.code, 2);
    assert.deepEqual([...Deno.readDirSync(dir)], []); // nothing written
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("permissions: an isolated library's process needs --allow-run", async () => {
  nativePath();
  isolateChildPath(); // built and cached by this process
  const lib = faultHandlersPath();
  const r = await run(["--allow-read", "--allow-env", "--allow-ffi"], ["isolate", lib]);
  assert.equal(r.stderr, "");
  assert.match(
    r.stdout,
    /^PERMISSION_DENIED: Starting the process of the isolated handler library .*libxrt_fault_handlers\.so runs the program .*xla_ffi_deno_isolate: that needs --allow-run\n$/,
  );
  const ok = await run(["--allow-read", "--allow-env", "--allow-ffi", "--allow-run"], [
    "isolate",
    lib,
  ]);
  assert.equal(ok.stdout, "started\n", ok.stderr);
});
