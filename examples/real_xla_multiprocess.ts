/**
 * One jax program over several Deno processes: started once, this script
 * starts its workers (itself, with `--worker <id>`) on loopback, with a free
 * port for jax's coordination service. Each worker hosts jax with
 * `Xla.open({ distributed })` (process 0 also serves the coordinator),
 * registers a TS handler `y = 0.5 * x + 1`, and runs one jitted `shard_map`
 * program over the global device mesh (one CPU device per process): XLA
 * calls the TS handler in every process on that process's shard, `psum`
 * adds `sum(y * y)` over all shards (gloo over loopback), and each worker
 * compares the global results with jnp. The parent checks what every worker
 * reports and prints one line.
 *
 * Failure ends every process within the timeout, and the parent says how:
 *   --fault die       worker 1 leaves right after joining (a worker dies)
 *   --fault mismatch  worker 1 says the job has one process more
 *   --fault no-coordinator  only worker 1 is started (nobody serves the coordinator)
 * A worker that fails prints `worker <id>: error: <message>`; where jax's
 * coordination service ends a process (a peer died, a process count
 * disagrees) its fatal log line is the message. Exit code 1 then.
 *
 * Options: --processes N (default 2), --timeout-ms T (default 30000: joining,
 * detecting a dead peer, leaving), --fault KIND.
 * Needs a Python with jax (README, "Real XLA").
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env --allow-net=127.0.0.1 examples/real_xla_multiprocess.ts
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { DataType, Ffi, type FfiError } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";

const PERMISSIONS = [
  "--allow-ffi",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-net=127.0.0.1",
];
const SHARD = 8; // elements per process

function option(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** What a worker reports to the parent (one JSON line on stdout). */
interface Report {
  process: number;
  processes: number;
  devices: number;
  calls: number;
  shard: number[];
  total: number;
  want: number;
  maxDiff: number;
  jobs: string;
}

async function worker(id: number, processes: number, coordinator: string, timeoutMs: number) {
  const fault = option("--fault");
  const mismatch = fault === "mismatch" && id === 1;
  await using xla = await Xla.open({
    distributed: {
      coordinator,
      numProcesses: mismatch ? processes + 1 : processes,
      processId: mismatch ? processes : id,
      timeoutMs,
    },
  });
  if (fault === "die" && id === 1) {
    console.error(`worker ${id}: leaving the job on purpose (--fault die)`);
    Deno.exit(3);
  }
  // The job is process-wide: a later open shares it, one asking for another job is refused.
  await using again = await Xla.open();
  let otherJob = "accepted";
  await Xla.open({ distributed: { coordinator, numProcesses: processes + 1, processId: id } })
    .then((h) => h.close(), (e: FfiError) => otherJob = e.codeName);
  const jobs = `a second host shares the job (process ${again.distributed?.processIndex}); ` +
    `another job: ${otherJob}`;
  let calls = 0;
  let shard: number[] = [];
  using affine = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
    .to((x, y, alpha) => {
      const xs = x.typed(), ys = y.typed();
      calls++;
      shard = [...xs];
      for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]! + 1;
    });
  await xla.register("example.mp_affine", affine);
  await xla.runPython(`
from jax.sharding import PartitionSpec as P
from jax.experimental import multihost_utils
mesh = jax.make_mesh((jax.device_count(),), ("p",))
`);
  await using step = await xla.jit(`
def step(x):
    def per_shard(xs):
        out = jax.ShapeDtypeStruct(xs.shape, xs.dtype)
        y = ffi.ffi_call("example.mp_affine", out)(xs, alpha=np.float32(0.5))
        return y, lax.psum(jnp.sum(y * y), "p")
    return jax.shard_map(per_shard, mesh=mesh, in_specs=P("p"), out_specs=(P("p"), P()))(x)
`);
  // Each process holds its shard of x = [0, 1, ..., SHARD * processes - 1].
  const r = await xla.runPython(`
x_local = np.arange(${SHARD}, dtype=np.float32) + ${SHARD} * jax.process_index()
x = multihost_utils.host_local_array_to_global_array(x_local, mesh, P("p"))
y, total = program(${step.id})(x)
y_all = np.asarray(multihost_utils.process_allgather(y, tiled=True))
x_all = np.arange(${SHARD} * jax.process_count(), dtype=np.float32)
want_y = np.asarray(0.5 * jnp.asarray(x_all) + 1)
want = float(jnp.sum(jnp.asarray(want_y) ** 2))
result = {"total": float(total), "want": want,
          "maxDiff": float(np.max(np.abs(y_all - want_y))) if y_all.shape == want_y.shape else 1e30}
`) as { total: number; want: number; maxDiff: number };
  const report: Report = {
    process: xla.distributed!.processIndex,
    processes: xla.distributed!.processCount,
    devices: xla.distributed!.globalDeviceCount,
    calls,
    shard,
    jobs,
    ...r,
  };
  console.log(JSON.stringify(report));
  if (report.maxDiff !== 0 || Math.abs(report.total - report.want) > 1e-3 * report.want) {
    console.error(`worker ${id}: error: the global result differs from jnp`);
    Deno.exit(1);
  }
} // leaving the scope closes the host: the processes leave the job together

