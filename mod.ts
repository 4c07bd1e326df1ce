/**
 * deno-xla-ffi: the XLA FFI C ABI from TypeScript.
 *
 * Write XLA custom-call handlers in TypeScript, run and test XLA FFI handlers
 * (C/C++ or TypeScript) without XLA in an embedded runtime, and launch CUDA
 * work on the stream XLA hands a handler.
 *
 * @example
 * ```ts
 * import { DataType, ErrorCode, FfiError } from "@deno-xla/ffi";
 * console.log(DataType[DataType.F32]); // "F32"
 * const err = new FfiError(ErrorCode.NOT_FOUND, "State is not set");
 * console.log(err.codeName); // "NOT_FOUND"
 * ```
 *
 * @module
 */
export { DataType, ErrorCode, ExecutionStage, HandlerTraits, stageName } from "./src/abi/enums.ts";
export { FfiError, toFfiError } from "./src/errors.ts";
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
} from "./src/runtime/call_frame.ts";
export {
  HandlerLibrary,
  type HandlerRef,
  type HandlerStages,
  NativeHandler,
} from "./src/runtime/handler_library.ts";
export {
  type CallOptions,
  type HandlerMetadata,
  type HandlerTarget,
  Instance,
  type RegisterOptions,
  Runtime,
  type RuntimeOptions,
  type ThreadCallOptions,
  type ThreadCallResult,
} from "./src/runtime/runtime.ts";
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
