/**
 * The `fuzz` command's options: their table, their parser, and the grammar
 * of `--values I=SPEC` (the values an argument may hold).
 *
 * @module
 */
import { _positiveInt, _scan, _typeSpec, _usage } from "./options.ts";
import type { ParsedCommand, ParsedFuzz } from "./parsed.ts";

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

/** Parses the arguments of `fuzz` (after the command name). */
export function _parseFuzz(argv: readonly string[]): ParsedCommand {
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
