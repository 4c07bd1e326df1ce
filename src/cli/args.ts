/**
 * The command line's option parser: turns `argv` into a plain
 * {@link ParsedCommand} (no runtime involved), checking every option, array
 * spec, value and attribute, with messages that name the option at fault.
 * The grammar of array specs, values and attributes is
 * `src/spec/grammar.ts`, shared with the handler fuzzer; see {@link usage}.
 *
 * This file is the entry the rest of the command line imports; the parts
 * live in `args/`: the option grammar every command shares (`options.ts`),
 * each command's option table and parser (`run.ts`, `inspect.ts`,
 * `fuzz.ts`), what the parser returns (`parsed.ts`), the exit codes
 * (`exit_code.ts`) and the help texts (`help.ts`).
 *
 * @module
 */
import { _distance } from "../_closest.ts";
import { _parseFuzz } from "./args/fuzz.ts";
import { _parseInspect } from "./args/inspect.ts";
import { _usage } from "./args/options.ts";
import type { ParsedCommand } from "./args/parsed.ts";
import { _parseRun } from "./args/run.ts";

export { ExitCode } from "./args/exit_code.ts";
export { usage } from "./args/help.ts";
export type {
  ParsedCommand,
  ParsedFuzz,
  ParsedHelp,
  ParsedInspect,
  ParsedRun,
  Platform,
} from "./args/parsed.ts";

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
