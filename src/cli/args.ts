/**
 * The command line's option parser: turns `argv` into a plain
 * {@link ParsedCommand} (no runtime involved), checking every option, array
 * spec, value and attribute, with messages that name the option at fault.
 * The grammar of array specs, values and attributes is
 * `src/spec/grammar.ts`, shared with the handler fuzzer; see {@link usage}.
 *
 * @module
 */
import { _distance } from "../_closest.ts";
import { ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import {
  addAttr,
  type ArgSpec,
  type AttrDictionary,
  parseArgSpec,
  parseRetSpec,
  type RetSpec,
} from "../spec/grammar.ts";

/**
 * Exit codes of the command line.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | the handler returned an error (or its CUDA work failed) |
 * | 2 | usage error: unknown or malformed option, spec, value or shape, or a permission flag missing |
 * | 3 | file error: a `.npy` input cannot be read, or an output cannot be written |
 * | 4 | library or module error: not loadable, not ELF, handler missing, not a handler, wrong API version, `--instantiate` failed |
 * | 5 | not available: a feature or platform this machine lacks (`--platform cuda` without a CUDA driver) |
 * | 6 | the handler crashed: a fatal signal (SIGSEGV, SIGBUS, …) or an exit ended the process running it |
 * | 7 | a result does not match its `--expect` reference within `--rtol`/`--atol` |
 * | 8 | the handler did not return within `run --timeout` |
 * | 9 | `fuzz` found at least one failure |
 * | 70 | internal error (a bug: please report it) |
 *
 * @example
 * ```ts
 * import { ExitCode } from "./args.ts";
 * console.log(ExitCode.USAGE); // 2
 * ```
 */
export enum ExitCode {
  OK = 0,
  HANDLER_ERROR = 1,
  USAGE = 2,
  FILE = 3,
  LIBRARY = 4,
  UNAVAILABLE = 5,
  CRASHED = 6,
  MISMATCH = 7,
  TIMEOUT = 8,
  FUZZ_FAILURES = 9,
  INTERNAL = 70,
}

/** Platforms a handler may be run on. */
export type Platform = "host" | "cuda";

/** A parsed `run` command. */
export interface ParsedRun {
  /** Discriminant. */
  command: "run";
  /** The handler's home: a shared library, or a TS/JS module exporting handlers. */
  target: { kind: "library" | "module"; path: string };
  /** The symbol (library) or export name (module). */
  handler: string;
  /** Arguments in order. */
  args: ArgSpec[];
  /** Results in order. */
  rets: RetSpec[];
  /** `--out` files: result i goes to `outs[i]`; results past the list are printed. */
  outs: string[];
  /**
   * `--expect` files: result i is compared with `expects[i]` (a `.npy`
   * reference) within {@link rtol} and {@link atol}; exit code 7 on mismatch.
   */
  expects: string[];
  /** Relative tolerance of `--expect` (default 1e-7, numpy's). */
  rtol?: number;
  /** Absolute tolerance of `--expect` (default 0). */
  atol?: number;
  /** Attributes. */
  attrs: AttrDictionary;
  /** Execution stage (default EXECUTE). */
  stage: ExecutionStage;
  /** Platform (default host). */
  platform: Platform;
  /** Number of calls (default 1); timing is reported when more than 1. */
  repeat: number;
  /**
   * A handler (same library or module; of a bundle, its instantiate stage)
   * run once in the instantiate stage, with the attributes only, before the
   * calls, whose state the calls then use (stateful handlers). A module's
   * bundle runs its own instantiate stage when this is not given.
   */
  instantiate?: string;
  /**
   * `--type NAME=SYMBOL`: state types to register before the handlers are
   * asked, each under NAME with the library's `XLA_FFI_TypeId* SYMBOL(void)`
   * (ffi.h's type id function). Without any, a handler whose state type has
   * no id yet gets every `*_type_id` function of the library registered.
   */
  types?: { name: string; symbol: string }[];
  /** Worker threads of the runtime's pool, when given. */
  threads?: number;
  /**
   * `--guard`: canaries before and after every operand and argument copies
   * checked after each call (`CallFrameBuilder({ guard: true })`).
   */
  guard?: boolean;
  /**
   * `--timeout MS`: a library handler's run (a child process) that takes
   * longer is killed, and the command exits with {@link ExitCode.TIMEOUT}.
   */
  timeoutMs?: number;
  /** Machine-readable output. */
  json: boolean;
}

/** A parsed `fuzz` command (see the `fuzzHandler` of `@deno-xla/ffi/testing`). */
export interface ParsedFuzz {
  /** Discriminant. */
  command: "fuzz";
  /** The shared library. */
  path: string;
  /** The handler's symbol. */
  handler: string;
  /** Generated calls at most (default 1000). */
  runs: number;
  /** Seconds at most, when given. */
  seconds?: number;
  /** The seed (default 1). */
  seed: number;
  /** Milliseconds a call may take before it counts as a hang (default 1000). */
  timeoutMs: number;
  /** `--sanitize address`. */
  sanitize?: "address";
  /** The folder for the failures' `.npy` files (default `fuzz-failures`). */
  out: string;
  /** Argument hints (`--arg`), in order. */
  args: string[];
  /** Attribute hints (`--attr`). */
  attrs: string[];
  /** Result rules (`--ret`), in order. */
  rets: string[];
  /** `--instantiate H`: the stateful handler's instantiate handler, run before each call. */
  instantiate?: string;
  /** `--type NAME=SYMBOL`: state types to register in the library's process. */
  types?: { name: string; symbol: string }[];
  /** The values arguments may hold (`--values I=SPEC`), by argument index. */
  values: ({
    min?: number | bigint;
    max?: number | bigint;
    indexInto?: [number, number];
    sorted?: boolean;
    offsetsInto?: [number, number];
  } | undefined)[];
  /** Machine-readable output. */
  json: boolean;
}

/**
 * Parses `--values I=SPEC`: SPEC is a comma-separated list of `[LO,HI]`
 * (a range), `index:$A.D` (indices into dimension D of argument A),
 * `offsets:$A.D` (0 … that dimension, ascending: CSR's row pointers) and
 * `sorted`.
 */
function _argValues(value: string, into: ParsedFuzz["values"]): void {
  const m = /^(\d+)=(.+)$/s.exec(value.trim());
  const bad = (why: string): never =>
    _usage(
      `--values '${value}': ${why} (expected I=SPEC, SPEC a comma-separated list of [LO,HI], ` +
        `index:$A.D, offsets:$A.D and sorted)`,
    );
  if (!m) return bad("no argument index");
  const i = Number(m[1]);
  if (into[i] !== undefined) _usage(`--values ${i} is given twice`);
  const spec: NonNullable<ParsedFuzz["values"][number]> = {};
  const num = (t: string): number | bigint => {
    const x = t.trim();
    if (/^-?\d+$/.test(x)) {
      const b = BigInt(x);
      return Number.isSafeInteger(Number(b)) ? Number(b) : b;
    }
    const v = Number(x);
    if (x === "" || !Number.isFinite(v)) return bad(`'${x}' is not a number`);
    return v;
  };
  for (const part of m[2]!.match(/\[[^\]]*\]|[^,]+/g) ?? []) {
    const t = part.trim();
    if (t === "") continue;
    if (t.startsWith("[")) {
      const ends = t.slice(1, -1).split(",");
      if (ends.length !== 2) bad(`'${t}' is not a range [LO,HI]`);
      spec.min = num(ends[0]!);
      spec.max = num(ends[1]!);
      if (spec.min > spec.max) bad(`'${t}' has LO more than HI`);
    } else if (t === "sorted") {
      spec.sorted = true;
    } else {
      const ix = /^(index|offsets):\$(\d+)\.(\d+)$/.exec(t);
      if (!ix) bad(`'${t}' is not a range, index:$A.D, offsets:$A.D or sorted`);
      const at: [number, number] = [Number(ix![2]), Number(ix![3])];
      if (ix![1] === "index") spec.indexInto = at;
      else spec.offsetsInto = at;
    }
  }
  while (into.length <= i) into.push(undefined);
  into[i] = spec;
}

