/**
 * The route-equivalence fuzzer under real XLA, one family per child process
 * (`tests/route_equivalence_test.ts` runs `deno run …
 * tests/_xla_route_cases.ts <family>`): the calls of `tests/_route_fuzz.ts`
 * (operands with NaN payloads, signalling NaNs of both signs, denormals and
 * -0; attributes with the same; aliased pairs) sent through every route into
 * XLA — `Xla.ffiCall` on its first call of a signature, on its kept plan, on
 * a kept request (what the bridge found for it taken again) and on the
 * native path that request then takes ({@link CALLS}), guarded
 * (`guard: true`, aliases included), and a jitted program calling the
 * registered target with `run` and, where the handler completes inline,
 * `runSync` (TS handlers then run on the JS thread), four calls each; `run`
 * and `ffiCall` of a native target start on the JS thread — and compared byte for
 * byte, or error for error, with the embedded runtime's `ffiCall` of the same
 * call in the same process. Each case prints `ok <family>` last; a difference
 * fails the case with the seed, case and routes to rerun it with.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DataType, type Handler, type HandlerRef, type HandlerStages } from "../mod.ts";
import { Xla, type XlaProgram } from "../src/xla/mod.ts";
import { _encodeAttrs } from "../src/xla/_codec.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { HandlerLibrary } from "../mod.ts";
import {
  argArrays,
  type Call,
  caseSeed,
  diff,
  type Env,
  envNumber,
  errorOutcome,
  type Family,
  familySalt,
  ffiOptions,
  ffiRoute,
  Gates,
  generate,
  ONE_CASE,
  openRuntime,
  type Outcome,
  Rng,
  SEED,
  snapshot,
  target,
  TsHandlers,
} from "./_route_fuzz.ts";
import { runCaseFromArgs } from "./_xla_env.ts";

const CASES = envNumber("ROUTE_FUZZ_XLA_CASES", 16);

/** jnp's names of the element types the fuzzer draws. */
const JNP: Partial<Record<DataType, string>> = {
  [DataType.PRED]: "bool_",
  [DataType.S4]: "int4",
  [DataType.S8]: "int8",
  [DataType.S16]: "int16",
  [DataType.S32]: "int32",
  [DataType.S64]: "int64",
  [DataType.U4]: "uint4",
  [DataType.U8]: "uint8",
  [DataType.U16]: "uint16",
  [DataType.U32]: "uint32",
  [DataType.U64]: "uint64",
  [DataType.F16]: "float16",
  [DataType.BF16]: "bfloat16",
  [DataType.F32]: "float32",
  [DataType.F64]: "float64",
  [DataType.C64]: "complex64",
  [DataType.C128]: "complex128",
};

/** Element types XLA stores packed (less than a byte each). */
const SUB_BYTE = new Set<DataType>([DataType.S4, DataType.U4]);

function jnp(dtype: DataType): string {
  const name = JNP[dtype];
  if (name === undefined) throw new Error(`no jnp name for ${DataType[dtype]}`);
  return `jnp.${name}`;
}

/**
 * The Python source of a program calling `name` as the call does, its
 * attributes given as bytes (jax's own attribute path: NaN payloads and
 * signalling NaNs as written), read from the same encoding `Xla.ffiCall`
 * sends.
 */
