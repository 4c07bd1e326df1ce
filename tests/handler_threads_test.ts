import assert from "node:assert/strict";
import { DataType } from "../src/abi/enums.ts";
import { Ffi, handlerHostStats } from "../src/handler/mod.ts";
import { frame, runThreads, type TestFrame } from "./_handler_harness.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "8 foreign threads × 10k calls, sync and async mixed: all complete with correct results",
  ...opts,
  fn: async () => {
    const failed0 = handlerHostStats().failedCompletions; // process-wide
    const calls = 10_000;
    using sync = Ffi.bind().arg(DataType.S32).ret(DataType.S32).to((x, out) => {
      out.typed()[0]! += x.typed()[0]!;
    });
    using asyncFn = Ffi.bind().arg(DataType.S32).ret(DataType.S32).to(async (x, out) => {
      await null;
      out.typed()[0]! += x.typed()[0]!;
    });
    // A sync-declared handler that returns a Promise: the calling thread blocks for JS
    // and then receives the future.
    using promiseFn = Ffi.bind().arg(DataType.S32).ret(DataType.S32).to((x, out) => {
      out.typed()[0]! += x.typed()[0]!;
      return Promise.resolve();
    });
    const handlers = [sync, asyncFn, promiseFn, sync, asyncFn, sync, asyncFn, promiseFn];
    const outs: Int32Array[] = [];
    const frames: TestFrame[] = [];
    for (let t = 0; t < 8; t++) {
      const x = new Int32Array([t + 1]);
      const out = new Int32Array(1);
      outs.push(out);
      frames.push(frame({
        args: [{ dtype: DataType.S32, dims: [1], data: x }],
        rets: [{ dtype: DataType.S32, dims: [1], data: out }],
      }));
    }
    try {
      const r = await runThreads(handlers.map((h) => h.pointer), frames, calls);
      assert.equal(r.errors, 0, r.message);
      for (let t = 0; t < 8; t++) assert.equal(outs[t]![0], (t + 1) * calls, `thread ${t}`);
      assert.equal(handlerHostStats().failedCompletions, failed0);
    } finally {
      for (const f of frames) f.close();
    }
  },
});

Deno.test({
  name: "foreign-thread calls report decode errors and thrown errors",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().arg(DataType.F32).to(() => {});
    using thrower = Ffi.bind().to(async () => {
      await null;
      throw new Error("async boom");
    });
    using f = frame({ args: [{ dtype: DataType.S32, dims: [1] }] });
    using g = frame({});
    const r = await runThreads([h.pointer], [f], 10);
    assert.equal(r.errors, 10);
    assert.match(r.message, /Wrong buffer dtype: expected F32 but got S32/);
    const r2 = await runThreads([thrower.pointer], [g], 10);
    assert.equal(r2.errors, 10);
    assert.equal(r2.message, "async boom");
  },
});

Deno.test({
  name: "a second JS thread cannot host handlers: clear error instead of a stolen host",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().to(() => {});
    const w = new Worker(new URL("./_second_host_worker.ts", import.meta.url), {
      type: "module",
    });
    const msg = await new Promise<string>((resolve) => w.onmessage = (e) => resolve(e.data));
    w.terminate();
    assert.match(msg, /FAILED_PRECONDITION.*one JS thread per process/);
    assert.ok(h.isOpen);
  },
});