/** Parses `--type NAME=SYMBOL` into `into`. */
function _typeSpec(value: string, into: { name: string; symbol: string }[]): void {
  const eq = value.indexOf("=");
  const tname = value.slice(0, eq).trim();
  const symbol = value.slice(eq + 1).trim();
  if (eq < 0 || tname === "" || symbol === "") {
    _usage(`--type '${value}': expected NAME=SYMBOL (SYMBOL: the library's type id function)`);
  }
  if (into.some((t) => t.name === tname)) _usage(`--type ${tname} is given twice`);
  into.push({ name: tname, symbol });
}

/** A parsed `inspect` command. */
export interface ParsedInspect {
  /** Discriminant. */
  command: "inspect";
  /** The shared library. */
  path: string;
  /** Machine-readable output. */
  json: boolean;
  /** Query C++ (mangled) functions too, member functions excepted (`--all`). */
  all: boolean;
  /** List each export skipped or not queried, with the reason (`--verbose`). */
  verbose: boolean;
  /**
   * `--signature NAME`: discover the signature of handler NAME (probing calls
   * in a child process) and print it as `ffiCall` options and a `run` line.
   */
  signature?: string;
  /** Hints for `--signature`: `--arg` specs. */
  args?: string[];
  /** Hints for `--signature`: `--attr` specs. */
  attrs?: string[];
  /** For `--signature`: the stateful handler's instantiate handler (`--instantiate`). */
  instantiate?: string;
  /** For `--signature`: state types to register (`--type NAME=SYMBOL`). */
  types?: { name: string; symbol: string }[];
}

