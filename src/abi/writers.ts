/**
 * Writers that lay out every struct of the XLA FFI C ABI into caller-given
 * memory (an `ArrayBuffer`, a typed array or a `DataView`) at a byte offset,
 * following the tables of `layout.ts`. Pointers are given as bigint addresses
 * or `Deno.PointerValue`s; the writers never allocate native memory, so
 * everything a struct points to (dims, type arrays, strings, nested structs)
 * must be laid out by the caller and kept alive while C reads it.
 *
 * Every writer first zeroes the struct's full `sizeof` (padding included),
 * then writes the given fields; a field left out is written as zero / null,
 * and `struct_size` defaults to the layout's STRUCT_SIZE. Each returns the
 * offset just past the struct. A target too small for the struct throws
 * {@link FfiError} INVALID_ARGUMENT. The writers walk the layout table per
 * call: use them to build structs once (frames, API tables, metadata), not
 * on a per-call hot path.
 *
 * @module
 */
import { ErrorCode, ExtensionType } from "./enums.ts";
import { FfiError } from "../errors.ts";
import {
  API,
  API_VERSION,
  type ApiLayout,
  ARGS,
  ARRAY,
  ATTRS,
  BUFFER,
  BYTE_SPAN,
  CALL_FRAME,
  DEVICE_MEMORY_ALLOCATE_ARGS,
  DEVICE_MEMORY_FREE_ARGS,
  DEVICE_ORDINAL_GET_ARGS,
  type EmbeddedLayouts,
  ERROR_CREATE_ARGS,
  ERROR_DESTROY_ARGS,
  ERROR_GET_CODE_ARGS,
  ERROR_GET_MESSAGE_ARGS,
  EXECUTION_CONTEXT_GET_ARGS,
  EXTENSION_BASE,
  type FieldLayout,
  type FieldType,
  FUTURE_CREATE_ARGS,
  FUTURE_SET_AVAILABLE_ARGS,
  FUTURE_SET_ERROR_ARGS,
  HANDLER_BUNDLE,
  HANDLER_REGISTER_ARGS,
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
  type StructLayout,
  THREAD_POOL_NUM_THREADS_ARGS,
  THREAD_POOL_SCHEDULE_ARGS,
  TYPE_ID,
  TYPE_ID_REGISTER_ARGS,
  TYPE_INFO_V0_2,
  TYPE_REGISTER_ARGS_V0_2,
} from "./layout.ts";

/** A pointer as writers accept it: an address or a `Deno.PointerValue`. */
export type PointerInput = bigint | Deno.PointerValue;

/** Memory a writer lays a struct into. */
export type WriteTarget = DataView | ArrayBufferLike | ArrayBufferView;

const NESTED = {
  XLA_FFI_Api_Version: API_VERSION,
  XLA_FFI_Handler_Bundle: HANDLER_BUNDLE,
  XLA_FFI_Extension_Base: EXTENSION_BASE,
  XLA_FFI_Args: ARGS,
  XLA_FFI_Rets: RETS,
  XLA_FFI_Attrs: ATTRS,
  XLA_FFI_ByteSpan: BYTE_SPAN,
  XLA_FFI_TypeId: TYPE_ID,
} as const;

/** What a writer accepts for a field of C type `T`. */
export type FieldInput<T extends FieldType> = T extends "size_t" | "int64" ? bigint | number
  : T extends "int32" | "uint32" | "enum" ? number
  : T extends "ptr" | "fnptr" ? PointerInput
  : T extends "XLA_FFI_TypeId" ? bigint | number
  : T extends keyof EmbeddedLayouts ? StructInput<EmbeddedLayouts[T]>
  : never;

/** The fields a writer accepts for a struct: all optional (zero / null when left out). */
export type StructInput<L extends StructLayout> = {
  [K in keyof L["fields"]]?: L["fields"][K] extends FieldLayout ? FieldInput<L["fields"][K]["type"]>
    : never;
};

function _invalid(message: string): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

