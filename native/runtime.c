/*
 * runtime.c: the embedded XLA FFI runtime's API tables. Implements every
 * function of the XLA_FFI_Api table of each API version it speaks (0.1, 0.2,
 * 0.3, 0.4) with XLA's semantics and messages: errors, execution-context
 * services, state, device memory, the thread pool's API, futures. The
 * runtime objects and their pool live in runtime_pool.c, calls in
 * runtime_call.c, registries in runtime_registry.c, frames in
 * runtime_frame.c, checks in runtime_guard.c.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

_Atomic int64_t xrt_stats[XRT_STAT_COUNT];

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Error* error_from(XLA_FFI_Error_Code code, const char* msg, size_t len) {
  XLA_FFI_Error* e = malloc(sizeof *e);
  if (!e) abort();
  /* Codes outside XLA's enum become UNKNOWN (callers map codes to names). */
  e->code = (uint32_t)code > (uint32_t)XLA_FFI_Error_Code_UNAUTHENTICATED
                ? XLA_FFI_Error_Code_UNKNOWN
                : code;
  e->message = malloc(len + 1);
  if (!e->message) abort();
  memcpy(e->message, msg, len);
  e->message[len] = '\0';
  xrt_live_add(e, XRT_LIVE_ERROR);
  XRT_COUNT(XRT_STAT_ERRORS_CREATED);
  return e;
}

XLA_FFI_Error* xrt_error_new(XLA_FFI_Error_Code code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
  return error_from(code, buf, (size_t)n);
}

void xrt_error_free(XLA_FFI_Error* err) {
  if (!err) return;
  if (!xrt_live_remove(err, XRT_LIVE_ERROR)) {
    xfd_warn("xla_ffi_deno: ignored an XLA_FFI_Error* that is not live (foreign, or already "
             "destroyed): %p",
             (void*)err);
    return;
  }
  free(err->message);
  free(err);
  XRT_COUNT(XRT_STAT_ERRORS_DESTROYED);
}

/* XLA ffi_api.cc StructSizeErrorMsg: "Unexpected %s size: expected %d, got
 * %d. Check installed software versions. The framework XLA FFI API version
 * is %d.%d." */
XLA_FFI_Error* xrt_size_error(const xrt_abi* v, const char* name, size_t expected, size_t actual) {
  return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                       "Unexpected %s size: expected %zu, got %zu. Check installed software "
                       "versions. The framework XLA FFI API version is %d.%d.",
                       name, expected, actual, 0, (int)v->minor);
}

/* The size check of every API function: the struct names are XLA's own (some
 * with "_Args", some without, as ffi_api.cc spells them). A null args pointer
 * is an error here (XLA would crash). */
#define CHECK_SIZE(V, NAME, EXPECTED, ARGS)                                           \
  do {                                                                              \
    if (!(ARGS))                                                                    \
      return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,                     \
                           "%s: the args pointer is null", NAME);                   \
    if ((ARGS)->struct_size < (EXPECTED))                                           \
      return xrt_size_error(V, NAME, EXPECTED, (ARGS)->struct_size);                \
  } while (0)

/* Void API functions only log a failed size check and still act (XLA
 * ffi_api.cc: LOG(ERROR) << struct_size_check.message()). */
static int check_size_log(const xrt_abi* v, const char* name, size_t expected,
                          const size_t* actual_p) {
  if (!actual_p) {
    xfd_warn("%s: the args pointer is null", name);
    return 0;
  }
  if (*actual_p < expected) {
    XLA_FFI_Error* e = xrt_size_error(v, name, expected, *actual_p);
    xfd_warn("%s", e->message);
    xrt_error_free(e);
  }
  return 1;
}

static XLA_FFI_Error* api_error_create(const xrt_abi* v, XLA_FFI_Error_Create_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Error_Create", XLA_FFI_Error_Create_Args_STRUCT_SIZE, args);
  const char* msg = args->message ? args->message : "";
  return error_from(args->errc, msg, strlen(msg));
}

static void api_error_get_message(const xrt_abi* v, XLA_FFI_Error_GetMessage_Args* args) {
  if (!check_size_log(v, "XLA_FFI_Error_GetMessage", XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE,
                      args ? &args->struct_size : NULL))
    return;
  if (args->error && !xrt_live_has(args->error, XRT_LIVE_ERROR)) {
    args->message = "Invalid XLA_FFI_Error*: not created by this runtime, or already destroyed";
    return;
  }
  args->message = args->error ? (args->error->code == XLA_FFI_Error_Code_OK ? ""
                                                                            : args->error->message)
                              : "";
}

static void api_error_destroy(const xrt_abi* v, XLA_FFI_Error_Destroy_Args* args) {
  if (!check_size_log(v, "XLA_FFI_Error_Destroy", XLA_FFI_Error_Destroy_Args_STRUCT_SIZE,
                      args ? &args->struct_size : NULL))
    return;
  xrt_error_free(args->error);
}

