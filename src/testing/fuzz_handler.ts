/**
 * The handler fuzzer: finds the signature of a handler by calling it with
 * probing frames and reading its decode diagnostics, then calls it with
 * generated frames of that signature (shapes at their edges, values at their
 * edges, attributes at their edges), in the isolated, guarded process of its
 * library, and reports each distinct failure (a crash, a write outside a
 * result or into an argument, a hang, a result that differs between two
 * calls with the same input, an error code outside XLA's range, a mismatch
 * with a reference), shrunk, with `.npy` inputs and the `cli run` line that
 * reproduces it. `cli fuzz` and `cli inspect --signature` are built on it.
 * See docs/fuzzing.md.
 *
 * @module
 */
import { DataType, ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { type DataTypedArray, dataTypeInfo } from "../abi/dtype.ts";
import { FfiError, toFfiError } from "../errors.ts";
import { lookupTypeName, typeFacts, typeName } from "../spec/type_names.ts";
import {
  addAttr,
  type AttrDictionary as CliAttrs,
  type AttrValue,
  encodeValues,
  parseArgSpec,
  parseRetSpec,
} from "../spec/grammar.ts";
import { array, type AttrDictionary, type AttrInput, scalar } from "../runtime/attributes.ts";
import type { ArrayInput, ArraySpec } from "../runtime/ffi_call.ts";
import { HandlerLibrary, type HandlerRef } from "../runtime/handler_library.ts";
import { _INSTANCE_FRESH, _INSTANCE_KEEP, type IsolatedOutput } from "../runtime/isolate.ts";
import { CallFrameBuilder } from "../runtime/call_frame.ts";
import { Runtime } from "../runtime/runtime.ts";
import { loadNpy, saveNpy } from "../npy.ts";
import { type HandlersFromOptions, ModuleHandler } from "../xla/modules.ts";
import { _openModuleIsolated } from "../xla/_module_isolate.ts";
import { assertAllClose } from "./assert.ts";
import type {
  ArgValues,
  AttrSignature,
  BufferSignature,
  FuzzCase,
  FuzzFailure,
  FuzzFailureKind,
  FuzzOptions,
  FuzzReport,
  FuzzTarget,
  HandlerSignature,
  ReferenceArray,
  ReferenceAttrs,
  ResultRule,
} from "./fuzz/types.ts";

export type {
  ArgValues,
  AttrSignature,
  BufferSignature,
  FuzzCase,
  FuzzFailure,
  FuzzFailureKind,
  FuzzOptions,
  FuzzReport,
  FuzzTarget,
  HandlerSignature,
  ReferenceArray,
  ReferenceAttrs,
  ResultRule,
} from "./fuzz/types.ts";

// ------------------------------------------------------------------ calling

/** What one call came to. */
interface _Outcome {
  ok: boolean;
  error?: FfiError;
  results?: ArrayBufferView[];
}

/** A Python module's handler to run in a child process that hosts the module, or undefined. */
function _moduleTarget(
  target: FuzzTarget,
  options: FuzzOptions,
): { module: string; handler: string; from: HandlersFromOptions } | undefined {
  if (
    "module" in target && typeof target.module === "string" && !(target instanceof ModuleHandler)
  ) {
    const t = target as {
      module: string;
      handler: unknown;
      initialize?: string;
      platform?: string;
    };
    if (typeof t.handler !== "string" || t.handler === "") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "fuzzHandler: target.handler is empty");
    }
    const from: HandlersFromOptions = {};
    if (t.initialize !== undefined) from.initialize = t.initialize;
    if (t.platform !== undefined) from.platform = t.platform;
    return { module: t.module, handler: t.handler, from };
  }
  if (options.isolate === true && target instanceof ModuleHandler) {
    return { module: target.module, handler: target.name!, from: target._from };
  }
  return undefined;
}

/** The handler and what calls it, in a child process for a library or a Python module. */
class _Caller {
  #lib: HandlerLibrary | null = null;
  #rt: Runtime;
  #handler!: HandlerRef;
  /** The library's instantiate handler: each call gets a fresh state from it first. */
  #instantiate: HandlerRef | null = null;
  readonly library?: string;
  readonly name?: string;
  /** A Python module's handler: the module and what it is asked with. */
  readonly module?: { name: string; from: HandlersFromOptions };
  readonly isolated: boolean;

  /** The caller of `target` (a Python module's is opened first: the interpreter is asked). */
  static async open(target: FuzzTarget, options: FuzzOptions): Promise<_Caller> {
    const m = _moduleTarget(target, options);
    if (m === undefined) {
      if (options.isolate === true && !("library" in target)) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          "fuzzHandler: isolate moves a Python module's handler (Xla.handlersFrom) to a child " +
            "process; a TS handler runs in this process, a shared library's handler " +
            "({ library, handler }) always in its own",
        );
      }
      return new _Caller(target, options);
    }
    if (options.instantiate !== undefined || (options.stateTypes ?? []).length > 0) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "fuzzHandler: instantiate and stateTypes are for a shared library's handler",
      );
    }
    if (options.sanitize !== undefined) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "fuzzHandler: sanitize is for a shared library built with the sanitizer, not a Python " +
          "module's handler",
      );
    }
    const lib = await _openModuleIsolated(m.module, m.from, {
      timeoutMs: options.timeoutMs ?? 1000,
      output: options.handlerOutput ?? "keep",
    });
    return new _Caller(target, options, { lib, ...m });
  }

  private constructor(
    target: FuzzTarget,
    options: FuzzOptions,
    module?: {
      lib: HandlerLibrary;
      module: string;
      handler: string;
      from: HandlersFromOptions;
    },
  ) {
    this.#rt = new Runtime({ threads: 0 });
    try {
      if (module !== undefined) {
        this.#lib = module.lib;
        this.module = { name: module.module, from: module.from };
        this.name = module.handler;
        this.isolated = true;
        this.#handler = this.#lib.handler(module.handler);
      } else if ("library" in target && typeof target.library === "string") {
        if (typeof target.handler !== "string" || target.handler === "") {
          throw new FfiError(ErrorCode.INVALID_ARGUMENT, "fuzzHandler: target.handler is empty");
        }
        this.library = target.library;
        this.name = target.handler;
        this.#lib = HandlerLibrary.open(target.library, {
          isolate: {
            timeoutMs: options.timeoutMs ?? 1000,
            output: options.handlerOutput ?? "keep",
            ...(options.sanitize ? { sanitize: options.sanitize } : {}),
          },
        });
        this.#handler = this.#lib.handler(target.handler);
        this.isolated = true;
        const minor = Number(this.#rt.apiVersion.slice(2));
        for (const t of options.stateTypes ?? []) {
          this.#lib._isolatedProcess!.registerType(t, minor);
        }
        if (options.instantiate !== undefined) {
          this.#instantiate = this.#lib.handler(options.instantiate);
        }
      } else {
        if (options.instantiate !== undefined || (options.stateTypes ?? []).length > 0) {
          throw new FfiError(
            ErrorCode.INVALID_ARGUMENT,
            "fuzzHandler: instantiate and stateTypes are for a library's handler",
          );
        }
        this.#handler = target as HandlerRef;
        this.isolated = false;
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  async call(
    args: readonly ArrayInput[],
    results: readonly ArraySpec[],
    attrs: AttrDictionary,
    guard: boolean,
  ): Promise<_Outcome> {
    const process = this.#lib?._isolatedProcess;
    try {
      if (this.#instantiate !== null && process !== undefined) {
        // As XLA does, the instantiate stage gets the attributes only; a fresh state per call.
        process.instance = _INSTANCE_FRESH;
        using frame = new CallFrameBuilder().attrs(attrs).build();
        await this.#rt.call(this.#instantiate, frame, { stage: ExecutionStage.INSTANTIATE });
        process.instance = _INSTANCE_KEEP;
      }
      // A signature without results is still called: jax would drop it without a side effect.
      const out = await this.#rt.ffiCall(this.#handler, {
        args,
        results,
        attrs,
        guard,
        hasSideEffect: true,
      });
      return { ok: true, results: out as ArrayBufferView[] };
    } catch (e) {
      return { ok: false, error: toFfiError(e) };
    } finally {
      if (process !== undefined) process.instance = 0;
    }
  }

  /** What the library's handlers wrote since the last time asked (kept output). */
  output(): IsolatedOutput {
    return this.#lib?.isolatedOutput() ?? { bytes: 0, lines: 0, head: "" };
  }

  close(): void {
    try {
      this.#rt.close();
    } finally {
      this.#lib?.close();
      this.#lib = null;
    }
  }
}

// ------------------------------------------------------------------ discovery

const DECODE_FAILED = /Failed to decode all FFI handler operands \(bad operands at: ([\d, ]*)\)/;
const DIAG_STARTS = "(?=Wrong |Attribute name mismatch: |\\n|$)";

/** Buffer dtypes probes give, each operand its own, so a diagnostic names the operand. */
const PROBE_DTYPES: DataType[] = [
  DataType.S8,
  DataType.S16,
  DataType.U8,
  DataType.U16,
  DataType.U32,
  DataType.U64,
  DataType.F16,
  DataType.BF16,
  DataType.C64,
  DataType.C128,
  DataType.S64,
  DataType.F64,
  DataType.S32,
  DataType.F32,
  DataType.PRED,
];

/** Scalar attribute dtypes probes give, each attribute its own. */
const PROBE_SCALARS: DataType[] = [
  DataType.S8,
  DataType.S16,
  DataType.U8,
  DataType.U16,
  DataType.U32,
  DataType.U64,
  DataType.S32,
  DataType.S64,
  DataType.F32,
  DataType.F64,
  DataType.PRED,
];