function _dataView(target: WriteTarget): DataView {
  if (target instanceof DataView) return target;
  if (ArrayBuffer.isView(target)) {
    return new DataView(target.buffer, target.byteOffset, target.byteLength);
  }
  return new DataView(target);
}

/** The address of a pointer input, as an unsigned 64-bit bigint. */
function _address(p: PointerInput | undefined): bigint {
  if (p === undefined || p === null) return 0n;
  if (typeof p === "bigint") return BigInt.asUintN(64, p);
  return BigInt.asUintN(64, BigInt(Deno.UnsafePointer.value(p)));
}

function _int64(x: bigint | number | undefined, field: string): bigint {
  if (x === undefined) return 0n;
  if (typeof x === "number" && !Number.isSafeInteger(x)) {
    throw _invalid(`Expected an integer for ${field} but got ${x}`);
  }
  return BigInt.asUintN(64, BigInt(x));
}

function _write(
  dv: DataView,
  base: number,
  layout: StructLayout,
  input: Record<string, unknown>,
): void {
  for (const [key, f] of Object.entries(layout.fields)) {
    const off = base + f.offset;
    let value = input[key];
    if (key === "struct_size" && value === undefined) value = layout.structSize ?? 0;
    if (value === undefined) {
      // Embedded structs still get their own struct_size default.
      if (f.type in NESTED && f.type !== "XLA_FFI_TypeId") value = {};
      else continue; // already zero
    }
    switch (f.type) {
      case "size_t":
      case "int64":
        dv.setBigUint64(off, _int64(value as bigint | number, `${layout.name}.${key}`), true);
        break;
      case "XLA_FFI_TypeId":
        if (typeof value === "object") {
          _write(dv, off, TYPE_ID, value as Record<string, unknown>);
        } else {
          dv.setBigUint64(off, _int64(value as bigint | number, `${layout.name}.${key}`), true);
        }
        break;
      case "int32":
        dv.setInt32(off, value as number, true);
        break;
      case "uint32":
      case "enum":
        dv.setUint32(off, (value as number) >>> 0, true);
        break;
      case "ptr":
      case "fnptr":
        dv.setBigUint64(off, _address(value as PointerInput), true);
        break;
      default:
        _write(dv, off, NESTED[f.type], value as Record<string, unknown>);
    }
  }
}

/**
 * Lays out any struct of the ABI with its layout at `offset` of `target`:
 * zeroes `sizeof` bytes, then writes the given fields (`struct_size`
 * defaults to the layout's STRUCT_SIZE; embedded structs are given as nested
 * objects). Returns `offset + sizeof`.
 *
 * @example
 * ```ts
 * import { STREAM_GET_ARGS, writeStruct } from "@deno-xla/ffi/abi";
 * const bytes = new Uint8Array(STREAM_GET_ARGS.sizeof);
 * console.log(writeStruct(STREAM_GET_ARGS, bytes, 0, { ctx: 0x1234n })); // 32
 * console.log(bytes[0], bytes[16], bytes[17]); // 32 52 18
 * ```
 */
export function writeStruct<L extends StructLayout>(
  layout: L,
  target: WriteTarget,
  offset: number,
  input: StructInput<L>,
): number {
  const dv = _dataView(target);
  if (!Number.isInteger(offset) || offset < 0 || offset + layout.sizeof > dv.byteLength) {
    throw _invalid(
      `Cannot write ${layout.name} (${layout.sizeof} bytes) at offset ${offset} ` +
        `of a ${dv.byteLength}-byte target`,
    );
  }
  for (let i = 0; i < layout.sizeof; i += 4) dv.setUint32(offset + i, 0, true);
  _write(dv, offset, layout, input as Record<string, unknown>);
  return offset + layout.sizeof;
}

/**
 * Writes an `XLA_FFI_CallFrame` (176 bytes; struct_size 168): header, api,
 * ctx, stage, the embedded `args`/`rets`/`attrs` (each `{size, types, args|
 * rets|names+attrs}` pointing at caller-laid arrays) and `future`.
 *
 * @example
 * ```ts
 * import { ExecutionStage } from "@deno-xla/ffi";
 * import { writeCallFrame } from "@deno-xla/ffi/abi";
 * const frame = new Uint8Array(176);
 * writeCallFrame(frame, 0, { stage: ExecutionStage.EXECUTE, args: { size: 0 } });
 * console.log(frame[0], frame[32], frame[40]); // 168 3 40
 * ```
 */
