/**
 * One jax program over several Deno processes (`Xla.open({ distributed })`):
 * the option's checks (before any Python runs), a coordinator nobody serves
 * and a coordinator port already taken (clear errors within the timeout),
 * and examples/real_xla_multiprocess.ts on loopback with 2 processes: the
 * good run, a worker that dies after joining, and processes that disagree on
 * the process count; each failure ends every process within a bound, with
 * the reason printed by the parent. Children are reaped; loopback only.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { ErrorCode, FfiError } from "../mod.ts";
import { type DistributedOptions, Xla } from "../src/xla/mod.ts";
import { childContext } from "./_child.ts";
import { XLA_SKIP, xlaName, xlaRecipe } from "./_xla_env.ts";

const ignore = XLA_SKIP !== undefined;
const EXAMPLE = new URL("../examples/real_xla_multiprocess.ts", import.meta.url);

function isFfi(code: ErrorCode, re: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, `expected an FfiError, got ${String(e)}`);
    assert.equal(e.codeName, ErrorCode[code], e.message);
    assert.match(e.message, re);
    return true;
  };
}

/** A loopback port nothing listens on (just released). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("distributed: bad options are INVALID_ARGUMENT before any Python runs", async () => {
  const base: DistributedOptions = { coordinator: "127.0.0.1:1234", numProcesses: 2, processId: 0 };
  const cases: [Partial<DistributedOptions> | null, RegExp][] = [
    [null, /^distributed: expected \{ coordinator, numProcesses, processId \}$/],
    [{ coordinator: "127.0.0.1" }, /coordinator must be 'host:port' .*got "127\.0\.0\.1"/],
    [{ coordinator: "127.0.0.1:0" }, /coordinator must be 'host:port' with a port 1-65535/],
    [{ coordinator: "127.0.0.1:70000" }, /port 1-65535, got "127\.0\.0\.1:70000"/],
    [{ numProcesses: 0 }, /numProcesses must be an integer >= 1, got 0/],
    [{ numProcesses: 1.5 }, /numProcesses must be an integer >= 1, got 1\.5/],
    [{ processId: 2 }, /processId must be an integer in \[0, 1\] \(numProcesses 2\), got 2/],
    [{ processId: -1 }, /processId must be an integer in \[0, 1\]/],
    [{ timeoutMs: 0 }, /timeoutMs must be a positive number of milliseconds, got 0/],
    [{ localDeviceIds: [0, -1] }, /localDeviceIds must be an array of device ordinals/],
    [{ bindAddress: "nowhere" }, /bindAddress must be 'host:port'/],
    [
      { cpuCollectives: "nccl" as "gloo" },
      /cpuCollectives must be "gloo", "mpi" or "none", got nccl/,
    ],
  ];
  for (const [patch, re] of cases) {
    const distributed = (patch === null ? null : { ...base, ...patch }) as DistributedOptions;
    // The interpreter does not exist: only the option's check can have failed.
    await assert.rejects(
      Xla.open({ distributed, python: "/nonexistent/python" }),
      isFfi(ErrorCode.INVALID_ARGUMENT, re),
    );
  }
});

Deno.test({
  name: xlaName("distributed: a coordinator nobody serves is UNAVAILABLE after the timeout"),
  ignore,
  async fn() {
    const port = freePort();
    const t0 = performance.now();
    await assert.rejects(
      Xla.open({
        distributed: {
          coordinator: `127.0.0.1:${port}`,
          numProcesses: 2,
          processId: 1,
          timeoutMs: 1000,
        },
      }),
      isFfi(
        ErrorCode.UNAVAILABLE,
        new RegExp(
          `^distributed: no coordinator answered at 127\\.0\\.0\\.1:${port} within 1 s \\(process ` +
            `1 of 2; last error: .*\\): start process 0 with the same coordinator address`,
        ),
      ),
    );
    const ms = performance.now() - t0;
    assert.ok(ms >= 900 && ms < 15_000, `${ms} ms`);
  },
});

Deno.test({
  name: xlaName("distributed: process 0 on a port already taken is UNAVAILABLE at once"),
  ignore,
  async fn() {
    using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (taken.addr as Deno.NetAddr).port;
    await assert.rejects(
      Xla.open({
        distributed: { coordinator: `127.0.0.1:${port}`, numProcesses: 2, processId: 0 },
      }),
      isFfi(
        ErrorCode.UNAVAILABLE,
        new RegExp(
          `^distributed: process 0 serves the coordinator but cannot bind 127\\.0\\.0\\.1:${port} .*choose a free port$`,
        ),
      ),
    );
  },
});

Deno.test({
  name: xlaName("distributed: without --allow-net, PERMISSION_DENIED naming the flag"),
  ignore,
  async fn() {
    const dir = Deno.makeTempDirSync();
    try {
      const script = `${dir}/no_net.ts`;
      const mod = new URL("../src/xla/mod.ts", import.meta.url).href;
      Deno.writeTextFileSync(
        script,
        `import { Xla } from ${JSON.stringify(mod)};
for (const processId of [0, 1]) {
  await Xla.open({ distributed: { coordinator: "127.0.0.1:12399", numProcesses: 2, processId } })
    .then(() => console.log("joined"), (e) => console.log(e.codeName + " " + e.message));
}
`,
      );
      const r = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--allow-ffi",
          "--allow-read",
          "--allow-write",
          "--allow-run",
          "--allow-env",
          script,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
      const out = new TextDecoder().decode(r.stdout);
      const context = childContext("no --allow-net", {
        code: r.code,
        stdout: out,
        stderr: new TextDecoder().decode(r.stderr),
      });
      assert.equal(r.code, 0, context);
      const lines = out.trim().split("\n");
      assert.match(
        lines[0]!,
        /^PERMISSION_DENIED distributed: binding 127\.0\.0\.1:12399 needs --allow-net \(/,
        context,
      );
      assert.match(
        lines[1]!,
        /^PERMISSION_DENIED distributed: connecting to 127\.0\.0\.1:12399 needs --allow-net \(/,
        context,
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

/** Opens a host as one process of a job at `port`; resolves to the error it fails with. */
function joinFails(port: number, numProcesses: number, processId: number, timeoutMs = 20_000) {
  return Xla.open({
    distributed: { coordinator: `127.0.0.1:${port}`, numProcesses, processId, timeoutMs },
  }).then(
    async (xla) => {
      await xla.close();
      assert.fail(`process ${processId} of ${numProcesses} joined`);
    },
    (e: unknown) => e,
  );
}