/* 0.4: the code of any error this runtime made (API functions, the runtime
 * itself, handlers through Error_Create, TS handlers alike). As XLA, a
 * struct_size that is too small is logged and nothing is written. Safer than
 * XLA: a null error is OK (what a null error means in the ABI), and one that
 * is not live here reads INVALID_ARGUMENT, as GetMessage reports it. */
static void api_error_get_code(const xrt_abi* v, XLA_FFI_Error_GetCode_Args* args) {
  if (!args) {
    xfd_warn("XLA_FFI_Error_GetCode: the args pointer is null");
    return;
  }
  if (args->struct_size < XLA_FFI_Error_GetCode_Args_STRUCT_SIZE) {
    XLA_FFI_Error* e = xrt_size_error(v, "XLA_FFI_Error_GetCode",
                                      XLA_FFI_Error_GetCode_Args_STRUCT_SIZE, args->struct_size);
    xfd_warn("%s", e->message);
    xrt_error_free(e);
    return;
  }
  if (args->error && !xrt_live_has(args->error, XRT_LIVE_ERROR)) {
    xfd_warn("XLA_FFI_Error_GetCode: invalid XLA_FFI_Error* %p: not created by this runtime, or "
             "already destroyed",
             (void*)args->error);
    args->errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return;
  }
  args->errc = args->error ? args->error->code : XLA_FFI_Error_Code_OK;
}

static XLA_FFI_Error* api_handler_register(const xrt_abi* v,
                                           XLA_FFI_Handler_Register_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Handler_Register", XLA_FFI_Handler_Register_Args_STRUCT_SIZE, args);
  return xrt_registry_register(v, args);
}

/* 0.1: TypeId_Register {name, type_id}. XLA checks its size against
 * ExecutionContext_Get's, under that name (both are 40 bytes). */
static XLA_FFI_Error* api_type_id_register(const xrt_abi* v, XLA_FFI_TypeId_Register_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_ExecutionContext_Get_Args",
             XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, args);
  return xrt_type_register(v, &args->name, args->type_id, NULL);
}

/* 0.2+: Type_Register {name, type_id, type_info}. XLA reads type_info at 40
 * whatever struct_size says (STRUCT_SIZE names type_id, 40, so callers pass
 * 40); a null type_info means no deleter here, where XLA would crash. */
static XLA_FFI_Error* api_type_register(const xrt_abi* v, XLA_FFI_Type_Register_Args_V0_2* args) {
  CHECK_SIZE(v, "XLA_FFI_ExecutionContext_Get_Args",
             XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, args);
  void (*deleter)(void*) = args->type_info ? args->type_info->deleter : NULL;
  return xrt_type_register(v, &args->name, args->type_id, deleter);
}

/* ------------------------------------------------------------------------ */
/* Context services                                                          */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Error* no_ctx(void) {
  return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                       "XLA FFI execution context is not available (ctx is null)");
}

/* A null context, or one this runtime did not create (checked by its magic;
 * a pointer to unmapped memory cannot be checked). */
static XLA_FFI_Error* ctx_error(const XLA_FFI_ExecutionContext* ctx) {
  if (!ctx) return no_ctx();
  if (ctx->magic != XRT_CTX_MAGIC)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA_FFI_ExecutionContext* was not created by this runtime");
  return NULL;
}
#define CHECK_CTX(CTX)                          \
  do {                                          \
    XLA_FFI_Error* ctx_err_ = ctx_error(CTX);   \
    if (ctx_err_) return ctx_err_;              \
  } while (0)

/*
 * The backend context a stage gets, as XLA builds it: the instantiate stage
 * has no backend (no stream, thread pool or allocator; run id and device
 * ordinal -1); prepare on GPU has a GPU context without stream or allocator;
 * the other stages have the runtime's platform.
 */
enum { BACKEND_NONE, BACKEND_CPU, BACKEND_GPU };
static int backend_of(const XLA_FFI_ExecutionContext* c) {
  if (c->stage == XLA_FFI_ExecutionStage_INSTANTIATE || !c->rt) return BACKEND_NONE;
  return c->rt->platform == XRT_PLATFORM_CUDA ? BACKEND_GPU : BACKEND_CPU;
}
static int gpu_has_stream(const XLA_FFI_ExecutionContext* c) {
  return c->stage != XLA_FFI_ExecutionStage_PREPARE;
}

static XLA_FFI_Error* api_stream_get(const xrt_abi* v, XLA_FFI_Stream_Get_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Stream_Get", XLA_FFI_Stream_Get_Args_STRUCT_SIZE, args);
  CHECK_CTX(args->ctx);
  /* XLA ffi_api.cc: "XLA FFI GPU context is not available" /
   * "XLA FFI GPU stream is not available" (both UNIMPLEMENTED). */
  if (backend_of(args->ctx) != BACKEND_GPU)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU context is not available");
  xrt_runtime* rt = args->ctx->rt;
  if (!gpu_has_stream(args->ctx) || !rt->stream)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU stream is not available");
  args->stream = rt->stream;
  return NULL;
}

