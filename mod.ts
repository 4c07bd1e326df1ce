/**
 * deno-xla-ffi: the XLA FFI C ABI from TypeScript.
 *
 * Write XLA custom-call handlers in TypeScript, run and test XLA FFI handlers
 * (C/C++ or TypeScript) without XLA in an embedded runtime, and launch CUDA
 * work on the stream XLA hands a handler.
 *
 * This entry holds what handlers and their callers use: the binding DSL
 * (`Ffi.bind()`), the embedded `Runtime`, call frames (`CallFrameBuilder`),
 * futures, `FfiError` and the data types. The other entries:
 *
 * - `@deno-xla/ffi/abi`: the ABI as data (struct layouts, readers, writers, raw enums).
 * - `@deno-xla/ffi/npy`: reading and writing `.npy` files.
 * - `@deno-xla/ffi/cuda`: the CUDA driver API, for work on the stream XLA hands a handler.
 * - `@deno-xla/ffi/xla`: real XLA (jax hosted in the process) running programs that call handlers.
 * - `@deno-xla/ffi/testing`: assertions, leak checks and the handler fuzzer for tests.
 * - `@deno-xla/ffi/build`: compiling C/C++ handler libraries against the XLA FFI headers.
 * - `@deno-xla/ffi/cli`: the command line (`inspect`, `run`, `fuzz`).
 *
 * Supported platforms: Linux x86-64 and Linux aarch64 (glibc 2.34 or
 * later), for which the native library ships prebuilt and is copied into
 * the per-user cache on first use (`--allow-env --allow-read --allow-write
 * --allow-ffi`). Elsewhere it is compiled from source with a C compiler
 * (also `--allow-run`); without one, the first use throws an `FfiError`
 * (UNIMPLEMENTED) naming the platform. `deno run -A jsr:@deno-xla/ffi/build`
 * installs it ahead of time.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder, DataType, Ffi, Runtime } from "@deno-xla/ffi";
 *
 * using twice = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
 *   y.typed().set(x.typed().map((v) => 2 * v));
 * });
 * using rt = new Runtime();
 * const y = new Float32Array(3);
 * using frame = new CallFrameBuilder().arg(new Float32Array([1, 2, 3])).ret(y).build();
 * rt.callSync(twice, frame);
 * console.log(y); // Float32Array(3) [ 2, 4, 6 ]
 * ```
 *
 * @module
 */
export { DataType, ErrorCode, ExecutionStage, HandlerTraits, stageName } from "./src/abi/enums.ts";
export { FfiError, toFfiError } from "./src/errors.ts";
export type { FfiErrorOptions } from "./src/errors.ts";
export { API_VERSIONS, type ApiVersion } from "./src/abi/version.ts";
export { exceptionGuard } from "./src/native/lib.ts";
export {
  allDataTypes,
  bitsToFloat,
  bitWidth,
  byteWidth,
  dataTypeInfo,
  dataTypeName,
  dataTypeOf,
  decodeFloats,
  encodeFloats,
  floatToBits,
  isComplex,
  isFloat,
  isInteger,
  isSignedInteger,
  numberToSubByte,
  subByteToNumber,
  typedArrayFor,
  viewAs,
} from "./src/abi/dtype.ts";
export type {
  DataTypedArray,
  DataTypedArrayConstructor,
  DataTypeInfo,
  DataTypeKind,
} from "./src/abi/dtype.ts";
export {
  array,
  ArrayAttr,
  type AttrDictionary,
  type AttrInput,
  type NumericTypedArray,
  scalar,
  ScalarAttr,
} from "./src/runtime/attributes.ts";
export {
  type Address,
  type BufferData,
  CallFrame,
  CallFrameBuilder,
  type CallFrameBuilderOptions,
} from "./src/runtime/call_frame.ts";
export {
  DEFAULT_ISOLATE_TIMEOUT_MS,
  type IsolatedOutput,
  type IsolateOptions,
} from "./src/runtime/isolate.ts";
export {
  HandlerLibrary,
  type HandlerLibraryOptions,
  type HandlerRef,
  type HandlerStages,
  NativeHandler,
  TypeIdRef,
} from "./src/runtime/handler_library.ts";
export {
  type CallOptions,
  type HandlerMetadata,
  type HandlerTarget,
  type RegisterOptions,
  type RegisterTypeOptions,
  Runtime,
  type RuntimeOptions,
  type ThreadCallOptions,
  type ThreadCallResult,
} from "./src/runtime/runtime.ts";
export { Instance } from "./src/runtime/instance.ts";
export type {
  ArrayArg,
  ArrayInput,
  ArraySpec,
  FfiCallOptions,
  FfiCallResults,
  FfiCallTarget,
  FfiHost,
  FfiRegisterOptions,
  FfiRegisterTypeOptions,
  VmapMethod,
} from "./src/runtime/ffi_call.ts";
export { runtimeDebugStats, type RuntimeStats } from "./src/runtime/debug_stats.ts";
export { DeviceBuffer } from "./src/runtime/device_buffer.ts";
export type { DeviceData } from "./src/runtime/call_frame.ts";
export {
  Binding,
  Dictionary,
  Ffi,
  FfiBuffer,
  Handler,
  HandlerBundle,
  handlerHostStats,
  RemainingBuffers,
  ScratchAllocator,
  ThreadPool,
} from "./src/handler/mod.ts";
export type {
  AnyTypedArray,
  AttrKind,
  AttrValue,
  AttrValueOf,
  BigIntKind,
  CtxKind,
  CtxValueOf,
  FfiBinder,
  HandlerOptions,
  ScalarKind,
  TypedArrayOf,
} from "./src/handler/mod.ts";
export { CountDownPromise, FfiPromise, Future } from "./src/future.ts";
export type { ReadyCallback } from "./src/future.ts";
export { checkCallFrame } from "./src/runtime/check.ts";
