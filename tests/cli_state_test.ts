/**
 * Stateful handlers built with XLA's ffi.h on the command line and the
 * embedded API (native/tests/cli_state_handlers.cc, compiled against jaxlib's
 * headers): an instantiate handler whose state type has no id yet is listed
 * by `inspect` with the type id function it needs; `run` registers the type
 * (`--type NAME=SYMBOL`, or the library's `*_type_id` functions on its own)
 * and runs instantiate then execute; the embedded runtime's error names the
 * remedy.
 */
import assert from "node:assert/strict";
import { buildSharedLibrary, findCxxCompiler } from "../build.ts";
import { ExitCode } from "../src/cli/args.ts";
import { embeddedRuntime } from "../src/cli/embedded.ts";
import { ErrorCode, FfiError, HandlerLibrary, Runtime } from "../mod.ts";
import { captureCli } from "./_cli_capture.ts";
import { jaxlibHeaders } from "./_jax.ts";

const jax = jaxlibHeaders();
const SKIP = jax.reason ?? (findCxxCompiler() === undefined ? "no C++ compiler" : undefined);
const note = SKIP ? ` (skipped: ${SKIP})` : "";

function library(): string {
  return buildSharedLibrary({
    name: "xrt_cli_state_handlers",
    sources: ["native/tests/cli_state_handlers.cc"],
    cxx: true,
    // XLA's header does not build warning-free; it is not this project's code.
    baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
    includeDirs: [jax.includeDir!],
  });
}

function cli(argv: string[]) {
  return captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 10000 } }) });
}

const RUN = [
  "cli_scaler_execute",
  "--instantiate",
  "cli_scaler_instantiate",
  "--attr",
  "factor=f32:2.5",
  "--arg",
  "f32[3]=1,2,3",
  "--ret",
  "f32[3]",
];

