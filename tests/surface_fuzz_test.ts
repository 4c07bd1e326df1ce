/**
 * The TypeScript surface under generated input (tests/_surface_fuzz.ts): a
 * fixed seed, a bounded number of cases and a time budget. Every case must
 * succeed with the right result or throw an FfiError; the fuzzer runs in a
 * child process so that a crash or a hang fails this test with the seed, the
 * case number and the input being run instead of taking the runner down.
 *
 * Reproduce one case: XLA_FFI_DENO_SURFACE_FUZZ_CASE=N (with the seed it
 * reports); run more: XLA_FFI_DENO_SURFACE_FUZZ_CASES, _SEED, _TARGETS,
 * _BUDGET_MS (no new case after this long) and _TIMEOUT_MS (the child is
 * killed after this long: a hang; default the budget and 30 s).
 */
import assert from "node:assert/strict";
import { CHILD_PERMISSIONS } from "./_child.ts";
import {
  type FuzzSummary,
  makeCase,
  settings,
  SUMMARY_TAG,
  type ViolationRecord,
  violationsPath,
} from "./_surface_fuzz.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

/** The child's wall-clock limit beyond its own budget (start-up, a case in flight). */
const GRACE_MS = 30_000;

interface ChildRun {
  code: number;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  progress: string;
  /** Distinct violations the child had found before it ended. */
  earlier: ViolationRecord[];
}

async function runChild(env: Record<string, string>, timeoutMs: number): Promise<ChildRun> {
  const progress = await Deno.makeTempFile({ prefix: "surface_fuzz_", suffix: ".txt" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...CHILD_PERMISSIONS,
        new URL("./_surface_fuzz.ts", import.meta.url).pathname,
        progress,
      ],
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, timeoutMs);
    const out = await child.output();
    clearTimeout(timer);
    const text = new TextDecoder();
    return {
      code: out.code,
      signal: out.signal,
      timedOut,
      stdout: text.decode(out.stdout),
      stderr: text.decode(out.stderr),
      progress: await Deno.readTextFile(progress).catch(() => ""),
      earlier: JSON.parse(await Deno.readTextFile(violationsPath(progress)).catch(() => "[]")),
    };
  } finally {
    await Deno.remove(progress).catch(() => {});
    await Deno.remove(violationsPath(progress)).catch(() => {});
  }
}

function tail(s: string, n = 4000): string {
  return s.length > n ? `…${s.slice(-n)}` : s;
}

function listViolations(violations: readonly ViolationRecord[]): string {
  return violations.map((v, i) =>
    `${i + 1}. [${v.target}] ${v.kind}${v.detail ? `: ${v.detail}` : ""}\n` +
    `   case ${v.case} (${v.count} case${v.count === 1 ? "" : "s"}): ${v.input}`
  ).join("\n");
}

/** A failure message naming the violations, each with its shortest input. */
function describeViolations(s: FuzzSummary): string {
  return `${s.violations.length} distinct violation(s) of "success or FfiError" in ${s.cases} ` +
    `cases (seed ${s.seed}; rerun one with XLA_FFI_DENO_SURFACE_FUZZ_SEED=${s.seed} ` +
    `XLA_FFI_DENO_SURFACE_FUZZ_CASE=N):\n${listViolations(s.violations)}`;
}

Deno.test({
  name: "surface fuzz: builder, setters, call options, ffiCall, .npy and CLI parsers " +
    "succeed correctly or throw FfiError",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    testHandlersPath(); // built here, so that the child's time goes to the cases
    const s = settings();
    const env: Record<string, string> = {
      XLA_FFI_DENO_SURFACE_FUZZ_SEED: String(s.seed),
      XLA_FFI_DENO_SURFACE_FUZZ_CASES: String(s.cases),
      XLA_FFI_DENO_SURFACE_FUZZ_BUDGET_MS: String(s.budgetMs),
    };
    const limit = Number(
      Deno.env.get("XLA_FFI_DENO_SURFACE_FUZZ_TIMEOUT_MS") || s.budgetMs + GRACE_MS,
    );
    const r = await runChild(env, limit);
    const line = r.stdout.split("\n").find((l) => l.startsWith(SUMMARY_TAG));
    if (r.timedOut || r.code !== 0 || line === undefined) {
      const how = r.timedOut
        ? `hung: killed after ${limit} ms`
        : r.signal !== null
        ? `crashed: killed by ${r.signal}`
        : /panicked|Fatal error/.test(r.stderr)
        ? `crashed: the runtime aborted (exit code ${r.code})`
        : `exited with code ${r.code}${line === undefined ? " without a summary" : ""}`;
      assert.fail(
        `the surface fuzzer's child ${how}\n` +
          `running (the latest case first; one corrupting memory may bring the process ` +
          `down in a later one: rerun each alone with XLA_FFI_DENO_SURFACE_FUZZ_CASE=N):\n` +
          `${r.progress.trim() || "(no case started)"}\n` +
          `stderr:\n${tail(r.stderr)}` +
          (r.earlier.length === 0
            ? ""
            : `\nviolations found before it ended:\n${listViolations(r.earlier)}`),
      );
    }
    const summary = JSON.parse(line.slice(SUMMARY_TAG.length)) as FuzzSummary;
    assert.ok(summary.cases > 0, "no case ran");
    if (summary.violations.length > 0) assert.fail(describeViolations(summary));
    // The run reached both outcomes, and every target (a generator that only
    // makes errors, or none at all, would test nothing).
    assert.ok(summary.calls.ok > 0 && summary.calls.ffiError > 0, JSON.stringify(summary.calls));
    if (summary.cases >= 200) {
      for (const t of s.targets) assert.ok((summary.perTarget[t] ?? 0) > 0, `no case for ${t}`);
    }
  },
});

Deno.test("surface fuzz: a case is the same input again from its seed and number", () => {
  const { targets } = settings();
  for (const n of [0, 1, 17, 999, 123456]) {
    assert.equal(makeCase(7, n, targets).desc, makeCase(7, n, targets).desc);
  }
  assert.notEqual(makeCase(7, 1, targets).desc, makeCase(8, 1, targets).desc);
});
