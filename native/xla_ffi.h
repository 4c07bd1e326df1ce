/*
 * xla_ffi.h: C declarations of the XLA FFI ABI as used by deno-xla-ffi.
 *
 * Written from the ABI specification of this project (spec §1-§4): layouts are
 * for x86-64 Linux LP64. The primary declarations are ABI 0.1 (18 API slots);
 * later-version variants carry a version suffix (e.g. XLA_FFI_Metadata_V0_2).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_H_
#define DENO_XLA_FFI_H_

#include <stddef.h>
#include <stdint.h>

#include "abi_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XLA_FFI_API_MAJOR 0
#define XLA_FFI_API_MINOR 1

/* offsetof(T, f) + sizeof(T.f): the STRUCT_SIZE convention of the ABI. */
#define XLA_FFI_STRUCT_SIZE(T, f) (offsetof(T, f) + sizeof(((T*)0)->f))

/* ------------------------------------------------------------------------ */
/* Enums (§3)                                                                */
/* ------------------------------------------------------------------------ */

typedef enum {
  XLA_FFI_Extension_Metadata = 1,
} XLA_FFI_Extension_Type;

typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16,
} XLA_FFI_Error_Code;

typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3,
} XLA_FFI_ExecutionStage;

/* The data types and attribute kinds, and their values, are native/abi_facts.h's. */
#define XFD_DATA_TYPE_ENTRY_(name, value, ...) XLA_FFI_DataType_##name = value,
#define XFD_ATTR_KIND_ENTRY_(name, value) XLA_FFI_AttrType_##name = value,

typedef enum { XFD_DATA_TYPES(XFD_DATA_TYPE_ENTRY_) } XLA_FFI_DataType;

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;

typedef enum { XFD_ATTR_KINDS(XFD_ATTR_KIND_ENTRY_) } XLA_FFI_AttrType;

typedef enum {
  XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
} XLA_FFI_Handler_TraitsBits;
typedef uint32_t XLA_FFI_Handler_Traits;

/* ------------------------------------------------------------------------ */
/* Opaque handles and function types                                         */
/* ------------------------------------------------------------------------ */

typedef struct XLA_FFI_Error XLA_FFI_Error;
typedef struct XLA_FFI_Future XLA_FFI_Future;
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi;
typedef struct XLA_FFI_Api XLA_FFI_Api;

/* ------------------------------------------------------------------------ */
/* Common structs (§2.1)                                                     */
/* ------------------------------------------------------------------------ */

typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  XLA_FFI_Extension_Type type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;
#define XLA_FFI_Extension_Base_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Extension_Base, next)

typedef struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} XLA_FFI_Api_Version;
#define XLA_FFI_Api_Version_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Api_Version, minor_version)

typedef struct XLA_FFI_TypeId {
  int64_t type_id;
} XLA_FFI_TypeId;

typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

typedef struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

typedef struct XLA_FFI_Array {
  XLA_FFI_DataType dtype;
  size_t size;
  void* data;
} XLA_FFI_Array;

typedef struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
} XLA_FFI_Buffer;
#define XLA_FFI_Buffer_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Buffer, dims)

typedef struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_ArgType* types;
  void** args;
} XLA_FFI_Args;
#define XLA_FFI_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Args, args)

typedef struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_RetType* types;
  void** rets;
} XLA_FFI_Rets;
#define XLA_FFI_Rets_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Rets, rets)

typedef struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_AttrType* types;
  XLA_FFI_ByteSpan** names;
  void** attrs;
} XLA_FFI_Attrs;
#define XLA_FFI_Attrs_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Attrs, attrs)

typedef struct XLA_FFI_CallFrame {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  XLA_FFI_Future* future; /* out; not covered by STRUCT_SIZE (168 vs 176) */
} XLA_FFI_CallFrame;
#define XLA_FFI_CallFrame_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_CallFrame, attrs)

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);
typedef void XLA_FFI_Task(void* data);

typedef struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate;
  XLA_FFI_Handler* prepare;
  XLA_FFI_Handler* initialize;
  XLA_FFI_Handler* execute;
} XLA_FFI_Handler_Bundle;

/* ------------------------------------------------------------------------ */
/* API argument structs (§2.2)                                               */
/* ------------------------------------------------------------------------ */

#define XLA_FFI_ARGS_HEADER         \
  size_t struct_size;               \
  XLA_FFI_Extension_Base* extension_start

typedef struct XLA_FFI_Error_Create_Args {
  XLA_FFI_ARGS_HEADER;
  const char* message;
  XLA_FFI_Error_Code errc;
} XLA_FFI_Error_Create_Args;
#define XLA_FFI_Error_Create_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Error_Create_Args, errc)

