/**
 * Counters of native objects the runtime created and destroyed, for leak
 * checks in tests.
 *
 * @module
 */
import { native } from "../native/lib.ts";

const NAMES = [
  "errorsCreated",
  "errorsDestroyed",
  "futuresCreated",
  "futuresDestroyed",
  "framesCreated",
  "framesDestroyed",
  "statesSet",
  "statesDeleted",
  "instancesCreated",
  "instancesDestroyed",
  "runtimesCreated",
  "runtimesDestroyed",
  "tasksScheduled",
  "tasksRun",
  "calls",
] as const;

/** Process-wide counts of the runtime's native objects. */
export interface RuntimeStats {
  /** XLA_FFI_Errors created (by handlers or the runtime). */
  errorsCreated: number;
  /** XLA_FFI_Errors destroyed. */
  errorsDestroyed: number;
  /** XLA_FFI_Futures created. */
  futuresCreated: number;
  /** XLA_FFI_Futures released. */
  futuresDestroyed: number;
  /** Call frames built. */
  framesCreated: number;
  /** Call frames freed. */
  framesDestroyed: number;
  /** States set with State_Set. */
  statesSet: number;
  /** States deleted with their instance. */
  statesDeleted: number;
  /** Handler instances created. */
  instancesCreated: number;
  /** Handler instances closed. */
  instancesDestroyed: number;
  /** Runtimes created. */
  runtimesCreated: number;
  /** Runtimes closed. */
  runtimesDestroyed: number;
  /** Thread-pool tasks scheduled. */
  tasksScheduled: number;
  /** Thread-pool tasks run. */
  tasksRun: number;
  /** Handler calls made by the runtime. */
  calls: number;
}

/**
 * Reads the runtime's process-wide debug counters (cheap; for tests).
 *
 * @example
 * ```ts
 * import { runtimeDebugStats } from "@deno-xla/ffi";
 * const s = runtimeDebugStats();
 * console.log(s.framesCreated >= s.framesDestroyed); // true
 * ```
 */
export function runtimeDebugStats(): RuntimeStats {
  const out = new BigInt64Array(NAMES.length);
  native().xla_ffi_deno_runtime_debug_stats(out, NAMES.length);
  const stats = {} as Record<string, number>;
  NAMES.forEach((n, i) => stats[n] = Number(out[i]));
  return stats as unknown as RuntimeStats;
}