static XLA_FFI_Error* api_execution_context_get(const xrt_abi* v,
                                                XLA_FFI_ExecutionContext_Get_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_ExecutionContext_Get_Args",
             XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, args);
  CHECK_CTX(args->ctx);
  if (!args->type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  int64_t id = args->type_id->type_id;
  XLA_FFI_ExecutionContext* c = args->ctx;
  for (int64_t i = 0; i < c->n_user; i++) {
    if (c->user[2 * i] == id) {
      args->data = (void*)(uintptr_t)c->user[2 * i + 1];
      return NULL;
    }
  }
  /* XLA execution_context.cc: "User data with type id %d not found in
   * execution context" */
  return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                       "User data with type id %lld not found in execution context",
                       (long long)id);
}

/* ---- State: one per instance (0.1, 0.2) or per stage (0.3) -------------- */

/* A type_id pointer that cannot be one. A 0.3 State args struct read through
 * the 0.1/0.2 layout has its stage (0, 1 or 2, and four bytes of padding)
 * where the type_id pointer is expected: an XLA_FFI_TypeId* is 8-byte
 * aligned, so low 32 bits of 1 or 2 are never one, and 0 only at a 4 GiB
 * boundary, which this check gives up. */
static int bad_type_id_ptr(const XLA_FFI_TypeId* p) {
  uintptr_t v = (uintptr_t)p;
  return v < 4096 || (v & 0xffffffffu) <= 2 || (v & 7) != 0;
}

static XLA_FFI_Error* state_of(XLA_FFI_ExecutionContext* ctx, int32_t stage,
                               const XLA_FFI_TypeId* type_id, xrt_state** out) {
  CHECK_CTX(ctx);
  xrt_instance* in = ctx->instance;
  if (!in)
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "No execution state available: call the handler with an instance "
                         "(Runtime.instantiate)");
  /* XLA ffi_api.cc GetExecutionState: the execute stage has no state
   * (DCHECK "Execution stage doesn't have a state"). */
  if (stage == XLA_FFI_ExecutionStage_EXECUTE)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Execution stage doesn't have a state");
  if (stage < 0 || stage >= XRT_STATE_STAGES)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Invalid execution stage %d in the State arguments (are they laid out "
                         "for another XLA FFI API version?)",
                         (int)stage);
  if (!type_id) return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  if (bad_type_id_ptr(type_id))
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "type_id is not a valid pointer (%p): are the State arguments laid out "
                         "for another XLA FFI API version?",
                         (const void*)type_id);
  *out = &in->states[stage];
  return NULL;
}

/* XLA execution_state.cc ExecutionState::Set:
 * "State is already set with a type id %d" */
static XLA_FFI_Error* state_set(xrt_instance* in, xrt_state* s, int64_t type_id, void* state,
                                void (*deleter)(void*)) {
  pthread_mutex_lock(&in->mu);
  if (s->has) {
    int64_t have = s->type_id;
    pthread_mutex_unlock(&in->mu);
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "State is already set with a type id %lld", (long long)have);
  }
  s->has = 1;
  s->type_id = type_id;
  s->state = state;
  s->deleter = deleter;
  pthread_mutex_unlock(&in->mu);
  XRT_COUNT(XRT_STAT_STATES_SET);
  return NULL;
}

/* XLA execution_state.cc ExecutionState::Get: "State is not set" /
 * "Set state type id %d does not match the requested one %d" */
static XLA_FFI_Error* state_get(xrt_instance* in, const xrt_state* s, int64_t type_id,
                                void** out) {
  pthread_mutex_lock(&in->mu);
  int has = s->has;
  int64_t have = s->type_id;
  void* state = s->state;
  pthread_mutex_unlock(&in->mu);
  if (!has) return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND, "State is not set");
  if (have != type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Set state type id %lld does not match the requested one %lld",
                         (long long)have, (long long)type_id);
  *out = state;
  return NULL;
}

/* 0.2+: the deleter comes from the type's registered TypeInfo (XLA
 * execution_state.cc: "Type id %d does not have a registered type info with
 * a deleter"). */
static XLA_FFI_Error* typed_state_set(const xrt_abi* v, XLA_FFI_ExecutionContext* ctx,
                                      int32_t stage, XLA_FFI_TypeId* type_id, void* state) {
  xrt_state* s = NULL;
  XLA_FFI_Error* err = state_of(ctx, stage, type_id, &s);
  if (err) return err;
  void (*deleter)(void*) = NULL;
  err = xrt_type_deleter(v, type_id->type_id, &deleter);
  if (err) return err;
  if (!deleter)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Type id %lld does not have a registered type info with a deleter",
                         (long long)type_id->type_id);
  return state_set(ctx->instance, s, type_id->type_id, state, deleter);
}

