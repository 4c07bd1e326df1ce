/**
 * One call of a handler as jax's `ffi_call` makes it, on either host: the
 * options and results shared by `Runtime.ffiCall` (the embedded runtime) and
 * `Xla.ffiCall` (real XLA), the {@link FfiHost} interface both implement,
 * and the checks of arguments, result specs and aliases both apply.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import {
  type DataTypedArray,
  type DataTypedArrayConstructor,
  dataTypeInfo,
  dataTypeOf,
} from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import {
  _bufferBytes,
  _checkDataSize,
  _MAX_BUFFER_BYTES,
  _MAX_RANK,
  _pinnedBytes,
} from "./_buffer_size.ts";
import type { AttrDictionary } from "./attributes.ts";
import type { HandlerRef, HandlerStages, TypeIdRef } from "./handler_library.ts";
import type { TypedArrayOf } from "../handler/_dtype.ts";

/**
 * An array with its shape (and a dtype when the data's own type is not the
 * element type): `{ data, shape, dtype }`, or an `NpyArray` from `loadNpy`.
 *
 * @example
 * ```ts
 * import { type ArrayInput, DataType } from "@deno-xla/ffi";
 * // Two complex64 values, interleaved (re, im): 1+2i, 3-1i.
 * const z: ArrayInput = { data: new Float32Array([1, 2, 3, -1]), shape: [2], dtype: DataType.C64 };
 * console.log(z.shape); // [ 2 ]
 * ```
 */
export interface ArrayInput {
  /** C-order elements (any view of the right byte length). */
  readonly data: ArrayBufferView;
  /** Dimensions, outermost first; `[]` for a scalar. Default: `[elements]`. */
  readonly shape?: readonly number[];
  /** The element type; default: the typed array's own (`Float32Array` → F32). */
  readonly dtype?: DataType;
}

/**
 * An argument of `ffiCall`: a typed array (1-D, of its own element type) or
 * an {@link ArrayInput} such as an `NpyArray`.
 *
 * @example
 * ```ts
 * import type { ArrayArg } from "@deno-xla/ffi";
 * const args: ArrayArg[] = [new Float32Array([1, 2]), { data: new Int32Array(6), shape: [2, 3] }];
 * console.log(args.length); // 2
 * ```
 */
export type ArrayArg = DataTypedArray | ArrayInput;

/**
 * Element type and shape of an array (`shape: []` is a scalar).
 *
 * @example
 * ```ts
 * import { type ArraySpec, DataType } from "@deno-xla/ffi";
 * const scalarResult: ArraySpec = { dtype: DataType.S64, shape: [] };
 * console.log(scalarResult.shape.length); // 0
 * ```
 */
export interface ArraySpec {
  /** The element type. */
  readonly dtype: DataType;
  /** Dimensions, outermost first; `[]` for a scalar. */
  readonly shape: readonly number[];
}

/**
 * The results of `ffiCall` for result specs `R`: one typed array per spec,
 * the one of its dtype when the dtype is a literal (`DataType.F32` gives
 * `Float32Array`, `DataType.C64` a `Float32Array` of interleaved pairs,
 * `DataType.BF16` a `Uint16Array` of bits; {@link TypedArrayOf}), any
 * {@link DataTypedArray} when it is not (a `DataType` variable, `like(x)`).
 * Specs written inline in the call are literal without `as const`.
 *
 * @example
 * ```ts
 * import { type ArraySpec, DataType, type FfiCallResults } from "@deno-xla/ffi";
 * type R = FfiCallResults<[{ dtype: DataType.F32; shape: [2] }, { dtype: DataType.S64; shape: [] }]>;
 * const results: R = [new Float32Array(2), new BigInt64Array(1)];
 * const loose: FfiCallResults<ArraySpec[]> = [new Int8Array(1)]; // not literal: any typed array
 * console.log(results.length, loose.length); // 2 1
 * ```
 */
