/**
 * TS handlers called through the embedded runtime (`Runtime.register`,
 * `callSync`, `call`, `callOnThreads`, `instantiate`) with frames made by
 * `CallFrameBuilder`: the handler-side behaviours of XLA's FFI test suites.
 */
import assert from "node:assert/strict";
import {
  array,
  CallFrameBuilder,
  DataType,
  ErrorCode,
  ExecutionStage,
  Ffi,
  type FfiBuffer,
  FfiError,
  HandlerBundle,
  handlerHostStats,
  HandlerTraits,
  Runtime,
  runtimeDebugStats,
  scalar,
} from "../mod.ts";
import { runDeno } from "./_child.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { isFfi, THROWN_CASES } from "./_assert.ts";

const D = DataType;

let uniq = 0;
function name(base: string): string {
  return `ts.${base}.${Deno.pid}.${uniq++}`;
}

Deno.test("buffers: typed, ranked, any and token args/rets through callSync and call", async () => {
  using rt = new Runtime({ threads: 1 });
  const got: FfiBuffer[] = [];
  using h = Ffi.bind()
    .arg(D.F32, 2).arg().token().ret(D.F32, 2).tokenRet()
    .to((x, any, tok, y, tokRet) => {
      got.push(any, tok, tokRet);
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
    });
  const x = new Float32Array([1, 2, 3, 4, 5, 6]);
  const y = new Float32Array(6);
  using f = new CallFrameBuilder()
    .arg(x, [2, 3]).arg(new Int16Array([7, 8]), [2]).tokenArg()
    .ret(y, [2, 3]).tokenRet().build();
  rt.callSync(h, f);
  assert.deepEqual([...y], [2, 4, 6, 8, 10, 12]);
  assert.equal(got[0]!.dtype, D.S16);
  assert.deepEqual([...got[0]!.typed() as Int16Array], [7, 8]);
  assert.equal(got[1]!.dtype, D.TOKEN);
  assert.equal(got[1]!.rank, 0);
  assert.equal(got[2]!.byteSize, 0);
  y.fill(0);
  await rt.call(h, f);
  assert.deepEqual([...y], [2, 4, 6, 8, 10, 12]);
  y.fill(0);
  const r = await rt.callOnThreads(h, f, { threads: 2 }); // served by the JS thread's queue
  assert.equal(r.ok, 2);
  assert.deepEqual([...y], [2, 4, 6, 8, 10, 12]);
});

Deno.test("remaining and optional args/rets", async () => {
  using rt = new Runtime({ threads: 1 });
  let seen: unknown[] = [];
  using h = Ffi.bind().arg(D.S32).optionalArg(D.F64).remainingArgs().optionalRet()
    .remainingRets().to((...v) => {
      seen = v;
    });
  {
    using f = new CallFrameBuilder().arg(new Int32Array([1])).build();
    rt.callSync(h, f);
    assert.equal(seen[1], undefined);
    assert.equal((seen[2] as { size: number }).size, 0);
    assert.equal(seen[3], undefined);
    assert.equal((seen[4] as { size: number }).size, 0);
  }
  {
    using f = new CallFrameBuilder()
      .arg(new Int32Array([1])).arg(new Float64Array([2])).arg(new Uint8Array(6), [2, 3])
      .arg(new Float32Array(1)).ret(new Int8Array(2)).ret(new Uint16Array(4), [4]).build();
    await rt.call(h, f);
    assert.equal((seen[1] as unknown as FfiBuffer).dtype, D.F64);
    const rest = seen[2] as { size: number; get(i: number): FfiBuffer };
    assert.equal(rest.size, 2);
    assert.deepEqual(rest.get(0).dims, [2, 3]);
    assert.equal(rest.get(1).dtype, D.F32);
    assert.equal((seen[3] as unknown as FfiBuffer).dtype, D.S8);
    const rrest = seen[4] as { size: number; get(i: number): FfiBuffer };
    assert.equal(rrest.size, 1);
    assert.equal(rrest.get(0).dtype, D.U16);
  }
  {
    using f = new CallFrameBuilder().build();
    assert.throws(
      () => rt.callSync(h, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Wrong number of arguments: expected at least 1 but got 0",
      ),
    );
  }
});

