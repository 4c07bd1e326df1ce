/**
 * What one call from TypeScript into a compiled XLA program costs, against
 * the same jitted function called from a Python loop in the same process
 * with the same arguments (docs/performance.md, "Per call from TypeScript"):
 *
 *   runSync    `prog.runSync(x)`, `x + 1` on f32[8]; Python: `f(x)`
 *   run        `await prog.run(x)`, the same
 *   ffiCall    `await xla.ffiCall(...)` of one signature (a C++ handler that
 *              copies its f32[8] argument); Python: a jitted
 *              `jax.ffi.ffi_call` of it, `f(x)`
 *   runSync 4M `prog.runSync(x)` on f32[1M] (4 MiB); Python: `np.asarray(f(x))`
 *
 * and, besides the targets, `prog.runSyncInto([y], x)` at 4 MiB (results
 * written into a kept array) and Python's own loop writing each result into
 * one kept array (`y[...] = f(x)`), both against `np.asarray(f(x))`: what
 * one copy of the result costs either side.
 *
 * Python's `x` is a NumPy array (what TS hands over). Rounds alternate the
 * contenders (the 4 MiB row's rounds come after the others': V8 collects a
 * round's 60 result `ArrayBuffer`s of 4 MiB during later calls, which the
 * small rows would otherwise count); each row gives the median over rounds of the per-call mean,
 * the ratio to Python and the target; every contender, TS or Python, is
 * warmed by 200 calls first. `--phases` also times where a prepared f32[8]
 * `runSync` goes: TS before the crossing (arguments checked, plan found),
 * the bridge's dispatcher called from Python with the same binary request
 * (against `f(x)` alone), and what is left for the crossing into Python and
 * TS after it; and the parts of a JSON request (what every call sent before
 * calls were prepared, and what the first call of a plan and `runPython`
 * still send): the TS side (argument checks, encoding), the bridge's
 * dispatcher called from Python with such a request, and a
 * `runPythonSync("pass")` round trip.
 *
 * `--cpu` times with CPU time instead of the wall clock, on both sides
 * (the process's: `process.cpuUsage()` in TS, `time.process_time()` in
 * Python): on a machine busy with other work it counts what a call costs,
 * not the time it waited for a core. It counts every thread of the process,
 * so the hand-offs of `run` and `ffiCall` count as the work they are.
 *
 * Run: XLA_FFI_DENO_PYTHON=… deno run -A bench/xla_dispatch.ts [--rounds N] [--phases] [--cpu]
 *
 * @module
 */
import process from "node:process";
import { DataType, scalar } from "../mod.ts";
import { _encodeRequest } from "../src/xla/_codec.ts";
import { _normaliseArgs, _Plan, _Plans } from "../src/xla/_prepared.ts";
import type { XlaProgram } from "../src/xla/mod.ts";
import { _normaliseArg } from "../src/runtime/ffi_call.ts";
import { loadAverage, openFloors, openXlaOrSkip } from "./_real_xla_fixture.ts";

const argv = Deno.args;
const ROUNDS = Number(argv[argv.indexOf("--rounds") + 1] ?? 0) || 7;
const PHASES = argv.includes("--phases");
const CPU = argv.includes("--cpu");