export const writeCallFrame = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof CALL_FRAME>,
): number => writeStruct(CALL_FRAME, target, offset, input);

/**
 * Writes an `XLA_FFI_Buffer` (48 bytes): dtype, data, rank, dims pointer.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { writeBuffer } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeBuffer(b, 0, { dtype: DataType.TOKEN, rank: 0 });
 * console.log(b[16]); // 17
 * ```
 */
export const writeBuffer = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof BUFFER>,
): number => writeStruct(BUFFER, target, offset, input);

/**
 * Writes an `XLA_FFI_Args` (40 bytes).
 *
 * @example
 * ```ts
 * import { writeArgs } from "@deno-xla/ffi/abi";
 * console.log(writeArgs(new Uint8Array(40), 0, { size: 0 })); // 40
 * ```
 */
export const writeArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ARGS>,
): number => writeStruct(ARGS, target, offset, input);

/**
 * Writes an `XLA_FFI_Rets` (40 bytes).
 *
 * @example
 * ```ts
 * import { writeRets } from "@deno-xla/ffi/abi";
 * console.log(writeRets(new Uint8Array(40), 0, { size: 0 })); // 40
 * ```
 */
export const writeRets = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof RETS>,
): number => writeStruct(RETS, target, offset, input);

/**
 * Writes an `XLA_FFI_Attrs` (48 bytes), e.g. a nested dictionary.
 *
 * @example
 * ```ts
 * import { writeAttrs } from "@deno-xla/ffi/abi";
 * console.log(writeAttrs(new Uint8Array(48), 0, { size: 0 })); // 48
 * ```
 */
export const writeAttrs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ATTRS>,
): number => writeStruct(ATTRS, target, offset, input);

/**
 * Writes an `XLA_FFI_Scalar` (16 bytes): dtype and a pointer to the value.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { writeScalar } from "@deno-xla/ffi/abi";
 * console.log(writeScalar(new Uint8Array(16), 0, { dtype: DataType.S32, value: 0x10n })); // 16
 * ```
 */
export const writeScalar = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof SCALAR>,
): number => writeStruct(SCALAR, target, offset, input);

/**
 * Writes an `XLA_FFI_Array` (24 bytes): dtype, element count, data pointer.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { writeArray } from "@deno-xla/ffi/abi";
 * console.log(writeArray(new Uint8Array(24), 0, { dtype: DataType.F32, size: 0 })); // 24
 * ```
 */
export const writeArray = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ARRAY>,
): number => writeStruct(ARRAY, target, offset, input);

/**
 * Writes an `XLA_FFI_ByteSpan` (16 bytes): data pointer and length.
 *
 * @example
 * ```ts
 * import { writeByteSpan } from "@deno-xla/ffi/abi";
 * console.log(writeByteSpan(new Uint8Array(16), 0, { ptr: 0x10n, len: 5 })); // 16
 * ```
 */
export const writeByteSpan = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof BYTE_SPAN>,
): number => writeStruct(BYTE_SPAN, target, offset, input);

/**
 * Writes an `XLA_FFI_TypeId` (8 bytes).
 *
 * @example
 * ```ts
 * import { writeTypeId } from "@deno-xla/ffi/abi";
 * console.log(writeTypeId(new Uint8Array(8), 0, { type_id: 7n })); // 8
 * ```
 */
export const writeTypeId = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof TYPE_ID>,
): number => writeStruct(TYPE_ID, target, offset, input);

/**
 * Writes an `XLA_FFI_Api_Version` (24 bytes).
 *
 * @example
 * ```ts
 * import { writeApiVersion } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * writeApiVersion(b, 0, { major_version: 0, minor_version: 1 });
 * console.log(b[0], b[20]); // 24 1
 * ```
 */
