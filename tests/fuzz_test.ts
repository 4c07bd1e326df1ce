import assert from "node:assert/strict";
import { runtimeDebugStats } from "../mod.ts";
import { closeFuzzLibrary, FUZZ_TARGETS, fuzzCases, fuzzSeed, runFuzz } from "./_fuzz.ts";

Deno.test("fuzz: every API function, frame descriptions, call frames, entry points", () => {
  const cases = fuzzCases();
  const seed = fuzzSeed();
  const before = runtimeDebugStats();
  const r = runFuzz(seed, cases);
  const after = runtimeDebugStats();
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

Deno.test("fuzz: the same seed gives the same run", () => {
  const a = runFuzz(7n, 3000);
  const b = runFuzz(7n, 3000);
  const c = runFuzz(8n, 3000);
  // The inputs are the same; outcome counts may differ by a few where a
  // released pointer's address was reused by the allocator (then skipped).
  assert.deepEqual(a.perTarget, b.perTarget);
  assert.equal(a.cases, b.cases);
  assert.ok(Math.abs(a.errors - b.errors) < 50 && Math.abs(a.successes - b.successes) < 50);
  assert.notDeepEqual(a.perTarget, c.perTarget);
  assert.equal(a.violations + c.violations, 0, a.firstViolation + c.firstViolation);
  closeFuzzLibrary();
});
