/**
 * Routes are proven equal: a differential fuzzer sends the same calls
 * (TypeScript handlers, synchronous, asynchronous and stateful; native ones
 * from native/tests/runtime_handlers.c) through every route of the embedded
 * runtime — `callSync`, `call`, `callOnThreads`, guarded frames, isolated
 * libraries, `ffiCall` on a fresh and on a kept frame, with operands and
 * attributes changed in place between calls, results transferred, the cache
 * cleared, and calls of one signature in flight together — and requires the
 * same result bytes, or the same error code and message, from each.
 *
 * A failure names the seed, the case, the two routes and the first bytes
 * that differ. Rerun one case with `ROUTE_FUZZ_SEED=<seed> ROUTE_FUZZ_CASE=<i>`
 * (and `ROUTE_FUZZ_FAMILY=<family>`); `ROUTE_FUZZ_CASES` sets how many cases
 * each family runs (default 24).
 *
 * Under real XLA (when jax is installed), `tests/_xla_route_cases.ts` sends
 * the calls of the families XLA can call through `Xla.ffiCall` (fresh, kept
 * plan, guarded) and a jitted program's `run` and `runSync`, and compares
 * each with the embedded runtime's `ffiCall` (`ROUTE_FUZZ_XLA_CASES` cases
 * per family, default 16). Operands and attributes carry NaN payloads,
 * signalling NaNs of both signs, denormals and -0.
 */
import assert from "node:assert/strict";
import { ErrorCode, HandlerLibrary } from "../mod.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { XLA_FAMILIES } from "./_xla_route_cases.ts";
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";
import {
  buildFrame,
  bytesOf,
  type Call,
  caseSeed,
  confusableTwin,
  diff,
  type Env,
  envNumber,
  errorOutcome,
  type Family,
  familySalt,
  ffiOptions,
  ffiRoute,
  frameRoute,
  Gates,
  generate,
  isStateful,
  mutateAttrs,
  noElements,
  ONE_CASE,
  openRuntime,
  type Outcome,
  Rng,
  SEED,
  snapshot,
  target,
  tick,
  TsHandlers,
  withNewData,
} from "./_route_fuzz.ts";

const CASES = envNumber("ROUTE_FUZZ_CASES", 24);
const ONE_FAMILY = Deno.env.get("ROUTE_FUZZ_FAMILY");

/** Failures found in one family's run, each with where to rerun it. */
class Failures {
  readonly list: string[] = [];
  constructor(readonly family: Family) {}
  add(index: number, c: Call, routes: string, what: string): void {
    this.list.push(
      `seed=${SEED} case=${index} family=${this.family}/${c.flavour} ${routes}: ${what}\n` +
        `  rerun: ROUTE_FUZZ_SEED=${SEED} ROUTE_FUZZ_FAMILY=${this.family} ROUTE_FUZZ_CASE=${index}`,
    );
  }
  /** Compares a route with the reference route. */
  check(index: number, c: Call, refName: string, ref: Outcome, name: string, o: Outcome): void {
    const d = diff(ref, o);
    if (d !== undefined) this.add(index, c, `${refName} vs ${name}`, d);
  }
}

const isAsyncTs = (c: Call) =>
  c.flavour === "async" || c.flavour === "asyncEarly" || c.flavour === "promise";
const isNative = (c: Call) => c.family.startsWith("native");

/**
 * callSync of a handler that leaves its call pending (a TS handler returning a
 * Promise, a native future not completed inline) is FAILED_PRECONDITION by
 * design. What the caller's result arrays hold afterwards, once the handler
 * settled, is what was written last: the caller's own refill after the refusal,
 * then, if the handler writes after that, its whole write — never a mix of
 * both (a byte nobody wrote last).
 */