Deno.test("every attribute kind, dictionaries and enums from CallFrameBuilder", () => {
  using rt = new Runtime({ threads: 0 });
  let got: unknown[] = [];
  using h = Ffi.bind()
    .attr("b", "bool").attr("i8", "i8").attr("i16", "i16").attr("i32", "i32")
    .attr("i64", "i64").attr("u8", "u8").attr("u16", "u16").attr("u32", "u32")
    .attr("u64", "u64").attr("f32", "f32").attr("f64", "f64").attr("s", "string")
    .attr("ai32", "i32[]").attr("af64", "f64[]").attr("au8", "u8[]").attr("d", "dict")
    .enumAttr("mode", "i32", [0, 1, 2] as const)
    .to((...v) => {
      got = v;
    });
  using f = new CallFrameBuilder()
    .attr("b", true)
    .attr("i8", scalar(D.S8, -8))
    .attr("i16", scalar(D.S16, -16))
    .attr("i32", scalar(D.S32, -32))
    .attr("i64", -(2 ** 40))
    .attr("u8", scalar(D.U8, 255))
    .attr("u16", scalar(D.U16, 65535))
    .attr("u32", scalar(D.U32, 4294967295))
    .attr("u64", scalar(D.U64, 2n ** 50n))
    .attr("f32", 1.5, D.F32)
    .attr("f64", Math.PI)
    .attr("s", "reflect ü")
    .attr("ai32", new Int32Array([-70000, 5]))
    .attr("af64", [Math.E, 0.5])
    .attr("au8", array(D.U8, [200, 7]))
    .attr("d", { x: scalar(D.S32, 3), inner: { name: "deep" } })
    .attr("mode", scalar(D.S32, 2))
    .build();
  rt.callSync(h, f);
  const [b, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, s, ai32, af64, au8, d, mode] = got;
  assert.deepEqual(
    [b, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, s, ai32, af64, au8, mode],
    [
      true,
      -8,
      -16,
      -32,
      -(2 ** 40),
      255,
      65535,
      4294967295,
      2 ** 50,
      1.5,
      Math.PI,
      "reflect ü",
      [-70000, 5],
      [Math.E, 0.5],
      [200, 7],
      2,
    ],
  );
  const dict = d as {
    size: number;
    get(n: string, k: string): unknown;
    contains(n: string): boolean;
  };
  assert.equal(dict.size, 2);
  assert.equal(dict.get("x", "i32"), 3);
  const inner = dict.get("inner", "dict") as { get(n: string, k: string): unknown };
  assert.equal(inner.get("name", "string"), "deep");

  // The whole dictionary, looked up lazily.
  let all: { get(n: string, k: string): unknown; size: number } | undefined;
  using whole = Ffi.bind().attrs().to((a) => {
    all = a as unknown as typeof all;
  });
  using g = new CallFrameBuilder().attrs({ alpha: scalar(D.F32, 2), n: 3 }).build();
  rt.callSync(whole, g);
  assert.equal(all!.size, 2);
  assert.equal(all!.get("alpha", "f32"), 2);
  assert.equal(all!.get("n", "i64"), 3);
});

