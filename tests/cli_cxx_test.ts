/**
 * The command line on a handler library written in C++ (built here with
 * `c++` against the project's own native/xla_ffi.h, the way libraries built
 * with XLA's ffi.h look): `inspect` asks only C-linkage exports by default,
 * never member functions, sums skips up in one line; `run` refuses member
 * functions, takes C++ handlers by demangled name, and reports a handler that
 * crashes with a message and exit code 6.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { CXX_FLAGS } from "../build.ts";
import { ExitCode } from "../src/cli/args.ts";
import { embeddedRuntime } from "../src/cli/embedded.ts";
import type { CliIo } from "../src/cli/main.ts";
import { demangle } from "../src/cli/cxx.ts";
import { captureCli } from "./_cli_capture.ts";

function findOnPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter(Boolean)) {
    try {
      if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
    } catch { /* not here */ }
  }
  return undefined;
}

const CXX = findOnPath("c++");
const NO_CXX = CXX === undefined;
const NO_DEMANGLER = (await demangle(["_Z1fv"]))?.[0] !== "f()";
if (NO_CXX) console.log("C++ CLI tests skipped: no c++ compiler on PATH");
else if (NO_DEMANGLER) console.log("demangled-name tests skipped: no c++filt on PATH");

let built: string | undefined;
let dir: string | undefined;

/** libcpp_handlers.so, compiled once per test run from native/tests/cpp_handlers.cc. */
function library(): string {
  if (built) return built;
  dir = Deno.makeTempDirSync({ prefix: "cpp_handlers" });
  const native = fileURLToPath(new URL("../native/", import.meta.url));
  const out = new Deno.Command(CXX!, {
    args: [
      ...CXX_FLAGS,
      "-shared",
      `-I${native}`,
      `-I${native}tests`,
      `${native}tests/cpp_handlers.cc`,
      "-o",
      `${dir}/libcpp_handlers.so`,
    ],
  }).outputSync();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  built = `${dir}/libcpp_handlers.so`;
  return built;
}

function cli(argv: string[], io: Partial<CliIo> = {}) {
  return captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 5000 } }), ...io });
}

/** Under the sanitizers (tests/sanitize.sh) a fault is reported by ASan, which then aborts. */
const SANITIZED = Deno.env.get("XLA_FFI_DENO_SANITIZE") !== undefined;
const SEGV = SANITIZED ? "SIGABRT" : "SIGSEGV";
const BUS = SANITIZED ? "SIGABRT" : "SIGBUS";

const CALL = "cppdemo::ffi::Handler<(cppdemo::ffi::Stage)3>::Call(XLA_FFI_CallFrame*) const";
const CALL_SYMBOL = "_ZNK7cppdemo3ffi7HandlerILNS0_5StageE3EE4CallEP17XLA_FFI_CallFrame";