export type FfiCallResults<R extends readonly ArraySpec[]> = {
  -readonly [K in keyof R]: R[K] extends { readonly dtype: infer D extends DataType }
    ? TypedArrayOf<D>
    : DataTypedArray;
};

/**
 * How `jax.ffi.ffi_call` batches under `jax.vmap` (real XLA only).
 *
 * @example
 * ```ts
 * import type { VmapMethod } from "@deno-xla/ffi";
 * const method: VmapMethod = "broadcast_all";
 * console.log(method); // broadcast_all
 * ```
 */
export type VmapMethod =
  | "sequential"
  | "sequential_unrolled"
  | "expand_dims"
  | "broadcast_all"
  | "legacy_vectorized";

/**
 * Options of `ffiCall` on either host ({@link FfiHost}).
 *
 * @example
 * ```ts
 * import { DataType, type FfiCallOptions, scalar } from "@deno-xla/ffi";
 * const options: FfiCallOptions = {
 *   args: [new Float32Array([1, 2, 3])],
 *   results: [{ dtype: DataType.F32, shape: [3] }],
 *   attrs: { alpha: scalar(DataType.F32, 2) },
 *   inputOutputAliases: { 0: 0 }, // result 0 is argument 0's buffer
 * };
 * console.log(options.results.length); // 1
 * ```
 */