Deno.test("wrong arity, dtype, rank, attribute type and name: ffi.h's messages", () => {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().arg(D.F32, 1).arg(D.F32).to(() => {});
  {
    using f = new CallFrameBuilder().arg(new Float32Array(1)).build();
    assert.throws(
      () => rt.callSync(h, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Wrong number of arguments: expected 2 but got 1",
      ),
    );
  }
  {
    using f = new CallFrameBuilder()
      .arg(new Float32Array(2), [1, 2]).arg(new Int32Array(1)).build();
    assert.throws(
      () => rt.callSync(h, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Failed to decode all FFI handler operands (bad operands at: 0, 1)\n" +
          "Diagnostics:\nWrong buffer rank: expected 1 but got 2" +
          "Wrong buffer dtype: expected F32 but got S32",
      ),
    );
  }
  {
    using f = new CallFrameBuilder().arg(new Float32Array(1)).arg(new Float32Array(1)).build();
    assert.throws(
      () => rt.callSync(h, f, { stage: ExecutionStage.PREPARE }),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "Wrong execution stage: expected `execute` but got `prepare`",
      ),
    );
  }
  using r = Ffi.bind().ret(D.F32).to(() => {});
  {
    using f = new CallFrameBuilder().build();
    assert.throws(
      () => rt.callSync(r, f),
      isFfi(ErrorCode.INVALID_ARGUMENT, "[execute] Wrong number of results: expected 1 but got 0"),
    );
  }
  using a = Ffi.bind().attr("foo", "i32").to(() => {});
  {
    using f = new CallFrameBuilder().attr("foo", 1, D.S32).attr("bar", 2, D.S32).build();
    assert.throws(
      () => rt.callSync(a, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Wrong number of attributes: expected 1 but got 2 with name(s): bar, foo",
      ),
    );
  }
  {
    using f = new CallFrameBuilder().attr("not_foo", 1, D.S32).build();
    assert.throws(
      () => rt.callSync(a, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Failed to decode all FFI handler operands (bad operands at: 0)\n" +
          "Diagnostics:\nAttribute name mismatch: not_foo vs foo",
      ),
    );
  }
  using kinds = Ffi.bind().enumAttr("a", "i32", [0, 1, 2] as const).attr("b", "i64")
    .attr("c", "f32[]").attr("d", "string").to(() => {});
  {
    using f = new CallFrameBuilder()
      .attr("a", scalar(D.U32, 1))
      .attr("b", { x: 1 })
      .attr("c", new Float64Array([1]))
      .attr("d", 5)
      .build();
    assert.throws(
      () => rt.callSync(kinds, f),
      isFfi(
        ErrorCode.INVALID_ARGUMENT,
        "[execute] Failed to decode all FFI handler operands (bad operands at: 0, 1, 2, 3)\n" +
          "Diagnostics:\nWrong scalar data type: expected S32 but got U32" +
          "Wrong attribute type: expected scalar but got dictionary" +
          "Wrong array data type: expected F32 but got F64" +
          "Wrong attribute type: expected string but got scalar",
      ),
    );
  }
  {
    using f = new CallFrameBuilder()
      .attr("a", scalar(D.S32, 7)).attr("b", 1).attr("c", new Float32Array(1)).attr("d", "s")
      .build();
    assert.throws(() => rt.callSync(kinds, f), isFfi(ErrorCode.INVALID_ARGUMENT, /7/));
  }
});

Deno.test("stages: instantiate state is read by execute; closing the Instance frees it", async () => {
  using rt = new Runtime({ threads: 1 });
  const before = handlerHostStats().liveStates;
  using bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().attr("start", "i32").to((start) => ({ calls: start })),
    execute: Ffi.bind().state<{ calls: number }>().ret(D.S32).to((s, out) => {
      out.typed()[0] = ++s.calls;
    }),
  });
  using f = new CallFrameBuilder().attr("start", 10, D.S32).build();
  const out = new Int32Array(1);
  using g = new CallFrameBuilder().ret(out).build();
  const inst = await rt.instantiate(bundle, f);
  assert.equal(typeof inst.stateTypeId, "number");
  assert.equal(handlerHostStats().liveStates, before + 1);
  rt.callSync(bundle, g, { instance: inst });
  assert.equal(out[0], 11);
  await rt.call(bundle, g, { instance: inst });
  assert.equal(out[0], 12);
  // Without an instance: State_Get fails and the decoder reports it.
  assert.throws(
    () => rt.callSync(bundle, g),
    isFfi(ErrorCode.INVALID_ARGUMENT, /Failed to get state from execution context/),
  );
  inst.close(); // the runtime's State_Set deleter runs: the TS state is dropped
  assert.equal(handlerHostStats().liveStates, before);
  // A registered bundle by name: instantiate stage, then execute.
  const n = name("stages");
  rt.register(n, bundle);
  using inst2 = await rt.instantiate(n, f);
  rt.callSync(n, g, { instance: inst2 });
  assert.equal(out[0], 11);
});