async function callSyncRefused(env: Env, c: Call, ref: Outcome, i: number, f: Failures) {
  const built = buildFrame(c, false);
  const t = target(env, c);
  let o: Outcome | undefined;
  try {
    env.rt.callSync(t, built.frame);
    o = { ok: true, bytes: snapshot(built.rets) };
  } catch (e) {
    o = errorOutcome(e);
  }
  try {
    if (o.ok || o.code !== ErrorCode.FAILED_PRECONDITION) {
      f.add(
        i,
        c,
        "callSync",
        `expected FAILED_PRECONDITION for a pending call, got ${
          o.ok ? "success" : `[${o.code}] ${o.message}`
        }`,
      );
    }
    if (isNative(c)) {
      await tick(10 + Number((c.attrs.delay_ms as { value: number }).value));
      return;
    }
    // The caller refills its results; then the handler settles.
    for (const r of built.rets) bytesOf(r).fill(0xa5);
    await env.gates.drain();
    await tick();
    built.rets.forEach((r, j) => {
      const got = bytesOf(r);
      const refill = got.every((b) => b === 0xa5);
      const written = ref.ok && diff(
            { ok: true, bytes: [ref.bytes[j]!] },
            { ok: true, bytes: [got] },
          ) === undefined;
      if (!refill && !written) {
        const want = ref.ok ? ref.bytes[j]! : new Uint8Array(0);
        let k = 0;
        while (k < got.length && (got[k] === 0xa5 || got[k] === want[k])) k++;
        const mixed = [...got.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0"));
        f.add(
          i,
          c,
          "callSync (refused) then refill",
          `result ${j} is neither the caller's refill (a5…) nor the handler's write: a mix ` +
            `[0..] ${mixed.join(" ")}; handler wrote ${
              [...want.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join(" ")
            }`,
        );
      }
    });
  } finally {
    await env.gates.drain();
    built.frame.close();
  }
}

/** The ffiCall routes of a call (all but the closure-writing handlers). */
async function ffiRoutes(env: Env, c: Call, ref: Outcome, i: number, rng: Rng, f: Failures) {
  const { rt, gates } = env;
  const check = (name: string, o: Outcome, refO = ref, refName = "call") =>
    f.check(i, c, refName, refO, name, o);
  const nativeIso = env.iso !== undefined && isNative(c) && !isStateful(c);

  rt.clearCache();
  check("ffiCall (first of its signature)", await ffiRoute(env, c).promise);
  check("ffiCall (kept frame)", await ffiRoute(env, c).promise);
  check("ffiCall guard", await ffiRoute(env, c, { guard: true }).promise);
  if (nativeIso) check("isolated ffiCall", await ffiRoute(env, c, { isolated: true }).promise);
  // When no result holds an element the routes above ask for a side effect; without one the
  // call is dropped, as jax (no results) and XLA (empty results) drop it: no handler runs (not
  // even one that fails), and the results come back empty.
  if (noElements(c)) {
    const options = { ...ffiOptions(c, false), hasSideEffect: undefined };
    check(
      "ffiCall with empty results and no side effect",
      await ffiRoute(env, c, { options }).promise,
      { ok: true, bytes: c.rets.map(() => new Uint8Array(0)) },
      "jax and XLA (the call dropped)",
    );
  }

  // The same options object again, its arrays and attributes changed in place between calls,
  // a result's buffer transferred, or the cache cleared.
  {
    const opts = ffiOptions(c, false);
    const first = ffiRoute(env, c, { options: opts });
    check("ffiCall (options reused, 1st)", await first.promise);
    const rs = await first.results;
    const c2 = withNewData(rng, c);
    const what: string[] = [];
    if (rng.chance(0.7)) {
      opts.arrays.forEach((a, k) => {
        if (c.args[k]!.view !== "dup") bytesOf(a).set(c2.args[k]!.bytes);
      });
      what.push("operands written in place");
    } else c2.args = c.args;
    if (rng.chance(0.5)) {
      mutateAttrs(rng, opts.attrs);
      c2.attrs = structuredAttrs(opts.attrs);
      what.push("attributes changed in place");
    } else c2.attrs = c.attrs;
    if (rs !== undefined && rs.length > 0 && rng.chance(0.5)) {
      const r = rs[rng.int(rs.length)]!;
      if (r.buffer instanceof ArrayBuffer && rng.chance(0.5)) r.buffer.transfer();
      else structuredClone(r, { transfer: [r.buffer as ArrayBuffer] });
      what.push("a result's buffer transferred");
    }
    if (rng.chance(0.3)) {
      rt.clearCache();
      what.push("cache cleared");
    }
    const ref2 = await frameRoute(env, c2, "call");
    check(
      `ffiCall (options reused, 2nd: ${what.join(", ") || "unchanged"})`,
      await ffiRoute(env, c2, { options: opts }).promise,
      ref2,
      "call(2nd data)",
    );
  }

  // Two calls of one signature in flight together, started in the same turn; the first
  // result's buffer is transferred before the second finishes.
  {
    const c2 = withNewData(rng, c);
    const ref2 = await frameRoute(env, c2, "call");
    if (rng.chance(0.5)) rt.clearCache();
    const open1 = gates.hold(), open2 = gates.hold();
    const p1 = ffiRoute(env, c), p2 = ffiRoute(env, c2);
    await tick();
    open1();
    const o1 = await p1.promise;
    const rs = await p1.results;
    let transferred = "";
    if (rs !== undefined && rs.length > 0 && rng.chance(0.6)) {
      structuredClone(rs, { transfer: [...new Set(rs.map((r) => r.buffer as ArrayBuffer))] });
      transferred = ", the 1st's results transferred";
    }
    open2();
    const o2 = await p2.promise;
    gates.reset();
    await gates.drain();
    check("ffiCall (1st of two in flight)", o1);
    check(`ffiCall (2nd of two in flight${transferred})`, o2, ref2, "call(2nd data)");
  }

  // A second call of the signature started while the first finishes: k microtasks after the
  // first's handler may go on, or when the first's promise settles.
  {
    const c2 = withNewData(rng, c);
    const ref2 = await frameRoute(env, c2, "call");
    rt.clearCache(); // the first call is the first of its signature
    const open1 = gates.hold();
    const p1 = ffiRoute(env, c);
    await tick();
    let p2: ReturnType<typeof ffiRoute>;
    let how: string;
    if (rng.chance(0.7)) {
      const k = rng.int(8);
      how = `${k} microtasks after the 1st's handler went on`;
      open1();
      for (let n = 0; n < k; n++) await null;
      p2 = ffiRoute(env, c2);
    } else {
      how = "in a .then of the 1st's promise";
      p2 = await new Promise((resolve) => {
        p1.results.then(() => resolve(ffiRoute(env, c2)));
        open1();
      });
    }
    const o1 = await p1.promise, o2 = await p2.promise;
    gates.reset();
    await gates.drain();
    check(`ffiCall (1st; a 2nd started ${how})`, o1);
    check(`ffiCall (2nd, started ${how})`, o2, ref2, "call(2nd data)");
  }

  // A call site whose attributes print as the same JSON text as another's.
  const twin = confusableTwin(rng, c);
  if (twin !== undefined) {
    const refA = await frameRoute(env, c, "call");
    const refB = await frameRoute(env, twin, "call");
    rt.clearCache();
    check("ffiCall (site A)", await ffiRoute(env, c).promise, refA, "call(site A)");
    check(
      "ffiCall (site B: attributes of A's JSON text)",
      await ffiRoute(env, twin).promise,
      refB,
      "call(site B)",
    );
  }
}

/** A copy of the attributes as they are now. */
function structuredAttrs(d: Record<string, unknown>) {
  return cloneDeep(d) as Call["attrs"];
}

function cloneDeep(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) return (v as Int32Array).slice();
  if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cloneDeep(x)]));
  }
  return v;
}