static XLA_FFI_Error* typed_state_get(XLA_FFI_ExecutionContext* ctx, int32_t stage,
                                      XLA_FFI_TypeId* type_id, void** out) {
  xrt_state* s = NULL;
  XLA_FFI_Error* err = state_of(ctx, stage, type_id, &s);
  if (err) return err;
  return state_get(ctx->instance, s, type_id->type_id, out);
}

/* 0.1: {ctx, type_id, state, deleter}, the instantiate stage's state. */
static XLA_FFI_Error* api_state_set_v01(const xrt_abi* v, XLA_FFI_State_Set_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_State_Set_Args", XLA_FFI_State_Set_Args_STRUCT_SIZE, args);
  xrt_state* s = NULL;
  XLA_FFI_Error* err =
      state_of(args->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, args->type_id, &s);
  if (err) return err;
  return state_set(args->ctx->instance, s, args->type_id->type_id, args->state, args->deleter);
}

/* 0.1 and 0.2: {ctx, type_id, state}. */
static XLA_FFI_Error* api_state_get_v01(const xrt_abi* v, XLA_FFI_State_Get_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_State_Get_Args", XLA_FFI_State_Get_Args_STRUCT_SIZE, args);
  return typed_state_get(args->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, args->type_id,
                         &args->state);
}

/* 0.2: {ctx, type_id, state}; the deleter from the type registry. */
static XLA_FFI_Error* api_state_set_v02(const xrt_abi* v, XLA_FFI_State_Set_Args_V0_2* args) {
  CHECK_SIZE(v, "XLA_FFI_State_Set_Args", XLA_FFI_State_Set_Args_V0_2_STRUCT_SIZE, args);
  return typed_state_set(v, args->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, args->type_id,
                         args->state);
}

/*
 * 0.3: {ctx, stage, type_id, state}. A 40-byte struct is the 0.2 layout and
 * means the instantiate stage (XLA ffi_api.cc keeps that path for older
 * clients; its 0.3 State_Get did not copy the state back, later versions do,
 * and so does this runtime).
 */
static XLA_FFI_Error* api_state_set_v03(const xrt_abi* v, XLA_FFI_State_Set_Args_V0_3* args) {
  if (args && args->struct_size == XLA_FFI_State_Set_Args_V0_2_STRUCT_SIZE)
    return api_state_set_v02(v, (XLA_FFI_State_Set_Args_V0_2*)args);
  CHECK_SIZE(v, "XLA_FFI_State_Set_Args", XLA_FFI_State_Set_Args_V0_3_STRUCT_SIZE, args);
  return typed_state_set(v, args->ctx, (int32_t)args->stage, args->type_id, args->state);
}

static XLA_FFI_Error* api_state_get_v03(const xrt_abi* v, XLA_FFI_State_Get_Args_V0_3* args) {
  if (args && args->struct_size == XLA_FFI_State_Get_Args_STRUCT_SIZE)
    return api_state_get_v01(v, (XLA_FFI_State_Get_Args*)args);
  CHECK_SIZE(v, "XLA_FFI_State_Get_Args", XLA_FFI_State_Get_Args_V0_3_STRUCT_SIZE, args);
  return typed_state_get(args->ctx, (int32_t)args->stage, args->type_id, &args->state);
}

/* XLA ffi_api.cc orders these checks: GPU context (INVALID_ARGUMENT), then
 * allocator (UNIMPLEMENTED), then alignment (power of two, at most 16). */
static XLA_FFI_Error* api_device_memory_allocate(const xrt_abi* v,
                                                 XLA_FFI_DeviceMemory_Allocate_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_DeviceMemory_Allocate_Args",
             XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, args);
  CHECK_CTX(args->ctx);
  if (backend_of(args->ctx) != BACKEND_GPU)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA FFI GPU context is not available");
  xrt_runtime* rt = args->ctx->rt;
  if (!gpu_has_stream(args->ctx) || !rt->cuda)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No device memory allocator available on this platform");
  size_t a = args->alignment;
  if (a == 0 || (a & (a - 1)) != 0 || a > 16)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Unsupported alignment: %zu", a);
  return xrt_cuda_allocate(rt, args->size, &args->data);
}

static XLA_FFI_Error* api_device_memory_free(const xrt_abi* v,
                                             XLA_FFI_DeviceMemory_Free_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_DeviceMemory_Free_Args", XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE,
             args);
  CHECK_CTX(args->ctx);
  if (backend_of(args->ctx) != BACKEND_GPU)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU context is not available");
  xrt_runtime* rt = args->ctx->rt;
  if (!gpu_has_stream(args->ctx) || !rt->cuda)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No device memory allocator available on this platform");
  return xrt_cuda_free(rt, args->size, args->data);
}

/* XLA ffi_api.cc GetIntraOpThreadPool. */
static XLA_FFI_Error* cpu_pool(XLA_FFI_ExecutionContext* ctx, xrt_runtime** out) {
  CHECK_CTX(ctx);
  if (backend_of(ctx) != BACKEND_CPU)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI CPU context is not available");
  xrt_runtime* rt = ctx->rt;
  if (rt->num_threads <= 0)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No intra-op thread pool available on this platform");
  *out = rt;
  return NULL;
}