/** A request for help (`--help`, `help [command]`, or no arguments). */
export interface ParsedHelp {
  /** Discriminant. */
  command: "help";
  /** The command asked about, if any. */
  topic?: "run" | "inspect" | "fuzz";
}

/** Any parsed command line. */
export type ParsedCommand = ParsedRun | ParsedInspect | ParsedFuzz | ParsedHelp;

function _usage(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

// ---------------------------------------------------------------- options

/** The stages `--stage` names (a Map: no name reaches Object.prototype). */
const STAGES: ReadonlyMap<string, ExecutionStage> = new Map([
  ["instantiate", ExecutionStage.INSTANTIATE],
  ["prepare", ExecutionStage.PREPARE],
  ["initialize", ExecutionStage.INITIALIZE],
  ["execute", ExecutionStage.EXECUTE],
]);

const RUN_OPTIONS = [
  "arg",
  "ret",
  "out",
  "expect",
  "rtol",
  "atol",
  "attr",
  "stage",
  "instantiate",
  "type",
  "platform",
  "repeat",
  "threads",
  "json",
  "guard",
  "timeout",
  "help",
] as const;
const INSPECT_OPTIONS = [
  "json",
  "all",
  "verbose",
  "signature",
  "arg",
  "attr",
  "instantiate",
  "type",
  "help",
] as const;
const FUZZ_OPTIONS = [
  "runs",
  "seconds",
  "seed",
  "timeout",
  "sanitize",
  "out",
  "arg",
  "attr",
  "ret",
  "values",
  "instantiate",
  "type",
  "json",
  "help",
] as const;
const FLAGS = new Set(["json", "all", "verbose", "help", "guard", "signature"]);
const MODULE_RE = /\.(ts|mts|js|mjs|tsx|jsx)$/i;

function _unknownOption(option: string, known: readonly string[], command: string): never {
  const name = option.replace(/^-+/, "");
  const best = known.map((k) => [k, _distance(name, k)] as const).sort((x, y) => x[1] - y[1])[0];
  const hint = best && best[1] <= 2 ? ` (did you mean --${best[0]}?)` : "";
  return _usage(`unknown option ${option} for '${command}'${hint}; see '${command} --help'`);
}

function _positiveInt(text: string, option: string, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    _usage(`--${option} '${text}': expected a whole number from 1 to ${max}`);
  }
  return Number(text);
}

interface _Scanned {
  positionals: string[];
  options: [string, string][];
  help: boolean;
}

function _scan(argv: readonly string[], known: readonly string[], command: string): _Scanned {
  const out: _Scanned = { positionals: [], options: [], help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === "-h") {
      out.help = true;
      continue;
    }
    if (!a.startsWith("--") || a === "-") {
      if (a.startsWith("-") && a !== "-") _unknownOption(a, known, command);
      out.positionals.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (!(known as readonly string[]).includes(name)) _unknownOption(a, known, command);
    if (FLAGS.has(name)) {
      if (eq >= 0) _usage(`--${name} takes no value ('${a}')`);
      if (name === "help") out.help = true;
      else out.options.push([name, ""]);
      continue;
    }
    if (eq >= 0) {
      out.options.push([name, a.slice(eq + 1)]);
    } else {
      if (i + 1 >= argv.length) _usage(`--${name} needs a value; see '${command} --help'`);
      out.options.push([name, argv[++i]!]);
    }
  }
  return out;
}

