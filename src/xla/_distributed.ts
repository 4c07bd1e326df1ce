/**
 * One jax program over several processes: the `distributed` option of
 * `Xla.open` (jax's own distributed runtime, `jax.distributed.initialize`).
 * Checked here before Python sees it, where jax's own client would end the
 * process instead: the options' shapes; that process 0 can bind the
 * coordinator's port; that the others reach it within the timeout; and,
 * through a short handshake on that port before jax serves it, that every
 * process agrees about the job. The Python half (`src/xla/python/distributed.py`) joins the job
 * before jax starts its backend and leaves it when the last host that joined closes.
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
  /**
   * Check, before jax joins, that every process agrees about the job (the
   * process count, distinct ids), through a short exchange on the
   * coordinator's port before jax serves it (default true). Every process
   * must then be started with `Xla.open`; give `false` to every process of a
   * job that also has plain Python processes.
   */
  handshake?: boolean;
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
  handshake: boolean;
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
  if (o.handshake !== undefined && typeof o.handshake !== "boolean") {
    throw bad(`handshake must be a boolean, got ${String(o.handshake)}`);
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
    handshake: o.handshake ?? true,
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

/** One line of JSON (up to `\n`) from a connection, or null at EOF; bounded by `deadline`. */
async function readLine(conn: Deno.Conn, deadline: number): Promise<string | null> {
  const buf = new Uint8Array(4096);
  let text = "";
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed already */ }
  }, Math.max(1, deadline - Date.now()));
  try {
    while (!text.includes("\n")) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return null;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (text.length > 65536) return null;
    }
    return text.slice(0, text.indexOf("\n"));
  } finally {
    clearTimeout(timer);
  }
}

async function writeLine(conn: Deno.Conn, value: unknown): Promise<void> {
  const bytes = new TextEncoder().encode(JSON.stringify(value) + "\n");
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

function closeQuietly(c: Deno.Conn | Deno.Listener): void {
  try {
    c.close();
  } catch { /* closed already */ }
}

/** The greeting of the job handshake: what this process thinks the job is. */
interface Hello {
  deno_xla_job: 1;
  numProcesses: number;
  processId: number;
}

/**
 * Before jax joins the job, checks what jax would end the process for:
 * with the handshake (default), process 0 listens on the coordinator's port
 * until every other process has said which job it thinks it is in, checks
 * they agree (the process count, distinct ids), answers each, and only then
 * lets jax serve the port; a disagreement or a process that never comes is
 * an FfiError in every process that came. The other processes wait (up to
 * the timeout) for process 0 to answer. Without the handshake only the
 * reachability of the coordinator (and process 0's port) is checked.
 */
export async function _rendezvous(r: _DistributedRequest): Promise<void> {
  const { host, port } = _splitAddress(r.coordinator, "coordinator");
  const deadline = Date.now() + r.timeoutS * 1000;
  if (r.processId === 0) {
    const bindHost = r.bindAddress ? _splitAddress(r.bindAddress, "bindAddress").host : "0.0.0.0";
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ hostname: bindHost, port });
    } catch (e) {
      throw netError(e, `binding ${bindHost}:${port}`) ?? new FfiError(
        ErrorCode.UNAVAILABLE,
        `distributed: process 0 serves the coordinator but cannot bind ${bindHost}:${port} ` +
          `(${(e as Error).message}); choose a free port`,
        { cause: e },
      );
    }
    if (!r.handshake || r.numProcesses === 1) return closeQuietly(listener);
    await greetAll(listener, r, deadline);
    return;
  }
  let conn: Deno.Conn | undefined;
  let last = "";
  for (;;) {
    try {
      conn = await Deno.connect({ hostname: host, port });
      break;
    } catch (e) {
      const denied = netError(e, `connecting to ${r.coordinator}`);
      if (denied) throw denied;
      last = (e as Error).message;
    }
    if (Date.now() >= deadline) {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `distributed: no coordinator answered at ${r.coordinator} within ${r.timeoutS} s ` +
          `(process ${r.processId} of ${r.numProcesses}; last error: ${last}): start process 0 ` +
          `with the same coordinator address, or raise timeoutMs`,
      );
    }
    await sleep(Math.min(200, Math.max(1, deadline - Date.now())));
  }
  if (!r.handshake) return closeQuietly(conn);
  try {
    const hello: Hello = { deno_xla_job: 1, numProcesses: r.numProcesses, processId: r.processId };
    await writeLine(conn, hello);
    // Process 0 answers when every process has come, or at its own deadline: wait longer.
    const line = await readLine(conn, deadline + r.timeoutS * 1000);
    let answer: { ok?: boolean; code?: string; error?: string } | null = null;
    try {
      answer = line === null ? null : JSON.parse(line);
    } catch { /* not the handshake */ }
    if (answer === null || typeof answer !== "object") {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `distributed: the coordinator at ${r.coordinator} did not answer the job handshake ` +
          `(process ${r.processId} of ${r.numProcesses}): is the job already running without ` +
          `this process, or was process 0 not started with Xla.open (then give every process ` +
          `handshake: false)?`,
      );
    }
    if (answer.ok !== true) {
      const code = (ErrorCode as unknown as Record<string, number>)[answer.code ?? ""] ??
        ErrorCode.FAILED_PRECONDITION;
      throw new FfiError(code, `distributed: ${String(answer.error)}`);
    }
  } finally {
    closeQuietly(conn);
  }
}

