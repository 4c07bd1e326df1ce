/*
 * layout_json.h: the JSON printer the layout dumps share (layout_dump.c for
 * this project's header, jax_layout_dump.c for the header jaxlib ships):
 *   {"<C name>": {"sizeof": N, "structSize": N|null,
 *                 "fields": {"<field>": {"offset": N, "size": N}, ...}}, ...}
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_LAYOUT_JSON_H_
#define DENO_XLA_FFI_LAYOUT_JSON_H_

#include <stddef.h>
#include <stdio.h>

static int first_struct = 1;
static int first_field = 1;

static void begin(const char* name, size_t size) {
  printf("%s\n  \"%s\": {\"sizeof\": %zu, \"fields\": {", first_struct ? "" : ",", name, size);
  first_struct = 0;
  first_field = 1;
}

static void field(const char* name, size_t offset, size_t size) {
  printf("%s\"%s\": {\"offset\": %zu, \"size\": %zu}", first_field ? "" : ", ", name, offset,
         size);
  first_field = 0;
}

static void end_sized(size_t struct_size) { printf("}, \"structSize\": %zu}", struct_size); }
static void end_unsized(void) { printf("}, \"structSize\": null}"); }

#define BEGIN(T) begin(#T, sizeof(T))
#define F(T, f) field(#f, offsetof(T, f), sizeof(((T*)0)->f))
#define END(T) end_sized((size_t)T##_STRUCT_SIZE)
#define END_NONE() end_unsized()
#define HDR(T) F(T, struct_size); F(T, extension_start)

/* The function slots of XLA_FFI_Api (0.1), and of 0.2/0.3 (slot 5 renamed). */
/* The slots every version shares, around slot 5 (which 0.2 renamed). */
#define API_SLOTS_HEAD(T)                     \
  F(T, XLA_FFI_Error_Create);                 \
  F(T, XLA_FFI_Error_GetMessage);             \
  F(T, XLA_FFI_Error_Destroy);                \
  F(T, XLA_FFI_Handler_Register);             \
  F(T, XLA_FFI_Stream_Get)
#define API_SLOTS_TAIL(T)                     \
  F(T, XLA_FFI_ExecutionContext_Get);         \
  F(T, XLA_FFI_State_Set);                    \
  F(T, XLA_FFI_State_Get);                    \
  F(T, XLA_FFI_DeviceMemory_Allocate);        \
  F(T, XLA_FFI_DeviceMemory_Free);            \
  F(T, XLA_FFI_ThreadPool_Schedule);          \
  F(T, XLA_FFI_ThreadPool_NumThreads);        \
  F(T, XLA_FFI_Future_Create);                \
  F(T, XLA_FFI_Future_SetAvailable);          \
  F(T, XLA_FFI_Future_SetError);              \
  F(T, XLA_FFI_RunId_Get);                    \
  F(T, XLA_FFI_DeviceOrdinal_Get)

#define API_SLOTS(T) API_SLOTS_HEAD(T); F(T, XLA_FFI_TypeId_Register); API_SLOTS_TAIL(T)

/* 0.2 and 0.3: slot 5 is Type_Register. */
#define API_SLOTS_0_2(T) API_SLOTS_HEAD(T); F(T, XLA_FFI_Type_Register); API_SLOTS_TAIL(T)

#endif /* DENO_XLA_FFI_LAYOUT_JSON_H_ */