Deno.test("user data by type id, run id and device ordinal", async () => {
  using rt = new Runtime({ threads: 1 });
  const tid = rt.registerType(name("user"));
  const payload = new BigInt64Array([42n]);
  const ptr = Deno.UnsafePointer.of(payload);
  let seen: number[] = [];
  using h = Ffi.bind().userData(tid).ctx("runId").ctx("deviceOrdinal").to((u, run, dev) => {
    seen = [u, run, dev];
  });
  using f = new CallFrameBuilder().build();
  const opts = { userData: [[tid, ptr]] as const, runId: 77, deviceOrdinal: 3 };
  rt.callSync(h, f, opts);
  assert.deepEqual(seen, [Number(Deno.UnsafePointer.value(ptr)), 77, 3]);
  seen = [];
  await rt.call(h, f, { ...opts, runId: 78 });
  assert.deepEqual(seen, [Number(Deno.UnsafePointer.value(ptr)), 78, 3]);
  assert.throws(
    () => rt.callSync(h, f),
    isFfi(ErrorCode.INVALID_ARGUMENT, /Failed to get user data from execution context/),
  );
});

Deno.test("async: Promise → XLA future → call resolves; callSync with a pending future fails", async () => {
  const failed0 = handlerHostStats().failedCompletions; // process-wide (other modules' tests)
  using rt = new Runtime({ threads: 1 });
  let resolve!: () => void;
  const out = new Int32Array(1);
  using h = Ffi.bind().ret(D.S32).to(async (o) => {
    await new Promise<void>((r) => resolve = r);
    o.typed()[0] = 5;
  });
  using f = new CallFrameBuilder().ret(out).build();
  const p = rt.call(h, f);
  while (resolve === undefined) await new Promise((r) => setTimeout(r, 1));
  assert.equal(out[0], 0);
  resolve();
  await p;
  assert.equal(out[0], 5);
  // Inline on the JS thread the Promise cannot settle before callSync returns.
  using pending = Ffi.bind().to(() => new Promise<void>((r) => setTimeout(r, 1)));
  using none = empty();
  assert.throws(
    () => rt.callSync(pending, none),
    isFfi(ErrorCode.FAILED_PRECONDITION, /returned a pending XLA_FFI_Future/),
  );
  await new Promise((r) => setTimeout(r, 5)); // the orphaned future completes and is freed
  // A rejected Promise completes the future with an error.
  using rejects = Ffi.bind().to(async () => {
    await null;
    throw new FfiError(ErrorCode.ABORTED, "async abort");
  });
  using e = empty();
  await assert.rejects(rt.call(rejects, e), isFfi(ErrorCode.ABORTED, "async abort"));
  assert.equal(handlerHostStats().failedCompletions, failed0);
  const s = runtimeDebugStats();
  assert.equal(s.futuresCreated, s.futuresDestroyed); // every future was released
});

function empty() {
  return new CallFrameBuilder().build();
}

Deno.test("errors: FfiError keeps its code, else UNKNOWN 'XLA FFI call failed: …' (as XLA)", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = empty();
  for (const [thrown, code, message] of THROWN_CASES) {
    using h = Ffi.bind().to(() => {
      throw thrown;
    });
    assert.throws(() => rt.callSync(h, f), isFfi(code, message));
    await assert.rejects(rt.call(h, f), isFfi(code, message));
    const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 3 });
    assert.equal(r.ok, 0);
    assert.equal(r.failed, 6);
    assert.equal(r.firstError?.code, code);
    assert.equal(r.firstError?.message, message);
  }
});

