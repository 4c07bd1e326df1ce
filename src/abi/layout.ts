/**
 * Byte layouts of every struct of the XLA FFI C ABI (spec §2), for x86-64
 * Linux LP64: `sizeof`, `STRUCT_SIZE` (the value callers put in
 * `struct_size`, which is `offsetof + sizeof` of a *named* field and so can be
 * smaller than `sizeof`) and every field's offset and size.
 *
 * The primary tables are ABI 0.1 (the seed version, 18 API slots). Variants
 * of later versions are separate tables tagged with the version that
 * introduced them. Every table is checked against the C compiler's view of
 * `native/xla_ffi.h` by `tests/abi_layout_test.ts`.
 *
 * STRUCT_SIZE anomalies (the named field is not the last one):
 * `XLA_FFI_CallFrame` 168 vs sizeof 176 (`future` is outside),
 * `XLA_FFI_Future_Create_Args` 16 vs 24 (`future` is outside),
 * `XLA_FFI_Metadata` 36 vs 40 (0.2+: 36 vs 48, `state_type_id` is outside),
 * `XLA_FFI_Type_Register_Args` (0.2+) 40 vs 48 (`type_info` is outside).
 *
 * @module
 */

/** The C type of a field, as the readers and writers treat it. */
export type FieldType =
  | "size_t"
  | "int64"
  | "int32"
  | "uint32"
  | "enum"
  | "ptr"
  | "fnptr"
  | "XLA_FFI_Api_Version"
  | "XLA_FFI_ByteSpan"
  | "XLA_FFI_TypeId"
  | "XLA_FFI_Args"
  | "XLA_FFI_Rets"
  | "XLA_FFI_Attrs"
  | "XLA_FFI_Handler_Bundle"
  | "XLA_FFI_Extension_Base";

/** Offset and size (bytes) of one struct field, and its C type. */
export interface FieldLayout {
  /** Byte offset from the start of the struct. */
  readonly offset: number;
  /** Size in bytes (`sizeof` of the field). */
  readonly size: number;
  /** The field's C type (a struct name for nested structs). */
  readonly type: FieldType;
}

/** Layout of one C struct of the ABI. */
export interface StructLayout {
  /** The C name in `native/xla_ffi.h` (e.g. `XLA_FFI_Metadata_V0_2`). */
  readonly name: string;
  /** `sizeof` of the struct: what to allocate. */
  readonly sizeof: number;
  /** The `*_STRUCT_SIZE` value, or `null` for structs without a `struct_size`. */
  readonly structSize: number | null;
  /** The field `STRUCT_SIZE` is defined by, or `null`. */
  readonly structSizeField: string | null;
  /** The ABI version that introduced this layout (`"0.1"`, `"0.2"`, `"0.2-late"`, …). */
  readonly version: string;
  /** Every field in declaration order (padding is not a field). */
  readonly fields: Readonly<Record<string, FieldLayout>>;
}

const HEADER = {
  struct_size: { offset: 0, size: 8, type: "size_t" },
  extension_start: { offset: 8, size: 8, type: "ptr" },
} as const;

/**
 * `XLA_FFI_Extension_Base`: `{struct_size, type, next}`; the head of every
 * extension struct chained from `extension_start`.
 *
 * @example
 * ```ts
 * import { EXTENSION_BASE } from "@deno-xla/ffi/abi";
 * console.log(EXTENSION_BASE.fields.next.offset); // 16
 * ```
 */
