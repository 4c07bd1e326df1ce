/**
 * Every enum of the XLA FFI C ABI (spec §3), with the numeric values of
 * `c_api.h`. {@link DataType} and {@link AttrType} are generated from
 * `native/abi_facts.h` (`src/abi/_facts.generated.ts`).
 *
 * @module
 */
export { AttrType, DataType } from "./_facts.generated.ts";
import { AttrType } from "./_facts.generated.ts";

/**
 * Error codes of `XLA_FFI_Error_Code` (identical to `absl::StatusCode`).
 *
 * @example
 * ```ts
 * import { ErrorCode } from "@deno-xla/ffi";
 * console.log(ErrorCode[ErrorCode.INVALID_ARGUMENT]); // "INVALID_ARGUMENT"
 * ```
 */
export enum ErrorCode {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
}

/**
 * Execution stages of a handler (`XLA_FFI_ExecutionStage`).
 *
 * @example
 * ```ts
 * import { ExecutionStage } from "@deno-xla/ffi";
 * console.log(ExecutionStage.EXECUTE); // 3
 * ```
 */
export enum ExecutionStage {
  INSTANTIATE = 0,
  PREPARE = 1,
  INITIALIZE = 2,
  EXECUTE = 3,
}

/**
 * Kinds of call-frame arguments (`XLA_FFI_ArgType`).
 *
 * @example
 * ```ts
 * import { ArgType } from "@deno-xla/ffi/abi";
 * console.log(ArgType.BUFFER); // 1
 * ```
 */
export enum ArgType {
  BUFFER = 1,
}

/**
 * Kinds of call-frame results (`XLA_FFI_RetType`).
 *
 * @example
 * ```ts
 * import { RetType } from "@deno-xla/ffi/abi";
 * console.log(RetType.BUFFER); // 1
 * ```
 */
export enum RetType {
  BUFFER = 1,
}

/**
 * Types of extension structs chained from `extension_start`
 * (`XLA_FFI_Extension_Type`).
 *
 * @example
 * ```ts
 * import { ExtensionType } from "@deno-xla/ffi/abi";
 * console.log(ExtensionType.METADATA); // 1
 * ```
 */
export enum ExtensionType {
  METADATA = 1,
}

/**
 * Handler trait bits (`XLA_FFI_Handler_TraitsBits`); a handler's traits are
 * their bitwise OR.
 *
 * @example
 * ```ts
 * import { HandlerTraits } from "@deno-xla/ffi";
 * const traits = HandlerTraits.COMMAND_BUFFER_COMPATIBLE; // 1
 * console.log(traits);
 * ```
 */
export enum HandlerTraits {
  NONE = 0,
  COMMAND_BUFFER_COMPATIBLE = 1,
}

/**
 * Lower-case stage names as `api.h` prints them (`execute`, …).
 *
 * @example
 * ```ts
 * import { ExecutionStage, stageName } from "@deno-xla/ffi";
 * console.log(stageName(ExecutionStage.PREPARE)); // "prepare"
 * ```
 */
export function stageName(stage: number): string {
  const name = ExecutionStage[stage];
  return name === undefined ? `unknown stage ${stage}` : name.toLowerCase();
}

/**
 * Lower-case attribute-type names as `api.h` prints them (`scalar`, …).
 *
 * @example
 * ```ts
 * import { AttrType, attrTypeName } from "@deno-xla/ffi/abi";
 * console.log(attrTypeName(AttrType.DICTIONARY)); // "dictionary"
 * ```
 */
export function attrTypeName(type: number): string {
  const name = AttrType[type];
  return name === undefined ? `unknown attribute type ${type}` : name.toLowerCase();
}
