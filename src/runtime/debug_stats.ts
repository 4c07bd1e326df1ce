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
export type RuntimeStats = Record<(typeof NAMES)[number], number>;

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
  native().xrt_debug_stats(out, NAMES.length);
  const stats = {} as RuntimeStats;
  NAMES.forEach((n, i) => stats[n] = Number(out[i]));
  return stats;
}