export interface FfiCallOptions<R extends readonly ArraySpec[] = readonly ArraySpec[]> {
  /** The arguments, in order. */
  args?: readonly ArrayArg[];
  /**
   * Element type and shape of each result (`shape: []` is a scalar). A
   * literal dtype types its result: `{ dtype: DataType.F32, shape }` gives
   * a `Float32Array` ({@link FfiCallResults}).
   */
  results: R;
  /**
   * Attributes: `boolean`, `number` (S64 when an integer, else F64), `bigint`
   * (S64), `string`, typed arrays, `scalar(dtype, v)`, `array(dtype, vs)`,
   * nested objects (dictionaries).
   */
  attrs?: AttrDictionary;
  /**
   * jax's `input_output_aliases`: argument index → result index. The result
   * is the argument's buffer (same dtype and shape): the handler sees one
   * address for both and updates it in place. The caller's array is not
   * changed (the call works on a copy, as jax does for an array it does not
   * donate).
   */
  inputOutputAliases?: Readonly<Record<number, number>>;
  /**
   * jax's `input_layouts`: the memory layout the handler gets each argument
   * in, one entry per argument (missing trailing entries are row-major). A
   * layout lists the argument's dimension indices from the most major
   * (slowest varying) to the most minor (contiguous), as jax's `ffi_call`
   * takes them: `[0, 1, …, rank-1]`, `null` or `undefined` is row-major (the
   * default), `[1, 0]` a column-major matrix, `[0, 2, 1]` a batch of
   * column-major matrices. The arguments are still given row-major; the
   * handler sees the same dims, its elements in the layout's order (XLA
   * inserts the transpose; the embedded runtime copies the argument into
   * the layout before the call). A layout must be a permutation of
   * `0..rank-1`; there are at most as many layouts as arguments.
   *
   * @example
   * ```ts
   * import { DataType, Ffi, Runtime } from "@deno-xla/ffi";
   * // A handler that reads its 2×3 argument column-major: as laid out in memory.
   * using asStored = Ffi.bind().arg(DataType.F32, 2).ret(DataType.F32, 1).to((x, y) => {
   *   y.typed().set(x.typed());
   * });
   * using rt = new Runtime({ threads: 0 });
   * const [y] = await rt.ffiCall(asStored, {
   *   args: [{ data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] }],
   *   results: [{ dtype: DataType.F32, shape: [6] }],
   *   inputLayouts: [[1, 0]],
   * });
   * console.log([...y!]); // [ 1, 4, 2, 5, 3, 6 ]
   * ```
   */
  inputLayouts?: readonly (readonly number[] | null | undefined)[];
  /**
   * jax's `output_layouts`: the memory layout the handler writes each
   * result in, as {@link inputLayouts} (major to minor; `null`, `undefined`
   * or a missing entry is row-major). The results come back row-major
   * whatever the layout (XLA transposes them; the embedded runtime copies
   * them out of the layout after the call). An aliased argument and result
   * (`inputOutputAliases`) must have the same layout.
   *
   * @example
   * ```ts
   * import { DataType, Ffi, Runtime } from "@deno-xla/ffi";
   * // The handler writes 1..6 in memory order; column-major, that is [[1, 3, 5], [2, 4, 6]].
   * using count = Ffi.bind().ret(DataType.F32, 2).to((y) => {
   *   y.typed().set([1, 2, 3, 4, 5, 6]);
   * });
   * using rt = new Runtime({ threads: 0 });
   * const [y] = await rt.ffiCall(count, {
   *   results: [{ dtype: DataType.F32, shape: [2, 3] }],
   *   outputLayouts: [[1, 0]],
   * });
   * console.log([...y!]); // [ 1, 3, 5, 2, 4, 6 ]
   * ```
   */
  outputLayouts?: readonly (readonly number[] | null | undefined)[];
  /** `ffi_call`'s `vmap_method` (real XLA; only matters inside `jax.vmap`). */
  vmapMethod?: VmapMethod;
  /**
   * jax's `has_side_effect`, on both hosts: whether the call must run even
   * when nothing uses its results. A call with no results and without
   * `hasSideEffect: true` is dropped, as jax drops it (its `ffi_call` has no
   * effect and no output, so `jax.jit` removes it before XLA sees it): the
   * handler is not called, a target name is not looked up, the attributes
   * are not decoded, and the call resolves to `[]`. So is one whose results
   * all have a zero dimension (XLA replaces them with empty constants and
   * removes the call), resolving to them, empty. A handler called only
   * for what it does (writes a file, counts, reports an error) needs
   * `hasSideEffect: true`. With results it changes nothing on the embedded
   * runtime; under real XLA it keeps the call in the program.
   *
   * @example
   * ```ts
   * import { DataType, Ffi, Runtime } from "@deno-xla/ffi";
   * let calls = 0;
   * using count = Ffi.bind().arg(DataType.F32).to(() => {
   *   calls++;
   * });
   * using rt = new Runtime({ threads: 0 });
   * const x = { data: new Float32Array(2), shape: [2] };
   * console.log(await rt.ffiCall(count, { args: [x], results: [] }), calls); // [] 0
   * await rt.ffiCall(count, { args: [x], results: [], hasSideEffect: true });
   * console.log(calls); // 1
   * ```
   */
  hasSideEffect?: boolean;
  /**
   * Guarded buffers (host memory): a write past a result's end or into an
   * argument fails the call with an FfiError (DATA_LOSS) naming the handler,
   * the operand and the byte offset, as `new CallFrameBuilder({ guard: true })`
   * does (docs/faults.md). `Xla.ffiCall` calls a guarded registration of the
   * target (`Xla.register(…, { guard: true })`), whose results also have
   * canaries before their start.
   */
  guard?: boolean;
  /**
   * `Runtime.ffiCall`: `true` calls a native handler on a thread of the
   * runtime's pool, as {@link Runtime.call} does, so that a handler that
   * blocks for long leaves the event loop free. By default `Runtime.ffiCall`
   * calls it on the JavaScript thread, as XLA's CPU runtime calls a
   * synchronous handler inline: no thread hand-off, and the event loop waits
   * until the handler returns (a future it leaves pending is awaited without
   * blocking). TS handlers of this thread always run on it. `Xla.ffiCall`:
   * `true` hands the call to a worker, so the event loop stays free while
   * XLA runs it; by default a call of a target registered without a TS
   * handler starts on the JS thread, and XLA runs one on small arrays inline
   * there, as the embedded runtime does (`Xla.register`'s `offThread` does it
   * for every call of a target).
   */
  offThread?: boolean;
}