function programSource(name: string, c: Call, hasSideEffect: boolean): string {
  const codes = new Set<number>();
  const encoded = _encodeAttrs(c.attrs);
  const collect = (v: unknown): void => {
    const a = v as { k: string; t?: number; v?: unknown };
    if (a.t !== undefined) codes.add(a.t);
    if (a.k === "d") { for (const [, x] of a.v as [string, unknown][]) collect(x); }
  };
  for (const [, v] of encoded) collect(v);
  const dtypes = [...codes].map((t) => `${t}: ${jnp(t as DataType)}`).join(", ");
  const results = c.rets.map((r) =>
    `jax.ShapeDtypeStruct((${r.shape.map((d) => `${d},`).join("")}), ${jnp(r.dtype)})`
  );
  const aliases = Object.entries(c.aliases).map(([i, j]) => `${i}: ${j}`).join(", ");
  const params = c.args.map((_, i) => `x${i}`).join(", ");
  return [
    "import json as _json",
    "import numpy as _np",
    "from jax._src.hashable_array import HashableArray as _HashableArray",
    `_DT = {${dtypes}}`,
    "class _HDict(dict):",
    "    def __hash__(self):",
    "        return hash(frozenset(self.items()))",
    "def _attr(a, nested):",
    "    if a['k'] == 's':",
    "        dt = _np.dtype(_DT[a['t']])",
    "        if dt.kind == 'b':",
    "            return _np.bool_(bool(a['v']))",
    "        return _np.frombuffer(bytes.fromhex(a['x']), dtype=dt.newbyteorder('<'))[0]",
    "    if a['k'] == 'a':",
    "        dt = _np.dtype(_DT[a['t']])",
    "        arr = _np.frombuffer(bytes.fromhex(a['x']), dtype=dt.newbyteorder('<')).astype(dt)",
    "        return _HashableArray(arr) if nested else arr",
    "    if a['k'] == 'str':",
    "        return a['v']",
    "    return _HDict((n, _attr(v, True)) for n, v in a['v'])",
    `_ATTRS = {n: _attr(v, False) for n, v in _json.loads(${
      JSON.stringify(JSON.stringify(encoded))
    })}`,
    `def f(${params}):`,
    `    return ffi.ffi_call(${JSON.stringify(name)}, [${results.join(", ")}], ` +
    `input_output_aliases={${aliases}}, has_side_effect=${hasSideEffect ? "True" : "False"})` +
    `(${params}${params ? ", " : ""}**_ATTRS)`,
    "",
  ].join("\n");
}

/** What the arrays a route returned hold, taken now. */
function outcomeOf(rs: readonly ArrayBufferView[]): Outcome {
  return { ok: true, bytes: snapshot(rs) };
}

async function settle(p: () => Promise<readonly ArrayBufferView[]>): Promise<Outcome> {
  try {
    return outcomeOf(await p());
  } catch (e) {
    return errorOutcome(e);
  }
}

function settleSync(f: () => readonly ArrayBufferView[]): Outcome {
  try {
    return outcomeOf(f());
  } catch (e) {
    return errorOutcome(e);
  }
}

