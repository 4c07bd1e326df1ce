/**
 * The side-by-side benchmark's native library (`bench/native/`): three call
 * frames, the C floor decoder, the canonical digest and the call driver.
 *
 * @module
 */
import { buildSharedLibrary } from "../build.ts";
import { openLibrary } from "../src/native/lib.ts";

/** Frame ids understood by `bench_frame`. */
export const FRAMES = [
  { id: 0, name: "standard", what: "4 F32 args (ranks 2,1,3,4), 1 ret, 4 attrs" },
  { id: 1, name: "small", what: "1 arg, no rets, no attrs" },
  { id: 2, name: "large", what: "64 args, 4 rets, 32 attrs incl. nested dicts" },
] as const;

/** Symbols of the bench library. */
export const BENCH_SYMBOLS = {
  bench_frame: { parameters: ["i32"], result: "pointer" },
  bench_frame_count: { parameters: [], result: "i32" },
  /** Sets the `XLA_FFI_Api*` of every bench frame (null: none). */
  bench_frame_set_context: { parameters: ["pointer", "pointer"], result: "void" },
  bench_c_address: { parameters: ["i32"], result: "pointer" },
  bench_c_canonical: { parameters: ["pointer", "buffer", "i64"], result: "i64" },
  bench_c_last_digest: { parameters: [], result: "u64" },
  bench_c_take_digest: { parameters: [], result: "u64" },
  bench_fnv1a64: { parameters: ["buffer", "i64"], result: "u64" },
  /** (handler, frame, iters, threads, ns_per_call out, after hook) → errors. */
  bench_drive: {
    parameters: ["pointer", "pointer", "i64", "i32", "buffer", "pointer"],
    result: "i64",
  },
  /** The same driver, run off the JS thread (needed for JS callbacks on foreign threads). */
  bench_drive_nonblocking: {
    name: "bench_drive",
    parameters: ["pointer", "pointer", "i64", "i32", "buffer", "pointer"],
    result: "i64",
    nonblocking: true,
  },
  /** The mean round trip of one cache line between two threads, in ns (-1: no thread). */
  bench_round_trip_ns: { parameters: ["i64"], result: "f64" },
} as const satisfies Deno.ForeignLibraryInterface;

/**
 * The machine's state for hand-off figures, as a line to print: the round
 * trip of one cache line between two threads (a VM may switch between a fast
 * and a slow state from one run to the next; every hand-off between CPUs
 * pays it).
 */
export function roundTripLine(lib: BenchLibrary): string {
  const ns = lib.symbols.bench_round_trip_ns(200_000n);
  return `CPU-to-CPU round trip of one cache line: ${
    ns < 0 ? "unavailable" : `${ns.toFixed(0)} ns`
  }`;
}

/** The bench library's C sources. */
export const BENCH_SOURCES: readonly URL[] = [
  new URL("native/bench.h", import.meta.url),
  new URL("native/frames.c", import.meta.url),
  new URL("native/c_decoder.c", import.meta.url),
  new URL("native/driver.c", import.meta.url),
];

/** Builds (or finds in the cache) the bench library; returns its path. */
export function benchLibraryPath(): string {
  return buildSharedLibrary({
    name: "xla_ffi_bench",
    sources: BENCH_SOURCES,
    includeDirs: [new URL("native/", import.meta.url)],
  });
}

/** The opened bench library: its symbols, `close()` and `[Symbol.dispose]`. */
export class BenchLibrary {
  readonly #lib: Deno.DynamicLibrary<typeof BENCH_SYMBOLS>;
  /** Path of the shared library. */
  readonly path: string;
  constructor(path: string) {
    this.path = path;
    this.#lib = openLibrary(path, BENCH_SYMBOLS);
  }
  /** The library's functions. */
  get symbols(): Deno.DynamicLibrary<typeof BENCH_SYMBOLS>["symbols"] {
    return this.#lib.symbols;
  }
  /** Closes the library. */
  close(): void {
    this.#lib.close();
  }
  [Symbol.dispose](): void {
    this.close();
  }
}

/** Builds (when needed) and opens the bench library; close it with `close()`. */
export function openBenchLibrary(): BenchLibrary {
  return new BenchLibrary(benchLibraryPath());
}

/** A u64 digest as 16 lowercase hex digits. */
export function digestHex(d: bigint | number): string {
  return BigInt(d).toString(16).padStart(16, "0");
}

/** The C canonical text of frame `which` (see bench/native/c_decoder.c). */
export function cCanonicalText(lib: BenchLibrary, which: number): string {
  const frame = lib.symbols.bench_frame(which);
  if (frame === null) throw new RangeError(`no bench frame ${which}`);
  const buf = new Uint8Array(1 << 16);
  const n = Number(lib.symbols.bench_c_canonical(frame, buf, BigInt(buf.length)));
  if (n < 0 || n > buf.length) throw new Error(`frame ${which} did not decode in C (${n})`);
  return new TextDecoder().decode(buf.subarray(0, n));
}

/**
 * Calls `handler(frame)` `iters` times through `bench_drive` and returns the
 * per-call latency in ns. threads = 0: on the calling (JS) thread; k >= 1: on
 * k foreign pthreads, with the driver run off the JS thread (nonblocking) so
 * that a JS handler (a thread-safe `Deno.UnsafeCallback`) can run meanwhile.
 * `after` runs once per calling thread after its loop (see driver.c).
 * Throws when the driver fails or any call returned an error.
 */
export async function drive(
  lib: BenchLibrary,
  handler: Deno.PointerValue,
  frame: number,
  iters: number,
  threads: number,
  after: Deno.PointerValue = null,
): Promise<number> {
  const f = lib.symbols.bench_frame(frame);
  if (f === null) throw new RangeError(`no bench frame ${frame}`);
  const ns = new Float64Array(1);
  const errors = threads === 0
    ? lib.symbols.bench_drive(handler, f, BigInt(iters), 0, ns, after)
    : await lib.symbols.bench_drive_nonblocking(handler, f, BigInt(iters), threads, ns, after);
  if (errors < 0n) throw new Error(`bench_drive failed (${errors}): bad arguments or no thread`);
  if (errors > 0n) throw new Error(`${errors} of ${iters * Math.max(1, threads)} calls failed`);
  return ns[0]!;
}
