/**
 * The `@deno-xla/ffi` command line: run an XLA FFI handler from a shared
 * library or a TS module (TS handlers and handler bundles), on the Host or
 * CUDA platform, with arguments and attributes given on the command
 * line or in `.npy` files, and inspect which handlers a library exports.
 *
 * ```sh
 * deno run -A jsr:@deno-xla/ffi/cli run ./libscale.so scale \
 *   --arg f32[2,3]=1,2,3,4,5,6 --ret f32[2,3] --attr alpha=f32:2.5 --repeat 100
 * deno run -A jsr:@deno-xla/ffi/cli inspect ./libscale.so
 * deno task cli --help
 * ```
 *
 * Exit codes: 0 success, 1 the handler returned an error, 2 usage error,
 * 3 file error (.npy), 4 library or module error, 5 not available (e.g.
 * `--platform cuda` without a CUDA driver), 6 the handler crashed, 70
 * internal error (see {@link ExitCode}).
 *
 * A command line exports what a program calls: {@link main}, the
 * {@link CliIo} it writes to and the {@link ExitCode}s it returns. Its
 * parsers, formatters and ELF reader are its own (`src/cli/`), not an API.
 *
 * @example
 * ```ts
 * import { main } from "@deno-xla/ffi/cli";
 * const out: string[] = [];
 * const code = await main(["help", "run"], { stdout: (t) => out.push(t), stderr: () => {} });
 * console.log(code, out.join("").split("\n")[0]);
 * ```
 *
 * @module
 */
import { ExitCode } from "./src/cli/args.ts";
import { main as _main } from "./src/cli/main.ts";

export { ExitCode };

/** Where the command line writes. */
export interface CliIo {
  /** Standard output text. */
  stdout: (text: string) => void;
  /** Standard error text (messages; the progress line goes to `Deno.stderr`). */
  stderr: (text: string) => void;
}

/**
 * Runs the command line with the given arguments (without the program
 * name) and returns the exit code (an {@link ExitCode}); never throws.
 * Messages go to `io.stderr` as `error: …`; without `io`, output goes to
 * `Deno.stdout` and `Deno.stderr`.
 *
 * @example
 * ```ts
 * import { ExitCode, main } from "@deno-xla/ffi/cli";
 * const errors: string[] = [];
 * const code = await main(["run", "lib.so", "h", "--repaet", "3"], {
 *   stdout: () => {},
 *   stderr: (t) => errors.push(t),
 * });
 * console.log(code === ExitCode.USAGE, errors[0]); // true "error: unknown option --repaet … (did you mean --repeat?) …"
 * ```
 */
export function main(argv: readonly string[], io?: CliIo): Promise<number> {
  return _main(argv, io === undefined ? undefined : { stdout: io.stdout, stderr: io.stderr });
}

/**
 * `deno task cli` runs in the folder of the module's deno.json, with the
 * folder it was started from in `INIT_CWD`: relative paths on the command
 * line are the user's, so they resolve from there.
 */
function _startFolder(): void {
  let init: string | undefined;
  try {
    init = Deno.env.get("INIT_CWD");
    if (!init) return;
    const here = new URL(".", import.meta.url);
    if (here.protocol !== "file:") return;
    const cwd = Deno.cwd();
    if (init !== cwd && Deno.realPathSync(cwd) === Deno.realPathSync(here)) {
      Deno.chdir(init);
    }
  } catch { /* no permission to look: stay where we are */ }
}

if (import.meta.main) {
  _startFolder();
  Deno.exit(await main(Deno.args));
}
