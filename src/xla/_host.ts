/**
 * The process-wide Python host: loads and initialises the interpreter once
 * (off the JS thread), installs the bridge, and sends requests to it. Every
 * request is one `nonblocking` native call that waits while Python runs, GIL
 * held, on one of the host's worker threads (`native/python_host.c`: kept
 * for the life of the process), so the JS thread stays free for TS handlers
 * that XLA calls meanwhile, from any thread.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _closeCall, _nativeError, _openCall, FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";
import { BRIDGE_SOURCE } from "./_bridge_py.ts";
import { type _Arg, _decodeReply, _encodeRequest, type _Reply } from "./_codec.ts";
import type {
  _ErrorReply,
  _Op,
  _PendingReply,
  _ReplyHeaders,
  _RequestOf,
  _ResultsReply,
} from "./_protocol.ts";
import type { PythonInfo } from "./interpreter.ts";

/**
 * An error raised in the hosted Python (jax, XLA, a program's source or a
 * handler XLA called): an {@link FfiError} whose code comes from XLA's status
 * (`FAILED_PRECONDITION: …`) or from the kind of Python exception, with the
 * Python exception's type and traceback.
 *
 * @example
 * ```ts ignore
 * import { PythonError } from "@deno-xla/ffi/xla";
 * try {
 *   await xla.jit("def f(x): return undefined_name(x)", { args: [{ dtype: DataType.F32, shape: [2] }] });
 * } catch (e) {
 *   if (e instanceof PythonError) console.log(e.pythonType, e.codeName); // NameError INVALID_ARGUMENT
 * }
 * ```
 */
export class PythonError extends FfiError {
  /** The Python exception's class name, e.g. `"JaxRuntimeError"`. */
  readonly pythonType: string;
  /** The formatted Python traceback (never printed unless the host asked for it). */
  readonly traceback: string;

  /**
   * Makes an error from a Python exception's parts.
   *
   * @param code the error code
   * @param message the message
   * @param pythonType the exception's class name
   * @param traceback the formatted traceback
   */
  constructor(code: ErrorCode, message: string, pythonType: string, traceback: string) {
    super(code, message);
    this.name = "PythonError";
    this.pythonType = pythonType;
    this.traceback = traceback;
  }
}

const BY_TYPE: Readonly<Record<string, ErrorCode>> = {
  ModuleNotFoundError: ErrorCode.UNAVAILABLE,
  ImportError: ErrorCode.UNAVAILABLE,
  TypeError: ErrorCode.INVALID_ARGUMENT,
  ValueError: ErrorCode.INVALID_ARGUMENT,
  SyntaxError: ErrorCode.INVALID_ARGUMENT,
  IndentationError: ErrorCode.INVALID_ARGUMENT,
  NameError: ErrorCode.INVALID_ARGUMENT,
  AttributeError: ErrorCode.INVALID_ARGUMENT,
  KeyError: ErrorCode.INVALID_ARGUMENT,
  IndexError: ErrorCode.INVALID_ARGUMENT,
  NotImplementedError: ErrorCode.UNIMPLEMENTED,
  MemoryError: ErrorCode.RESOURCE_EXHAUSTED,
};

/** The FfiError of an error reply (read defensively: any field may be missing). */
export function _pythonError(h: Readonly<Partial<_ErrorReply>>): PythonError {
  const type = String(h.type ?? "Exception");
  let message = String(h.message ?? "");
  const traceback = String(h.traceback ?? "");
  const coded = typeof h.code === "number" ? _nativeError(h.code, message) : undefined;
  if (coded !== undefined) return new PythonError(coded.code, coded.message, type, traceback);
  // XLA statuses read "CODE: message" (absl::Status::ToString).
  const m = /^([A-Z_]+): /.exec(message);
  const named = m ? (ErrorCode as unknown as Record<string, number>)[m[1]!] : undefined;
  if (named !== undefined && named !== ErrorCode.OK) {
    return new PythonError(named, message.slice(m![0].length), type, traceback);
  }
  const code = BY_TYPE[type] ?? ErrorCode.UNKNOWN;
  message = message === "" ? type : `${type}: ${message}`;
  return new PythonError(code, message, type, traceback);
}