function _parseRun(argv: readonly string[]): ParsedCommand {
  const s = _scan(argv, RUN_OPTIONS, "run");
  if (s.help) return { command: "help", topic: "run" };
  if (s.positionals.length !== 2) {
    _usage(
      s.positionals.length < 2
        ? `'run' needs a library (.so) or module (.ts) and a handler name; see 'run --help'`
        : `'run' takes two positional arguments, got ${s.positionals.length}: ` +
          `${s.positionals.map((p) => `'${p}'`).join(" ")}`,
    );
  }
  const [path, handler] = s.positionals as [string, string];
  if (path === "") _usage("'run': the library path is empty");
  if (handler === "") _usage("'run': the handler name is empty");
  const run: ParsedRun = {
    command: "run",
    target: { kind: MODULE_RE.test(path) ? "module" : "library", path },
    handler,
    args: [],
    rets: [],
    outs: [],
    expects: [],
    attrs: { kind: "dictionary", entries: new Map() },
    stage: ExecutionStage.EXECUTE,
    platform: "host",
    repeat: 1,
    json: false,
  };
  const once = new Set<string>();
  for (const [name, value] of s.options) {
    if (
      [
        "stage",
        "instantiate",
        "platform",
        "repeat",
        "threads",
        "json",
        "rtol",
        "atol",
        "guard",
        "timeout",
      ]
        .includes(
          name,
        )
    ) {
      if (once.has(name)) _usage(`--${name} is given more than once`);
      once.add(name);
    }
    switch (name) {
      case "arg":
        run.args.push(parseArgSpec(value, `--arg ${run.args.length + 1}`));
        break;
      case "ret":
        run.rets.push(parseRetSpec(value, `--ret ${run.rets.length + 1}`));
        break;
      case "out":
        if (value === "") _usage(`--out ${run.outs.length + 1}: the path is empty`);
        if (!/\.npy$/i.test(value)) {
          _usage(`--out ${run.outs.length + 1}: '${value}' must end in .npy`);
        }
        run.outs.push(value);
        break;
      case "expect":
        if (!/\.npy$/i.test(value)) {
          _usage(`--expect ${run.expects.length + 1}: '${value}' must be a .npy file`);
        }
        run.expects.push(value);
        break;
      case "rtol":
      case "atol": {
        const v = Number(value);
        if (value.trim() === "" || !(v >= 0) || !Number.isFinite(v)) {
          _usage(`--${name} '${value}': expected a number that is 0 or more`);
        }
        run[name] = v;
        break;
      }
      case "attr":
        addAttr(run.attrs, value);
        break;
      case "stage": {
        const stage = STAGES.get(value.toLowerCase());
        if (stage === undefined) {
          _usage(`--stage '${value}': expected one of ${[...STAGES.keys()].join(", ")}`);
        }
        run.stage = stage;
        break;
      }
      case "instantiate":
        if (value === "") _usage("--instantiate: the handler name is empty");
        run.instantiate = value;
        break;
      case "type":
        run.types ??= [];
        _typeSpec(value, run.types);
        break;
      case "platform":
        if (value !== "host" && value !== "cuda") {
          _usage(`--platform '${value}': expected host or cuda`);
        }
        run.platform = value;
        break;
      case "repeat":
        run.repeat = _positiveInt(value, "repeat", 1e9);
        break;
      case "threads":
        run.threads = _positiveInt(value, "threads", 1024);
        break;
      case "json":
        run.json = true;
        break;
      case "guard":
        run.guard = true;
        break;
      case "timeout":
        run.timeoutMs = _positiveInt(value, "timeout", 86_400_000);
        break;
    }
  }
  if (run.outs.length > run.rets.length) {
    _usage(
      `${run.outs.length} --out file${run.outs.length === 1 ? "" : "s"} for ` +
        `${run.rets.length} result${
          run.rets.length === 1 ? "" : "s"
        }: give one --out per --ret, in order`,
    );
  }
  run.outs.forEach((out, i) => {
    if (run.rets[i]!.kind === "token") {
      _usage(`--out ${i + 1} '${out}': result ${i + 1} is a token`);
    }
  });
  if (run.expects.length > run.rets.length) {
    _usage(
      `${run.expects.length} --expect file${run.expects.length === 1 ? "" : "s"} for ` +
        `${run.rets.length} result${run.rets.length === 1 ? "" : "s"}: give one --expect per ` +
        `--ret, in order`,
    );
  }
  run.expects.forEach((file, i) => {
    if (run.rets[i]!.kind === "token") {
      _usage(`--expect ${i + 1} '${file}': result ${i + 1} is a token`);
    }
  });
  if ((run.rtol !== undefined || run.atol !== undefined) && run.expects.length === 0) {
    _usage("--rtol and --atol go with --expect (the tolerances of the comparison)");
  }
  run.rets.forEach((r, i) => {
    if (r.kind !== "like") return;
    const arg = run.args[r.arg];
    if (arg === undefined) {
      _usage(
        `--ret ${i + 1}: like:${r.arg} names argument ${r.arg}, but there ` +
          `${run.args.length === 1 ? "is 1 --arg" : `are ${run.args.length} --args`} ` +
          `(counted from 0)`,
      );
    }
    if (arg.kind === "token") _usage(`--ret ${i + 1}: like:${r.arg}: argument ${r.arg} is a token`);
    if (arg.kind === "inline") {
      run.rets[i] = { kind: "buffer", dtype: arg.dtype, dims: [...arg.dims] };
    }
  });
  if (run.instantiate !== undefined && run.stage === ExecutionStage.INSTANTIATE) {
    _usage("--instantiate goes with the execute, prepare or initialize stage, not instantiate");
  }
  if (run.timeoutMs !== undefined && run.target.kind === "module") {
    _usage("--timeout goes with a shared library (its handler runs in a child process)");
  }
  if (run.types !== undefined && run.target.kind === "module") {
    _usage("--type goes with a shared library; a module registers its types itself");
  }
  const dup = run.outs.find((o, i) => run.outs.indexOf(o) !== i);
  if (dup !== undefined) _usage(`--out '${dup}' is given for two results`);
  return run;
}