static XLA_FFI_Error* api_thread_pool_schedule(const xrt_abi* v,
                                               XLA_FFI_ThreadPool_Schedule_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_ThreadPool_Schedule_Args", XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE,
             args);
  xrt_runtime* rt;
  XLA_FFI_Error* err = cpu_pool(args->ctx, &rt);
  if (err) return err;
  if (!args->task)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "task must not be null");
  xrt_task* t = malloc(sizeof *t);
  if (!t) abort();
  t->fn = args->task;
  t->data = args->data;
  t->next = NULL;
  pthread_mutex_lock(&rt->mu);
  if (rt->stopping) {
    pthread_mutex_unlock(&rt->mu);
    free(t);
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "The runtime's thread pool is shutting down");
  }
  if (rt->tail)
    rt->tail->next = t;
  else
    rt->head = t;
  rt->tail = t;
  XRT_COUNT(XRT_STAT_TASKS_SCHEDULED);
  pthread_cond_signal(&rt->cv);
  pthread_mutex_unlock(&rt->mu);
  return NULL;
}

static XLA_FFI_Error* api_thread_pool_num_threads(const xrt_abi* v,
                                                  XLA_FFI_ThreadPool_NumThreads_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_ThreadPool_NumThreads_Args",
             XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, args);
  xrt_runtime* rt;
  XLA_FFI_Error* err = cpu_pool(args->ctx, &rt);
  if (err) return err;
  if (!args->num_threads)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "num_threads must not be null");
  *args->num_threads = rt->num_threads;
  return NULL;
}

/* The instantiate stage has no run id or device ordinal (-1, XLA's unset). */
static XLA_FFI_Error* api_run_id_get(const xrt_abi* v, XLA_FFI_RunId_Get_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_RunId_Get", XLA_FFI_RunId_Get_Args_STRUCT_SIZE, args);
  CHECK_CTX(args->ctx);
  args->run_id = backend_of(args->ctx) == BACKEND_NONE && args->ctx->rt ? -1 : args->ctx->run_id;
  return NULL;
}

static XLA_FFI_Error* api_device_ordinal_get(const xrt_abi* v,
                                             XLA_FFI_DeviceOrdinal_Get_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_DeviceOrdinal_Get", XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, args);
  CHECK_CTX(args->ctx);
  xrt_runtime* rt = args->ctx->rt;
  if (backend_of(args->ctx) == BACKEND_NONE && rt)
    args->device_ordinal = -1;
  else
    args->device_ordinal = rt && rt->cuda ? xrt_cuda_device(rt) : args->ctx->device_ordinal;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Futures: one waiter (the runtime), completed once from any thread         */
/* ------------------------------------------------------------------------ */

/* Called (outside the future's lock) when a future with `notify` completes. */
typedef void (*xrt_notify_fn)(void* handle);
static _Atomic(xrt_notify_fn) g_notify;

/** Sets the completion callback of the calls xla_ffi_deno_runtime_call begins (pending futures). */
void xla_ffi_deno_runtime_set_notify(void* fn) { atomic_store(&g_notify, (xrt_notify_fn)fn); }

void xrt_future_free(XLA_FFI_Future* f) {
  xrt_live_remove(f, XRT_LIVE_FUTURE);
  xrt_error_free(f->error);
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->cv);
  free(f);
  XRT_COUNT(XRT_STAT_FUTURES_DESTROYED);
}

static XLA_FFI_Error* api_future_create(const xrt_abi* v, XLA_FFI_Future_Create_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Future_Create", XLA_FFI_Future_Create_Args_STRUCT_SIZE, args);
  XLA_FFI_Future* f = calloc(1, sizeof *f);
  if (!f) abort();
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  xrt_live_add(f, XRT_LIVE_FUTURE);
  XRT_COUNT(XRT_STAT_FUTURES_CREATED);
  args->future = f;
  return NULL;
}

/* The registry's shard lock is held while the future's mutex is used: the
 * waiter cannot release the future (future_free unregisters it first) until
 * this completer is done with it. A future that is not live (foreign, or
 * completed and released) is an error, not undefined behaviour. On success
 * the future owns `error`; on failure it stays the caller's. */
static XLA_FFI_Error* future_complete(XLA_FFI_Future* f, XLA_FFI_Error* error) {
  if (!xrt_live_lock(f, XRT_LIVE_FUTURE)) {
    xrt_live_unlock(f);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA_FFI_Future* is not a live future of this runtime (not created by "
                         "it, or already completed and released)");
  }
  pthread_mutex_lock(&f->mu);
  if (f->state != FUT_PENDING) {
    pthread_mutex_unlock(&f->mu);
    xrt_live_unlock(f);
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "XLA_FFI_Future is already completed");
  }
  f->state = error ? FUT_ERROR : FUT_OK;
  f->error = error;
  int orphaned = f->orphaned;
  void* notify = f->notify;
  if (!orphaned) pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  xrt_live_unlock(f);
  if (orphaned) {
    xrt_future_free(f);
  } else if (notify != NULL) {
    xrt_notify_fn fn = atomic_load(&g_notify);
    if (fn) fn(notify);
  }
  return NULL;
}

