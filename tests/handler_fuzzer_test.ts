/**
 * The handler fuzzer (`fuzzHandler`, `discoverSignature` of
 * `@deno-xla/ffi/testing`; `cli fuzz`, `cli inspect --signature`): on
 * native/tests/fuzz_target_handlers.cc (ffi.h handlers, jaxlib's headers),
 * each seeded bug is found with a fixed seed within a bounded number of
 * runs, shrunk, and its `cli run` line reproduces it; the correct handlers
 * give no failure; discovery finds each signature. TS handlers are fuzzed
 * in this process (no jax needed).
 */
import assert from "node:assert/strict";
import { buildSharedLibrary, findCxxCompiler } from "../build.ts";
import { DataType, Ffi, FfiError } from "../mod.ts";
import { ExitCode } from "../src/cli/args.ts";
import {
  discoverSignature,
  formatFuzzReport,
  type FuzzFailureKind,
  fuzzHandler,
  type FuzzReport,
} from "../src/testing/mod.ts";
import { captureCli } from "./_cli_capture.ts";
import { jaxlibHeaders } from "./_jax.ts";

const jax = jaxlibHeaders();
const SKIP = jax.reason ?? (findCxxCompiler() === undefined ? "no C++ compiler" : undefined);
const note = SKIP ? ` (skipped: ${SKIP})` : "";
/** The sanitized run (tests/sanitize.sh): test libraries are built with ASan and UBSan. */
const SANITIZED = Deno.env.get("XLA_FFI_DENO_SANITIZE")?.includes("undefined") === true;

function library(): string {
  return buildSharedLibrary({
    name: "xrt_fuzz_target_handlers",
    sources: ["native/tests/fuzz_target_handlers.cc"],
    cxx: true,
    // XLA's header does not build warning-free; it is not this project's code.
    baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
    includeDirs: [jax.includeDir!],
  });
}

const D = DataType;