let hosted: { library: string; ready: Promise<void> } | undefined;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function cString(s: string): Uint8Array<ArrayBuffer> {
  const b = encoder.encode(s);
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
}

function replyText(reply: Uint8Array): string {
  const len = new DataView(reply.buffer).getUint32(4, true);
  return decoder.decode(reply.subarray(16, 16 + Math.min(len, reply.length - 16)));
}

/**
 * Loads and initialises the interpreter `info` describes, once per process,
 * and installs the bridge. A second call with another libpython fails: one
 * interpreter per process.
 */
export function _hostPython(info: PythonInfo): Promise<void> {
  const library = info.library!;
  if (hosted !== undefined) {
    if (hosted.library !== library) {
      return Promise.reject(
        new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          `Python is already hosted in this process from ${hosted.library}; one interpreter ` +
            `per process (asked for ${library})`,
        ),
      );
    }
    return hosted.ready;
  }
  const ready = (async () => {
    const lib = native();
    const reply = new Uint8Array(65536);
    const rc = await lib.xla_ffi_deno_py_init(
      cString(library),
      cString(info.home),
      reply,
      BigInt(reply.length),
    );
    if (rc < 0) throw new FfiError(ErrorCode.UNAVAILABLE, replyText(reply));
    const src = encoder.encode(BRIDGE_SOURCE);
    const rb = await lib.xla_ffi_deno_py_run(
      0,
      src,
      BigInt(src.length),
      reply,
      BigInt(reply.length),
    );
    if (rb !== 0) throw new FfiError(ErrorCode.INTERNAL, replyText(reply));
  })();
  const entry = { library, ready };
  hosted = entry;
  ready.catch(() => {
    if (hosted === entry) hosted = undefined; // a later open may try again
  });
  return ready;
}

/** Requests running on the host's workers now (sent, not yet answered). */
let inFlight = 0;

async function send(mode: number, req: Uint8Array, cap: number): Promise<_Reply> {
  const reply = new Uint8Array(cap);
  return checked(await run(mode, req, BigInt(req.length), reply, BigInt(cap)), reply);
}

/** Runs a request on a worker, counted in {@link inFlight} meanwhile. */
async function run(
  mode: number,
  req: Uint8Array,
  len: bigint,
  reply: Uint8Array,
  cap: bigint,
): Promise<number> {
  inFlight++;
  try {
    return await native().xla_ffi_deno_py_run(
      mode,
      req as Uint8Array<ArrayBuffer>,
      len,
      reply as Uint8Array<ArrayBuffer>,
      cap,
    );
  } finally {
    inFlight--;
  }
}

/** The same request, run by Python on the JS thread (a synchronous FFI call). */
function sendSync(mode: number, req: Uint8Array, cap: number): _Reply {
  const reply = new Uint8Array(cap);
  const rc = native().xla_ffi_deno_py_run_sync(
    mode,
    req as Uint8Array<ArrayBuffer>,
    BigInt(req.length),
    reply,
    BigInt(reply.length),
  );
  return checked(rc, reply);
}

/** Status of a prepared call's reply whose results were written in place (`bridge.py`). */
const WRITTEN = 4;

/**
 * Sends a prepared call (`_prepared.ts`: a binary request of `len` bytes
 * naming a plan and the addresses of its arguments and results) to a worker;
 * resolves to null when the bridge wrote the results in place, else to its
 * results reply. Errors as {@link _request}.
 */
export async function _callPrepared(
  req: Uint8Array,
  len: bigint,
  reply: Uint8Array,
  cap: bigint,
  status: Int32Array,
): Promise<_Reply<_ResultsReply> | null> {
  const mark = _openCall();
  let r: _Reply;
  try {
    const rc = await run(1, req, len, reply, cap);
    if (rc === 0 && status[0] === WRITTEN) {
      _closeCall(mark);
      return null;
    }
    r = checked(rc, reply);
    if (r.status === 2) {
      r = await send(1, _encodeRequest({ op: "take", token: pendingToken(r) }), r.need);
    }
  } catch (e) {
    _closeCall(mark);
    throw e;
  }
  return answered(r, mark) as _Reply<unknown> as _Reply<_ResultsReply>;
}

