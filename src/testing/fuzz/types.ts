/**
 * The handler fuzzer's public shapes: a handler's signature as discovery
 * finds it, a generated call, a failure and the report, the target, and the
 * options of `fuzzHandler` and `discoverSignature` (re-exported by
 * src/testing/fuzz_handler.ts).
 *
 * @module
 */
import type { DataType } from "../../abi/enums.ts";
import type { DataTypedArray } from "../../abi/dtype.ts";
import type { AttrDictionary as CliAttrs } from "../../spec/grammar.ts";
import type { ArraySpec } from "../../runtime/ffi_call.ts";
import type { HandlerRef } from "../../runtime/handler_library.ts";
import type { IsolatedOutput } from "../../runtime/isolate.ts";

/**
 * One buffer of a {@link HandlerSignature}: its element type and rank,
 * each `undefined` when the handler does not check it (an untyped buffer,
 * a rank left free).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import type { BufferSignature } from "@deno-xla/ffi/testing";
 * const matrix: BufferSignature = { dtype: DataType.F32, rank: 2 };
 * console.log(matrix.rank); // 2
 * ```
 */
export interface BufferSignature {
  /** The element type the handler checks, or undefined (any). */
  dtype?: DataType;
  /** The rank the handler checks, or undefined (any). */
  rank?: number;
}

/**
 * One attribute of a {@link HandlerSignature}: its name and kind, and for a
 * scalar or array its element type. `kind` is undefined when probing could
 * not tell (a dictionary or struct attribute needs a hint).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import type { AttrSignature } from "@deno-xla/ffi/testing";
 * const alpha: AttrSignature = { name: "alpha", kind: "scalar", dtype: DataType.F32 };
 * console.log(alpha.name); // alpha
 * ```
 */
export interface AttrSignature {
  /** The attribute's name. */
  name: string;
  /** Its kind, or undefined when not discovered. */
  kind?: "scalar" | "array" | "string" | "dictionary";
  /** The element type of a scalar or array. */
  dtype?: DataType;
}

/**
 * What signature discovery found out about a handler: the arguments,
 * results and attributes a frame needs to decode, and what it could not
 * find out (`unknown`, one sentence each).
 *
 * @example
 * ```ts
 * import type { HandlerSignature } from "@deno-xla/ffi/testing";
 * function describe(s: HandlerSignature): string {
 *   return `${s.args.length} args, ${s.results.length} results, ${s.attrs.length} attrs`;
 * }
 * console.log(describe({
 *   args: [{}], results: [{}], attrs: [], variadicArgs: false, variadicResults: false,
 *   decodes: true, unknown: [], probes: 4,
 * })); // 1 args, 1 results, 0 attrs
 * ```
 */
export interface HandlerSignature {
  /** The arguments. */
  args: BufferSignature[];
  /** The results. */
  results: BufferSignature[];
  /** The attributes, sorted by name. */
  attrs: AttrSignature[];
  /** The handler takes more arguments than these (ffi.h `RemainingArgs`, optional arguments). */
  variadicArgs: boolean;
  /** The handler takes more results than these. */
  variadicResults: boolean;
  /** Whether a probing frame decoded (the handler ran, or failed after decoding). */
  decodes: boolean;
  /** What could not be discovered, one sentence each (give hints for these). */
  unknown: string[];
  /** The number of probing calls made. */
  probes: number;
}

/**
 * A result's shape rule: `"like:N"` (argument N's dtype and shape), a shape
 * expression over the arguments' dimensions (`"s32[$0.1]"`: dimension 1 of
 * argument 0; `"f32[$0.0,$1.1,4]"`; `"f32"` for a scalar), or a function of
 * the argument shapes that returns the result's {@link ArraySpec}.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import type { ResultRule } from "@deno-xla/ffi/testing";
 * const rows: ResultRule = "f32[$0.0]";
 * const transposed: ResultRule = ([x]) => ({ dtype: DataType.F32, shape: [x![1]!, x![0]!] });
 * console.log(typeof rows, typeof transposed); // string function
 * ```
 */
export type ResultRule =
  | string
  | ((argShapes: readonly (readonly number[])[]) => ArraySpec);

/**
 * One generated call: the arguments (C-order bytes with dtype and shape),
 * the results' specs and the attributes (as the command line's `--attr`
 * parses them).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import type { FuzzCase } from "@deno-xla/ffi/testing";
 * const c: FuzzCase = {
 *   args: [{ dtype: DataType.F32, shape: [0], data: new Uint8Array(0) }],
 *   results: [{ dtype: DataType.F32, shape: [0] }],
 *   attrs: { kind: "dictionary", entries: new Map() },
 * };
 * console.log(c.args[0]!.shape); // [ 0 ]
 * ```
 */