function _dtypeByName(name: string): DataType | undefined {
  const v = (DataType as unknown as Record<string, number>)[name];
  return typeof v === "number" ? v as DataType : undefined;
}

interface _ProbeBuf {
  sig: BufferSignature;
  dtypeDone: boolean;
  rankDone: boolean;
  probeDtype: number; // index into PROBE_DTYPES
  probeRank: number;
  quietDtype: number;
  quietRank: number;
}

interface _ProbeAttr {
  sig: AttrSignature;
  done: boolean;
  probe: AttrValue;
  tries: number;
}

function _probeBuf(k: number): _ProbeBuf {
  return {
    sig: {},
    dtypeDone: false,
    rankDone: false,
    probeDtype: k % PROBE_DTYPES.length,
    probeRank: k + 1,
    quietDtype: 0,
    quietRank: 0,
  };
}

function _bufInput(b: _ProbeBuf): { dtype: DataType; shape: number[] } {
  const dtype = b.dtypeDone ? b.sig.dtype ?? DataType.F32 : PROBE_DTYPES[b.probeDtype]!;
  const rank = b.rankDone ? b.sig.rank ?? 1 : b.probeRank;
  return { dtype, shape: new Array(rank).fill(1) };
}

function _zeros(dtype: DataType, shape: readonly number[]): Uint8Array {
  const info = dataTypeInfo(dtype);
  let n = 1;
  for (const d of shape) n *= d;
  return new Uint8Array(n * Math.max(1, info.byteWidth));
}

/** ffiCall attributes of the command line's attribute values. */
export function _ffiAttrs(dict: CliAttrs): Record<string, AttrInput> {
  const out: Record<string, AttrInput> = {};
  for (const [name, v] of dict.entries) out[name] = _ffiAttr(v);
  return out;
}

function _ffiAttr(v: AttrValue): AttrInput {
  switch (v.kind) {
    case "string":
      return v.value;
    case "scalar":
      return scalar(v.dtype, v.value);
    case "array":
      return array(v.dtype, v.values);
    case "dictionary":
      return _ffiAttrs(v);
  }
}

function _attrsOf(entries: [string, AttrValue][]): CliAttrs {
  return { kind: "dictionary", entries: new Map(entries) };
}

/** A hint's dtype and rank: `f32[4,3]`, `f32[2]=1,2`, `x.npy`. */
function _argHint(text: string, i: number): BufferSignature {
  const where = `argument hint ${i}`;
  if (/\.npy$/i.test(text)) {
    const a = loadNpy(text);
    return { dtype: a.dtype, rank: a.shape.length };
  }
  if (text.includes("=")) {
    const spec = parseArgSpec(text, where);
    if (spec.kind === "inline") return { dtype: spec.dtype, rank: spec.dims.length };
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: '${text}' is not a buffer`);
  }
  const spec = parseRetSpec(text, where);
  if (spec.kind !== "buffer") {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: '${text}' is not a buffer spec (dtype[d0,d1,...])`,
    );
  }
  return { dtype: spec.dtype, rank: spec.dims.length };
}

/**
 * The values a scalar attribute is drawn from: `choices` (`u8:{76,85}`,
 * `u8:{'L','U'}`), or a closed range (`f32:[0.1,10]`).
 */
interface _Domain {
  dtype: DataType;
  choices?: (number | bigint)[];
  range?: [number | bigint, number | bigint];
}

/** The attribute hints: values sent as given, domains to draw from, names left free. */
interface _AttrHints {
  /** Each hinted attribute with one value of its type (the pinned value, a domain's first). */
  attrs: CliAttrs;
  /** Scalars drawn from a set of values or a range. */
  domains: Map<string, _Domain>;
  /** Scalars and arrays whose type only was given (`NAME=TYPE:*`): values are varied. */
  free: Set<string>;
}

const DOMAIN_HINT = /^([^=]+)=([A-Za-z][A-Za-z0-9]*)(\[\])?:(\{.*\}|\[.*\]|\*)$/s;

/** Characters in a choice list (`'L'`) as their code. */
function _choiceItems(text: string, where: string): string {
  return text.split(",").map((s) => {
    const t = s.trim();
    const ch = /^'(.)'$/su.exec(t);
    if (ch === null) return t;
    const code = ch[1]!.codePointAt(0)!;
    if (code > 255) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: '${ch[1]}' is not one byte`);
    }
    return String(code);
  }).join(",");
}

/**
 * Reads the fuzzer's attribute hints: `NAME=TYPE:VALUE` (sent as given),
 * `NAME=TYPE:{V1,V2,…}` (drawn from these values; `'L'` is a character's
 * code), `NAME=TYPE:[LO,HI]` (drawn from the range, its ends included),
 * `NAME=TYPE:*` or `NAME=TYPE[]:*` (the type only; values are varied).
 */
function _hintAttrs(hints: readonly string[] | undefined): _AttrHints {
  const attrs: CliAttrs = { kind: "dictionary", entries: new Map() };
  const domains = new Map<string, _Domain>();
  const free = new Set<string>();
  for (const h of hints ?? []) {
    const m = DOMAIN_HINT.exec(h);
    if (m === null) {
      addAttr(attrs, h);
      continue;
    }
    const [, name, type, brackets, body] = m;
    const where = `--attr ${name}`;
    if (body === "*") {
      const dtype = lookupTypeName(type!);
      const zero = dtype === DataType.PRED ? "true" : "0";
      addAttr(attrs, `${name}=${type}${brackets ?? ""}:${brackets ? "" : zero}`);
      free.add(name!);
      continue;
    }
    if (brackets) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${where}: choices and ranges are for scalars ('${h}')`,
      );
    }
    if (name!.includes(".")) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${where}: choices and ranges are for top-level attributes ('${h}')`,
      );
    }
    const inner = body!.slice(1, -1);
    const probe: CliAttrs = { kind: "dictionary", entries: new Map() };
    addAttr(probe, `${name}=${type}[]:${_choiceItems(inner, where)}`);
    const parsed = probe.entries.get(name!) as { dtype: DataType; values: (number | bigint)[] };
    const values = Array.from(parsed.values);
    const dtype = parsed.dtype;
    if (body!.startsWith("{")) {
      if (values.length === 0) {
        throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: no choices in '${h}'`);
      }
      domains.set(name!, { dtype, choices: values });
    } else {
      if (values.length !== 2 || !(values[0]! <= values[1]!)) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `${where}: a range is [LO,HI] with LO <= HI, got '${h}'`,
        );
      }
      domains.set(name!, { dtype, range: [values[0]!, values[1]!] });
    }
    attrs.entries.set(name!, { kind: "scalar", dtype, value: values[0]! });
  }
  return { attrs, domains, free };
}

/** Whether a scalar value is inside a domain. */
function _inDomain(d: _Domain, v: number | bigint): boolean {
  if (d.choices) return d.choices.some((c) => c === v || Object.is(c, v));
  const [lo, hi] = d.range!;
  return v >= lo && v <= hi;
}

/** A value of a domain: a choice, or a range's ends, middle, neighbours or any value inside. */
function _drawDomain(rng: _Rng, d: _Domain): number | bigint {
  if (d.choices) return rng.pick(d.choices);
  const [lo, hi] = d.range!;
  if (typeof lo === "bigint" || typeof hi === "bigint") {
    const l = BigInt(lo), h = BigInt(hi);
    const span = h - l;
    const picks = [l, h, l + span / 2n, l + (span > 0n ? 1n : 0n), h - (span > 0n ? 1n : 0n)];
    if (rng.next() < 0.6) return rng.pick(picks);
    return l + BigInt(Math.floor(rng.next() * Number(span + 1n)));
  }
  const isInt = typeFacts(d.dtype)!.kind === "int";
  if (isInt) {
    const picks = [lo, hi, Math.floor((lo + hi) / 2), Math.min(hi, lo + 1), Math.max(lo, hi - 1)];
    if (rng.next() < 0.6) return rng.pick(picks);
    return lo + rng.int(hi - lo + 1);
  }
  if (rng.next() < 0.5) return rng.pick([lo, hi, (lo + hi) / 2]);
  const v = Math.fround(lo + rng.next() * (hi - lo));
  return Math.min(hi, Math.max(lo, v));
}

/**
 * Finds the signature of a handler by calling it with probing frames: the
 * numbers of arguments, results and attributes from ffi.h's "Wrong number
 * of …" errors, each buffer's dtype and rank and each attribute's name and
 * type from its decode diagnostics ("Wrong buffer dtype: expected F32 but
 * got S8", "Attribute name mismatch: …", "Wrong scalar data type: …"). A
 * library's handler runs in a child process (`HandlerLibrary` with
 * `isolate`), never in this one. Hints (`args`, `attrs` of
 * {@link FuzzOptions}) fill in what probing cannot tell.
 *
 * @example
 * ```ts ignore
 * import { discoverSignature, formatSignature } from "@deno-xla/ffi/testing";
 * const sig = await discoverSignature({ library: "./libmy.so", handler: "my_op" });
 * console.log(formatSignature(sig, { library: "./libmy.so", handler: "my_op" }));
 * ```
 */
export async function discoverSignature(
  target: FuzzTarget,
  options: Pick<
    FuzzOptions,
    "args" | "attrs" | "timeoutMs" | "sanitize" | "instantiate" | "stateTypes" | "isolate"
  > = {},
): Promise<HandlerSignature> {
  const caller = await _Caller.open(target, options);
  try {
    return await _discover(caller, options);
  } finally {
    caller.close();
  }
}

const MAX_PROBES = 96;

