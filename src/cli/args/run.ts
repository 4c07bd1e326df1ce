/**
 * The `run` command's options: their table and their parser, with the
 * checks across options (one --out per --ret, like:N, tolerances).
 *
 * @module
 */
import { ExecutionStage } from "../../abi/enums.ts";
import { addAttr, parseArgSpec, parseRetSpec } from "../../spec/grammar.ts";
import { _positiveInt, _scan, _typeSpec, _usage } from "./options.ts";
import type { ParsedCommand, ParsedRun } from "./parsed.ts";

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
const MODULE_RE = /\.(ts|mts|js|mjs|tsx|jsx)$/i;
/** Parses the arguments of `run` (after the command name). */
export function _parseRun(argv: readonly string[]): ParsedCommand {
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