Deno.test("metadata and traits through rt.metadata; registration and duplicate rules", () => {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().to(() => {}, { traits: HandlerTraits.COMMAND_BUFFER_COMPATIBLE });
  assert.deepEqual(rt.metadata(h), {
    apiVersion: { major: 0, minor: 4 },
    traits: 1,
    stateTypeId: 0,
  });
  using v1 = Ffi.bind().to(() => {}, { apiVersion: "0.1" });
  assert.equal(rt.metadata(v1).apiVersion.minor, 1);
  const n = name("reg");
  rt.register(n, h);
  assert.equal(rt.lookup(n).traits, 1);
  assert.equal(
    Deno.UnsafePointer.value(rt.lookup(n).bundle.execute.pointer),
    Deno.UnsafePointer.value(h.pointer),
  );
  rt.register(n, h); // identical: allowed
  using other = Ffi.bind().to(() => {}, { traits: HandlerTraits.COMMAND_BUFFER_COMPATIBLE });
  assert.throws(
    () => rt.register(n, other),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      `Duplicate FFI handler registration for ${n} on platform Host (canonical host) ` +
        `with different bundle addresses`,
    ),
  );
  // 0.2+ (XLA ffi_registry.cc): the whole metadata is compared and printed.
  const t = name("traits");
  using plain = Ffi.bind().to(() => {});
  rt.register(t, plain, { platform: "cpu" });
  assert.throws(
    () => rt.register(t, plain, { traits: HandlerTraits.COMMAND_BUFFER_COMPATIBLE }),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      `Duplicate FFI handler registration for ${t} on platform Host (canonical host) ` +
        `with different metadata: {api_version: 0.4, traits: [], state: unknown} vs ` +
        `{api_version: 0.4, traits: [cmd_buffer_compatible], state: unknown}`,
    ),
  );
  rt.register(name("v1"), v1); // 0.1 up to the runtime's own version are accepted
  using v5 = Ffi.bind().to(() => {}, { apiVersion: [0, 5] });
  assert.throws(
    () => rt.register(name("v"), v5),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      /failed because the handler's API version \(0\.5\) is incompatible with the framework's API version \(0\.4\)\. Minimum supported API version is \(0\.1\)\.$/,
    ),
  );
  // 0.1 (XLA's 0.1 ffi_api.cc): exact version, traits compared alone.
  using rt01 = new Runtime({ threads: 0, apiVersion: "0.1" });
  rt01.register(t, v1);
  using v1c = Ffi.bind().to(() => {}, { apiVersion: "0.1" });
  assert.throws(
    () => rt01.register(t, v1c, { traits: HandlerTraits.COMMAND_BUFFER_COMPATIBLE }),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      `Duplicate FFI handler registration for ${t} on platform Host (canonical host) ` +
        `with different traits`,
    ),
  );
  assert.throws(
    () => rt01.register(name("v"), h),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      /failed because the handler's API version \(0\.4\) is incompatible with the framework's API version \(0\.1\)$/,
    ),
  );
  // A bundle: registered stages are found by name and called per stage.
  const calls: string[] = [];
  using bundle = new HandlerBundle({
    prepare: Ffi.bindPrepare().to(() => void calls.push("prepare")),
    execute: Ffi.bind().to(() => void calls.push("execute")),
  });
  const b = name("bundle");
  rt.register(b, bundle);
  rt.register(b, bundle);
  assert.throws(
    () => rt.register(b, bundle.execute),
    isFfi(ErrorCode.INVALID_ARGUMENT, /with different bundle addresses$/),
  );
  using f = empty();
  rt.callSync(b, f, { stage: ExecutionStage.PREPARE });
  rt.callSync(b, f, { stage: ExecutionStage.INITIALIZE }); // no handler: skipped
  rt.callSync(b, f);
  assert.deepEqual(calls, ["prepare", "execute"]);
});

Deno.test("a registered TS entry point is never reused: the name reports its release", () => {
  using rt = new Runtime({ threads: 0 });
  const n = name("pinned");
  const h = Ffi.bind().to(() => {});
  const slot = h.slot;
  rt.register(n, h);
  h.close();
  using again = Ffi.bind().to(() => {});
  assert.notEqual(again.slot, slot);
  using f = empty();
  assert.throws(
    () => rt.callSync(n, f),
    isFfi(ErrorCode.FAILED_PRECONDITION, `TS handler entry point ${slot} was released`),
  );
});

Deno.test("thread pool from TS: size, and a task scheduled on the runtime's pool", async () => {
  using rt = new Runtime({ threads: 3 });
  let n = -1;
  using size = Ffi.bind().ctx("threadPool").to((p) => void (n = p.numThreads()));
  using f = empty();
  rt.callSync(size, f);
  assert.equal(n, 3);
  // The task is a thread-safe JS callback: the pool thread waits for the JS
  // thread, which is free because `call` awaits.
  let ran = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const task = Deno.UnsafeCallback.threadSafe(
    { parameters: ["pointer"], result: "void" } as const,
    () => {
      ran++;
      done();
    },
  );
  try {
    using h = Ffi.bind().ctx("threadPool").to(async (p) => {
      p.schedule(task.pointer, null);
      await finished;
    });
    await rt.call(h, f);
    assert.equal(ran, 1);
  } finally {
    task.close();
  }
  using none = new Runtime({ threads: 0 });
  using h0 = Ffi.bind().ctx("threadPool").to((p) => {
    assert.equal(p.numThreads(), 0);
    p.schedule(task.pointer, null);
  });
  assert.throws(() => none.callSync(h0, f), isFfi(ErrorCode.UNIMPLEMENTED, /thread pool/));
});