/**
 * What `ffiCall` calls: a registered target name, a handler, or a bundle of
 * stages.
 *
 * @example
 * ```ts
 * import type { FfiCallTarget } from "@deno-xla/ffi";
 * const target: FfiCallTarget = "my.rms_norm";
 * console.log(typeof target); // string
 * ```
 */
export type FfiCallTarget = string | HandlerRef | HandlerStages;

/** Options of {@link FfiHost.register}. */
export interface FfiRegisterOptions {
  /** The platform (default: the host's own). */
  platform?: string;
  /** Handler traits passed to the registration (e.g. COMMAND_BUFFER_COMPATIBLE). */
  traits?: number;
}

/** Options of {@link FfiHost.registerType}. */
export interface FfiRegisterTypeOptions {
  /** The type's `XLA_FFI_TypeInfo*` (its deleter frees states of the type). */
  typeInfo?: Deno.PointerObject;
}

/**
 * A host that runs XLA FFI handlers: the embedded `Runtime` and real XLA
 * (`Xla` from `@deno-xla/ffi/xla`) both implement it, with the same
 * options, results and errors for the same mistake, so one test body runs on
 * either. Methods may return a value or a Promise of it: `await` them.
 *
 * @example
 * ```ts
 * import { DataType, Ffi, type FfiHost, Runtime } from "@deno-xla/ffi";
 *
 * using twice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
 *   y.typed().set(x.typed().map((v) => 2 * v));
 * });
 * async function check(host: FfiHost): Promise<number> {
 *   await host.register("doc.host.twice", twice);
 *   const [y] = await host.ffiCall("doc.host.twice", {
 *     args: [new Float32Array([1, 2])],
 *     results: [{ dtype: DataType.F32, shape: [2] }],
 *   });
 *   return y![1] as number;
 * }
 * using rt = new Runtime({ threads: 0 });
 * console.log(await check(rt)); // 4
 * ```
 */
export interface FfiHost {
  /** Registers a handler or bundle as the target `name` (process-wide, as in XLA). */
  register(
    name: string,
    handler: HandlerRef | HandlerStages,
    options?: FfiRegisterOptions,
  ): void | Promise<void>;
  /**
   * Registers a state type (`jax.ffi.register_ffi_type`); a library's
   * `XLA_FFI_TypeId` storage ({@link TypeIdRef}) is filled in place. Returns
   * the id.
   */
  registerType(
    name: string,
    id?: number | bigint | TypeIdRef,
    options?: FfiRegisterTypeOptions,
  ): number | Promise<number>;
  /**
   * Calls a target once, as jax's `ffi_call` does; resolves to the results,
   * typed by their specs ({@link FfiCallResults}).
   */
  ffiCall<const R extends readonly ArraySpec[]>(
    target: FfiCallTarget,
    options: FfiCallOptions<R>,
  ): Promise<FfiCallResults<R>>;
  /**
   * Forgets what earlier `ffiCall`s kept per signature (compiled calls, and
   * with them the state their instantiate stage made), so the next call
   * instantiates again.
   */
  clearCache(): void | Promise<void>;
  /** Releases the host. */
  close(): void | Promise<void>;
}

/** A normalised argument. */
export interface _Arg {
  dtype: DataType;
  shape: number[];
  /**
   * Its bytes: a view of the caller's data, or a copy of data on a
   * resizable ArrayBuffer, which could shrink under the call
   * ({@link _pinnedBytes}).
   */
  bytes: Uint8Array;
}

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** Checks a shape (an array of non-negative safe integers, rank and size in limits). */
function checkShape(shape: readonly number[], dtype: DataType, what: string): void {
  if (!Array.isArray(shape)) {
    bad(`${what}: the shape must be an array of dimensions, got ${describe(shape)}`);
  }
  _bufferBytes(dtype, shape, what);
}