async function _discover(
  caller: _Caller,
  options: Pick<FuzzOptions, "args" | "attrs">,
): Promise<HandlerSignature> {
  const argHints = (options.args ?? []).map((h, i) => h === undefined ? undefined : _argHint(h, i));
  const attrHints = _hintAttrs(options.attrs).attrs;
  const args: _ProbeBuf[] = [];
  const rets: _ProbeBuf[] = [];
  const attrs: _ProbeAttr[] = [];
  let variadicArgs = false, variadicResults = false, decodes = false;
  let attrCount = 0, probes = 0;
  const unknown: string[] = [];
  const setArgs = (n: number) => {
    while (args.length < n) args.push(_probeBuf(args.length + rets.length));
    args.length = n;
  };
  const setRets = (n: number) => {
    while (rets.length < n) rets.push(_probeBuf(args.length + rets.length + 8));
    rets.length = n;
  };
  const applyArgHints = () => {
    for (const [i, h] of argHints.entries()) {
      if (h === undefined) continue;
      if (i >= args.length) setArgs(i + 1);
      const b = args[i]!;
      b.sig = { ...h };
      b.dtypeDone = b.rankDone = true;
    }
  };
  applyArgHints();
  let lastMessage = "";
  while (probes < MAX_PROBES) {
    const bufs = [...args, ...rets];
    const argIn = args.map((b) => {
      const { dtype, shape } = _bufInput(b);
      return { dtype, shape, data: _zeros(dtype, shape) };
    });
    const retIn = rets.map((b) => _bufInput(b));
    const attrIn = _attrsOf(attrs.map((a) => [a.sig.name, a.probe]));
    probes++;
    const out = await caller.call(argIn, retIn, _ffiAttrs(attrIn), false);
    // A frame that decoded: buffers nothing was said about yet get one more
    // probe with another dtype and rank, to tell a match from no check.
    const decoded = () => {
      decodes = true;
      return _readDiagnostics("", bufs, attrs, attrHints);
    };
    if (out.ok) {
      if (decoded()) continue;
      break;
    }
    const msg = out.error!.message;
    lastMessage = msg;
    let m: RegExpExecArray | null;
    if ((m = /Wrong number of arguments: expected (at least )?(\d+) but got (\d+)/.exec(msg))) {
      const want = Number(m[2]);
      if (m[1]) variadicArgs = true;
      if (want === args.length) break; // cannot satisfy it: give up
      setArgs(Math.max(want, argHints.length));
      applyArgHints();
      continue;
    }
    if ((m = /Wrong number of results: expected (at least )?(\d+) but got (\d+)/.exec(msg))) {
      const want = Number(m[2]);
      if (m[1]) variadicResults = true;
      if (want === rets.length) break;
      setRets(want);
      continue;
    }
    if ((m = /Wrong number of attributes: expected (\d+) but got (\d+)/.exec(msg))) {
      const want = Number(m[1]);
      if (want === attrs.length) break;
      attrCount = want;
      attrs.length = 0;
      for (let i = 0; i < want; i++) {
        const name = `\u0001fuzz${String(i).padStart(3, "0")}`;
        attrs.push({ sig: { name }, done: false, probe: _probeScalar(i), tries: 0 });
      }
      continue;
    }
    const decode = DECODE_FAILED.exec(msg);
    if (!decode) {
      // An error of the handler's own, a crash or a hang: the frame decoded.
      if (decoded()) continue;
      break;
    }
    const progress = _readDiagnostics(msg, bufs, attrs, attrHints);
    if (!progress) break;
  }
  for (const a of attrs) {
    if (a.sig.name.startsWith("\u0001")) {
      unknown.push(`the names of ${attrCount} attributes (give them with --attr NAME=TYPE:VALUE)`);
      break;
    }
  }
  const sig: HandlerSignature = {
    args: args.map((b) => ({ ...b.sig })),
    results: rets.map((b) => ({ ...b.sig })),
    attrs: attrs.filter((a) => !a.sig.name.startsWith("\u0001")).map((a) => ({ ...a.sig })),
    variadicArgs,
    variadicResults,
    decodes,
    unknown,
    probes,
  };
  for (const [i, b] of args.entries()) {
    if (!b.dtypeDone && argHints[i] === undefined) {
      unknown.push(`the dtype of argument ${i}`);
    } else if (b.sig.dtype === undefined && argHints[i] === undefined) {
      unknown.push(`argument ${i} is untyped (any dtype; f32 is used, --arg gives another)`);
    }
    if (b.rankDone && b.sig.rank === undefined && argHints[i] === undefined) {
      unknown.push(`argument ${i} has its rank left free (ranks 0 to 4 are tried)`);
    }
  }
  for (const [i, b] of rets.entries()) {
    if (b.sig.dtype === undefined) unknown.push(`result ${i} is untyped (any dtype)`);
    if (b.sig.rank === undefined) unknown.push(`result ${i} has its rank left free`);
  }
  for (const a of sig.attrs) {
    if (a.kind === "dictionary" && !attrHints.entries.has(a.name)) {
      unknown.push(
        `attribute ${a.name} is a dictionary (give its entries: --attr ${a.name}.KEY=…)`,
      );
    } else if (a.kind === undefined) {
      unknown.push(`the type of attribute ${a.name} (give it: --attr ${a.name}=TYPE:VALUE)`);
    }
  }
  if (variadicArgs) {
    unknown.push(
      `the handler takes more arguments than ${args.length} (RemainingArgs or optional ones; ` +
        `--arg adds them)`,
    );
  }
  if (variadicResults) unknown.push(`the handler takes more results than ${rets.length}`);
  if (!decodes) {
    unknown.push(`no probing frame decoded; the last answer: ${lastMessage.split("\n").join(" ")}`);
  }
  return sig;
}

function _probeScalar(i: number): AttrValue {
  const dtype = PROBE_SCALARS[i % PROBE_SCALARS.length]!;
  const facts = typeFacts(dtype)!;
  const value = facts.kind === "int" && facts.bits === 64 ? 1n : 1;
  return { kind: "scalar", dtype, value };
}

/** Reads one failed decode's diagnostics into the probe state; false when nothing changed. */
function _readDiagnostics(
  msg: string,
  bufs: _ProbeBuf[],
  attrs: _ProbeAttr[],
  hints: CliAttrs,
): boolean {
  let changed = false;
  const open = (b: _ProbeBuf) => !b.dtypeDone;
  const heardDtype = new Set<_ProbeBuf>(), heardRank = new Set<_ProbeBuf>();
  for (
    const m of msg.matchAll(
      new RegExp(`Wrong buffer dtype: expected (\\w+) but got (\\w+?)${DIAG_STARTS}`, "g"),
    )
  ) {
    const got = _dtypeByName(m[2]!), want = _dtypeByName(m[1]!);
    const b = bufs.find((b) => open(b) && PROBE_DTYPES[b.probeDtype] === got);
    if (b === undefined || want === undefined) continue;
    b.sig.dtype = want;
    b.dtypeDone = true;
    heardDtype.add(b);
    changed = true;
  }
  for (const m of msg.matchAll(/Wrong buffer rank: expected (\d+) but got (\d+)/g)) {
    const b = bufs.find((b) => !b.rankDone && b.probeRank === Number(m[2]));
    if (b === undefined) continue;
    if (!b.dtypeDone) {
      // Its dtype passed: the probe's dtype is the one.
      b.sig.dtype = PROBE_DTYPES[b.probeDtype];
      b.dtypeDone = true;
    }
    b.sig.rank = Number(m[1]);
    b.rankDone = true;
    heardRank.add(b);
    changed = true;
  }
  // Buffers nothing was said about: their dtype (and rank) passed, or the
  // handler does not check them. A second probe with other ones tells.
  for (const [k, b] of bufs.entries()) {
    if (heardDtype.has(b) || heardRank.has(b)) continue;
    if (!b.dtypeDone) {
      if (++b.quietDtype >= 2) {
        b.dtypeDone = true; // untyped: sig.dtype stays undefined
      } else {
        b.probeDtype = (b.probeDtype + 5) % PROBE_DTYPES.length;
      }
      changed = true;
    }
    if (!b.rankDone && b.dtypeDone) {
      if (++b.quietRank >= 2) {
        b.rankDone = true; // rank free
      } else {
        b.probeRank = bufs.length + k + 1;
      }
      changed = true;
    }
  }
  // Attributes: names first, then types.
  const names: string[] = [];
  for (
    const m of msg.matchAll(new RegExp(`Attribute name mismatch: .*? vs (.*?)${DIAG_STARTS}`, "g"))
  ) {
    names.push(m[1]!);
  }
  if (names.length > 0) {
    names.sort();
    const placeholders = attrs.filter((a) => a.sig.name.startsWith("\u0001"));
    for (const [i, name] of names.entries()) {
      const a = placeholders[i];
      if (a === undefined) break;
      a.sig.name = name;
      const hint = hints.entries.get(name);
      if (hint !== undefined) {
        a.sig.kind = hint.kind;
        if (hint.kind === "scalar" || hint.kind === "array") a.sig.dtype = hint.dtype;
        a.probe = hint;
        a.done = true;
      }
    }
    attrs.sort((x, y) => (x.sig.name < y.sig.name ? -1 : x.sig.name > y.sig.name ? 1 : 0));
    return true;
  }
  const heard = new Set<_ProbeAttr>();
  for (
    const m of msg.matchAll(
      new RegExp(
        `Wrong (scalar|array) data type: expected (\\w+) but got (\\w+?)${DIAG_STARTS}`,
        "g",
      ),
    )
  ) {
    const got = _dtypeByName(m[3]!), want = _dtypeByName(m[2]!);
    const a = attrs.find((a) =>
      !a.done && a.probe.kind === m[1] && (a.probe as { dtype: DataType }).dtype === got
    );
    if (a === undefined || want === undefined) continue;
    a.sig.kind = m[1] as "scalar" | "array";
    a.sig.dtype = want;
    a.probe = _attrOfType(a.sig.kind, want);
    a.done = true;
    heard.add(a);
    changed = true;
  }
  const kinds = [
    ...msg.matchAll(
      new RegExp(`Wrong attribute type: expected (\\w+) but got (\\w+?)${DIAG_STARTS}`, "g"),
    ),
  ].map(
    (m) => m[1]!,
  );
  const quiet = attrs.filter((a) => !a.done && !heard.has(a));
  if (kinds.length === 0) {
    // Every attribute not named in a diagnostic decoded as sent.
    for (const a of quiet) {
      a.sig.kind = a.probe.kind;
      if (a.probe.kind === "scalar" || a.probe.kind === "array") a.sig.dtype = a.probe.dtype;
      a.done = true;
      changed = true;
    }
  } else if (quiet.length > 0) {
    // Which attribute wants which kind is not said: try the kinds in turn.
    for (const [i, a] of quiet.entries()) {
      if (a.tries > 8) {
        a.done = true;
        continue;
      }
      const kind = kinds[(i + a.tries) % kinds.length]!;
      a.tries++;
      a.probe = _attrProbe(kind, attrs.indexOf(a));
      if (kind === "dictionary") {
        a.sig.kind = "dictionary";
        const hint = hints.entries.get(a.sig.name);
        if (hint !== undefined) a.probe = hint;
      }
      changed = true;
    }
  }
  return changed;
}

