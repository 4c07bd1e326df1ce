/**
 * The command line's runtime: handlers from shared libraries run in the
 * embedded XLA FFI runtime, `.npy` files through `src/npy.ts`, and the
 * metadata query of `inspect` in child processes.
 *
 * @module
 */
import { dataTypeInfo, decodeFloats, subByteToNumber } from "../abi/dtype.ts";
import { DataType, ErrorCode, ExecutionStage, stageName } from "../abi/enums.ts";
import { FfiError, toFfiError } from "../errors.ts";
import { loadNpy, saveNpy } from "../npy.ts";
import type {
  AttrDictionary as FrameAttrs,
  AttrInput as FrameAttr,
} from "../runtime/attributes.ts";
import { array, scalar } from "../runtime/attributes.ts";
import { type CallFrame, CallFrameBuilder } from "../runtime/call_frame.ts";
import { HandlerLibrary, NativeHandler } from "../runtime/handler_library.ts";
import type { DeviceBuffer } from "../runtime/device_buffer.ts";
import type { Instance } from "../runtime/instance.ts";
import { Runtime } from "../runtime/runtime.ts";
import type { ParsedRun } from "./args.ts";
import { type AttrDictionary, type AttrValue, encodeValues } from "../spec/grammar.ts";
import { _closeRunModule, _importForRun } from "./module_target.ts";
import { readElfSymbols } from "../native/elf.ts";
import {
  registerLibraryTypes,
  typeIdSymbols,
  typeNameOf,
  type TypeSpec,
  UNREGISTERED_TYPE,
} from "./state_types.ts";
import { _localLibrary, _spawnChild, type ProbeOptions, queryInChild } from "./probe.ts";
import type {
  CallArg,
  CliRuntime,
  HandlerMetadata,
  IsolatedIo,
  PreparedCall,
} from "./runtime_api.ts";
import { ExitCode } from "./args.ts";
import { runReportLine } from "./format.ts";

/** Set in the environment of the child process an isolated `run` runs in. */
const CHILD_ENV = "XLA_FFI_DENO_CLI_RUN_CHILD";
/** Marks the child's protocol lines on its stdout. */
const RUN_MARK = "\u001exla-ffi-run ";
/**
 * @internal How this process runs in an isolated `run`: `undefined` when it
 * is not such a child, else whether the parent's progress sink is a terminal.
 */
export function _runChild(): { terminal: boolean } | undefined {
  let v: string | undefined;
  try {
    v = Deno.env.get(CHILD_ENV);
  } catch {
    return undefined;
  }
  return v === undefined ? undefined : { terminal: v === "tty" };
}

/** @internal writes a protocol line for the parent of an isolated `run`. */
export function _runChildMark(phase: "call" | "done"): void {
  if (_runChild() === undefined) return;
  const bytes = new TextEncoder().encode(`\n${RUN_MARK}${JSON.stringify({ phase })}\n`);
  let rest = bytes;
  while (rest.length > 0) rest = rest.subarray(Deno.stdout.writeSync(rest));
}

function _describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

