/**
 * Fuzzing of the TS handler entry points: the fuzzer's seeded mutated call
 * frames (native/tests/fuzz.c, target "handler entry points (raw frames)")
 * fed straight to TS handlers of many bindings (tests/_fuzz_handlers.ts).
 * Pass: no crash or hang, every malformed frame rejected with a code and a
 * message before it reaches TS, every valid frame handled as its handler's
 * binding and body say (tests/_fuzz_handlers.ts declares it: success, a
 * future, or the error the handler makes), every error well formed, nothing
 * left over.
 */
import assert from "node:assert/strict";
import { handlerHostStats, runtimeDebugStats } from "../mod.ts";
import { closeFuzzLibrary, fuzzCases, fuzzSeed, RAW_TARGET, runFuzz } from "./_fuzz.ts";
import { FuzzHandlers } from "./_fuzz_handlers.ts";
import { settledStats } from "./_leak_paths.ts";

/** TS handler cases: a tenth of XLA_FFI_DENO_FUZZ_CASES, at least 100 000. */
function tsCases(): number {
  return Math.max(100_000, Math.ceil(fuzzCases() / 10));
}

Deno.test("fuzz: mutated call frames into TS handler entry points (sync, async, errors)", async () => {
  const cases = tsCases();
  const seed = fuzzSeed();
  // Batches, so that the Promises of async handlers settle in between.
  const batch = 10_000;
  using hs = new FuzzHandlers();
  const raw = hs.pointers();
  const before = runtimeDebugStats();
  const host0 = handlerHostStats();
  let errors = 0, successes = 0, futures = 0, ms = 0, done = 0;
  for (let b = 0; done < cases; b++) {
    const n = Math.min(batch, cases - done);
    const r = runFuzz(seed * 1000n + BigInt(b), n, raw, [RAW_TARGET], hs.expect);
    assert.equal(r.violations, 0, r.firstViolation);
    assert.equal(r.perTarget["handler entry points (raw frames)"], n);
    errors += r.errors;
    successes += r.successes;
    futures += r.futuresLeft;
    ms += r.ms;
    done += n;
    await hs.settle();
  }
  const after = await settledStats();
  const host1 = handlerHostStats();
  console.log(
    `fuzz (TS handlers): ${done} cases (seed ${seed}) in ${ms.toFixed(0)} ms: ${errors} errors, ` +
      `${successes} successes, ${futures} futures; TS calls ${JSON.stringify(hs.counts)}`,
  );
  assert.equal(errors + successes, done);
  // Both outcomes, and each kind of binding, ran.
  assert.ok(errors > done / 4 && successes > done / 20, `${errors} errors, ${successes} ok`);
  assert.ok(futures > 100, `async handlers completed through futures: ${futures}`);
  for (const k of ["walk", "walkAsync", "optional", "ctx", "throws"]) {
    assert.ok((hs.counts[k] ?? 0) > 100, `${k} ran: ${hs.counts[k]}`);
  }
  // The state, stage and token handlers never get a frame they can accept.
  assert.equal(hs.counts["instantiate"] ?? 0, 0);
  // Nothing is left: futures released, errors destroyed, no failed completion.
  const d = (k: keyof typeof after) => after[k] - before[k];
  assert.equal(d("futuresCreated"), d("futuresDestroyed"), "futures");
  assert.equal(d("futuresCreated"), futures);
  assert.equal(d("errorsCreated"), d("errorsDestroyed"), "errors");
  assert.equal(host1.failedCompletions, host0.failedCompletions);
  assert.equal(host1.liveStates, host0.liveStates);
  closeFuzzLibrary();
});
