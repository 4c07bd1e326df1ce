/**
 * The real-XLA host's Python (`src/xla/python/*.py`): every Python file of
 * the repository compiles; the generated module carries the `.py` files
 * verbatim; the TypeScript and Python tables of requests agree; requests are
 * the JSON the bridge reads, and a misspelled op or field fails `deno check`;
 * and the bridge's own unittest (`tests/python/test_bridge.py`) passes under
 * `XLA_FFI_DENO_PYTHON`, run on the exact source the host runs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { PYTHON_SOURCES } from "../src/xla/_python_embed.ts";
import { PYTHON_FILES } from "../src/xla/_python.generated.ts";
import { BRIDGE_SOURCE } from "../src/xla/_bridge_py.ts";
import { type _ReplyOf, _REQUEST_OPS, type _RequestOf } from "../src/xla/_protocol.ts";
import { _encodeRequest } from "../src/xla/_codec.ts";
import type { Xla } from "../src/xla/xla.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";

const ROOT = new URL("../", import.meta.url);
const decoder = new TextDecoder();

/** Every `.py` file under a folder of the repository, relative to the root, sorted. */
function pyFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(new URL(rel, ROOT))) {
      if (e.isDirectory && e.name !== "__pycache__") walk(`${rel}/${e.name}`);
      else if (e.isFile && e.name.endsWith(".py")) out.push(`${rel}/${e.name}`);
    }
  };
  walk(dir);
  return out.sort();
}