export const writeApiVersion = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof API_VERSION>,
): number => writeStruct(API_VERSION, target, offset, input);

/**
 * Writes an `XLA_FFI_Extension_Base` (24 bytes).
 *
 * @example
 * ```ts
 * import { writeExtensionBase } from "@deno-xla/ffi/abi";
 * console.log(writeExtensionBase(new Uint8Array(24), 0, { type: 1 })); // 24
 * ```
 */
export const writeExtensionBase = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof EXTENSION_BASE>,
): number => writeStruct(EXTENSION_BASE, target, offset, input);

/**
 * Writes an `XLA_FFI_Handler_Bundle` (32 bytes).
 *
 * @example
 * ```ts
 * import { writeHandlerBundle } from "@deno-xla/ffi/abi";
 * console.log(writeHandlerBundle(new Uint8Array(32), 0, { execute: 0x1000n })); // 32
 * ```
 */
export const writeHandlerBundle = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof HANDLER_BUNDLE>,
): number => writeStruct(HANDLER_BUNDLE, target, offset, input);

/** Metadata input: the 0.1 fields plus the optional 0.2+ `state_type_id`. */
export type MetadataInput = StructInput<typeof METADATA_V0_2>;

/**
 * Writes an `XLA_FFI_Metadata`: the 0.1 layout (40 bytes), or the 0.2+ layout
 * (48 bytes) when `state_type_id` is given. struct_size defaults to 36, the
 * embedded `api_version.struct_size` to 24.
 *
 * @example
 * ```ts
 * import { writeMetadata } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * writeMetadata(b, 0, { api_version: { major_version: 0, minor_version: 2 }, state_type_id: 9n });
 * console.log(b[0], b[8], b[28], b[40]); // 36 24 2 9
 * ```
 */
export function writeMetadata(target: WriteTarget, offset: number, input: MetadataInput): number {
  const layout = input.state_type_id === undefined ? METADATA : METADATA_V0_2;
  return writeStruct(layout, target, offset, { api_version: {}, ...input });
}

/**
 * Writes an `XLA_FFI_Metadata_Extension` (32 bytes). The extension base
 * defaults to `{struct_size: 32, type: METADATA (1), next: null}`.
 *
 * @example
 * ```ts
 * import { writeMetadataExtension } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeMetadataExtension(b, 0, { metadata: 0x1000n });
 * console.log(b[0], b[8]); // 32 1
 * ```
 */
export function writeMetadataExtension(
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof METADATA_EXTENSION>,
): number {
  return writeStruct(METADATA_EXTENSION, target, offset, {
    ...input,
    extension_base: {
      struct_size: METADATA_EXTENSION.structSize,
      type: ExtensionType.METADATA,
      ...input.extension_base,
    },
  });
}

/** Input of {@link writeApi}: header fields and function pointers by slot name. */
export interface ApiInput<S extends string> {
  /** Defaults to the layout's STRUCT_SIZE (192, or 200 for 0.5). */
  struct_size?: number;
  /** Extension chain. */
  extension_start?: PointerInput;
  /** The advertised API version (its struct_size defaults to 24). */
  api_version?: StructInput<typeof API_VERSION>;
  /** Opaque internal API (null for independent runtimes). */
  internal_api?: PointerInput;
  /** Function pointers by slot name; missing slots are null. */
  functions?: Partial<Record<S, PointerInput>>;
}

/**
 * Writes an `XLA_FFI_Api` table: the 0.1 layout (18 slots, 192 bytes) by
 * default, or pass {@link API_V0_4} for 0.4's 19 slots (200 bytes). Unknown slot
 * names throw.
 *
 * @example
 * ```ts
 * import { writeApi } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(192);
 * writeApi(b, 0, { api_version: { major_version: 0, minor_version: 1 } });
 * console.log(b[0], b[16], b[36]); // 192 24 1
 * ```
 */