typedef struct XLA_FFI_Error_GetMessage_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Error* error;
  const char* message; /* out */
} XLA_FFI_Error_GetMessage_Args;
#define XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Error_GetMessage_Args, message)

typedef struct XLA_FFI_Error_Destroy_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Error* error;
} XLA_FFI_Error_Destroy_Args;
#define XLA_FFI_Error_Destroy_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Error_Destroy_Args, error)

/* 0.4+: Error_GetCode (slot 18) reads an error's code back. */
typedef struct XLA_FFI_Error_GetCode_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Error* error;
  XLA_FFI_Error_Code errc; /* out */
} XLA_FFI_Error_GetCode_Args;
#define XLA_FFI_Error_GetCode_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Error_GetCode_Args, errc)

typedef struct XLA_FFI_Future_Create_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Future* future; /* out; not covered by STRUCT_SIZE (16 vs 24) */
} XLA_FFI_Future_Create_Args;
#define XLA_FFI_Future_Create_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Future_Create_Args, extension_start)

typedef struct XLA_FFI_Future_SetAvailable_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Future* future;
} XLA_FFI_Future_SetAvailable_Args;
#define XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Future_SetAvailable_Args, future)

typedef struct XLA_FFI_Future_SetError_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_Future* future;
  XLA_FFI_Error* error; /* ownership passes to the runtime */
} XLA_FFI_Future_SetError_Args;
#define XLA_FFI_Future_SetError_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Future_SetError_Args, error)

typedef struct XLA_FFI_Handler_Register_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
} XLA_FFI_Handler_Register_Args;
#define XLA_FFI_Handler_Register_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Handler_Register_Args, traits)

typedef struct XLA_FFI_TypeId_Register_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id; /* in-out */
} XLA_FFI_TypeId_Register_Args;
#define XLA_FFI_TypeId_Register_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_TypeId_Register_Args, type_id)

typedef struct XLA_FFI_ExecutionContext_Get_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* data; /* out */
} XLA_FFI_ExecutionContext_Get_Args;
#define XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_ExecutionContext_Get_Args, data)

typedef struct XLA_FFI_State_Set_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state;
  void (*deleter)(void* state);
} XLA_FFI_State_Set_Args;
#define XLA_FFI_State_Set_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_State_Set_Args, deleter)

typedef struct XLA_FFI_State_Get_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state; /* out */
} XLA_FFI_State_Get_Args;
#define XLA_FFI_State_Get_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_State_Get_Args, state)

typedef struct XLA_FFI_Stream_Get_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  void* stream; /* out */
} XLA_FFI_Stream_Get_Args;
#define XLA_FFI_Stream_Get_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Stream_Get_Args, stream)

typedef struct XLA_FFI_DeviceMemory_Allocate_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  size_t alignment;
  void* data; /* out */
} XLA_FFI_DeviceMemory_Allocate_Args;
#define XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_DeviceMemory_Allocate_Args, data)

typedef struct XLA_FFI_DeviceMemory_Free_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  void* data;
} XLA_FFI_DeviceMemory_Free_Args;
#define XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_DeviceMemory_Free_Args, data)

typedef struct XLA_FFI_ThreadPool_Schedule_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_Task* task;
  void* data;
} XLA_FFI_ThreadPool_Schedule_Args;
#define XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_ThreadPool_Schedule_Args, data)

typedef struct XLA_FFI_ThreadPool_NumThreads_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  int64_t* num_threads; /* the runtime writes *num_threads */
} XLA_FFI_ThreadPool_NumThreads_Args;
#define XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_ThreadPool_NumThreads_Args, num_threads)

typedef struct XLA_FFI_RunId_Get_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  int64_t run_id; /* out */
} XLA_FFI_RunId_Get_Args;
#define XLA_FFI_RunId_Get_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_RunId_Get_Args, run_id)

typedef struct XLA_FFI_DeviceOrdinal_Get_Args {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  int32_t device_ordinal; /* out */
} XLA_FFI_DeviceOrdinal_Get_Args;
#define XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal)

/* ------------------------------------------------------------------------ */
/* Metadata (§2.3, §5.2)                                                     */
/* ------------------------------------------------------------------------ */

typedef struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
} XLA_FFI_Metadata;
#define XLA_FFI_Metadata_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Metadata, traits)

typedef struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
} XLA_FFI_Metadata_Extension;
#define XLA_FFI_Metadata_Extension_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Metadata_Extension, metadata)