Deno.test({
  name: xlaName(
    "distributed: the handshake: two processes with one id, a missing process, a stranger",
  ),
  ignore,
  async fn() {
    // Two processes say they are process 1 of 3: every process is told, before any jax runs.
    const port = freePort();
    const errors = await Promise.all([
      joinFails(port, 3, 0),
      joinFails(port, 3, 1),
      new Promise((r) => setTimeout(r, 300)).then(() => joinFails(port, 3, 1)),
    ]);
    for (const e of errors) {
      isFfi(ErrorCode.INVALID_ARGUMENT, /^distributed: two processes say they are process 1 of 3$/)(
        e,
      );
    }
    // Process 0 alone: DEADLINE_EXCEEDED naming the missing process, after the timeout.
    const t0 = performance.now();
    isFfi(
      ErrorCode.DEADLINE_EXCEEDED,
      /^distributed: only 1 of 2 processes joined within 1 s \(missing process 1\): start every process with the same coordinator and numProcesses/,
    )(await joinFails(freePort(), 2, 0, 1000));
    assert.ok(performance.now() - t0 < 10_000);
    // Something that is not process 0 of a job at the coordinator's address.
    using stranger = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepted = (async () => {
      for await (const conn of stranger) {
        conn.close();
        break;
      }
    })();
    isFfi(
      ErrorCode.UNAVAILABLE,
      /^distributed: the coordinator at 127\.0\.0\.1:\d+ did not answer the job handshake \(process 1 of 2\)/,
    )(await joinFails((stranger.addr as Deno.NetAddr).port, 2, 1, 2000));
    await accepted;
  },
});