export function writeApi<S extends string = (typeof API extends ApiLayout<infer T> ? T : never)>(
  target: WriteTarget,
  offset: number,
  input: ApiInput<S>,
  layout: ApiLayout<S> = API as unknown as ApiLayout<S>,
): number {
  const fields: Record<string, unknown> = {
    struct_size: input.struct_size,
    extension_start: input.extension_start,
    api_version: input.api_version ?? {},
    internal_api: input.internal_api,
  };
  for (const [slot, p] of Object.entries(input.functions ?? {})) {
    if (!(slot in layout.fields) || slot in fields) {
      throw _invalid(`Unknown ${layout.name} function slot: ${slot}`);
    }
    fields[slot] = p;
  }
  return writeStruct(layout, target, offset, fields as StructInput<ApiLayout<S>>);
}

/**
 * Writes `XLA_FFI_Error_Create_Args` (`message` is a pointer to a C string).
 *
 * @example
 * ```ts
 * import { ErrorCode } from "@deno-xla/ffi";
 * import { writeErrorCreateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(32);
 * writeErrorCreateArgs(b, 0, { message: 0x10n, errc: ErrorCode.INTERNAL });
 * console.log(b[0], b[24]); // 28 13
 * ```
 */
export const writeErrorCreateArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ERROR_CREATE_ARGS>,
): number => writeStruct(ERROR_CREATE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Error_GetMessage_Args`.
 *
 * @example
 * ```ts
 * import { writeErrorGetMessageArgs } from "@deno-xla/ffi/abi";
 * console.log(writeErrorGetMessageArgs(new Uint8Array(32), 0, { error: 0x10n })); // 32
 * ```
 */
export const writeErrorGetMessageArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ERROR_GET_MESSAGE_ARGS>,
): number => writeStruct(ERROR_GET_MESSAGE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Error_Destroy_Args`.
 *
 * @example
 * ```ts
 * import { writeErrorDestroyArgs } from "@deno-xla/ffi/abi";
 * console.log(writeErrorDestroyArgs(new Uint8Array(24), 0, { error: 0x10n })); // 24
 * ```
 */
export const writeErrorDestroyArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ERROR_DESTROY_ARGS>,
): number => writeStruct(ERROR_DESTROY_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Error_GetCode_Args` (ABI 0.4+).
 *
 * @example
 * ```ts
 * import { writeErrorGetCodeArgs } from "@deno-xla/ffi/abi";
 * console.log(writeErrorGetCodeArgs(new Uint8Array(32), 0, { error: 0x10n })); // 32
 * ```
 */
export const writeErrorGetCodeArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof ERROR_GET_CODE_ARGS>,
): number => writeStruct(ERROR_GET_CODE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Handler_Register_Args` (name/platform as `{ptr, len}` spans).
 *
 * @example
 * ```ts
 * import { writeHandlerRegisterArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(88);
 * writeHandlerRegisterArgs(b, 0, { name: { ptr: 0x10n, len: 3 }, traits: 1 });
 * console.log(b[0], b[24], b[80]); // 84 3 1
 * ```
 */
export const writeHandlerRegisterArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof HANDLER_REGISTER_ARGS>,
): number => writeStruct(HANDLER_REGISTER_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Stream_Get_Args`.
 *
 * @example
 * ```ts
 * import { writeStreamGetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeStreamGetArgs(new Uint8Array(32), 0, { ctx: 0x10n })); // 32
 * ```
 */
export const writeStreamGetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STREAM_GET_ARGS>,
): number => writeStruct(STREAM_GET_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_TypeId_Register_Args` (0.1).
 *
 * @example
 * ```ts
 * import { writeTypeIdRegisterArgs } from "@deno-xla/ffi/abi";
 * console.log(writeTypeIdRegisterArgs(new Uint8Array(40), 0, { type_id: 0x10n })); // 40
 * ```
 */
export const writeTypeIdRegisterArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof TYPE_ID_REGISTER_ARGS>,
): number => writeStruct(TYPE_ID_REGISTER_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Type_Register_Args` of ABI 0.2+ (48 bytes; struct_size 40).
 *
 * @example
 * ```ts
 * import { writeTypeRegisterArgsV0_2 } from "@deno-xla/ffi/abi";
 * console.log(writeTypeRegisterArgsV0_2(new Uint8Array(48), 0, { type_info: 0x10n })); // 48
 * ```
 */
export const writeTypeRegisterArgsV0_2 = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof TYPE_REGISTER_ARGS_V0_2>,
): number => writeStruct(TYPE_REGISTER_ARGS_V0_2, target, offset, input);

/**
 * Writes `XLA_FFI_TypeInfo` of ABI 0.2-late+.
 *
 * @example
 * ```ts
 * import { writeTypeInfoV0_2 } from "@deno-xla/ffi/abi";
 * console.log(writeTypeInfoV0_2(new Uint8Array(24), 0, { deleter: 0x10n })); // 24
 * ```
 */
export const writeTypeInfoV0_2 = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof TYPE_INFO_V0_2>,
): number => writeStruct(TYPE_INFO_V0_2, target, offset, input);

/**
 * Writes `XLA_FFI_ExecutionContext_Get_Args`.
 *
 * @example
 * ```ts
 * import { writeExecutionContextGetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeExecutionContextGetArgs(new Uint8Array(40), 0, { ctx: 0x10n })); // 40
 * ```
 */
export const writeExecutionContextGetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof EXECUTION_CONTEXT_GET_ARGS>,
): number => writeStruct(EXECUTION_CONTEXT_GET_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_State_Set_Args` of ABI 0.1 (with `deleter`).
 *
 * @example
 * ```ts
 * import { writeStateSetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeStateSetArgs(new Uint8Array(48), 0, { state: 0x10n })); // 48
 * ```
 */
export const writeStateSetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STATE_SET_ARGS>,
): number => writeStruct(STATE_SET_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_State_Get_Args` of ABI 0.1.
 *
 * @example
 * ```ts
 * import { writeStateGetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeStateGetArgs(new Uint8Array(40), 0, { ctx: 0x10n })); // 40
 * ```
 */
export const writeStateGetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STATE_GET_ARGS>,
): number => writeStruct(STATE_GET_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_State_Set_Args` of ABI 0.2 (40 bytes, no `deleter`).
 *
 * @example
 * ```ts
 * import { writeStateSetArgsV0_2 } from "@deno-xla/ffi/abi";
 * console.log(writeStateSetArgsV0_2(new Uint8Array(40), 0, { state: 0x10n })); // 40
 * ```
 */
export const writeStateSetArgsV0_2 = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STATE_SET_ARGS_V0_2>,
): number => writeStruct(STATE_SET_ARGS_V0_2, target, offset, input);