/** The data type a typed array holds; INVALID_ARGUMENT naming `what` for a DataView. */
function ownType(data: ArrayBufferView, what: string): DataType {
  try {
    return dataTypeOf(data);
  } catch {
    return bad(`${what}: cannot infer the data type of a ${data.constructor.name}; pass dtype`);
  }
}

/** A value as an option error shows it. */
function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  return typeof v === "string"
    ? JSON.stringify(v)
    : typeof v === "object"
    ? "an object"
    : String(v);
}

function checkDtype(dtype: unknown, what: string): DataType {
  if (typeof dtype !== "number" || dataTypeInfoOrNull(dtype) === null) {
    bad(`${what}: unknown data type ${String(dtype)}`);
  }
  const info = dataTypeInfo(dtype);
  if (info.kind === "token" || info.kind === "invalid") {
    bad(`${what}: ${info.name} arrays cannot be passed to XLA here`);
  }
  return dtype as DataType;
}

function dataTypeInfoOrNull(dtype: number) {
  try {
    return dataTypeInfo(dtype);
  } catch {
    return null;
  }
}

/** Byte width of each data type an argument may have (0: none, as TOKEN and INVALID). */
const ARG_WIDTH: readonly number[] = (() => {
  const w: number[] = [];
  for (const v of Object.values(DataType)) {
    if (typeof v !== "number") continue;
    const info = dataTypeInfoOrNull(v);
    w[v] = info === null || info.kind === "token" || info.kind === "invalid" ? 0 : info.byteWidth;
  }
  return w;
})();

/**
 * The common argument, `{ data, shape, dtype? }` that is right, checked
 * without making a message: null when anything is off (the full check then
 * says what).
 */
export function _quickArg(arg: ArrayArg): _Arg | null {
  const { data, shape, dtype } = arg as ArrayInput;
  if (!ArrayBuffer.isView(data) || !Array.isArray(shape) || shape.length > _MAX_RANK) return null;
  if ((data.buffer as ArrayBuffer).detached === true) return null;
  let dt: number;
  if (dtype === undefined) {
    if (data instanceof Float32Array) dt = DataType.F32;
    else if (data instanceof Float64Array) dt = DataType.F64;
    else if (data instanceof Int32Array) dt = DataType.S32;
    else return null;
  } else dt = dtype;
  const width = ARG_WIDTH[dt];
  if (width === undefined || width === 0) return null;
  let n = width, zero = false;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (!Number.isSafeInteger(d) || d! < 0) return null;
    if (d === 0) zero = true;
    else n *= d!;
  }
  if (n > _MAX_BUFFER_BYTES || data.byteLength !== (zero ? 0 : n)) return null;
  return { dtype: dt as DataType, shape: shape.slice(), bytes: _pinnedBytes(data) };
}

/**
 * Checks and normalises one argument (a typed array or `{ data, shape,
 * dtype }`); data on a resizable ArrayBuffer is copied ({@link _Arg.bytes}).
 */
export function _normaliseArg(arg: ArrayArg, what: string): _Arg {
  if (arg !== null && typeof arg === "object" && !ArrayBuffer.isView(arg)) {
    const quick = _quickArg(arg);
    if (quick !== null) return quick;
  }
  if (arg === null || typeof arg !== "object") {
    bad(`${what}: expected a typed array or { data, shape }, got ${describe(arg)}`);
  }
  const input: ArrayInput = ArrayBuffer.isView(arg) ? { data: arg } : arg as ArrayInput;
  const data = input.data;
  if (!ArrayBuffer.isView(data)) {
    bad(`${what}: data must be a typed array, got ${describe(data)}`);
  }
  if ((data.buffer as ArrayBuffer).detached === true) {
    bad(`${what}: its ArrayBuffer is detached (transferred)`);
  }
  const dtype = checkDtype(input.dtype ?? ownType(data, what), what);
  const info = dataTypeInfo(dtype);
  let shape: number[];
  if (input.shape === undefined) {
    const elements = data.byteLength / info.byteWidth;
    if (!Number.isInteger(elements)) {
      bad(`${what}: ${data.byteLength} bytes are not a whole number of ${info.name} elements`);
    }
    shape = [elements];
  } else {
    checkShape(input.shape, dtype, what);
    shape = [...input.shape];
  }
  _checkDataSize(
    dtype,
    shape,
    data.byteLength,
    "array",
    what,
    input.dtype === undefined ? (c) => `give dtype: DataType.${c}` : undefined,
  );
  return { dtype, shape, bytes: _pinnedBytes(data) };
}