function _parseInspect(argv: readonly string[]): ParsedCommand {
  const s = _scan(argv, INSPECT_OPTIONS, "inspect");
  if (s.help) return { command: "help", topic: "inspect" };
  const has = (name: string) => s.options.some(([n]) => n === name);
  if (s.positionals.length !== (has("signature") ? 2 : 1)) {
    _usage(
      has("signature")
        ? `'inspect --signature' takes a shared library and a handler name, got ` +
          `${s.positionals.length} positional arguments; see 'inspect --help'`
        : `'inspect' takes one shared library path, got ${s.positionals.length}; ` +
          `see 'inspect --help'`,
    );
  }
  const values = (name: string) => s.options.filter(([n]) => n === name).map(([, v]) => v);
  const hints = values("arg").length + values("attr").length + values("instantiate").length +
    values("type").length;
  if (has("signature")) {
    const [path, name] = s.positionals as [string, string];
    if (name === "") _usage("'inspect --signature': the handler name is empty");
    const inst = values("instantiate");
    if (inst.length > 1) _usage("--instantiate is given more than once");
    if (inst[0] === "") _usage("--instantiate: the handler name is empty");
    const types: { name: string; symbol: string }[] = [];
    for (const t of values("type")) _typeSpec(t, types);
    return {
      command: "inspect",
      path,
      json: has("json"),
      all: false,
      verbose: false,
      signature: name,
      args: values("arg"),
      attrs: values("attr"),
      ...(inst.length > 0 ? { instantiate: inst[0] } : {}),
      ...(types.length > 0 ? { types } : {}),
    };
  }
  if (hints > 0) {
    _usage(
      "--arg, --attr, --instantiate and --type go with 'inspect --signature' (for the probing)",
    );
  }
  return {
    command: "inspect",
    path: s.positionals[0]!,
    json: has("json"),
    all: has("all"),
    verbose: has("verbose"),
  };
}

function _parseFuzz(argv: readonly string[]): ParsedCommand {
  const s = _scan(argv, FUZZ_OPTIONS, "fuzz");
  if (s.help) return { command: "help", topic: "fuzz" };
  if (s.positionals.length !== 2) {
    _usage(
      `'fuzz' takes a shared library and a handler name, got ${s.positionals.length} ` +
        `positional arguments; see 'fuzz --help'`,
    );
  }
  const [path, handler] = s.positionals as [string, string];
  if (path === "" || handler === "") _usage("'fuzz': the library path or handler name is empty");
  const fuzz: ParsedFuzz = {
    command: "fuzz",
    path,
    handler,
    runs: 1000,
    seed: 1,
    timeoutMs: 1000,
    out: "fuzz-failures",
    args: [],
    attrs: [],
    rets: [],
    values: [],
    json: false,
  };
  const once = new Set<string>();
  for (const [name, value] of s.options) {
    if (!["arg", "attr", "ret", "values", "type"].includes(name)) {
      if (once.has(name)) _usage(`--${name} is given more than once`);
      once.add(name);
    }
    switch (name) {
      case "runs":
        fuzz.runs = _positiveInt(value, "runs", 1e9);
        break;
      case "seconds": {
        const v = Number(value);
        if (value.trim() === "" || !(v > 0) || !Number.isFinite(v)) {
          _usage(`--seconds '${value}': expected a number of seconds more than 0`);
        }
        fuzz.seconds = v;
        break;
      }
      case "seed":
        if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
          _usage(`--seed '${value}': expected a whole number`);
        }
        fuzz.seed = Number(value);
        break;
      case "timeout":
        fuzz.timeoutMs = _positiveInt(value, "timeout", 86_400_000);
        break;
      case "sanitize":
        if (value !== "address") _usage(`--sanitize '${value}': expected address`);
        fuzz.sanitize = "address";
        break;
      case "out":
        if (value === "") _usage("--out: the folder is empty");
        fuzz.out = value;
        break;
      case "arg":
        fuzz.args.push(value);
        break;
      case "attr":
        fuzz.attrs.push(value);
        break;
      case "ret":
        fuzz.rets.push(value);
        break;
      case "values":
        _argValues(value, fuzz.values);
        break;
      case "instantiate":
        if (value === "") _usage("--instantiate: the handler name is empty");
        fuzz.instantiate = value;
        break;
      case "type":
        fuzz.types ??= [];
        _typeSpec(value, fuzz.types);
        break;
      case "json":
        fuzz.json = true;
        break;
    }
  }
  return fuzz;
}

