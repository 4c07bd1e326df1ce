import assert from "node:assert/strict";
import { runtimeDebugStats } from "../mod.ts";
import { closeFuzzLibrary, FUZZ_TARGETS, fuzzCases, fuzzSeed, runFuzz } from "./_fuzz.ts";
import { captureStderr } from "./_stderr.ts";

Deno.test("fuzz: every API function, frame descriptions, call frames, entry points", async () => {
  const cases = fuzzCases();
  const seed = fuzzSeed();
  const before = runtimeDebugStats();
  // The API functions that cannot return an error warn on stderr (at most 16 times
  // per process, then once more that further ones are suppressed).
  const { result: r, text } = await captureStderr(() => runFuzz(seed, cases));
  const after = runtimeDebugStats();
  for (const line of text.split("\n").filter(Boolean)) {
    assert.match(
      line,
      /^(XLA_FFI_Error_(Destroy|GetMessage): the args pointer is null|Unexpected XLA_FFI_Error_(Destroy|GetMessage) size: .*|xla_ffi_deno: ignored an XLA_FFI_Error\* that is not live .*|xla_ffi_deno: further warnings suppressed)$/,
    );
  }
  console.log(
    `fuzz: ${r.cases} cases (seed ${seed}) in ${r.ms.toFixed(0)} ms: ${r.errors} errors, ` +
      `${r.successes} successes, ${r.violations} violations`,
  );
  assert.equal(r.violations, 0, r.firstViolation);
  assert.equal(r.cases, cases);
  assert.equal(r.errors + r.successes >= cases, true);
  if (cases >= 10_000) {
    for (const t of FUZZ_TARGETS) assert.ok(r.perTarget[t]! > 100, `target ${t} ran`);
    assert.ok(r.errors > cases / 4 && r.successes > cases / 10);
  }
  assert.equal(r.tasksRun, r.tasksScheduled);
  // Nothing the runtime created during the run is left.
  const delta = (k: keyof typeof before) => after[k] - before[k];
  assert.equal(delta("errorsCreated"), delta("errorsDestroyed"), "errors");
  assert.equal(delta("futuresCreated"), delta("futuresDestroyed"), "futures");
  assert.equal(delta("framesCreated"), delta("framesDestroyed"), "frames");
  assert.equal(delta("instancesCreated"), delta("instancesDestroyed"), "instances");
  assert.equal(delta("statesSet"), delta("statesDeleted"), "states");
  assert.equal(delta("runtimesCreated"), delta("runtimesDestroyed"), "runtimes");
  assert.equal(delta("tasksScheduled"), delta("tasksRun"), "tasks");
});

Deno.test("fuzz: the same seed gives the same run", async () => {
  const { result: [a, b, c] } = await captureStderr(() => [
    runFuzz(7n, 3000),
    runFuzz(7n, 3000),
    runFuzz(8n, 3000),
  ]);
  // The inputs are the same; outcome counts may differ by a few where a
  // released pointer's address was reused by the allocator (then skipped).
  assert.deepEqual(a.perTarget, b.perTarget);
  assert.equal(a.cases, b.cases);
  assert.ok(Math.abs(a.errors - b.errors) < 50 && Math.abs(a.successes - b.successes) < 50);
  assert.notDeepEqual(a.perTarget, c.perTarget);
  assert.equal(a.violations + c.violations, 0, a.firstViolation + c.firstViolation);
  closeFuzzLibrary();
});
