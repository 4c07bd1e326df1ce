/**
 * The runtime's call paths, each run `n` times, for the leak check (a test
 * with a modest count; bench/leak_check.ts with 1e6).
 */
import assert from "node:assert/strict";
import {
  CallFrameBuilder,
  DataType,
  Ffi,
  FfiError,
  HandlerBundle,
  type Runtime,
  runtimeDebugStats,
  type RuntimeStats,
} from "../mod.ts";
import type { HandlerLibrary } from "../src/runtime/handler_library.ts";

/** One path: runs `n` calls. */
export type LeakPath = (n: number) => Promise<void>;

/** The paths by name, over a runtime and the C test handlers. */
export function leakPaths(rt: Runtime, lib: HandlerLibrary): Record<string, LeakPath> {
  const x = new Float32Array([1]);
  const y = new Float32Array(1);
  const noop = lib.handler("test_noop");
  const asyncH = lib.handler("test_async");
  const failH = lib.handler("test_return_error");
  const stateful = lib.handler("test_stateful");
  return {
    callSync: (n) => {
      using f = new CallFrameBuilder().build();
      for (let i = 0; i < n; i++) rt.callSync(noop, f);
      return Promise.resolve();
    },
    "call (async future)": async (n) => {
      using f = new CallFrameBuilder().arg(x).ret(y).build();
      for (let i = 0; i < n; i++) await rt.call(asyncH, f);
    },
    "error-returning": (n) => {
      using f = new CallFrameBuilder().attr("code", 9, DataType.S32).build();
      for (let i = 0; i < n; i++) {
        try {
          rt.callSync(failH, f);
          throw new Error("no error");
        } catch (e) {
          if (!(e instanceof FfiError) || e.code !== 9) throw e;
        }
      }
      return Promise.resolve();
    },
    "instantiate + state": async (n) => {
      // From API 0.2 on the state's deleter comes from its type's TypeInfo.
      const id = rt.registerType(`leak.state.${crypto.randomUUID()}`, 0, {
        typeInfo: lib.typeInfo("test_state_type_info"),
      });
      using f = new CallFrameBuilder().attr("type_id", id, DataType.S64)
        .attr("value", 11, DataType.S64).build();
      for (let i = 0; i < n; i++) {
        const inst = await rt.instantiate({ execute: stateful, instantiate: stateful }, f);
        inst.close();
      }
    },
    "frame build/close": (n) => {
      const b = new CallFrameBuilder().arg(x).ret(y).attr("k", 1, DataType.S32).attr("s", "text");
      for (let i = 0; i < n; i++) b.build().close();
      return Promise.resolve();
    },
    callOnThreads: async (n) => {
      using f = new CallFrameBuilder().build();
      const r = await rt.callOnThreads(noop, f, { threads: 4, iterations: Math.ceil(n / 4) });
      if (r.failed !== 0) throw r.firstError;
    },
  };
}

/**
 * Resident memory of this process in bytes (the OS's RSS, as /proc/self/statm)
 * and the part of it outside V8's JS heap (RSS minus the heap's reserved
 * total): the JS heap grows its reservation in steps of megabytes on its own,
 * which says nothing about native leaks.
 */
export function residentBytes(): { rss: number; native: number } {
  const m = Deno.memoryUsage();
  return { rss: m.rss, native: m.rss - m.heapTotal };
}

/**
 * The runtime's counters once the pool has counted the tasks it ran: a task
 * that completes a future wakes the caller before the pool thread counts it,
 * so wait (at most `ms`) for tasksRun to catch up with tasksScheduled.
 */
export async function settledStats(ms = 2000): Promise<RuntimeStats> {
  const end = performance.now() + ms;
  let s = runtimeDebugStats();
  while (s.tasksRun < s.tasksScheduled && performance.now() < end) {
    await new Promise((r) => setTimeout(r, 1));
    s = runtimeDebugStats();
  }
  return s;
}

/**
 * Asserts that path `name` released every error, future, frame, state,
 * instance and task it created between the two snapshots; returns the
 * difference of a counter for further checks.
 */