function _attrProbe(kind: string, i: number): AttrValue {
  if (kind === "string") return { kind: "string", value: "" };
  if (kind === "dictionary") return { kind: "dictionary", entries: new Map() };
  if (kind === "array") {
    const dtype = PROBE_SCALARS.filter((d) => d !== DataType.PRED)[i % 10]!;
    return { kind: "array", dtype, values: [] as number[] };
  }
  return _probeScalar(i);
}

function _attrOfType(kind: "scalar" | "array", dtype: DataType): AttrValue {
  if (kind === "array") return { kind: "array", dtype, values: [] as number[] };
  const f = typeFacts(dtype)!;
  return { kind: "scalar", dtype, value: f.kind === "int" && f.bits === 64 ? 0n : 0 };
}

// ------------------------------------------------------------------ formatting

function _bufText(b: BufferSignature, fallbackRank: number): string {
  const t = b.dtype === undefined ? "f32" : typeName(b.dtype);
  const rank = b.rank ?? fallbackRank;
  return `${t}[${new Array(rank).fill(1).map((_, i) => [3, 4, 5, 2][i % 4]).join(",")}]`;
}

function _attrSkeleton(a: AttrSignature): string {
  if (a.kind === "scalar" && a.dtype !== undefined) {
    return `${a.name}=${typeName(a.dtype)}:${a.dtype === DataType.PRED ? "true" : "0"}`;
  }
  if (a.kind === "array" && a.dtype !== undefined) return `${a.name}=${typeName(a.dtype)}[]:0`;
  if (a.kind === "string") return `${a.name}=str:`;
  if (a.kind === "dictionary") return `${a.name}.KEY=TYPE:VALUE`;
  return `${a.name}=TYPE:VALUE`;
}

/**
 * A signature as text: the buffers and attributes, what was not discovered,
 * an `ffiCall` options skeleton, and a `cli run` line (shapes and values are
 * placeholders of the right dtype and rank).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { formatSignature } from "@deno-xla/ffi/testing";
 * console.log(formatSignature({
 *   args: [{ dtype: DataType.F32, rank: 2 }], results: [{ dtype: DataType.F32, rank: 2 }],
 *   attrs: [{ name: "alpha", kind: "scalar", dtype: DataType.F32 }],
 *   variadicArgs: false, variadicResults: false, decodes: true, unknown: [], probes: 5,
 * }, { library: "./libmy.so", handler: "scale" }).split("\n")[0]);
 * // "scale: 1 argument, 1 result, 1 attribute (5 probing calls)"
 * ```
 */
export function formatSignature(
  sig: HandlerSignature,
  target: { library: string; handler: string },
): string {
  const p = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  const lines = [
    `${target.handler}: ${p(sig.args.length, "argument")}, ${p(sig.results.length, "result")}, ` +
    `${p(sig.attrs.length, "attribute")} (${p(sig.probes, "probing call")})`,
  ];
  const buf = (b: BufferSignature) =>
    `${b.dtype === undefined ? "any dtype" : typeName(b.dtype)}, ${
      b.rank === undefined ? "any rank" : `rank ${b.rank}`
    }`;
  sig.args.forEach((b, i) => lines.push(`  argument ${i}: ${buf(b)}`));
  sig.results.forEach((b, i) => lines.push(`  result ${i}: ${buf(b)}`));
  for (const a of sig.attrs) {
    lines.push(
      `  attribute ${a.name}: ${a.kind ?? "unknown type"}${
        a.dtype !== undefined ? ` ${typeName(a.dtype)}` : ""
      }`,
    );
  }
  if (sig.unknown.length > 0) {
    lines.push("not discovered:");
    for (const u of sig.unknown) lines.push(`  ${u}`);
  }
  const dt = (b: BufferSignature) => `DataType.${DataType[b.dtype ?? DataType.F32]}`;
  const shape = (b: BufferSignature) =>
    `[${new Array(b.rank ?? 1).fill(0).map((_, i) => [3, 4, 5, 2][i % 4]).join(", ")}]`;
  const attrTs = (a: AttrSignature) => {
    if (a.kind === "scalar" && a.dtype !== undefined) {
      return `${JSON.stringify(a.name)}: scalar(DataType.${DataType[a.dtype]}, 0)`;
    }
    if (a.kind === "array" && a.dtype !== undefined) {
      return `${JSON.stringify(a.name)}: array(DataType.${DataType[a.dtype]}, [0])`;
    }
    if (a.kind === "string") return `${JSON.stringify(a.name)}: ""`;
    return `${JSON.stringify(a.name)}: {} /* ${a.kind ?? "unknown"} */`;
  };
  lines.push("ffiCall options:");
  lines.push("  {");
  lines.push(
    `    args: [${
      sig.args.map((b) =>
        `{ data: /* ${typeName(b.dtype ?? DataType.F32)} */, shape: ${shape(b)}, dtype: ${dt(b)} }`
      )
        .join(", ")
    }],`,
  );
  lines.push(
    `    results: [${
      sig.results.map((b) => `{ dtype: ${dt(b)}, shape: ${shape(b)} }`).join(", ")
    }],`,
  );
  if (sig.attrs.length > 0) lines.push(`    attrs: { ${sig.attrs.map(attrTs).join(", ")} },`);
  // Without results and a side effect ffiCall drops the call, as jax does: the handler would not run.
  if (sig.results.length === 0) lines.push("    hasSideEffect: true,");
  lines.push("  }");
  const run = ["cli", "run", target.library, target.handler];
  for (const b of sig.args) run.push("--arg", `${_bufText(b, 1)}=0`);
  for (const b of sig.results) run.push("--ret", _bufText(b, 1));
  for (const a of sig.attrs) run.push("--attr", _attrSkeleton(a));
  lines.push("command line:");
  lines.push(`  ${run.map(_shellWord).join(" ")}`);
  return lines.join("\n") + "\n";
}

/** A word for a POSIX shell: quoted when it holds anything but safe characters. */
export function _shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

// ------------------------------------------------------------------ generation

/** A small, fast, seeded generator (mulberry32). */
class _Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = (seed ^ 0x9e3779b9) >>> 0;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** Dimension sizes: 0, 1, small, odd, prime, past a cache line, past a page (of f32). */
const DIMS_COMMON = [0, 1, 1, 2, 2, 3, 3, 4, 5, 7];
const DIMS_RARE = [8, 11, 13, 16, 17, 31, 33, 64, 127, 1031, 4099];
/** The most bytes one generated argument takes. */
const MAX_BYTES = 1 << 18;

function _dim(rng: _Rng): number {
  return rng.next() < 0.8 ? rng.pick(DIMS_COMMON) : rng.pick(DIMS_RARE);
}

function _floatEdges(dtype: DataType): number[] {
  const f = typeFacts(dtype)!;
  const max = f.max as number;
  const tiny: Record<number, [number, number]> = {
    [DataType.F16]: [5.960464477539063e-8, 6.103515625e-5],
    [DataType.BF16]: [9.183549615799121e-41, 1.1754943508222875e-38],
    [DataType.F32]: [1.401298464324817e-45, 1.1754943508222875e-38],
    [DataType.F64]: [5e-324, 2.2250738585072014e-308],
  };
  const [denorm, normal] = tiny[dtype] ?? [0, 0];
  const edges = [0, -0, 1, -1, 0.5, max, -max, denorm, -denorm, normal];
  if (f.nonFinite) edges.push(NaN, Infinity, -Infinity, NaN);
  return edges;
}

function _intEdges(dtype: DataType): bigint[] {
  const f = typeFacts(dtype)!;
  const min = f.min!, max = f.max as bigint;
  const out = [0n, 1n, 2n, 3n, 7n, 127n, 128n, 255n, 256n, -1n, -2n, min, max, min + 1n, max - 1n];
  return out.filter((v) => v >= min && v <= max);
}

