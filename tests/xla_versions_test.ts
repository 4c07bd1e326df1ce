/**
 * What the hosted Python and jaxlib may be, checked where they can be here:
 * the XLA FFI API versions a jaxlib may declare (one the module speaks, a
 * newer 0.x minor, an unknown major refused with a clear error), an
 * interpreter without a shared libpython (a message naming the fix), a
 * Python 3.12 hosted in the process (the GPU machine's version; when one is
 * installed here), `platform` and a CUDA backend jax cannot start.
 */
import assert from "node:assert/strict";
import { ErrorCode, FfiError } from "../mod.ts";
import { probePython, Xla } from "../src/xla/mod.ts";
import { _checkFfiApi, _checkHandlerVersion, _ffiApiSupport } from "../src/xla/_ffi_api.ts";
import { childContext, runDeno } from "./_child.ts";
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

Deno.test("xla: FFI API versions a jaxlib declares: spoken, newer 0.x minor, unknown major", () => {
  for (const minor of [1, 2, 3, 4]) assert.equal(_ffiApiSupport(0, minor), "spoken");
  assert.equal(_ffiApiSupport(0, 5), "newer-minor");
  assert.equal(_ffiApiSupport(0, 17), "newer-minor");
  assert.equal(_ffiApiSupport(1, 0), "unknown");
  assert.equal(_ffiApiSupport(0, -1), "unknown");
  assert.equal(_ffiApiSupport(0, 0), "unknown");
  // jaxlib 0.10.2 declares 0.3; a newer minor and a jaxlib without headers are accepted.
  _checkFfiApi([0, 3], "0.10.2");
  _checkFfiApi([0, 4], "0.11.2");
  _checkFfiApi([null, null], "0.4.0");
  for (const api of [[1, 0], [2, 5], [0, 0]] as const) {
    assert.throws(() => _checkFfiApi(api, "9.9.9"), (e) => {
      assert.ok(e instanceof FfiError);
      assert.equal(e.code, ErrorCode.UNIMPLEMENTED);
      assert.match(
        e.message,
        new RegExp(
          `^jaxlib 9\\.9\\.9 declares XLA FFI API ${api[0]}\\.${api[1]}, which this module does ` +
            `not speak \\(it speaks 0\\.1, 0\\.2, 0\\.3, 0\\.4, and accepts newer 0\\.x minor versions`,
        ),
      );
      return true;
    });
  }
});

Deno.test("xla: a handler newer than the hosted XLA is refused naming both versions and the jaxlib", () => {
  _checkHandlerVersion("t", { major: 0, minor: 3 }, { major: 0, minor: 3 }, "0.10.2");
  _checkHandlerVersion("t", { major: 0, minor: 1 }, { major: 0, minor: 4 }, "0.11.2");
  assert.throws(
    () => _checkHandlerVersion("my.op", { major: 0, minor: 4 }, { major: 0, minor: 3 }, "0.10.2"),
    (e) => {
      assert.ok(e instanceof FfiError);
      assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
      assert.equal(
        e.message,
        "Xla.register: the handler of my.op reports XLA FFI API 0.4, newer than the 0.3 jaxlib " +
          `0.10.2 speaks; its XLA refuses it at registration ("the handler's API version (0.4) ` +
          `is incompatible with the framework's API version (0.3)"). Use jaxlib 0.11 or newer ` +
          `(XLA FFI API 0.4), or build the handler for 0.3 (a TS handler: bind it without ` +
          `apiVersion, or with { apiVersion: "0.3" })`,
      );
      return true;
    },
  );
});

Deno.test({
  name: xlaName("xla: version skew: an unversioned TS handler runs, a newer one is refused first"),
  ignore: XLA_SKIP !== undefined,
  fn: () => runXlaCase("versionSkew").then(() => {}),
});