/** The routes of one family under XLA, each compared with the embedded runtime's ffiCall. */
async function fuzzFamily(family: Family): Promise<void> {
  await using xla = await Xla.open();
  const gates = new Gates();
  const ts = new TsHandlers(gates);
  using lib = HandlerLibrary.open(testHandlersPath());
  using rt = openRuntime();
  const env: Env = { rt, lib, iso: undefined, ts, gates, stateTypeId: 0 };
  const names = new Map<Handler | HandlerRef | HandlerStages, string>();
  const failures: string[] = [];
  let compared = 0, programs = 0;
  const salt = familySalt(family);
  const indices = ONE_CASE !== undefined
    ? [Number(ONE_CASE)]
    : Array.from({ length: 4 * CASES }, (_, i) => i);
  let ran = 0, packed = 0;
  const native0 = (await xla.pythonStats()).nativeCalls;
  try {
    for (const i of indices) {
      if (ran === CASES) break;
      const rng = new Rng(caseSeed(SEED ^ salt ^ 0x5a17, i));
      const c = generate(rng, family, 0);
      if ([...c.args, ...c.rets].some((o) => SUB_BYTE.has(o.dtype))) {
        // XLA keeps sub-byte arrays packed, two 4-bit elements to a byte, where ffi.h's
        // size_bytes() and the embedded runtime count one byte per element
        // (docs/real-xla.md): such a call is not the same call on both hosts.
        packed++;
        continue;
      }
      ran++;
      const check = (route: string, o: Outcome, ref: Outcome) => {
        compared++;
        const d = diff(ref, o);
        if (d !== undefined) {
          failures.push(
            `seed=${SEED} case=${i} family=${family}/${c.flavour} embedded ffiCall vs ${route}: ` +
              `${d}\n  rerun: ROUTE_FUZZ_SEED=${SEED} ROUTE_FUZZ_CASE=${i} deno run -A ` +
              `tests/_xla_route_cases.ts ${family}`,
          );
        }
      };
      const ref = await ffiRoute(env, c).promise;
      const t = target(env, c);
      const call = (guard: boolean) => () => {
        const { arrays: _, ...options } = ffiOptions(c, guard);
        return xla.ffiCall(t, options) as Promise<ArrayBufferView[]>;
      };
      for (const when of CALLS) check(`Xla.ffiCall (${when})`, await settle(call(false)), ref);
      check("Xla.ffiCall guard", await settle(call(true)), ref);
      check("Xla.ffiCall guard (kept plan)", await settle(call(true)), ref);
      await gates.drain();
      // Without a side effect, a call whose results hold no element is dropped on both hosts.
      const pure = (host: { ffiCall: typeof xla.ffiCall }) => () => {
        const { arrays: _, ...options } = ffiOptions(c, false);
        return host.ffiCall(t, { ...options, hasSideEffect: false }) as Promise<
          ArrayBufferView[]
        >;
      };
      check(
        "Xla.ffiCall without a side effect",
        await settle(pure(xla)),
        await settle(pure(rt)),
      );
      await gates.drain();

      // A jitted program calling the registered target.
      let name = names.get(t);
      if (name === undefined) {
        name = `route_fuzz.${family}.${names.size}`;
        await xla.register(name, t);
        names.set(t, name);
      }
      let prog: XlaProgram;
      try {
        prog = await xla.jit(programSource(name, c, ffiOptions(c, false).hasSideEffect === true));
      } catch (e) {
        failures.push(`case ${i}: the program did not compile: ${(e as Error).message}`);
        continue;
      }
      programs++;
      try {
        const args = () => {
          const arrays = argArrays(c);
          return c.args.map((a, k) => ({ data: arrays[k]!, shape: a.shape, dtype: a.dtype }));
        };
        const data = (rs: { data: ArrayBufferView }[]) => rs.map((r) => r.data);
        for (const when of CALLS) {
          check(
            `prog.run (${when})`,
            await settle(async () => data(await prog.run(...args()))),
            ref,
          );
        }
        // runSync calls TS handlers inline on the JS thread; one that returns a Promise
        // needs the free JS thread, which runSync refuses by design.
        const inline = c.flavour === "sync";
        if (inline) {
          for (const when of CALLS) {
            check(`prog.runSync (${when})`, settleSync(() => data(prog.runSync(...args()))), ref);
          }
        }
      } finally {
        await prog.close();
        await gates.drain();
      }
    }
  } finally {
    await gates.drain();
    ts.close();
  }
  const native = (await xla.pythonStats()).nativeCalls - native0;
  console.log(
    `${family}: ${ran} calls (${packed} with sub-byte operands left out), ${programs} programs, ` +
      `${compared} comparisons, ${native} calls on the native path`,
  );
  if (ONE_CASE === undefined && family !== "nativeError") {
    // (nativeError's calls all fail: none is kept.)
    assert.ok(native > 0, `no call of ${family} took the native path`);
  }
  assert.equal(
    failures.length,
    0,
    `${failures.length} route differences under XLA (first 12):\n${
      failures.slice(0, 12).join("\n")
    }`,
  );
}

/**
 * The calls made on each route, in order: the first of a signature (a
 * results reply), one of the kept plan (written in place), one whose frame's
 * words repeat (STABLE: the bridge takes what the last call found, and hands
 * it to the native path), and one the native path runs
 * (native/python_host.c, kept_run) where the results have a buffer format.
 */
const CALLS = ["first of its signature", "kept plan", "kept request", "native path"];

/** The families XLA can call (stateful ones hold ids of the embedded runtime's types). */
export const XLA_FAMILIES = [
  "tsSync",
  "tsAsync",
  "nativeEcho",
  "nativeAttrs",
  "nativeError",
  "nativeAsync",
  "nativeScale",
] as const satisfies readonly Family[];

if (import.meta.main) {
  await runCaseFromArgs(
    Object.fromEntries(XLA_FAMILIES.map((f) => [f, () => fuzzFamily(f)])),
  );
}
