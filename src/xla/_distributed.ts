/**
 * One jax program over several processes: the `distributed` option of
 * `Xla.open` (jax's own distributed runtime, `jax.distributed.initialize`).
 * Checked here before Python sees it: the options' shapes, and, for a
 * process other than the coordinator, that something answers at the
 * coordinator's address within the timeout (jax's own client would end the
 * process when it cannot connect); for the coordinator, that its port can be
 * bound. The Python half (`DISTRIBUTED_SOURCE`) joins the job before jax
 * starts its backend and leaves it when the last host that joined closes.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";

/** Collectives of jax's CPU backend across processes (`jax_cpu_collectives_implementation`). */
export type CpuCollectives = "gloo" | "mpi" | "none";

/**
 * The `distributed` option of `Xla.open`: this process's place in a job of
 * several processes that run one jax program (`jax.distributed.initialize`).
 * Every process of the job passes the same `coordinator` and `numProcesses`
 * and its own `processId`; process 0 also runs the coordination service.
 *
 * @example
 * ```ts ignore
 * import { Xla } from "@deno-xla/ffi/xla";
 * const processId = Number(Deno.args[0]); // 0 or 1, one per process
 * await using xla = await Xla.open({
 *   distributed: { coordinator: "127.0.0.1:12355", numProcesses: 2, processId },
 * });
 * console.log(xla.distributed); // { processIndex: 0, processCount: 2, ... }
 * ```
 */
export interface DistributedOptions {
  /** `host:port` of the coordination service (process 0 serves it), e.g. `"127.0.0.1:12355"`. */
  coordinator: string;
  /** Processes in the job (an integer ≥ 1). */
  numProcesses: number;
  /** This process's index in the job, `0 ≤ processId < numProcesses`. */
  processId: number;
  /**
   * How long (ms, default 60 000) joining the job may take (the coordinator
   * answering, every process registering), after which a silent process
   * counts as dead (jax's heartbeat timeout), and how long leaving it at
   * close may wait for the others. jax counts whole seconds: rounded up.
   */
  timeoutMs?: number;
  /**
   * The local devices this process uses (jax's `local_device_ids`; on GPU
   * the visible devices); default all.
   */
  localDeviceIds?: readonly number[];
  /**
   * The address process 0's service binds: default the coordinator address
   * when its host is a loopback address (the job stays on this machine),
   * else jax's default (`[::]:port`, every interface).
   */
  bindAddress?: string;
  /** Cross-process collectives of the CPU backend (default `"gloo"`). */
  cpuCollectives?: CpuCollectives;
}

/** Where this process stands in its job (`Xla.distributed`). */
export interface DistributedInfo {
  /** `jax.process_index()`. */
  readonly processIndex: number;
  /** `jax.process_count()`. */
  readonly processCount: number;
  /** Devices of this process (`jax.local_device_count()`). */
  readonly localDeviceCount: number;
  /** Devices of the whole job (`jax.device_count()`). */
  readonly globalDeviceCount: number;
  /** The coordinator's address. */
  readonly coordinator: string;
}

/** What the Python half receives: checked, defaults filled. */
export interface _DistributedRequest {
  coordinator: string;
  numProcesses: number;
  processId: number;
  timeoutS: number;
  localDeviceIds: number[] | null;
  bindAddress: string | null;
  cpuCollectives: CpuCollectives;
}

const DEFAULT_TIMEOUT_MS = 60_000;

function bad(message: string): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, `distributed: ${message}`);
}

function isIndex(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** `host:port` split (IPv6 hosts in brackets); throws INVALID_ARGUMENT naming `what`. */
export function _splitAddress(address: unknown, what: string): { host: string; port: number } {
  const m = typeof address === "string"
    ? /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(address)
    : null;
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 1 && port <= 65535)) {
    throw bad(`${what} must be 'host:port' with a port 1-65535, got ${JSON.stringify(address)}`);
  }
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port };
}

/** Whether a host name or address is this machine's loopback. */
export function _isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Checks the option and fills its defaults; throws FfiError INVALID_ARGUMENT. */
export function _distributedRequest(o: DistributedOptions): _DistributedRequest {
  if (o === null || typeof o !== "object") {
    throw bad("expected { coordinator, numProcesses, processId }");
  }
  const { host } = _splitAddress(o.coordinator, "coordinator");
  if (!isIndex(o.numProcesses) || o.numProcesses < 1) {
    throw bad(`numProcesses must be an integer >= 1, got ${String(o.numProcesses)}`);
  }
  if (!isIndex(o.processId) || o.processId >= o.numProcesses) {
    throw bad(
      `processId must be an integer in [0, ${o.numProcesses - 1}] (numProcesses ` +
        `${o.numProcesses}), got ${String(o.processId)}`,
    );
  }
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw bad(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  let ids: number[] | null = null;
  if (o.localDeviceIds !== undefined) {
    if (!Array.isArray(o.localDeviceIds) || !o.localDeviceIds.every(isIndex)) {
      throw bad("localDeviceIds must be an array of device ordinals (integers >= 0)");
    }
    ids = [...o.localDeviceIds];
  }
  let bind: string | null = null;
  if (o.bindAddress !== undefined) {
    _splitAddress(o.bindAddress, "bindAddress");
    bind = o.bindAddress;
  } else if (_isLoopback(host)) {
    bind = o.coordinator;
  }
  const collectives = o.cpuCollectives ?? "gloo";
  if (!["gloo", "mpi", "none"].includes(collectives)) {
    throw bad(`cpuCollectives must be "gloo", "mpi" or "none", got ${String(collectives)}`);
  }
  return {
    coordinator: o.coordinator,
    numProcesses: o.numProcesses,
    processId: o.processId,
    timeoutS: Math.max(1, Math.ceil(timeoutMs / 1000)),
    localDeviceIds: ids,
    bindAddress: bind,
    cpuCollectives: collectives,
  };
}

function netError(e: unknown, what: string): FfiError | undefined {
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    return new FfiError(
      ErrorCode.PERMISSION_DENIED,
      `distributed: ${what} needs --allow-net (${(e as Error).message})`,
      { cause: e },
    );
  }
  return undefined;
}

