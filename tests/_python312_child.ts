/**
 * Hosts a Python 3.12 in this process (the version of the GPU machine's
 * interpreter): probes it, loads its libpython, installs the bridge and
 * asks it for its state; without jax, `Xla.open` on it is UNAVAILABLE
 * naming the install. Run by tests/xla_versions_test.ts with the
 * interpreter's path as argument; prints `ok python312` last.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ErrorCode, FfiError } from "../mod.ts";
import { probePython, Xla } from "../src/xla/mod.ts";
import { _hostPython, _request } from "../src/xla/_host.ts";

const python = Deno.args[0]!;
const info = await probePython(python);
assert.match(info.version, /^3\.12\./);
assert.ok(info.library !== null && /libpython3\.12/.test(info.library), String(info.library));
await _hostPython(info);
const r = await _request({ op: "stats" });
const stats = r.header as { threads: number; hosts: number };
assert.ok(stats.threads >= 1);
assert.equal(stats.hosts, 0);
if (info.jax === null) {
  try {
    await Xla.open({ python });
    assert.fail("Xla.open without jax succeeded");
  } catch (e) {
    assert.ok(e instanceof FfiError, String(e));
    assert.equal(e.code, ErrorCode.UNAVAILABLE);
    assert.match(e.message, /jax is not installed for the Python at .* \(3\.12\.\d+\)/);
  }
}
console.log(`hosted Python ${info.version} from ${info.library}`);
console.log("ok python312");