/** Runs `main(argv)` of the command line in a child process; see {@link CliRuntime.runIsolated}. */
async function _runIsolated(
  argv: readonly string[],
  run: ParsedRun,
  io: IsolatedIo,
): Promise<number> {
  const entry = new URL("../../cli.ts", import.meta.url).href;
  const child = _spawnChild(entry, argv, "Running a shared-library handler", {
    [CHILD_ENV]: io.progressTerminal ? "tty" : "pipe",
  }, { write: run.outs });
  const out = new Response(child.stdout).text();
  const relay = (async () => {
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) io.stderr(text);
  })();
  let timedOut = false;
  const timer = run.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already ended */ }
  }, run.timeoutMs);
  const status = await child.status;
  clearTimeout(timer);
  const text = await out;
  await relay;
  if (timedOut) {
    io.stdout(text.replace(new RegExp(`\n?${RUN_MARK}[^\n]*\n`, "g"), ""));
    const message =
      `handler '${run.handler}' did not return within --timeout ${run.timeoutMs} ms; ` +
      `its process was killed`;
    if (run.json) {
      io.stdout(runReportLine(run, { error: { code: ErrorCode.DEADLINE_EXCEEDED, message } }));
    }
    io.stderr(`error: ${message}\n`);
    return ExitCode.TIMEOUT;
  }
  const phases = [...text.matchAll(new RegExp(`${RUN_MARK}(\\{[^\n]*\\})`, "g"))]
    .map((m) => (JSON.parse(m[1]!) as { phase: string }).phase);
  io.stdout(text.replace(new RegExp(`\n?${RUN_MARK}[^\n]*\n`, "g"), ""));
  if (phases.includes("done") && !status.signal) return status.code;
  const how = _describeStatus(status);
  const path = run.target.path;
  if (phases.includes("call")) {
    // A Python module's handler is named as the module registers it (as a crash line names it).
    const module = run.target.kind === "module";
    const message = `handler '${module ? `${path}:` : ""}${run.handler}' crashed: ${how} ended ` +
      `the process running it during the call (the command line runs ` +
      `${module ? "a Python module's" : "shared-library"} handlers in a child process ` +
      `to report this)`;
    if (run.json) {
      io.stdout(runReportLine(run, { error: { code: ErrorCode.ABORTED, message } }));
    }
    io.stderr(`error: ${message}\n`);
    return ExitCode.CRASHED;
  }
  io.stderr(
    `error: '${run.handler}' ended the process running it before the call (${how}): its ` +
      `metadata query or set-up crashed, so it is probably not an XLA FFI handler; ` +
      `'inspect ${path}' lists the handlers\n`,
  );
  return ExitCode.LIBRARY;
}

/** Options of {@link embeddedRuntime}. */
export interface EmbeddedRuntimeOptions {
  /** Limits of the metadata query's child processes. */
  probe?: ProbeOptions;
}

type _Raw = ArrayBufferView;

function _count(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** Decodes a buffer of `dtype` into printable element values. */
export function _decode(dtype: DataType, raw: _Raw): ArrayLike<number | bigint> {
  const info = dataTypeInfo(dtype);
  const ctor = info.typedArray;
  if (ctor === null) return [];
  const view = new ctor(
    raw.buffer as ArrayBuffer,
    raw.byteOffset,
    raw.byteLength / ctor.BYTES_PER_ELEMENT,
  );
  if (info.kind === "float" && (ctor === Uint8Array || ctor === Uint16Array)) {
    return decodeFloats(dtype, view as Uint8Array | Uint16Array);
  }
  if (info.bitWidth < 8 && info.kind !== "float") {
    return Array.from(view as Uint8Array, (b) => subByteToNumber(dtype, b));
  }
  return view as ArrayLike<number | bigint>;
}

function _frameAttrs(dict: AttrDictionary): FrameAttrs {
  const out = new Map<string, FrameAttr>();
  for (const [name, v] of dict.entries) out.set(name, _frameAttr(v));
  return out;
}

function _frameAttr(v: AttrValue): FrameAttr {
  switch (v.kind) {
    case "string":
      return v.value;
    case "scalar":
      return scalar(v.dtype, v.dtype === DataType.PRED ? Boolean(v.value) : v.value);
    case "array":
      return array(v.dtype, v.values);
    case "dictionary":
      return _frameAttrs(v);
  }
}

/** A handler bundle a module exports: one handler per execution stage. */
export interface _Stages {
  instantiate?: NativeHandler;
  prepare?: NativeHandler;
  initialize?: NativeHandler;
  execute: NativeHandler;
}

const _STAGE_KEYS = ["instantiate", "prepare", "initialize", "execute"] as const;

function _stageKey(stage: ExecutionStage): (typeof _STAGE_KEYS)[number] {
  switch (stage) {
    case ExecutionStage.INSTANTIATE:
      return "instantiate";
    case ExecutionStage.PREPARE:
      return "prepare";
    case ExecutionStage.INITIALIZE:
      return "initialize";
    default:
      return "execute";
  }
}

function _pointerOf(value: unknown): Deno.PointerObject | undefined {
  if (typeof value !== "object" || value === null || !("pointer" in value)) return undefined;
  let p: unknown;
  try {
    p = (value as { pointer: unknown }).pointer;
  } catch (e) {
    // A closed TS handler throws here.
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, toFfiError(e).message, { cause: e });
  }
  return typeof p === "object" && p !== null ? p as Deno.PointerObject : undefined;
}

