/**
 * What the real-XLA benchmarks share: opening jax (or saying why they are
 * skipped), and the C++ floors built against jaxlib's own `ffi.h`
 * (bench/native/scale_jaxlib.cc).
 *
 * @module
 */
import { HandlerLibrary } from "../mod.ts";
import { buildHandlerLibrary } from "../src/build/mod.ts";
import { findPython, probePython, Xla } from "../src/xla/mod.ts";

/**
 * Python the benchmarks' timing loops start with: `ready_input(n)` (an F32
 * array 0..n-1 already on the device: XLA runs a program whose input is still
 * being transferred on its own thread), `time_calls(f, x, n, into)` (appends
 * the seconds of n calls `f(x).block_until_ready()`), `summary(ts)` (median,
 * p10, p90, p99, the mean and the count).
 */
export const PY_TIMING = `
import time
def ready_input(n):
    return jnp.asarray(np.arange(n, dtype=np.float32)).block_until_ready()
def time_calls(f, x, n, into):
    pc = time.perf_counter
    for _ in range(n):
        t = pc()
        f(x).block_until_ready()
        into.append(pc() - t)
def summary(ts):
    mean = sum(ts) / len(ts)
    ts.sort()
    m = len(ts)
    return {"median": ts[m // 2], "p10": ts[m // 10], "p90": ts[(9 * m) // 10],
            "p99": ts[(99 * m) // 100], "mean": mean, "calls": m}
`;

/** The load averages (1, 5, 15 min), from the hosted Python. */
export async function loadAverage(xla: Xla): Promise<string> {
  return String(
    await xla.runPython("import os\nresult = ' '.join('%.2f' % v for v in os.getloadavg())"),
  );
}

/** An `Xla` host, or undefined (after printing why) when no Python with jax is found. */
export async function openXlaOrSkip(): Promise<Xla | undefined> {
  const info = await probePython(findPython()).catch((e) => e as Error);
  if (info instanceof Error || info.jax === null) {
    console.log(
      `skipped: ${info instanceof Error ? info.message : `no jax for ${info.executable}`}` +
        ` (docs/real-xla.md)`,
    );
    return undefined;
  }
  return await Xla.open();
}

/** The C++ floors (`bench_cc_sync`, `_ready`, `_thread`, `_handoff`), built at bench time. */
export function openFloors(): HandlerLibrary {
  return HandlerLibrary.open(buildHandlerLibrary({
    name: "bench_scale_jaxlib",
    sources: ["native/scale_jaxlib.cc"],
    root: new URL(".", import.meta.url),
    ffiHeaders: "jaxlib",
  }));
}