/**
 * Parses a command line (without the program name) into a
 * {@link ParsedCommand}. Throws {@link FfiError} (INVALID_ARGUMENT) with a
 * message naming the bad option; the command line exits with
 * {@link ExitCode.USAGE} for these.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./args.ts";
 * const cmd = parseCommandLine([
 *   "run", "./libh.so", "scale",
 *   "--arg", "f32[2]=1,2", "--ret", "f32[2]", "--attr", "alpha=f32:2.5",
 * ]);
 * console.log(cmd.command === "run" && cmd.args.length); // 1
 * ```
 */
export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h") return { command: "help" };
  switch (first) {
    case "help": {
      const topic = rest[0];
      if (topic === undefined) return { command: "help" };
      if (topic === "run" || topic === "inspect" || topic === "fuzz") {
        return { command: "help", topic };
      }
      return _usage(`'help ${topic}': no such command (run, inspect, fuzz)`);
    }
    case "run":
      return _parseRun(rest);
    case "inspect":
      return _parseInspect(rest);
    case "fuzz":
      return _parseFuzz(rest);
    default: {
      const near = ["run", "inspect", "fuzz", "help"].find((c) => _distance(first, c) <= 2);
      return _usage(
        `unknown command '${first}'${near ? ` (did you mean '${near}'?)` : ""}; ` +
          `commands: run, inspect, fuzz, help`,
      );
    }
  }
}

const EXIT_CODES_TEXT = `Exit codes:
  0   success
  1   the handler returned an error (or its CUDA work failed)
  2   usage error (bad option, spec, value or shape, or a permission flag
      missing)
  3   file error (.npy input or output)
  4   library or module error (not loadable, not ELF, handler missing, not a
      handler, wrong API version, --instantiate failed)
  5   not available (a feature or platform this machine lacks, e.g.
      --platform cuda without a CUDA driver)
  6   the handler crashed: a fatal signal (SIGSEGV, SIGBUS, ...) or an exit
      ended the process running it (shared-library handlers run in a child
      process, so the command line reports it)
  7   a result does not match its --expect reference (--rtol, --atol)
  8   the handler did not return within run --timeout
  9   fuzz found at least one failure
  70  internal error (a bug: please report it)`;