/**
 * The handler a TS/JS module exports under `name`: an object carrying an
 * `XLA_FFI_Handler*` (a TypeScript handler made with `Ffi.bind()…to(fn)`, a
 * {@link NativeHandler}, or anything with a `pointer` property holding one),
 * or a bundle of them by stage (a `HandlerBundle`, or any object with an
 * `execute` handler and optional `instantiate`, `prepare`, `initialize`).
 */
export function _moduleHandler(
  path: string,
  name: string,
  value: unknown,
): NativeHandler | _Stages {
  if (value instanceof NativeHandler) return value;
  const p = _pointerOf(value);
  if (p !== undefined) return new NativeHandler(p, name);
  if (typeof value === "object" && value !== null && "execute" in value) {
    const v = value as Record<string, unknown>;
    const stages: Partial<_Stages> = {};
    for (const key of _STAGE_KEYS) {
      const h = v[key];
      if (h === undefined || h === null) continue;
      const hp = _pointerOf(h);
      if (hp === undefined) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `'${name}' in ${path}: its ${key} stage is not a handler`,
        );
      }
      stages[key] = new NativeHandler(hp, `${name}.${key}`);
    }
    if (stages.execute) return stages as _Stages;
  }
  if (typeof value === "function") {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `'${name}' in ${path} is a plain function: export a handler bound with its operands, ` +
        `e.g. Ffi.bind().arg(DataType.F32).ret(DataType.F32).to(fn)`,
    );
  }
  throw new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    `'${name}' in ${path} is not a handler (an object with an XLA_FFI_Handler pointer) ` +
      `or a handler bundle`,
  );
}

/** The bundle's handler of `stage`, or a message naming the stages it has. */
function _stageOf(
  path: string,
  name: string,
  h: NativeHandler | _Stages,
  stage: ExecutionStage,
  option: string,
): NativeHandler {
  if (h instanceof NativeHandler) return h;
  const key = _stageKey(stage);
  const found = h[key];
  if (found) return found;
  const has = _STAGE_KEYS.filter((k) => h[k] !== undefined).join(", ");
  throw new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    `'${name}' in ${path} is a handler bundle without a ${key} handler (${option}; it has ${has})`,
  );
}

interface _Loaded {
  handler: NativeHandler;
  instantiate?: NativeHandler;
  lib?: HandlerLibrary;
}

async function _load(run: ParsedRun): Promise<_Loaded> {
  const { path, kind } = run.target;
  if (kind === "module") {
    const mod = await _importForRun(run, path);
    if (!(run.handler in mod)) {
      throw new FfiError(ErrorCode.NOT_FOUND, `${path} has no export '${run.handler}'`);
    }
    const inst = run.instantiate;
    if (inst !== undefined && !(inst in mod)) {
      throw new FfiError(ErrorCode.NOT_FOUND, `${path} has no export '${inst}' (--instantiate)`);
    }
    const main = _moduleHandler(path, run.handler, mod[run.handler]);
    const handler = _stageOf(path, run.handler, main, run.stage, `--stage ${stageName(run.stage)}`);
    let instantiate: NativeHandler | undefined;
    if (inst !== undefined) {
      const i = _moduleHandler(path, inst, mod[inst]);
      instantiate = _stageOf(path, inst, i, ExecutionStage.INSTANTIATE, "--instantiate");
    } else if (!(main instanceof NativeHandler) && run.stage !== ExecutionStage.INSTANTIATE) {
      // A bundle's own instantiate stage runs first, as XLA runs it once per call site.
      instantiate = main.instantiate;
    }
    return { handler, instantiate };
  }
  let lib: HandlerLibrary;
  try {
    lib = HandlerLibrary.open(_localLibrary(path));
  } catch (e) {
    // A library that does not load is a library error, not a missing feature.
    const err = toFfiError(e);
    throw new FfiError(
      err.code === ErrorCode.UNAVAILABLE ? ErrorCode.FAILED_PRECONDITION : err.code,
      err.message,
      { cause: e },
    );
  }
  try {
    return {
      handler: lib.handler(run.handler),
      instantiate: run.instantiate === undefined ? undefined : lib.handler(run.instantiate),
      lib,
    };
  } catch (e) {
    lib.close();
    throw e;
  }
}

