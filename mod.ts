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
  array,
  ArrayAttr,
  type AttrDictionary,
  type AttrValue,
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
export { Handler, type HandlerBundle, HandlerLibrary } from "./src/runtime/handler_library.ts";
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