/** Runs the example's parent with these arguments; returns its outcome and wall time. */
async function runJob(args: string[], boundMs: number) {
  const t0 = performance.now();
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-ffi",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      "--allow-net=127.0.0.1",
      fileURLToPath(EXAMPLE),
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(boundMs),
  }).output();
  const out = {
    code: r.code,
    stdout: new TextDecoder().decode(r.stdout),
    stderr: new TextDecoder().decode(r.stderr),
  };
  return {
    ...out,
    seconds: (performance.now() - t0) / 1000,
    context: childContext(args.join(" "), out),
  };
}

Deno.test({
  ...xlaRecipe(
    "examples/real_xla_multiprocess.ts: 2 processes, one shard_map program, TS handlers, psum",
  ),
  async fn() {
    const r = await runJob(["--timeout-ms", "60000"], 170_000);
    assert.equal(r.code, 0, r.context);
    assert.match(
      r.stdout,
      /^process 0 of 2: the TS handler ran 1x on its shard \[0 \.\. 7\]; psum = 446 \(jnp: 446\); a second host shares the job \(process \d\); another job: FAILED_PRECONDITION$/m,
      r.context,
    );
    assert.match(
      r.stdout,
      /^process 1 of 2: the TS handler ran 1x on its shard \[8 \.\. 15\]; psum = 446 \(jnp: 446\); a second host shares the job \(process \d\); another job: FAILED_PRECONDITION$/m,
      r.context,
    );
    assert.match(
      r.stdout,
      /^2 processes, 2 devices in all: one jitted shard_map program, a TS handler per process, psum across them = 446 in every process; matches jnp \(\d+\.\d s\)\n$/m,
      r.context,
    );
  },
});

Deno.test({
  name: xlaName(
    "distributed: a worker that dies, and disagreeing process counts, end every process in time",
  ),
  ignore,
  async fn() {
    // Both jobs at once; each process's bound: 3 x 5 s + 60 s.
    const [die, mismatch] = await Promise.all([
      runJob(["--timeout-ms", "5000", "--fault", "die"], 120_000),
      runJob(["--timeout-ms", "5000", "--fault", "mismatch"], 120_000),
    ]);
    for (const r of [die, mismatch]) {
      assert.equal(r.code, 1, r.context);
      assert.match(
        r.stdout,
        /^the job failed \(coordinator 127\.0\.0\.1:\d+, 2 worker\(s\) started\):$/m,
        r.context,
      );
      assert.doesNotMatch(r.stdout, /killed/, r.context); // every worker ended by itself
      assert.ok(r.seconds < 100, `${r.seconds} s`);
    }
    assert.match(
      die.stdout,
      /^ {2}worker 1: exit code 3 after \d+\.\d s: leaving the job on purpose \(--fault die\)$/m,
      die.context,
    );
    assert.match(
      die.stdout,
      /^ {2}worker 0: exit code \d+ \(SIGABRT\) after \d+\.\d s: jax's coordination service ended the process: [A-Z_]+: /m,
      die.context,
    );
    // Caught by the handshake before jax starts: an error in both processes, no crash.
    for (const id of [0, 1]) {
      assert.match(
        mismatch.stdout,
        new RegExp(
          `^ {2}worker ${id}: exit code 1 after \\d+\\.\\d s: distributed: the processes disagree ` +
            "about the job: process 2 says numProcesses 3, process 0 says 2$",
          "m",
        ),
        mismatch.context,
      );
    }
  },
});