export interface FuzzCase {
  /** The arguments. */
  args: { dtype: DataType; shape: number[]; data: Uint8Array }[];
  /** The results' element types and shapes. */
  results: ArraySpec[];
  /** The attributes. */
  attrs: CliAttrs;
}

/**
 * The kinds of failure: a fatal signal (`crash`), a write past or before a
 * result (`result-write`), a write into or next to an argument
 * (`argument-write`), a call past the deadline (`hang`), a result that
 * differs between two calls with the same input (`nondeterministic`), an
 * error code outside XLA's 0–16 (`bad-error-code`), a result unlike the
 * reference's (`mismatch`).
 *
 * @example
 * ```ts
 * import type { FuzzFailureKind } from "@deno-xla/ffi/testing";
 * const k: FuzzFailureKind = "hang";
 * console.log(k); // hang
 * ```
 */
export type FuzzFailureKind =
  | "crash"
  | "result-write"
  | "argument-write"
  | "hang"
  | "nondeterministic"
  | "bad-error-code"
  | "mismatch";

/**
 * One distinct failure: its kind, what it names (`SIGFPE`, `result 0`),
 * the message of the first call that had it, the call shrunk, and how to
 * reproduce it.
 *
 * @example
 * ```ts ignore
 * import { fuzzHandler } from "@deno-xla/ffi/testing";
 * const report = await fuzzHandler({ library: "./libmy.so", handler: "my_op" }, { runs: 200 });
 * for (const f of report.failures) console.log(f.kind, f.detail, f.command?.join(" "));
 * ```
 */
export interface FuzzFailure {
  /** The kind. */
  kind: FuzzFailureKind;
  /** What it names: the signal, the operand (`result 0`), or "". */
  detail: string;
  /** The error message of the shrunk call. */
  message: string;
  /** The call, shrunk. */
  case: FuzzCase;
  /** The first call that failed this way, before shrinking. */
  original: FuzzCase;
  /** The run (from 0) that found it. */
  run: number;
  /** How many runs failed this way. */
  count: number;
  /** Shrinking steps that kept the failure. */
  shrinkSteps: number;
  /** A mismatch's expected results (the reference's, for the shrunk call). */
  expected?: ArrayBufferView[];
  /** The `.npy` files of the shrunk arguments (with `outDir`), then a mismatch's expected results. */
  files?: string[];
  /**
   * The command line (after `cli`) that reproduces it: `run lib.so NAME --arg …`, or
   * `run --python-module M NAME --arg …` (library and module targets with `outDir`).
   */
  command?: string[];
}

/**
 * What {@link fuzzHandler} found: the signature, the runs made, the calls
 * the handler refused with an error of its own (not failures), and each
 * distinct failure once.
 *
 * @example
 * ```ts ignore
 * import { formatFuzzReport, fuzzHandler } from "@deno-xla/ffi/testing";
 * const report = await fuzzHandler({ library: "./libmy.so", handler: "my_op" }, { runs: 500 });
 * console.log(formatFuzzReport(report));
 * ```
 */
export interface FuzzReport {
  /** The discovered signature (with hints applied). */
  signature: HandlerSignature;
  /** Runs made (generated calls). */
  runs: number;
  /** Runs the handler refused with an error of its own. */
  rejected: number;
  /** Generated calls not made: `valid` said no. */
  skipped?: number;
  /** Seconds the runs took (discovery and shrinking excluded). */
  seconds: number;
  /** Runs per second. */
  runsPerSecond: number;
  /** Whether result writes count (a result rule was given). */
  resultsChecked: boolean;
  /** Distinct failures, in the order found. */
  failures: FuzzFailure[];
  /** The seed. */
  seed: number;
  /**
   * What a library's handler wrote to stdout and stderr during discovery
   * and the runs (its first 4 KiB in `head`), kept from the terminal;
   * absent for a TS handler or with `handlerOutput: "pass"`.
   */
  output?: IsolatedOutput;
}

