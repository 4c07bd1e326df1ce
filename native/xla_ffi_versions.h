/*
 * xla_ffi_versions.h: version-aware helpers for raw C handlers (no ffi.h).
 *
 * The runtime that calls a handler decides the layouts of its State and Type
 * functions, through the version in `api->api_version` (spec §5.5, §5.6):
 *   0.1  TypeId_Register {name, type_id}; State_Set {ctx, type_id, state,
 *        deleter}; State_Get {ctx, type_id, state}.
 *   0.2  Type_Register {name, type_id, type_info}: the TypeInfo carries the
 *        deleter; State_Set/State_Get {ctx, type_id, state}.
 *   0.3+ State_Set/State_Get {ctx, stage, type_id, state}: one state per
 *        instantiate, prepare and initialize stage.
 *   0.4+ XLA_FFI_Error_GetCode (a 19th slot) reads an error's code back.
 * The 0.1 and 0.3 State_Set arguments have the same size (48) but different
 * layouts, so a runtime cannot tell them apart: a handler must use the
 * layout of the runtime's version. These helpers do, for any runtime.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_VERSIONS_H_
#define DENO_XLA_FFI_VERSIONS_H_

#include <string.h>

#include "xla_ffi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's minor API version (major 0); later majors use 0.3's layouts. */
static inline int32_t xla_ffi_api_minor(const XLA_FFI_Api* api) {
  if (api->struct_size < offsetof(XLA_FFI_Api, internal_api)) return 1;
  if (api->api_version.major_version > 0) return 3;
  return api->api_version.minor_version;
}

/*
 * Registers a type under `name` with id *type_id (0: the runtime assigns one
 * and writes it back) and, from 0.2 on, a TypeInfo whose deleter frees the
 * type's states. Registering the same name with the same id again is fine.
 */
static inline XLA_FFI_Error* xla_ffi_type_register(const XLA_FFI_Api* api, const char* name,
                                                   size_t len, XLA_FFI_TypeId* type_id,
                                                   void (*deleter)(void*)) {
  if (xla_ffi_api_minor(api) <= 1) {
    XLA_FFI_TypeId_Register_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_TypeId_Register_Args_STRUCT_SIZE;
    a.name.ptr = name;
    a.name.len = len;
    a.type_id = type_id;
    return api->XLA_FFI_TypeId_Register(&a);
  }
  /* One TypeInfo per call is fine: the runtime copies the deleter. */
  XLA_FFI_TypeInfo_V0_2 info = {XLA_FFI_TypeInfo_V0_2_STRUCT_SIZE, NULL, deleter};
  XLA_FFI_Type_Register_Args_V0_2 a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Type_Register_Args_V0_2_STRUCT_SIZE;
  a.name.ptr = name;
  a.name.len = len;
  a.type_id = type_id;
  a.type_info = &info;
  return ((const XLA_FFI_Api_V0_2*)api)->XLA_FFI_Type_Register(&a);
}

/*
 * Sets the state of `stage` (before 0.3 only the instantiate stage has one).
 * `deleter` is passed to 0.1 runtimes; later ones take the deleter the
 * type was registered with. On success the runtime owns `state`.
 */
static inline XLA_FFI_Error* xla_ffi_state_set(const XLA_FFI_Api* api,
                                               XLA_FFI_ExecutionContext* ctx,
                                               XLA_FFI_ExecutionStage stage,
                                               XLA_FFI_TypeId* type_id, void* state,
                                               void (*deleter)(void*)) {
  int32_t minor = xla_ffi_api_minor(api);
  if (minor <= 1) {
    XLA_FFI_State_Set_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
    a.ctx = ctx;
    a.type_id = type_id;
    a.state = state;
    a.deleter = deleter;
    return api->XLA_FFI_State_Set(&a);
  }
  if (minor == 2) {
    XLA_FFI_State_Set_Args_V0_2 a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_State_Set_Args_V0_2_STRUCT_SIZE;
    a.ctx = ctx;
    a.type_id = type_id;
    a.state = state;
    return ((XLA_FFI_State_Set_V0_2*)(void*)api->XLA_FFI_State_Set)(&a);
  }
  XLA_FFI_State_Set_Args_V0_3 a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_State_Set_Args_V0_3_STRUCT_SIZE;
  a.ctx = ctx;
  a.stage = stage;
  a.type_id = type_id;
  a.state = state;
  return ((XLA_FFI_State_Set_V0_3*)(void*)api->XLA_FFI_State_Set)(&a);
}

/* Gets the state of `stage` into *state. */
static inline XLA_FFI_Error* xla_ffi_state_get(const XLA_FFI_Api* api,
                                               XLA_FFI_ExecutionContext* ctx,
                                               XLA_FFI_ExecutionStage stage,
                                               XLA_FFI_TypeId* type_id, void** state) {
  XLA_FFI_Error* e;
  if (xla_ffi_api_minor(api) <= 2) {
    XLA_FFI_State_Get_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
    a.ctx = ctx;
    a.type_id = type_id;
    e = api->XLA_FFI_State_Get(&a);
    *state = a.state;
    return e;
  }
  XLA_FFI_State_Get_Args_V0_3 a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_State_Get_Args_V0_3_STRUCT_SIZE;
  a.ctx = ctx;
  a.stage = stage;
  a.type_id = type_id;
  e = ((XLA_FFI_State_Get_V0_3*)(void*)api->XLA_FFI_State_Get)(&a);
  *state = a.state;
  return e;
}

/*
 * The code of an error an API function returned: XLA_FFI_Error_GetCode where
 * the runtime's table has the slot (0.4+, by its struct_size, as ffi.h 0.4
 * checks it), UNKNOWN where it has not (older runtimes cannot tell). The
 * error stays the caller's to destroy.
 */
static inline XLA_FFI_Error_Code xla_ffi_error_get_code(const XLA_FFI_Api* api,
                                                        XLA_FFI_Error* error) {
  const XLA_FFI_Api_V0_4* v4 = (const XLA_FFI_Api_V0_4*)(const void*)api;
  if (error == NULL) return XLA_FFI_Error_Code_OK;
  if (api->struct_size < XLA_FFI_Api_V0_4_STRUCT_SIZE || v4->XLA_FFI_Error_GetCode == NULL)
    return XLA_FFI_Error_Code_UNKNOWN;
  XLA_FFI_Error_GetCode_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_GetCode_Args_STRUCT_SIZE;
  a.error = error;
  a.errc = XLA_FFI_Error_Code_UNKNOWN;
  v4->XLA_FFI_Error_GetCode(&a);
  return a.errc;
}

#ifdef __cplusplus
}
#endif

#endif /* DENO_XLA_FFI_VERSIONS_H_ */
