/* Generated from src/abi/layout.ts by tests/_abi_fixture_fields.ts: do not edit. */
/* X(struct, member designator, kind) for every leaf field of every struct. */
#define ABI_FIXTURE_STRUCTS(S) \
  S(XLA_FFI_Extension_Base) \
  S(XLA_FFI_Api_Version) \
  S(XLA_FFI_TypeId) \
  S(XLA_FFI_ByteSpan) \
  S(XLA_FFI_Scalar) \
  S(XLA_FFI_Array) \
  S(XLA_FFI_Buffer) \
  S(XLA_FFI_Args) \
  S(XLA_FFI_Rets) \
  S(XLA_FFI_Attrs) \
  S(XLA_FFI_CallFrame) \
  S(XLA_FFI_Handler_Bundle) \
  S(XLA_FFI_Error_Create_Args) \
  S(XLA_FFI_Error_GetMessage_Args) \
  S(XLA_FFI_Error_Destroy_Args) \
  S(XLA_FFI_Error_GetCode_Args) \
  S(XLA_FFI_Handler_Register_Args) \
  S(XLA_FFI_Stream_Get_Args) \
  S(XLA_FFI_TypeId_Register_Args) \
  S(XLA_FFI_ExecutionContext_Get_Args) \
  S(XLA_FFI_State_Set_Args) \
  S(XLA_FFI_State_Get_Args) \
  S(XLA_FFI_State_Set_Args_V0_2) \
  S(XLA_FFI_State_Set_Args_V0_3) \
  S(XLA_FFI_State_Get_Args_V0_3) \
  S(XLA_FFI_DeviceMemory_Allocate_Args) \
  S(XLA_FFI_DeviceMemory_Free_Args) \
  S(XLA_FFI_ThreadPool_Schedule_Args) \
  S(XLA_FFI_ThreadPool_NumThreads_Args) \
  S(XLA_FFI_Future_Create_Args) \
  S(XLA_FFI_Future_SetAvailable_Args) \
  S(XLA_FFI_Future_SetError_Args) \
  S(XLA_FFI_RunId_Get_Args) \
  S(XLA_FFI_DeviceOrdinal_Get_Args) \
  S(XLA_FFI_Metadata) \
  S(XLA_FFI_Metadata_V0_2) \
  S(XLA_FFI_Metadata_Extension) \
  S(XLA_FFI_TypeInfo_V0_2) \
  S(XLA_FFI_Type_Register_Args_V0_2) \
  S(XLA_FFI_Api) \
  S(XLA_FFI_Api_V0_2) \
  S(XLA_FFI_Api_V0_4) \
  S(XLA_FFI_Api_V0_5)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Extension_Base(X) \
  X(XLA_FFI_Extension_Base, struct_size, SS) \
  X(XLA_FFI_Extension_Base, type, EN) \
  X(XLA_FFI_Extension_Base, next, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Api_Version(X) \
  X(XLA_FFI_Api_Version, struct_size, SS) \
  X(XLA_FFI_Api_Version, extension_start, PTR) \
  X(XLA_FFI_Api_Version, major_version, I32) \
  X(XLA_FFI_Api_Version, minor_version, I32)

#define ABI_FIXTURE_FIELDS_XLA_FFI_TypeId(X) \
  X(XLA_FFI_TypeId, type_id, I64)

#define ABI_FIXTURE_FIELDS_XLA_FFI_ByteSpan(X) \
  X(XLA_FFI_ByteSpan, ptr, PTR) \
  X(XLA_FFI_ByteSpan, len, U64)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Scalar(X) \
  X(XLA_FFI_Scalar, dtype, EN) \
  X(XLA_FFI_Scalar, value, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Array(X) \
  X(XLA_FFI_Array, dtype, EN) \
  X(XLA_FFI_Array, size, U64) \
  X(XLA_FFI_Array, data, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Buffer(X) \
  X(XLA_FFI_Buffer, struct_size, SS) \
  X(XLA_FFI_Buffer, extension_start, PTR) \
  X(XLA_FFI_Buffer, dtype, EN) \
  X(XLA_FFI_Buffer, data, PTR) \
  X(XLA_FFI_Buffer, rank, I64) \
  X(XLA_FFI_Buffer, dims, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Args(X) \
  X(XLA_FFI_Args, struct_size, SS) \
  X(XLA_FFI_Args, extension_start, PTR) \
  X(XLA_FFI_Args, size, I64) \
  X(XLA_FFI_Args, types, PTR) \
  X(XLA_FFI_Args, args, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Rets(X) \
  X(XLA_FFI_Rets, struct_size, SS) \
  X(XLA_FFI_Rets, extension_start, PTR) \
  X(XLA_FFI_Rets, size, I64) \
  X(XLA_FFI_Rets, types, PTR) \
  X(XLA_FFI_Rets, rets, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Attrs(X) \
  X(XLA_FFI_Attrs, struct_size, SS) \
  X(XLA_FFI_Attrs, extension_start, PTR) \
  X(XLA_FFI_Attrs, size, I64) \
  X(XLA_FFI_Attrs, types, PTR) \
  X(XLA_FFI_Attrs, names, PTR) \
  X(XLA_FFI_Attrs, attrs, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_CallFrame(X) \
  X(XLA_FFI_CallFrame, struct_size, SS) \
  X(XLA_FFI_CallFrame, extension_start, PTR) \
  X(XLA_FFI_CallFrame, api, PTR) \
  X(XLA_FFI_CallFrame, ctx, PTR) \
  X(XLA_FFI_CallFrame, stage, EN) \
  X(XLA_FFI_CallFrame, args.struct_size, SS) \
  X(XLA_FFI_CallFrame, args.extension_start, PTR) \
  X(XLA_FFI_CallFrame, args.size, I64) \
  X(XLA_FFI_CallFrame, args.types, PTR) \
  X(XLA_FFI_CallFrame, args.args, PTR) \
  X(XLA_FFI_CallFrame, rets.struct_size, SS) \
  X(XLA_FFI_CallFrame, rets.extension_start, PTR) \
  X(XLA_FFI_CallFrame, rets.size, I64) \
  X(XLA_FFI_CallFrame, rets.types, PTR) \
  X(XLA_FFI_CallFrame, rets.rets, PTR) \
  X(XLA_FFI_CallFrame, attrs.struct_size, SS) \
  X(XLA_FFI_CallFrame, attrs.extension_start, PTR) \
  X(XLA_FFI_CallFrame, attrs.size, I64) \
  X(XLA_FFI_CallFrame, attrs.types, PTR) \
  X(XLA_FFI_CallFrame, attrs.names, PTR) \
  X(XLA_FFI_CallFrame, attrs.attrs, PTR) \
  X(XLA_FFI_CallFrame, future, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Handler_Bundle(X) \
  X(XLA_FFI_Handler_Bundle, instantiate, PTR) \
  X(XLA_FFI_Handler_Bundle, prepare, PTR) \
  X(XLA_FFI_Handler_Bundle, initialize, PTR) \
  X(XLA_FFI_Handler_Bundle, execute, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Error_Create_Args(X) \
  X(XLA_FFI_Error_Create_Args, struct_size, SS) \
  X(XLA_FFI_Error_Create_Args, extension_start, PTR) \
  X(XLA_FFI_Error_Create_Args, message, PTR) \
  X(XLA_FFI_Error_Create_Args, errc, EN)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Error_GetMessage_Args(X) \
  X(XLA_FFI_Error_GetMessage_Args, struct_size, SS) \
  X(XLA_FFI_Error_GetMessage_Args, extension_start, PTR) \
  X(XLA_FFI_Error_GetMessage_Args, error, PTR) \
  X(XLA_FFI_Error_GetMessage_Args, message, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Error_Destroy_Args(X) \
  X(XLA_FFI_Error_Destroy_Args, struct_size, SS) \
  X(XLA_FFI_Error_Destroy_Args, extension_start, PTR) \
  X(XLA_FFI_Error_Destroy_Args, error, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Error_GetCode_Args(X) \
  X(XLA_FFI_Error_GetCode_Args, struct_size, SS) \
  X(XLA_FFI_Error_GetCode_Args, extension_start, PTR) \
  X(XLA_FFI_Error_GetCode_Args, error, PTR) \
  X(XLA_FFI_Error_GetCode_Args, errc, EN)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Handler_Register_Args(X) \
  X(XLA_FFI_Handler_Register_Args, struct_size, SS) \
  X(XLA_FFI_Handler_Register_Args, extension_start, PTR) \
  X(XLA_FFI_Handler_Register_Args, name.ptr, SP) \
  X(XLA_FFI_Handler_Register_Args, name.len, SL) \
  X(XLA_FFI_Handler_Register_Args, platform.ptr, SP) \
  X(XLA_FFI_Handler_Register_Args, platform.len, SL) \
  X(XLA_FFI_Handler_Register_Args, bundle.instantiate, PTR) \
  X(XLA_FFI_Handler_Register_Args, bundle.prepare, PTR) \
  X(XLA_FFI_Handler_Register_Args, bundle.initialize, PTR) \
  X(XLA_FFI_Handler_Register_Args, bundle.execute, PTR) \
  X(XLA_FFI_Handler_Register_Args, traits, U32)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Stream_Get_Args(X) \
  X(XLA_FFI_Stream_Get_Args, struct_size, SS) \
  X(XLA_FFI_Stream_Get_Args, extension_start, PTR) \
  X(XLA_FFI_Stream_Get_Args, ctx, PTR) \
  X(XLA_FFI_Stream_Get_Args, stream, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_TypeId_Register_Args(X) \
  X(XLA_FFI_TypeId_Register_Args, struct_size, SS) \
  X(XLA_FFI_TypeId_Register_Args, extension_start, PTR) \
  X(XLA_FFI_TypeId_Register_Args, name.ptr, SP) \
  X(XLA_FFI_TypeId_Register_Args, name.len, SL) \
  X(XLA_FFI_TypeId_Register_Args, type_id, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_ExecutionContext_Get_Args(X) \
  X(XLA_FFI_ExecutionContext_Get_Args, struct_size, SS) \
  X(XLA_FFI_ExecutionContext_Get_Args, extension_start, PTR) \
  X(XLA_FFI_ExecutionContext_Get_Args, ctx, PTR) \
  X(XLA_FFI_ExecutionContext_Get_Args, type_id, PTR) \
  X(XLA_FFI_ExecutionContext_Get_Args, data, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_State_Set_Args(X) \
  X(XLA_FFI_State_Set_Args, struct_size, SS) \
  X(XLA_FFI_State_Set_Args, extension_start, PTR) \
  X(XLA_FFI_State_Set_Args, ctx, PTR) \
  X(XLA_FFI_State_Set_Args, type_id, PTR) \
  X(XLA_FFI_State_Set_Args, state, PTR) \
  X(XLA_FFI_State_Set_Args, deleter, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_State_Get_Args(X) \
  X(XLA_FFI_State_Get_Args, struct_size, SS) \
  X(XLA_FFI_State_Get_Args, extension_start, PTR) \
  X(XLA_FFI_State_Get_Args, ctx, PTR) \
  X(XLA_FFI_State_Get_Args, type_id, PTR) \
  X(XLA_FFI_State_Get_Args, state, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_State_Set_Args_V0_2(X) \
  X(XLA_FFI_State_Set_Args_V0_2, struct_size, SS) \
  X(XLA_FFI_State_Set_Args_V0_2, extension_start, PTR) \
  X(XLA_FFI_State_Set_Args_V0_2, ctx, PTR) \
  X(XLA_FFI_State_Set_Args_V0_2, type_id, PTR) \
  X(XLA_FFI_State_Set_Args_V0_2, state, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_State_Set_Args_V0_3(X) \
  X(XLA_FFI_State_Set_Args_V0_3, struct_size, SS) \
  X(XLA_FFI_State_Set_Args_V0_3, extension_start, PTR) \
  X(XLA_FFI_State_Set_Args_V0_3, ctx, PTR) \
  X(XLA_FFI_State_Set_Args_V0_3, stage, EN) \
  X(XLA_FFI_State_Set_Args_V0_3, type_id, PTR) \
  X(XLA_FFI_State_Set_Args_V0_3, state, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_State_Get_Args_V0_3(X) \
  X(XLA_FFI_State_Get_Args_V0_3, struct_size, SS) \
  X(XLA_FFI_State_Get_Args_V0_3, extension_start, PTR) \
  X(XLA_FFI_State_Get_Args_V0_3, ctx, PTR) \
  X(XLA_FFI_State_Get_Args_V0_3, stage, EN) \
  X(XLA_FFI_State_Get_Args_V0_3, type_id, PTR) \
  X(XLA_FFI_State_Get_Args_V0_3, state, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_DeviceMemory_Allocate_Args(X) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, struct_size, SS) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, extension_start, PTR) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, ctx, PTR) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, size, U64) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, alignment, U64) \
  X(XLA_FFI_DeviceMemory_Allocate_Args, data, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_DeviceMemory_Free_Args(X) \
  X(XLA_FFI_DeviceMemory_Free_Args, struct_size, SS) \
  X(XLA_FFI_DeviceMemory_Free_Args, extension_start, PTR) \
  X(XLA_FFI_DeviceMemory_Free_Args, ctx, PTR) \
  X(XLA_FFI_DeviceMemory_Free_Args, size, U64) \
  X(XLA_FFI_DeviceMemory_Free_Args, data, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_ThreadPool_Schedule_Args(X) \
  X(XLA_FFI_ThreadPool_Schedule_Args, struct_size, SS) \
  X(XLA_FFI_ThreadPool_Schedule_Args, extension_start, PTR) \
  X(XLA_FFI_ThreadPool_Schedule_Args, ctx, PTR) \
  X(XLA_FFI_ThreadPool_Schedule_Args, task, PTR) \
  X(XLA_FFI_ThreadPool_Schedule_Args, data, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_ThreadPool_NumThreads_Args(X) \
  X(XLA_FFI_ThreadPool_NumThreads_Args, struct_size, SS) \
  X(XLA_FFI_ThreadPool_NumThreads_Args, extension_start, PTR) \
  X(XLA_FFI_ThreadPool_NumThreads_Args, ctx, PTR) \
  X(XLA_FFI_ThreadPool_NumThreads_Args, num_threads, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Future_Create_Args(X) \
  X(XLA_FFI_Future_Create_Args, struct_size, SS) \
  X(XLA_FFI_Future_Create_Args, extension_start, PTR) \
  X(XLA_FFI_Future_Create_Args, future, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Future_SetAvailable_Args(X) \
  X(XLA_FFI_Future_SetAvailable_Args, struct_size, SS) \
  X(XLA_FFI_Future_SetAvailable_Args, extension_start, PTR) \
  X(XLA_FFI_Future_SetAvailable_Args, future, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Future_SetError_Args(X) \
  X(XLA_FFI_Future_SetError_Args, struct_size, SS) \
  X(XLA_FFI_Future_SetError_Args, extension_start, PTR) \
  X(XLA_FFI_Future_SetError_Args, future, PTR) \
  X(XLA_FFI_Future_SetError_Args, error, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_RunId_Get_Args(X) \
  X(XLA_FFI_RunId_Get_Args, struct_size, SS) \
  X(XLA_FFI_RunId_Get_Args, extension_start, PTR) \
  X(XLA_FFI_RunId_Get_Args, ctx, PTR) \
  X(XLA_FFI_RunId_Get_Args, run_id, I64)

#define ABI_FIXTURE_FIELDS_XLA_FFI_DeviceOrdinal_Get_Args(X) \
  X(XLA_FFI_DeviceOrdinal_Get_Args, struct_size, SS) \
  X(XLA_FFI_DeviceOrdinal_Get_Args, extension_start, PTR) \
  X(XLA_FFI_DeviceOrdinal_Get_Args, ctx, PTR) \
  X(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal, I32)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Metadata(X) \
  X(XLA_FFI_Metadata, struct_size, SS) \
  X(XLA_FFI_Metadata, api_version.struct_size, SS) \
  X(XLA_FFI_Metadata, api_version.extension_start, PTR) \
  X(XLA_FFI_Metadata, api_version.major_version, I32) \
  X(XLA_FFI_Metadata, api_version.minor_version, I32) \
  X(XLA_FFI_Metadata, traits, U32)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Metadata_V0_2(X) \
  X(XLA_FFI_Metadata_V0_2, struct_size, SS) \
  X(XLA_FFI_Metadata_V0_2, api_version.struct_size, SS) \
  X(XLA_FFI_Metadata_V0_2, api_version.extension_start, PTR) \
  X(XLA_FFI_Metadata_V0_2, api_version.major_version, I32) \
  X(XLA_FFI_Metadata_V0_2, api_version.minor_version, I32) \
  X(XLA_FFI_Metadata_V0_2, traits, U32) \
  X(XLA_FFI_Metadata_V0_2, state_type_id.type_id, I64)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Metadata_Extension(X) \
  X(XLA_FFI_Metadata_Extension, extension_base.struct_size, SS) \
  X(XLA_FFI_Metadata_Extension, extension_base.type, EN) \
  X(XLA_FFI_Metadata_Extension, extension_base.next, PTR) \
  X(XLA_FFI_Metadata_Extension, metadata, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_TypeInfo_V0_2(X) \
  X(XLA_FFI_TypeInfo_V0_2, struct_size, SS) \
  X(XLA_FFI_TypeInfo_V0_2, extension_start, PTR) \
  X(XLA_FFI_TypeInfo_V0_2, deleter, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Type_Register_Args_V0_2(X) \
  X(XLA_FFI_Type_Register_Args_V0_2, struct_size, SS) \
  X(XLA_FFI_Type_Register_Args_V0_2, extension_start, PTR) \
  X(XLA_FFI_Type_Register_Args_V0_2, name.ptr, SP) \
  X(XLA_FFI_Type_Register_Args_V0_2, name.len, SL) \
  X(XLA_FFI_Type_Register_Args_V0_2, type_id, PTR) \
  X(XLA_FFI_Type_Register_Args_V0_2, type_info, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Api(X) \
  X(XLA_FFI_Api, struct_size, SS) \
  X(XLA_FFI_Api, extension_start, PTR) \
  X(XLA_FFI_Api, api_version.struct_size, SS) \
  X(XLA_FFI_Api, api_version.extension_start, PTR) \
  X(XLA_FFI_Api, api_version.major_version, I32) \
  X(XLA_FFI_Api, api_version.minor_version, I32) \
  X(XLA_FFI_Api, internal_api, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Error_Create, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Error_GetMessage, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Error_Destroy, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Handler_Register, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Stream_Get, PTR) \
  X(XLA_FFI_Api, XLA_FFI_TypeId_Register, PTR) \
  X(XLA_FFI_Api, XLA_FFI_ExecutionContext_Get, PTR) \
  X(XLA_FFI_Api, XLA_FFI_State_Set, PTR) \
  X(XLA_FFI_Api, XLA_FFI_State_Get, PTR) \
  X(XLA_FFI_Api, XLA_FFI_DeviceMemory_Allocate, PTR) \
  X(XLA_FFI_Api, XLA_FFI_DeviceMemory_Free, PTR) \
  X(XLA_FFI_Api, XLA_FFI_ThreadPool_Schedule, PTR) \
  X(XLA_FFI_Api, XLA_FFI_ThreadPool_NumThreads, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Future_Create, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Future_SetAvailable, PTR) \
  X(XLA_FFI_Api, XLA_FFI_Future_SetError, PTR) \
  X(XLA_FFI_Api, XLA_FFI_RunId_Get, PTR) \
  X(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Api_V0_2(X) \
  X(XLA_FFI_Api_V0_2, struct_size, SS) \
  X(XLA_FFI_Api_V0_2, extension_start, PTR) \
  X(XLA_FFI_Api_V0_2, api_version.struct_size, SS) \
  X(XLA_FFI_Api_V0_2, api_version.extension_start, PTR) \
  X(XLA_FFI_Api_V0_2, api_version.major_version, I32) \
  X(XLA_FFI_Api_V0_2, api_version.minor_version, I32) \
  X(XLA_FFI_Api_V0_2, internal_api, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Error_Create, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Error_GetMessage, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Error_Destroy, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Handler_Register, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Stream_Get, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Type_Register, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_ExecutionContext_Get, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_State_Set, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_State_Get, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_DeviceMemory_Allocate, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_DeviceMemory_Free, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_ThreadPool_Schedule, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_ThreadPool_NumThreads, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Future_Create, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Future_SetAvailable, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_Future_SetError, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_RunId_Get, PTR) \
  X(XLA_FFI_Api_V0_2, XLA_FFI_DeviceOrdinal_Get, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Api_V0_4(X) \
  X(XLA_FFI_Api_V0_4, struct_size, SS) \
  X(XLA_FFI_Api_V0_4, extension_start, PTR) \
  X(XLA_FFI_Api_V0_4, api_version.struct_size, SS) \
  X(XLA_FFI_Api_V0_4, api_version.extension_start, PTR) \
  X(XLA_FFI_Api_V0_4, api_version.major_version, I32) \
  X(XLA_FFI_Api_V0_4, api_version.minor_version, I32) \
  X(XLA_FFI_Api_V0_4, internal_api, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Error_Create, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Error_GetMessage, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Error_Destroy, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Handler_Register, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Stream_Get, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Type_Register, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_ExecutionContext_Get, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_State_Set, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_State_Get, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_DeviceMemory_Allocate, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_DeviceMemory_Free, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_ThreadPool_Schedule, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_ThreadPool_NumThreads, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Future_Create, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Future_SetAvailable, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Future_SetError, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_RunId_Get, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_DeviceOrdinal_Get, PTR) \
  X(XLA_FFI_Api_V0_4, XLA_FFI_Error_GetCode, PTR)

#define ABI_FIXTURE_FIELDS_XLA_FFI_Api_V0_5(X) \
  X(XLA_FFI_Api_V0_5, struct_size, SS) \
  X(XLA_FFI_Api_V0_5, extension_start, PTR) \
  X(XLA_FFI_Api_V0_5, api_version.struct_size, SS) \
  X(XLA_FFI_Api_V0_5, api_version.extension_start, PTR) \
  X(XLA_FFI_Api_V0_5, api_version.major_version, I32) \
  X(XLA_FFI_Api_V0_5, api_version.minor_version, I32) \
  X(XLA_FFI_Api_V0_5, internal_api, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Error_Create, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Error_GetMessage, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Error_Destroy, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Handler_Register, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Stream_Get, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_TypeId_Register, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_ExecutionContext_Get, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_State_Set, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_State_Get, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_DeviceMemory_Allocate, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_DeviceMemory_Free, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_ThreadPool_Schedule, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_ThreadPool_NumThreads, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Future_Create, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Future_SetAvailable, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Future_SetError, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_RunId_Get, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_DeviceOrdinal_Get, PTR) \
  X(XLA_FFI_Api_V0_5, XLA_FFI_Error_GetCode, PTR)
