/**
 * What the command line's parser returns: one plain object per command
 * ({@link ParsedCommand}), no runtime involved.
 *
 * @module
 */
import type { ExecutionStage } from "../../abi/enums.ts";
import type { ArgSpec, AttrDictionary, RetSpec } from "../../spec/grammar.ts";

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
