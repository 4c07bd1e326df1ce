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
export {
  ArgType,
  AttrType,
  attrTypeName,
  DataType,
  ErrorCode,
  ExecutionStage,
  ExtensionType,
  HandlerTraits,
  RetType,
  stageName,
} from "./src/abi/enums.ts";
export { FfiError, toFfiError } from "./src/errors.ts";
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
  CtxKind,
  CtxValueOf,
  FfiBinder,
  HandlerOptions,
  ScalarKind,
  TypedArrayOf,
} from "./src/handler/mod.ts";
export { CountDownPromise, FfiPromise, Future } from "./src/future.ts";
export type { ReadyCallback } from "./src/future.ts";
