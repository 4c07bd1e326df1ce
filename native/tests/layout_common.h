/*
 * layout_common.h: the structs that every XLA FFI version since 0.1 lays out
 * alike, dumped by both layout dumps (layout_dump.c for this project's
 * header, jax_layout_dump.c for jaxlib's) through layout_json.h. Include it
 * after the header whose view is dumped.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_LAYOUT_COMMON_H_
#define DENO_XLA_FFI_LAYOUT_COMMON_H_

static void dump_common_structs(void) {
  BEGIN(XLA_FFI_Extension_Base);
  F(XLA_FFI_Extension_Base, struct_size);
  F(XLA_FFI_Extension_Base, type);
  F(XLA_FFI_Extension_Base, next);
  END(XLA_FFI_Extension_Base);

  BEGIN(XLA_FFI_Api_Version);
  HDR(XLA_FFI_Api_Version);
  F(XLA_FFI_Api_Version, major_version);
  F(XLA_FFI_Api_Version, minor_version);
  END(XLA_FFI_Api_Version);

  BEGIN(XLA_FFI_Buffer);
  HDR(XLA_FFI_Buffer);
  F(XLA_FFI_Buffer, dtype);
  F(XLA_FFI_Buffer, data);
  F(XLA_FFI_Buffer, rank);
  F(XLA_FFI_Buffer, dims);
  END(XLA_FFI_Buffer);

  BEGIN(XLA_FFI_Args);
  HDR(XLA_FFI_Args);
  F(XLA_FFI_Args, size);
  F(XLA_FFI_Args, types);
  F(XLA_FFI_Args, args);
  END(XLA_FFI_Args);

  BEGIN(XLA_FFI_Rets);
  HDR(XLA_FFI_Rets);
  F(XLA_FFI_Rets, size);
  F(XLA_FFI_Rets, types);
  F(XLA_FFI_Rets, rets);
  END(XLA_FFI_Rets);

  BEGIN(XLA_FFI_Attrs);
  HDR(XLA_FFI_Attrs);
  F(XLA_FFI_Attrs, size);
  F(XLA_FFI_Attrs, types);
  F(XLA_FFI_Attrs, names);
  F(XLA_FFI_Attrs, attrs);
  END(XLA_FFI_Attrs);

  BEGIN(XLA_FFI_CallFrame);
  HDR(XLA_FFI_CallFrame);
  F(XLA_FFI_CallFrame, api);
  F(XLA_FFI_CallFrame, ctx);
  F(XLA_FFI_CallFrame, stage);
  F(XLA_FFI_CallFrame, args);
  F(XLA_FFI_CallFrame, rets);
  F(XLA_FFI_CallFrame, attrs);
  F(XLA_FFI_CallFrame, future);
  END(XLA_FFI_CallFrame);

  BEGIN(XLA_FFI_Handler_Bundle);
  F(XLA_FFI_Handler_Bundle, instantiate);
  F(XLA_FFI_Handler_Bundle, prepare);
  F(XLA_FFI_Handler_Bundle, initialize);
  F(XLA_FFI_Handler_Bundle, execute);
  END_NONE();

  BEGIN(XLA_FFI_Error_Create_Args);
  HDR(XLA_FFI_Error_Create_Args);
  F(XLA_FFI_Error_Create_Args, message);
  F(XLA_FFI_Error_Create_Args, errc);
  END(XLA_FFI_Error_Create_Args);

  BEGIN(XLA_FFI_Error_GetMessage_Args);
  HDR(XLA_FFI_Error_GetMessage_Args);
  F(XLA_FFI_Error_GetMessage_Args, error);
  F(XLA_FFI_Error_GetMessage_Args, message);
  END(XLA_FFI_Error_GetMessage_Args);

  BEGIN(XLA_FFI_Error_Destroy_Args);
  HDR(XLA_FFI_Error_Destroy_Args);
  F(XLA_FFI_Error_Destroy_Args, error);
  END(XLA_FFI_Error_Destroy_Args);

  BEGIN(XLA_FFI_Handler_Register_Args);
  HDR(XLA_FFI_Handler_Register_Args);
  F(XLA_FFI_Handler_Register_Args, name);
  F(XLA_FFI_Handler_Register_Args, platform);
  F(XLA_FFI_Handler_Register_Args, bundle);
  F(XLA_FFI_Handler_Register_Args, traits);
  END(XLA_FFI_Handler_Register_Args);

  BEGIN(XLA_FFI_Stream_Get_Args);
  HDR(XLA_FFI_Stream_Get_Args);
  F(XLA_FFI_Stream_Get_Args, ctx);
  F(XLA_FFI_Stream_Get_Args, stream);
  END(XLA_FFI_Stream_Get_Args);

  BEGIN(XLA_FFI_ExecutionContext_Get_Args);
  HDR(XLA_FFI_ExecutionContext_Get_Args);
  F(XLA_FFI_ExecutionContext_Get_Args, ctx);
  F(XLA_FFI_ExecutionContext_Get_Args, type_id);
  F(XLA_FFI_ExecutionContext_Get_Args, data);
  END(XLA_FFI_ExecutionContext_Get_Args);

  BEGIN(XLA_FFI_DeviceMemory_Allocate_Args);
  HDR(XLA_FFI_DeviceMemory_Allocate_Args);
  F(XLA_FFI_DeviceMemory_Allocate_Args, ctx);
  F(XLA_FFI_DeviceMemory_Allocate_Args, size);
  F(XLA_FFI_DeviceMemory_Allocate_Args, alignment);
  F(XLA_FFI_DeviceMemory_Allocate_Args, data);
  END(XLA_FFI_DeviceMemory_Allocate_Args);

  BEGIN(XLA_FFI_DeviceMemory_Free_Args);
  HDR(XLA_FFI_DeviceMemory_Free_Args);
  F(XLA_FFI_DeviceMemory_Free_Args, ctx);
  F(XLA_FFI_DeviceMemory_Free_Args, size);
  F(XLA_FFI_DeviceMemory_Free_Args, data);
  END(XLA_FFI_DeviceMemory_Free_Args);

  BEGIN(XLA_FFI_ThreadPool_Schedule_Args);
  HDR(XLA_FFI_ThreadPool_Schedule_Args);
  F(XLA_FFI_ThreadPool_Schedule_Args, ctx);
  F(XLA_FFI_ThreadPool_Schedule_Args, task);
  F(XLA_FFI_ThreadPool_Schedule_Args, data);
  END(XLA_FFI_ThreadPool_Schedule_Args);

  BEGIN(XLA_FFI_ThreadPool_NumThreads_Args);
  HDR(XLA_FFI_ThreadPool_NumThreads_Args);
  F(XLA_FFI_ThreadPool_NumThreads_Args, ctx);
  F(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  END(XLA_FFI_ThreadPool_NumThreads_Args);

  BEGIN(XLA_FFI_Future_Create_Args);
  HDR(XLA_FFI_Future_Create_Args);
  F(XLA_FFI_Future_Create_Args, future);
  END(XLA_FFI_Future_Create_Args);

  BEGIN(XLA_FFI_Future_SetAvailable_Args);
  HDR(XLA_FFI_Future_SetAvailable_Args);
  F(XLA_FFI_Future_SetAvailable_Args, future);
  END(XLA_FFI_Future_SetAvailable_Args);

  BEGIN(XLA_FFI_Future_SetError_Args);
  HDR(XLA_FFI_Future_SetError_Args);
  F(XLA_FFI_Future_SetError_Args, future);
  F(XLA_FFI_Future_SetError_Args, error);
  END(XLA_FFI_Future_SetError_Args);

  BEGIN(XLA_FFI_RunId_Get_Args);
  HDR(XLA_FFI_RunId_Get_Args);
  F(XLA_FFI_RunId_Get_Args, ctx);
  F(XLA_FFI_RunId_Get_Args, run_id);
  END(XLA_FFI_RunId_Get_Args);

  BEGIN(XLA_FFI_DeviceOrdinal_Get_Args);
  HDR(XLA_FFI_DeviceOrdinal_Get_Args);
  F(XLA_FFI_DeviceOrdinal_Get_Args, ctx);
  F(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
  END(XLA_FFI_DeviceOrdinal_Get_Args);

  BEGIN(XLA_FFI_Metadata_Extension);
  F(XLA_FFI_Metadata_Extension, extension_base);
  F(XLA_FFI_Metadata_Extension, metadata);
  END(XLA_FFI_Metadata_Extension);
}

#endif /* DENO_XLA_FFI_LAYOUT_COMMON_H_ */
