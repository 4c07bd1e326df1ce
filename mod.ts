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