let joined = false;

/** Records that this process joined a job (its Python decides what a later open may do). */
export function _markJoined(): void {
  joined = true;
}

/** Whether this process already joined a job (then its port is its own service's). */
export function _inJob(): boolean {
  return joined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Before jax joins the job, fails fast and clearly where jax would end the
 * process: process 0 checks that it can bind the service's port; the others
 * wait (up to the timeout) until something accepts connections at the
 * coordinator's address.
 */
export async function _checkReachable(r: _DistributedRequest): Promise<void> {
  const { host, port } = _splitAddress(r.coordinator, "coordinator");
  if (r.processId === 0) {
    const bindHost = r.bindAddress ? _splitAddress(r.bindAddress, "bindAddress").host : "0.0.0.0";
    try {
      Deno.listen({ hostname: bindHost, port }).close();
    } catch (e) {
      throw netError(e, `binding ${bindHost}:${port}`) ?? new FfiError(
        ErrorCode.UNAVAILABLE,
        `distributed: process 0 serves the coordinator but cannot bind ${bindHost}:${port} ` +
          `(${(e as Error).message}); choose a free port`,
        { cause: e },
      );
    }
    return;
  }
  const deadline = Date.now() + r.timeoutS * 1000;
  let last = "";
  for (;;) {
    try {
      (await Deno.connect({ hostname: host, port })).close();
      return;
    } catch (e) {
      const denied = netError(e, `connecting to ${r.coordinator}`);
      if (denied) throw denied;
      last = (e as Error).message;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(200, Math.max(1, deadline - Date.now())));
  }
  throw new FfiError(
    ErrorCode.UNAVAILABLE,
    `distributed: no coordinator answered at ${r.coordinator} within ${r.timeoutS} s ` +
      `(process ${r.processId} of ${r.numProcesses}; last error: ${last}): start process 0 ` +
      `with the same coordinator address, or raise timeoutMs`,
  );
}

/**
 * Python half, run in the hosted interpreter's `__main__` after the bridge:
 * `_deno_xla_distributed_join(jax, cfg)` before jax starts its backend, and
 * `_deno_xla_distributed_leave(host_id)` when a host closes.
 */
export const DISTRIBUTED_SOURCE: string = String.raw`
_deno_xla_job = {"cfg": None, "hosts": set(), "ended": False}

def _deno_xla_distributed_key(cfg):
    return (cfg["coordinator"], cfg["numProcesses"], cfg["processId"],
            tuple(cfg["localDeviceIds"] or ()))

def _deno_xla_distributed_join(jax, cfg, started):
    """Joins the job before the backend starts; returns the process's place in it."""
    job = _deno_xla_job
    if job["ended"]:
        raise RuntimeError("FAILED_PRECONDITION: this process left its distributed jax job "
                           "(its last distributed Xla host closed); jax cannot join another: "
                           "start a new process")
    if cfg is None:
        return None if job["cfg"] is None else job["cfg"]
    if job["cfg"] is not None:
        if _deno_xla_distributed_key(job["cfg"]) != _deno_xla_distributed_key(cfg):
            raise RuntimeError("FAILED_PRECONDITION: this process already is process %d of %d "
                               "with coordinator %s; one distributed job per process"
                               % (job["cfg"]["processId"], job["cfg"]["numProcesses"],
                                  job["cfg"]["coordinator"]))
        return job["cfg"]
    if started:
        raise RuntimeError("FAILED_PRECONDITION: jax already started its backend in this "
                           "process without the distributed option; it must be given to the "
                           "first Xla.open of the process")
    if cfg["cpuCollectives"] != "none":
        jax.config.update("jax_cpu_collectives_implementation", cfg["cpuCollectives"])
    kw = {}
    if cfg["bindAddress"]:
        kw["coordinator_bind_address"] = cfg["bindAddress"]
    if cfg["localDeviceIds"] is not None:
        kw["local_device_ids"] = list(cfg["localDeviceIds"])
    t = int(cfg["timeoutS"])
    jax.distributed.initialize(coordinator_address=cfg["coordinator"],
                               num_processes=int(cfg["numProcesses"]),
                               process_id=int(cfg["processId"]),
                               initialization_timeout=t, heartbeat_timeout_seconds=t,
                               shutdown_timeout_seconds=t, **kw)
    job["cfg"] = cfg
    return cfg

def _deno_xla_distributed_info(jax, hid):
    job = _deno_xla_job
    if job["cfg"] is None:
        return None
    job["hosts"].add(hid)
    return {"processIndex": jax.process_index(), "processCount": jax.process_count(),
            "localDeviceCount": jax.local_device_count(),
            "globalDeviceCount": jax.device_count(), "coordinator": job["cfg"]["coordinator"]}

def _deno_xla_distributed_leave(jax, hid):
    """Leaves the job (a barrier with the other processes) when its last host closes."""
    job = _deno_xla_job
    if hid not in job["hosts"]:
        return
    job["hosts"].discard(hid)
    if not job["hosts"] and not job["ended"]:
        job["ended"] = True
        jax.distributed.shutdown()
`;
