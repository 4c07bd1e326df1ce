/**
 * The `inspect` command's options: their table and their parser (a
 * library's handlers, or with --signature one handler's signature).
 *
 * @module
 */
import { _scan, _typeSpec, _usage } from "./options.ts";
import type { ParsedCommand } from "./parsed.ts";

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

/** Parses the arguments of `inspect` (after the command name). */
export function _parseInspect(argv: readonly string[]): ParsedCommand {
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
