/**
 * Testing XLA FFI handlers: array assertions with `numpy.testing`'s
 * semantics and report ({@link assertAllClose}, {@link assertArrayEqual}; tolerances
 * default to the data type's, as jax's tests have them: {@link defaultTolerance}),
 * {@link assertBitsEqual} (or `assertArrayEqual(a, b, msg, { bitwise: true })`)
 * for bit-exact comparisons of hosts and builds (`0` is not `-0`, a NaN's
 * payload counts), {@link assertFfiError} for calls that must fail,
 * result specs shaped like an array ({@link like}), and complex arrays from
 * and to their parts. No dependencies beyond the module; assertions throw
 * {@link AssertionError} and take an optional message last, as
 * `@std/assert`'s do. {@link withLeakCheck} and {@link assertNoOpenResources}
 * fail a test that leaves objects of this module open, naming each and where
 * it was made. {@link fuzzHandler} fuzzes a handler: it discovers its signature,
 * calls it with generated edge-case frames in an isolated, guarded process, and
 * reports each failure shrunk, with the `cli run` line that reproduces it.
 *
 * A handler test is one `ffiCall` on a host: the embedded `Runtime`, or real
 * XLA (`Xla` from `@deno-xla/ffi/xla`); both implement `FfiHost`.
 *
 * @example
 * ```ts
 * import { DataType, Ffi, Runtime, scalar } from "@deno-xla/ffi";
 * import { assertAllClose, like } from "@deno-xla/ffi/testing";
 *
 * using scale = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
 *   .to((x, y, alpha) => {
 *     const xs = x.typed(), ys = y.typed();
 *     for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
 *   });
 * using rt = new Runtime({ threads: 0 });
 * const x = { data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] };
 * const [y] = await rt.ffiCall(scale, {
 *   args: [x],
 *   results: [like(x)],
 *   attrs: { alpha: scalar(DataType.F32, 0.5) },
 * });
 * assertAllClose({ data: y!, shape: [2, 2] }, [[0.5, 1], [1.5, 2]]);
 * ```
 *
 * @module
 */
export {
  type AllCloseOptions,
  type ArrayEqualOptions,
  assertAllClose,
  assertArrayEqual,
  assertBitsEqual,
  assertFfiError,
  AssertionError,
  defaultTolerance,
  type FfiErrorCode,
  type FfiErrorOf,
} from "./assert.ts";
export type { ArrayLikeInput } from "./_values.ts";
export {
  complex128,
  complex64,
  type ComplexArray,
  complexPairs,
  imagPart,
  like,
  realPart,
} from "./arrays.ts";
export {
  type ArgValues,
  type AttrSignature,
  type BufferSignature,
  discoverSignature,
  formatFuzzReport,
  formatSignature,
  type FuzzCase,
  type FuzzFailure,
  type FuzzFailureKind,
  fuzzHandler,
  type FuzzOptions,
  type FuzzReport,
  type FuzzTarget,
  type HandlerSignature,
  type ReferenceArray,
  type ReferenceAttrs,
  type ResultRule,
} from "./fuzz_handler.ts";
// The attributes of a fuzz case, as the spec grammar (and `cli run --attr`) writes them.
export type { AttrDictionary, AttrValue, ElementValues } from "../spec/grammar.ts";
export {
  assertNoOpenResources,
  LeakError,
  type OpenResource,
  ResourceTracker,
  trackResources,
  withLeakCheck,
} from "./leaks.ts";
