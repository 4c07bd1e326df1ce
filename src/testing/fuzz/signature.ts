/**
 * Signature discovery: probing frames sent to a handler and its decode
 * diagnostics read back into the numbers, dtypes and ranks of its buffers
 * and the names and types of its attributes; and a signature as text
 * (`formatSignature`, `cli inspect --signature`).
 *
 * @module
 */
import { DataType } from "../../abi/enums.ts";
import { dataTypeInfo } from "../../abi/dtype.ts";
import { typeFacts, typeName } from "../../spec/type_names.ts";
import type { AttrDictionary as CliAttrs, AttrValue } from "../../spec/grammar.ts";
import type {
  AttrSignature,
  BufferSignature,
  FuzzOptions,
  FuzzTarget,
  HandlerSignature,
} from "./types.ts";
import { _Caller, _ffiAttrs } from "./caller.ts";
import { _argHint, _hintAttrs } from "./hints.ts";
import { _shellWord } from "./report.ts";

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

function _attrsOf(entries: [string, AttrValue][]): CliAttrs {
  return { kind: "dictionary", entries: new Map(entries) };
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

/** Finds the signature of the caller's handler with probing calls (at most MAX_PROBES). */
export async function _discover(
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
 * placeholders of the right dtype and rank; for a Python module's handler,
 * `target` `{ module, handler, initialize? }`, a `cli run --python-module`
 * line).
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
  target:
    | { library: string; handler: string }
    | { module: string; handler: string; initialize?: string; platform?: string },
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
  const run = "module" in target
    ? [
      "cli",
      "run",
      "--python-module",
      target.module,
      ...(target.initialize !== undefined ? ["--initialize", target.initialize] : []),
      ...(target.platform !== undefined ? ["--module-platform", target.platform] : []),
      target.handler,
    ]
    : ["cli", "run", target.library, target.handler];
  for (const b of sig.args) run.push("--arg", `${_bufText(b, 1)}=0`);
  for (const b of sig.results) run.push("--ret", _bufText(b, 1));
  for (const a of sig.attrs) run.push("--attr", _attrSkeleton(a));
  lines.push("command line:");
  lines.push(`  ${run.map(_shellWord).join(" ")}`);
  return lines.join("\n") + "\n";
}