/** Every route of one generated call. */
async function runCase(env: Env, family: Family, index: number, f: Failures): Promise<void> {
  const rng = new Rng(caseSeed(SEED ^ familySalt(family), index));
  const c = generate(rng, family, env.stateTypeId);
  env.gates.written = undefined;
  const ref = await frameRoute(env, c, "call");
  const check = (name: string, o: Outcome) => f.check(index, c, "call", ref, name, o);
  const pending = isAsyncTs(c) ||
    (c.family === "nativeAsync" && (c.attrs.inline as { value: number }).value === 0);

  if (c.family === "tsClosure") {
    // The handler writes the caller's array itself: every route must show what it wrote.
    const w = env.gates.written;
    const wrote: Outcome = w === undefined ? ref : { ok: true, bytes: [w] };
    f.check(index, c, "what the handler wrote", wrote, "call", ref);
    f.check(
      index,
      c,
      "what the handler wrote",
      wrote,
      "callSync",
      await frameRoute(env, c, "callSync"),
    );
    const threads = await frameRoute(env, c, "threads");
    f.check(index, c, "what the handler wrote", wrote, "callOnThreads", threads);
    return;
  } else if (c.family === "nativeAsync" && pending) {
    // Whether the pool completed the future before callSync looked is a race: either the
    // call's own outcome or FAILED_PRECONDITION.
    const o = await frameRoute(env, c, "callSync");
    await tick(10);
    if (o.ok || o.code !== ErrorCode.FAILED_PRECONDITION) check("callSync", o);
  } else if (pending) await callSyncRefused(env, c, ref, index, f);
  else check("callSync", await frameRoute(env, c, "callSync"));
  check("callOnThreads", await frameRoute(env, c, "threads"));
  {
    // A guarded frame copies results back after the call, so a handler writing the caller's
    // array itself is left out.
    if (!pending) check("callSync guard", await frameRoute(env, c, "callSync", { guard: true }));
    check("call guard", await frameRoute(env, c, "call", { guard: true }));
  }
  if (env.iso !== undefined && isNative(c) && !isStateful(c)) {
    if (!pending) {
      check("isolated callSync", await frameRoute(env, c, "callSync", { isolated: true }));
      check(
        "isolated callSync guard",
        await frameRoute(env, c, "callSync", { isolated: true, guard: true }),
      );
    }
    check("isolated call", await frameRoute(env, c, "call", { isolated: true }));
    check("isolated call guard", await frameRoute(env, c, "call", { isolated: true, guard: true }));
    check("isolated callOnThreads", await frameRoute(env, c, "threads", { isolated: true }));
  }
  // A kept frame called again after its operands changed in place.
  if (!pending && c.args.length > 0) {
    const built = buildFrame(c, false);
    try {
      const c2 = withNewData(rng, c);
      let inst;
      const t = target(env, c);
      if (isStateful(c)) inst = await env.rt.instantiate(t, built.frame);
      const opts = inst ? { instance: inst } : undefined;
      try {
        env.rt.callSync(t, built.frame, opts);
      } catch {
        // Its outcome was checked above; the second call is the one compared.
      }
      try {
        built.args.forEach((a, k) => {
          if (c.args[k]!.view !== "dup" && !(k in c.aliases)) bytesOf(a).set(c2.args[k]!.bytes);
        });
        for (const r of built.rets) bytesOf(r).fill(0);
        // Aliased arguments hold the last results: give them their new data too.
        for (const [k] of Object.entries(c.aliases)) {
          bytesOf(built.args[Number(k)]!).set(c2.args[Number(k)]!.bytes);
        }
        env.rt.callSync(t, built.frame, opts);
        const o: Outcome = { ok: true, bytes: snapshot(built.rets) };
        f.check(
          index,
          c,
          "call(2nd data)",
          await frameRoute(env, c2, "call"),
          "callSync (same frame, operands written in place)",
          o,
        );
      } catch (e) {
        const ref2 = await frameRoute(env, c2, "call");
        f.check(
          index,
          c,
          "call(2nd data)",
          ref2,
          "callSync (same frame, operands written in place)",
          errorOutcome(e),
        );
      } finally {
        inst?.close();
      }
    } finally {
      built.frame.close();
    }
  }
  await ffiRoutes(env, c, ref, index, rng, f);
}

