/*
 * layout_dump.c: prints the C compiler's view of every struct declared in
 * xla_ffi.h as one JSON object:
 *   {"<C name>": {"sizeof": N, "structSize": N|null,
 *                 "fields": {"<field>": {"offset": N, "size": N}, ...}}, ...}
 * tests/abi_layout_test.ts compares it with src/abi/layout.ts.
 */
#include <stdio.h>

#include "xla_ffi.h"

#include "layout_json.h"
#include "layout_common.h"

int main(void) {
  printf("{");
  dump_common_structs();


  BEGIN(XLA_FFI_TypeId);
  F(XLA_FFI_TypeId, type_id);
  END_NONE();

  BEGIN(XLA_FFI_ByteSpan);
  F(XLA_FFI_ByteSpan, ptr);
  F(XLA_FFI_ByteSpan, len);
  END_NONE();

  BEGIN(XLA_FFI_Scalar);
  F(XLA_FFI_Scalar, dtype);
  F(XLA_FFI_Scalar, value);
  END_NONE();

  BEGIN(XLA_FFI_Array);
  F(XLA_FFI_Array, dtype);
  F(XLA_FFI_Array, size);
  F(XLA_FFI_Array, data);
  END_NONE();

  BEGIN(XLA_FFI_Error_GetCode_Args);
  HDR(XLA_FFI_Error_GetCode_Args);
  F(XLA_FFI_Error_GetCode_Args, error);
  F(XLA_FFI_Error_GetCode_Args, errc);
  END(XLA_FFI_Error_GetCode_Args);

  BEGIN(XLA_FFI_TypeId_Register_Args);
  HDR(XLA_FFI_TypeId_Register_Args);
  F(XLA_FFI_TypeId_Register_Args, name);
  F(XLA_FFI_TypeId_Register_Args, type_id);
  END(XLA_FFI_TypeId_Register_Args);

  BEGIN(XLA_FFI_State_Set_Args);
  HDR(XLA_FFI_State_Set_Args);
  F(XLA_FFI_State_Set_Args, ctx);
  F(XLA_FFI_State_Set_Args, type_id);
  F(XLA_FFI_State_Set_Args, state);
  F(XLA_FFI_State_Set_Args, deleter);
  END(XLA_FFI_State_Set_Args);

  BEGIN(XLA_FFI_State_Get_Args);
  HDR(XLA_FFI_State_Get_Args);
  F(XLA_FFI_State_Get_Args, ctx);
  F(XLA_FFI_State_Get_Args, type_id);
  F(XLA_FFI_State_Get_Args, state);
  END(XLA_FFI_State_Get_Args);

  BEGIN(XLA_FFI_State_Set_Args_V0_2);
  HDR(XLA_FFI_State_Set_Args_V0_2);
  F(XLA_FFI_State_Set_Args_V0_2, ctx);
  F(XLA_FFI_State_Set_Args_V0_2, type_id);
  F(XLA_FFI_State_Set_Args_V0_2, state);
  END(XLA_FFI_State_Set_Args_V0_2);

  BEGIN(XLA_FFI_State_Set_Args_V0_3);
  HDR(XLA_FFI_State_Set_Args_V0_3);
  F(XLA_FFI_State_Set_Args_V0_3, ctx);
  F(XLA_FFI_State_Set_Args_V0_3, stage);
  F(XLA_FFI_State_Set_Args_V0_3, type_id);
  F(XLA_FFI_State_Set_Args_V0_3, state);
  END(XLA_FFI_State_Set_Args_V0_3);

  BEGIN(XLA_FFI_State_Get_Args_V0_3);
  HDR(XLA_FFI_State_Get_Args_V0_3);
  F(XLA_FFI_State_Get_Args_V0_3, ctx);
  F(XLA_FFI_State_Get_Args_V0_3, stage);
  F(XLA_FFI_State_Get_Args_V0_3, type_id);
  F(XLA_FFI_State_Get_Args_V0_3, state);
  END(XLA_FFI_State_Get_Args_V0_3);

  BEGIN(XLA_FFI_Metadata);
  F(XLA_FFI_Metadata, struct_size);
  F(XLA_FFI_Metadata, api_version);
  F(XLA_FFI_Metadata, traits);
  END(XLA_FFI_Metadata);

  BEGIN(XLA_FFI_Metadata_V0_2);
  F(XLA_FFI_Metadata_V0_2, struct_size);
  F(XLA_FFI_Metadata_V0_2, api_version);
  F(XLA_FFI_Metadata_V0_2, traits);
  F(XLA_FFI_Metadata_V0_2, state_type_id);
  END(XLA_FFI_Metadata_V0_2);

  BEGIN(XLA_FFI_TypeInfo_V0_2);
  HDR(XLA_FFI_TypeInfo_V0_2);
  F(XLA_FFI_TypeInfo_V0_2, deleter);
  END(XLA_FFI_TypeInfo_V0_2);

  BEGIN(XLA_FFI_Type_Register_Args_V0_2);
  HDR(XLA_FFI_Type_Register_Args_V0_2);
  F(XLA_FFI_Type_Register_Args_V0_2, name);
  F(XLA_FFI_Type_Register_Args_V0_2, type_id);
  F(XLA_FFI_Type_Register_Args_V0_2, type_info);
  END(XLA_FFI_Type_Register_Args_V0_2);

  BEGIN(XLA_FFI_Api);
  HDR(XLA_FFI_Api);
  F(XLA_FFI_Api, api_version);
  F(XLA_FFI_Api, internal_api);
  API_SLOTS(XLA_FFI_Api);
  END(XLA_FFI_Api);

  BEGIN(XLA_FFI_Api_V0_2);
  HDR(XLA_FFI_Api_V0_2);
  F(XLA_FFI_Api_V0_2, api_version);
  F(XLA_FFI_Api_V0_2, internal_api);
  API_SLOTS_0_2(XLA_FFI_Api_V0_2);
  END(XLA_FFI_Api_V0_2);

  BEGIN(XLA_FFI_Api_V0_4);
  HDR(XLA_FFI_Api_V0_4);
  F(XLA_FFI_Api_V0_4, api_version);
  F(XLA_FFI_Api_V0_4, internal_api);
  API_SLOTS_0_2(XLA_FFI_Api_V0_4);
  F(XLA_FFI_Api_V0_4, XLA_FFI_Error_GetCode);
  END(XLA_FFI_Api_V0_4);

  BEGIN(XLA_FFI_Api_V0_5);
  HDR(XLA_FFI_Api_V0_5);
  F(XLA_FFI_Api_V0_5, api_version);
  F(XLA_FFI_Api_V0_5, internal_api);
  API_SLOTS(XLA_FFI_Api_V0_5);
  F(XLA_FFI_Api_V0_5, XLA_FFI_Error_GetCode);
  END(XLA_FFI_Api_V0_5);

  printf("\n}\n");
  return 0;
}