/** {@link _callPrepared} run by Python on the JS thread, as {@link _requestSync}. */
export function _callPreparedSync(
  req: Uint8Array,
  len: bigint,
  reply: Uint8Array,
  cap: bigint,
  status: Int32Array,
): _Reply<_ResultsReply> | null {
  refuseWhileInFlight();
  const mark = _openCall();
  const rc = preparedHere(false, req, len, reply, cap, mark);
  if (rc === 0 && status[0] === WRITTEN) {
    _closeCall(mark);
    return null;
  }
  return answeredHere(rc, reply, mark);
}

/**
 * Runs a prepared call's request in Python on the JS thread: as `runSync`
 * runs it, or as the dispatch of `run` and `ffiCall` (`dispatch`, whose
 * refusals name those calls); closes the call opened at `mark` if the
 * native call throws.
 */
function preparedHere(
  dispatch: boolean,
  req: Uint8Array,
  len: bigint,
  reply: Uint8Array,
  cap: bigint,
  mark: number,
): number {
  const r = req as Uint8Array<ArrayBuffer>, out = reply as Uint8Array<ArrayBuffer>;
  try {
    return dispatch
      ? native().xla_ffi_deno_py_dispatch_sync(r, len, out, cap)
      : native().xla_ffi_deno_py_run_sync(1, r, len, out, cap);
  } catch (e) {
    _closeCall(mark);
    throw e;
  }
}

/**
 * The reply of a prepared call Python answered on the JS thread without
 * writing its results in place (results of other types, or an error),
 * taken whole when it did not fit; closes the call opened at `mark`.
 */
function answeredHere(rc: number, reply: Uint8Array, mark: number): _Reply<_ResultsReply> {
  let r: _Reply;
  try {
    r = checked(rc, reply);
    if (r.status === 2) {
      r = sendSync(1, _encodeRequest({ op: "take", token: pendingToken(r) }), r.need);
    }
  } catch (e) {
    _closeCall(mark);
    throw e;
  }
  return answered(r, mark) as _Reply<unknown> as _Reply<_ResultsReply>;
}

/** Statuses of a prepared call dispatched on the JS thread (`bridge.py`, DISPATCH). */
const DISPATCHED = 5, NOT_DISPATCHED = 6;

/**
 * Dispatches a prepared call (its request flagged DISPATCH) on the JS
 * thread, as a jitted function's call starts in Python: resolves at once
 * when its results are ready and written in place (XLA ran a cheap program
 * inline), else waits on a worker for the rest (the request sent again,
 * flagged FINISH: `finish` sets the flag). Resolves to `undefined`, without
 * running anything, when the call must go to a worker: requests of the host
 * are running there (one could hold the GIL while waiting for the JS
 * thread), or to `false` when the program calls a target that goes to a
 * worker (a TS one, or one registered offThread: the bridge says so, and a
 * plan's program never stops doing so, as registrations are permanent); the
 * caller then sends it with {@link _callPrepared}. Errors as {@link _callPrepared}.
 */
export function _dispatchPrepared(
  req: Uint8Array,
  len: bigint,
  reply: Uint8Array,
  cap: bigint,
  status: Int32Array,
  finish: () => void,
):
  | Promise<_Reply<_ResultsReply> | null>
  | _Reply<_ResultsReply>
  | null
  | undefined
  | false {
  if (inFlight > 0) return undefined;
  const mark = _openCall();
  const rc = preparedHere(true, req, len, reply, cap, mark);
  const s = rc === 0 ? status[0] : -1;
  if (s === WRITTEN || s === NOT_DISPATCHED || s === DISPATCHED) {
    _closeCall(mark);
    if (s !== DISPATCHED) return s === WRITTEN ? null : false;
    finish();
    return _callPrepared(req, len, reply, cap, status);
  }
  return answeredHere(rc, reply, mark);
}