/**
 * What {@link fuzzHandler} fuzzes: a handler of a shared library (run in a
 * child process, with guarded buffers); a handler of a Python extension
 * module, by its registered name (`module`: a child process hosts the
 * configured Python, `$XLA_FFI_DENO_PYTHON`, imports the module, calls its
 * `initialize` function when named and takes its handlers as
 * `Xla.handlersFrom` does, `platform` default `"cpu"`); or a handler
 * object (a TS handler, called in this process; an `Xla.handlersFrom`
 * handler moves to such a child with {@link FuzzOptions.isolate}).
 *
 * @example
 * ```ts
 * import type { FuzzTarget } from "@deno-xla/ffi/testing";
 * const t: FuzzTarget = { library: "./libmy_handlers.so", handler: "my_op" };
 * const m: FuzzTarget = { module: "jaxlib.cpu._sparse", handler: "cpu_csr_sparse_dense_ffi" };
 * console.log("library" in t, "module" in m); // true true
 * ```
 */
export type FuzzTarget =
  | { library: string; handler: string }
  | { module: string; handler: string; initialize?: string; platform?: string }
  | HandlerRef;

/**
 * An argument as a {@link FuzzOptions.reference} gets it: C-order elements
 * in a typed array of its dtype, with the dtype and shape.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import type { ReferenceArray } from "@deno-xla/ffi/testing";
 * const x: ReferenceArray = { data: new Float32Array([1, 2]), shape: [2], dtype: DataType.F32 };
 * console.log(x.data[1]); // 2
 * ```
 */
export interface ReferenceArray {
  /** The elements (a view of a copy: the reference may keep or change it). */
  data: DataTypedArray;
  /** The dimensions. */
  shape: number[];
  /** The element type. */
  dtype: DataType;
}

/**
 * A call's attributes as a {@link FuzzOptions.reference} gets them: by
 * name, a number (a bigint for 64-bit integers), a boolean (pred), a
 * string, an array of numbers or bigints, or a nested dictionary.
 *
 * @example
 * ```ts
 * import type { ReferenceAttrs } from "@deno-xla/ffi/testing";
 * const attrs: ReferenceAttrs = { uplo: 76, n: 3n, cfg: { mode: "fast" } };
 * console.log(attrs.uplo === "L".charCodeAt(0)); // true
 * ```
 */
export interface ReferenceAttrs {
  /** An attribute's value, by its name. */
  [name: string]:
    | number
    | bigint
    | boolean
    | string
    | readonly number[]
    | readonly bigint[]
    | ReferenceAttrs;
}

/**
 * The values an argument may hold ({@link FuzzOptions.argValues}): generated
 * values are mapped into `[min, max]` (integers wrap into it, floats are
 * clamped, NaN and infinities become `min`); `indexInto: [A, D]` bounds them
 * to `[0, dimension D of argument A)` (an index into it); `sorted` sorts
 * them, ascending, in C order; `offsetsInto: [A, D]` makes them offsets
 * from 0 to that dimension, both ends included (CSR's `indptr`). Applied
 * in that order.
 *
 * @example
 * ```ts
 * import type { ArgValues } from "@deno-xla/ffi/testing";
 * // CSR: indptr 0 … nnz (dimension 0 of argument 0), column indices into dimension 0 of argument 3.
 * const indptr: ArgValues = { offsetsInto: [0, 0] };
 * const indices: ArgValues = { indexInto: [3, 0] };
 * console.log(indptr.offsetsInto, indices.indexInto); // [ 0, 0 ] [ 3, 0 ]
 * ```
 */
export interface ArgValues {
  /** The smallest value. */
  min?: number | bigint;
  /** The largest value. */
  max?: number | bigint;
  /** Values are indices into dimension D of argument A: `[0, shape[D])`. */
  indexInto?: readonly [number, number];
  /** Values ascend (C order). */
  sorted?: boolean;
  /**
   * Values are offsets into dimension D of argument A: ascending within
   * `[0, shape[D]]`, the first 0 and the last `shape[D]` (CSR's row
   * pointers: the last is the number of values). Replaces `min`, `max`.
   */
  offsetsInto?: readonly [number, number];
}

/**
 * Options of {@link fuzzHandler} and {@link discoverSignature}.
 *
 * @example
 * ```ts
 * import type { FuzzOptions } from "@deno-xla/ffi/testing";
 * const options: FuzzOptions = { runs: 300, seed: 7, results: ["like:0"], attrs: ["alpha=f32:1"] };
 * console.log(options.runs); // 300
 * ```
 */
