/**
 * The option grammar every command shares: `--name value`, `--name=value`,
 * flags, `--` and `-h`, unknown options with a suggestion, whole numbers in
 * a range, `--type NAME=SYMBOL`, and the usage error they all throw.
 *
 * @module
 */
import { _distance } from "../../_closest.ts";
import { ErrorCode } from "../../abi/enums.ts";
import { FfiError } from "../../errors.ts";

/** Throws the usage error (INVALID_ARGUMENT; the command line exits with 2). */
export function _usage(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** Options that take no value (of any command). */
const FLAGS = new Set(["json", "all", "verbose", "help", "guard", "signature"]);

/** Throws the usage error for an unknown option, suggesting a known one close to it. */
function _unknownOption(option: string, known: readonly string[], command: string): never {
  const name = option.replace(/^-+/, "");
  const best = known.map((k) => [k, _distance(name, k)] as const).sort((x, y) => x[1] - y[1])[0];
  const hint = best && best[1] <= 2 ? ` (did you mean --${best[0]}?)` : "";
  return _usage(`unknown option ${option} for '${command}'${hint}; see '${command} --help'`);
}

/** `text` as a whole number from 1 to `max`, else a usage error naming `--option`. */
export function _positiveInt(text: string, option: string, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    _usage(`--${option} '${text}': expected a whole number from 1 to ${max}`);
  }
  return Number(text);
}

/** A command's arguments sorted: positionals, options in order, and whether help was asked. */
export interface _Scanned {
  positionals: string[];
  options: [string, string][];
  help: boolean;
}

/** Sorts `argv` into positionals and options, checking each option against `known`. */
export function _scan(
  argv: readonly string[],
  known: readonly string[],
  command: string,
): _Scanned {
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

/** Parses `--type NAME=SYMBOL` into `into`. */
export function _typeSpec(value: string, into: { name: string; symbol: string }[]): void {
  const eq = value.indexOf("=");
  const tname = value.slice(0, eq).trim();
  const symbol = value.slice(eq + 1).trim();
  if (eq < 0 || tname === "" || symbol === "") {
    _usage(`--type '${value}': expected NAME=SYMBOL (SYMBOL: the library's type id function)`);
  }
  if (into.some((t) => t.name === tname)) _usage(`--type ${tname} is given twice`);
  into.push({ name: tname, symbol });
}