/** Element values of a generated argument: ordinary ones, edges sprinkled, or one edge throughout. */
function _values(rng: _Rng, dtype: DataType, n: number): (number | bigint)[] {
  const f = typeFacts(dtype);
  const info = dataTypeInfo(dtype);
  const lanes = Math.max(1, info.lanes);
  const count = n * lanes;
  if (f === undefined || f.kind === "token") return [];
  if (f.kind === "pred") return Array.from({ length: count }, () => rng.int(2));
  const mode = rng.next();
  if (f.kind === "int") {
    const edges = _intEdges(dtype);
    const big = f.bits === 64;
    const min = Number(f.min!), max = Number(f.max);
    const ordinary = () => {
      const v = Math.max(min, Math.min(max, rng.int(21) - (min < 0 ? 10 : 0)));
      return big ? BigInt(v) : v;
    };
    const edge = () => big ? rng.pick(edges) : Number(rng.pick(edges));
    if (mode < 0.5) return Array.from({ length: count }, ordinary);
    if (mode < 0.85) {
      return Array.from({ length: count }, () => rng.next() < 0.15 ? edge() : ordinary());
    }
    const e = edge();
    return new Array(count).fill(e);
  }
  const part = f.kind === "complex"
    ? (dtype === DataType.C64 ? DataType.F32 : DataType.F64)
    : dtype;
  const edges = _floatEdges(part);
  const ordinary = () => Math.round((rng.next() * 20 - 10) * 8) / 8;
  if (mode < 0.5) return Array.from({ length: count }, ordinary);
  if (mode < 0.85) {
    return Array.from({ length: count }, () => rng.next() < 0.15 ? rng.pick(edges) : ordinary());
  }
  return new Array(count).fill(rng.pick(edges));
}

function _bytesOf(
  dtype: DataType,
  shape: readonly number[],
  values: (number | bigint)[],
): Uint8Array {
  if (dataTypeInfo(dtype).typedArray === null) return new Uint8Array(0);
  const v = encodeValues(dtype, shape, values);
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
}

