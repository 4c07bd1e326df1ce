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
export { loadNpy, readNpy, saveNpy, writeNpy } from "./src/npy.ts";
export type { NpyArray, NpyArrayLike, ReadNpyOptions } from "./src/npy.ts";
export { parseElfSymbols, readElfSymbols } from "./src/elf.ts";
export type {
  ElfSymbol,
  ElfSymbolBinding,
  ElfSymbolTable,
  ElfSymbolVisibility,
} from "./src/elf.ts";
export {
  API,
  API_SLOTS_V0_1,
  API_SLOTS_V0_2,
  API_SLOTS_V0_5,
  API_V0_2,
  API_V0_5,
  API_VERSION,
  ARGS,
  ARRAY,
  ATTRS,
  BUFFER,
  BYTE_SPAN,
  CALL_FRAME,
  DEVICE_MEMORY_ALLOCATE_ARGS,
  DEVICE_MEMORY_FREE_ARGS,
  DEVICE_ORDINAL_GET_ARGS,
  ERROR_CREATE_ARGS,
  ERROR_DESTROY_ARGS,
  ERROR_GET_CODE_ARGS,
  ERROR_GET_MESSAGE_ARGS,
  EXECUTION_CONTEXT_GET_ARGS,
  EXTENSION_BASE,
  FUTURE_CREATE_ARGS,
  FUTURE_SET_AVAILABLE_ARGS,
  FUTURE_SET_ERROR_ARGS,
  HANDLER_BUNDLE,
  HANDLER_REGISTER_ARGS,
  LAYOUTS,
  METADATA,
  METADATA_EXTENSION,
  METADATA_V0_2,
  RETS,
  RUN_ID_GET_ARGS,
  SCALAR,
  STATE_GET_ARGS,
  STATE_GET_ARGS_V0_3,
  STATE_SET_ARGS,
  STATE_SET_ARGS_V0_2,
  STATE_SET_ARGS_V0_3,
  STREAM_GET_ARGS,
  THREAD_POOL_NUM_THREADS_ARGS,
  THREAD_POOL_SCHEDULE_ARGS,
  TYPE_ID,
  TYPE_ID_REGISTER_ARGS,
  TYPE_INFO_V0_2,
  TYPE_REGISTER_ARGS_V0_2,
} from "./src/abi/layout.ts";
export type {
  ApiHeaderField,
  ApiLayout,
  EmbeddedLayouts,
  FieldLayout,
  FieldType,
  StructLayout,
} from "./src/abi/layout.ts";
export {
  READ_LIMITS,
  readApi,
  readApiVersion,
  readArgs,
  readArray,
  readAttrs,
  readBuffer,
  readByteSpan,
  readCallFrame,
  readDeviceMemoryAllocateArgs,
  readDeviceMemoryFreeArgs,
  readDeviceOrdinalGetArgs,
  readErrorCreateArgs,
  readErrorDestroyArgs,
  readErrorGetCodeArgs,
  readErrorGetMessageArgs,
  readExecutionContextGetArgs,
  readExtensionBase,
  readFutureCreateArgs,
  readFutureSetAvailableArgs,
  readFutureSetErrorArgs,
  readHandlerBundle,
  readHandlerRegisterArgs,
  readMetadata,
  readMetadataExtension,
  readRets,
  readRunIdGetArgs,
  readScalar,
  readStateGetArgs,
  readStateGetArgsV0_3,
  readStateSetArgs,
  readStateSetArgsV0_2,
  readStateSetArgsV0_3,
  readStreamGetArgs,
  readStruct,
  readThreadPoolNumThreadsArgs,
  readThreadPoolScheduleArgs,
  readTypeId,
  readTypeIdRegisterArgs,
  readTypeInfoV0_2,
  readTypeRegisterArgsV0_2,
} from "./src/abi/readers.ts";
export type {
  ApiValue,
  ArgValue,
  ArrayValue,
  AttrEntry,
  BufferValue,
  CallFrameValue,
  FieldValue,
  RetValue,
  ScalarValue,
  StructValue,
} from "./src/abi/readers.ts";
export {
  writeApi,
  writeApiVersion,
  writeArgs,
  writeArray,
  writeAttrs,
  writeBuffer,
  writeByteSpan,
  writeCallFrame,
  writeDeviceMemoryAllocateArgs,
  writeDeviceMemoryFreeArgs,
  writeDeviceOrdinalGetArgs,
  writeErrorCreateArgs,
  writeErrorDestroyArgs,
  writeErrorGetCodeArgs,
  writeErrorGetMessageArgs,
  writeExecutionContextGetArgs,
  writeExtensionBase,
  writeFutureCreateArgs,
  writeFutureSetAvailableArgs,
  writeFutureSetErrorArgs,
  writeHandlerBundle,
  writeHandlerRegisterArgs,
  writeMetadata,
  writeMetadataExtension,
  writeRets,
  writeRunIdGetArgs,
  writeScalar,
  writeStateGetArgs,
  writeStateGetArgsV0_3,
  writeStateSetArgs,
  writeStateSetArgsV0_2,
  writeStateSetArgsV0_3,
  writeStreamGetArgs,
  writeStruct,
  writeThreadPoolNumThreadsArgs,
  writeThreadPoolScheduleArgs,
  writeTypeId,
  writeTypeIdRegisterArgs,
  writeTypeInfoV0_2,
  writeTypeRegisterArgsV0_2,
} from "./src/abi/writers.ts";
export type {
  ApiInput,
  FieldInput,
  MetadataInput,
  PointerInput,
  StructInput,
  WriteTarget,
} from "./src/abi/writers.ts";
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
  TypeIdRef,
} from "./src/runtime/handler_library.ts";
export {
  type CallOptions,
  type HandlerMetadata,
  type HandlerTarget,
  Instance,
  type RegisterOptions,
  type RegisterTypeOptions,
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