export function assertReleased(
  name: string,
  before: RuntimeStats,
  after: RuntimeStats,
): (k: keyof RuntimeStats) => number {
  const d = (k: keyof RuntimeStats) => after[k] - before[k];
  assert.equal(d("errorsCreated"), d("errorsDestroyed"), `${name}: errors`);
  assert.equal(d("futuresCreated"), d("futuresDestroyed"), `${name}: futures`);
  assert.equal(d("framesCreated"), d("framesDestroyed"), `${name}: frames`);
  assert.equal(d("statesSet"), d("statesDeleted"), `${name}: states`);
  assert.equal(d("instancesCreated"), d("instancesDestroyed"), `${name}: instances`);
  assert.equal(d("tasksScheduled"), d("tasksRun"), `${name}: tasks`);
  return d;
}

/** TS handler paths: the handlers they call, closed by `close()`. */
export interface TsLeakPaths {
  paths: Record<string, LeakPath>;
  /** Calls that reached each TS handler. */
  counts: Record<string, number>;
  close(): void;
}

/**
 * The TS handler call paths: a sync handler via callSync, an async one via
 * call, an error-returning one, instantiate + state + Instance close, and
 * callOnThreads (sync and async handlers from runtime threads). Each path
 * checks that every call reached TS exactly once.
 */
export function tsLeakPaths(rt: Runtime): TsLeakPaths {
  const counts: Record<string, number> = {
    sync: 0,
    async: 0,
    error: 0,
    instantiate: 0,
    execute: 0,
    threads: 0,
  };
  const x = new Float32Array([2]);
  const y = new Float32Array(1);
  const sync = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((a, b) => {
    counts.sync!++;
    b.typed()[0] = a.typed()[0]! * 2;
  });
  const asyncH = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(async (a, b) => {
    counts.async!++;
    await null;
    b.typed()[0] = a.typed()[0]! + 1;
  });
  const fail = Ffi.bind().attr("code", "i32").to((code) => {
    counts.error!++;
    throw new FfiError(code, "leak check: expected failure");
  });
  const bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().attr("start", "i32").to((start) => {
      counts.instantiate!++;
      return { calls: start };
    }),
    execute: Ffi.bind().state<{ calls: number }>().to((s) => {
      counts.execute!++;
      s.calls++;
    }),
  });
  let k = 0;
  const threaded = Ffi.bind().to(() => {
    counts.threads!++;
    return (k++ & 1) === 0 ? undefined : Promise.resolve();
  });
  const expect = (what: string, before: number, n: number) => {
    const got = counts[what]! - before;
    if (got !== n) throw new Error(`${what}: ${got} calls reached TS, expected ${n}`);
  };
  const paths: Record<string, LeakPath> = {
    "TS callSync": (n) => {
      using f = new CallFrameBuilder().arg(x).ret(y).build();
      const c0 = counts.sync!;
      for (let i = 0; i < n; i++) rt.callSync(sync, f);
      expect("sync", c0, n);
      return Promise.resolve();
    },
    "TS call (async)": async (n) => {
      using f = new CallFrameBuilder().arg(x).ret(y).build();
      const c0 = counts.async!;
      for (let i = 0; i < n; i++) await rt.call(asyncH, f);
      expect("async", c0, n);
    },
    "TS error-returning": (n) => {
      using f = new CallFrameBuilder().attr("code", 9, DataType.S32).build();
      const c0 = counts.error!;
      for (let i = 0; i < n; i++) {
        try {
          rt.callSync(fail, f);
          throw new Error("no error");
        } catch (e) {
          if (!(e instanceof FfiError) || e.code !== 9) throw e;
        }
      }
      expect("error", c0, n);
      return Promise.resolve();
    },
    "TS instantiate+state": async (n) => {
      using f = new CallFrameBuilder().attr("start", 1, DataType.S32).build();
      using g = new CallFrameBuilder().build();
      const c0 = counts.instantiate!, e0 = counts.execute!;
      for (let i = 0; i < n; i++) {
        const inst = await rt.instantiate(bundle, f);
        rt.callSync(bundle, g, { instance: inst });
        inst.close();
      }
      expect("instantiate", c0, n);
      expect("execute", e0, n);
    },
    "TS callOnThreads": async (n) => {
      using f = new CallFrameBuilder().build();
      const iterations = Math.ceil(n / 4);
      const c0 = counts.threads!;
      const r = await rt.callOnThreads(threaded, f, { threads: 4, iterations });
      if (r.failed !== 0) throw r.firstError;
      expect("threads", c0, 4 * iterations);
    },
  };
  return {
    paths,
    counts,
    close() {
      sync.close();
      asyncH.close();
      fail.close();
      bundle.close();
      threaded.close();
    },
  };
}
