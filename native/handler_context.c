/*
 * handler_context.c: what a TS handler asks of the runtime that called it
 * (run id, device ordinal, stream, user data, scratch memory, thread pool,
 * state), through that runtime's own API table. TS passes the frame's api
 * and context pointers; results come back in the aux block.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"
#include "xla_ffi_versions.h"

#define STATE_TYPE_ID 0x5453535441544531LL /* explicit id of the TS state type */

/* ---------------------------------------------------------------------- */
/* Context helpers: addresses travel as doubles (exact below 2^53)         */
/* ---------------------------------------------------------------------- */

#define API(a) ((const XLA_FFI_Api*)(uintptr_t)(a))
#define CTX(c) ((XLA_FFI_ExecutionContext*)(uintptr_t)(c))

static void aux_value(double v) { if (g_aux) memcpy(g_aux, &v, 8); }

static int32_t aux_text(const char* text) {
  if (g_aux) {
    int32_t n = (int32_t)strnlen(text, MSG_CAP - AUX_MSG_OFFSET - 1);
    memcpy(g_aux + AUX_MSG_OFFSET, text, (size_t)n);
    ((int32_t*)g_aux)[2] = n;
  }
  return 1;
}

/* The error's message into the aux block (the error is destroyed). */
static int32_t aux_error(const XLA_FFI_Api* api, XLA_FFI_Error* err) {
  char buf[MSG_CAP];
  host_take_message(api, err, buf, sizeof buf);
  return aux_text(buf);
}

#define NEED(api, fn)                                                     \
  do {                                                                    \
    if ((api) == NULL) return aux_text("no XLA_FFI_Api in the call frame"); \
    if ((api)->fn == NULL) return aux_text("the runtime does not implement " #fn); \
  } while (0)

/* The runtime's XLA_FFI_<fn>: `a` is its zeroed args with struct_size and ctx
 * set (ARGS); CALL calls it and returns a failure as the aux error. */
#define ARGS(api, fn, a)                           \
  NEED(api, XLA_FFI_##fn);                         \
  XLA_FFI_##fn##_Args a;                           \
  memset(&a, 0, sizeof a);                         \
  a.struct_size = XLA_FFI_##fn##_Args_STRUCT_SIZE; \
  a.ctx = CTX(ctx)

#define CALL(api, fn, a)                               \
  do {                                                 \
    XLA_FFI_Error* e_ = (api)->XLA_FFI_##fn(&(a));     \
    if (e_) return aux_error(api, e_);                 \
  } while (0)

int32_t xla_ffi_deno_ctx_run_id(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, RunId_Get, a);
  CALL(api, RunId_Get, a);
  aux_value((double)a.run_id);
  return 0;
}

int32_t xla_ffi_deno_ctx_device_ordinal(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, DeviceOrdinal_Get, a);
  CALL(api, DeviceOrdinal_Get, a);
  aux_value((double)a.device_ordinal);
  return 0;
}

int32_t xla_ffi_deno_ctx_stream(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, Stream_Get, a);
  CALL(api, Stream_Get, a);
  aux_value((double)(uintptr_t)a.stream);
  return 0;
}

int32_t xla_ffi_deno_ctx_user_data(double api_d, double ctx, double type_id) {
  const XLA_FFI_Api* api = API(api_d);
  XLA_FFI_TypeId id = {(int64_t)type_id};
  ARGS(api, ExecutionContext_Get, a);
  a.type_id = &id;
  CALL(api, ExecutionContext_Get, a);
  aux_value((double)(uintptr_t)a.data);
  return 0;
}

int32_t xla_ffi_deno_ctx_scratch_alloc(double api_d, double ctx, double size, double align) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, DeviceMemory_Allocate, a);
  a.size = (size_t)size;
  a.alignment = (size_t)align;
  CALL(api, DeviceMemory_Allocate, a);
  aux_value((double)(uintptr_t)a.data);
  return 0;
}

int32_t xla_ffi_deno_ctx_scratch_free(double api_d, double ctx, double size, double data) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, DeviceMemory_Free, a);
  a.size = (size_t)size;
  a.data = (void*)(uintptr_t)data;
  CALL(api, DeviceMemory_Free, a);
  return 0;
}

int32_t xla_ffi_deno_ctx_num_threads(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  int64_t n = 0;
  ARGS(api, ThreadPool_NumThreads, a);
  a.num_threads = &n;
  CALL(api, ThreadPool_NumThreads, a);
  aux_value((double)n);
  return 0;
}

int32_t xla_ffi_deno_ctx_schedule(double api_d, double ctx, double task, double data) {
  const XLA_FFI_Api* api = API(api_d);
  ARGS(api, ThreadPool_Schedule, a);
  a.task = (XLA_FFI_Task*)(uintptr_t)task;
  a.data = (void*)(uintptr_t)data;
  CALL(api, ThreadPool_Schedule, a);
  return 0;
}

