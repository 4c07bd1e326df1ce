/*
 * jax_layout_dump.c: prints the C compiler's view of the structs of XLA FFI
 * API 0.3 or 0.4 as jaxlib's own c_api.h declares them (compiled at test
 * time against the header jaxlib ships; never part of this project), in the
 * JSON of layout_json.h under XLA's names. tests/abi_layout_test.ts compares
 * it with this project's tables of that version.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdio.h>

#include "xla/ffi/api/c_api.h"

#include "layout_json.h"
#include "layout_common.h"

int main(void) {
  printf("{\"version\": [%d, %d], \"structs\": {", XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  dump_common_structs();


  BEGIN(XLA_FFI_TypeInfo);
  HDR(XLA_FFI_TypeInfo);
  F(XLA_FFI_TypeInfo, deleter);
  END(XLA_FFI_TypeInfo);

  BEGIN(XLA_FFI_Type_Register_Args);
  HDR(XLA_FFI_Type_Register_Args);
  F(XLA_FFI_Type_Register_Args, name);
  F(XLA_FFI_Type_Register_Args, type_id);
  F(XLA_FFI_Type_Register_Args, type_info);
  END(XLA_FFI_Type_Register_Args);

  BEGIN(XLA_FFI_State_Set_Args);
  HDR(XLA_FFI_State_Set_Args);
  F(XLA_FFI_State_Set_Args, ctx);
  F(XLA_FFI_State_Set_Args, stage);
  F(XLA_FFI_State_Set_Args, type_id);
  F(XLA_FFI_State_Set_Args, state);
  END(XLA_FFI_State_Set_Args);

  BEGIN(XLA_FFI_State_Get_Args);
  HDR(XLA_FFI_State_Get_Args);
  F(XLA_FFI_State_Get_Args, ctx);
  F(XLA_FFI_State_Get_Args, stage);
  F(XLA_FFI_State_Get_Args, type_id);
  F(XLA_FFI_State_Get_Args, state);
  END(XLA_FFI_State_Get_Args);

  BEGIN(XLA_FFI_Metadata);
  F(XLA_FFI_Metadata, struct_size);
  F(XLA_FFI_Metadata, api_version);
  F(XLA_FFI_Metadata, traits);
  F(XLA_FFI_Metadata, state_type_id);
  END(XLA_FFI_Metadata);

  BEGIN(XLA_FFI_Api);
  HDR(XLA_FFI_Api);
  F(XLA_FFI_Api, api_version);
  F(XLA_FFI_Api, internal_api);
  API_SLOTS_0_2(XLA_FFI_Api);
#if XLA_FFI_API_MAJOR == 0 && XLA_FFI_API_MINOR >= 4
  F(XLA_FFI_Api, XLA_FFI_Error_GetCode);
#endif
  END(XLA_FFI_Api);

#if XLA_FFI_API_MAJOR == 0 && XLA_FFI_API_MINOR >= 4
  BEGIN(XLA_FFI_Error_GetCode_Args);
  HDR(XLA_FFI_Error_GetCode_Args);
  F(XLA_FFI_Error_GetCode_Args, error);
  F(XLA_FFI_Error_GetCode_Args, errc);
  END(XLA_FFI_Error_GetCode_Args);
#endif

  printf("\n}}\n");
  return 0;
}
