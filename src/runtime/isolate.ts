/**
 * Isolated handler libraries: a library's handlers run in a child process
 * (`native/isolate_child.c`), started on first use and again after it died,
 * with the frame's operands in memory both processes map. A fatal signal, a
 * deadline passed or a guarded write becomes an {@link FfiError} naming the
 * handler; the caller's process lives on. A process that ended between calls
 * fails the next request, unsent, with UNAVAILABLE naming its signal (not the
 * handler). Starting the process needs `--allow-run` (it is native code, which
 * Deno's permissions do not reach) and `--allow-env`. See docs/faults.md and
 * docs/permissions.md.
 *
 * @module
 */
import { guardLibraryPath, isolateChildPath, nativeLibraryPath } from "../native/loader.ts";
import { DataType, ErrorCode } from "../abi/enums.ts";
import { _nativeError, FfiError } from "../errors.ts";
import { NEWEST_API_VERSION } from "../abi/version.ts";
import { native } from "../native/lib.ts";
import { DeviceMemory } from "../cuda/memory.ts";
import { _argWrite, _changedCanary, _fillCanaries, _outOfBounds } from "./_guard.ts";
import {
  _describe,
  _describedSize,
  _regionOf,
  _scratch,
  type BufferEntry,
  type CallFrame,
} from "./call_frame.ts";
import { _bufferBytes, DeviceBuffer } from "./device_buffer.ts";

/**
 * How an isolated library's process runs (`HandlerLibrary.open(path, { isolate })`).
 *
 * @example
 * ```ts ignore
 * import { HandlerLibrary } from "@deno-xla/ffi";
 * using lib = HandlerLibrary.open("./libmy_handlers.so", {
 *   isolate: { timeoutMs: 2000, sanitize: "address" },
 * });
 * ```
 */
export interface IsolateOptions {
  /**
   * The longest a call may take, in milliseconds (default 60000): a call
   * still running then kills the process and fails with DEADLINE_EXCEEDED.
   * Starting the process (loading the library and running its initialisers,
   * at the first call and after a death) has the same bound, on its own:
   * a call that starts the process waits at most twice this long (a
   * Python module's process, which imports the module, gets at least 60 s
   * to start).
   */
  timeoutMs?: number;
  /**
   * `"address"`: run the process with the compiler's AddressSanitizer and
   * UndefinedBehaviorSanitizer runtimes preloaded, for a handler library
   * built with `-fsanitize=address` (and `undefined`); the head of their
   * report joins the error of a call that ended the process.
   */
  sanitize?: "address";
  /**
   * What the handlers write to stdout and stderr: `"pass"` (the default)
   * hands it to this process's stderr after each call; `"keep"` keeps it
   * from the terminal (stdout joins stderr in the process), counting its
   * bytes and lines and keeping its first 4 KiB, read with
   * `HandlerLibrary.isolatedOutput()` (a LAPACK routine that prints a line
   * for each illegal parameter, fuzzed, prints millions).
   */
  output?: "pass" | "keep";
}

/**
 * What an isolated library's handlers wrote since it was last asked
 * (`HandlerLibrary.isolatedOutput()`, with `isolate: { output: "keep" }`).
 *
 * @example
 * ```ts
 * import type { IsolatedOutput } from "@deno-xla/ffi";
 * const none: IsolatedOutput = { bytes: 0, lines: 0, head: "" };
 * console.log(none.lines); // 0
 * ```
 */
export interface IsolatedOutput {
  /** Bytes written. */
  bytes: number;
  /** Lines written. */
  lines: number;
  /** The first bytes written, as text (at most 4 KiB of each process). */
  head: string;
}

/**
 * The default deadline of an isolated call, in milliseconds ({@link IsolateOptions.timeoutMs}).
 *
 * @example
 * ```ts
 * import { DEFAULT_ISOLATE_TIMEOUT_MS } from "@deno-xla/ffi";
 * console.log(DEFAULT_ISOLATE_TIMEOUT_MS); // 60000
 * ```
 */
export const DEFAULT_ISOLATE_TIMEOUT_MS = 60_000;
const HEADER = 4096;
const OPERAND = 24;
const INITIAL_MAP = 1 << 20;

/** Request kinds (native/isolate_protocol.h). */
export const _OP_CALL_SYNC = 1;
export const _OP_CALL = 2;
export const _OP_THREADS = 3;
const OP_RESOLVE = 4;
const OP_METADATA = 5;
const OP_REGISTER_TYPE = 6;
/** xiso_header.instance (native/isolate_protocol.h): the child's kept instance, or a fresh one. */
export const _INSTANCE_KEEP = 1;
export const _INSTANCE_FRESH = 2;

/* Offsets in xiso_header (native/isolate_protocol.h). */
const H_OP = 0,
  H_MINOR = 4,
  H_STAGE = 8,
  H_ORDINAL = 12,
  H_RUN_ID = 16,
  H_THREADS = 24,
  H_GUARD = 28,
  H_ITERATIONS = 32,
  H_MAP_SIZE = 40,
  H_OPS_OFFSET = 48,
  H_N_OPS = 56,
  H_INSTANCE = 60,
  H_DESC_OFFSET = 64,
  H_DESC_LENGTH = 72,
  H_SYMBOL = 80,
  H_STATUS = 336,
  H_CODE = 340,
  H_OK = 344,
  H_FAILED = 352,
  H_FAULT_KIND = 360,
  H_FAULT_INDEX = 364,
  H_FAULT_OFFSET = 368,
  H_MESSAGE = 376,
  MESSAGE_CAP = 2048,
  H_METADATA = 2424;

