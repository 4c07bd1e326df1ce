/**
 * Handlers of Python extension modules on the command line: `inspect
 * --python-module M` and `run --python-module M NAME …` host Python with
 * jax (`Xla.open`, docs/real-xla.md) and take the module's handlers with
 * `Xla.handlersFrom`; `fuzz --python-module M NAME …` fuzzes one in a child
 * process that hosts the module; `--initialize F` calls the module's `F()` first
 * (`initialize` for `jaxlib.cpu._lapack`), `--module-platform P` picks the
 * platform (default `cpu`).
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import type { Xla } from "../xla/xla.ts";
import type { ModuleHandlers } from "../xla/modules.ts";

/** What `--python-module` and its options asked for. */
export interface PythonModuleArgs {
  /** The command: `inspect`, `run` or `fuzz`. */
  command: "inspect" | "run" | "fuzz";
  /** The module's dotted name. */
  module: string;
  /** A function of the module to call first. */
  initialize?: string;
  /** The platform whose handlers to take (default `cpu`). */
  platform?: string;
  /** The command line without these options, the module in the target's place. */
  argv: string[];
}

const OWN = ["python-module", "initialize", "module-platform"] as const;

/**
 * Takes `--python-module M` (and `--initialize F`, `--module-platform P`)
 * out of a command line; undefined when it has no `--python-module`.
 *
 * @example
 * ```ts ignore
 * _pythonModuleArgs(["run", "--python-module", "m", "h"]); // { command: "run", module: "m", argv: ["run", "m", "h"] }
 * ```
 */
export function _pythonModuleArgs(argv: readonly string[]): PythonModuleArgs | undefined {
  const command = argv[0];
  if (command !== "inspect" && command !== "run" && command !== "fuzz") return undefined;
  if (!argv.some((a) => a === "--python-module" || a.startsWith("--python-module="))) {
    return undefined;
  }
  const got: Partial<Record<(typeof OWN)[number], string>> = {};
  const rest: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = a.indexOf("=");
    const name = a.startsWith("--") ? (eq < 0 ? a.slice(2) : a.slice(2, eq)) : "";
    if (!(OWN as readonly string[]).includes(name)) {
      rest.push(a);
      continue;
    }
    const key = name as (typeof OWN)[number];
    if (got[key] !== undefined) _usage(`--${key} is given more than once`);
    let value: string | undefined;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i];
    if (value === undefined || value === "") _usage(`--${key} needs a value`);
    got[key] = value;
  }
  const module = got["python-module"]!;
  if (command === "inspect" && rest.some((a) => !a.startsWith("--"))) {
    _usage(
      `'inspect --python-module ${module}' takes no library path, got ` +
        rest.filter((a) => !a.startsWith("--")).map((a) => `'${a}'`).join(" "),
    );
  }
  return {
    command,
    module,
    initialize: got.initialize,
    platform: got["module-platform"],
    argv: [command, ...(command !== "inspect" ? [module] : []), ...rest],
  };
}

function _usage(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/**
 * Opens the Python host and takes the module's handlers.
 *
 * @example
 * ```ts ignore
 * const { xla, handlers } = await _openModule({ command: "run", module: "jaxlib.cpu._lapack", argv: [] });
 * ```
 */
export async function _openModule(
  args: PythonModuleArgs,
): Promise<{ xla: Xla; handlers: ModuleHandlers }> {
  const { Xla } = await import("../xla/xla.ts");
  const xla = await Xla.open();
  try {
    const handlers = await xla.handlersFrom(args.module, {
      initialize: args.initialize,
      platform: args.platform,
    });
    return { xla, handlers };
  } catch (e) {
    await xla.close();
    throw e;
  }
}

/** One line of `inspect --python-module`. */
export interface ModuleHandlerRow {
  /** The registered name. */
  name: string;
  /** `major.minor` of its metadata. */
  apiVersion: string;
  /** Its traits' names. */
  traits: string[];
}

/**
 * The text of `inspect --python-module`: a header, one row per handler, and
 * the targets left out with the reason.
 *
 * @example
 * ```ts ignore
 * console.log(_formatModuleInspect(handlers, rows));
 * ```
 */
export function _formatModuleInspect(h: ModuleHandlers, rows: readonly ModuleHandlerRow[]): string {
  let out = `${h.module}${h.file ? ` (${h.file})` : ""}: ${rows.length} XLA FFI handler` +
    `${rows.length === 1 ? "" : "s"} for ${h.platforms.join(", ") || "no platform"}\n`;
  if (rows.length > 0) {
    const width = Math.max(7, ...rows.map((r) => r.name.length));
    out += `${"handler".padEnd(width)}  api   traits\n`;
    for (const r of rows) {
      out += `${r.name.padEnd(width)}  ${r.apiVersion.padEnd(4)}  ${r.traits.join(", ") || "-"}\n`;
    }
  }
  for (const s of h.skipped) out += `skipped ${s.name} (${s.platform}): ${s.reason}\n`;
  return out;
}