Deno.test({
  name: "inspect a C++ library: only C-linkage exports are asked, skips sum up in one line",
  ignore: NO_CXX,
  fn: async () => {
    const lib = library();
    const r = await cli(["inspect", lib]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.equal(r.err, "");
    // Where a Python with jaxlib is configured, inspect says which API version it speaks.
    const jaxlib = /^jaxlib .* speaks XLA FFI API 0\.\d+: it registers every handler listed\n/m;
    assert.equal(
      r.out.replace(jaxlib, ""),
      `${lib}: x86_64, 11 exported functions (3 with C linkage, 8 C++)\n` +
        "handler            api   traits\n" +
        "cpp_crash_on_call  0.1   -\n" +
        "cpp_scale          0.1   -\n" +
        "1 export skipped: it ended the query process or did not answer (--verbose lists it)\n" +
        "8 C++ functions not asked (6 member functions, never handlers; --all asks the other " +
        "2; --verbose lists them)\n",
    );
    const v = await cli(["inspect", "--verbose", lib]);
    assert.equal(v.code, ExitCode.OK, v.err);
    assert.match(
      v.out,
      new RegExp(`^skipped cpp_not_a_handler: ended the query process \\(signal ${SEGV}\\)$`, "m"),
    );
    // Each skipped export is named once.
    assert.equal(v.out.split("cpp_not_a_handler").length, 2);
    assert.equal(v.out.match(/^not asked /gm)?.length, 8);
  },
});

Deno.test({
  name: "inspect --all: C++ handlers demangled, member functions never asked or listed",
  ignore: NO_CXX || NO_DEMANGLER,
  fn: async () => {
    const lib = library();
    const r = await cli(["inspect", "--all", lib]);
    assert.equal(r.code, ExitCode.OK, r.err);
    assert.match(r.out, /^cppdemo::ffi::Identity\(XLA_FFI_CallFrame\*\)\s+0\.1\s+-$/m);
    assert.match(r.out, /^cpp_scale\s+0\.1\s+-$/m);
    assert.ok(!r.out.includes("_Z"), r.out);
    assert.ok(!r.out.includes("::Call("), r.out);
    // cpp_not_a_handler crashes on a metadata frame. ScaleInto(const XLA_FFI_CallFrame*, float)
    // returns an error instead: the query frame of an API 0.3 runtime carries an api to make it
    // with (0.1 sent none, and it crashed).
    assert.match(r.out, /^1 export skipped: it ended the query process/m);
    assert.match(r.out, /^6 C\+\+ functions not asked \(6 member functions, never handlers;/m);
    const v = await cli(["inspect", "--all", "--verbose", lib]);
    assert.match(
      v.out,
      new RegExp(`^skipped cpp_not_a_handler: ended the query process \\(signal ${SEGV}\\)$`, "m"),
    );
    assert.ok(!v.out.includes("ScaleInto"), v.out);
    assert.ok(v.out.includes(`not asked ${CALL}: a C++ member function (never a handler)\n`));
    const j = JSON.parse((await cli(["inspect", "--all", "--json", lib])).out);
    assert.deepEqual(
      j.handlers.map((h: { symbol: string; name: string }) => [h.symbol, h.name]).sort(),
      [
        [
          "_ZN7cppdemo3ffi8IdentityEP17XLA_FFI_CallFrame",
          "cppdemo::ffi::Identity(XLA_FFI_CallFrame*)",
        ],
        ["cpp_crash_on_call", "cpp_crash_on_call"],
        ["cpp_scale", "cpp_scale"],
      ],
    );
    assert.ok(
      j.notQueried.some((n: { symbol: string; reason: string }) =>
        n.symbol === CALL_SYMBOL && n.reason === "a C++ member function (never a handler)"
      ),
    );
  },
});

Deno.test({
  name:
    "run on a C++ library: member functions refused, handlers by demangled name, crashes reported",
  ignore: NO_CXX,
  fn: async () => {
    const lib = library();
    const args = ["--arg", "f32[3]=1,2,3", "--ret", "f32[3]"];
    const ok = await cli(["run", lib, "cpp_scale", ...args]);
    assert.equal(ok.code, ExitCode.OK, ok.err);
    assert.equal(ok.out, "result 0: f32[3]\n[2.0, 4.0, 6.0]\n");
    const member = await cli(["run", lib, CALL_SYMBOL, ...args]);
    assert.equal(member.code, ExitCode.LIBRARY);
    assert.match(
      member.err,
      /^error: '_ZNK7cppdemo.*' is a C\+\+ member function \(.*\), not a handler: a handler is a function XLA_FFI_Error\* f\(XLA_FFI_CallFrame\*\), usually extern "C"/,
    );
    // The user's case: a handler that answers the metadata query and dies of SIGBUS when called.
    const crash = await cli(["run", lib, "cpp_crash_on_call", ...args]);
    assert.equal(crash.code, ExitCode.CRASHED);
    assert.equal(crash.out, "");
    // (ASan prints its report first under the sanitizers.)
    assert.ok(
      crash.err.endsWith(
        `error: handler 'cpp_crash_on_call' crashed: signal ${BUS} ended the process running ` +
          "it during the call (the command line runs shared-library handlers in a child " +
          "process to report this)\n",
      ),
      crash.err,
    );
    if (!SANITIZED) assert.ok(crash.err.startsWith("error: "), crash.err);
    const json = await cli(["run", lib, "cpp_crash_on_call", ...args, "--json"]);
    assert.equal(json.code, ExitCode.CRASHED);
    assert.equal(JSON.parse(json.out).error.code, "ABORTED");
    const notHandler = await cli(["run", lib, "cpp_not_a_handler"]);
    assert.equal(notHandler.code, ExitCode.LIBRARY);
    assert.match(
      notHandler.err,
      new RegExp(
        `'cpp_not_a_handler' ended the process running it before the call \\(signal ${SEGV}\\)`,
      ),
    );
  },
});

Deno.test({
  name: "run a C++ handler by its demangled name",
  ignore: NO_CXX || NO_DEMANGLER,
  fn: async () => {
    const lib = library();
    const args = ["--arg", "f32[2]=5,6", "--ret", "f32[2]"];
    for (const name of ["cppdemo::ffi::Identity", "cppdemo::ffi::Identity(XLA_FFI_CallFrame*)"]) {
      const r = await cli(["run", lib, name, ...args]);
      assert.equal(r.code, ExitCode.OK, r.err);
      assert.equal(r.out, "result 0: f32[2]\n[5.0, 6.0]\n");
    }
    const member = await cli(["run", lib, CALL, ...args]);
    assert.equal(member.code, ExitCode.LIBRARY);
    assert.match(member.err, /is a C\+\+ member function/);
    const typo = await cli(["run", lib, "cppdemo::ffi::Identiti", ...args]);
    assert.equal(typo.code, ExitCode.LIBRARY);
    assert.match(typo.err, /did you mean 'cppdemo::ffi::Identity\(XLA_FFI_CallFrame\*\)'\?/);
  },
});

/** A C++ library with one C handler, a C function and libstdc++ exports; removed by the caller. */
function variantLibrary(folder: string): string {
  const native = new URL("../native/", import.meta.url);
  Deno.writeTextFileSync(
    `${folder}/names.cc`,
    `#include <variant>
#include "test_handler_util.h"
#include "xla_ffi.h"
extern "C" XLA_FFI_Error* softplus_scale(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  return nullptr;
}
// Not a handler: answers the metadata query with nothing.
extern "C" int rows(const int* p) { return p == nullptr; }
// Uses std::get, so libstdc++'s std::__throw_bad_variant_access is exported too.
extern "C" int pick(std::variant<int, float>* v) { return std::get<int>(*v); }
`,
  );
  const out = new Deno.Command(CXX!, {
    args: [
      ...CXX_FLAGS,
      "-shared",
      `-I${fileURLToPath(native)}`,
      `-I${fileURLToPath(native)}tests`,
      `${folder}/names.cc`,
      "-o",
      `${folder}/libnames.so`,
    ],
  }).outputSync();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return `${folder}/libnames.so`;
}

Deno.test({
  name: "run: a handler name matches exactly; suggestions name only handlers",
  ignore: NO_CXX || NO_DEMANGLER,
  fn: async () => {
    const folder = Deno.makeTempDirSync({ prefix: "cli_names" });
    try {
      const lib = variantLibrary(folder);
      const ok = await cli(["run", lib, "softplus_scale"]);
      assert.equal(ok.code, ExitCode.OK, ok.err);
      // A zero-sized argument needs no values.
      const empty = await cli(["run", lib, "softplus_scale", "--arg", "s32[0,3]"]);
      assert.equal(empty.code, ExitCode.OK, empty.err);
      // One letter short is another name, never a prefix match.
      const short = await cli(["run", lib, "softplus_scal"]);
      assert.equal(short.code, ExitCode.LIBRARY, short.out);
      assert.equal(short.out, "");
      assert.match(
        short.err,
        /^error: 'softplus_scal' is not an exported function of .*libnames\.so \(did you mean 'softplus_scale'\?\)/,
      );
      // Neither the C function 'rows' (no handler) nor libstdc++'s exports are suggested.
      const row = await cli(["run", lib, "row"]);
      assert.equal(row.code, ExitCode.LIBRARY);
      assert.match(row.err, /'row' is not an exported function/);
      assert.doesNotMatch(row.err, /did you mean|std::/);
      const bad = await cli(["run", lib, "std::__throw_bad_variant_acces"]);
      assert.equal(bad.code, ExitCode.LIBRARY);
      assert.doesNotMatch(bad.err, /did you mean/);
      // A C++ name without parameters must be the whole name before them.
      const part = await cli(["run", lib, "std::__throw_bad_variant_acces(char const*)"]);
      assert.equal(part.code, ExitCode.LIBRARY);
    } finally {
      Deno.removeSync(folder, { recursive: true });
    }
  },
});

Deno.test({
  name: "cleanup: the C++ library's folder",
  ignore: NO_CXX,
  fn: () => {
    if (dir) Deno.removeSync(dir, { recursive: true });
  },
});