/** Checks an array spec. */
export function _normaliseSpec(spec: ArraySpec, what: string): { dtype: number; shape: number[] } {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    bad(`${what}: expected { dtype, shape }, got ${describe(spec)}`);
  }
  const dtype = checkDtype(spec.dtype, what);
  if (spec.shape === undefined) bad(`${what}: a shape is required`);
  checkShape(spec.shape, dtype, what);
  return { dtype, shape: [...spec.shape] };
}

/** @internal the options `ffiCall` takes, on either host (the surface fuzzer reads them too). */
export const OPTIONS: ReadonlySet<string> = new Set([
  "args",
  "results",
  "attrs",
  "inputOutputAliases",
  "inputLayouts",
  "outputLayouts",
  "vmapMethod",
  "hasSideEffect",
  "guard",
  "offThread",
]);

const VMAP_METHODS: ReadonlySet<unknown> = new Set<VmapMethod>([
  "sequential",
  "sequential_unrolled",
  "expand_dims",
  "broadcast_all",
  "legacy_vectorized",
]);

/**
 * Checks ffiCall's options, the same on both hosts: each is absent
 * (`undefined`) or of its type, and no other names are given. FfiError
 * INVALID_ARGUMENT naming the option.
 */
export function _checkCallOptions(options: FfiCallOptions): void {
  if (options === null || typeof options !== "object" || !Array.isArray(options.results)) {
    bad("ffiCall needs { results: [{ dtype, shape }] }");
  }
  // Own enumerable names, as Object.keys lists them, without making the list.
  for (const key in options) {
    if (!OPTIONS.has(key) && Object.hasOwn(options, key)) {
      bad(`ffiCall: unknown option '${key}' (options: ${[...OPTIONS].join(", ")})`);
    }
  }
  const { args, attrs, inputOutputAliases, vmapMethod, hasSideEffect, guard } = options;
  if (args !== undefined && !Array.isArray(args)) {
    bad(`ffiCall: args must be an array of arrays, got ${describe(args)}`);
  }
  if (
    attrs !== undefined &&
    (attrs === null || typeof attrs !== "object" || Array.isArray(attrs) ||
      ArrayBuffer.isView(attrs))
  ) {
    bad(`ffiCall: attrs must be a dictionary ({ name: value } or a Map), got ${describe(attrs)}`);
  }
  if (
    inputOutputAliases !== undefined &&
    (inputOutputAliases === null || typeof inputOutputAliases !== "object" ||
      Array.isArray(inputOutputAliases) || ArrayBuffer.isView(inputOutputAliases))
  ) {
    bad(
      `ffiCall: inputOutputAliases must be { argument: result }, got ${
        describe(inputOutputAliases)
      }`,
    );
  }
  if (vmapMethod !== undefined && !VMAP_METHODS.has(vmapMethod)) {
    bad(
      `ffiCall: vmapMethod must be one of ${[...VMAP_METHODS].join(", ")}, got ${
        describe(vmapMethod)
      }`,
    );
  }
  if (hasSideEffect !== undefined && typeof hasSideEffect !== "boolean") {
    bad(`ffiCall: hasSideEffect must be a boolean, got ${describe(hasSideEffect)}`);
  }
  if (guard !== undefined && typeof guard !== "boolean") {
    bad(`ffiCall: guard must be a boolean, got ${describe(guard)}`);
  }
  if (options.offThread !== undefined && typeof options.offThread !== "boolean") {
    bad(`ffiCall: offThread must be a boolean, got ${describe(options.offThread)}`);
  }
}

