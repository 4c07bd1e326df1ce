/**
 * A fatal signal in a handler called in-process: the process dies of that
 * signal, and stderr has one line naming the handler, its library, the
 * signal and the address, and how to contain it (native/crash.c). Each case
 * runs in a child process (tests/_crash_child.ts).
 *
 * Under tests/sanitize.sh the sanitizer runtimes are preloaded into the
 * child too: AddressSanitizer's handler, installed before this module's,
 * gets the signal after the line and prints its report; with
 * `abort_on_error=1` it then ends the process with SIGABRT.
 */
import assert from "node:assert/strict";
import { childContext, runDeno } from "./_child.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";
import { buildExecutable, findCxxCompiler, nativeLibraryPath } from "../build.ts";

const CHILD = new URL("./_crash_child.ts", import.meta.url);
const SANITIZED = /asan/.test(Deno.env.get("LD_PRELOAD") ?? "");

async function crash(args: string[], signal: Deno.Signal, line: RegExp, timeoutMs = 120_000) {
  const r = await runDeno(CHILD, args, { timeoutMs });
  const context = childContext(`_crash_child.ts ${args.join(" ")}`, r);
  assert.match(r.stdout, /^calling$/m, context);
  assert.doesNotMatch(r.stdout, /survived/, context);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("deno-xla-ffi: "));
  assert.equal(lines.length, 1, context);
  assert.match(lines[0]!, line, context);
  if (SANITIZED && signal !== "SIGABRT" && signal !== "SIGILL") {
    // ASan's handler had the signal after ours: its report, then abort().
    assert.match(r.stderr, /ERROR: AddressSanitizer: /, context);
    assert.equal(r.signal, "SIGABRT", context);
  } else {
    assert.equal(r.signal, signal, context);
  }
  return lines[0]!;
}

const ISOLATE = /open its library with HandlerLibrary\.open\(path, \{ isolate: true \}\)/;

Deno.test("a segfault in a native handler names it, its library, the signal and address", async () => {
  const lib = faultHandlersPath(); // what the child opens
  const line = await crash(
    ["native", "fault_segv"],
    "SIGSEGV",
    /^deno-xla-ffi: handler 'fault_segv' of \S+libxrt_fault_handlers\S*\.so, called in this process, died of SIGSEGV \(segmentation fault at address 0x0\); the process ends\./,
  );
  assert.ok(line.includes(` of ${lib}, `), line);
  assert.match(line, ISOLATE);
});

Deno.test("a crash in a handler of no library recommends what works for it, not isolate", async () => {
  const line = await crash(
    ["unnamed", "fault_segv"],
    "SIGSEGV",
    /^deno-xla-ffi: the handler at 0x[0-9a-f]+, called in this process, died of SIGSEGV/,
  );
  assert.match(
    line,
    /not a shared library's export \(a Python extension module's, a raw pointer\)/,
  );
  assert.match(line, /make the calls that may crash from a child process/);
});

Deno.test("each fatal signal of a native handler is named and ends the process with it", async () => {
  const cases: [string, Deno.Signal, RegExp][] = [
    ["fault_abort", "SIGABRT", /died of SIGABRT \(aborted\)/],
    ["fault_bus", "SIGBUS", /died of SIGBUS \(bus error at address 0x[0-9a-f]+\)/],
    ["fault_fpe", "SIGFPE", /died of SIGFPE \(arithmetic exception( at 0x[0-9a-f]+)?\)/],
    ["fault_ill", "SIGILL", /died of SIGILL \(illegal instruction at 0x[0-9a-f]+\)/],
  ];
  for (const [symbol, signal, re] of cases) {
    const line = await crash(["native", symbol], signal, re);
    assert.match(line, new RegExp(`^deno-xla-ffi: handler '${symbol}' of `));
  }
});

Deno.test("a crash in a handler called by its registered name, on a runtime thread, names both", async () => {
  await crash(
    ["registered", "fault_segv"],
    "SIGSEGV",
    /^deno-xla-ffi: handler 'crash\.op' \(fault_segv\) of \S+\.so, called in this process, died of SIGSEGV/,
  );
});

Deno.test("a TS handler reading a bad address through FFI is named", async () => {
  const line = await crash(
    ["ts"],
    "SIGSEGV",
    /^deno-xla-ffi: TS handler 'readsAddress8', called in this process, died of SIGSEGV \(segmentation fault at address 0x8\)/,
  );
  assert.match(line, /Deno\.UnsafePointerView/);
});