Deno.test("xla: an interpreter without a shared libpython is UNAVAILABLE naming the fix", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    // An interpreter whose probe answers as a static build does (no libpython found).
    const fake = `${dir}/python3`;
    const answer = JSON.stringify({
      executable: fake,
      version: "3.12.3",
      library: null,
      home: dir,
      sysPath: [],
      jax: `${dir}/jax/__init__.py`,
    });
    Deno.writeTextFileSync(fake, `#!/bin/sh\necho '${answer}'\n`, { mode: 0o755 });
    await assert.rejects(probePython(fake), (e) => {
      assert.ok(e instanceof FfiError);
      assert.equal(e.code, ErrorCode.UNAVAILABLE);
      assert.match(e.message, /The Python at .*python3 \(3\.12\.3\) has no shared libpython/);
      assert.match(e.message, /--enable-shared/);
      return true;
    });
    await assert.rejects(Xla.open({ python: fake }), /has no shared libpython/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("xla: a platform other than cpu, cuda or auto is INVALID_ARGUMENT before Python runs", async () => {
  await assert.rejects(
    Xla.open({ platform: "tpu" as "cpu", python: "/nonexistent/python" }),
    (e) => {
      assert.ok(e instanceof FfiError);
      assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
      assert.match(e.message, /^platform must be "cpu", "cuda" or "auto", got "tpu"$/);
      return true;
    },
  );
});

/** A Python 3.12 with a shared libpython on this machine, or undefined. */
function python312(): string | undefined {
  const candidates = [
    "/opt/torch/.venv/bin/python3",
    "/usr/bin/python3.12",
    "/usr/local/bin/python3.12",
  ];
  const home = Deno.env.get("HOME");
  try {
    for (const e of Deno.readDirSync(`${home}/.pyenv/versions`)) {
      if (/^3\.12\./.test(e.name)) {
        candidates.push(`${home}/.pyenv/versions/${e.name}/bin/python3.12`);
      }
    }
  } catch { /* no pyenv */ }
  for (const c of candidates) {
    try {
      const r = new Deno.Command(c, {
        args: [
          "-c",
          "import sys, sysconfig; print(sys.version_info[:2] == (3, 12) and bool(sysconfig.get_config_var('Py_ENABLE_SHARED')))",
        ],
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      if (r.success && new TextDecoder().decode(r.stdout).trim() === "True") return c;
    } catch { /* not there */ }
  }
  return undefined;
}

const py312 = python312();

Deno.test({
  name: py312
    ? "xla: Python 3.12 is hosted in the process: libpython loaded, the bridge answers"
    : "xla: Python 3.12 is hosted in the process (ignored: no Python 3.12 with a shared libpython here)",
  ignore: py312 === undefined,
  async fn() {
    const r = await runDeno(new URL("./_python312_child.ts", import.meta.url), [py312!], {
      timeoutMs: 60_000,
    });
    const context = childContext("python 3.12 host", r);
    assert.equal(r.code, 0, context);
    assert.match(
      r.stdout,
      /hosted Python 3\.12\.\d+ from .*libpython3\.12.*\nok python312\n$/,
      context,
    );
  },
});

Deno.test({
  name: xlaName(
    "xla: platform cuda where jax has no CUDA backend is UNAVAILABLE naming the plugin",
  ),
  ignore: XLA_SKIP !== undefined,
  async fn() {
    const r = await runDeno(new URL("./_xla_gpu_case.ts", import.meta.url), [], {
      timeoutMs: 120_000,
      env: { JAX_CUDA_VISIBLE_DEVICES: "", CUDA_VISIBLE_DEVICES: "" },
    });
    const context = childContext("XLA:GPU case without a GPU", r);
    if (r.code === 0) return; // jax's CUDA backend started here after all: the GPU case passed
    assert.equal(r.code, 1, context);
    assert.match(
      r.stderr,
      /XLA:GPU case failed: FfiError: jax could not start its CUDA backend in .* install jax's CUDA plugin there \(pip install "jax\[cuda13\]"\)/,
      context,
    );
  },
});
