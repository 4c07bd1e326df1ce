/**
 * Builds and runs the runtime fuzzer (native/tests/fuzz.c with the C test
 * handlers). Shared by tests/fuzz_test.ts and bench/fuzz.ts.
 */
import { buildSharedLibrary, nativeLibraryPath } from "../build.ts";
import { FLAT_SLOTS } from "../src/handler/_flat.ts";
import { native } from "../src/native/lib.ts";

/** Targets of fuzz.c, in order (out[4 + t]). */
export const FUZZ_TARGETS = [
  "Error_Create",
  "Error_GetMessage",
  "Error_Destroy",
  "Handler_Register",
  "Stream_Get",
  "TypeId_Register",
  "ExecutionContext_Get",
  "State_Set",
  "State_Get",
  "DeviceMemory_Allocate",
  "DeviceMemory_Free",
  "ThreadPool_Schedule",
  "ThreadPool_NumThreads",
  "Future_Create",
  "Future_SetAvailable",
  "Future_SetError",
  "RunId_Get",
  "DeviceOrdinal_Get",
  "frame description (xla_ffi_deno_runtime_frame_build)",
  "mutated call frame (check + checked call)",
  "runtime C entry points",
  "misbehaving handlers",
  "handler entry points (raw frames)",
] as const;

/** Result of one fuzz run. */
export interface FuzzResult {
  cases: number;
  errors: number;
  successes: number;
  violations: number;
  firstViolation: string;
  perTarget: Record<string, number>;
  tasksScheduled: number;
  tasksRun: number;
  /** Futures the raw entry points left on frames they accepted (async handlers). */
  futuresLeft: number;
  ms: number;
}

/** Default case count: XLA_FFI_DENO_FUZZ_CASES, else 1 000 000. */
export function fuzzCases(): number {
  const v = Deno.env.get("XLA_FFI_DENO_FUZZ_CASES");
  const n = v === undefined ? 1_000_000 : Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad XLA_FFI_DENO_FUZZ_CASES ${v}`);
  return n;
}

/** Default seed: XLA_FFI_DENO_FUZZ_SEED, else a fixed one. */
export function fuzzSeed(): bigint {
  const v = Deno.env.get("XLA_FFI_DENO_FUZZ_SEED");
  return v === undefined ? 20260101n : BigInt(v);
}

const SYMBOLS = {
  fuzz_run: {
    parameters: ["buffer", "u64", "i64", "buffer", "i32", "buffer", "buffer", "i32"],
    result: "i32",
  },
  fuzz_run_targets: {
    parameters: [
      "buffer",
      "u64",
      "i64",
      "buffer",
      "buffer",
      "i32",
      "u32",
      "i64",
      "buffer",
      "buffer",
      "i32",
    ],
    result: "i32",
  },
} as const;

let lib: Deno.DynamicLibrary<typeof SYMBOLS> | undefined;

function fuzzLibrary() {
  lib ??= Deno.dlopen(
    buildSharedLibrary({
      name: "xrt_fuzz",
      sources: [
        "native/tests/fuzz.c",
        "native/tests/runtime_handlers.c",
        "native/tests/test_handler_util.h",
      ],
    }),
    SYMBOLS,
  );
  return lib;
}

/**
 * What a `raw` handler entry point does with a frame that passes the frame
 * check (native/tests/fuzz.c RAW_*): the fuzzer fails the run when it does
 * otherwise. OK: succeeds or returns a future; FAIL: fails on every frame the
 * fuzzer makes; TYPED, OPTIONAL, THROWS: the predicates of those bindings in
 * tests/_fuzz_handlers.ts. A frame larger than the flat buffer must fail
 * with RESOURCE_EXHAUSTED whatever the handler.
 */
export enum RawExpect {
  OK = 0,
  FAIL = 1,
  TYPED = 2,
  OPTIONAL = 3,
  THROWS = 4,
}

/** Index of the target that feeds mutated frames to the `raw` entry points. */
export const RAW_TARGET = FUZZ_TARGETS.indexOf("handler entry points (raw frames)");

/**
 * Runs `cases` cases from `seed`. `raw` are extra handler entry points (TS
 * handlers) fed mutated frames directly, with what each does with a valid
 * frame (`expect`, one per entry point). `targets`: the target indices to run
 * (default all of them, drawn at random).
 */
export function runFuzz(
  seed: bigint,
  cases: number,
  raw: readonly Deno.PointerObject[] = [],
  targets?: readonly number[],
  expect: readonly RawExpect[] = [],
): FuzzResult {
  if (expect.length !== raw.length) {
    throw new RangeError(`runFuzz: ${raw.length} raw entry points, ${expect.length} expectations`);
  }
  native(); // the runtime library is loaded (fuzz.c resolves it by path)
  const path = new TextEncoder().encode(nativeLibraryPath() + "\0");
  const rawPtrs = new BigUint64Array(raw.map((p) => BigInt(Deno.UnsafePointer.value(p))));
  const rawExpect = new Int32Array(expect);
  const out = new BigInt64Array(32);
  const msg = new Uint8Array(2048);
  const t0 = performance.now();
  const mask = (targets ?? []).reduce((m, t) => (m | (1 << t)) >>> 0, 0);
  const rc = fuzzLibrary().symbols.fuzz_run_targets(
    path,
    seed,
    BigInt(cases),
    rawPtrs,
    rawExpect,
    raw.length,
    mask,
    BigInt(FLAT_SLOTS),
    out,
    msg,
    msg.length,
  );
  const ms = performance.now() - t0;
  const end = msg.indexOf(0);
  const text = new TextDecoder().decode(msg.subarray(0, end < 0 ? msg.length : end));
  if (rc !== 0) throw new Error(`fuzz_run failed: ${text}`);
  const perTarget: Record<string, number> = {};
  FUZZ_TARGETS.forEach((t, i) => perTarget[t] = Number(out[4 + i]));
  return {
    cases: Number(out[0]),
    errors: Number(out[1]),
    successes: Number(out[2]),
    violations: Number(out[3]),
    firstViolation: text,
    perTarget,
    tasksScheduled: Number(out[27]),
    tasksRun: Number(out[28]),
    futuresLeft: Number(out[29]),
    ms,
  };
}

/** Closes the fuzz library (tests call it at the end). */
export function closeFuzzLibrary(): void {
  lib?.close();
  lib = undefined;
}
