/**
 * How long should a call from XLA's thread wait for a TS handler's Promise
 * (`HandlerOptions.settleWaitUs`)? Inside real XLA (jitted `y = alpha * x`,
 * 8 f32, as bench/real_xla.ts), the per-call mean (what a loop pays),
 * median and p99 for several bounds of
 *   - an `await null` handler (settles within microseconds once it runs),
 *   - a handler that awaits a timer (`setTimeout(0)`: never settles in time),
 * beside the synchronous TS handler; contenders interleaved in rounds. The
 * first shows what the wait gains, the second what it costs when a Promise
 * is slow (each call pays the whole bound before its pending future).
 *
 * Run: deno run -A bench/settle_wait.ts [--rounds N] (BOUNDS=0,20,50 for other bounds)
 *
 * @module
 */
import { DataType, Ffi, handlerHostStats } from "../mod.ts";
import { loadAverage, openXlaOrSkip, PY_TIMING } from "./_real_xla_fixture.ts";

const ROUNDS = Number(Deno.args[Deno.args.indexOf("--rounds") + 1] ?? 0) || 5;
const BOUNDS = (Deno.env.get("BOUNDS") ?? "0,5,10,20,50,100").split(",").map(Number);
const CALLS = 1000;
const SLOW_CALLS = 100;

async function main(): Promise<void> {
  await using xla = await openXlaOrSkip();
  if (xla === undefined) return;
  const scale = (x: Float32Array, y: Float32Array, alpha: number) => {
    for (let i = 0; i < y.length; i++) y[i] = alpha * x[i]!;
  };
  const bind = () => Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32");
  const handlers: { close(): void }[] = [];
  const programs: Record<string, number> = {};
  const keep: { close(): Promise<void> }[] = [];
  const add = async (key: string, h: ReturnType<ReturnType<typeof bind>["to"]>) => {
    handlers.push(h);
    await xla.register(`settle.${key}`, h);
    const p = await xla.jit(
      `def f(x):\n    return ffi.ffi_call("settle.${key}", ` +
        `jax.ShapeDtypeStruct(x.shape, x.dtype))(x, alpha=np.float32(2))\n`,
      { args: [{ dtype: DataType.F32, shape: [8] }] },
    );
    keep.push(p);
    programs[key] = p.id;
  };
  await add("sync", bind().to((x, y, a) => scale(x.typed(), y.typed(), a)));
  for (const b of BOUNDS) {
    await add(
      `null_${b}`,
      bind().to(async (x, y, a) => {
        await null;
        scale(x.typed(), y.typed(), a);
      }, { settleWaitUs: b }),
    );
    await add(
      `timer_${b}`,
      bind().to(async (x, y, a) => {
        await new Promise((r) => setTimeout(r, 0));
        scale(x.typed(), y.typed(), a);
      }, { settleWaitUs: b }),
    );
  }
  const before = handlerHostStats();
  const result = await xla.runPython(`${PY_TIMING}
programs = ${JSON.stringify(programs)}
times = {k: [] for k in programs}
x = ready_input(8)
for k, pid in programs.items():
    time_calls(program(pid), x, 20, [])
for r in range(${ROUNDS}):
    for k, pid in programs.items():
        n = ${SLOW_CALLS} if k.startswith("timer") else ${CALLS}
        time_calls(program(pid), x, n, times[k])
result = {k: [summary(ts)[s] for s in ("mean", "median", "p99")] for k, ts in times.items()}
`) as Record<string, [mean: number, median: number, p99: number]>;
  const after = handlerHostStats();
  /** Mean · median · p99 of contender k, in µs. */
  const us = (k: string) => result[k]!.map((v) => (v * 1e6).toFixed(2)).join(" · ");
  const load = await loadAverage(xla);
  console.log(
    `${new Date().toISOString().slice(0, 16)} UTC; load ${load}; ${ROUNDS} rounds; ` +
      `settled early: ${after.settledEarly - before.settledEarly} calls`,
  );
  console.log(`per call, µs: mean · median · p99; the difference to sync on the mean`);
  console.log(`sync TS handler: ${us("sync")} µs`);
  console.log("| settleWaitUs | `await null` | − sync (mean) | timer (`setTimeout(0)`) |");
  console.log("|---:|---:|---:|---:|");
  for (const b of BOUNDS) {
    const d = (result[`null_${b}`]![0] - result.sync![0]) * 1e6;
    console.log(
      `| ${b} | ${us(`null_${b}`)} µs | ${d >= 0 ? "+" : "−"}${Math.abs(d).toFixed(2)} µs | ${
        us(`timer_${b}`)
      } µs |`,
    );
  }
  for (const p of keep) await p.close();
  for (const h of handlers) h.close();
}

if (import.meta.main) await main();
