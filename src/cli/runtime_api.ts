/**
 * The interface between the command line and the runtime that loads and
 * calls handlers ({@link CliRuntime}), so the dispatcher can be driven by the
 * embedded runtime or by a test double.
 *
 * @module
 */
import type { FfiError } from "../errors.ts";
import type { ParsedRun } from "./args.ts";
import type { ArrayData } from "./format.ts";

/** What a handler reports to the XLA FFI metadata query. */
export interface HandlerMetadata {
  /** The XLA FFI API version the handler was built against. */
  apiVersion: { major: number; minor: number };
  /** `XLA_FFI_Handler_Traits` bits (see `HandlerTraits`). */
  traits: number;
  /**
   * An instantiate handler built with ffi.h whose state type must be
   * registered before it answers: the library's type id function
   * (`XLA_FFI_TypeId* SYMBOL(void)`) of that type, or null when the library
   * exports none that fits (then `apiVersion` and `traits` are unknown, 0).
   */
  stateType?: string | null;
}

/** One argument as handed to {@link CliRuntime.prepare}. */
export type CallArg = ({ kind: "buffer" } & ArrayData) | { kind: "token" };

/** A handler made ready to call with the arguments and attributes of a `run`. */
export interface PreparedCall extends Disposable {
  /** Calls the handler once; resolves to `undefined`, or the handler's error. */
  call(): Promise<FfiError | undefined>;
  /** The results after the last call, in `--ret` order. */
  results(): CallArg[];
  /** Releases the call frame, buffers and library. */
  close(): void;
}

/** Where an isolated run ({@link CliRuntime.runIsolated}) writes. */
export interface IsolatedIo {
  /** Standard output text (written once the child ended). */
  stdout: (text: string) => void;
  /** Standard error text (as the child writes it). */
  stderr: (text: string) => void;
  /** Whether the progress line may be redrawn in place (the sink is a terminal). */
  progressTerminal: boolean;
}

/**
 * The answer of one symbol to the metadata query: its metadata, or an
 * {@link FfiError}: NOT_FOUND (not a handler), ABORTED (the query crashed or
 * ended the querying process), DEADLINE_EXCEEDED (no answer in time).
 */
export type MetadataAnswer = HandlerMetadata | FfiError;

/**
 * The runtime parts the command line needs. The default is the embedded
 * runtime (`embeddedRuntime()`); `unavailableRuntime` reports each part as
 * not available.
 */
export interface CliRuntime {
  /**
   * Asks one exported symbol of a library for its XLA FFI metadata. Must not
   * let a non-handler symbol crash or affect the process (query in a child
   * process or with a guarded frame). Throws {@link FfiError}: NOT_FOUND when
   * the symbol does not answer as a handler, UNAVAILABLE when querying is not
   * possible here.
   */
  queryMetadata(libPath: string, symbol: string): Promise<HandlerMetadata>;
  /**
   * Optional: asks many symbols at once (`inspect` uses it when present).
   * Resolves to one {@link MetadataAnswer} per symbol; throws
   * {@link FfiError} when the library cannot be queried at all.
   */
  queryMetadataAll?(
    libPath: string,
    symbols: readonly string[],
  ): Promise<Map<string, MetadataAnswer>>;
  /**
   * Loads the handler and builds its call frame from the parsed options and
   * the argument arrays (`args[i]` for `run.args[i]`: inline values as
   * parsed, `.npy` files as read by {@link CliRuntime.readNpy}). Errors exit
   * with exit code 4 (UNAVAILABLE ones with 5).
   */
  prepare(run: ParsedRun, args: readonly CallArg[]): Promise<PreparedCall>;
  /**
   * Optional: runs the whole `run` of a shared-library handler (`argv` as
   * given to `main`) in a child process that writes to `io`, so a handler
   * that crashes ends the child, not the command line; resolves to the exit
   * code (`ExitCode.CRASHED` when a fatal signal or an exit ended the child
   * during the call). Without it, the handler runs in this process.
   */
  runIsolated?(argv: readonly string[], run: ParsedRun, io: IsolatedIo): Promise<number>;
  /** Reads an array from a `.npy` file. Errors exit with exit code 3. */
  readNpy(path: string): ArrayData;
  /** Writes an array to a `.npy` file. Errors exit with exit code 3. */
  writeNpy(path: string, array: ArrayData): void;
}