/** The message of a failed worker's stderr: its own error line, else jax's fatal line. */
function reason(stderr: string): string {
  const lines = stderr.split("\n");
  const own = lines.find((l) => / error: /.test(l) && l.startsWith("worker "));
  if (own) return own.replace(/^worker \d+: error: /, "");
  const fatal = lines.find((l) => /^F\d{4} /.test(l));
  if (fatal) {
    const at = lines.indexOf(fatal);
    const text = lines.slice(at, at + 3).join(" ").replace(/\s+/g, " ");
    const status = /absl::Status: (.*?)(?: RPC: .*)?$/.exec(text)?.[1] ?? text;
    return `jax's coordination service ended the process: ${status.trim()}`;
  }
  const purposeful = lines.find((l) => /on purpose/.test(l));
  if (purposeful) return purposeful.replace(/^worker \d+: /, "");
  return lines.filter((l) => l.trim()).slice(-3).join(" | ") || "no message";
}

interface Ended {
  id: number;
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

async function parent(processes: number, timeoutMs: number): Promise<number> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const coordinator = `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  const fault = option("--fault");
  const ids = fault === "no-coordinator" ? [1] : Array.from({ length: processes }, (_, i) => i);
  const started = performance.now();
  const script = fileURLToPath(new URL(import.meta.url));
  const children = ids.map((id) => {
    const args = ["run", ...PERMISSIONS, script, "--worker", String(id)];
    args.push("--processes", String(processes), "--coordinator", coordinator);
    args.push("--timeout-ms", String(timeoutMs));
    if (fault) args.push("--fault", fault);
    const child = new Deno.Command(Deno.execPath(), {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const done = child.output().then((o): Ended => ({
      id,
      code: o.code,
      signal: o.signal,
      stdout: new TextDecoder().decode(o.stdout),
      stderr: new TextDecoder().decode(o.stderr),
      seconds: (performance.now() - started) / 1000,
    }));
    return { id, child, done };
  });
  // Every worker must end by itself within this bound (jax's import, joining, detecting a dead
  // peer and leaving each take at most the timeout); then the parent ends what is left.
  const boundMs = 3 * timeoutMs + 60_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((r) => timer = setTimeout(() => r("expired"), boundMs));
  const ended: Ended[] = [];
  const pending = new Set(children);
  while (pending.size > 0) {
    const next = await Promise.race([
      ...[...pending].map((c) => c.done.then((e) => ({ c, e }))),
      expired,
    ]);
    if (next === "expired") break;
    pending.delete(next.c);
    ended.push(next.e);
  }
  clearTimeout(timer);
  for (const c of pending) {
    try {
      c.child.kill("SIGKILL");
    } catch { /* already gone */ }
    const e = await c.done;
    ended.push({ ...e, stderr: `not ended within ${boundMs / 1000} s: killed\n${e.stderr}` });
  }
  ended.sort((a, b) => a.id - b.id);
  const failed = ended.filter((e) => e.code !== 0);
  if (failed.length > 0 || ended.length < ids.length) {
    console.log(`the job failed (coordinator ${coordinator}, ${ids.length} worker(s) started):`);
    for (const e of ended) {
      const how = e.code === 0
        ? "ended well"
        : `exit code ${e.code}${e.signal ? ` (${e.signal})` : ""}`;
      const why = e.code === 0 ? "" : `: ${reason(e.stderr)}`;
      console.log(`  worker ${e.id}: ${how} after ${e.seconds.toFixed(1)} s${why}`);
    }
    return 1;
  }
  const reports = ended.map((e) => JSON.parse(e.stdout.trim().split("\n").pop()!) as Report);
  for (const r of reports) {
    console.log(
      `process ${r.process} of ${r.processes}: the TS handler ran ${r.calls}x on its shard ` +
        `[${r.shard[0]} .. ${r.shard.at(-1)}]; psum = ${r.total} (jnp: ${r.want}); ${r.jobs}`,
    );
  }
  const same = reports.every((r) => r.total === reports[0]!.total && r.maxDiff === 0);
  console.log(
    `${reports.length} processes, ${reports[0]!.devices} devices in all: one jitted shard_map ` +
      `program, a TS handler per process, psum across them = ${reports[0]!.total} in every ` +
      `process; ${same ? "matches jnp" : "DIFFERS FROM jnp"} (${
        ((performance.now() - started) / 1000).toFixed(1)
      } s)`,
  );
  return same ? 0 : 1;
}

if (import.meta.main) {
  const processes = Number(option("--processes") ?? 2);
  const timeoutMs = Number(option("--timeout-ms") ?? 30_000);
  const id = option("--worker");
  if (id !== undefined) {
    try {
      await worker(Number(id), processes, option("--coordinator")!, timeoutMs);
    } catch (e) {
      console.error(`worker ${id}: error: ${(e as Error).message}`);
      Deno.exit(1);
    }
  } else {
    Deno.exit(await parent(processes, timeoutMs));
  }
}