const RUN_TEXT = `Usage: cli run <lib.so | handlers.ts> <handler> [options]

Calls one XLA FFI handler (a symbol of a shared library, or an export of a
TS/JS module) in the embedded runtime and prints its results. A module's
export is a TS handler (Ffi.bind()...to(fn)) or a HandlerBundle; a bundle's
instantiate stage runs once before the calls, and the module's handlers are
closed after them.

Options:
  --arg SPEC         an argument, in order: dtype[d0,d1,...]=v0,v1,...
                     (one value fills the array, an empty one needs none;
                     dtype=v is a scalar), 'token', or a file ending in .npy
  --ret SPEC         a result, in order: dtype[d0,d1,...], dtype, 'token', or
                     like:N (the dtype and shape of argument N, from 0)
  --out FILE.npy     write result i to the i-th --out file (others are printed)
  --expect REF.npy   compare result i with the i-th --expect file, as
                     numpy.testing.assert_allclose does (exit code 7 and
                     numpy's report on a mismatch)
  --rtol R           relative tolerance of --expect (default 1e-7)
  --atol A           absolute tolerance of --expect (default 0)
  --attr NAME=VALUE  an attribute: a string unless typed as TYPE:V (f32:2.5,
                     bool:true, u8:7), TYPE[]:V,V,... (array, i64[]:0,2) or
                     str:TEXT; NAME may be dotted (cfg.scale=f32:2 makes a
                     dictionary cfg)
  --stage STAGE      execute (default), instantiate, prepare or initialize
  --instantiate H    first run handler H (same library or module; of a
                     bundle, its instantiate stage) in the instantiate stage
                     with the attributes only; the calls use the state it sets
  --type NAME=SYM    register a state type under NAME with the library's type
                     id function XLA_FFI_TypeId* SYM(void) (ffi.h's
                     XLA_FFI_DECLARE_TYPE_ID_SYMBOL) before the handlers are
                     asked; without it, a handler whose state type has no id
                     gets every *_type_id function of the library registered
  --platform P       host (default) or cuda: arguments are copied to device
                     buffers and results back after each call (exit code 5
                     without a CUDA driver; $XLA_FFI_DENO_CUDA names one)
  --repeat N         call N times and report median/min/max time
  --threads N        worker threads of the runtime's pool
  --guard            guard the buffers: a write past an operand's end, before
                     its start or into an argument is an error naming the
                     operand and the byte offset (canaries and argument
                     copies checked after each call; host platform)
  --timeout MS       a shared-library handler that has not returned after MS
                     milliseconds is killed (exit code 8)
  --json             print one JSON object instead of text
  -h, --help         this help

Types: pred (bool), s8 s16 s32 s64 (i8 ... i64), u8 u16 u32 u64, f16 bf16
f32 f64, c64 c128 (values 1+2j), f8 types (f8e5m2, f8e4m3fn, ...), token.
Integers may be written 0x.., 0o.., 0b..; floats as inf, -inf, nan.

A Python extension module's handlers (jaxlib's LAPACK, nanobind modules):
'run --python-module M <handler>' hosts Python with jax ($XLA_FFI_DENO_PYTHON)
and runs one of the handlers M.registrations() hands out, in a child process;
--initialize F calls M.F() first (jaxlib.cpu._lapack needs initialize),
--module-platform P takes platform P's (default cpu).

Examples:
  cli run ./libscale.so scale --arg f32[2,3]=1,2,3,4,5,6 --ret f32[2,3] \\
      --attr alpha=f32:2.5 --repeat 100
  cli run examples/handlers.ts counter --attr start=i64:41 --ret s64
  cli run ./libgpu.so scale --platform cuda --arg x.npy --ret f32[1024]
  cli run ./librms.so rms_norm --arg x.npy --ret like:0 --attr eps=f32:1e-5 \\
      --expect ref.npy --rtol 1e-6
  cli run --python-module jaxlib.cpu._lapack --initialize initialize \\
      lapack_sgetrf_ffi --arg f32[2,2]=4,6,3,3 --ret f32[2,2] --ret s32[2] --ret s32`;

const INSPECT_TEXT = `Usage: cli inspect <lib.so> [--all] [--verbose] [--json]
       cli inspect --signature <lib.so> <handler> [--arg HINT] [--attr HINT]
                   [--instantiate H] [--type NAME=SYMBOL]

Lists the exported functions of a shared library that answer the XLA FFI
metadata query, with the API version and traits each reports. Handlers are
C functions (XLA_FFI_DEFINE_HANDLER_SYMBOL makes them extern "C"), so only
exports with C linkage are asked; C++ (mangled) ones are counted. The
queries run in a child process: an export that crashes it, ends it or does
not answer within 5 s is skipped, and the rest go on in a new child.

Options:
  --all        also ask C++ functions (shown demangled, with c++filt when it
               is installed), except member functions, which are never
               handlers; 'run' takes a C++ handler by its symbol or its
               demangled name
  --verbose    list each skipped export with the reason, and the C++
               functions not asked
  --json       print one JSON object instead of text: {library, machine,
               exportedFunctions, handlers: [{symbol, name, apiVersion,
               traits}] | null, skipped: [{symbol, name, reason}],
               notQueried: [{symbol, name, reason}], error: {code, message}
               | null}
  -h, --help   this help

'inspect --python-module M [--initialize F] [--module-platform P] [--json]'
lists the handlers a Python extension module hands out from M.registrations()
(jaxlib.cpu._lapack, nanobind modules), hosting Python with jax
($XLA_FFI_DENO_PYTHON); legacy custom calls and foreign capsules are listed as
skipped with the reason.

'inspect --signature lib.so NAME' finds what a frame must hold for handler
NAME to decode (arguments, results, attributes, each buffer's dtype and rank)
by calling it with probing frames in a child process and reading ffi.h's
decode diagnostics, and prints it as ffiCall options and a 'run' line. What
probing cannot tell (variadic arguments, untyped buffers, dictionary
attributes) is listed; --arg SPEC and --attr NAME=TYPE:VALUE give it. A
stateful handler (ffi.h's Ctx<State<T>>) is probed with its state:
--instantiate H runs handler H in the instantiate stage before each probe,
with the state types the library exports registered (or --type NAME=SYMBOL).`;