const SIGNALS: Record<number, string> = {
  1: "SIGHUP",
  2: "SIGINT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  11: "SIGSEGV",
  13: "SIGPIPE",
  15: "SIGTERM",
  24: "SIGXCPU",
  31: "SIGSYS",
};
const SIGNAL_WORDS: Record<string, string> = {
  SIGILL: "illegal instruction",
  SIGTRAP: "trap",
  SIGABRT: "aborted",
  SIGBUS: "bus error",
  SIGFPE: "arithmetic exception",
  SIGKILL: "killed",
  SIGSEGV: "segmentation fault",
};

/** @internal The name of signal `n` ("SIGSEGV"), or "signal n". */
export function _signalName(n: number): string {
  return SIGNALS[n] ?? `signal ${n}`;
}

/** The context of a call that crosses to the child (from CallOptions). */
export interface _IsolatedContext {
  minor: number;
  stage: number;
  runId: bigint;
  deviceOrdinal: number;
  threads?: number;
  iterations?: number;
}

interface Placed {
  kind: 0 | 1;
  index: number;
  offset: number;
  size: number;
  /** Guarded results: the start of the page run the result ends (an inaccessible page before it). */
  lo: number;
  /** Guarded results: the end of that page run (an inaccessible page after it). */
  end: number;
  /** The caller's bytes of the operand (null: none). */
  bytes: Uint8Array | null;
}

/** A frame's operands and description laid out in the shared memory ({@link _Isolated}). */
interface Layout {
  /** Each operand's data (arguments, then results) when laid out. */
  data: unknown[];
  /** The byte length of each that is a typed array or DataView, else -1. */
  lengths: number[];
  guard: boolean;
  placed: Placed[];
  /**
   * The frame's description (xla_ffi_deno_runtime_frame_build's input, addresses as offsets into
   * the mapping).
   */
  desc: Uint8Array;
  descOffset: number;
  /** The bytes of shared memory the layout needs. */
  end: number;
}

let preloadCache: string | undefined;

/** The compiler's ASan and UBSan runtimes, as LD_PRELOAD wants them. */
function sanitizerPreload(): string {
  if (preloadCache !== undefined) return preloadCache;
  const cc = Deno.env.get("CC") ?? "cc";
  const find = (name: string) => {
    try {
      const out = new Deno.Command(cc, { args: [`-print-file-name=${name}`], stdout: "piped" })
        .outputSync();
      const p = new TextDecoder().decode(out.stdout).trim();
      return p.startsWith("/") ? p : undefined;
    } catch {
      return undefined;
    }
  };
  const asan = find("libasan.so"), ubsan = find("libubsan.so");
  if (asan === undefined) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `sanitize: "address" needs the C compiler's AddressSanitizer runtime (${cc} ` +
        `-print-file-name=libasan.so found none)`,
    );
  }
  return preloadCache = ubsan === undefined ? asan : `${asan} ${ubsan}`;
}

function block(items: string[]): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(items.map((s) => s + "\0").join("") + "\0");
}

/** The child's environment: ours, with the sanitizers set up for it. */
function childEnv(
  sanitize: boolean,
  keepOutput = false,
  extra: Readonly<Record<string, string>> = {},
): Uint8Array<ArrayBuffer> {
  let env: Record<string, string>;
  try {
    env = Deno.env.toObject();
  } catch (e) {
    throw new FfiError(
      ErrorCode.PERMISSION_DENIED,
      `Starting an isolated handler library's process passes it this process's environment: ` +
        `that needs --allow-env (${(e as Error).message})`,
      { cause: e },
    );
  }
  // Signals are the child's way to die: a sanitizer runtime inherited from
  // this process (tests/sanitize.sh) must not turn them into its reports.
  const quiet = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
  if (sanitize) {
    env.LD_PRELOAD = sanitizerPreload();
    env.ASAN_OPTIONS = "detect_leaks=0:abort_on_error=1:halt_on_error=1";
    env.UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1:abort_on_error=1";
  } else {
    env.ASAN_OPTIONS = env.ASAN_OPTIONS ? `${env.ASAN_OPTIONS}:${quiet}` : quiet;
    env.UBSAN_OPTIONS = env.UBSAN_OPTIONS ? `${env.UBSAN_OPTIONS}:${quiet}` : quiet;
  }
  if (keepOutput) env.XLA_FFI_DENO_ISOLATE_OUTPUT = "keep";
  else delete env.XLA_FFI_DENO_ISOLATE_OUTPUT;
  // A Python module's process is asked for by `extra` only, never inherited.
  for (const k of Object.keys(env)) {
    if (k.startsWith("XLA_FFI_DENO_ISOLATE_PYTHON")) delete env[k];
  }
  Object.assign(env, extra);
  return block(Object.entries(env).filter(([k]) => !k.includes("=")).map(([k, v]) => `${k}=${v}`));
}

