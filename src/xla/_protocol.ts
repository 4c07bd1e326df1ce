/**
 * The requests the real-XLA host sends to the Python bridge
 * (`src/xla/python/bridge.py`, its `OPS` table) and the headers of the
 * replies, one type each. The wire format is `src/xla/_codec.ts`'s: the
 * request types here are the JSON header before the codec adds `args` (the
 * specs of the arrays sent with it); a reply's header is the JSON the
 * dispatcher writes. `_request` and `_requestSync` (`_host.ts`) and
 * `Xla._request` take a {@link _Request} and resolve to the reply header of
 * its op ({@link _ReplyOf}), so a misspelled op or field fails `deno check`.
 *
 * To add a request: an interface here (with `op` its key in `OPS`, and
 * `host` when it belongs to one host), a member of {@link _Request}, its
 * reply header in {@link _ReplyHeaders}, and its key in
 * {@link _REQUEST_OPS}; then `op_<name>(h, mv)` in `bridge.py` and its entry
 * in `OPS`, and `deno task embed`. `tests/xla_bridge_py_test.ts` checks the two
 * tables of ops agree.
 *
 * @module
 */
import type { _DistributedRequest, DistributedInfo } from "./_distributed.ts";
import type { _AttrJson } from "./_codec.ts";
import type { _HandlersReply } from "./modules.ts";

/** An array's element type and dimensions, as the bridge reads and writes them. */
export interface _SpecJson {
  dtype: number;
  shape: number[];
}

// ---- requests of the process --------------------------------------------------------

/** Imports jax (the first time) and opens a host: its namespace, programs and caches. */
export interface _InitRequest {
  op: "init";
  /** Environment variables set before jax is imported. */
  env: Record<string, string>;
  /** XLA flags added to `XLA_FLAGS` (only before the first import). */
  xlaFlags: string[];
  x64: boolean;
  /** Whether Python prints the tracebacks of error replies on stderr. */
  tracebacks: boolean;
  /** The interpreter's `sys.path` and `sys.executable`, as its own process has them. */
  sysPath: string[];
  executable: string;
  /** The job to join before jax starts its backend, or null. */
  distributed: _DistributedRequest | null;
}

/** Fetches a reply that did not fit its buffer (a status-2 reply's token). */
export interface _TakeRequest {
  op: "take";
  token: number;
}

/**
 * Releases a host (its programs, caches, namespace and modules), or, with
 * `programs`, only those programs of it; `tokens` drops pending replies.
 * Releasing a host that is gone is no error.
 */
export interface _ReleaseRequest {
  op: "release";
  host: number;
  programs?: number[];
  tokens?: number[];
}

/** Counts of what Python holds, for leak checks; a host's own counts when `host` is given. */
export interface _StatsRequest {
  op: "stats";
  host?: number;
}

// ---- requests of one host (`host`: the id `init` answered) ------------------------------

/** Registers an XLA FFI target (`jax.ffi.register_ffi_target`). */
export interface _RegisterRequest {
  op: "register";
  host: number;
  name: string;
  /** Stage name (`execute`, …) -> the handler's address. */
  stages: Record<string, number>;
  platform: string;
  traits: number;
  /**
   * Whether programs calling the target go to a worker (`run`, `ffiCall`):
   * a stage is a TS entry point, or the registration asked for it.
   */
  offThread: boolean;
}

/** Calls a target through a jitted `jax.ffi.ffi_call`, cached by `key`; the arguments follow. */
export interface _FfiCallRequest {
  op: "ffi_call";
  host: number;
  /** The cache key of the call's signature and attributes. */
  key: string;
  name: string;
  results: _SpecJson[];
  attrs: [string, _AttrJson][];
  vmapMethod: string | null;
  hasSideEffect: boolean;
  /** [argument, result] pairs (`input_output_aliases`). */
  aliases: [number, number][];
  inputLayouts?: (number[] | null)[];
  outputLayouts?: (number[] | null)[];
}

/** Registers a state type (`jax.ffi.register_ffi_type`). */
export interface _RegisterTypeRequest {
  op: "register_type";
  host: number;
  name: string;
  /** The address of the `XLA_FFI_TypeId` storage. */
  typeId: number;
  /** The address of the `XLA_FFI_TypeInfo`, or null. */
  typeInfo: number | null;
  platform: string;
}

/** Forgets the host's cached `ffi_call`s. */
export interface _ClearCacheRequest {
  op: "clear_cache";
  host: number;
}

/** Drops what XLA compiled for one program. */
export interface _ClearProgramRequest {
  op: "clear_program";
  host: number;
  id: number;
}

/**
 * Compiles Python source defining a jax function, or StableHLO text, or
 * loads a model serialized by `jax.export` (kind `"exported"`: its bytes
 * are the one U8 argument that follows, the source is empty).
 */
export interface _CompileRequest {
  op: "compile";
  host: number;
  kind: "python" | "stablehlo" | "exported";
  source: string;
  /** The function to jit (Python), or null for the one the source defines. */
  entry: string | null;
  /** Argument specs to compile for at once, or null to compile at the first run. */
  argSpecs: _SpecJson[] | null;
  filename: string | null;
}