Deno.test({
  name: `fuzzer: discovery finds each ffi.h handler's signature${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const sig = async (handler: string) => await discoverSignature({ library: lib, handler });
    const index = await sig("fzbug_index");
    assert.deepEqual(index.args, [{ dtype: D.F32, rank: 1 }]);
    assert.deepEqual(index.results, [{ dtype: D.F32, rank: 1 }]);
    assert.deepEqual(index.attrs, [{ name: "index", kind: "scalar", dtype: D.S64 }]);
    assert.equal(index.decodes, true);
    assert.deepEqual(index.unknown, []);
    const rowsum = await sig("fzok_rowsum");
    assert.deepEqual(rowsum.args, [{ dtype: D.S32, rank: 3 }]);
    assert.deepEqual(rowsum.results, [{ dtype: D.S32, rank: 2 }]);
    const scale = await sig("fzok_scale");
    assert.deepEqual(scale.args, [{ dtype: D.F32 }]);
    assert.deepEqual(scale.attrs, [{ name: "alpha", kind: "scalar", dtype: D.F32 }]);
    assert.ok(scale.unknown.some((u) => /argument 0 has its rank left free/.test(u)));

    const r = await captureCli(["inspect", "--signature", lib, "fzbug_divzero"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /argument 0: s32, rank 2/);
    assert.match(r.out, /results: \[\{ dtype: DataType\.S32, shape: \[3\] \}\]/);
    // The printed run line decodes (the handler runs and succeeds).
    const line = r.out.split("\n").find((l) => l.trim().startsWith("cli run"))!;
    const argv = line.trim().split(" ").slice(1).map((w) => w.replace(/^'(.*)'$/, "$1"));
    const run = await captureCli(argv);
    assert.equal(run.code, 0, run.err);
  },
});

/** Each seeded bug: its handler, result rule, the failure to find, and the run line's exit code. */
const BUGS: {
  handler: string;
  rule: string;
  kind: FuzzFailureKind;
  detail: RegExp;
  exit: ExitCode;
  runs: number;
}[] = [
  {
    handler: "fzbug_rank2",
    rule: "like:0",
    kind: "result-write",
    detail: /result 0/,
    exit: ExitCode.HANDLER_ERROR,
    runs: 120,
  },
  {
    handler: "fzbug_odd",
    rule: "like:0",
    kind: "result-write",
    detail: /result 0/,
    exit: ExitCode.HANDLER_ERROR,
    runs: 40,
  },
  {
    handler: "fzbug_index",
    rule: "like:0",
    kind: "result-write",
    detail: /result 0/,
    exit: ExitCode.HANDLER_ERROR,
    runs: 40,
  },
  {
    handler: "fzbug_divzero",
    rule: "s32[$0.0]",
    kind: "crash",
    // Built with UBSan (the sanitized run), the division is reported by it before any SIGFPE.
    detail: SANITIZED ? /UndefinedBehaviorSanitizer division by zero|SIGFPE/ : /SIGFPE/,
    exit: ExitCode.CRASHED,
    runs: 80,
  },
  {
    handler: "fzbug_argwrite",
    rule: "like:0",
    kind: "argument-write",
    detail: /argument 0/,
    exit: ExitCode.HANDLER_ERROR,
    runs: 20,
  },
  {
    handler: "fzbug_nan_hang",
    rule: "like:0",
    kind: "hang",
    detail: /^$/,
    exit: ExitCode.TIMEOUT,
    runs: 20,
  },
];

function elements(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

for (const bug of BUGS) {
  Deno.test({
    name: `fuzzer: finds, shrinks and reproduces ${bug.handler} (${bug.kind})${note}`,
    ignore: SKIP !== undefined,
    async fn() {
      const lib = library();
      const out = await Deno.makeTempDir({ prefix: "fuzz-test-" });
      try {
        const report = await fuzzHandler({ library: lib, handler: bug.handler }, {
          runs: bug.runs,
          seed: 1,
          // A sanitized child reports a crash with a symbolized stack trace, which takes longer.
          timeoutMs: bug.kind === "hang" || !SANITIZED ? 200 : 10_000,
          results: [bug.rule],
          outDir: out,
          shrinkCalls: 120,
        });
        const f = report.failures.find((f) => f.kind === bug.kind);
        assert.ok(f, `no ${bug.kind} in:\n${formatFuzzReport(report)}`);
        assert.match(f.detail, bug.detail);
        // Shrunk: no argument grew, and the shrunk call is small.
        for (const [i, a] of f.case.args.entries()) {
          assert.ok(elements(a.shape) <= elements(f.original.args[i]!.shape));
        }
        assert.ok(elements(f.case.args[0]!.shape) <= 16, JSON.stringify(f.case.args[0]!.shape));
        // Distinct failures are listed once each.
        const keys = report.failures.map((f) => `${f.kind} ${f.detail}`);
        assert.equal(new Set(keys).size, keys.length);
        // The printed command reproduces it, from the .npy files written.
        assert.ok(f.command && f.files && f.files.length === 1);
        assert.ok(Deno.statSync(f.files[0]!).isFile);
        const text = formatFuzzReport(report);
        assert.ok(text.includes(f.command.slice(0, 3).join(" ")), text);
        const r = await captureCli(f.command);
        assert.equal(r.code, bug.exit, `${f.command.join(" ")}\n${r.out}${r.err}`);
      } finally {
        await Deno.remove(out, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: `fuzzer: the correct handlers give no failure${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const cases: [string, string][] = [
      ["fzok_scale", "like:0"],
      ["fzok_index", "like:0"],
      ["fzok_rowsum", "s32[$0.0,$0.1]"],
    ];
    for (const [handler, rule] of cases) {
      const report: FuzzReport = await fuzzHandler({ library: lib, handler }, {
        runs: 300,
        seed: 1,
        results: [rule],
      });
      assert.deepEqual(report.failures, [], formatFuzzReport(report));
      assert.equal(report.runs, 300);
      assert.ok(report.runsPerSecond > 0);
    }
  },
});