/** The head of a sanitizer report in `text`, else its last lines. */
function reportHead(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) return "";
  // From the report's first line ("ERROR: AddressSanitizer: …"), not the banners above it.
  let at = lines.findIndex((l) => /ERROR: \w+Sanitizer|runtime error:/.test(l));
  if (at < 0) at = lines.findIndex((l) => /Sanitizer/.test(l));
  const head = at >= 0 ? lines.slice(at, at + 12) : lines.slice(-8);
  return head.join("\n").slice(0, 3000);
}

/**
 * The fatal signal a sanitizer's report names ("ERROR: AddressSanitizer: SEGV
 * on unknown address"): the process then ends with SIGABRT (abort_on_error),
 * not with the signal the handler caused.
 */
function reportedSignal(text: string): { signal: string; by: string } | undefined {
  const m = /ERROR: (\w+Sanitizer): (SEGV|BUS|FPE|ILL|ABRT|TRAP) on unknown address/.exec(text) ??
    /ERROR: (\w+Sanitizer): (stack-overflow) on address/.exec(text);
  if (m === null) return undefined;
  return { signal: m[2] === "stack-overflow" ? "SIGSEGV" : `SIG${m[2]}`, by: m[1]! };
}

/**
 * @internal A Python extension module's handlers in an isolated process
 * (native/isolate_child.c with XLA_FFI_DENO_ISOLATE_PYTHON): the module's
 * name, and the variables that make the child host the Python and the module.
 */
/**
 * The least time a Python module's process is given to start (embed Python, import the module,
 * run its initializer), whatever the calls' deadline: a fuzzer's 1 s call deadline is no bound
 * for importing jaxlib on a busy machine, and a slow start is not the handler's hang.
 */
const PYTHON_START_MS = 60_000;

export interface _IsolatedPython {
  /** The module's dotted name. */
  module: string;
  /** XLA_FFI_DENO_ISOLATE_PYTHON (libpython), _HOME and _BOOT (the Python text to run). */
  env: Readonly<Record<string, string>>;
}

/**
 * @internal The process of one isolated handler library: started lazily,
 * one call at a time (async calls queue), restarted after it died.
 */
export class _Isolated {
  readonly path: string;
  readonly timeoutMs: number;
  /** How long starting the process may take: `timeoutMs`, at least a minute for a Python module. */
  readonly startTimeoutMs: number;
  readonly sanitize: boolean;
  readonly keepOutput: boolean;
  /**
   * The instance the next calls run with in the child (0: none; `_INSTANCE_KEEP`: the child's
   * kept one; `_INSTANCE_FRESH`: a new one, the old one's states deleted).
   */
  instance = 0;
  /** Type id functions whose types every process of this library registers when it starts. */
  #types: string[] = [];
  #output: IsolatedOutput = { bytes: 0, lines: 0, head: "" };
  #x: Deno.PointerObject | null = null;
  #u8: Uint8Array | null = null;
  #dv: DataView | null = null;
  #size = 0;
  #busy = false;
  /** Asynchronous calls queued or running. */
  #queued = 0;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Frames' layouts in the shared memory. */
  #layouts = new WeakMap<CallFrame, Layout>();
  /** Symbols' names, encoded. */
  #names = new Map<string, Uint8Array>();

  /** A Python module's handlers (`path` is then the module's name), or undefined. */
  readonly python: _IsolatedPython | undefined;
  /** What messages call what the process runs. */
  #what: string;