Deno.test({
  name: "8 runtime threads × 10k calls, sync and async mixed: all complete with correct results",
  fn: async () => {
    const failed0 = handlerHostStats().failedCompletions; // process-wide
    using rt = new Runtime({ threads: 0 });
    const calls = 10_000;
    using sync = Ffi.bind().arg(D.S32).ret(D.S32).to((x, out) => {
      out.typed()[0]! += x.typed()[0]!;
    });
    using asyncFn = Ffi.bind().arg(D.S32).ret(D.S32).to(async (x, out) => {
      await null;
      out.typed()[0]! += x.typed()[0]!;
    });
    // Declared sync, returns a Promise on every other call.
    let k = 0;
    using mixed = Ffi.bind().arg(D.S32).ret(D.S32).to((x, out) => {
      out.typed()[0]! += x.typed()[0]!;
      return (k++ & 1) === 0 ? undefined : Promise.resolve();
    });
    const plan = [[sync, 3, 1], [asyncFn, 3, 2], [mixed, 2, 3]] as const;
    const outs = plan.map(() => new Int32Array(1));
    const frames = plan.map(([, , x], i) =>
      new CallFrameBuilder().arg(new Int32Array([x])).ret(outs[i]!).build()
    );
    try {
      const results = await Promise.all(
        plan.map(([h, threads], i) =>
          rt.callOnThreads(h, frames[i]!, { threads, iterations: calls })
        ),
      );
      for (let i = 0; i < plan.length; i++) {
        const [, threads, x] = plan[i]!;
        assert.equal(results[i]!.failed, 0, results[i]!.firstError?.message);
        assert.equal(results[i]!.ok, threads * calls);
        assert.equal(outs[i]![0], x * threads * calls, `handler ${i}`);
      }
      assert.equal(k, 2 * calls);
      assert.equal(handlerHostStats().failedCompletions, failed0);
    } finally {
      for (const f of frames) f.close();
    }
  },
});

for (const scenario of ["close", "callSync-native", "handover-edge", "handover-edge-async"]) {
  Deno.test(`no deadlock: ${scenario} (in a child process with a timeout)`, async () => {
    const { code, stdout: out, stderr: err } = await runDeno(
      new URL("./_no_deadlock_child.ts", import.meta.url),
      [scenario],
      { timeoutMs: 60_000 },
    );
    assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
    assert.match(out, new RegExp(`ok ${scenario}`));
  });
}

Deno.test("no hang: a process's first pending future, completed by another thread at once, settles its call (8 child processes at once, each with a timeout)", async () => {
  // The completion may come between the native begin of the call and JavaScript's registration
  // of it: the completion callback is set before the begin, so it is queued and finds the call.
  // Eight children at once on a small machine make that window likely (before the fix, 5 of 8
  // hung in each of two runs).
  const lib = testHandlersPath();
  const runs = await Promise.all(
    Array.from(
      { length: 8 },
      () =>
        runDeno(new URL("./_no_deadlock_child.ts", import.meta.url), ["first-pending", lib], {
          timeoutMs: 60_000,
        }),
    ),
  );
  for (const { code, stdout: out, stderr: err } of runs) {
    assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
    assert.match(out, /ok first-pending/);
  }
});