static XLA_FFI_Error* api_future_set_available(const xrt_abi* v,
                                               XLA_FFI_Future_SetAvailable_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Future_SetAvailable", XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE,
             args);
  if (!args->future)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Future must not be null");
  return future_complete(args->future, NULL);
}

/* XLA ffi_api.cc: a null or OK error is refused ("Error must not be null or
 * OK") and stays the caller's; only a successful call takes it over. */
static XLA_FFI_Error* api_future_set_error(const xrt_abi* v,
                                           XLA_FFI_Future_SetError_Args* args) {
  CHECK_SIZE(v, "XLA_FFI_Future_SetError", XLA_FFI_Future_SetError_Args_STRUCT_SIZE, args);
  if (args->error && !xrt_live_has(args->error, XRT_LIVE_ERROR))
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Error is not a live XLA_FFI_Error of this runtime");
  if (args->error == NULL || args->error->code == XLA_FFI_Error_Code_OK)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Error must not be null or OK");
  if (!args->future)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Future must not be null");
  return future_complete(args->future, args->error);
}

/* Waits for completion; returns the future's error (owned by the caller). */
XLA_FFI_Error* xrt_future_wait_take(XLA_FFI_Future* f) {
  pthread_mutex_lock(&f->mu);
  while (f->state == FUT_PENDING) pthread_cond_wait(&f->cv, &f->mu);
  XLA_FFI_Error* e = f->error;
  f->error = NULL;
  pthread_mutex_unlock(&f->mu);
  xrt_future_free(f);
  return e;
}

/* Takes the result if complete (returns 1), else orphans the future. */
int xrt_future_take_or_orphan(XLA_FFI_Future* f, XLA_FFI_Error** out) {
  pthread_mutex_lock(&f->mu);
  if (f->state == FUT_PENDING) {
    f->orphaned = 1;
    pthread_mutex_unlock(&f->mu);
    return 0;
  }
  *out = f->error;
  f->error = NULL;
  pthread_mutex_unlock(&f->mu);
  xrt_future_free(f);
  return 1;
}

/**
 * Releases a future a handler left in a call frame that the caller laid out
 * itself (test harnesses, the fuzzer: they play XLA's part): a completed one
 * is freed, a pending one is orphaned (its completer frees it). Returns 0, or
 * -1 when `f` is not a live future of this runtime.
 */