/* ---- State: TS objects live in a TS table; the runtime holds a key box. ---- */

static pthread_mutex_t g_dead_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t* g_dead;
static int64_t g_dead_n, g_dead_cap;

static void state_deleter(void* p) {
  int64_t key = *(int64_t*)p;
  free(p);
  pthread_mutex_lock(&g_dead_mu);
  if (g_dead_n == g_dead_cap) {
    int64_t cap = g_dead_cap ? g_dead_cap * 2 : 64;
    int64_t* d = realloc(g_dead, (size_t)cap * sizeof(int64_t));
    if (d) {
      g_dead = d;
      g_dead_cap = cap;
    }
  }
  if (g_dead_n < g_dead_cap) g_dead[g_dead_n++] = key;
  pthread_mutex_unlock(&g_dead_mu);
}

/* Returns the key of a state the runtime deleted, or -1 when none is left. */
double xla_ffi_deno_handler_dead_state(void) {
  double k = -1;
  pthread_mutex_lock(&g_dead_mu);
  if (g_dead_n > 0) k = (double)g_dead[--g_dead_n];
  pthread_mutex_unlock(&g_dead_mu);
  return k;
}

/*
 * The runtime's API version decides the State/Type layouts (not the
 * handler's): xla_ffi_versions.h picks them from `api->api_version`.
 */

/* Runtimes (by table) the TS state type is registered with; registration is
 * idempotent (same name, same id), this only saves the call. */
#define REGISTERED_APIS 64
static pthread_mutex_t g_type_mu = PTHREAD_MUTEX_INITIALIZER;
static const XLA_FFI_Api* g_type_apis[REGISTERED_APIS];
static int g_type_apis_n;

static int type_registered(const XLA_FFI_Api* api) {
  pthread_mutex_lock(&g_type_mu);
  int found = 0;
  for (int i = 0; i < g_type_apis_n && !found; i++) found = g_type_apis[i] == api;
  pthread_mutex_unlock(&g_type_mu);
  return found;
}

static void type_remember(const XLA_FFI_Api* api) {
  pthread_mutex_lock(&g_type_mu);
  if (g_type_apis_n < REGISTERED_APIS) g_type_apis[g_type_apis_n++] = api;
  pthread_mutex_unlock(&g_type_mu);
}

static const char kStateTypeName[] = "deno_xla_ffi.TsHandlerState";

static int32_t register_state_type(const XLA_FFI_Api* api, XLA_FFI_TypeId* id) {
  id->type_id = STATE_TYPE_ID;
  if (type_registered(api)) return 0;
  if (xla_ffi_api_minor(api) <= 1 ? api->XLA_FFI_TypeId_Register == NULL
                                  : ((const XLA_FFI_Api_V0_2*)api)->XLA_FFI_Type_Register == NULL)
    return aux_text("the runtime does not implement type registration");
  XLA_FFI_Error* e =
      xla_ffi_type_register(api, kStateTypeName, sizeof kStateTypeName - 1, id, state_deleter);
  if (e) return aux_error(api, e);
  type_remember(api);
  return 0;
}

/* Stores a TS state (its key, boxed) for `stage` through the runtime's
 * State_Set; the runtime deletes the box with the instance. */
int32_t xla_ffi_deno_ctx_state_set(double api_d, double ctx, double key, int32_t stage) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_State_Set);
  if (xla_ffi_api_minor(api) < 3 && stage != XLA_FFI_ExecutionStage_INSTANTIATE)
    return aux_text("only instantiate handlers can set a state before XLA FFI API 0.3");
  XLA_FFI_TypeId id;
  if (register_state_type(api, &id)) return 1;
  int64_t* box = malloc(sizeof(int64_t));
  if (box == NULL) return aux_text("Out of memory");
  *box = (int64_t)key;
  XLA_FFI_Error* e =
      xla_ffi_state_set(api, CTX(ctx), (XLA_FFI_ExecutionStage)stage, &id, box, state_deleter);
  if (e) {
    free(box);
    return aux_error(api, e);
  }
  return 0;
}

/* The key of the TS state of `stage` (-1: the runtime holds no TS state). */
int32_t xla_ffi_deno_ctx_state_get(double api_d, double ctx, int32_t stage) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_State_Get);
  if (xla_ffi_api_minor(api) < 3 && stage != XLA_FFI_ExecutionStage_INSTANTIATE)
    return aux_text("only the instantiate stage has a state before XLA FFI API 0.3");
  XLA_FFI_TypeId id = {STATE_TYPE_ID};
  void* state = NULL;
  XLA_FFI_Error* e = xla_ffi_state_get(api, CTX(ctx), (XLA_FFI_ExecutionStage)stage, &id, &state);
  if (e) return aux_error(api, e);
  aux_value(state ? (double)*(int64_t*)state : -1);
  return 0;
}
