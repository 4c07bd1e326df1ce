/**
 * The Python the real-XLA host runs once in the hosted interpreter's
 * `__main__` (`xla_ffi_deno_py_run` mode 0). The Python itself lives in
 * `src/xla/python/` (`bridge.py`: the request dispatcher; `distributed.py`:
 * joining and leaving a job of several processes) and reaches this module
 * through `src/xla/_python.generated.ts`, which `deno task embed` writes: no
 * file is read at run time. The source ends by calling `_deno_xla_bridge`
 * with the NumPy names of the data types (from `native/abi_facts.h`) and
 * keeping the dispatcher it returns as `_deno_xla_dispatch`, which every
 * later request calls (mode 1; requests typed in `src/xla/_protocol.ts`).
 *
 * @module
 */
import { _DATA_TYPE_FACTS } from "../abi/_facts.generated.ts";
import { BRIDGE_PY, DISTRIBUTED_PY } from "./_python.generated.ts";

/** A Python dict literal of the data types of one NumPy module: value -> type name. */
function pyNames(module: "numpy" | "ml_dtypes"): string {
  const rows = _DATA_TYPE_FACTS.filter((f) => f.module === module);
  return `{${rows.map((f) => `${f.value}: "${f.numpy}"`).join(", ")}}`;
}

/** Python source of the bridge, its distributed half, and the call that makes the dispatcher. */
export const BRIDGE_SOURCE: string = [
  BRIDGE_PY,
  DISTRIBUTED_PY,
  `_deno_xla_dispatch = _deno_xla_bridge(${pyNames("numpy")}, ${pyNames("ml_dtypes")})`,
  "del _deno_xla_bridge",
  "",
].join("\n");
