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