/**
 * Registers the state types of a library's handlers, then runs `check` (the
 * metadata checks): the `--type` ones first; without any, and only when an
 * ffi.h instantiate handler answers that its state type has no id, every
 * type id function the library exports (`*_type_id`, each under its name
 * without the suffix), and `check` again.
 */
async function _registerTypes(
  rt: Runtime,
  lib: HandlerLibrary,
  libPath: string,
  types: readonly TypeSpec[],
  check: () => void,
): Promise<void> {
  const exports = new Set((await readElfSymbols(libPath)).symbols.map((s) => s.name));
  const register = (list: readonly TypeSpec[]) => {
    for (const t of list) {
      if (!exports.has(t.symbol)) {
        throw new FfiError(
          ErrorCode.NOT_FOUND,
          `${libPath} has no export '${t.symbol}' (--type ${t.name}=${t.symbol})`,
        );
      }
    }
    try {
      registerLibraryTypes(rt, lib, list, exports);
    } catch (e) {
      const err = toFfiError(e);
      throw new FfiError(err.code, `registering the state types of ${libPath}: ${err.message}`, {
        cause: e,
        hint: err.hint,
      });
    }
  };
  if (types.length > 0) {
    register(types);
    check();
    return;
  }
  try {
    check();
  } catch (e) {
    if (!UNREGISTERED_TYPE.test(toFfiError(e).message)) throw e;
    const auto = typeIdSymbols([...exports]).map((s) => ({ name: typeNameOf(s), symbol: s }));
    if (auto.length === 0) throw e;
    register(auto);
    check();
  }
}

function _checkMetadata(rt: Runtime, handler: NativeHandler, lib?: string): HandlerMetadata {
  const see = lib === undefined ? "" : `; 'inspect ${lib}' lists the handlers it exports`;
  let md: HandlerMetadata;
  try {
    md = rt.metadata(handler);
  } catch (e) {
    const err = toFfiError(e);
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `'${handler.name}' does not answer the XLA FFI metadata query: ${err.message}${see}`,
      { cause: e, hint: err.hint },
    );
  }
  const { major, minor } = md.apiVersion;
  if (major === 0 && minor === 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `'${handler.name}' returned without filling in the XLA FFI metadata: not a handler${see}`,
    );
  }
  // The runtime's own registration rule (XLA 0.2+: versions 0.1 up to its own).
  const newest = Number(rt.apiVersion.slice(2));
  if (major !== 0 || minor < 1 || minor > newest) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `The handler's API version (${major}.${minor}) is incompatible with the framework's ` +
        `API version (${rt.apiVersion}). Minimum supported API version is (0.1).`,
    );
  }
  return md;
}

/** A result: its host bytes, and on CUDA the device buffer they are copied back from. */
interface _Ret {
  dtype: DataType;
  dims: number[];
  raw: Uint8Array;
  device?: DeviceBuffer;
}

class _EmbeddedCall implements PreparedCall {
  #rt: Runtime;
  #run: ParsedRun;
  #lib: HandlerLibrary | undefined;
  #frame: CallFrame;
  #handler: NativeHandler;
  #rets: (_Ret | null)[];
  #devices: DeviceBuffer[];
  #instance: Instance | undefined;
  #marked = false;

  constructor(
    rt: Runtime,
    run: ParsedRun,
    lib: HandlerLibrary | undefined,
    handler: NativeHandler,
    frame: CallFrame,
    rets: (_Ret | null)[],
    devices: DeviceBuffer[],
    instance: Instance | undefined,
  ) {
    this.#rt = rt;
    this.#run = run;
    this.#lib = lib;
    this.#handler = handler;
    this.#frame = frame;
    this.#rets = rets;
    this.#devices = devices;
    this.#instance = instance;
  }