/**
 * Writes `XLA_FFI_State_Set_Args` of ABI 0.3+ (with `stage`).
 *
 * @example
 * ```ts
 * import { writeStateSetArgsV0_3 } from "@deno-xla/ffi/abi";
 * console.log(writeStateSetArgsV0_3(new Uint8Array(48), 0, { stage: 3 })); // 48
 * ```
 */
export const writeStateSetArgsV0_3 = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STATE_SET_ARGS_V0_3>,
): number => writeStruct(STATE_SET_ARGS_V0_3, target, offset, input);

/**
 * Writes `XLA_FFI_State_Get_Args` of ABI 0.3+ (with `stage`).
 *
 * @example
 * ```ts
 * import { writeStateGetArgsV0_3 } from "@deno-xla/ffi/abi";
 * console.log(writeStateGetArgsV0_3(new Uint8Array(48), 0, { stage: 3 })); // 48
 * ```
 */
export const writeStateGetArgsV0_3 = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof STATE_GET_ARGS_V0_3>,
): number => writeStruct(STATE_GET_ARGS_V0_3, target, offset, input);

/**
 * Writes `XLA_FFI_DeviceMemory_Allocate_Args`.
 *
 * @example
 * ```ts
 * import { writeDeviceMemoryAllocateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(48);
 * console.log(writeDeviceMemoryAllocateArgs(b, 0, { size: 1024, alignment: 64 })); // 48
 * ```
 */
export const writeDeviceMemoryAllocateArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof DEVICE_MEMORY_ALLOCATE_ARGS>,
): number => writeStruct(DEVICE_MEMORY_ALLOCATE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_DeviceMemory_Free_Args`.
 *
 * @example
 * ```ts
 * import { writeDeviceMemoryFreeArgs } from "@deno-xla/ffi/abi";
 * console.log(writeDeviceMemoryFreeArgs(new Uint8Array(40), 0, { size: 1024 })); // 40
 * ```
 */
export const writeDeviceMemoryFreeArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof DEVICE_MEMORY_FREE_ARGS>,
): number => writeStruct(DEVICE_MEMORY_FREE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_ThreadPool_Schedule_Args`.
 *
 * @example
 * ```ts
 * import { writeThreadPoolScheduleArgs } from "@deno-xla/ffi/abi";
 * console.log(writeThreadPoolScheduleArgs(new Uint8Array(40), 0, { task: 0x10n })); // 40
 * ```
 */
export const writeThreadPoolScheduleArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof THREAD_POOL_SCHEDULE_ARGS>,
): number => writeStruct(THREAD_POOL_SCHEDULE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_ThreadPool_NumThreads_Args`.
 *
 * @example
 * ```ts
 * import { writeThreadPoolNumThreadsArgs } from "@deno-xla/ffi/abi";
 * console.log(writeThreadPoolNumThreadsArgs(new Uint8Array(32), 0, { num_threads: 0x10n })); // 32
 * ```
 */
export const writeThreadPoolNumThreadsArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof THREAD_POOL_NUM_THREADS_ARGS>,
): number => writeStruct(THREAD_POOL_NUM_THREADS_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Future_Create_Args` (24 bytes; struct_size 16).
 *
 * @example
 * ```ts
 * import { writeFutureCreateArgs } from "@deno-xla/ffi/abi";
 * const b = new Uint8Array(24);
 * console.log(writeFutureCreateArgs(b, 0, {}), b[0]); // 24 16
 * ```
 */
export const writeFutureCreateArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof FUTURE_CREATE_ARGS>,
): number => writeStruct(FUTURE_CREATE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Future_SetAvailable_Args`.
 *
 * @example
 * ```ts
 * import { writeFutureSetAvailableArgs } from "@deno-xla/ffi/abi";
 * console.log(writeFutureSetAvailableArgs(new Uint8Array(24), 0, { future: 0x10n })); // 24
 * ```
 */
export const writeFutureSetAvailableArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof FUTURE_SET_AVAILABLE_ARGS>,
): number => writeStruct(FUTURE_SET_AVAILABLE_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_Future_SetError_Args`.
 *
 * @example
 * ```ts
 * import { writeFutureSetErrorArgs } from "@deno-xla/ffi/abi";
 * console.log(writeFutureSetErrorArgs(new Uint8Array(32), 0, { future: 0x10n })); // 32
 * ```
 */
export const writeFutureSetErrorArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof FUTURE_SET_ERROR_ARGS>,
): number => writeStruct(FUTURE_SET_ERROR_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_RunId_Get_Args`.
 *
 * @example
 * ```ts
 * import { writeRunIdGetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeRunIdGetArgs(new Uint8Array(32), 0, { run_id: 42n })); // 32
 * ```
 */
export const writeRunIdGetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof RUN_ID_GET_ARGS>,
): number => writeStruct(RUN_ID_GET_ARGS, target, offset, input);

/**
 * Writes `XLA_FFI_DeviceOrdinal_Get_Args` (32 bytes; struct_size 28).
 *
 * @example
 * ```ts
 * import { writeDeviceOrdinalGetArgs } from "@deno-xla/ffi/abi";
 * console.log(writeDeviceOrdinalGetArgs(new Uint8Array(32), 0, { device_ordinal: 1 })); // 32
 * ```
 */
export const writeDeviceOrdinalGetArgs = (
  target: WriteTarget,
  offset: number,
  input: StructInput<typeof DEVICE_ORDINAL_GET_ARGS>,
): number => writeStruct(DEVICE_ORDINAL_GET_ARGS, target, offset, input);