export interface FuzzOptions {
  /** Generated calls at most (default 1000). */
  runs?: number;
  /** Seconds at most for the runs (default: no bound but `runs`). */
  seconds?: number;
  /** The seed (default 1): the same seed, signature and options give the same calls. */
  seed?: number;
  /**
   * One rule per result ({@link ResultRule}). Without rules each result is
   * `like:0` where dtype and rank allow (else a guess), and writes outside
   * results do not count (only the caller knows result shapes).
   */
  results?: readonly ResultRule[];
  /**
   * Hints for arguments, in order, as `cli run --arg` or `--ret` spell them
   * (`f32[4,3]`, `f32[2]=1,2`, `x.npy`): the dtype and rank of each (the
   * fuzzer still varies sizes and values); `undefined` for none. More hints
   * than discovered arguments add arguments (a variadic handler).
   */
  args?: readonly (string | undefined)[];
  /**
   * Attributes as `cli fuzz --attr` takes them: `NAME=TYPE:VALUE` as
   * `cli run --attr` (`alpha=f32:1`, `cfg.mode=str:fast`) is sent as given
   * in every call; a scalar's domain, `NAME=TYPE:{V1,V2,…}` (choices;
   * `uplo=u8:{'L','U'}`, a quoted character being its code) or
   * `NAME=TYPE:[LO,HI]` (a range, ends included), is drawn from (its edges
   * inside it) and shrinks inside it; `NAME=TYPE:*` or `NAME=TYPE[]:*`
   * gives the type only, the fuzzer varies the value.
   */
  attrs?: readonly string[];
  /** Milliseconds a call may take before it counts as a hang (default 1000; isolated targets). */
  timeoutMs?: number;
  /**
   * Run a Python extension module's handler (from `Xla.handlersFrom`) in
   * a child process that hosts its module, as a `{ module, handler }`
   * target is (its crashes are then failures found, not this process's
   * end); the module is imported again there, with the same `initialize`
   * and `platform`. Other handler objects run in this process.
   */
  isolate?: boolean;
  /** `"address"`: run the library's process with AddressSanitizer (a library built with it). */
  sanitize?: "address";
  /**
   * A stateful handler's instantiate handler (a symbol of the same
   * library): every call (probing, generated, shrinking) first runs it in
   * the instantiate stage with the call's attributes, and the handler runs
   * with the fresh state it made (ffi.h's `Ctx<State<T>>`); no state is
   * shared between calls.
   */
  instantiate?: string;
  /**
   * Type id functions of the library (`NAME_type_id`, ffi.h's
   * `XLA_FFI_DECLARE_TYPE_ID`-style exports) whose state types are
   * registered, as NAME, in the library's process before any call.
   */
  stateTypes?: readonly string[];
  /** Guarded buffers (default true). */
  guard?: boolean;
  /**
   * What a library's handlers write to stdout and stderr: `"keep"` (the
   * default) counts it and keeps its first lines for the report
   * ({@link FuzzReport.output}), `"pass"` lets it through to this
   * process's stderr.
   */
  handlerOutput?: "keep" | "pass";
  /** Call each call that succeeds twice and compare the results (default true). */
  checkDeterminism?: boolean;
  /**
   * A reference: the results the handler should give for the arguments and
   * attributes of a call (compared as `assertAllClose` does, with the data
   * type's tolerance); `undefined` skips the call. Each argument comes as a
   * {@link ReferenceArray} (`data` a typed array of its dtype: a
   * `Float32Array` for f32, a `BigInt64Array` for s64, the bits in a
   * `Uint16Array` for f16 and bf16, interleaved parts for complex types),
   * the attributes as {@link ReferenceAttrs} (plain values, as a TS
   * handler's binding gives them). A mismatch's expected results are
   * written beside its arguments (with `outDir`) and its `cli run` line
   * compares with them (`--expect`).
   */
  reference?: (
    args: readonly ReferenceArray[],
    attrs: ReferenceAttrs,
  ) => readonly ArrayBufferView[] | undefined | Promise<readonly ArrayBufferView[] | undefined>;
  /**
   * The values each argument may hold, in order (`undefined`: any): a
   * handler's contract (indices inside a dimension, a sorted `indptr`) as
   * {@link ArgValues}. Generated and shrunk calls are made to keep it, so a
   * failure found is the handler's, not an input it forbids.
   */
  argValues?: readonly (ArgValues | undefined)[];
  /**
   * Whether a generated (or shrunk) call is one the handler must take; a
   * call it is false for is not made (the report counts it in `skipped`).
   * It gets the call's arguments and attributes as {@link reference} does.
   */
  valid?: (args: readonly ReferenceArray[], attrs: ReferenceAttrs) => boolean;
  /** Calls at most to shrink each failure (default 300). */
  shrinkCalls?: number;
  /**
   * A folder to write each failure's `.npy` arguments to (a library's or a
   * Python module's handler also gets a `command`).
   */
  outDir?: string;
  /** Called after each run with the number done. */
  onProgress?: (runs: number, failures: number) => void;
}
