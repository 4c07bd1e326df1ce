/**
 * The runtime's call paths, each run `n` times, for the leak check (a test
 * with a modest count; bench/leak_check.ts with 1e6).
 */
import {
  CallFrameBuilder,
  DataType,
  FfiError,
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
      using f = new CallFrameBuilder().attr("type_id", 5, DataType.S64)
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