/** Runs a compiled program; the arguments follow. */
export interface _RunRequest {
  op: "run";
  host: number;
  id: number;
}

/** Runs Python statements in the host's namespace; replies with `result`. */
export interface _PythonRequest {
  op: "python";
  host: number;
  source: string;
}

/** Imports a Python extension module and lists the XLA FFI handlers it hands out. */
export interface _HandlersFromRequest {
  op: "handlers_from";
  host: number;
  module: string;
  initialize: string | null;
  registrations: string | null;
  platform: string;
}

/**
 * Prepares calls of one program, or of one `ffi_call` signature (the fields
 * of an {@link _FfiCallRequest}), with arguments of these types and shapes;
 * the calls themselves are binary requests naming the plan
 * (`_prepared.ts`).
 */
export interface _PlanRequest {
  op: "plan";
  host: number;
  /** The program's id, or null for an `ffi_call`. */
  program: number | null;
  ffi: Omit<_FfiCallRequest, "op" | "host"> | null;
  specs: _SpecJson[];
}

/** Every request the bridge answers, as sent. */
export type _Request =
  | _InitRequest
  | _TakeRequest
  | _ReleaseRequest
  | _StatsRequest
  | _RegisterRequest
  | _FfiCallRequest
  | _RegisterTypeRequest
  | _ClearCacheRequest
  | _ClearProgramRequest
  | _CompileRequest
  | _RunRequest
  | _PythonRequest
  | _HandlersFromRequest
  | _PlanRequest;

/** A request's op. */
export type _Op = _Request["op"];

/** The ops an `Xla` host sends with its own `host` (`Xla._request`). */
export type _HostOp = Exclude<_Op, "init" | "take">;

/** The request of an op. */
export type _RequestOf<O extends _Op> = Extract<_Request, { op: O }>;

/**
 * A request of one host without its `host` (what `Xla._request` takes);
 * `{ op: O }` first, so that TypeScript infers the op from the object.
 */
export type _Unhosted<O extends _HostOp> = { op: O } & Omit<_RequestOf<O>, "host">;

/** Every op, once: `deno check` fails when one is missing or unknown. */
export const _REQUEST_OPS: Readonly<Record<_Op, true>> = {
  init: true,
  take: true,
  release: true,
  stats: true,
  register: true,
  ffi_call: true,
  register_type: true,
  clear_cache: true,
  clear_program: true,
  compile: true,
  run: true,
  python: true,
  handlers_from: true,
  plan: true,
};

// ---- replies ------------------------------------------------------------------------

/** A reply with nothing to say. */
export type _EmptyReply = Record<string, never>;

/** The arrays of a results reply, their bytes at `offset` from the reply's data start. */
export interface _ResultsReply {
  results: (_SpecJson & { offset: number })[];
}

/** What `init` tells of the host it opened and of jax. */
export interface _InitReply {
  host: number;
  jax: string;
  jaxlib: string;
  /** The XLA FFI API version of jaxlib's `c_api.h` ([major, minor]), or nulls. */
  ffiApi: [number | null, number | null];
  distributed: DistributedInfo | null;
  python: string;
  devices: number;
  platform: string;
  xlaFlags: string;
  x64: boolean;
}

/** A compiled program: its id, and its outputs when it was compiled for given arguments. */
export interface _CompileReply {
  id: number;
  outputs: _SpecJson[] | null;
}

/** The JSON value of `result` after a `python` request's statements. */
export interface _PythonReply {
  result: unknown;
}

/** Counts of what Python holds (`Xla.pythonStats`). */
export interface _StatsReply {
  allocatedBlocks: number;
  gcObjects: number;
  hosts: number;
  programs: number;
  ffiCache: number;
  pending: number;
  threads: number;
  dispatched: number;
  dispatchWaited: number;
  nativeCalls: number;
}

/** The handlers of `handlers_from`, and the shape its `registrations()` had. */
export interface _HandlersFromReply extends _HandlersReply {
  form: "flat" | "platforms";
}

/** The reply header of each op (status 0). */
export interface _ReplyHeaders {
  init: _InitReply;
  take: _ResultsReply;
  release: _EmptyReply;
  stats: _StatsReply;
  register: _EmptyReply;
  ffi_call: _ResultsReply;
  register_type: _EmptyReply;
  clear_cache: _EmptyReply;
  clear_program: _EmptyReply;
  compile: _CompileReply;
  run: _ResultsReply;
  python: _PythonReply;
  handlers_from: _HandlersFromReply;
  plan: { plan: number };
}

/** The reply header of a request. */
export type _ReplyOf<R extends { op: _Op }> = _ReplyHeaders[R["op"]];

/** A reply that did not fit its buffer (status 2): fetch it with `take`. */
export interface _PendingReply {
  pending: number;
}

/** An error reply (status 1): a Python exception, or a failure with an XLA status code. */
export interface _ErrorReply {
  /** The exception's class name and module. */
  type: string;
  module: string;
  message: string;
  traceback: string;
  /** The XLA status code the bridge chose, when it chose one. */
  code?: number;
  /** Present when a SIGINT (Ctrl-C) interrupted the request. */
  interrupted?: true;
}