const FUZZ_TEXT = `Usage: cli fuzz <lib.so> <handler> [options]
       cli fuzz --python-module M [--initialize F] <handler> [options]

Fuzzes one handler of a shared library: discovers its signature (as
'inspect --signature'), then calls it with generated arguments and
attributes (sizes 0, 1, odd, prime, past a cache line or a page; values at
their edges: +-0, NaN, +-Inf, denormals, integer limits; attributes at their
edges and near the call's dimensions) in a child process with guarded
buffers. A failure is a fatal signal, a write outside a result or into an
argument, a call that does not return within --timeout, a result that
differs between two calls with the same input, or an error code outside
XLA's range. Each distinct failure is shrunk, its arguments written as .npy
files, and the 'run' line that reproduces it printed.

Options:
  --runs N           generated calls at most (default 1000)
  --seconds S        stop after S seconds
  --seed N           the seed (default 1): the same seed gives the same calls
  --ret RULE         a result's shape, in order: like:N, or a shape over the
                     arguments' dimensions, 's32[$0.1]' (dimension 1 of
                     argument 0), 'f32[$0.0,$1.1]'; without rules each result
                     is like:0 and writes outside results do not count
  --arg HINT         an argument's dtype and rank (f32[4,3], or as 'run'
                     takes it), in order; more than discovered adds arguments
  --attr HINT        an attribute: NAME=TYPE:VALUE sends that value (as
                     'run'); NAME=TYPE:{V1,V2} draws from the choices
                     (uplo=u8:{76,85}, or u8:{'L','U'} with characters);
                     NAME=TYPE:[LO,HI] from the range, ends included;
                     NAME=TYPE:* gives the type only (values are varied)
  --instantiate H    a stateful handler: each call first runs handler H (same
                     library) in the instantiate stage, a fresh state per call
  --type NAME=SYMBOL a state type to register (default with --instantiate:
                     every type id function the library exports, *_type_id)
  --values I=SPEC    the values argument I may hold, its contract: [LO,HI]
                     (a range), index:$A.D (indices into dimension D of
                     argument A), offsets:$A.D (ascending from 0 to that
                     dimension: CSR row pointers), sorted (ascending);
                     comma-separated, e.g. --values '2=index:$3.0'
                     --values '1=offsets:$0.0' --values '1=[0,5],sorted'
  --timeout MS       a call that takes longer is a hang (default 1000)
  --sanitize address run the library under AddressSanitizer (built with it)
  --out DIR          where the failures' .npy files go (default fuzz-failures)
  --json             print one JSON object instead of text
  -h, --help         this help

A Python extension module's handler: 'fuzz --python-module M <handler>'
runs it in a child process that hosts the Python of $XLA_FFI_DENO_PYTHON and
imports M (--initialize F calls M.F() first, --module-platform P takes
platform P's handlers, default cpu); a crash ends that process, not this one,
and is reported with a 'run --python-module' line.

Exit code 9 when a failure was found, 0 when none.`;

/**
 * The help text: general, or for `run` or `inspect`; always lists the exit
 * codes.
 *
 * @example
 * ```ts
 * import { usage } from "./args.ts";
 * console.log(usage("run").split("\n")[0]); // "Usage: cli run <lib.so | handlers.ts> <handler> [options]"
 * ```
 */
export function usage(topic?: "run" | "inspect" | "fuzz"): string {
  if (topic === "run") return `${RUN_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  if (topic === "fuzz") return `${FUZZ_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  if (topic === "inspect") return `${INSPECT_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  return `Usage: cli <command> [options]

Runs and inspects XLA FFI handlers without XLA.

Commands:
  run <lib.so | handlers.ts> <handler>   call a handler with given arguments
  inspect <lib.so>                       list the handlers a library exports
  inspect --signature <lib.so> <handler> discover what a handler takes
  fuzz <lib.so> <handler>                fuzz a handler, shrink and report failures
  help [command]                         help for a command

Run as 'deno run -A jsr:@deno-xla/ffi/cli <command>' or 'deno task cli <command>'.

${EXIT_CODES_TEXT}
`;
}