int32_t xla_ffi_deno_runtime_future_release(XLA_FFI_Future* f) {
  if (!xrt_live_has(f, XRT_LIVE_FUTURE)) return -1;
  XLA_FFI_Error* e = NULL;
  if (xrt_future_take_or_orphan(f, &e)) xrt_error_free(e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The API tables: one per version                                           */
/* ------------------------------------------------------------------------ */

/* Each API function above takes its version first; these wrappers bind it,
 * one per version and function, for the tables below. */
#define XRT_BIND(R, FN, T)                                              \
  static R FN##_1(T* a) { return FN(&xrt_abis[0], a); }                 \
  static R FN##_2(T* a) { return FN(&xrt_abis[1], a); }                 \
  static R FN##_3(T* a) { return FN(&xrt_abis[2], a); }                 \
  static R FN##_4(T* a) { return FN(&xrt_abis[3], a); }
#define XRT_BIND_VOID(FN, T)                                            \
  static void FN##_1(T* a) { FN(&xrt_abis[0], a); }                     \
  static void FN##_2(T* a) { FN(&xrt_abis[1], a); }                     \
  static void FN##_3(T* a) { FN(&xrt_abis[2], a); }                     \
  static void FN##_4(T* a) { FN(&xrt_abis[3], a); }
#define XRT_BIND_VOID_ONE(FN, T, I)                                     \
  static void FN##_##I(T* a) { FN(&xrt_abis[(I) - 1], a); }
#define XRT_BIND_ONE(R, FN, T, I)                                       \
  static R FN##_##I(T* a) { return FN(&xrt_abis[(I) - 1], a); }

XRT_BIND(XLA_FFI_Error*, api_error_create, XLA_FFI_Error_Create_Args)
XRT_BIND_VOID(api_error_get_message, XLA_FFI_Error_GetMessage_Args)
XRT_BIND_VOID(api_error_destroy, XLA_FFI_Error_Destroy_Args)
XRT_BIND(XLA_FFI_Error*, api_handler_register, XLA_FFI_Handler_Register_Args)
XRT_BIND(XLA_FFI_Error*, api_stream_get, XLA_FFI_Stream_Get_Args)
XRT_BIND_ONE(XLA_FFI_Error*, api_type_id_register, XLA_FFI_TypeId_Register_Args, 1)
XRT_BIND_ONE(XLA_FFI_Error*, api_type_register, XLA_FFI_Type_Register_Args_V0_2, 2)
XRT_BIND_ONE(XLA_FFI_Error*, api_type_register, XLA_FFI_Type_Register_Args_V0_2, 3)
XRT_BIND_ONE(XLA_FFI_Error*, api_type_register, XLA_FFI_Type_Register_Args_V0_2, 4)
XRT_BIND(XLA_FFI_Error*, api_execution_context_get, XLA_FFI_ExecutionContext_Get_Args)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_set_v01, XLA_FFI_State_Set_Args, 1)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_get_v01, XLA_FFI_State_Get_Args, 1)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_set_v02, XLA_FFI_State_Set_Args_V0_2, 2)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_get_v01, XLA_FFI_State_Get_Args, 2)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_set_v03, XLA_FFI_State_Set_Args_V0_3, 3)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_get_v03, XLA_FFI_State_Get_Args_V0_3, 3)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_set_v03, XLA_FFI_State_Set_Args_V0_3, 4)
XRT_BIND_ONE(XLA_FFI_Error*, api_state_get_v03, XLA_FFI_State_Get_Args_V0_3, 4)
XRT_BIND_VOID_ONE(api_error_get_code, XLA_FFI_Error_GetCode_Args, 4)
XRT_BIND(XLA_FFI_Error*, api_device_memory_allocate, XLA_FFI_DeviceMemory_Allocate_Args)
XRT_BIND(XLA_FFI_Error*, api_device_memory_free, XLA_FFI_DeviceMemory_Free_Args)
XRT_BIND(XLA_FFI_Error*, api_thread_pool_schedule, XLA_FFI_ThreadPool_Schedule_Args)
XRT_BIND(XLA_FFI_Error*, api_thread_pool_num_threads, XLA_FFI_ThreadPool_NumThreads_Args)
XRT_BIND(XLA_FFI_Error*, api_future_create, XLA_FFI_Future_Create_Args)
XRT_BIND(XLA_FFI_Error*, api_future_set_available, XLA_FFI_Future_SetAvailable_Args)
XRT_BIND(XLA_FFI_Error*, api_future_set_error, XLA_FFI_Future_SetError_Args)
XRT_BIND(XLA_FFI_Error*, api_run_id_get, XLA_FFI_RunId_Get_Args)
XRT_BIND(XLA_FFI_Error*, api_device_ordinal_get, XLA_FFI_DeviceOrdinal_Get_Args)

#define XRT_COMMON_SLOTS(I)                                              \
  .XLA_FFI_Error_Create = api_error_create_##I,                          \
  .XLA_FFI_Error_GetMessage = api_error_get_message_##I,                 \
  .XLA_FFI_Error_Destroy = api_error_destroy_##I,                        \
  .XLA_FFI_Handler_Register = api_handler_register_##I,                  \
  .XLA_FFI_Stream_Get = api_stream_get_##I,                              \
  .XLA_FFI_ExecutionContext_Get = api_execution_context_get_##I,         \
  .XLA_FFI_DeviceMemory_Allocate = api_device_memory_allocate_##I,       \
  .XLA_FFI_DeviceMemory_Free = api_device_memory_free_##I,               \
  .XLA_FFI_ThreadPool_Schedule = api_thread_pool_schedule_##I,           \
  .XLA_FFI_ThreadPool_NumThreads = api_thread_pool_num_threads_##I,      \
  .XLA_FFI_Future_Create = api_future_create_##I,                        \
  .XLA_FFI_Future_SetAvailable = api_future_set_available_##I,           \
  .XLA_FFI_Future_SetError = api_future_set_error_##I,                   \
  .XLA_FFI_RunId_Get = api_run_id_get_##I,                               \
  .XLA_FFI_DeviceOrdinal_Get = api_device_ordinal_get_##I

#define XRT_HEADER(MINOR, SIZE)                                                      \
  .struct_size = (SIZE), .extension_start = NULL,                                    \
  .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, 0, MINOR}, .internal_api = NULL

static const XLA_FFI_Api g_api_v01 = {
    XRT_HEADER(1, XLA_FFI_Api_STRUCT_SIZE),
    XRT_COMMON_SLOTS(1),
    .XLA_FFI_TypeId_Register = api_type_id_register_1,
    .XLA_FFI_State_Set = api_state_set_v01_1,
    .XLA_FFI_State_Get = api_state_get_v01_1,
};

static const XLA_FFI_Api_V0_2 g_api_v02 = {
    XRT_HEADER(2, XLA_FFI_Api_STRUCT_SIZE),
    XRT_COMMON_SLOTS(2),
    .XLA_FFI_Type_Register = api_type_register_2,
    .XLA_FFI_State_Set = (void*)api_state_set_v02_2,
    .XLA_FFI_State_Get = (void*)api_state_get_v01_2,
};