/* ------------------------------------------------------------------------ */
/* The API table (§2.4, §4): 18 slots in ABI 0.1                             */
/* ------------------------------------------------------------------------ */

typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);
typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args* args);
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);
typedef void XLA_FFI_Error_GetCode(XLA_FFI_Error_GetCode_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_TypeId_Register(XLA_FFI_TypeId_Register_Args* args);
typedef XLA_FFI_Error* XLA_FFI_ExecutionContext_Get(XLA_FFI_ExecutionContext_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_State_Set(XLA_FFI_State_Set_Args* args);
typedef XLA_FFI_Error* XLA_FFI_State_Get(XLA_FFI_State_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Allocate(XLA_FFI_DeviceMemory_Allocate_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Free(XLA_FFI_DeviceMemory_Free_Args* args);
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_Schedule(XLA_FFI_ThreadPool_Schedule_Args* args);
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetAvailable(XLA_FFI_Future_SetAvailable_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args* args);
typedef XLA_FFI_Error* XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceOrdinal_Get(XLA_FFI_DeviceOrdinal_Get_Args* args);

/* The slots every version has before and after the type and state slots
 * (5-8), which later versions change. */
#define XLA_FFI_API_SLOTS_HEAD                                 \
  XLA_FFI_Error_Create* XLA_FFI_Error_Create;                  \
  XLA_FFI_Error_GetMessage* XLA_FFI_Error_GetMessage;          \
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;                \
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;          \
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get
#define XLA_FFI_API_SLOTS_TAIL                                 \
  XLA_FFI_DeviceMemory_Allocate* XLA_FFI_DeviceMemory_Allocate;\
  XLA_FFI_DeviceMemory_Free* XLA_FFI_DeviceMemory_Free;        \
  XLA_FFI_ThreadPool_Schedule* XLA_FFI_ThreadPool_Schedule;    \
  XLA_FFI_ThreadPool_NumThreads* XLA_FFI_ThreadPool_NumThreads;\
  XLA_FFI_Future_Create* XLA_FFI_Future_Create;                \
  XLA_FFI_Future_SetAvailable* XLA_FFI_Future_SetAvailable;    \
  XLA_FFI_Future_SetError* XLA_FFI_Future_SetError;            \
  XLA_FFI_RunId_Get* XLA_FFI_RunId_Get;                        \
  XLA_FFI_DeviceOrdinal_Get* XLA_FFI_DeviceOrdinal_Get
/* The fields before the slots. */
#define XLA_FFI_API_HEADER                 \
  size_t struct_size;                      \
  XLA_FFI_Extension_Base* extension_start; \
  XLA_FFI_Api_Version api_version;         \
  XLA_FFI_InternalApi* internal_api

#define XLA_FFI_API_SLOTS_0_1                                  \
  XLA_FFI_API_SLOTS_HEAD;                                      \
  XLA_FFI_TypeId_Register* XLA_FFI_TypeId_Register;            \
  XLA_FFI_ExecutionContext_Get* XLA_FFI_ExecutionContext_Get;  \
  XLA_FFI_State_Set* XLA_FFI_State_Set;                        \
  XLA_FFI_State_Get* XLA_FFI_State_Get;                        \
  XLA_FFI_API_SLOTS_TAIL

struct XLA_FFI_Api {
  XLA_FFI_API_HEADER;
  XLA_FFI_API_SLOTS_0_1;
};
#define XLA_FFI_Api_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get)

/* ------------------------------------------------------------------------ */
/* Later-version variants (§2, tagged with the version that introduced them) */
/* ------------------------------------------------------------------------ */

/* 0.2+: Metadata gains state_type_id at 40; STRUCT_SIZE still names traits. */
typedef struct XLA_FFI_Metadata_V0_2 {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
  XLA_FFI_TypeId state_type_id;
} XLA_FFI_Metadata_V0_2;
#define XLA_FFI_Metadata_V0_2_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Metadata_V0_2, traits)

/* 0.2-late+: TypeInfo with a struct header and a deleter. */
typedef struct XLA_FFI_TypeInfo_V0_2 {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  void (*deleter)(void* object);
} XLA_FFI_TypeInfo_V0_2;
#define XLA_FFI_TypeInfo_V0_2_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_TypeInfo_V0_2, deleter)

/* 0.2+: Type_Register; STRUCT_SIZE names type_id (40) although type_info
 * follows at 40 (sizeof 48). */
typedef struct XLA_FFI_Type_Register_Args_V0_2 {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id; /* in-out */
  const XLA_FFI_TypeInfo_V0_2* type_info;
} XLA_FFI_Type_Register_Args_V0_2;
#define XLA_FFI_Type_Register_Args_V0_2_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Type_Register_Args_V0_2, type_id)

/* 0.2: State_Set without a deleter (same layout as State_Get). */
typedef XLA_FFI_State_Get_Args XLA_FFI_State_Set_Args_V0_2;
#define XLA_FFI_State_Set_Args_V0_2_STRUCT_SIZE XLA_FFI_State_Get_Args_STRUCT_SIZE

/* 0.3+: State_Set / State_Get select the state slot by stage. */
typedef struct XLA_FFI_State_Set_Args_V0_3 {
  XLA_FFI_ARGS_HEADER;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state;
} XLA_FFI_State_Set_Args_V0_3;
#define XLA_FFI_State_Set_Args_V0_3_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_State_Set_Args_V0_3, state)
typedef XLA_FFI_State_Set_Args_V0_3 XLA_FFI_State_Get_Args_V0_3;
#define XLA_FFI_State_Get_Args_V0_3_STRUCT_SIZE XLA_FFI_State_Set_Args_V0_3_STRUCT_SIZE

/* 0.2+: slot 5 registers a type with its TypeInfo (same slot as 0.1's
 * TypeId_Register, whose 40-byte arguments it extends). */
typedef XLA_FFI_Error* XLA_FFI_Type_Register_V0_2(XLA_FFI_Type_Register_Args_V0_2* args);

#define XLA_FFI_API_SLOTS_0_2                                  \
  XLA_FFI_API_SLOTS_HEAD;                                      \
  XLA_FFI_Type_Register_V0_2* XLA_FFI_Type_Register;           \
  XLA_FFI_ExecutionContext_Get* XLA_FFI_ExecutionContext_Get;  \
  void* XLA_FFI_State_Set;                                     \
  void* XLA_FFI_State_Get;                                     \
  XLA_FFI_API_SLOTS_TAIL

/* 0.2 and 0.3: the same 18 slots as 0.1, slot 5 renamed Type_Register. The
 * State_Set/State_Get slots take the version's own argument layout (0.2:
 * XLA_FFI_State_Set_Args_V0_2 / XLA_FFI_State_Get_Args; 0.3:
 * XLA_FFI_State_Set_Args_V0_3 / XLA_FFI_State_Get_Args_V0_3), so they are
 * untyped here: cast them to the version's function type. */
typedef struct XLA_FFI_Api_V0_2 {
  XLA_FFI_API_HEADER;
  XLA_FFI_API_SLOTS_0_2;
} XLA_FFI_Api_V0_2;
#define XLA_FFI_Api_V0_2_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Api_V0_2, XLA_FFI_DeviceOrdinal_Get)

typedef XLA_FFI_Error* XLA_FFI_State_Set_V0_2(XLA_FFI_State_Set_Args_V0_2* args);
typedef XLA_FFI_Error* XLA_FFI_State_Get_V0_2(XLA_FFI_State_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_State_Set_V0_3(XLA_FFI_State_Set_Args_V0_3* args);
typedef XLA_FFI_Error* XLA_FFI_State_Get_V0_3(XLA_FFI_State_Get_Args_V0_3* args);

/* 0.4 (jaxlib 0.11): 0.3's 18 slots and XLA_FFI_Error_GetCode appended after
 * DeviceOrdinal_Get; 200 bytes, STRUCT_SIZE names the new slot. A caller
 * checks `api->struct_size` before using the slot (older runtimes hand a
 * 192-byte table). */
typedef struct XLA_FFI_Api_V0_4 {
  XLA_FFI_API_HEADER;
  XLA_FFI_API_SLOTS_0_2;
  XLA_FFI_Error_GetCode* XLA_FFI_Error_GetCode;
} XLA_FFI_Api_V0_4;
#define XLA_FFI_Api_V0_4_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Api_V0_4, XLA_FFI_Error_GetCode)

/* A 0.5 lineage with the same 19-slot layout, slots named as in 0.1. */
typedef struct XLA_FFI_Api_V0_5 {
  XLA_FFI_API_HEADER;
  XLA_FFI_API_SLOTS_0_1;
  XLA_FFI_Error_GetCode* XLA_FFI_Error_GetCode;
} XLA_FFI_Api_V0_5;
#define XLA_FFI_Api_V0_5_STRUCT_SIZE XLA_FFI_STRUCT_SIZE(XLA_FFI_Api_V0_5, XLA_FFI_Error_GetCode)

#ifdef __cplusplus
}
#endif

#endif /* DENO_XLA_FFI_H_ */