function _count(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Option characters of LAPACK routines (uplo, jobz, trans, diag, side, norm, …). */
const LAPACK_CHARS = ["L", "U", "N", "V", "T", "C", "A", "S", "O", "R", "I", "E", "B", "Y"];

/** The attribute values a generated call gets: edges of the type and of the call's dimensions. */
function _attrValue(
  rng: _Rng,
  a: AttrSignature,
  dims: number[],
  hints: _AttrHints,
): AttrValue {
  const hint = hints.attrs.entries.get(a.name);
  const domain = hints.domains.get(a.name);
  if (domain !== undefined) {
    return { kind: "scalar", dtype: domain.dtype, value: _drawDomain(rng, domain) };
  }
  if (hint !== undefined && !hints.free.has(a.name)) return hint;
  const kind = hint?.kind ?? a.kind;
  const dtype = hint !== undefined && (hint.kind === "scalar" || hint.kind === "array")
    ? hint.dtype
    : a.dtype;
  if (kind === "string") {
    return { kind: "string", value: rng.pick(["", "a", "x".repeat(257), "\u00e9\u4e2d", "0"]) };
  }
  if (kind === "dictionary" || kind === undefined || dtype === undefined) {
    return { kind: "dictionary", entries: new Map() };
  }
  const f = typeFacts(dtype)!;
  const one = (): number | bigint => {
    if (f.kind === "pred") return rng.int(2);
    // A u8 scalar is often a LAPACK-style option character ('U', 'N', …).
    if (dtype === DataType.U8 && kind === "scalar" && rng.next() < 0.35) {
      return rng.pick(LAPACK_CHARS).charCodeAt(0);
    }
    if (f.kind === "int") {
      const min = f.min!, max = f.max as bigint;
      let v: bigint;
      const r = rng.next();
      if (r < 0.45 && dims.length > 0) {
        // Near a dimension of the call: an index or a size one off.
        v = BigInt(rng.pick(dims)) + BigInt(rng.int(3) - 1);
        if (rng.next() < 0.2) v = -v;
      } else if (r < 0.85) v = rng.pick(_intEdges(dtype));
      else v = BigInt(rng.int(64));
      if (v < min) v = min;
      if (v > max) v = max;
      return f.bits === 64 ? v : Number(v);
    }
    const edges = _floatEdges(dtype);
    return rng.next() < 0.6 ? rng.pick(edges) : Math.round((rng.next() * 20 - 10) * 8) / 8;
  };
  if (kind === "array") {
    const n = rng.pick([0, 1, 2, 3, 5]);
    const values = Array.from({ length: n }, one) as number[] | bigint[];
    return { kind: "array", dtype, values };
  }
  return { kind: "scalar", dtype, value: one() };
}

/** A parsed result rule. */
type _Rule =
  | { kind: "like"; arg: number }
  | { kind: "expr"; dtype: DataType; dims: (number | [number, number])[] }
  | { kind: "fn"; fn: (shapes: readonly (readonly number[])[]) => ArraySpec };

/**
 * @internal Parses a result rule: `like:N`, `dtype[e0,e1,…]` with each `e` a
 * size or `$A.D` (dimension D of argument A), or `dtype` (a scalar). Throws
 * FfiError (INVALID_ARGUMENT) naming `where`.
 */
export function _parseRule(rule: ResultRule, where: string): _Rule {
  if (typeof rule === "function") return { kind: "fn", fn: rule };
  if (typeof rule !== "string") {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: a result rule is a string or a function`,
    );
  }
  const text = rule.trim();
  const like = /^like:(\d+)$/.exec(text);
  if (like) return { kind: "like", arg: Number(like[1]) };
  const m = /^([a-z0-9]+)(?:\[([^\]]*)\])?$/i.exec(text);
  const bad = () =>
    new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: '${rule}' is not a result rule (like:N, or dtype[e,...] with each e a size ` +
        `or $A.D, dimension D of argument A, e.g. 's32[$0.1]')`,
    );
  if (!m) throw bad();
  const spec = parseRetSpec(m[1]!, where);
  if (spec.kind !== "buffer") throw bad();
  const dims: (number | [number, number])[] = [];
  if (m[2] !== undefined && m[2].trim() !== "") {
    for (const part of m[2].split(",")) {
      const p = part.trim();
      const ref = /^\$(\d+)\.(\d+)$/.exec(p);
      if (ref) dims.push([Number(ref[1]), Number(ref[2])]);
      else if (/^\d+$/.test(p)) dims.push(Number(p));
      else throw bad();
    }
  }
  return { kind: "expr", dtype: spec.dtype, dims };
}

/** The result specs of a call from the rules, or undefined when a rule does not apply to it. */
function _applyRules(
  rules: _Rule[],
  shapes: number[][],
  dtypes: DataType[],
): ArraySpec[] | undefined {
  const out: ArraySpec[] = [];
  for (const r of rules) {
    if (r.kind === "like") {
      if (r.arg >= shapes.length) return undefined;
      out.push({ dtype: dtypes[r.arg]!, shape: [...shapes[r.arg]!] });
    } else if (r.kind === "expr") {
      const dims: number[] = [];
      for (const d of r.dims) {
        if (typeof d === "number") dims.push(d);
        else {
          const v = shapes[d[0]]?.[d[1]];
          if (v === undefined) return undefined;
          dims.push(v);
        }
      }
      out.push({ dtype: r.dtype, shape: dims });
    } else {
      const spec = r.fn(shapes);
      out.push({ dtype: spec.dtype, shape: [...spec.shape] });
    }
  }
  return out;
}

/** The rules to use when none are given: like:0 where dtype and rank allow, else a guess. */
function _defaultRules(sig: HandlerSignature): _Rule[] {
  const a0 = sig.args[0];
  return sig.results.map((r) => {
    if (
      a0 !== undefined && (r.dtype === undefined || r.dtype === a0.dtype) &&
      (r.rank === undefined || a0.rank === undefined || r.rank === a0.rank)
    ) {
      return { kind: "like", arg: 0 } as _Rule;
    }
    const rank = r.rank ?? 1;
    return {
      kind: "expr",
      dtype: r.dtype ?? DataType.F32,
      dims: Array.from({ length: rank }, (_, i) => a0 && i < (a0.rank ?? 0) ? [0, i] : 1),
    } as _Rule;
  });
}

interface _Plan {
  sig: HandlerSignature;
  args: BufferSignature[];
  rules: _Rule[];
  hints: _AttrHints;
  argValues: readonly (ArgValues | undefined)[];
}

/** A case with its arguments' values made to keep `argValues`. */
function _constrain(c: FuzzCase, argValues: readonly (ArgValues | undefined)[]): FuzzCase {
  if (argValues.every((v) => v === undefined)) return c;
  const args = c.args.slice();
  for (const [i, d] of argValues.entries()) {
    const a = args[i];
    if (d === undefined || a === undefined) continue;
    const f = typeFacts(a.dtype);
    if (f === undefined || (f.kind !== "int" && f.kind !== "float")) continue;
    let lo = d.min, hi = d.max;
    if (d.indexInto !== undefined) {
      const [ai, di] = d.indexInto;
      const n = args[ai]?.shape[di] ?? 0;
      lo = lo === undefined || Number(lo) < 0 ? 0 : lo;
      hi = hi === undefined || Number(hi) > n - 1 ? n - 1 : hi;
    }
    const isBig = f.kind === "int" && f.bits === 64;
    const vals = _decodeValues(a).map((v) => {
      if (f.kind === "float") {
        let x = Number(v);
        if (!Number.isFinite(x)) x = lo !== undefined ? Number(lo) : 0;
        if (lo !== undefined && x < Number(lo)) x = Number(lo);
        if (hi !== undefined && x > Number(hi)) x = Number(hi);
        return x;
      }
      let x = BigInt(v);
      if (lo !== undefined && hi !== undefined) {
        const l = BigInt(lo), h = BigInt(hi);
        if (h < l) x = l; // an empty range: the call is left for `valid` (or the handler) to refuse
        else {
          const span = h - l + 1n;
          x = l + (((x - l) % span) + span) % span;
        }
      } else if (lo !== undefined && x < BigInt(lo)) x = BigInt(lo);
      else if (hi !== undefined && x > BigInt(hi)) x = BigInt(hi);
      return isBig ? x : Number(x);
    });
    if (d.sorted) vals.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    if (
      f.kind === "float" && dataTypeInfo(a.dtype).typedArray !== Float32Array &&
      dataTypeInfo(a.dtype).typedArray !== Float64Array
    ) {
      continue; // 16- and 8-bit floats: their bits are not values here
    }
    args[i] = { ...a, data: _bytesOf(a.dtype, [vals.length], vals) };
  }
  return { ...c, args };
}

function _generate(rng: _Rng, plan: _Plan): FuzzCase | undefined {
  const base = Array.from({ length: 6 }, () => _dim(rng));
  const args: FuzzCase["args"] = [];
  for (const s of plan.args) {
    const dtype = s.dtype ?? DataType.F32;
    const rank = s.rank ?? rng.pick([0, 1, 2, 2, 3, 3, 4]);
    const shape = Array.from({ length: rank }, (_, k) => rng.next() < 0.75 ? base[k]! : _dim(rng));
    const width = Math.max(1, dataTypeInfo(dtype).byteWidth);
    while (_count(shape) * width > MAX_BYTES) {
      const k = shape.indexOf(Math.max(...shape));
      shape[k] = Math.max(1, Math.floor(shape[k]! / 4));
    }
    args.push({ dtype, shape, data: _bytesOf(dtype, shape, _values(rng, dtype, _count(shape))) });
  }
  const results = _applyRules(plan.rules, args.map((a) => a.shape), args.map((a) => a.dtype));
  if (results === undefined) return undefined;
  const constrained =
    _constrain({ args, results, attrs: { kind: "dictionary", entries: new Map() } }, plan.argValues)
      .args;
  args.splice(0, args.length, ...constrained);
  const dims = [...new Set(args.flatMap((a) => a.shape))];
  const attrs: CliAttrs = { kind: "dictionary", entries: new Map() };
  for (const a of plan.sig.attrs) {
    attrs.entries.set(a.name, _attrValue(rng, a, dims, plan.hints));
  }
  for (const [name, v] of plan.hints.attrs.entries) {
    if (!attrs.entries.has(name)) attrs.entries.set(name, v);
  }
  return { args, results, attrs };
}

// ------------------------------------------------------------------ judging

interface _Verdict {
  kind: FuzzFailureKind;
  detail: string;
  message: string;
  /** A mismatch's expected results. */
  expected?: readonly ArrayBufferView[];
}

/** The failure a call's outcome is, or undefined (it succeeded, or the handler refused the input). */
function _judge(out: _Outcome, resultsChecked: boolean): _Verdict | undefined {
  if (out.ok) return undefined;
  const e = out.error!;
  const message = e.message;
  if (e.code === ErrorCode.DATA_LOSS) {
    const m = /\b(result|argument) (\d+)/.exec(message);
    if (m?.[1] === "result") {
      return resultsChecked
        ? { kind: "result-write", detail: `result ${m[2]}`, message }
        : undefined;
    }
    return { kind: "argument-write", detail: m ? `argument ${m[2]}` : "", message };
  }
  if (e.code === ErrorCode.DEADLINE_EXCEEDED) return { kind: "hang", detail: "", message };
  if (
    (e.code === ErrorCode.INTERNAL || e.code === ErrorCode.ABORTED) &&
    /ended its process|AddressSanitizer|crashed/.test(message)
  ) {
    // The sanitizers' reports name the fault better than the signal they end with.
    const asan = /AddressSanitizer: ([\w-]+)/.exec(message)?.[1];
    const ubsan = /runtime error: ([^\n:]+)/.exec(message)?.[1]?.trim();
    const sig = /\b(SIG[A-Z]+)\b/.exec(message)?.[1] ??
      /exit(?:ed with)? (?:status|code) \d+/.exec(message)?.[0]?.replace("exited with", "exit") ??
      "";
    const detail = asan !== undefined
      ? `AddressSanitizer ${asan}`
      : ubsan !== undefined
      ? `UndefinedBehaviorSanitizer ${ubsan}`
      : sig;
    return { kind: "crash", detail, message };
  }
  if (!Number.isInteger(e.code) || e.code < 0 || e.code > 16) {
    return { kind: "bad-error-code", detail: `code ${e.code}`, message };
  }
  return undefined;
}

function _sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

interface _Runner {
  caller: _Caller;
  options: FuzzOptions;
  resultsChecked: boolean;
  calls: number;
}

/** A case's arguments as a reference gets them: typed arrays of their dtype, over copies. */
function _referenceArgs(c: FuzzCase): ReferenceArray[] {
  return c.args.map((a) => {
    const info = dataTypeInfo(a.dtype);
    const ctor = (info.typedArray ?? Uint8Array) as unknown as new (
      b: ArrayBuffer,
      o: number,
      n: number,
    ) => DataTypedArray;
    const bytes = a.data.slice();
    const per = info.typedArray === null ? 1 : info.typedArray.BYTES_PER_ELEMENT;
    return {
      data: new ctor(bytes.buffer, 0, bytes.byteLength / per),
      shape: [...a.shape],
      dtype: a.dtype,
    };
  });
}

/** A case's attributes as plain values. */
function _referenceAttrs(dict: CliAttrs): ReferenceAttrs {
  const out: ReferenceAttrs = {};
  for (const [name, v] of dict.entries) {
    switch (v.kind) {
      case "string":
        out[name] = v.value;
        break;
      case "scalar":
        out[name] = v.dtype === DataType.PRED ? Boolean(v.value) : v.value;
        break;
      case "array":
        out[name] = Array.from(v.values as ArrayLike<number | bigint>) as number[] | bigint[];
        break;
      case "dictionary":
        out[name] = _referenceAttrs(v);
        break;
    }
  }
  return out;
}

function _inputs(c: FuzzCase): ArrayInput[] {
  return c.args.map((a) => ({ data: a.data, shape: a.shape, dtype: a.dtype }));
}

/** Whether the options' `valid` takes a case (true without one). */
function _isValid(options: FuzzOptions, c: FuzzCase): boolean {
  return options.valid === undefined || options.valid(_referenceArgs(c), _referenceAttrs(c.attrs));
}

/** Runs one case: its failure, `null` when it passed, `"rejected"` when the handler refused it. */
async function _runCase(r: _Runner, c: FuzzCase): Promise<_Verdict | null | "rejected"> {
  const guard = r.options.guard ?? true;
  const attrs = _ffiAttrs(c.attrs);
  r.calls++;
  const out = await r.caller.call(_inputs(c), c.results, attrs, guard);
  const v = _judge(out, r.resultsChecked);
  if (v !== undefined) return v;
  if (!out.ok) return "rejected";
  if (r.options.checkDeterminism ?? true) {
    r.calls++;
    const again = await r.caller.call(_inputs(c), c.results, attrs, guard);
    const v2 = _judge(again, r.resultsChecked);
    if (v2 !== undefined) return v2;
    const differs = !again.ok
      ? -2
      : out.results!.findIndex((x, i) => !_sameBytes(x, again.results![i]!));
    if (differs !== -1) {
      return {
        kind: "nondeterministic",
        detail: differs >= 0 ? `result ${differs}` : "outcome",
        message: differs >= 0
          ? `result ${differs} differs between two calls with the same input`
          : `the same input succeeded, then failed: ${again.error!.message}`,
      };
    }
  }
  if (r.options.reference) {
    const want = await r.options.reference(_referenceArgs(c), _referenceAttrs(c.attrs));
    if (want !== undefined) {
      for (const [i, w] of want.entries()) {
        const got = out.results![i];
        if (got === undefined) break;
        try {
          const spec = c.results[i]!;
          assertAllClose(
            { data: got, shape: [...spec.shape], dtype: spec.dtype },
            { data: w, shape: [...spec.shape], dtype: spec.dtype },
          );
        } catch (e) {
          return {
            kind: "mismatch",
            detail: `result ${i}`,
            message: `result ${i} differs from the reference: ${(e as Error).message}`,
            expected: want.map((w) => w),
          };
        }
      }
    }
  }
  return null;
}

function _key(v: { kind: string; detail: string }): string {
  return `${v.kind} ${v.detail}`;
}

// ------------------------------------------------------------------ shrinking

/** Element values of an argument, decoded (numbers or bigints, lanes interleaved). */
function _decodeValues(a: FuzzCase["args"][number]): (number | bigint)[] {
  const info = dataTypeInfo(a.dtype);
  const ctor = info.typedArray;
  if (ctor === null) return [];
  const copy = a.data.slice();
  const n = copy.byteLength / (ctor as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  const view = new (ctor as unknown as new (
    b: ArrayBuffer,
    o: number,
    n: number,
  ) => ArrayLike<number | bigint>)(
    copy.buffer,
    0,
    n,
  );
  if (info.kind === "float" && (ctor === Uint8Array || ctor === Uint16Array)) {
    // 16- and 8-bit floats: shrink their bits as integers of 0 (0.0) and the rest kept.
    return Array.from(view);
  }
  return Array.from(view);
}

/** How unusual a value is (non-finite and extreme first). */
function _plainness(v: number | bigint): number {
  if (typeof v === "bigint") return v < 0n ? 2 : v > 1000n ? 1 : 0;
  if (Number.isNaN(v)) return 5;
  if (!Number.isFinite(v)) return 4;
  if (Math.abs(v) > 1e30 || (v !== 0 && Math.abs(v) < 1e-30)) return 3;
  return v < 0 ? 2 : 0;
}

function _withArg(c: FuzzCase, i: number, arg: FuzzCase["args"][number]): FuzzCase {
  const args = c.args.slice();
  args[i] = arg;
  return { ...c, args };
}

/** The sub-block of `a` of shape `shape`, starting at `from` (per dimension, "start" or "end"). */
function _block(
  a: FuzzCase["args"][number],
  shape: number[],
  fromEnd: boolean,
): FuzzCase["args"][number] {
  const width = Math.max(1, dataTypeInfo(a.dtype).byteWidth);
  const out = new Uint8Array(_count(shape) * width);
  const n = _count(shape);
  const idx = new Array(shape.length).fill(0);
  for (let e = 0; e < n; e++) {
    let src = 0;
    for (let k = 0; k < shape.length; k++) {
      const off = fromEnd ? a.shape[k]! - shape[k]! : 0;
      src = src * a.shape[k]! + idx[k]! + off;
    }
    out.set(a.data.subarray(src * width, src * width + width), e * width);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return { dtype: a.dtype, shape, data: out };
}

/**
 * Shrinks a failing case: smaller dimensions (a sub-block from the start or
 * the end), elements set to 0 (halves, then one by one), attributes made
 * simpler; each step is kept when the call still fails the same way.
 */
async function _shrink(
  r: _Runner,
  plan: _Plan,
  c0: FuzzCase,
  key: string,
): Promise<{ case: FuzzCase; steps: number; message: string; verdict: _Verdict }> {
  let best = c0;
  let steps = 0;
  let verdict: _Verdict | undefined;
  const budget = r.options.shrinkCalls ?? 300;
  const hang = key.startsWith("hang");
  const limit = r.calls + (hang ? Math.min(budget, 40) : budget);
  const attempt = async (c0: FuzzCase | undefined): Promise<boolean> => {
    if (c0 === undefined || r.calls >= limit) return false;
    const c = _constrain(c0, plan.argValues);
    if (!_isValid(r.options, c)) return false;
    const v = await _runCase(r, c);
    if (v !== null && v !== "rejected" && _key(v) === key) {
      best = c;
      verdict = v;
      steps++;
      return true;
    }
    return false;
  };
  const withResults = (c: FuzzCase): FuzzCase | undefined => {
    const results = _applyRules(plan.rules, c.args.map((a) => a.shape), c.args.map((a) => a.dtype));
    return results === undefined ? undefined : { ...c, results };
  };
  // Values first (cheap, and they keep what matters in place), then shapes, then values again.
  // One value of an argument at its first element, every other element 0:
  // what a NaN, an infinity or a negative number does is kept at the start,
  // where smaller shapes keep it.
  const oneValue = async () => {
    for (const [i, a] of best.args.entries()) {
      const vals = _decodeValues(a);
      if (vals.length < 2) continue;
      const zero = typeof vals[0] === "bigint" ? 0n : 0;
      const seen = new Set<string>();
      const special = vals.filter((v) => {
        const k = Object.is(v, -0) ? "-0" : String(v);
        if (v === zero || seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      special.sort((x, y) => _plainness(y) - _plainness(x));
      for (const v of special.slice(0, 6)) {
        const next = new Array(vals.length).fill(zero);
        next[0] = v;
        if (
          await attempt(_withArg(best, i, { ...a, data: _bytesOf(a.dtype, [next.length], next) }))
        ) {
          break;
        }
      }
    }
  };
  const zeroValues = async () => {
    for (const [i, a] of best.args.entries()) {
      const vals = _decodeValues(a);
      const zero = typeof vals[0] === "bigint" ? 0n : 0;
      const isZero = (v: number | bigint) => v === zero && !Object.is(v, -0);
      if (vals.every(isZero)) continue;
      const set = (from: number, to: number) => {
        const next = vals.slice();
        for (let k = from; k < to; k++) next[k] = zero;
        const width = Math.max(1, dataTypeInfo(a.dtype).byteWidth);
        const data = a.data.slice();
        const enc = _bytesOf(a.dtype, [next.length], next);
        if (enc.byteLength === data.byteLength) data.set(enc);
        else data.set(enc.subarray(0, Math.min(enc.length, data.length)));
        void width;
        return _withArg(best, i, { ...a, data });
      };
      if (await attempt(set(0, vals.length))) continue;
      // Halves, quarters, …, then single elements (bounded).
      for (let chunk = Math.ceil(vals.length / 2); chunk >= 1; chunk = Math.floor(chunk / 2)) {
        for (let from = 0; from < vals.length; from += chunk) {
          const cur = _decodeValues(best.args[i]!);
          if (cur.slice(from, from + chunk).every(isZero)) continue;
          if (r.calls >= limit) return;
          const next = cur.slice();
          for (let k = from; k < Math.min(vals.length, from + chunk); k++) next[k] = zero;
          const enc = _bytesOf(a.dtype, [next.length], next);
          await attempt(_withArg(best, i, { ...best.args[i]!, data: enc }));
        }
        if (chunk === 1) break;
        if (vals.length / chunk > 64) break;
      }
    }
  };
  const shrinkShapes = async () => {
    for (let i = 0; i < best.args.length; i++) {
      for (let k = 0; k < best.args[i]!.shape.length; k++) {
        for (;;) {
          const a = best.args[i]!;
          const d = a.shape[k]!;
          if (d <= 1) break;
          let kept = false;
          for (
            const smaller of [...new Set([1, 2, 3, Math.floor(d / 2), d - 1])].filter((x) =>
              x < d && x >= 1
            ).sort((x, y) => x - y)
          ) {
            const shape = a.shape.slice();
            shape[k] = smaller;
            // The other arguments with this dimension of the same size follow it; the
            // leading block of each is kept, then the trailing one.
            const smallerCase = (fromEnd: boolean): FuzzCase => {
              let c: FuzzCase = best;
              for (const [j, b] of best.args.entries()) {
                if (j !== i && b.shape[k] !== d) continue;
                const s = b.shape.slice();
                s[k] = smaller;
                c = _withArg(c, j, _block(b, s, fromEnd));
              }
              return c;
            };
            if (
              await attempt(withResults(smallerCase(false))) ||
              await attempt(withResults(smallerCase(true)))
            ) {
              kept = true;
              break;
            }
          }
          if (!kept || r.calls >= limit) break;
        }
      }
    }
  };
  const simplerAttrs = async () => {
    for (const [name, v] of best.attrs.entries) {
      if (v.kind !== "scalar") continue;
      const hinted = plan.hints.attrs.entries.has(name);
      const domain = plan.hints.domains.get(name);
      if (hinted && domain === undefined && !plan.hints.free.has(name)) continue; // pinned
      const candidates: (number | bigint)[] = typeof v.value === "bigint"
        ? [0n, 1n, v.value / 2n, v.value > 0n ? v.value - 1n : v.value + 1n]
        : [0, 1, Math.trunc(v.value / 2), v.value > 0 ? v.value - 1 : v.value + 1];
      if (domain?.choices) candidates.unshift(domain.choices[0]!);
      if (domain?.range) candidates.unshift(domain.range[0]);
      for (const value of candidates) {
        const cur = best.attrs.entries.get(name) as { value: number | bigint };
        if (value === cur.value || (typeof value === "number" && Number.isNaN(value))) continue;
        if (domain !== undefined) {
          // Inside the domain only; the first choice or the range's low end is the simplest.
          if (!_inDomain(domain, value)) continue;
        } else {
          const abs = (x: number | bigint) => x < 0 ? -x : x;
          if (!(abs(value) < abs(cur.value)) && !Number.isNaN(Number(cur.value))) continue;
        }
        const entries = new Map(best.attrs.entries);
        entries.set(name, { ...v, value });
        if (await attempt({ ...best, attrs: { kind: "dictionary", entries } })) break;
      }
    }
  };
  await oneValue();
  await shrinkShapes();
  await zeroValues();
  await shrinkShapes();
  await zeroValues();
  await simplerAttrs();
  if (verdict === undefined) {
    const v = await _runCase(r, best);
    verdict = v !== null && v !== "rejected" ? v : { kind: "crash", detail: "", message: "" };
  }
  return { case: best, steps, message: verdict.message, verdict };
}

// ------------------------------------------------------------------ reproduction

function _attrText(name: string, v: AttrValue, out: string[]): void {
  const num = (x: number | bigint, dtype: DataType) => {
    if (dtype === DataType.PRED) return x ? "true" : "false";
    if (typeof x === "bigint") return x.toString();
    if (Number.isNaN(x)) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (Object.is(x, -0)) return "-0";
    return String(x);
  };
  switch (v.kind) {
    case "string":
      out.push(`${name}=str:${v.value}`);
      break;
    case "scalar":
      out.push(`${name}=${typeName(v.dtype)}:${num(v.value, v.dtype)}`);
      break;
    case "array":
      out.push(
        `${name}=${typeName(v.dtype)}[]:${
          (v.values as (number | bigint)[]).map((x) => num(x, v.dtype)).join(",")
        }`,
      );
      break;
    case "dictionary":
      for (const [k, e] of v.entries) _attrText(`${name}.${k}`, e, out);
      break;
  }
}

/**
 * @internal The `cli run` arguments (after `cli`) that call `handler` of
 * `library` with case `c`, its arguments read from `files`.
 */
export function _runCommand(
  library: string | readonly string[],
  handler: string,
  c: FuzzCase,
  files: readonly string[],
  extra: readonly string[],
): string[] {
  const argv = ["run", ...(typeof library === "string" ? [library] : library), handler];
  for (const f of files) argv.push("--arg", f);
  for (const r of c.results) {
    argv.push(
      "--ret",
      r.shape.length === 0 ? typeName(r.dtype) : `${typeName(r.dtype)}[${r.shape.join(",")}]`,
    );
  }
  const attrs: string[] = [];
  for (const [name, v] of c.attrs.entries) _attrText(name, v, attrs);
  for (const a of attrs) argv.push("--attr", a);
  return [...argv, ...extra];
}

// ------------------------------------------------------------------ the fuzzer

/**
 * Fuzzes a handler: discovers its signature ({@link discoverSignature}),
 * then makes up to `runs` calls (or `seconds` of them) with generated
 * arguments and attributes, seeded and reproducible, in the isolated,
 * guarded process of its library, or of its Python module (a
 * `{ module, handler }` target, or a `handlersFrom` handler with
 * `isolate: true`; a TS handler object runs in this process). Each
 * distinct failure ({@link FuzzFailureKind} and what it names) is shrunk
 * and reported once; with `outDir`, its arguments are written as `.npy`
 * files, and for a library or a module `command` is the `cli run` line
 * that reproduces it. Throws FfiError for bad options or a library or
 * module that cannot be opened; failures of the handler are never thrown.
 *
 * @example
 * ```ts
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * import { fuzzHandler } from "@deno-xla/ffi/testing";
 * // Writes its argument when a value is negative: a failure the fuzzer finds.
 * using relu = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
 *   const xs = x.typed(), ys = y.typed();
 *   for (let i = 0; i < xs.length; i++) ys[i] = Math.max(0, xs[i]!);
 * });
 * const report = await fuzzHandler(relu, { runs: 50, seed: 1, results: ["like:0"] });
 * console.log(report.failures.length); // 0
 * ```
 */
export async function fuzzHandler(
  target: FuzzTarget,
  options: FuzzOptions = {},
): Promise<FuzzReport> {
  const runs = options.runs ?? 1000;
  if (!Number.isInteger(runs) || runs < 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: runs must be a whole number, got ${runs}`,
    );
  }
  if (options.seconds !== undefined && !(options.seconds > 0)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: seconds must be more than 0, got ${options.seconds}`,
    );
  }
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `fuzzHandler: seed must be an integer, got ${seed}`,
    );
  }
  const rules = (options.results ?? []).map((r, i) => _parseRule(r, `result rule ${i}`));
  const hints = _hintAttrs(options.attrs);
  const caller = await _Caller.open(target, options);
  try {
    const sig = await _discover(caller, options);
    const resultsChecked = options.results !== undefined;
    if (resultsChecked && rules.length !== sig.results.length && !sig.variadicResults) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `fuzzHandler: ${rules.length} result rules for a handler with ${sig.results.length} ` +
          `results`,
      );
    }
    const plan: _Plan = {
      sig,
      args: sig.args,
      rules: resultsChecked ? rules : _defaultRules(sig),
      hints,
      argValues: options.argValues ?? [],
    };
    const runner: _Runner = { caller, options, resultsChecked, calls: 0 };
    const rng = new _Rng(seed);
    const found = new Map<string, FuzzFailure>();
    const failures: FuzzFailure[] = [];
    let done = 0, rejected = 0, skipped = 0;
    const start = performance.now();
    const deadline = options.seconds !== undefined ? start + options.seconds * 1000 : Infinity;
    let runTime = 0;
    while (done < runs && performance.now() < deadline) {
      const c = _generate(rng, plan);
      const t0 = performance.now();
      done++;
      if (c === undefined) continue;
      if (!_isValid(options, c)) {
        skipped++;
        continue;
      }
      const v = await _runCase(runner, c);
      runTime += performance.now() - t0;
      if (v === "rejected") rejected++;
      else if (v !== null) {
        const key = _key(v);
        const seen = found.get(key);
        if (seen) seen.count++;
        else {
          const s = await _shrink(runner, plan, c, key);
          const f: FuzzFailure = {
            kind: v.kind,
            detail: v.detail,
            message: s.message || v.message,
            case: s.case,
            original: c,
            run: done - 1,
            count: 1,
            shrinkSteps: s.steps,
          };
          const expected = s.verdict.expected ?? v.expected;
          if (v.kind === "mismatch" && expected !== undefined) f.expected = [...expected];
          found.set(key, f);
          failures.push(f);
        }
      }
      options.onProgress?.(done, failures.length);
    }
    if (options.outDir !== undefined) _writeFailures(failures, options, caller);
    const seconds = runTime / 1000;
    const output = caller.isolated && (options.handlerOutput ?? "keep") === "keep"
      ? caller.output()
      : undefined;
    return {
      ...(output !== undefined ? { output } : {}),
      signature: sig,
      runs: done,
      rejected,
      ...(skipped > 0 ? { skipped } : {}),
      seconds,
      runsPerSecond: seconds > 0 ? done / seconds : 0,
      resultsChecked,
      failures,
      seed,
    };
  } finally {
    caller.close();
  }
}

function _writeFailures(failures: FuzzFailure[], options: FuzzOptions, caller: _Caller): void {
  const dir = options.outDir!;
  Deno.mkdirSync(dir, { recursive: true });
  for (const [n, f] of failures.entries()) {
    const files = f.case.args.map((a, i) => {
      const path = `${dir}/failure-${n + 1}-arg${i}.npy`;
      saveNpy(path, { dtype: a.dtype, shape: a.shape, data: a.data });
      return path;
    });
    const extra = ["--guard"];
    if (f.kind === "hang") extra.push("--timeout", String(options.timeoutMs ?? 1000));
    if (options.instantiate !== undefined) extra.push("--instantiate", options.instantiate);
    for (const t of options.stateTypes ?? []) {
      extra.push("--type", `${t.endsWith("_type_id") ? t.slice(0, -8) : t}=${t}`);
    }
    for (const [i, w] of (f.expected ?? []).slice(0, f.case.results.length).entries()) {
      const spec = f.case.results[i]!;
      const path = `${dir}/failure-${n + 1}-expect${i}.npy`;
      const data = new Uint8Array(w.buffer, w.byteOffset, w.byteLength);
      saveNpy(path, { dtype: spec.dtype, shape: [...spec.shape], data });
      files.push(path);
      extra.push("--expect", path);
    }
    f.files = files;
    const argFiles = files.slice(0, f.case.args.length);
    if (caller.library !== undefined) {
      f.command = _runCommand(caller.library, caller.name!, f.case, argFiles, extra);
    } else if (caller.module !== undefined) {
      // `cli run --python-module` runs it in a child process too: a crash exits 6.
      const { name, from } = caller.module;
      const target = ["--python-module", name];
      if (from.initialize !== undefined) target.push("--initialize", from.initialize);
      if (from.platform !== undefined) target.push("--module-platform", from.platform);
      f.command = _runCommand(target, caller.name!, f.case, argFiles, extra);
    }
  }
}

function _caseText(c: FuzzCase): string {
  const parts = c.args.map((a) => `${typeName(a.dtype)}[${a.shape.join(",")}]`);
  const attrs: string[] = [];
  for (const [name, v] of c.attrs.entries) _attrText(name, v, attrs);
  return parts.join(" ") + (attrs.length > 0 ? ` ${attrs.join(" ")}` : "");
}

/**
 * A fuzz report as text: one line of totals, then a table with each
 * distinct failure once (its kind, what it names, how many runs had it,
 * the shrunk call), and each failure's message and reproducing command.
 *
 * @example
 * ```ts
 * import { formatFuzzReport } from "@deno-xla/ffi/testing";
 * console.log(formatFuzzReport({
 *   signature: { args: [], results: [], attrs: [], variadicArgs: false, variadicResults: false,
 *     decodes: true, unknown: [], probes: 1 },
 *   runs: 10, rejected: 0, seconds: 0.01, runsPerSecond: 1000, resultsChecked: true,
 *   failures: [], seed: 1,
 * }).split("\n")[0]); // "10 runs in 0.01 s (1000 runs/s), seed 1: no failures"
 * ```
 */
export function formatFuzzReport(report: FuzzReport, commandPrefix = "cli"): string {
  const n = report.failures.length;
  const lines = [
    `${report.runs} runs in ${report.seconds.toFixed(2)} s (${Math.round(report.runsPerSecond)} ` +
    `runs/s), seed ${report.seed}: ${
      n === 0 ? "no failures" : `${n} distinct failure${n === 1 ? "" : "s"}`
    }` +
    (report.rejected > 0 ? ` (${report.rejected} calls refused by the handler)` : ""),
  ];
  if (!report.resultsChecked) {
    lines.push(
      "results: like:0 or a guess (no --ret rule), so writes outside results do not count",
    );
  }
  const out = report.output;
  if (out !== undefined && out.bytes > 0) {
    const head = out.head.split("\n").filter((l) => l.trim() !== "").slice(0, 3);
    lines.push(
      `the handler wrote ${out.lines} line${out.lines === 1 ? "" : "s"} (${out.bytes} bytes) ` +
        `to stdout and stderr, not shown${head.length > 0 ? "; the first:" : ""}`,
    );
    for (const l of head) lines.push(`  ${l.length > 160 ? `${l.slice(0, 160)}…` : l}`);
  }
  if (n === 0) return lines.join("\n") + "\n";
  const rows = report.failures.map((f, i) => [
    String(i + 1),
    f.kind,
    f.detail || "-",
    String(f.count),
    _caseText(f.case),
  ]);
  const head = ["#", "failure", "where", "runs", "shrunk call"];
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const fmt = (r: string[]) =>
    r.map((c, k) => k === r.length - 1 ? c : c.padEnd(widths[k]!)).join("  ");
  lines.push(fmt(head));
  for (const r of rows) lines.push(fmt(r));
  for (const [i, f] of report.failures.entries()) {
    // A mismatch keeps its numpy-style detail (which elements, how far); others their first line.
    const text = f.kind === "mismatch" ? f.message.split("\n") : [f.message.split("\n")[0]!];
    lines.push(`${i + 1}. ${text[0]}`);
    for (const more of text.slice(1)) if (more.trim() !== "") lines.push(`   ${more}`);
    if (f.command) lines.push(`   ${[commandPrefix, ...f.command].map(_shellWord).join(" ")}`);
  }
  return lines.join("\n") + "\n";
}