Deno.test({
  name: `fuzzer: cli fuzz exits 9 on a failure, 0 without; seeds reproduce${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const out = await Deno.makeTempDir({ prefix: "fuzz-cli-" });
    try {
      const args = ["fuzz", lib, "fzbug_odd", "--runs", "30", "--seed", "3", "--ret", "like:0"];
      const bad = await captureCli([...args, "--out", out]);
      assert.equal(bad.code, ExitCode.FUZZ_FAILURES, bad.err);
      assert.match(bad.out, /result-write\s+result 0/);
      assert.match(bad.out, /cli run .*fzbug_odd --arg .*failure-1-arg0\.npy --ret 'f32\[1\]'/);
      const again = await captureCli([...args, "--out", out, "--json"]);
      const json = JSON.parse(again.out);
      assert.equal(json.failures.length, 1);
      // The same seed finds the same failure, shrunk to the same call.
      assert.equal(json.failures[0].kind, "result-write");
      const ret = json.failures[0].command.indexOf("--ret");
      assert.equal(json.failures[0].command[ret + 1], "f32[1]");
      // Each printed line was run on its own, and reproduced its row.
      assert.deepEqual(json.failures[0].replay, { exitCode: 1, expected: 1 });
      assert.doesNotMatch(bad.out, /run alone/);
      const good = await captureCli(["fuzz", lib, "fzok_scale", "--runs", "50", "--out", out]);
      assert.equal(good.code, ExitCode.OK, good.err);
      assert.match(good.out, /no failures/);
      assert.match(good.out, /writes outside results do not count/);
      const usage = await captureCli(["fuzz", lib]);
      assert.equal(usage.code, ExitCode.USAGE);
      assert.match(usage.err, /'fuzz' takes a shared library and a handler name/);
      const missing = await captureCli(["fuzz", lib, "no_such_handler", "--runs", "5"]);
      assert.equal(missing.code, ExitCode.LIBRARY);
      assert.match(missing.err, /^error: .*no_such_handler/m);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: `fuzzer: a printed line that does not reproduce its row says so${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const out = await Deno.makeTempDir({ prefix: "fuzz-replay-" });
    try {
      const r = await captureCli([
        ...["fuzz", lib, "fzbug_index", "--ret", "like:0", "--runs", "300", "--out", out],
      ]);
      assert.equal(r.code, ExitCode.FUZZ_FAILURES, r.err);
      // An index of -2049 writes into the page the isolated process keeps after argument 0;
      // alone, the command line's canaries miss the page and the wild write crashes (exit 6),
      // or, where the memory there is mapped (the sanitizers' layout), goes unseen (exit 0).
      // The row says so under its line, with the exit code the replay gave.
      assert.match(r.out, /argument-write\s+argument 0\s+\d+\s+f32\[1\] index=s64:-\d+/);
      const replay =
        /--guard\n {3}\(run alone, this line exits with (\d+), not 1: the argument-write does not reproduce as such(; error: .*crashed)?/
          .exec(r.out);
      assert.ok(replay !== null, r.out);
      assert.ok(["0", "6"].includes(replay[1]!), r.out);
      if (replay[1] === "6") assert.ok(replay[2] !== undefined, r.out);
      // A zero-sized result's write is no crash row of its own: it faults on the page after the
      // result, a result-write, as the line's canary shows alone (exit 1).
      assert.doesNotMatch(r.out, /^\d+\s+crash\s/m);
      const zero = await fuzzHandler({ library: lib, handler: "fzbug_index" }, {
        runs: 30,
        results: ["like:0"],
        valid: ([x]) => x!.shape[0] === 0,
        outDir: out,
      });
      assert.equal(zero.failures.length, 1);
      const [f] = zero.failures;
      assert.equal(`${f!.kind} ${f!.detail}`, "result-write result 0");
      assert.match(
        f!.message,
        /at byte offset \d+ \(the result has 0 bytes; found by the inaccessible page after it/,
      );
      const alone = await captureCli(f!.command!);
      assert.equal(alone.code, 1, alone.err);
      assert.match(alone.err, /DATA_LOSS.*result 0 at byte offset \d+ \(the result has 0 bytes/);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: `fuzzer: a reference mismatch reproduces: expected .npy, --expect, exit 7${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const out = await Deno.makeTempDir({ prefix: "fuzz-ref-" });
    try {
      const seen: { dtype: string; alpha: unknown }[] = [];
      const report = await fuzzHandler({ library: lib, handler: "fzok_scale" }, {
        runs: 40,
        seed: 1,
        results: ["like:0"],
        attrs: ["alpha=f32:2"],
        outDir: out,
        // Off by one: y = alpha * x + 1.
        reference: (args, attrs) => {
          const x = args[0]!.data;
          seen.push({ dtype: x.constructor.name, alpha: attrs.alpha });
          const alpha = attrs.alpha as number;
          return [Float32Array.from(x as Float32Array, (v) => alpha * v + 1)];
        },
      });
      assert.ok(seen.length > 0);
      assert.deepEqual(seen[0], { dtype: "Float32Array", alpha: 2 });
      const f = report.failures.find((f) => f.kind === "mismatch");
      assert.ok(f, formatFuzzReport(report));
      // The whole comparison report, not its first line only.
      const text = formatFuzzReport(report);
      assert.match(text, /differs from the reference/);
      assert.ok(f.message.split("\n").length > 1, f.message);
      for (const line of f.message.split("\n").slice(1).filter((l) => l.trim() !== "")) {
        assert.ok(text.includes(line), line);
      }
      const expect = f.files!.find((p) => /expect0\.npy$/.test(p));
      assert.ok(expect !== undefined, f.files!.join(" "));
      assert.deepEqual(f.command!.slice(-2), ["--expect", expect]);
      const run = await captureCli(f.command!);
      assert.equal(run.code, ExitCode.MISMATCH, run.out + run.err);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: `fuzzer: a handler's output is counted, not flooded; choices waste no run${note}`,
  ignore: SKIP !== undefined,
  async fn() {
    const lib = library();
    const cli = (extra: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "cli.ts", "fuzz", lib, "fzok_chatty", "--runs", "200", ...extra],
        stdout: "piped",
        stderr: "piped",
      }).output();
    const dec = (b: Uint8Array) => new TextDecoder().decode(b);
    const loose = await cli(["--json"]);
    const json = JSON.parse(dec(loose.stdout));
    assert.equal(loose.code, 0, dec(loose.stderr));
    assert.doesNotMatch(dec(loose.stderr), /On entry to CHATTY|chatty: /);
    assert.ok(json.rejected > 0);
    assert.ok(json.output.lines >= json.rejected, JSON.stringify(json.output));
    assert.match(json.output.head, /On entry to CHATTY parameter number +1/);
    const text = await cli([]);
    assert.match(
      dec(text.stdout),
      /the handler wrote \d+ lines \(\d+ bytes\) to stdout and stderr/,
    );
    assert.doesNotMatch(dec(text.stderr), /On entry to CHATTY/);
    const chosen = JSON.parse(dec((await cli(["--attr", "uplo=u8:{'L','U'}", "--json"])).stdout));
    assert.equal(chosen.rejected, 0);
    assert.equal(chosen.failures.length, 0);
    assert.doesNotMatch(chosen.output.head, /On entry/);
    assert.match(chosen.output.head, /chatty: \d+ elements/);
  },
});

Deno.test("fuzzer: a TS handler is fuzzed in this process; non-determinism is found", async () => {
  using ok = Ffi.bind().arg(D.F32).ret(D.F32).attr("alpha", "f32").to((x, y, alpha) => {
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
  });
  const sig = await discoverSignature(ok);
  assert.deepEqual(sig.args, [{ dtype: D.F32 }]);
  assert.deepEqual(sig.attrs, [{ name: "alpha", kind: "scalar", dtype: D.F32 }]);
  const clean = await fuzzHandler(ok, { runs: 100, seed: 2, results: ["like:0"] });
  assert.deepEqual(clean.failures, []);
  let calls = 0;
  using flaky = Ffi.bind().arg(D.S32, 1).ret(D.S32, 1).to((x, y) => {
    const ys = y.typed();
    if (ys.length > 0) ys[0] = x.typed()[0]! + (calls++ % 2);
  });
  const report = await fuzzHandler(flaky, { runs: 50, seed: 2, results: ["s32[$0.0]"] });
  assert.equal(report.failures.length, 1, formatFuzzReport(report));
  assert.equal(report.failures[0]!.kind, "nondeterministic");
  assert.equal(report.failures[0]!.detail, "result 0");
  assert.deepEqual(report.failures[0]!.case.args[0]!.shape, [1]);
  // A reference that disagrees is a mismatch.
  const ref = await fuzzHandler(ok, {
    runs: 30,
    seed: 2,
    results: ["like:0"],
    attrs: ["alpha=f32:1"],
    reference: (args) => [new Float32Array(args[0]!.data.byteLength / 4).fill(7)],
  });
  assert.ok(ref.failures.some((f) => f.kind === "mismatch"), formatFuzzReport(ref));
});

Deno.test("fuzzer: bad options are FfiErrors naming the option", async () => {
  using h = Ffi.bind().arg(D.F32).ret(D.F32).to(() => {});
  await assert.rejects(
    fuzzHandler(h, { results: ["f32[$x]"] }),
    (e) =>
      e instanceof FfiError && /result rule 0: 'f32\[\$x\]' is not a result rule/.test(e.message),
  );
  await assert.rejects(
    fuzzHandler(h, { runs: -1 }),
    (e) => e instanceof FfiError && /runs must be a whole number/.test(e.message),
  );
  await assert.rejects(
    fuzzHandler(h, { results: ["like:0", "like:0"] }),
    (e) => e instanceof FfiError && /2 result rules for a handler with 1 results/.test(e.message),
  );
  await assert.rejects(
    fuzzHandler(h, { args: ["f32[2"] }),
    (e) => e instanceof FfiError && /argument hint 0/.test(e.message),
  );
});