/** Now in µs: the wall clock, or with `--cpu` the process's CPU time. */
function now(): number {
  if (!CPU) return performance.now() * 1000;
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Per-call mean in µs of `n` calls of `f` (after `warm` calls). */
function timeSync(f: () => unknown, n: number, warm = 200): number {
  for (let i = 0; i < warm; i++) f();
  const t = now();
  for (let i = 0; i < n; i++) f();
  return (now() - t) / n;
}

async function timeAsync(f: () => Promise<unknown>, n: number, warm = 200): Promise<number> {
  for (let i = 0; i < warm; i++) await f();
  const t = now();
  for (let i = 0; i < n; i++) await f();
  return (now() - t) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

async function main(): Promise<void> {
  await using xla = await openXlaOrSkip();
  if (xla === undefined) return;
  using floors = openFloors();
  await xla.register("dispatch.cc", floors.handler("bench_cc_sync"));
  const spec = (n: number) => ({ args: [{ dtype: DataType.F32, shape: [n] }] });
  await using small = await xla.jit("def f(x):\n    return x + 1\n", spec(8));
  await using big = await xla.jit("def f(x):\n    return x + 1\n", spec(1 << 20));
  const x8 = new Float32Array(8).map((_, i) => i);
  const x1m = new Float32Array(1 << 20).map((_, i) => i % 1000);
  const ffiOptions = {
    args: [x8],
    results: [{ dtype: DataType.F32, shape: [8] }],
    attrs: { alpha: scalar(DataType.F32, 2) },
  } as const;
  // The Python side: the same programs, and the same jitted ffi_call jax makes for ffiCall.
  await xla.runPython(`
import time
_x8 = np.arange(8, dtype=np.float32)
_x1m = (np.arange(1 << 20) % 1000).astype(np.float32)
_y1m = np.empty(1 << 20, np.float32)
_ffi = jax.jit(lambda x: ffi.ffi_call("dispatch.cc", jax.ShapeDtypeStruct((8,), np.float32))(
    x, alpha=np.float32(2)))
_clock = time.${CPU ? "process_time" : "perf_counter"}
def _loop(f, n):
    for _ in range(200): f()
    t = _clock()
    for _ in range(n): f()
    return (_clock() - t) * 1e6 / n
`);
  const py = (expr: string, n: number) =>
    xla.runPythonSync(`result = _loop(lambda: ${expr}, ${n})`) as number;
  const rows = {
    runSync: { ts: [] as number[], py: [] as number[], target: 1.5, py_: "f(x)" },
    run: { ts: [] as number[], py: [] as number[], target: 2, py_: "f(x)" },
    ffiCall: { ts: [] as number[], py: [] as number[], target: 2, py_: "jitted ffi_call f(x)" },
    "runSync 4 MiB": {
      ts: [] as number[],
      py: [] as number[],
      target: 1.2,
      py_: "np.asarray(f(x))",
    },
    // Not one of the targets: results written into the caller's arrays (as NumPy's out=).
    "runSyncInto 4 MiB": {
      ts: [] as number[],
      py: [] as number[],
      target: 0,
      py_: "np.asarray(f(x))",
    },
    "Python y[...] = f(x), 4 MiB": {
      ts: [] as number[],
      py: [] as number[],
      target: 0,
      py_: "np.asarray(f(x))",
    },
  };
  const N = 3000, NB = 60;
  for (let r = 0; r < ROUNDS; r++) {
    rows.runSync.py.push(py(`program(${small.id})(_x8)`, N));
    rows.runSync.ts.push(timeSync(() => small.runSync(x8), N));
    rows.run.py.push(py(`program(${small.id})(_x8)`, N));
    rows.run.ts.push(await timeAsync(() => small.run(x8), N));
    rows.ffiCall.py.push(py(`_ffi(_x8)`, N));
    rows.ffiCall.ts.push(await timeAsync(() => xla.ffiCall("dispatch.cc", ffiOptions), N));
  }
  // The 4 MiB rounds after the small ones: the collection of their results' 240 MiB of
  // ArrayBuffers per round falls on later calls, and would be counted in the small rows.
  const y1m = new Float32Array(1 << 20);
  for (let r = 0; r < ROUNDS; r++) {
    const p = py(`np.asarray(program(${big.id})(_x1m))`, NB);
    rows["runSync 4 MiB"].py.push(p);
    rows["runSync 4 MiB"].ts.push(timeSync(() => big.runSync(x1m), NB));
    rows["runSyncInto 4 MiB"].py.push(p);
    rows["runSyncInto 4 MiB"].ts.push(timeSync(() => big.runSyncInto([y1m], x1m), NB));
    // What one copy costs Python: its loop writing each result into one kept array.
    rows["Python y[...] = f(x), 4 MiB"].py.push(p);
    rows["Python y[...] = f(x), 4 MiB"].ts.push(
      py(`_y1m.__setitem__(..., program(${big.id})(_x1m))`, NB),
    );
  }
  console.log(
    `xla_dispatch: jax ${xla.version.jax}, ${ROUNDS} rounds, ${
      CPU ? "CPU time" : "wall clock"
    }, load average ${await loadAverage(
      xla,
    )} (after)`,
  );
  console.log(
    "| per call | from TS | Python loop, same process | Python side | ratio | target | met |",
  );
  console.log("|---|--:|--:|---|--:|--:|---|");
  for (const [name, row] of Object.entries(rows)) {
    const ts = median(row.ts), p = median(row.py);
    const ratio = ts / p;
    const target = row.target > 0 ? `≤ ${row.target}×` : "—";
    const met = row.target > 0 ? (ratio <= row.target ? "yes" : "no") : "—";
    console.log(
      `| ${name} | ${fmt(ts)} | ${fmt(p)} | \`${row.py_}\` | ${
        ratio.toFixed(2)
      }× | ${target} | ${met} |`,
    );
  }
  if (PHASES) {
    preparedPhases(xla, small, x8);
    phases(xla, small.id, x8);
  }
}

/** Where a prepared f32[8] runSync's time goes. */
function preparedPhases(
  xla: NonNullable<Awaited<ReturnType<typeof openXlaOrSkip>>>,
  prog: XlaProgram,
  x8: Float32Array,
): void {
  const plans = new _Plans();
  const a0 = _normaliseArgs([x8]);
  plans.add(new _Plan(0, 0, a0), a0);
  const tsBefore = timeSync(() => plans.find(_normaliseArgs([x8])), 200000);
  // The same binary request the TS side sends, made in Python for a plan of the program.
  const [fast, f] = xla.runPythonSync(`
import __main__, ctypes, json, struct
_hid = [c.cell_contents for c in program.__closure__ if isinstance(c.cell_contents, int)][0]
_d = __main__._deno_xla_dispatch
_rp = ctypes.create_string_buffer(65536)
def _json(h):
    body = json.dumps(dict(h, host=_hid, args=[])).encode()
    buf = ctypes.create_string_buffer((8 + len(body) + 63) & ~63)
    buf[0:4] = len(body).to_bytes(4, "little")
    buf[8:8 + len(body)] = body
    _d(ctypes.addressof(buf), len(buf), ctypes.addressof(_rp), 65536)
    return json.loads(_rp[16:16 + int.from_bytes(_rp[4:8], "little")])
_plan = _json({"op": "plan", "program": ${prog.id}, "ffi": None,
               "specs": [{"dtype": 11, "shape": [8]}]})["plan"]
_ya = np.zeros(8, np.float32)
def _fast(nouts):
    w = [0xFFFFFFFF | (1 << 32), _hid, _plan, nouts, _x8.ctypes.data, 32]
    w += [_ya.ctypes.data, 32] if nouts else []
    return ctypes.create_string_buffer(struct.pack("<%dQ" % len(w), *w), 8 * len(w))
for _n in (0, 1):  # the first call teaches the plan its results' types
    _rq = _fast(_n)
    _d(ctypes.addressof(_rq), len(_rq), ctypes.addressof(_rp), 65536)
assert int.from_bytes(_rp[0:4], "little") == 4 and (_ya == _x8 + 1).all()
# Later calls of a frame whose call succeeded say their words repeat (STABLE), as TS's do.
_rq[24:32] = (1 | (4 << 32)).to_bytes(8, "little")
_a, _l = ctypes.addressof(_rq), len(_rq)
result = [_loop(lambda: _d(_a, _l, ctypes.addressof(_rp), 65536), 5000),
          _loop(lambda: program(${prog.id})(_x8), 5000)]
`) as [number, number];
  const total = timeSync(() => prog.runSync(x8), 5000);
  // Every result is a typed array of its own: V8 allocates each ArrayBuffer outside its heap in
  // Deno (no small typed arrays on the heap, whose memory could move under a native call).
  let kept: Uint8Array | undefined;
  const buffer = timeSync(() => (kept = new Uint8Array(32)), 200000);
  console.log(
    `prepared phases (f32[8] runSync ${total.toFixed(1)} µs): TS before the crossing ` +
      `${tsBefore.toFixed(2)} µs; the bridge's fast call from Python ${fast.toFixed(1)} µs, of ` +
      `which f(x) ${f.toFixed(1)} µs; the crossing into Python and TS after it ${
        (total - fast - tsBefore).toFixed(1)
      } µs, of which the result's new ArrayBuffer ${buffer.toFixed(2)} µs${
        kept!.length === 32 ? "" : "?"
      }`,
  );
}

/** Where the f32[8] runSync's time went before calls were prepared (a JSON request with its arguments). */
function phases(
  xla: NonNullable<Awaited<ReturnType<typeof openXlaOrSkip>>>,
  id: number,
  x8: Float32Array,
): void {
  const encode = () => {
    const a = _normaliseArg(x8, "argument 0");
    return _encodeRequest({ op: "run", host: 0, id }, [a]);
  };
  const tsEncode = timeSync(encode, 20000);
  const dispatchUs = xla.runPythonSync(`
import __main__, ctypes, json, time
_hid = [c.cell_contents for c in program.__closure__ if isinstance(c.cell_contents, int)][0]
def _request(header, arrays):
    body = json.dumps(dict(header, host=_hid, args=[
        {"dtype": 11, "shape": list(a.shape), "offset": 64 * i} for i, a in enumerate(arrays)
    ])).encode()
    base = (8 + len(body) + 63) & ~63
    buf = ctypes.create_string_buffer(base + 64 * len(arrays))
    buf[0:4] = len(body).to_bytes(4, "little")
    buf[8:8 + len(body)] = body
    for i, a in enumerate(arrays):
        ctypes.memmove(ctypes.addressof(buf) + base + 64 * i, a.ctypes.data, a.nbytes)
    return buf
_rq = _request({"op": "run", "id": ${id}}, [np.arange(8, dtype=np.float32)])
_rp = ctypes.create_string_buffer(65536 + 64)
_d = __main__._deno_xla_dispatch
result = _loop(lambda: _d(ctypes.addressof(_rq), len(_rq), ctypes.addressof(_rp), 65536 + 64),
               3000)
`) as number;
  const fOnly = xla.runPythonSync(`result = _loop(lambda: program(${id})(_x8), 3000)`) as number;
  const noop = timeSync(() => xla.runPythonSync("pass"), 5000);
  console.log(
    `phases (f32[8] runSync): TS argument check + request encoding ${tsEncode.toFixed(2)} µs; ` +
      `the bridge's dispatcher from Python ${dispatchUs.toFixed(1)} µs, of which f(x) ${
        fOnly.toFixed(1)
      } µs; a runPythonSync("pass") round trip ${noop.toFixed(1)} µs`,
  );
}

if (import.meta.main) await main();