const FAMILIES: Family[] = [
  "tsSync",
  "tsAsync",
  "tsClosure",
  "tsState",
  "nativeEcho",
  "nativeAttrs",
  "nativeError",
  "nativeAsync",
  "nativeState",
  "nativeScale",
];

let typeNames = 0;

for (const family of FAMILIES) {
  const skip = ONE_FAMILY !== undefined && ONE_FAMILY !== family;
  Deno.test({
    name: `route equivalence: ${family} calls give the same bytes and errors on every route`,
    ignore: skip,
    fn: async () => {
      const gates = new Gates();
      const ts = new TsHandlers(gates);
      const lib = HandlerLibrary.open(testHandlersPath());
      const iso = family.startsWith("native")
        ? HandlerLibrary.open(testHandlersPath(), { isolate: true })
        : undefined;
      const rt = openRuntime();
      const f = new Failures(family);
      try {
        const stateTypeId = rt.registerType(
          `route_equivalence.state.${Deno.pid}.${typeNames++}.${SEED}`,
          0,
          { typeInfo: lib.typeInfo("test_state_type_info") },
        );
        const env: Env = { rt, lib, iso, ts, gates, stateTypeId };
        const indices = ONE_CASE !== undefined
          ? [Number(ONE_CASE)]
          : Array.from({ length: CASES }, (_, i) => i);
        for (const i of indices) await runCase(env, family, i, f);
      } finally {
        await gates.drain();
        rt.close();
        ts.close();
        iso?.close();
        lib.close();
      }
      const shown = f.list.slice(0, 12).join("\n");
      assert.equal(
        f.list.length,
        0,
        `${f.list.length} route differences (first ${Math.min(12, f.list.length)}):\n${shown}`,
      );
    },
  });
}

// The same calls under real XLA (in a child process per family: a crash inside XLA fails one
// test): Xla.ffiCall fresh, on its kept plan and guarded, and a jitted program's run and
// runSync, each compared with the embedded runtime's ffiCall in the same process.
for (const family of XLA_FAMILIES) {
  Deno.test({
    name: xlaName(
      `route equivalence under XLA: ${family} calls give the embedded runtime's bytes and errors`,
    ),
    ignore: XLA_SKIP !== undefined || (ONE_FAMILY !== undefined && ONE_FAMILY !== family),
    fn: async () => {
      await runXlaCase(family, { script: new URL("./_xla_route_cases.ts", import.meta.url) });
    },
  });
}