Deno.test({
  name: "inspect lists an ffi.h instantiate handler and the state type it needs" + note,
  ignore: SKIP !== undefined,
  fn: async () => {
    const lib = library();
    const r = await cli(["inspect", lib]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.match(r.out, /^cli_scaler_instantiate\s+0\.3\s+-$/m);
    assert.match(r.out, /^cli_scaler_execute\s+0\.3\s+-$/m);
    assert.match(r.out, /^cli_hidden_instantiate\s+\?\s+\?$/m);
    assert.ok(
      r.out.includes(
        "cli_scaler_instantiate: makes a state of type cli_scaler (type id cli_scaler_type_id), " +
          "which must be registered first; run registers it (--type NAME=cli_scaler_type_id)\n",
      ),
      r.out,
    );
    assert.match(r.out, /^cli_hidden_instantiate: makes a state whose type must be registered/m);
    // The type id and type info functions are no handlers.
    assert.ok(!/^cli_scaler_type_(id|info)\s/m.test(r.out), r.out);
    const j = JSON.parse((await cli(["inspect", "--json", lib])).out);
    const by = new Map(j.handlers.map((h: { symbol: string }) => [h.symbol, h]));
    assert.deepEqual((by.get("cli_scaler_instantiate") as { stateType: unknown }).stateType, {
      name: "cli_scaler",
      typeId: "cli_scaler_type_id",
    });
    assert.equal((by.get("cli_hidden_instantiate") as { stateType: unknown }).stateType, null);
    assert.ok(!("stateType" in (by.get("cli_scaler_execute") as object)));
  },
});

Deno.test({
  name: "run --type NAME=SYMBOL registers the state type; instantiate then execute" + note,
  ignore: SKIP !== undefined,
  fn: async () => {
    const lib = library();
    const r = await cli(["run", lib, ...RUN, "--type", "Scaler=cli_scaler_type_id"]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.equal(r.out, "result 0: f32[3]\n[2.5, 5.0, 7.5]\n");
    const missing = await cli(["run", lib, ...RUN, "--type", "Scaler=no_such_type_id"]);
    assert.equal(missing.code, ExitCode.LIBRARY);
    assert.match(missing.err, /has no export 'no_such_type_id' \(--type Scaler=no_such_type_id\)/);
    const bad = await cli(["run", lib, ...RUN, "--type", "Scaler"]);
    assert.equal(bad.code, ExitCode.USAGE);
    assert.match(bad.err, /--type 'Scaler': expected NAME=SYMBOL/);
  },
});

Deno.test({
  name: "run registers the library's type id functions on its own" + note,
  ignore: SKIP !== undefined,
  fn: async () => {
    const lib = library();
    const r = await cli(["run", lib, ...RUN, "--repeat", "2"]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.match(r.out, /\[2\.5, 5\.0, 7\.5\]/);
    // A state type without a type id function stays an error naming the remedy.
    const h = await cli(["run", lib, "cli_hidden_instantiate", "--stage", "instantiate"]);
    assert.equal(h.code, ExitCode.LIBRARY, h.out);
    assert.match(h.err, /Types used by FFI handlers must be registered/);
    // XLA's words on the error line, the remedy on a line of its own.
    assert.doesNotMatch(h.err.split("\n")[0]!, /--type NAME=SYMBOL/);
    assert.match(h.err, /^hint: .*--type NAME=SYMBOL/m);
  },
});

Deno.test({
  name: "run without --instantiate names the instantiate handler to add before calling" + note,
  ignore: SKIP !== undefined,
  fn: async () => {
    const lib = library();
    // cli_scaler_execute takes its state: without one ffi.h's assertion stops the process, and
    // the note before the call said which --instantiate to add (the pair inspect lists).
    const r = await cli(["run", lib, ...RUN.filter((a) => !a.endsWith("instantiate"))]);
    assert.equal(r.code, ExitCode.CRASHED, r.err);
    const lines = r.err.split("\n");
    const noteAt = lines.findIndex((l) => l.startsWith("note: "));
    assert.ok(noteAt >= 0, r.err);
    assert.match(
      lines[noteAt]!,
      /^note: .* makes states \('cli_scaler_instantiate' makes a state\) \(instantiate handlers: cli_scaler_instantiate, cli_hidden_instantiate\); if 'cli_scaler_execute' takes its state .*: add --instantiate cli_scaler_instantiate$/,
    );
    const crashAt = lines.findIndex((l) => /^error: handler 'cli_scaler_execute' crashed/.test(l));
    assert.ok(crashAt > noteAt, r.err);
    // With it, or running the instantiate stage itself, no note.
    const ok = await cli(["run", lib, ...RUN]);
    assert.equal(ok.code, ExitCode.OK, ok.err);
    assert.doesNotMatch(ok.err, /^note: /m);
  },
});

Deno.test({
  name: "embedded: the metadata error of an unregistered state type names the remedy" + note,
  ignore: SKIP !== undefined,
  fn: () => {
    using lib = HandlerLibrary.open(library());
    using rt = new Runtime();
    const inst = lib.handler("cli_scaler_instantiate");
    assert.throws(() => rt.metadata(inst), (e: unknown) => {
      assert.ok(e instanceof FfiError, String(e));
      assert.equal(e.code, ErrorCode.FAILED_PRECONDITION);
      // XLA's words only; the remedy is the hint.
      assert.equal(
        e.message,
        "Types used by FFI handlers must be registered before the handler registration",
      );
      assert.match(
        e.hint ?? "",
        /^'cli_scaler_instantiate' makes a state whose type has no id yet/,
      );
      assert.match(e.hint ?? "", /rt\.registerType\(name, lib\.typeId\("<T>_type_id"\)/);
      return true;
    });
    const id = rt.registerType("Scaler", lib.typeId("cli_scaler_type_id"), {
      typeInfo: lib.typeInfo("cli_scaler_type_info"),
    });
    assert.equal(rt.metadata(inst).stateTypeId, id);
  },
});

Deno.test({
  name: "fuzz and inspect --signature run a stateful handler with its instantiate handler" + note,
  ignore: SKIP !== undefined,
  fn: async () => {
    const lib = library();
    const out = await Deno.makeTempDir({ prefix: "fuzz-state-" });
    try {
      const base = ["fuzz", lib, "cli_scaler_execute", "--out", out];
      // Without its state, ffi.h's assertion ends every call: what the fuzzer sees then.
      const bare = JSON.parse((await cli([...base, "--runs", "5", "--json"])).out);
      assert.ok(bare.failures.some((f: { detail: string }) => f.detail === "SIGABRT"));
      // … and says what to do about it.
      const told = await cli([...base, "--runs", "5"]);
      assert.match(
        told.err,
        /warning: most runs aborted; .* exports state type ids \(cli_scaler_type_id.*--instantiate H/,
      );
      const probe = await cli(["inspect", "--signature", lib, "cli_scaler_execute"]);
      assert.match(probe.err, /^note: .*exports state type ids .*--instantiate H/m);
      // With it (the state type registered from the library's cli_scaler_type_id): no failure.
      const r = await cli([
        ...base,
        ...["--instantiate", "cli_scaler_instantiate", "--ret", "like:0", "--runs", "100"],
        "--json",
      ]);
      assert.equal(r.code, ExitCode.OK, r.out + r.err);
      const json = JSON.parse(r.out);
      assert.deepEqual(json.failures, []);
      assert.equal(json.rejected, 0);
      // --type names the type id function itself.
      const typed = await cli([
        ...base,
        ...["--instantiate", "cli_scaler_instantiate", "--type", "Scaler=cli_scaler_type_id"],
        ...["--runs", "20"],
      ]);
      assert.equal(typed.code, ExitCode.OK, typed.out + typed.err);
      const sig = await cli([
        ...["inspect", "--signature", lib, "cli_scaler_execute"],
        ...["--instantiate", "cli_scaler_instantiate"],
      ]);
      assert.equal(sig.code, ExitCode.OK, sig.err);
      assert.match(sig.out, /^cli_scaler_execute: 1 argument, 1 result, 1 attribute/m);
      assert.match(sig.out, /attribute factor: scalar f32/);
      assert.match(sig.out, /argument 0: f32/);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