/** Process 0's half of the handshake; closes the listener (and every connection) when done. */
async function greetAll(
  listener: Deno.Listener,
  r: _DistributedRequest,
  deadline: number,
): Promise<void> {
  const held = new Map<number, Deno.Conn>(); // processId -> its connection, awaiting the answer
  let failure: FfiError | undefined;
  const timer = setTimeout(() => closeQuietly(listener), Math.max(1, deadline - Date.now()));
  const greet = async (conn: Deno.Conn) => {
    const line = await readLine(conn, deadline);
    let hello: Partial<Hello> | null = null;
    try {
      hello = line === null ? null : JSON.parse(line);
    } catch { /* not a process of the job */ }
    if (hello === null || typeof hello !== "object" || hello.deno_xla_job !== 1) {
      return closeQuietly(conn); // something else knocked: not counted
    }
    let error: string | undefined;
    if (hello.numProcesses !== r.numProcesses) {
      error = `the processes disagree about the job: process ${hello.processId} says ` +
        `numProcesses ${hello.numProcesses}, process 0 says ${r.numProcesses}`;
    } else if (!isIndex(hello.processId) || hello.processId < 1) {
      error = `process id ${hello.processId} is not one of 1..${r.numProcesses - 1}`;
    } else if (held.has(hello.processId)) {
      error = `two processes say they are process ${hello.processId} of ${r.numProcesses}`;
    }
    if (error !== undefined) {
      failure ??= new FfiError(ErrorCode.INVALID_ARGUMENT, `distributed: ${error}`);
      await writeLine(conn, { ok: false, code: "INVALID_ARGUMENT", error }).catch(() => {});
      closeQuietly(conn);
      closeQuietly(listener); // the job cannot start: stop waiting for the others
      return;
    }
    held.set(hello.processId!, conn);
    if (held.size === r.numProcesses - 1) closeQuietly(listener);
  };
  const greetings: Promise<void>[] = [];
  try {
    for await (const conn of listener) greetings.push(greet(conn));
  } catch { /* the listener was closed */ }
  clearTimeout(timer);
  await Promise.all(greetings);
  if (failure === undefined && held.size < r.numProcesses - 1) {
    const missing = Array.from({ length: r.numProcesses - 1 }, (_, i) => i + 1)
      .filter((id) => !held.has(id));
    failure = new FfiError(
      ErrorCode.DEADLINE_EXCEEDED,
      `distributed: only ${held.size + 1} of ${r.numProcesses} processes joined within ` +
        `${r.timeoutS} s (missing process ${missing.join(", ")}): start every process with ` +
        `the same coordinator and numProcesses, or raise timeoutMs`,
    );
  }
  const answer = failure === undefined
    ? { ok: true }
    : { ok: false, code: failure.codeName, error: failure.message.replace(/^distributed: /, "") };
  await Promise.all([...held.values()].map(async (conn) => {
    await writeLine(conn, answer).catch(() => {});
    // The peer closes first (its socket, not this port, waits out TIME_WAIT); then this side.
    await readLine(conn, Date.now() + 2000).catch(() => null);
    closeQuietly(conn);
  }));
  if (failure !== undefined) throw failure;
}