static const XLA_FFI_Api_V0_2 g_api_v03 = {
    XRT_HEADER(3, XLA_FFI_Api_STRUCT_SIZE),
    XRT_COMMON_SLOTS(3),
    .XLA_FFI_Type_Register = api_type_register_3,
    .XLA_FFI_State_Set = (void*)api_state_set_v03_3,
    .XLA_FFI_State_Get = (void*)api_state_get_v03_3,
};

/* 0.4: 0.3's table and Error_GetCode (200 bytes). */
static const XLA_FFI_Api_V0_4 g_api_v04 = {
    XRT_HEADER(4, XLA_FFI_Api_V0_4_STRUCT_SIZE),
    XRT_COMMON_SLOTS(4),
    .XLA_FFI_Type_Register = api_type_register_4,
    .XLA_FFI_State_Set = (void*)api_state_set_v03_4,
    .XLA_FFI_State_Get = (void*)api_state_get_v03_4,
    .XLA_FFI_Error_GetCode = api_error_get_code_4,
};

/* 0.2 and 0.3 tables have the 0.1 layout (slot types aside); 0.4 extends it. */
_Static_assert(sizeof(XLA_FFI_Api_V0_2) == sizeof(XLA_FFI_Api), "API table layouts differ");
_Static_assert(offsetof(XLA_FFI_Api_V0_4, XLA_FFI_Error_GetCode) == sizeof(XLA_FFI_Api),
               "0.4 does not extend the 0.3 table");

const xrt_abi xrt_abis[XRT_ABI_COUNT] = {
    {0, 1, &g_api_v01},
    {1, 2, (const XLA_FFI_Api*)&g_api_v02},
    {2, 3, (const XLA_FFI_Api*)&g_api_v03},
    {3, 4, (const XLA_FFI_Api*)&g_api_v04},
};

const xrt_abi* xrt_abi_for(int32_t minor) {
  for (int i = 0; i < XRT_ABI_COUNT; i++)
    if (xrt_abis[i].minor == minor) return &xrt_abis[i];
  return NULL;
}

/** The XLA_FFI_Api table of API version 0.minor (NULL when not spoken). */
const XLA_FFI_Api* xla_ffi_deno_runtime_api_version(int32_t minor) {
  const xrt_abi* v = xrt_abi_for(minor);
  return v ? v->api : NULL;
}

int xrt_is_own_api(const XLA_FFI_Api* api) {
  for (int i = 0; i < XRT_ABI_COUNT; i++)
    if (xrt_abis[i].api == api) return 1;
  return 0;
}

/** The runtime's default XLA_FFI_Api table (the newest version). */
const XLA_FFI_Api* xla_ffi_deno_runtime_newest_api(void) {
  return xla_ffi_deno_runtime_api_version(XRT_ABI_NEWEST_MINOR);
}

/* What the TS handler host (handler_host.h) needs to know of this runtime:
 * its API tables and context tag (TS entry points check its frames'
 * contexts), and the CUDA context its queued calls need on the JS thread.
 * Installed when the library loads, before any call. */
static const XLA_FFI_Api* const g_own_apis[XRT_ABI_COUNT] = {
    &g_api_v01, (const XLA_FFI_Api*)&g_api_v02, (const XLA_FFI_Api*)&g_api_v03,
    (const XLA_FFI_Api*)&g_api_v04};
static const xla_ffi_deno_host_hooks g_host_hooks = {
    .struct_size = sizeof(xla_ffi_deno_host_hooks),
    .own_apis = g_own_apis,
    .own_api_count = XRT_ABI_COUNT,
    .ctx_tag = XRT_CTX_MAGIC,
    .queued_capture = xrt_cuda_queued_capture,
    .queued_enter = xrt_cuda_queued_enter,
    .queued_leave = xrt_cuda_queued_leave,
};

__attribute__((constructor)) static void install_host_hooks(void) {
  xla_ffi_deno_host_install(&g_host_hooks);
}

/* ------------------------------------------------------------------------ */
/* Entry points for TypeScript: errors and debug counters                   */
/* ------------------------------------------------------------------------ */

int32_t xla_ffi_deno_runtime_error_code(XLA_FFI_Error* e) {
  if (e && !xrt_live_has(e, XRT_LIVE_ERROR)) return XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return e ? (int32_t)e->code : 0;
}
const char* xla_ffi_deno_runtime_error_message(XLA_FFI_Error* e) {
  if (e && !xrt_live_has(e, XRT_LIVE_ERROR))
    return "Invalid XLA_FFI_Error*: not created by this runtime, or already destroyed";
  return e ? e->message : "";
}
void xla_ffi_deno_runtime_error_destroy(XLA_FFI_Error* e) { xrt_error_free(e); }

/** Copies up to n debug counters into out; returns how many exist. */
int32_t xla_ffi_deno_runtime_debug_stats(int64_t* out, int32_t n) {
  for (int32_t i = 0; i < n && i < XRT_STAT_COUNT; i++)
    out[i] = atomic_load_explicit(&xrt_stats[i], memory_order_relaxed);
  return XRT_STAT_COUNT;
}