  constructor(path: string, options: IsolateOptions, python?: _IsolatedPython) {
    const t = options.timeoutMs ?? DEFAULT_ISOLATE_TIMEOUT_MS;
    if (!Number.isInteger(t) || t <= 0 || t > 2147483647) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `isolate.timeoutMs must be a positive integer of milliseconds, got ${t}`,
      );
    }
    if (options.sanitize !== undefined && options.sanitize !== "address") {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `isolate.sanitize must be "address", got ${JSON.stringify(options.sanitize)}`,
      );
    }
    if (options.output !== undefined && options.output !== "pass" && options.output !== "keep") {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `isolate.output must be "pass" or "keep", got ${JSON.stringify(options.output)}`,
      );
    }
    this.path = path;
    this.python = python;
    this.#what = python ? `Python module ${python.module}` : `handler library ${path}`;
    this.timeoutMs = t;
    this.startTimeoutMs = python ? Math.max(t, PYTHON_START_MS) : t;
    this.sanitize = options.sanitize === "address";
    this.keepOutput = options.output === "keep";
  }

  /** What the handlers wrote since the last time asked (kept output), and resets it. */
  output(): IsolatedOutput {
    this.#takeOutput();
    const out = this.#output;
    this.#output = { bytes: 0, lines: 0, head: "" };
    return out;
  }

  #takeOutput(): void {
    if (this.#x === null) return;
    const counts = new BigInt64Array(2);
    const head = new Uint8Array(4096);
    const n = native().xla_ffi_deno_isolate_output(this.#x, counts, head, head.length);
    this.#output.bytes += Number(counts[0]);
    this.#output.lines += Number(counts[1]);
    if (this.#output.head.length < 4096 && n > 0) {
      this.#output.head += new TextDecoder().decode(head.subarray(0, n));
    }
  }

  /** The child's process id, or undefined while none runs. */
  get pid(): number | undefined {
    if (this.#x === null) return undefined;
    const p = native().xla_ffi_deno_isolate_pid(this.#x);
    return p === 0 ? undefined : p;
  }

  #open(): Deno.PointerObject {
    if (this.#closed) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The ${this.#what} is closed`,
      );
    }
    const program = isolateChildPath();
    // Native code is bound by none of Deno's permissions: the process is started only for a
    // caller that may run it, and it gets the environment only when the caller may read it.
    if (Deno.permissions.querySync({ name: "run", command: program }).state !== "granted") {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Starting the process of the isolated ${this.#what} runs the program ` +
          `${program}: that needs --allow-run`,
      );
    }
    const guard = guardLibraryPath();
    const argv = block([program, nativeLibraryPath(), this.path, guard ?? "-"]);
    const msg = new Uint8Array(1024);
    const x = native().xla_ffi_deno_isolate_start(
      argv,
      childEnv(this.sanitize, this.keepOutput, this.python?.env),
      BigInt(INITIAL_MAP),
      msg,
      msg.length,
    );
    if (x === null) {
      throw new FfiError(
        ErrorCode.UNAVAILABLE,
        `Cannot start the process of the isolated ${this.#what}: ${cText(msg)}`,
      );
    }
    this.#x = x;
    if (this.keepOutput) native().xla_ffi_deno_isolate_keep_output(x, 1);
    this.#view();
    return x;
  }

  #view(): void {
    const base = native().xla_ffi_deno_isolate_base(this.#x!)!;
    const size = this.#size = Math.max(this.#size, INITIAL_MAP);
    const buf = Deno.UnsafePointerView.getArrayBuffer(base, size);
    this.#u8 = new Uint8Array(buf);
    this.#dv = new DataView(buf);
  }

  /**
   * Registers the state type of type id function `symbol` (`NAME_type_id`, registered as NAME,
   * with `NAME_type_info`'s deleter when exported) in the child, now and in every process
   * started later; for ffi.h instantiate handlers of API version 0.`minor` and others.
   */
  registerType(symbol: string, minor: number): void {
    this.#claim();
    try {
      this.#ensureSync();
      this.#registerOne(symbol, minor);
      this.#types.push(symbol);
      this.#typesMinor = minor;
    } finally {
      this.#busy = false;
    }
  }

  #typesMinor = 1;

  #registerOne(symbol: string, minor: number): void {
    this.#header(OP_REGISTER_TYPE, symbol, { minor, stage: 3, runId: -1n, deviceOrdinal: -1 });
    const rc = native().xla_ffi_deno_isolate_call_sync(this.#x!, this.timeoutMs);
    if (rc !== 0) {
      throw this.#death(rc, this.#who(symbol), "register its type", `registering '${symbol}'`);
    }
    const dv = this.#dv!;
    if (dv.getInt32(H_STATUS, true) !== 0) {
      throw _nativeError(dv.getInt32(H_CODE, true), this.#message(), { failed: true });
    }
  }

  /** After the child's first answer: it runs the library, or why not. */
  #started(rc: number): void {
    if (rc === 0) {
      if (this.#dv!.getInt32(H_STATUS, true) === 0) {
        for (const t of this.#types) this.#registerOne(t, this.#typesMinor);
        return;
      }
      const e = _nativeError(this.#dv!.getInt32(H_CODE, true), this.#message(), { failed: true });
      this.#drop();
      throw e;
    }
    throw this.#death(
      rc,
      `Loading the isolated ${this.#what} in its process`,
      "finish",
      "the library's loading",
      undefined,
      this.startTimeoutMs,
    );
  }

  #drop(): void {
    if (this.#x === null) return;
    this.#takeOutput();
    const x = this.#x;
    this.#x = null;
    this.#u8 = null;
    this.#dv = null;
    this.#size = 0;
    native().xla_ffi_deno_isolate_close(x);
  }

  #message(): string {
    const u8 = this.#u8!;
    const end = u8.indexOf(0, H_MESSAGE);
    const stop = end < 0 || end > H_MESSAGE + MESSAGE_CAP ? H_MESSAGE + MESSAGE_CAP : end;
    return new TextDecoder().decode(u8.subarray(H_MESSAGE, stop));
  }

  /**
   * The error of a child that died (rc 1), timed out (2), had died while idle
   * (3: `subject`, the request, was not sent) or was lost (-1); the child is dropped.
   */
  #death(
    rc: number,
    who: string,
    what: string,
    subject: string,
    faultOf?: (kind: number) => FfiError,
    limitMs = this.timeoutMs,
  ): FfiError {
    const sym = native();
    const x = this.#x!;
    const ex = new Int32Array(2);
    sym.xla_ffi_deno_isolate_exit(x, ex);
    const err = new Uint8Array(65536);
    const n = sym.xla_ffi_deno_isolate_stderr(x, err, err.length);
    const stderr = new TextDecoder().decode(err.subarray(0, n));
    const status = rc === 1 ? this.#dv!.getInt32(H_STATUS, true) : 0;
    const fault = status === 2 && faultOf
      ? faultOf(this.#dv!.getInt32(H_FAULT_KIND, true))
      : undefined;
    this.#drop();
    if (fault !== undefined) return fault;
    if (rc === 2) {
      return new FfiError(
        ErrorCode.DEADLINE_EXCEEDED,
        `${who} did not ${what} within ${
          limitMs === this.timeoutMs
            ? "isolate.timeoutMs"
            : "the time a Python module may take to start"
        } (${limitMs} ms): its process ` +
          `was killed (a new one starts at the next call)`,
      );
    }
    const head = reportHead(stderr);
    let ended: string;
    if (ex[1]! !== 0) {
      const reported = reportedSignal(stderr);
      const name = reported?.signal ?? _signalName(ex[1]!);
      const words = [
        Object.hasOwn(SIGNAL_WORDS, name) ? SIGNAL_WORDS[name] : undefined,
        reported && reported.signal !== _signalName(ex[1]!)
          ? `reported by ${reported.by}, which then ended the process with ${_signalName(ex[1]!)}`
          : undefined,
      ].filter((w) => w !== undefined);
      ended = `with ${name}` + (words.length > 0 ? ` (${words.join("; ")})` : "");
    } else {
      ended = `, which exited with status ${ex[0]}`;
    }
    if (rc === 3) {
      return new FfiError(
        ErrorCode.UNAVAILABLE,
        `The process of the isolated ${this.#what} ended while idle (no call ` +
          `was running) ${ended.replace(/^, which /, "and ")}, so ${subject} did not run; a new ` +
          `process starts at the next call` + (head ? `\n${head}` : ""),
      );
    }
    const how = rc === 1
      ? `ended its process${ended.startsWith(",") ? "" : " "}${ended}`
      : "lost contact with its process, which was killed";
    return new FfiError(
      ErrorCode.INTERNAL,
      `${who} ${how}; a new process starts at the next call` + (head ? `\n${head}` : ""),
    );
  }

  /** Checks a symbol exists in the library (starting the child when needed). */
  resolve(symbol: string): void {
    this.#claim();
    try {
      this.#ensureSync();
      this.#header(OP_RESOLVE, symbol, undefined);
      const rc = native().xla_ffi_deno_isolate_call_sync(this.#x!, this.timeoutMs);
      if (rc !== 0) {
        throw this.#death(
          rc,
          `Resolving '${symbol}' in ${this.path}`,
          "answer",
          `the lookup of '${symbol}'`,
        );
      }
      if (this.#dv!.getInt32(H_STATUS, true) !== 0) {
        throw new FfiError(
          ErrorCode.NOT_FOUND,
          this.python
            ? `${this.python.module} registers no handler ${JSON.stringify(symbol)}`
            : `Symbol '${symbol}' not found in ${this.#what}: ${this.#message()}`,
        );
      }
    } finally {
      this.#busy = false;
    }
  }

  /**
   * The handler's metadata as a runtime of API version 0.`minor` queries it
   * (`xla_ffi_deno_runtime_metadata` in the child): major, minor, traits, state type id.
   */
  metadata(symbol: string, minor: number): number[] {
    this.#claim();
    try {
      this.#ensureSync();
      this.#header(OP_METADATA, symbol, {
        minor,
        stage: 3,
        runId: -1n,
        deviceOrdinal: -1,
      });
      const rc = native().xla_ffi_deno_isolate_call_sync(this.#x!, this.timeoutMs);
      if (rc !== 0) {
        throw this.#death(
          rc,
          this.#who(symbol),
          "answer its metadata query",
          `the metadata query of handler '${symbol}'`,
        );
      }
      const dv = this.#dv!;
      if (dv.getInt32(H_STATUS, true) !== 0) {
        throw _nativeError(dv.getInt32(H_CODE, true), this.#message(), { failed: true });
      }
      return [0, 1, 2, 3].map((i) => Number(dv.getBigInt64(H_METADATA + 8 * i, true)));
    } finally {
      this.#busy = false;
    }
  }

  #claim(): void {
    if (this.#busy || this.#queued > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The isolated ${this.#what} is serving another call; await it first`,
      );
    }
    this.#busy = true;
  }

  #ensureSync(): void {
    if (this.#x !== null) return;
    const x = this.#open();
    this.#started(native().xla_ffi_deno_isolate_ready_sync(x, this.startTimeoutMs));
  }

  async #ensure(): Promise<void> {
    if (this.#x !== null) return;
    const x = this.#open();
    this.#started(await native().xla_ffi_deno_isolate_ready(x, this.startTimeoutMs));
  }

  /** The symbol's name as the header holds it (NUL-terminated), encoded once per name. */
  #symbolBytes(symbol: string): Uint8Array {
    let name = this.#names.get(symbol);
    if (name === undefined) {
      const encoded = new TextEncoder().encode(symbol);
      if (encoded.length > 255) {
        throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Symbol name too long: ${symbol}`);
      }
      name = new Uint8Array(encoded.length + 1);
      name.set(encoded);
      if (this.#names.size >= 64) this.#names.clear();
      this.#names.set(symbol, name);
    }
    return name;
  }

  /**
   * Writes a request's header. Every field is written for every request: the
   * child's handler can write anywhere in the page, so nothing of an earlier
   * request is trusted.
   */
  #header(op: number, symbol: string, ctx: _IsolatedContext | undefined): void {
    const dv = this.#dv!, u8 = this.#u8!;
    const name = this.#symbolBytes(symbol);
    dv.setUint32(H_OP, op, true);
    dv.setInt32(H_MINOR, ctx?.minor ?? Number(NEWEST_API_VERSION.slice(2)), true);
    dv.setInt32(H_STAGE, ctx?.stage ?? 3, true);
    dv.setInt32(H_ORDINAL, ctx?.deviceOrdinal ?? -1, true);
    dv.setBigInt64(H_RUN_ID, ctx?.runId ?? -1n, true);
    dv.setInt32(H_THREADS, ctx?.threads ?? 1, true);
    dv.setInt32(H_GUARD, 0, true);
    set64(dv, H_ITERATIONS, ctx?.iterations ?? 1);
    set64(dv, H_MAP_SIZE, this.#size);
    dv.setUint32(H_N_OPS, 0, true);
    dv.setUint32(
      H_INSTANCE,
      op === _OP_CALL_SYNC || op === _OP_CALL || op === _OP_THREADS ? this.instance : 0,
      true,
    );
    set64(dv, H_DESC_LENGTH, 0);
    u8.set(name, H_SYMBOL);
    dv.setInt32(H_STATUS, 0, true);
    dv.setInt32(H_FAULT_KIND, 0, true);
  }

  /**
   * Where a frame's operands and description go in the shared memory: kept
   * per frame while its operands hold the same data (objects, and views of
   * the same length), made again otherwise.
   */
  #layoutOf(frame: CallFrame): Layout {
    const kept = this.#layouts.get(frame);
    if (kept !== undefined && kept.guard === (frame._guard !== null)) {
      const data = kept.data, lengths = kept.lengths, nArgs = frame.numArgs;
      let same = true;
      for (let k = 0; k < data.length && same; k++) {
        const d = k < nArgs ? frame._data(0, k) : frame._data(1, k - nArgs);
        same = d === data[k] &&
          (lengths[k]! < 0 || (d as ArrayBufferView).byteLength === lengths[k]);
      }
      if (same) return kept;
    }
    const layout = planLayout(frame);
    this.#layouts.set(frame, layout);
    return layout;
  }

  /** Lays the frame's operands out in the shared memory and writes the request. */
  #prepare(op: number, symbol: string, frame: CallFrame, ctx: _IsolatedContext): Placed[] {
    const layout = this.#layoutOf(frame);
    const { placed, guard } = layout;
    this.#reserve(layout.end);
    this.#header(op, symbol, ctx);
    const dv = this.#dv!, u8 = this.#u8!;
    u8.set(layout.desc, layout.descOffset);
    set64(dv, H_OPS_OFFSET, HEADER);
    dv.setUint32(H_N_OPS, guard ? placed.length : 0, true);
    dv.setInt32(H_GUARD, guard ? 1 : 0, true);
    set64(dv, H_DESC_OFFSET, layout.descOffset);
    set64(dv, H_DESC_LENGTH, layout.desc.length);
    for (let k = 0; k < placed.length; k++) {
      const p = placed[k]!;
      if (guard) {
        const o = HEADER + k * OPERAND;
        set64(dv, o, p.offset);
        set64(dv, o + 8, p.size);
        dv.setUint32(o + 16, p.kind, true);
        dv.setUint32(o + 20, p.index, true);
      }
      if (p.bytes !== null) u8.set(p.bytes, p.offset);
      if (guard && p.kind === 1) {
        _fillCanaries(u8, p.lo, p.offset);
        _fillCanaries(u8, p.offset + p.size, p.end);
      }
    }
    return placed;
  }

  #reserve(size: number): void {
    if (size <= this.#size) return;
    let want = this.#size;
    while (want < size) want *= 2;
    const base = native().xla_ffi_deno_isolate_reserve(this.#x!, BigInt(want));
    if (base === null) {
      throw new FfiError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `Cannot grow the memory shared with the isolated library's process to ${want} bytes`,
      );
    }
    this.#size = want;
    this.#view();
  }

  /** After an answer: results back into the caller's buffers, canaries checked. */
  #finish(frame: CallFrame, placed: Placed[], symbol: string): void {
    const handler = this.#shown(symbol);
    const u8 = this.#u8!;
    let fault: FfiError | undefined;
    for (const p of placed) {
      if (p.kind !== 1) continue;
      if (p.bytes !== null) p.bytes.set(u8.subarray(p.offset, p.offset + p.size));
      if (frame._guard !== null && fault === undefined) {
        const before = _changedCanary(u8, p.lo, p.offset);
        const after = _changedCanary(u8, p.offset + p.size, p.end);
        if (before >= 0) {
          fault = _outOfBounds(
            handler,
            1,
            p.index,
            before - p.offset,
            p.size,
            "a canary before it",
          );
        } else if (after >= 0) {
          fault = _outOfBounds(
            handler,
            1,
            p.index,
            after - p.offset,
            p.size,
            "a canary after the call",
          );
        }
      }
    }
    if (fault !== undefined) throw fault;
  }

  #faultOf(placed: Placed[], symbol: string): (kind: number) => FfiError {
    const handler = this.#shown(symbol);
    return (kind) => {
      const dv = this.#dv!;
      const index = dv.getInt32(H_FAULT_INDEX, true);
      const offset = Number(dv.getBigInt64(H_FAULT_OFFSET, true));
      const k = kind === 2 ? 0 : 1;
      const size = placed.find((p) => p.kind === k && p.index === index)?.size ?? 0;
      const page = pageSize();
      if (offset < 0) {
        return _outOfBounds(
          handler,
          k,
          index,
          offset,
          size,
          "the inaccessible page before it, in the isolated process",
        );
      }
      if (k === 0 && offset < size) {
        return _argWrite(handler, index, offset, "its read-only page, in the isolated process");
      }
      if (k === 0 && offset < align(size, page)) {
        return _outOfBounds(
          handler,
          0,
          index,
          offset,
          size,
          "its read-only page, in the isolated process",
        );
      }
      return _outOfBounds(
        handler,
        k,
        index,
        offset,
        size,
        "the inaccessible page after it, in the isolated process",
      );
    };
  }

  #who(handler: string): string {
    if (this.python) {
      return `Handler '${
        this.#shown(handler)
      }' of the isolated Python module ${this.python.module}`;
    }
    return `Handler '${handler}' of the isolated library ${this.path}`;
  }

  /**
   * A handler as messages name it: a Python module's as the module registers it
   * (`jaxlib.cpu._sparse:cpu_csr_sparse_dense_ffi`, as an in-process crash names it,
   * native/crash.c), a library's by its symbol.
   */
  #shown(symbol: string): string {
    return this.python ? `${this.python.module}:${symbol}` : symbol;
  }

  /** The reply of a call: nothing, an error thrown, or the thread counts. */
  #reply(op: number, frame: CallFrame, placed: Placed[], handler: string) {
    this.#finish(frame, placed, handler);
    const dv = this.#dv!;
    const status = dv.getInt32(H_STATUS, true);
    if (op === _OP_THREADS && status === 0) {
      const ok = Number(dv.getBigInt64(H_OK, true));
      const failed = Number(dv.getBigInt64(H_FAILED, true));
      const code = dv.getInt32(H_CODE, true);
      return { ok, failed, code, message: failed > 0 ? this.#message() : "" };
    }
    if (status !== 0) {
      throw _nativeError(dv.getInt32(H_CODE, true), this.#message(), { failed: true });
    }
    return undefined;
  }

  /**
   * The error of a handler call whose process did not answer (`rc` of
   * xla_ffi_deno_isolate_call*).
   */
  #callDeath(rc: number, handler: string, placed: Placed[]): FfiError {
    return this.#death(
      rc,
      this.#who(handler),
      "return",
      `handler '${handler}'`,
      this.#faultOf(placed, handler),
    );
  }

  /** A call on the calling thread, waiting at most the deadline. */
  callSync(symbol: string, handler: string, frame: CallFrame, ctx: _IsolatedContext): void {
    this.#claim();
    try {
      this.#ensureSync();
      const placed = this.#prepare(_OP_CALL_SYNC, symbol, frame, ctx);
      const rc = native().xla_ffi_deno_isolate_call_sync(this.#x!, this.timeoutMs);
      if (rc !== 0) throw this.#callDeath(rc, handler, placed);
      this.#reply(_OP_CALL_SYNC, frame, placed, handler);
    } finally {
      this.#busy = false;
    }
  }

  /** A call off the JS thread (calls queue: one at a time per library). */
  call(
    op: number,
    symbol: string,
    handler: string,
    frame: CallFrame,
    ctx: _IsolatedContext,
  ): Promise<{ ok: number; failed: number; code: number; message: string } | undefined> {
    if (this.#closed) {
      return Promise.reject(
        new FfiError(ErrorCode.FAILED_PRECONDITION, `The ${this.#what} is closed`),
      );
    }
    this.#queued++;
    const run = async () => {
      this.#busy = true;
      try {
        await this.#ensure();
        const placed = this.#prepare(op, symbol, frame, ctx);
        const rc = await native().xla_ffi_deno_isolate_call(this.#x!, this.timeoutMs);
        if (rc !== 0) throw this.#callDeath(rc, handler, placed);
        return this.#reply(op, frame, placed, handler);
      } finally {
        this.#busy = false;
        this.#queued--;
      }
    };
    const p = this.#tail.then(run, run);
    this.#tail = p.catch(() => {});
    return p;
  }

  /** Ends the process. Fails while a call is in flight. */
  close(): void {
    if (this.#busy || this.#queued > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The isolated ${this.#what} has a call in flight; await it before close()`,
      );
    }
    this.#closed = true;
    this.#drop();
  }

  get closed(): boolean {
    return this.#closed;
  }
}