Deno.test("64-bit integer attributes: exact numbers, bigint kinds, and no silent rounding", () => {
  using rt = new Runtime({ threads: 0 });
  const big = 2n ** 60n + 3n;
  let got: unknown[] = [];
  using exact = Ffi.bind().attr("a", "i64n").attr("b", "u64n").attr("c", "i64n[]")
    .attr("d", "i64").attr("e", "u64[]")
    .to((a, b, c, d, e) => {
      got = [a, b, c, d, e];
    });
  using dict = Ffi.bind().attrs().to((all) => {
    got.push(all.get("a"), all.get("c"), all.get("e"), all.get("a", "i64n"));
  });
  using f = new CallFrameBuilder()
    .attr("a", scalar(D.S64, -big)).attr("b", scalar(D.U64, 2n ** 64n - 1n))
    .attr("c", array(D.S64, [big, -1n])).attr("d", scalar(D.S64, -(2 ** 40)))
    .attr("e", array(D.U64, [7, 2 ** 53 - 1])).build();
  rt.callSync(exact, f);
  rt.callSync(dict, f);
  assert.deepEqual(got, [
    -big,
    2n ** 64n - 1n,
    [big, -1n],
    -(2 ** 40),
    [7, 2 ** 53 - 1],
    // Dictionary lookups without a kind keep exact values (bigint only where needed).
    -big,
    [big, -1],
    [7, 2 ** 53 - 1],
    -big,
  ]);

  // Bound as a JS number, a value a number cannot hold is a decode failure, not a rounding.
  using lossy = Ffi.bind().attr("a", "i64").attr("b", "u64[]").to(() => {});
  using g = new CallFrameBuilder()
    .attr("a", scalar(D.S64, big)).attr("b", array(D.U64, [1n, 2n ** 63n])).build();
  assert.throws(
    () => rt.callSync(lossy, g),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      "[execute] Failed to decode all FFI handler operands (bad operands at: 0, 1)\nDiagnostics:\n" +
        `Attribute value ${big} does not fit a JS number exactly; bind it as 'i64n' for a bigint` +
        `Attribute value ${2n ** 63n} does not fit a JS number exactly; bind it as 'u64n' for a ` +
        "bigint",
    ),
  );
});

for (
  const [mode, what] of [
    ["bind", "binds a handler and returns (no runtime)"],
    ["threads", "calls a handler from 4 runtime threads and returns"],
    ["async", "calls an async handler from 4 runtime threads and returns"],
    ["pending", "returns while an async call from a runtime thread is still running"],
  ] as const
) {
  Deno.test(`a script that leaves its handlers open exits by itself: ${what}`, async () => {
    // Killed after 60 s: a process kept alive by its open handlers fails here.
    const r = await runDeno(new URL("./_exit_child.ts", import.meta.url), [mode], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, `exit code ${r.code} (143: killed at the timeout)\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^done ${mode}$`, "m"));
    if (mode === "pending") {
      // The process waited for the running call before it exited.
      assert.match(r.stdout, /^callOnThreads settled: 1 ok, y\[0\] = 7$/m);
    }
    assert.equal(r.stderr, "");
  });
}

for (
  const [mode, what, message] of [
    ["pool", "Runtime.call on the pool", "result 0"],
    ["threads", "Runtime.callOnThreads", "result 0"],
    ["ffi", "Runtime.ffiCall of a native handler whose future its task completes", "argument 0"],
  ] as const
) {
  Deno.test(`an array detached while ${what} runs: no crash, the call fails naming it`, async () => {
    // Before the call kept its arrays' memory alive, each of these ended the child with SIGSEGV.
    const r = await runDeno(new URL("./_detach_in_flight_child.ts", import.meta.url), [mode], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, `exit code ${r.code} (139: a crash)\n${r.stderr}`);
    assert.equal(
      r.stdout.trim(),
      `rejected: ${message}: its ArrayBuffer was detached (transferred) while the call ran; ` +
        "the call read and wrote its old memory, and its data is lost",
    );
  });
}

Deno.test("a call whose arrays stay attached while it runs is unaffected by keeping them", async () => {
  const r = await runDeno(new URL("./_detach_in_flight_child.ts", import.meta.url), ["untouched"], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), "resolved; y[0] = 2");
});