/**
 * Checks `inputOutputAliases` against the arguments and results (jax's
 * rules: indices in range, each used once, the same dtype and shape) and
 * returns [argument, result] pairs.
 */
export function _checkAliases(
  aliases: Readonly<Record<number, number>> | undefined,
  args: readonly _Arg[],
  results: readonly { dtype: number; shape: readonly number[] }[],
): [number, number][] {
  if (aliases === undefined) return [];
  if (aliases === null || typeof aliases !== "object") {
    bad(`inputOutputAliases must be { argument: result }, got ${describe(aliases)}`);
  }
  const out: [number, number][] = [];
  const usedResults = new Set<number>();
  for (const [k, v] of Object.entries(aliases)) {
    const a = Number(k);
    if (!Number.isInteger(a) || a < 0 || a >= args.length) {
      bad(`inputOutputAliases: argument index ${k} is out of range [0, ${args.length})`);
    }
    if (!Number.isInteger(v) || v < 0 || v >= results.length) {
      bad(`inputOutputAliases: result index ${String(v)} is out of range [0, ${results.length})`);
    }
    if (usedResults.has(v)) bad(`inputOutputAliases: result ${v} is aliased twice`);
    usedResults.add(v);
    const arg = args[a]!, res = results[v]!;
    if (
      arg.dtype !== res.dtype || arg.shape.length !== res.shape.length ||
      arg.shape.some((d, i) => d !== res.shape[i])
    ) {
      bad(
        `inputOutputAliases: argument ${a} (${_specText(arg)}) and result ${v} ` +
          `(${_specText(res)}) must have the same dtype and shape`,
      );
    }
    out.push([a, v]);
  }
  return out;
}

/** `f32[2,3]`. */
export function _specText(s: { dtype: number; shape: readonly number[] }): string {
  return `${dataTypeInfo(s.dtype).name.toLowerCase()}[${s.shape.join(",")}]`;
}

/**
 * Zeroed storage for a result of `bytes` bytes: an ArrayBuffer of its own,
 * which no other result shares, so a caller that transfers or detaches a
 * result's buffer touches no other result, of this call or another.
 * FfiError RESOURCE_EXHAUSTED naming `what` when the bytes cannot be
 * allocated.
 */
export function _resultStorage(bytes: number, what = "result"): Uint8Array {
  try {
    return new Uint8Array(bytes);
  } catch (e) {
    // V8 fails an ArrayBuffer it cannot allocate with a RangeError.
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: cannot allocate ${bytes} bytes for it (${(e as Error).message})`,
    );
  }
}

/**
 * A fresh zeroed result of `bytes` bytes (a whole number of `of`'s
 * elements) as an `of` array over an ArrayBuffer of its own, made directly
 * (reading a small typed array's `buffer` makes V8 move its bytes off its
 * heap: about 1 µs); RESOURCE_EXHAUSTED as {@link _resultStorage}.
 */
export function _resultArray(
  of: DataTypedArrayConstructor,
  bytes: number,
  what = "result",
): DataTypedArray {
  try {
    return new of(bytes / of.BYTES_PER_ELEMENT);
  } catch (e) {
    throw new FfiError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: cannot allocate ${bytes} bytes for it (${(e as Error).message})`,
    );
  }
}

const ids = new WeakMap<object, number>();
let nextId = 1;

/** A process-wide number for an object (handlers and bundles in cache keys). */
export function _identity(o: object): number {
  let id = ids.get(o);
  if (id === undefined) {
    id = nextId++;
    ids.set(o, id);
  }
  return id;
}