export const EXTENSION_BASE = {
  name: "XLA_FFI_Extension_Base",
  sizeof: 24,
  structSize: 24,
  structSizeField: "next",
  version: "0.1",
  fields: {
    struct_size: { offset: 0, size: 8, type: "size_t" },
    type: { offset: 8, size: 4, type: "enum" },
    next: { offset: 16, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Api_Version`: `{struct_size, extension_start, major_version, minor_version}`.
 *
 * @example
 * ```ts
 * import { API_VERSION } from "@deno-xla/ffi/abi";
 * console.log(API_VERSION.structSize); // 24
 * ```
 */
export const API_VERSION = {
  name: "XLA_FFI_Api_Version",
  sizeof: 24,
  structSize: 24,
  structSizeField: "minor_version",
  version: "0.1",
  fields: {
    ...HEADER,
    major_version: { offset: 16, size: 4, type: "int32" },
    minor_version: { offset: 20, size: 4, type: "int32" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_TypeId`: `{int64 type_id}`.
 *
 * @example
 * ```ts
 * import { TYPE_ID } from "@deno-xla/ffi/abi";
 * console.log(TYPE_ID.sizeof); // 8
 * ```
 */
export const TYPE_ID = {
  name: "XLA_FFI_TypeId",
  sizeof: 8,
  structSize: null,
  structSizeField: null,
  version: "0.1",
  fields: { type_id: { offset: 0, size: 8, type: "int64" } },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_ByteSpan`: `{const char* ptr, size_t len}` (not NUL-terminated).
 *
 * @example
 * ```ts
 * import { BYTE_SPAN } from "@deno-xla/ffi/abi";
 * console.log(BYTE_SPAN.fields.len.offset); // 8
 * ```
 */
export const BYTE_SPAN = {
  name: "XLA_FFI_ByteSpan",
  sizeof: 16,
  structSize: null,
  structSizeField: null,
  version: "0.1",
  fields: {
    ptr: { offset: 0, size: 8, type: "ptr" },
    len: { offset: 8, size: 8, type: "size_t" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Scalar`: `{dtype, void* value}` (a scalar attribute).
 *
 * @example
 * ```ts
 * import { SCALAR } from "@deno-xla/ffi/abi";
 * console.log(SCALAR.fields.value.offset); // 8
 * ```
 */
export const SCALAR = {
  name: "XLA_FFI_Scalar",
  sizeof: 16,
  structSize: null,
  structSizeField: null,
  version: "0.1",
  fields: {
    dtype: { offset: 0, size: 4, type: "enum" },
    value: { offset: 8, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Array`: `{dtype, size_t size (elements), void* data}` (an array attribute).
 *
 * @example
 * ```ts
 * import { ARRAY } from "@deno-xla/ffi/abi";
 * console.log(ARRAY.fields.data.offset); // 16
 * ```
 */
export const ARRAY = {
  name: "XLA_FFI_Array",
  sizeof: 24,
  structSize: null,
  structSizeField: null,
  version: "0.1",
  fields: {
    dtype: { offset: 0, size: 4, type: "enum" },
    size: { offset: 8, size: 8, type: "size_t" },
    data: { offset: 16, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Buffer`: `{struct_size, extension_start, dtype, data, rank, dims}`.
 *
 * @example
 * ```ts
 * import { BUFFER } from "@deno-xla/ffi/abi";
 * console.log(BUFFER.sizeof, BUFFER.fields.dims.offset); // 48 40
 * ```
 */
export const BUFFER = {
  name: "XLA_FFI_Buffer",
  sizeof: 48,
  structSize: 48,
  structSizeField: "dims",
  version: "0.1",
  fields: {
    ...HEADER,
    dtype: { offset: 16, size: 4, type: "enum" },
    data: { offset: 24, size: 8, type: "ptr" },
    rank: { offset: 32, size: 8, type: "int64" },
    dims: { offset: 40, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Args`: `{struct_size, extension_start, int64 size, ArgType* types, void** args}`.
 *
 * @example
 * ```ts
 * import { ARGS } from "@deno-xla/ffi/abi";
 * console.log(ARGS.fields.args.offset); // 32
 * ```
 */
export const ARGS = {
  name: "XLA_FFI_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "args",
  version: "0.1",
  fields: {
    ...HEADER,
    size: { offset: 16, size: 8, type: "int64" },
    types: { offset: 24, size: 8, type: "ptr" },
    args: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Rets`: `{struct_size, extension_start, int64 size, RetType* types, void** rets}`.
 *
 * @example
 * ```ts
 * import { RETS } from "@deno-xla/ffi/abi";
 * console.log(RETS.fields.rets.offset); // 32
 * ```
 */
export const RETS = {
  name: "XLA_FFI_Rets",
  sizeof: 40,
  structSize: 40,
  structSizeField: "rets",
  version: "0.1",
  fields: {
    ...HEADER,
    size: { offset: 16, size: 8, type: "int64" },
    types: { offset: 24, size: 8, type: "ptr" },
    rets: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Attrs`: `{struct_size, extension_start, int64 size, AttrType* types,
 * ByteSpan** names, void** attrs}`.
 *
 * @example
 * ```ts
 * import { ATTRS } from "@deno-xla/ffi/abi";
 * console.log(ATTRS.sizeof); // 48
 * ```
 */
export const ATTRS = {
  name: "XLA_FFI_Attrs",
  sizeof: 48,
  structSize: 48,
  structSizeField: "attrs",
  version: "0.1",
  fields: {
    ...HEADER,
    size: { offset: 16, size: 8, type: "int64" },
    types: { offset: 24, size: 8, type: "ptr" },
    names: { offset: 32, size: 8, type: "ptr" },
    attrs: { offset: 40, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_CallFrame`. STRUCT_SIZE names `attrs` (168) although the out field
 * `future` follows at 168 (sizeof 176): always allocate 176 bytes.
 *
 * @example
 * ```ts
 * import { CALL_FRAME } from "@deno-xla/ffi/abi";
 * console.log(CALL_FRAME.structSize, CALL_FRAME.sizeof); // 168 176
 * ```
 */
export const CALL_FRAME = {
  name: "XLA_FFI_CallFrame",
  sizeof: 176,
  structSize: 168,
  structSizeField: "attrs",
  version: "0.1",
  fields: {
    ...HEADER,
    api: { offset: 16, size: 8, type: "ptr" },
    ctx: { offset: 24, size: 8, type: "ptr" },
    stage: { offset: 32, size: 4, type: "enum" },
    args: { offset: 40, size: 40, type: "XLA_FFI_Args" },
    rets: { offset: 80, size: 40, type: "XLA_FFI_Rets" },
    attrs: { offset: 120, size: 48, type: "XLA_FFI_Attrs" },
    future: { offset: 168, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Handler_Bundle`: the four stage handlers of ABI 0.1.
 *
 * @example
 * ```ts
 * import { HANDLER_BUNDLE } from "@deno-xla/ffi/abi";
 * console.log(HANDLER_BUNDLE.fields.execute.offset); // 24
 * ```
 */
export const HANDLER_BUNDLE = {
  name: "XLA_FFI_Handler_Bundle",
  sizeof: 32,
  structSize: null,
  structSizeField: null,
  version: "0.1",
  fields: {
    instantiate: { offset: 0, size: 8, type: "fnptr" },
    prepare: { offset: 8, size: 8, type: "fnptr" },
    initialize: { offset: 16, size: 8, type: "fnptr" },
    execute: { offset: 24, size: 8, type: "fnptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Error_Create_Args`: `{message, errc}`; STRUCT_SIZE 28, sizeof 32.
 *
 * @example
 * ```ts
 * import { ERROR_CREATE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(ERROR_CREATE_ARGS.structSize); // 28
 * ```
 */
export const ERROR_CREATE_ARGS = {
  name: "XLA_FFI_Error_Create_Args",
  sizeof: 32,
  structSize: 28,
  structSizeField: "errc",
  version: "0.1",
  fields: {
    ...HEADER,
    message: { offset: 16, size: 8, type: "ptr" },
    errc: { offset: 24, size: 4, type: "enum" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Error_GetMessage_Args`: `{error, message (out)}`.
 *
 * @example
 * ```ts
 * import { ERROR_GET_MESSAGE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(ERROR_GET_MESSAGE_ARGS.fields.message.offset); // 24
 * ```
 */
export const ERROR_GET_MESSAGE_ARGS = {
  name: "XLA_FFI_Error_GetMessage_Args",
  sizeof: 32,
  structSize: 32,
  structSizeField: "message",
  version: "0.1",
  fields: {
    ...HEADER,
    error: { offset: 16, size: 8, type: "ptr" },
    message: { offset: 24, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Error_Destroy_Args`: `{error}`.
 *
 * @example
 * ```ts
 * import { ERROR_DESTROY_ARGS } from "@deno-xla/ffi/abi";
 * console.log(ERROR_DESTROY_ARGS.sizeof); // 24
 * ```
 */
export const ERROR_DESTROY_ARGS = {
  name: "XLA_FFI_Error_Destroy_Args",
  sizeof: 24,
  structSize: 24,
  structSizeField: "error",
  version: "0.1",
  fields: { ...HEADER, error: { offset: 16, size: 8, type: "ptr" } },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Error_GetCode_Args` (0.4+, API slot 18): `{error, errc (out)}`; 28 vs 32.
 *
 * @example
 * ```ts
 * import { ERROR_GET_CODE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(ERROR_GET_CODE_ARGS.version); // "0.4"
 * ```
 */
export const ERROR_GET_CODE_ARGS = {
  name: "XLA_FFI_Error_GetCode_Args",
  sizeof: 32,
  structSize: 28,
  structSizeField: "errc",
  version: "0.4",
  fields: {
    ...HEADER,
    error: { offset: 16, size: 8, type: "ptr" },
    errc: { offset: 24, size: 4, type: "enum" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Handler_Register_Args`: `{name, platform, bundle, traits}`; 84 vs 88.
 *
 * @example
 * ```ts
 * import { HANDLER_REGISTER_ARGS } from "@deno-xla/ffi/abi";
 * console.log(HANDLER_REGISTER_ARGS.fields.traits.offset); // 80
 * ```
 */
export const HANDLER_REGISTER_ARGS = {
  name: "XLA_FFI_Handler_Register_Args",
  sizeof: 88,
  structSize: 84,
  structSizeField: "traits",
  version: "0.1",
  fields: {
    ...HEADER,
    name: { offset: 16, size: 16, type: "XLA_FFI_ByteSpan" },
    platform: { offset: 32, size: 16, type: "XLA_FFI_ByteSpan" },
    bundle: { offset: 48, size: 32, type: "XLA_FFI_Handler_Bundle" },
    traits: { offset: 80, size: 4, type: "uint32" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Stream_Get_Args`: `{ctx, stream (out)}`.
 *
 * @example
 * ```ts
 * import { STREAM_GET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(STREAM_GET_ARGS.fields.stream.offset); // 24
 * ```
 */
export const STREAM_GET_ARGS = {
  name: "XLA_FFI_Stream_Get_Args",
  sizeof: 32,
  structSize: 32,
  structSizeField: "stream",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    stream: { offset: 24, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_TypeId_Register_Args` (0.1): `{name, TypeId* type_id (in-out)}`.
 *
 * @example
 * ```ts
 * import { TYPE_ID_REGISTER_ARGS } from "@deno-xla/ffi/abi";
 * console.log(TYPE_ID_REGISTER_ARGS.structSize); // 40
 * ```
 */
export const TYPE_ID_REGISTER_ARGS = {
  name: "XLA_FFI_TypeId_Register_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "type_id",
  version: "0.1",
  fields: {
    ...HEADER,
    name: { offset: 16, size: 16, type: "XLA_FFI_ByteSpan" },
    type_id: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_ExecutionContext_Get_Args`: `{ctx, type_id, data (out)}`.
 *
 * @example
 * ```ts
 * import { EXECUTION_CONTEXT_GET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(EXECUTION_CONTEXT_GET_ARGS.fields.data.offset); // 32
 * ```
 */
export const EXECUTION_CONTEXT_GET_ARGS = {
  name: "XLA_FFI_ExecutionContext_Get_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "data",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    type_id: { offset: 24, size: 8, type: "ptr" },
    data: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_State_Set_Args` (0.1): `{ctx, type_id, state, deleter}`.
 *
 * @example
 * ```ts
 * import { STATE_SET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(STATE_SET_ARGS.fields.deleter.offset); // 40
 * ```
 */
export const STATE_SET_ARGS = {
  name: "XLA_FFI_State_Set_Args",
  sizeof: 48,
  structSize: 48,
  structSizeField: "deleter",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    type_id: { offset: 24, size: 8, type: "ptr" },
    state: { offset: 32, size: 8, type: "ptr" },
    deleter: { offset: 40, size: 8, type: "fnptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_State_Get_Args` (0.1): `{ctx, type_id, state (out)}`.
 *
 * @example
 * ```ts
 * import { STATE_GET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(STATE_GET_ARGS.sizeof); // 40
 * ```
 */
export const STATE_GET_ARGS = {
  name: "XLA_FFI_State_Get_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "state",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    type_id: { offset: 24, size: 8, type: "ptr" },
    state: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_State_Set_Args` of ABI 0.2 (and 1.0): `{ctx, type_id, state}`
 * without the 0.1 `deleter` (the layout of {@link STATE_GET_ARGS}); 40 bytes.
 * A runtime accepting 0.2 handlers must take this 40-byte layout.
 *
 * @example
 * ```ts
 * import { STATE_SET_ARGS_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(STATE_SET_ARGS_V0_2.structSize, STATE_SET_ARGS_V0_2.version); // 40 0.2
 * ```
 */
export const STATE_SET_ARGS_V0_2 = {
  name: "XLA_FFI_State_Set_Args_V0_2",
  sizeof: 40,
  structSize: 40,
  structSizeField: "state",
  version: "0.2",
  fields: STATE_GET_ARGS.fields,
} as const satisfies StructLayout;

const STATE_V0_3_FIELDS = {
  ...HEADER,
  ctx: { offset: 16, size: 8, type: "ptr" },
  stage: { offset: 24, size: 4, type: "enum" },
  type_id: { offset: 32, size: 8, type: "ptr" },
  state: { offset: 40, size: 8, type: "ptr" },
} as const;

/**
 * `XLA_FFI_State_Set_Args` of ABI 0.3+: `{ctx, stage, type_id, state}`. Same
 * struct_size (48) as the 0.1 layout but different offsets: pick the layout by
 * API version, never by struct_size.
 *
 * @example
 * ```ts
 * import { STATE_SET_ARGS_V0_3 } from "@deno-xla/ffi/abi";
 * console.log(STATE_SET_ARGS_V0_3.fields.state.offset); // 40
 * ```
 */
export const STATE_SET_ARGS_V0_3 = {
  name: "XLA_FFI_State_Set_Args_V0_3",
  sizeof: 48,
  structSize: 48,
  structSizeField: "state",
  version: "0.3",
  fields: STATE_V0_3_FIELDS,
} as const satisfies StructLayout;

/**
 * `XLA_FFI_State_Get_Args` of ABI 0.3+ (same layout as {@link STATE_SET_ARGS_V0_3}).
 *
 * @example
 * ```ts
 * import { STATE_GET_ARGS_V0_3 } from "@deno-xla/ffi/abi";
 * console.log(STATE_GET_ARGS_V0_3.fields.stage.offset); // 24
 * ```
 */
export const STATE_GET_ARGS_V0_3 = {
  name: "XLA_FFI_State_Get_Args_V0_3",
  sizeof: 48,
  structSize: 48,
  structSizeField: "state",
  version: "0.3",
  fields: STATE_V0_3_FIELDS,
} as const satisfies StructLayout;

/**
 * `XLA_FFI_DeviceMemory_Allocate_Args`: `{ctx, size, alignment, data (out)}`.
 *
 * @example
 * ```ts
 * import { DEVICE_MEMORY_ALLOCATE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(DEVICE_MEMORY_ALLOCATE_ARGS.fields.data.offset); // 40
 * ```
 */
export const DEVICE_MEMORY_ALLOCATE_ARGS = {
  name: "XLA_FFI_DeviceMemory_Allocate_Args",
  sizeof: 48,
  structSize: 48,
  structSizeField: "data",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    size: { offset: 24, size: 8, type: "size_t" },
    alignment: { offset: 32, size: 8, type: "size_t" },
    data: { offset: 40, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_DeviceMemory_Free_Args`: `{ctx, size, data}`.
 *
 * @example
 * ```ts
 * import { DEVICE_MEMORY_FREE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(DEVICE_MEMORY_FREE_ARGS.sizeof); // 40
 * ```
 */
export const DEVICE_MEMORY_FREE_ARGS = {
  name: "XLA_FFI_DeviceMemory_Free_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "data",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    size: { offset: 24, size: 8, type: "size_t" },
    data: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_ThreadPool_Schedule_Args`: `{ctx, task, data}`.
 *
 * @example
 * ```ts
 * import { THREAD_POOL_SCHEDULE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(THREAD_POOL_SCHEDULE_ARGS.fields.task.offset); // 24
 * ```
 */
export const THREAD_POOL_SCHEDULE_ARGS = {
  name: "XLA_FFI_ThreadPool_Schedule_Args",
  sizeof: 40,
  structSize: 40,
  structSizeField: "data",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    task: { offset: 24, size: 8, type: "fnptr" },
    data: { offset: 32, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_ThreadPool_NumThreads_Args`: `{ctx, int64* num_threads}`.
 *
 * @example
 * ```ts
 * import { THREAD_POOL_NUM_THREADS_ARGS } from "@deno-xla/ffi/abi";
 * console.log(THREAD_POOL_NUM_THREADS_ARGS.structSize); // 32
 * ```
 */
export const THREAD_POOL_NUM_THREADS_ARGS = {
  name: "XLA_FFI_ThreadPool_NumThreads_Args",
  sizeof: 32,
  structSize: 32,
  structSizeField: "num_threads",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    num_threads: { offset: 24, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Future_Create_Args`. STRUCT_SIZE names `extension_start` (16)
 * although the out field `future` follows at 16 (sizeof 24).
 *
 * @example
 * ```ts
 * import { FUTURE_CREATE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(FUTURE_CREATE_ARGS.structSize, FUTURE_CREATE_ARGS.sizeof); // 16 24
 * ```
 */
export const FUTURE_CREATE_ARGS = {
  name: "XLA_FFI_Future_Create_Args",
  sizeof: 24,
  structSize: 16,
  structSizeField: "extension_start",
  version: "0.1",
  fields: { ...HEADER, future: { offset: 16, size: 8, type: "ptr" } },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Future_SetAvailable_Args`: `{future}`.
 *
 * @example
 * ```ts
 * import { FUTURE_SET_AVAILABLE_ARGS } from "@deno-xla/ffi/abi";
 * console.log(FUTURE_SET_AVAILABLE_ARGS.structSize); // 24
 * ```
 */
export const FUTURE_SET_AVAILABLE_ARGS = {
  name: "XLA_FFI_Future_SetAvailable_Args",
  sizeof: 24,
  structSize: 24,
  structSizeField: "future",
  version: "0.1",
  fields: { ...HEADER, future: { offset: 16, size: 8, type: "ptr" } },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Future_SetError_Args`: `{future, error}` (the error passes to the runtime).
 *
 * @example
 * ```ts
 * import { FUTURE_SET_ERROR_ARGS } from "@deno-xla/ffi/abi";
 * console.log(FUTURE_SET_ERROR_ARGS.fields.error.offset); // 24
 * ```
 */
export const FUTURE_SET_ERROR_ARGS = {
  name: "XLA_FFI_Future_SetError_Args",
  sizeof: 32,
  structSize: 32,
  structSizeField: "error",
  version: "0.1",
  fields: {
    ...HEADER,
    future: { offset: 16, size: 8, type: "ptr" },
    error: { offset: 24, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_RunId_Get_Args`: `{ctx, int64 run_id (out)}`.
 *
 * @example
 * ```ts
 * import { RUN_ID_GET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(RUN_ID_GET_ARGS.fields.run_id.offset); // 24
 * ```
 */
export const RUN_ID_GET_ARGS = {
  name: "XLA_FFI_RunId_Get_Args",
  sizeof: 32,
  structSize: 32,
  structSizeField: "run_id",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    run_id: { offset: 24, size: 8, type: "int64" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_DeviceOrdinal_Get_Args`: `{ctx, int32 device_ordinal (out)}`; 28 vs 32.
 *
 * @example
 * ```ts
 * import { DEVICE_ORDINAL_GET_ARGS } from "@deno-xla/ffi/abi";
 * console.log(DEVICE_ORDINAL_GET_ARGS.structSize); // 28
 * ```
 */
export const DEVICE_ORDINAL_GET_ARGS = {
  name: "XLA_FFI_DeviceOrdinal_Get_Args",
  sizeof: 32,
  structSize: 28,
  structSizeField: "device_ordinal",
  version: "0.1",
  fields: {
    ...HEADER,
    ctx: { offset: 16, size: 8, type: "ptr" },
    device_ordinal: { offset: 24, size: 4, type: "int32" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Metadata` (0.1): `{struct_size, api_version, traits}`; 36 vs 40.
 *
 * @example
 * ```ts
 * import { METADATA } from "@deno-xla/ffi/abi";
 * console.log(METADATA.structSize, METADATA.sizeof); // 36 40
 * ```
 */
export const METADATA = {
  name: "XLA_FFI_Metadata",
  sizeof: 40,
  structSize: 36,
  structSizeField: "traits",
  version: "0.1",
  fields: {
    struct_size: { offset: 0, size: 8, type: "size_t" },
    api_version: { offset: 8, size: 24, type: "XLA_FFI_Api_Version" },
    traits: { offset: 32, size: 4, type: "uint32" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Metadata` of ABI 0.2+: adds `state_type_id` at 40 (sizeof 48);
 * STRUCT_SIZE still names `traits` (36).
 *
 * @example
 * ```ts
 * import { METADATA_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(METADATA_V0_2.fields.state_type_id.offset); // 40
 * ```
 */
export const METADATA_V0_2 = {
  name: "XLA_FFI_Metadata_V0_2",
  sizeof: 48,
  structSize: 36,
  structSizeField: "traits",
  version: "0.2",
  fields: {
    ...METADATA.fields,
    state_type_id: { offset: 40, size: 8, type: "XLA_FFI_TypeId" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Metadata_Extension`: `{extension_base, metadata}`, the extension a
 * runtime chains to a call frame to ask a handler for its metadata.
 *
 * @example
 * ```ts
 * import { METADATA_EXTENSION } from "@deno-xla/ffi/abi";
 * console.log(METADATA_EXTENSION.fields.metadata.offset); // 24
 * ```
 */
export const METADATA_EXTENSION = {
  name: "XLA_FFI_Metadata_Extension",
  sizeof: 32,
  structSize: 32,
  structSizeField: "metadata",
  version: "0.1",
  fields: {
    extension_base: { offset: 0, size: 24, type: "XLA_FFI_Extension_Base" },
    metadata: { offset: 24, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_TypeInfo` of ABI 0.2-late+: `{struct_size, extension_start, deleter}`.
 *
 * @example
 * ```ts
 * import { TYPE_INFO_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(TYPE_INFO_V0_2.version); // "0.2-late"
 * ```
 */
export const TYPE_INFO_V0_2 = {
  name: "XLA_FFI_TypeInfo_V0_2",
  sizeof: 24,
  structSize: 24,
  structSizeField: "deleter",
  version: "0.2-late",
  fields: { ...HEADER, deleter: { offset: 16, size: 8, type: "fnptr" } },
} as const satisfies StructLayout;

/**
 * `XLA_FFI_Type_Register_Args` of ABI 0.2+. STRUCT_SIZE names `type_id` (40)
 * although `type_info` follows at 40 (sizeof 48).
 *
 * @example
 * ```ts
 * import { TYPE_REGISTER_ARGS_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(TYPE_REGISTER_ARGS_V0_2.structSize, TYPE_REGISTER_ARGS_V0_2.sizeof); // 40 48
 * ```
 */
export const TYPE_REGISTER_ARGS_V0_2 = {
  name: "XLA_FFI_Type_Register_Args_V0_2",
  sizeof: 48,
  structSize: 40,
  structSizeField: "type_id",
  version: "0.2",
  fields: {
    ...HEADER,
    name: { offset: 16, size: 16, type: "XLA_FFI_ByteSpan" },
    type_id: { offset: 32, size: 8, type: "ptr" },
    type_info: { offset: 40, size: 8, type: "ptr" },
  },
} as const satisfies StructLayout;

/**
 * Names of the 18 function slots of `XLA_FFI_Api` in ABI 0.1, in slot order.
 *
 * @example
 * ```ts
 * import { API_SLOTS_V0_1 } from "@deno-xla/ffi/abi";
 * console.log(API_SLOTS_V0_1.length, API_SLOTS_V0_1[4]); // 18 "XLA_FFI_Stream_Get"
 * ```
 */
export const API_SLOTS_V0_1 = [
  "XLA_FFI_Error_Create",
  "XLA_FFI_Error_GetMessage",
  "XLA_FFI_Error_Destroy",
  "XLA_FFI_Handler_Register",
  "XLA_FFI_Stream_Get",
  "XLA_FFI_TypeId_Register",
  "XLA_FFI_ExecutionContext_Get",
  "XLA_FFI_State_Set",
  "XLA_FFI_State_Get",
  "XLA_FFI_DeviceMemory_Allocate",
  "XLA_FFI_DeviceMemory_Free",
  "XLA_FFI_ThreadPool_Schedule",
  "XLA_FFI_ThreadPool_NumThreads",
  "XLA_FFI_Future_Create",
  "XLA_FFI_Future_SetAvailable",
  "XLA_FFI_Future_SetError",
  "XLA_FFI_RunId_Get",
  "XLA_FFI_DeviceOrdinal_Get",
] as const;

/**
 * Names of the 19 function slots of `XLA_FFI_Api` in the 0.5 lineage that
 * appends `Error_GetCode` (slots named as in 0.1; the same layout as
 * {@link API_SLOTS_V0_4}).
 *
 * @example
 * ```ts
 * import { API_SLOTS_V0_5 } from "@deno-xla/ffi/abi";
 * console.log(API_SLOTS_V0_5[18]); // "XLA_FFI_Error_GetCode"
 * ```
 */
export const API_SLOTS_V0_5 = [...API_SLOTS_V0_1, "XLA_FFI_Error_GetCode"] as const;

/**
 * Names of the 18 function slots of `XLA_FFI_Api` in ABI 0.2 and 0.3: those
 * of 0.1 with slot 5 renamed `XLA_FFI_Type_Register` (it takes a TypeInfo).
 *
 * @example
 * ```ts
 * import { API_SLOTS_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(API_SLOTS_V0_2[5]); // "XLA_FFI_Type_Register"
 * ```
 */
export const API_SLOTS_V0_2: readonly (
  | Exclude<(typeof API_SLOTS_V0_1)[number], "XLA_FFI_TypeId_Register">
  | "XLA_FFI_Type_Register"
)[] = API_SLOTS_V0_1.map((slot) =>
  slot === "XLA_FFI_TypeId_Register" ? "XLA_FFI_Type_Register" : slot
);

/**
 * Names of the 19 function slots of `XLA_FFI_Api` in ABI 0.4 (jaxlib 0.11):
 * those of 0.2 and 0.3, then `XLA_FFI_Error_GetCode`.
 *
 * @example
 * ```ts
 * import { API_SLOTS_V0_4 } from "@deno-xla/ffi/abi";
 * console.log(API_SLOTS_V0_4.length, API_SLOTS_V0_4[18]); // 19 "XLA_FFI_Error_GetCode"
 * ```
 */
export const API_SLOTS_V0_4: readonly (
  | (typeof API_SLOTS_V0_2)[number]
  | "XLA_FFI_Error_GetCode"
)[] = [...API_SLOTS_V0_2, "XLA_FFI_Error_GetCode"];

/** Offset of the first function slot of `XLA_FFI_Api`. */
const API_FIRST_SLOT = 48;

/** Field names of the `XLA_FFI_Api` header (before the function slots). */
export type ApiHeaderField = "struct_size" | "extension_start" | "api_version" | "internal_api";

/** Layout of an `XLA_FFI_Api` version whose function slots are `S`. */
export type ApiLayout<S extends string> = StructLayout & {
  readonly fields: Readonly<Record<S | ApiHeaderField, FieldLayout>>;
};

function _apiFields(slots: readonly string[]): Record<string, FieldLayout> {
  const fields: Record<string, FieldLayout> = {
    ...HEADER,
    api_version: { offset: 16, size: 24, type: "XLA_FFI_Api_Version" },
    internal_api: { offset: 40, size: 8, type: "ptr" },
  };
  slots.forEach((slot, i) => {
    fields[slot] = { offset: API_FIRST_SLOT + 8 * i, size: 8, type: "fnptr" };
  });
  return fields;
}

/**
 * `XLA_FFI_Api` of ABI 0.1: header, `api_version`, `internal_api`, then 18
 * function slots from offset 48 ({@link API_SLOTS_V0_1}); 192 bytes.
 *
 * @example
 * ```ts
 * import { API } from "@deno-xla/ffi/abi";
 * console.log(API.sizeof, API.fields.XLA_FFI_DeviceOrdinal_Get.offset); // 192 184
 * ```
 */
export const API: ApiLayout<(typeof API_SLOTS_V0_1)[number]> = {
  name: "XLA_FFI_Api",
  sizeof: 192,
  structSize: 192,
  structSizeField: "XLA_FFI_DeviceOrdinal_Get",
  version: "0.1",
  fields: _apiFields(API_SLOTS_V0_1) as ApiLayout<(typeof API_SLOTS_V0_1)[number]>["fields"],
};

/**
 * `XLA_FFI_Api` of the 0.5 lineage with `XLA_FFI_Error_GetCode` as the 19th
 * slot (slots named as in 0.1); 200 bytes, the layout of {@link API_V0_4}.
 *
 * @example
 * ```ts
 * import { API_V0_5 } from "@deno-xla/ffi/abi";
 * console.log(API_V0_5.sizeof, API_V0_5.fields.XLA_FFI_Error_GetCode.offset); // 200 192
 * ```
 */
export const API_V0_5: ApiLayout<(typeof API_SLOTS_V0_5)[number]> = {
  name: "XLA_FFI_Api_V0_5",
  sizeof: 200,
  structSize: 200,
  structSizeField: "XLA_FFI_Error_GetCode",
  version: "0.5",
  fields: _apiFields(API_SLOTS_V0_5) as ApiLayout<(typeof API_SLOTS_V0_5)[number]>["fields"],
};

/**
 * `XLA_FFI_Api` of ABI 0.2 and 0.3 ({@link API_SLOTS_V0_2}): the 0.1 layout,
 * 192 bytes; `api_version` tells the versions apart, and the State slots take
 * each version's own argument layout.
 *
 * @example
 * ```ts
 * import { API_V0_2 } from "@deno-xla/ffi/abi";
 * console.log(API_V0_2.fields.XLA_FFI_Type_Register.offset); // 88
 * ```
 */
export const API_V0_2: ApiLayout<(typeof API_SLOTS_V0_2)[number]> = {
  name: "XLA_FFI_Api_V0_2",
  sizeof: 192,
  structSize: 192,
  structSizeField: "XLA_FFI_DeviceOrdinal_Get",
  version: "0.2",
  fields: _apiFields(API_SLOTS_V0_2) as ApiLayout<(typeof API_SLOTS_V0_2)[number]>["fields"],
};

/**
 * `XLA_FFI_Api` of ABI 0.4 ({@link API_SLOTS_V0_4}): the 0.3 table with
 * `XLA_FFI_Error_GetCode` appended at 192; 200 bytes, `struct_size` names it.
 *
 * @example
 * ```ts
 * import { API_V0_4 } from "@deno-xla/ffi/abi";
 * console.log(API_V0_4.structSize, API_V0_4.fields.XLA_FFI_Error_GetCode.offset); // 200 192
 * ```
 */
export const API_V0_4: ApiLayout<(typeof API_SLOTS_V0_4)[number]> = {
  name: "XLA_FFI_Api_V0_4",
  sizeof: 200,
  structSize: 200,
  structSizeField: "XLA_FFI_Error_GetCode",
  version: "0.4",
  fields: _apiFields(API_SLOTS_V0_4) as ApiLayout<(typeof API_SLOTS_V0_4)[number]>["fields"],
};

/**
 * Every struct layout of the ABI, keyed by its C name in `native/xla_ffi.h`.
 *
 * @example
 * ```ts
 * import { LAYOUTS } from "@deno-xla/ffi/abi";
 * for (const layout of Object.values(LAYOUTS)) {
 *   if (layout.structSize !== null && layout.structSize < layout.sizeof) {
 *     console.log(`${layout.name}: STRUCT_SIZE ${layout.structSize} < sizeof ${layout.sizeof}`);
 *   }
 * }
 * ```
 */
export const LAYOUTS: Readonly<Record<string, StructLayout>> = Object.freeze(
  Object.fromEntries(
    [
      EXTENSION_BASE,
      API_VERSION,
      TYPE_ID,
      BYTE_SPAN,
      SCALAR,
      ARRAY,
      BUFFER,
      ARGS,
      RETS,
      ATTRS,
      CALL_FRAME,
      HANDLER_BUNDLE,
      ERROR_CREATE_ARGS,
      ERROR_GET_MESSAGE_ARGS,
      ERROR_DESTROY_ARGS,
      ERROR_GET_CODE_ARGS,
      HANDLER_REGISTER_ARGS,
      STREAM_GET_ARGS,
      TYPE_ID_REGISTER_ARGS,
      EXECUTION_CONTEXT_GET_ARGS,
      STATE_SET_ARGS,
      STATE_GET_ARGS,
      STATE_SET_ARGS_V0_2,
      STATE_SET_ARGS_V0_3,
      STATE_GET_ARGS_V0_3,
      DEVICE_MEMORY_ALLOCATE_ARGS,
      DEVICE_MEMORY_FREE_ARGS,
      THREAD_POOL_SCHEDULE_ARGS,
      THREAD_POOL_NUM_THREADS_ARGS,
      FUTURE_CREATE_ARGS,
      FUTURE_SET_AVAILABLE_ARGS,
      FUTURE_SET_ERROR_ARGS,
      RUN_ID_GET_ARGS,
      DEVICE_ORDINAL_GET_ARGS,
      METADATA,
      METADATA_V0_2,
      METADATA_EXTENSION,
      TYPE_INFO_V0_2,
      TYPE_REGISTER_ARGS_V0_2,
      API,
      API_V0_2,
      API_V0_4,
      API_V0_5,
    ].map((l) => [l.name, l]),
  ),
);

/** The layouts of the structs that are embedded in other structs, by C name. */
export type EmbeddedLayouts = {
  XLA_FFI_Api_Version: typeof API_VERSION;
  XLA_FFI_Handler_Bundle: typeof HANDLER_BUNDLE;
  XLA_FFI_Extension_Base: typeof EXTENSION_BASE;
  XLA_FFI_Args: typeof ARGS;
  XLA_FFI_Rets: typeof RETS;
  XLA_FFI_Attrs: typeof ATTRS;
  XLA_FFI_ByteSpan: typeof BYTE_SPAN;
  XLA_FFI_TypeId: typeof TYPE_ID;
};