Deno.test("hints: an attribute given as a plain number to an f32 handler names scalar()", async () => {
  using rt = new Runtime({ threads: 1 });
  using h = Ffi.bind().arg(D.F32, 1).ret(D.F32, 1).attr("alpha", "f32").to(() => {});
  const x = new Float32Array(2), y = new Float32Array(2);
  // The user's mistake: 2 is an integer, so the attribute is S64.
  using f = new CallFrameBuilder().arg(x).ret(y).attr("alpha", 2).build();
  // XLA's words unchanged; the hint apart.
  const message = "[execute] Failed to decode all FFI handler operands (bad operands at: 2)\n" +
    "Diagnostics:\nWrong scalar data type: expected F32 but got S64";
  const hint = "attribute 'alpha' is S64 because it was given as a plain JS number (an integer " +
    'makes S64, any other number F64): give the type the handler expects, .attr("alpha", ' +
    "scalar(DataType.F32, 2))";
  assert.throws(() => rt.callSync(h, f), isFfi(ErrorCode.INVALID_ARGUMENT, message, hint));
  await assert.rejects(rt.call(h, f), isFfi(ErrorCode.INVALID_ARGUMENT, message, hint));
  const r = await rt.callOnThreads(h, f, { threads: 1 });
  assert.equal(r.firstError?.message, message);
  assert.equal(r.firstError?.hint, hint);
  assert.ok(String(r.firstError).endsWith(`${message}\nHint: ${hint}`));
  // Arrays and nested dictionaries name array() and the dotted path.
  using arr = Ffi.bind().attr("cfg", "dict").attr("w", "f32[]").to(() => {});
  using g = new CallFrameBuilder().attr("cfg", { a: 1 }).attr("w", [1, 2.5]).build();
  assert.throws(
    () => rt.callSync(arr, g),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      /expected F32 but got F64$/,
      /^attribute 'w' is F64 .*array\(DataType\.F32, \[1, 2\.5\]\)\)$/,
    ),
  );
  // Typed the way the handler wants: no error; a typed mismatch gets no hint.
  using ok = new CallFrameBuilder().arg(x).ret(y).attr("alpha", scalar(D.F32, 2)).build();
  rt.callSync(h, ok);
  using typed = new CallFrameBuilder().arg(x).ret(y).attr("alpha", scalar(D.F64, 2)).build();
  assert.throws(
    () => rt.callSync(h, typed),
    (e) => e instanceof FfiError && e.message.endsWith("expected F32 but got F64") && !e.hint,
  );
});

Deno.test("hints: register and calls with something that is not a handler say what they accept", () => {
  using rt = new Runtime({ threads: 0 });
  using f = new CallFrameBuilder().build();
  const accepts =
    /^Runtime\.register expects a handler \(a TS handler made with Ffi\.bind\(\)…to\(fn\), a NativeHandler from HandlerLibrary\.handler\(name\), or any object whose 'pointer' is an XLA_FFI_Handler\* pointer object\), or a bundle of them by stage/;
  const cases: [unknown, RegExp][] = [
    [() => {}, /got a function: bind the function first, e\.g\. Ffi\.bind\(\)/],
    [{}, /; got an object$/],
    [5, /; got number 5$/],
    ["x", /; got the string "x"$/],
    [null, /; got null$/],
    [{ pointer: {} }, /; got an object with keys pointer$/],
  ];
  for (const [value, tail] of cases) {
    assert.throws(
      () => rt.register(name("bad"), value as never),
      (e) =>
        e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
        accepts.test(e.message) && tail.test(e.message),
      String(value),
    );
  }
  assert.throws(
    () => rt.register(name("bad"), { execute: 3 } as never),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      /^Runtime\.register: the execute stage of the bundle must be a handler .*; got number 3$/,
    ),
  );
  assert.throws(
    () => rt.callSync(42 as never, f),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      /^A runtime call expects a registered handler name, a handler/,
    ),
  );
  assert.throws(
    () => rt.metadata({} as never),
    isFfi(ErrorCode.INVALID_ARGUMENT, /^Runtime\.metadata expects a handler .*; got an object$/),
  );
});

Deno.test("hints: NOT_FOUND for a registered name suggests the closest one", () => {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().to(() => {});
  const base = name("saxpy");
  rt.register(base, h);
  const gpu = name("gpu_only");
  rt.register(gpu, h, { platform: "CUDA" });
  using f = new CallFrameBuilder().build();
  const typo = base.replace("saxpy", "saxpi");
  assert.throws(
    () => rt.callSync(typo, f),
    isFfi(
      ErrorCode.NOT_FOUND,
      `No FFI handler registered for ${typo} on a platform Host (canonical host)`,
      `did you mean '${base}'?`,
    ),
  );
  assert.throws(
    () => rt.callSync(gpu, f),
    isFfi(ErrorCode.NOT_FOUND, /\(canonical host\)$/, "it is registered for CUDA"),
  );
  assert.throws(
    () => rt.callSync("nothing.like.it.at.all", f),
    isFfi(
      ErrorCode.NOT_FOUND,
      "No FFI handler registered for nothing.like.it.at.all on a platform Host (canonical host)",
    ),
  );
});