/** A Python to compile with: `XLA_FFI_DENO_PYTHON`, else `python3`; or why there is none. */
function anyPython(): { python: string } | { skip: string } {
  for (const python of [Deno.env.get("XLA_FFI_DENO_PYTHON"), "python3"]) {
    if (!python) continue;
    try {
      if (
        new Deno.Command(python, { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
          .success
      ) return { python };
    } catch { /* not there: the next one */ }
  }
  return { skip: "no Python: neither XLA_FFI_DENO_PYTHON nor python3 runs" };
}

const PY = anyPython();
const ALL_PY = [...pyFiles("src"), ...pyFiles("tests")];

Deno.test({
  name: "every .py file of the repository compiles (py_compile)" +
    ("skip" in PY ? ` (ignored: ${PY.skip})` : ""),
  ignore: "skip" in PY,
  fn() {
    assert.ok(ALL_PY.includes("src/xla/python/bridge.py"), ALL_PY.join(", "));
    assert.ok(ALL_PY.includes("tests/python/test_bridge.py"), ALL_PY.join(", "));
    const cache = Deno.makeTempDirSync();
    try {
      const r = new Deno.Command((PY as { python: string }).python, {
        // -m py_compile exits 1 naming the file and line of the first error.
        args: ["-m", "py_compile", ...ALL_PY.map((rel) => fileURLToPath(new URL(rel, ROOT)))],
        env: { PYTHONPYCACHEPREFIX: cache },
        stdout: "piped",
        stderr: "piped",
      }).outputSync();
      assert.equal(r.code, 0, decoder.decode(r.stderr) + decoder.decode(r.stdout));
    } finally {
      Deno.removeSync(cache, { recursive: true });
    }
  },
});

Deno.test("src/xla/_python.generated.ts carries every .py file of src/xla/python/ verbatim", () => {
  assert.deepEqual([...PYTHON_SOURCES].sort(), pyFiles("src/xla/python"));
  assert.deepEqual(Object.keys(PYTHON_FILES), [...PYTHON_SOURCES]);
  for (const rel of PYTHON_SOURCES) {
    const text = Deno.readTextFileSync(new URL(rel, ROOT));
    assert.ok(PYTHON_FILES[rel] === text, `${rel} differs: run \`deno task embed\``);
  }
  // The host runs them, then makes the dispatcher: the data types' NumPy names come from the facts.
  assert.ok(BRIDGE_SOURCE.startsWith(PYTHON_FILES["src/xla/python/bridge.py"]!));
  assert.match(
    BRIDGE_SOURCE,
    /\n_deno_xla_dispatch = _deno_xla_bridge\(\{1: "bool", .*11: "float32"/,
  );
  assert.match(BRIDGE_SOURCE, /16: "bfloat16"/);
});

Deno.test("the requests TypeScript types are the ops the bridge's OPS table answers", () => {
  const bridge = Deno.readTextFileSync(new URL("src/xla/python/bridge.py", ROOT));
  const table = /\n {4}OPS = \{([^}]*)\}/.exec(bridge);
  assert.ok(table, "bridge.py has no OPS table");
  const python = [...table[1]!.matchAll(/"(\w+)": op_(\w+)/g)].map((m) => {
    assert.equal(m[1], m[2], `OPS maps "${m[1]}" to op_${m[2]}`);
    return m[1]!;
  });
  assert.deepEqual(python.sort(), Object.keys(_REQUEST_OPS).sort());
});

/** The JSON header of an encoded request. */
function headerOf(req: Uint8Array): unknown {
  const len = new DataView(req.buffer, req.byteOffset).getUint32(0, true);
  return JSON.parse(decoder.decode(req.subarray(8, 8 + len)));
}

/** Never called: what `deno check` must refuse of requests (each line one error). */
async function _refusedByTheChecker(xla: Xla): Promise<unknown> {
  // @ts-expect-error: no such op
  _encodeRequest({ op: "pyhton", host: 1, source: "" });
  // @ts-expect-error: a misspelled field
  _encodeRequest({ op: "python", host: 1, sourc: "" });
  // @ts-expect-error: a host request without its host
  _encodeRequest({ op: "run", id: 1 });
  // @ts-expect-error: Xla._request adds the host; a misspelled field is still refused
  xla._request({ op: "run", idd: 1 });
  const compiled = await xla._request({
    op: "compile",
    kind: "python",
    source: "",
    entry: null,
    argSpecs: null,
    filename: null,
  });
  // @ts-expect-error: the reply of "compile" has no `result`
  return compiled.header!.result;
}

Deno.test("a request is the JSON header the bridge reads, the arrays' specs added", () => {
  assert.equal(typeof _refusedByTheChecker, "function");
  const python: _RequestOf<"python"> = { op: "python", host: 3, source: "result = 1" };
  assert.deepEqual(headerOf(_encodeRequest(python)), { ...python, args: [] });
  const req = _encodeRequest({ op: "run", host: 3, id: 7 }, [
    { dtype: 11, shape: [3], bytes: new Uint8Array(12) },
    { dtype: 4, shape: [], bytes: new Uint8Array(4) },
  ]);
  assert.deepEqual(headerOf(req), {
    op: "run",
    host: 3,
    id: 7,
    args: [{ dtype: 11, shape: [3], offset: 0 }, { dtype: 4, shape: [], offset: 64 }],
  });
  const reply: _ReplyOf<{ op: "python" }> = { result: null };
  assert.deepEqual(reply, { result: null });
});

Deno.test({
  name: xlaName("the bridge's Python unittest (tests/python/test_bridge.py) passes"),
  ignore: XLA_SKIP !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const source = `${dir}/bridge_source.py`;
      await Deno.writeTextFile(source, BRIDGE_SOURCE);
      const r = await new Deno.Command(Deno.env.get("XLA_FFI_DENO_PYTHON")!, {
        args: ["-m", "unittest", "-v", "tests/python/test_bridge.py"],
        cwd: fileURLToPath(ROOT),
        env: { DENO_XLA_BRIDGE_SOURCE: source, PYTHONDONTWRITEBYTECODE: "1", JAX_PLATFORMS: "cpu" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const out = decoder.decode(r.stderr) + decoder.decode(r.stdout);
      assert.equal(r.code, 0, out);
      assert.match(out, /\nOK\n/, out);
      assert.doesNotMatch(out, /skipped/, out); // with jax, every test runs
      assert.match(out, /test_compile_and_run .* ok/, out);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