/** Writes a non-negative safe integer as a little-endian 64-bit field. */
function set64(dv: DataView, at: number, n: number): void {
  dv.setUint32(at, n >>> 0, true);
  dv.setUint32(at + 4, Math.floor(n / 4294967296), true);
}

/**
 * Lays a frame's operands out in the shared memory after the header and the
 * operand table: the description, then each operand 64-byte aligned, or, in
 * a guarded frame, with an inaccessible page before and after every operand,
 * its own (a write next to one operand is never blamed on another):
 * arguments start a page, results end one (canaries in the slack on either
 * side). An argument that is a result's memory shares its place.
 */
function planLayout(frame: CallFrame): Layout {
  const spec = frame._spec;
  if (spec === null) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      "The call frame was not made by CallFrameBuilder",
    );
  }
  const guard = frame._guard !== null;
  const page = pageSize();
  const placed: Placed[] = [];
  const n = spec.args.length + spec.rets.length;
  const descOffset = align(HEADER + n * OPERAND, 8);
  const descMax = _describedSize(spec.args, spec.rets, spec.attrs);
  let off = align(descOffset + descMax, guard ? page : 64);
  const sizeOf = (e: BufferEntry, kind: 0 | 1, i: number): number => {
    const what = kind === 0 ? `argument ${i}` : `result ${i}`;
    const data = frame._data(kind, i);
    if (data instanceof DeviceBuffer || data instanceof DeviceMemory) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: an isolated handler takes host memory, not device memory`,
      );
    }
    return e.dtype === DataType.TOKEN || data === null || data === undefined
      ? 0
      : ArrayBuffer.isView(data)
      ? data.byteLength
      : _bufferBytes(e.dtype, e.dims, what);
  };
  const argSizes = spec.args.map((e, i) => sizeOf(e, 0, i));
  const retSizes = spec.rets.map((e, i) => sizeOf(e, 1, i));
  const aliasOf = aliases(frame, argSizes, retSizes);
  const place = (kind: 0 | 1, index: number, size: number): number => {
    let offset: number, lo = 0, end = 0;
    if (!guard) {
      offset = off;
      off = align(off + size, 64);
    } else if (kind === 0) {
      offset = off += page;
      off = align(off + size, page) + page;
    } else {
      lo = off += page;
      end = off + Math.max(1, Math.ceil(size / page)) * page;
      offset = (end - size) & ~15;
      off = end + page;
    }
    const bytes = frame._bytesOf(kind, index, size);
    placed.push({ kind, index, offset, size, lo, end, bytes: bytes?.subarray(0, size) ?? null });
    return offset;
  };
  const argAt = spec.args.map((_, i) => aliasOf[i]! >= 0 ? -1 : place(0, i, argSizes[i]!));
  const retAt = spec.rets.map((_, i) => place(1, i, retSizes[i]!));
  // Guarded, a zero-sized operand is placed too (between inaccessible pages, so that an access
  // through it is a fault that names it); unguarded it has no address.
  const address = (at: number, size: number) => size === 0 && !guard ? -1 : at;
  const args = spec.args.map((e, i) => {
    const r = aliasOf[i]!;
    return { ...e, address: address(r >= 0 ? retAt[r]! : argAt[i]!, argSizes[i]!) };
  });
  const rets = spec.rets.map((e, i) => ({ ...e, address: address(retAt[i]!, retSizes[i]!) }));
  const len = _describe(args, rets, spec.attrs, descMax);
  const data: unknown[] = [];
  for (let i = 0; i < spec.args.length; i++) data.push(frame._data(0, i));
  for (let i = 0; i < spec.rets.length; i++) data.push(frame._data(1, i));
  return {
    data,
    lengths: data.map((d) => ArrayBuffer.isView(d) ? d.byteLength : -1),
    guard,
    placed,
    desc: _scratch().slice(0, len),
    descOffset,
    end: off,
  };
}

/**
 * Per argument: the result that is the same memory and size (an input-output
 * alias: both get one place in the shared memory), or -1.
 */
function aliases(frame: CallFrame, argSizes: number[], retSizes: number[]): number[] {
  if (frame._guard !== null) return frame._guard.aliasOf;
  const out = argSizes.map(() => -1);
  if (retSizes.length === 0) return out;
  const taken = new Set<number>();
  for (let i = 0; i < argSizes.length; i++) {
    const ra = argSizes[i]! > 0 ? _regionOf(frame._data(0, i)) : null;
    if (ra === null) continue;
    for (let j = 0; j < retSizes.length; j++) {
      if (taken.has(j) || retSizes[j] !== argSizes[i]) continue;
      const rr = _regionOf(frame._data(1, j));
      if (rr !== null && rr[0] === ra[0] && rr[1] === ra[1]) {
        out[i] = j;
        taken.add(j);
        break;
      }
    }
  }
  return out;
}

let pageCache = 0;
function pageSize(): number {
  return pageCache ||= native().xla_ffi_deno_isolate_page_size();
}

function align(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

function cText(b: Uint8Array): string {
  const end = b.indexOf(0);
  return new TextDecoder().decode(b.subarray(0, end < 0 ? b.length : end));
}