function checked(rc: number, reply: Uint8Array): _Reply {
  const r = _decodeReply(reply);
  if (rc !== 0 || r.status === 3) {
    throw new FfiError(ErrorCode.INTERNAL, r.text || "The Python host failed");
  }
  return r;
}

/**
 * Ends the process as Ctrl-C ends a Deno program (exit status 130 = 128 +
 * SIGINT). Python, once hosted, catches SIGINT while it runs (importing jax
 * installs its handler) and raises KeyboardInterrupt in the running request;
 * turned into a catchable error, the user's Ctrl-C would be lost.
 */
function _interrupted(): never {
  Deno.exit(130);
}

/**
 * Sends one request to the bridge and returns its reply (status 0); a
 * Python error becomes a {@link PythonError}. `cap` is the first reply
 * buffer's size: a reply that does not fit is fetched again at its size.
 */
export async function _request<O extends _Op>(
  header: _RequestOf<O>,
  args: readonly _Arg[] = [],
  cap = 65536,
): Promise<_Reply<_ReplyHeaders[O]>> {
  const mark = _openCall();
  let r: _Reply;
  try {
    r = await send(1, _encodeRequest(header, args), Math.max(cap, 4096));
    if (r.status === 2) {
      r = await send(1, _encodeRequest({ op: "take", token: pendingToken(r) }), r.need);
    }
  } catch (e) {
    _closeCall(mark);
    throw e;
  }
  return answered(r, mark) as _Reply<_ReplyHeaders[O]>;
}

/**
 * {@link _request} with Python run on the JS thread, synchronously: XLA runs
 * a cheap program inline on the thread that calls it, so TS handlers it
 * calls run inline here, without a hand-off to the JS thread. Refused while
 * requests run on the workers: one of them may hold the GIL while it waits
 * for the JS thread.
 */
export function _requestSync<O extends _Op>(
  header: _RequestOf<O>,
  args: readonly _Arg[] = [],
  cap = 65536,
): _Reply<_ReplyHeaders[O]> {
  refuseWhileInFlight();
  const mark = _openCall();
  let r: _Reply;
  try {
    r = sendSync(1, _encodeRequest(header, args), Math.max(cap, 4096));
    if (r.status === 2) {
      r = sendSync(1, _encodeRequest({ op: "take", token: pendingToken(r) }), r.need);
    }
  } catch (e) {
    _closeCall(mark);
    throw e;
  }
  return answered(r, mark) as _Reply<_ReplyHeaders[O]>;
}

/** A synchronous run is refused while requests run on the workers. */
function refuseWhileInFlight(): void {
  if (inFlight > 0) {
    throw new FfiError(
      ErrorCode.FAILED_PRECONDITION,
      `A synchronous Python run cannot start while ${inFlight} asynchronous ` +
        `request${inFlight === 1 ? "" : "s"} of the Python host ` +
        `${inFlight === 1 ? "runs" : "run"} (they may hold the GIL while waiting for the JS ` +
        `thread); await them first`,
    );
  }
}

/** The token of a reply that did not fit (status 2), for the `take` that fetches it. */
function pendingToken(r: _Reply): number {
  return (r as _Reply<unknown> as _Reply<_PendingReply>).header!.pending;
}

/** The reply of the request opened at `mark` ({@link _openCall}), or its error. */
function answered(r: _Reply, mark: number): _Reply {
  if (r.status === 1) {
    const error = (r as _Reply<unknown> as _Reply<_ErrorReply>).header!;
    if (error.interrupted === true) {
      _closeCall(mark);
      _interrupted();
    }
    // An error a TS handler's thrown value became, during this request, carries that value
    // as its cause.
    throw _closeCall(mark, _pythonError(error))!;
  }
  _closeCall(mark);
  if (r.status !== 0) {
    throw new FfiError(ErrorCode.INTERNAL, `Unexpected reply status ${r.status} from Python`);
  }
  return r;
}