Deno.test("a TS handler called from another thread crashes on the JS thread serving it: named", async () => {
  await crash(
    ["ts-thread"],
    "SIGSEGV",
    /^deno-xla-ffi: TS handler 'readsAddress8', called in this process, died of SIGSEGV \(segmentation fault at address 0x8\)/,
  );
});

Deno.test("XLA_FFI_DENO_CRASH_REPORT=0: no line, the process still dies of the signal", async () => {
  const r = await runDeno(CHILD, ["native", "fault_segv"], {
    timeoutMs: 120_000,
    env: { XLA_FFI_DENO_CRASH_REPORT: "0" },
  });
  const context = childContext("_crash_child.ts native fault_segv", r);
  assert.match(r.stdout, /^calling$/m, context);
  assert.doesNotMatch(r.stderr, /deno-xla-ffi: /, context);
  assert.equal(r.signal, SANITIZED ? "SIGABRT" : "SIGSEGV", context);
});

Deno.test("V8's own SIGSEGV (a WebAssembly bounds trap) in a TS handler passes through silently", async () => {
  const r = await runDeno(CHILD, ["wasm"], { timeoutMs: 60_000 });
  const context = childContext("_crash_child.ts wasm", r);
  assert.equal(r.code, 0, context);
  assert.match(r.stdout, /trapped: .*out of bounds/, context);
  assert.doesNotMatch(r.stderr, /deno-xla-ffi: /, context);
});

Deno.test({
  name: xlaName("a crash in a C handler registered with real XLA names its registered name"),
  ignore: XLA_SKIP !== undefined,
  async fn() {
    await crash(
      ["xla", "fault_segv"],
      "SIGSEGV",
      /^deno-xla-ffi: handler 'crash\.xla' \(fault_segv\) of \S+\.so, called in this process, died of SIGSEGV \(segmentation fault at address 0x0\)/,
      180_000,
    );
  },
});

Deno.test({
  name: xlaName("a crash in a C handler registered with real XLA with guard: true is named too"),
  ignore: XLA_SKIP !== undefined,
  async fn() {
    await crash(
      ["xla-guard", "fault_segv"],
      "SIGSEGV",
      /^deno-xla-ffi: handler 'crash\.xla' \(fault_segv\) of \S+\.so, called in this process, died of SIGSEGV \(segmentation fault at address 0x0\)/,
      180_000,
    );
  },
});

/** A crash in jaxlib's `cpu_csr_sparse_dense_ffi` (a `handlersFrom` handler object), named alike on both hosts. */
const MODULE_LINE =
  /^deno-xla-ffi: handler 'jaxlib\.cpu\._sparse:cpu_csr_sparse_dense_ffi' of the Python module jaxlib\.cpu\._sparse, called in this process, died of SIGSEGV \(segmentation fault at address 0x[0-9a-f]+\); the process ends\./;
/** What contains it: the isolated python-module route, not HandlerLibrary.open, which cannot open it. */
const MODULE_HINT =
  /run the handler in a child process that hosts its module: cli run\|fuzz --python-module jaxlib\.cpu\._sparse, or fuzzHandler\(handler, \{ isolate: true \}\)/;

for (const [mode, host] of [["module", "the embedded runtime"], ["module-xla", "real XLA"]]) {
  Deno.test({
    name: xlaName(
      `a crash in a Python module's handler called by ${host} names it as the module does`,
    ),
    ignore: XLA_SKIP !== undefined,
    async fn() {
      const line = await crash([mode!], "SIGSEGV", MODULE_LINE, 180_000);
      assert.match(line, MODULE_HINT);
      assert.doesNotMatch(line, /HandlerLibrary\.open|the handler at 0x|deno_xla\.ffi_call/);
    },
  });
}

const CXX_SKIP = findCxxCompiler() === undefined ? "no C++ compiler" : undefined;

Deno.test({
  name: "the wrapper real XLA calls a C handler through sets the crash slot and puts it back, " +
    "also past a C++ exception" + (CXX_SKIP ? ` (ignored: ${CXX_SKIP})` : ""),
  ignore: CXX_SKIP !== undefined,
  async fn() {
    const exe = buildExecutable({
      name: "crash_wrap_check",
      sources: ["native/tests/crash_wrap_check.cc"],
      cxx: true,
      linkFlags: ["-ldl"],
    });
    const r = await new Deno.Command(exe, {
      args: [nativeLibraryPath()],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 0, out);
    assert.equal(out.match(/^ok /gm)?.length, 7, out);
  },
});