  async call(): Promise<FfiError | undefined> {
    if (!this.#marked) {
      this.#marked = true;
      _runChildMark("call");
    }
    try {
      if (this.#run.stage === ExecutionStage.INSTANTIATE) {
        const inst = await this.#rt.instantiate(this.#handler, this.#frame);
        inst.close();
      } else {
        await this.#rt.call(this.#handler, this.#frame, {
          stage: this.#run.stage,
          instance: this.#instance,
        });
      }
      // On CUDA the call is done when the work it queued on the stream is.
      this.#rt.synchronize();
      return undefined;
    } catch (e) {
      return toFfiError(e);
    }
  }

  results(): CallArg[] {
    return this.#rets.map((r) => {
      if (r === null) return { kind: "token" as const };
      if (r.device) this.#rt.toHost(r.device, r.raw);
      return {
        kind: "buffer" as const,
        dtype: r.dtype,
        dims: r.dims,
        values: _decode(r.dtype, r.raw),
      };
    });
  }

  close(): void {
    this.#instance?.close();
    this.#instance = undefined;
    this.#frame.close();
    for (const d of this.#devices) d.close();
    this.#devices = [];
    this.#rt.close();
    this.#lib?.close();
    this.#lib = undefined;
    _closeRunModule(this.#run);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

function _newRuntime(run: ParsedRun): Runtime {
  if (run.platform !== "cuda") return new Runtime({ platform: "Host", threads: run.threads });
  try {
    return new Runtime({ platform: "CUDA", threads: run.threads });
  } catch (e) {
    const err = toFfiError(e);
    throw new FfiError(err.code, `--platform cuda: ${err.message}`, { cause: e, hint: err.hint });
  }
}

function _hostBytes(bytes: number, index: number, dims: readonly number[]): Uint8Array {
  try {
    return new Uint8Array(bytes);
  } catch (e) {
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `--ret ${index + 1}: ${bytes} bytes for [${dims.join(",")}] cannot be allocated`,
      { cause: e },
    );
  }
}

async function _prepare(
  run: ParsedRun,
  args: readonly CallArg[],
  probe: ProbeOptions | undefined,
): Promise<PreparedCall> {
  if (run.target.kind === "library" && _runChild() === undefined) {
    // Calling a symbol that is no handler may crash: ask in a child process first.
    const symbols = run.instantiate === undefined ? [run.handler] : [run.instantiate, run.handler];
    const answers = await queryInChild(run.target.path, symbols, probe);
    for (const symbol of symbols) {
      const answer = answers.get(symbol)!;
      if (answer instanceof FfiError) {
        throw new FfiError(
          answer.code === ErrorCode.NOT_FOUND ? ErrorCode.INVALID_ARGUMENT : answer.code,
          `${answer.message}; 'inspect ${run.target.path}' lists the handlers it exports`,
        );
      }
    }
  }
  let loaded: _Loaded | undefined;
  let rt: Runtime | undefined;
  let frame: CallFrame | undefined;
  let instance: Instance | undefined;
  const devices: DeviceBuffer[] = [];
  try {
    loaded = await _load(run);
    const { handler, instantiate, lib } = loaded;
    rt = _newRuntime(run);
    const cuda = rt.platform === "CUDA";
    const libPath = run.target.kind === "library" ? run.target.path : undefined;
    if (lib && libPath !== undefined) {
      const r = rt;
      await _registerTypes(r, lib, libPath, run.types ?? [], () => {
        _checkMetadata(r, handler, libPath);
        if (instantiate) _checkMetadata(r, instantiate, libPath);
      });
    } else {
      _checkMetadata(rt, handler, libPath);
      if (instantiate) _checkMetadata(rt, instantiate, libPath);
    }
    const b = new CallFrameBuilder({ guard: run.guard === true });
    for (const a of args) {
      if (a.kind === "token") {
        b.tokenArg();
        continue;
      }
      const data = encodeValues(a.dtype, a.dims, a.values);
      if (cuda) {
        const d = rt.deviceArg(data, a.dims, a.dtype);
        devices.push(d);
        b.arg(d);
      } else {
        b.arg(data, a.dims, a.dtype);
      }
    }
    const rets: (_Ret | null)[] = [];
    for (const spec of run.rets) {
      if (spec.kind === "token") {
        b.tokenRet();
        rets.push(null);
        continue;
      }
      // like:N: the dtype and shape of argument N (an inline one's is known when parsed).
      const like = spec.kind === "like" ? args[spec.arg] : undefined;
      if (spec.kind === "like" && like?.kind !== "buffer") {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `--ret ${rets.length + 1}: like:${spec.arg}: argument ${spec.arg} is not an array`,
        );
      }
      const r = like?.kind === "buffer"
        ? { dtype: like.dtype, dims: [...like.dims] }
        : spec as { dtype: DataType; dims: number[] };
      const bytes = _count(r.dims) * dataTypeInfo(r.dtype).byteWidth;
      const raw = _hostBytes(bytes, rets.length, r.dims);
      if (cuda) {
        const d = rt.deviceBuffer(r.dtype, r.dims);
        devices.push(d);
        b.ret(d);
        rets.push({ dtype: r.dtype, dims: r.dims, raw, device: d });
      } else {
        b.ret(raw, r.dims, r.dtype);
        rets.push({ dtype: r.dtype, dims: r.dims, raw });
      }
    }
    b.attrs(_frameAttrs(run.attrs));
    frame = b.build();
    if (instantiate) {
      // As XLA does, the instantiate stage gets the attributes only (no buffers).
      using attrsOnly = new CallFrameBuilder().attrs(_frameAttrs(run.attrs)).build();
      try {
        instance = await rt.instantiate(instantiate, attrsOnly);
        rt.synchronize();
      } catch (e) {
        const err = toFfiError(e);
        throw new FfiError(
          err.code === ErrorCode.UNAVAILABLE ? ErrorCode.INTERNAL : err.code,
          `--instantiate ${instantiate.name} failed (${err.codeName}): ${err.message}`,
          { cause: e, hint: err.hint },
        );
      }
    }
    return new _EmbeddedCall(rt, run, lib, handler, frame, rets, devices, instance);
  } catch (e) {
    instance?.close();
    frame?.close();
    for (const d of devices) d.close();
    rt?.close();
    loaded?.lib?.close();
    _closeRunModule(run);
    throw e;
  }
}

/**
 * The command line's runtime: the embedded XLA FFI runtime (Host, or CUDA
 * with `--platform cuda`: arguments copied to device buffers, results copied
 * back after each call),
 * `.npy` files, and metadata queries in child processes (a symbol that is no
 * handler may crash or hang when called; the child takes that, not the CLI).
 *
 * @example
 * ```ts ignore
 * import { embeddedRuntime } from "./embedded.ts";
 * import { main } from "./main.ts";
 * await main(["inspect", "./libmy_handlers.so"], {
 *   stdout: (t) => console.log(t),
 *   stderr: (t) => console.error(t),
 *   runtime: embeddedRuntime({ probe: { timeoutMs: 2000 } }),
 * });
 * ```
 */
export function embeddedRuntime(options?: EmbeddedRuntimeOptions): CliRuntime {
  const probe = options?.probe;
  return {
    async queryMetadata(libPath, symbol) {
      const answer = (await queryInChild(libPath, [symbol], probe)).get(symbol)!;
      if (answer instanceof FfiError) throw answer;
      return answer;
    },
    queryMetadataAll: (libPath, symbols) => queryInChild(libPath, symbols, probe),
    prepare: (run, args) => _prepare(run, args, probe),
    runIsolated: _runIsolated,
    readNpy(path) {
      const a = loadNpy(path);
      return { dtype: a.dtype, dims: a.shape, values: _decode(a.dtype, a.data) };
    },
    writeNpy(path, a) {
      saveNpy(path, {
        dtype: a.dtype,
        shape: a.dims,
        data: encodeValues(a.dtype, a.dims, a.values),
      });
    },
  };
}
