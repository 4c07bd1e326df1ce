/*
 * runtime.c: the embedded XLA FFI runtime. Implements every function of the
 * XLA_FFI_Api table (ABI 0.1) with XLA's semantics and messages, a handler and
 * type registry, per-call execution contexts, futures, handler instances with
 * state, and a pthread pool; plus the entry points the TypeScript side calls.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime_internal.h"

_Atomic int64_t xrt_stats[XRT_STAT_COUNT];

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char* message;
};

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
    xrt_warn("xla_ffi_deno: ignored an XLA_FFI_Error* that is not live (foreign, or already "
             "destroyed): %p",
             (void*)err);
    return;
  }
  free(err->message);
  free(err);
  XRT_COUNT(XRT_STAT_ERRORS_DESTROYED);
}

static XLA_FFI_Error* size_error(const char* name, size_t expected, size_t actual) {
  return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                       "Unexpected %s size: expected %zu, got %zu. Check installed software "
                       "versions. The framework XLA FFI API version is %d.%d.",
                       name, expected, actual, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
}

#define CHECK_SIZE(NAME, ARGS)                                                         \
  do {                                                                                 \
    if (!(ARGS))                                                                       \
      return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,                        \
                           #NAME ": the args pointer is null");                        \
    if ((ARGS)->struct_size < NAME##_Args_STRUCT_SIZE)                                 \
      return size_error(#NAME, NAME##_Args_STRUCT_SIZE, (ARGS)->struct_size);          \
  } while (0)

/* Void API functions only log a failed size check (as XLA does). */
static int check_size_log(const char* name, size_t expected, const size_t* actual_p) {
  if (!actual_p) {
    xrt_warn("%s: the args pointer is null", name);
    return 0;
  }
  size_t actual = *actual_p;
  if (actual >= expected) return 1;
  XLA_FFI_Error* e = size_error(name, expected, actual);
  xrt_warn("%s", e->message);
  xrt_error_free(e);
  return 0;
}

static XLA_FFI_Error* api_error_create(XLA_FFI_Error_Create_Args* args) {
  CHECK_SIZE(XLA_FFI_Error_Create, args);
  const char* msg = args->message ? args->message : "";
  return error_from(args->errc, msg, strlen(msg));
}

static void api_error_get_message(XLA_FFI_Error_GetMessage_Args* args) {
  if (!check_size_log("XLA_FFI_Error_GetMessage", XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE,
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

static void api_error_destroy(XLA_FFI_Error_Destroy_Args* args) {
  if (!check_size_log("XLA_FFI_Error_Destroy", XLA_FFI_Error_Destroy_Args_STRUCT_SIZE,
                      args ? &args->struct_size : NULL))
    return;
  xrt_error_free(args->error);
}

/* ------------------------------------------------------------------------ */
/* Handler registry (process-wide, like XLA's static registry)               */
/* ------------------------------------------------------------------------ */

typedef struct reg_entry {
  char* name;
  size_t name_len;
  int32_t platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
  struct reg_entry* next;
} reg_entry;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static reg_entry* reg_head;

static const char* const kPlatformNames[] = {"host", "cuda"};

/* Canonical platform for XLA's aliases; -1 when unknown. */
static int32_t canonical_platform(const char* p, size_t n) {
  static const char* const host[] = {"Host", "host", "cpu", "Cpu", "CPU", "HOST"};
  static const char* const cuda[] = {"CUDA", "cuda", "gpu", "GPU", "Cuda", "Gpu"};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++)
    if (strlen(host[i]) == n && memcmp(host[i], p, n) == 0) return XRT_PLATFORM_HOST;
  for (size_t i = 0; i < sizeof cuda / sizeof *cuda; i++)
    if (strlen(cuda[i]) == n && memcmp(cuda[i], p, n) == 0) return XRT_PLATFORM_CUDA;
  return -1;
}

/* Queries a handler's metadata (spec §5.2) into a 48-byte Metadata. */
static XLA_FFI_Error* query_metadata(XLA_FFI_Handler* h, XLA_FFI_Metadata_V0_2* md) {
  memset(md, 0, sizeof *md);
  /* A released TS entry point cannot answer (the query has no api to make an
   * error with): say so instead of reporting API version 0.0. */
  int32_t released = xla_ffi_deno_handler_released_slot((void*)h);
  if (released >= 0)
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "TS handler entry point %d was released", (int)released);
  md->struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  md->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = (XLA_FFI_Metadata*)md;
  XLA_FFI_CallFrame cf;
  memset(&cf, 0, sizeof cf);
  cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  cf.extension_start = &ext.extension_base;
  cf.api = NULL;
  cf.stage = XLA_FFI_ExecutionStage_EXECUTE;
  cf.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  cf.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  cf.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  XLA_FFI_Error* err = h(&cf);
  if (err && err->code == XLA_FFI_Error_Code_OK) {
    xrt_error_free(err);
    err = NULL;
  }
  return err;
}

/* A name's ByteSpan: not null with a length, at most XRT_MAX_NAME bytes. */
static XLA_FFI_Error* check_name(const XLA_FFI_ByteSpan* s, const char* what) {
  if (s->len > XRT_MAX_NAME)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "The %s is %zu bytes long: the limit is %d", what, s->len,
                         XRT_MAX_NAME);
  if (!s->ptr && s->len > 0)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "The %s is null with length %zu", what, s->len);
  return NULL;
}

static XLA_FFI_Error* api_handler_register(XLA_FFI_Handler_Register_Args* args) {
  CHECK_SIZE(XLA_FFI_Handler_Register, args);
  XLA_FFI_Error* bad = check_name(&args->name, "handler name");
  if (!bad) bad = check_name(&args->platform, "platform name");
  if (bad) return bad;
  const char* name = args->name.ptr ? args->name.ptr : "";
  int nl = (int)args->name.len;
  const char* plat = args->platform.ptr ? args->platform.ptr : "";
  int pl = (int)args->platform.len;
  int32_t canon = canonical_platform(plat, (size_t)pl);
  if (canon < 0)
    return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                         "Could not find registered platform with name: \"%.*s\". Available "
                         "platform names are: Host CUDA",
                         pl, plat);
  if (args->bundle.execute == NULL)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "FFI handler for %.*s on a platform %.*s must provide an execute "
                         "implementation",
                         nl, name, pl, plat);
  XLA_FFI_Metadata_V0_2 md;
  XLA_FFI_Error* err = query_metadata(args->bundle.execute, &md);
  if (err) return err;
  if (md.api_version.major_version != XLA_FFI_API_MAJOR ||
      md.api_version.minor_version != XLA_FFI_API_MINOR)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "FFI handler registration for %.*s on platform %.*s (canonical %s) "
                         "failed because the handler's API version (%d.%d) is incompatible "
                         "with the framework's API version (%d.%d)",
                         nl, name, pl, plat, kPlatformNames[canon],
                         md.api_version.major_version, md.api_version.minor_version,
                         XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  XLA_FFI_Handler_Traits traits = args->traits | md.traits;
  pthread_mutex_lock(&reg_mu);
  for (reg_entry* e = reg_head; e; e = e->next) {
    if (e->platform != canon || e->name_len != (size_t)nl || memcmp(e->name, name, (size_t)nl))
      continue;
    const char* what = NULL;
    if (e->traits != traits)
      what = "traits";
    else if (e->bundle.prepare != args->bundle.prepare ||
             e->bundle.initialize != args->bundle.initialize ||
             e->bundle.execute != args->bundle.execute)
      what = "bundle addresses";
    pthread_mutex_unlock(&reg_mu);
    if (!what) return NULL;
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Duplicate FFI handler registration for %.*s on platform %.*s "
                         "(canonical %s) with different %s",
                         nl, name, pl, plat, kPlatformNames[canon], what);
  }
  reg_entry* e = calloc(1, sizeof *e);
  if (!e) abort();
  e->name = malloc((size_t)nl + 1);
  if (!e->name) abort();
  memcpy(e->name, name, (size_t)nl);
  e->name[nl] = '\0';
  e->name_len = (size_t)nl;
  e->platform = canon;
  e->bundle = args->bundle;
  e->traits = traits;
  e->next = reg_head;
  reg_head = e;
  pthread_mutex_unlock(&reg_mu);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Type registry                                                             */
/* ------------------------------------------------------------------------ */

typedef struct type_entry {
  char* name;
  size_t len;
  int64_t id;
  struct type_entry* next;
} type_entry;

static pthread_mutex_t type_mu = PTHREAD_MUTEX_INITIALIZER;
static type_entry* type_head;
static int64_t type_next = 1;

static int type_id_used(int64_t id) {
  for (type_entry* t = type_head; t; t = t->next)
    if (t->id == id) return 1;
  return 0;
}

static XLA_FFI_Error* api_type_id_register(XLA_FFI_TypeId_Register_Args* args) {
  /* XLA checks this struct against ExecutionContext_Get's size (both 40). */
  if (!args)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA_FFI_TypeId_Register: the args pointer is null");
  if (args->struct_size < XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE)
    return size_error("XLA_FFI_TypeId_Register", XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE,
                      args->struct_size);
  if (!args->type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  XLA_FFI_Error* bad = check_name(&args->name, "type name");
  if (bad) return bad;
  const char* name = args->name.ptr ? args->name.ptr : "";
  size_t len = args->name.len;
  pthread_mutex_lock(&type_mu);
  type_entry* found = NULL;
  for (type_entry* t = type_head; t; t = t->next)
    if (t->len == len && memcmp(t->name, name, len) == 0) found = t;
  int64_t want = args->type_id->type_id;
  if (found) {
    int64_t have = found->id;
    pthread_mutex_unlock(&type_mu);
    if (want == 0)
      return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                           "Type name %.*s already registered with type id %lld", (int)len, name,
                           (long long)have);
    if (want != have)
      return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                           "Type name %.*s already registered with type id %lld vs %lld)",
                           (int)len, name, (long long)have, (long long)want);
    return NULL;
  }
  if (want == 0) {
    while (type_id_used(type_next)) type_next++;
    want = type_next++;
  }
  type_entry* t = calloc(1, sizeof *t);
  if (!t) abort();
  t->name = malloc(len + 1);
  if (!t->name) abort();
  memcpy(t->name, name, len);
  t->name[len] = '\0';
  t->len = len;
  t->id = want;
  t->next = type_head;
  type_head = t;
  pthread_mutex_unlock(&type_mu);
  args->type_id->type_id = want;
  return NULL;
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

static XLA_FFI_Error* api_stream_get(XLA_FFI_Stream_Get_Args* args) {
  CHECK_SIZE(XLA_FFI_Stream_Get, args);
  CHECK_CTX(args->ctx);
  xrt_runtime* rt = args->ctx->rt;
  if (!rt || rt->platform != XRT_PLATFORM_CUDA)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU context is not available");
  if (!rt->stream)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU stream is not available");
  args->stream = rt->stream;
  return NULL;
}

static XLA_FFI_Error* api_execution_context_get(XLA_FFI_ExecutionContext_Get_Args* args) {
  CHECK_SIZE(XLA_FFI_ExecutionContext_Get, args);
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
  return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                       "User data with type id %lld not found in execution context",
                       (long long)id);
}

static XLA_FFI_Error* no_state(void) {
  return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                       "No execution state available: call the handler with an instance "
                       "(Runtime.instantiate)");
}

static XLA_FFI_Error* api_state_set(XLA_FFI_State_Set_Args* args) {
  CHECK_SIZE(XLA_FFI_State_Set, args);
  CHECK_CTX(args->ctx);
  xrt_instance* in = args->ctx->instance;
  if (!in) return no_state();
  if (!args->type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  pthread_mutex_lock(&in->mu);
  if (in->has_state) {
    int64_t have = in->type_id;
    pthread_mutex_unlock(&in->mu);
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "State is already set with a type id %lld", (long long)have);
  }
  in->has_state = 1;
  in->type_id = args->type_id->type_id;
  in->state = args->state;
  in->deleter = args->deleter;
  pthread_mutex_unlock(&in->mu);
  XRT_COUNT(XRT_STAT_STATES_SET);
  return NULL;
}

static XLA_FFI_Error* api_state_get(XLA_FFI_State_Get_Args* args) {
  CHECK_SIZE(XLA_FFI_State_Get, args);
  CHECK_CTX(args->ctx);
  xrt_instance* in = args->ctx->instance;
  if (!in) return no_state();
  if (!args->type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  pthread_mutex_lock(&in->mu);
  int has = in->has_state;
  int64_t have = in->type_id;
  void* state = in->state;
  pthread_mutex_unlock(&in->mu);
  if (!has) return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND, "State is not set");
  if (have != args->type_id->type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Set state type id %lld does not match the requested one %lld",
                         (long long)have, (long long)args->type_id->type_id);
  args->state = state;
  return NULL;
}

static XLA_FFI_Error* api_device_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  CHECK_SIZE(XLA_FFI_DeviceMemory_Allocate, args);
  CHECK_CTX(args->ctx);
  size_t a = args->alignment;
  if (a == 0 || (a & (a - 1)) != 0 || a > 16)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Unsupported alignment: %zu", a);
  xrt_runtime* rt = args->ctx->rt;
  if (!rt || rt->platform != XRT_PLATFORM_CUDA)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA FFI GPU context is not available");
  return xrt_cuda_allocate(rt, args->size, &args->data);
}

static XLA_FFI_Error* api_device_memory_free(XLA_FFI_DeviceMemory_Free_Args* args) {
  CHECK_SIZE(XLA_FFI_DeviceMemory_Free, args);
  CHECK_CTX(args->ctx);
  xrt_runtime* rt = args->ctx->rt;
  if (!rt || rt->platform != XRT_PLATFORM_CUDA)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU context is not available");
  return xrt_cuda_free(rt, args->size, args->data);
}

static XLA_FFI_Error* cpu_pool(XLA_FFI_ExecutionContext* ctx, xrt_runtime** out) {
  CHECK_CTX(ctx);
  xrt_runtime* rt = ctx->rt;
  if (!rt || rt->platform != XRT_PLATFORM_HOST)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI CPU context is not available");
  if (rt->num_threads <= 0)
    return xrt_error_new(XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "No intra-op thread pool available on this platform");
  *out = rt;
  return NULL;
}

static XLA_FFI_Error* api_thread_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  CHECK_SIZE(XLA_FFI_ThreadPool_Schedule, args);
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

static XLA_FFI_Error* api_thread_pool_num_threads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  CHECK_SIZE(XLA_FFI_ThreadPool_NumThreads, args);
  xrt_runtime* rt;
  XLA_FFI_Error* err = cpu_pool(args->ctx, &rt);
  if (err) return err;
  if (!args->num_threads)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "num_threads must not be null");
  *args->num_threads = rt->num_threads;
  return NULL;
}

static XLA_FFI_Error* api_run_id_get(XLA_FFI_RunId_Get_Args* args) {
  CHECK_SIZE(XLA_FFI_RunId_Get, args);
  CHECK_CTX(args->ctx);
  args->run_id = args->ctx->run_id;
  return NULL;
}

static XLA_FFI_Error* api_device_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  CHECK_SIZE(XLA_FFI_DeviceOrdinal_Get, args);
  CHECK_CTX(args->ctx);
  xrt_runtime* rt = args->ctx->rt;
  args->device_ordinal = rt && rt->cuda ? xrt_cuda_device(rt) : args->ctx->device_ordinal;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Futures: one waiter (the runtime), completed once from any thread         */
/* ------------------------------------------------------------------------ */

enum { FUT_PENDING = 0, FUT_OK = 1, FUT_ERROR = 2 };

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;
  int orphaned; /* the waiter gave up: the completer frees the future */
  XLA_FFI_Error* error;
  void* notify; /* when set: passed to g_notify once the future completes */
};

/* Called (outside the future's lock) when a future with `notify` completes. */
typedef void (*xrt_notify_fn)(void* handle);
static _Atomic(xrt_notify_fn) g_notify;

/** Sets the completion callback of xrt_call_begin's pending calls. */
void xrt_set_notify(void* fn) { atomic_store(&g_notify, (xrt_notify_fn)fn); }

static void future_free(XLA_FFI_Future* f) {
  xrt_live_remove(f, XRT_LIVE_FUTURE);
  xrt_error_free(f->error);
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->cv);
  free(f);
  XRT_COUNT(XRT_STAT_FUTURES_DESTROYED);
}

static XLA_FFI_Error* api_future_create(XLA_FFI_Future_Create_Args* args) {
  CHECK_SIZE(XLA_FFI_Future_Create, args);
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
 * completed and released) is an error, not undefined behaviour. */
static XLA_FFI_Error* future_complete(XLA_FFI_Future* f, XLA_FFI_Error* error) {
  if (!xrt_live_lock(f, XRT_LIVE_FUTURE)) {
    xrt_live_unlock(f);
    xrt_error_free(error);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA_FFI_Future* is not a live future of this runtime (not created by "
                         "it, or already completed and released)");
  }
  pthread_mutex_lock(&f->mu);
  if (f->state != FUT_PENDING) {
    pthread_mutex_unlock(&f->mu);
    xrt_live_unlock(f);
    xrt_error_free(error);
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
    future_free(f);
  } else if (notify != NULL) {
    xrt_notify_fn fn = atomic_load(&g_notify);
    if (fn) fn(notify);
  }
  return NULL;
}

static XLA_FFI_Error* api_future_set_available(XLA_FFI_Future_SetAvailable_Args* args) {
  CHECK_SIZE(XLA_FFI_Future_SetAvailable, args);
  if (!args->future)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Future must not be null");
  return future_complete(args->future, NULL);
}

static XLA_FFI_Error* api_future_set_error(XLA_FFI_Future_SetError_Args* args) {
  CHECK_SIZE(XLA_FFI_Future_SetError, args);
  if (!args->future) {
    xrt_error_free(args->error);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Future must not be null");
  }
  if (args->error && !xrt_live_has(args->error, XRT_LIVE_ERROR))
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Error is not a live XLA_FFI_Error of this runtime");
  if (args->error == NULL || args->error->code == XLA_FFI_Error_Code_OK) {
    xrt_error_free(args->error);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Error must not be null or OK");
  }
  return future_complete(args->future, args->error);
}

/* Waits for completion; returns the future's error (owned by the caller). */
static XLA_FFI_Error* future_wait_take(XLA_FFI_Future* f) {
  pthread_mutex_lock(&f->mu);
  while (f->state == FUT_PENDING) pthread_cond_wait(&f->cv, &f->mu);
  XLA_FFI_Error* e = f->error;
  f->error = NULL;
  pthread_mutex_unlock(&f->mu);
  future_free(f);
  return e;
}

/* Takes the result if complete (returns 1), else orphans the future. */
static int future_take_or_orphan(XLA_FFI_Future* f, XLA_FFI_Error** out) {
  pthread_mutex_lock(&f->mu);
  if (f->state == FUT_PENDING) {
    f->orphaned = 1;
    pthread_mutex_unlock(&f->mu);
    return 0;
  }
  *out = f->error;
  f->error = NULL;
  pthread_mutex_unlock(&f->mu);
  future_free(f);
  return 1;
}

/**
 * Releases a future a handler left in a call frame that the caller laid out
 * itself (test harnesses, the fuzzer: they play XLA's part): a completed one
 * is freed, a pending one is orphaned (its completer frees it). Returns 0, or
 * -1 when `f` is not a live future of this runtime.
 */
int32_t xrt_future_release(XLA_FFI_Future* f) {
  if (!xrt_live_has(f, XRT_LIVE_FUTURE)) return -1;
  XLA_FFI_Error* e = NULL;
  if (future_take_or_orphan(f, &e)) xrt_error_free(e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The API table                                                             */
/* ------------------------------------------------------------------------ */

const XLA_FFI_Api xrt_api_table = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .extension_start = NULL,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    .internal_api = NULL,
    .XLA_FFI_Error_Create = api_error_create,
    .XLA_FFI_Error_GetMessage = api_error_get_message,
    .XLA_FFI_Error_Destroy = api_error_destroy,
    .XLA_FFI_Handler_Register = api_handler_register,
    .XLA_FFI_Stream_Get = api_stream_get,
    .XLA_FFI_TypeId_Register = api_type_id_register,
    .XLA_FFI_ExecutionContext_Get = api_execution_context_get,
    .XLA_FFI_State_Set = api_state_set,
    .XLA_FFI_State_Get = api_state_get,
    .XLA_FFI_DeviceMemory_Allocate = api_device_memory_allocate,
    .XLA_FFI_DeviceMemory_Free = api_device_memory_free,
    .XLA_FFI_ThreadPool_Schedule = api_thread_pool_schedule,
    .XLA_FFI_ThreadPool_NumThreads = api_thread_pool_num_threads,
    .XLA_FFI_Future_Create = api_future_create,
    .XLA_FFI_Future_SetAvailable = api_future_set_available,
    .XLA_FFI_Future_SetError = api_future_set_error,
    .XLA_FFI_RunId_Get = api_run_id_get,
    .XLA_FFI_DeviceOrdinal_Get = api_device_ordinal_get,
};

/** The runtime's XLA_FFI_Api table (ABI 0.1). */
const XLA_FFI_Api* xrt_api(void) { return &xrt_api_table; }

/* ------------------------------------------------------------------------ */
/* Runtime and thread pool                                                   */
/* ------------------------------------------------------------------------ */

static void* pool_main(void* arg) {
  xrt_runtime* rt = arg;
  pthread_mutex_lock(&rt->mu);
  for (;;) {
    while (!rt->head && !rt->stopping) pthread_cond_wait(&rt->cv, &rt->mu);
    xrt_task* t = rt->head;
    if (!t) { /* stopping and drained */
      pthread_mutex_unlock(&rt->mu);
      return NULL;
    }
    rt->head = t->next;
    if (!rt->head) rt->tail = NULL;
    rt->running++;
    pthread_mutex_unlock(&rt->mu);
    t->fn(t->data);
    free(t);
    XRT_COUNT(XRT_STAT_TASKS_RUN);
    pthread_mutex_lock(&rt->mu);
    rt->running--;
    if (rt->stopping && rt->running == 0 && !rt->head) pthread_cond_broadcast(&rt->cv);
  }
}

/**
 * Creates a runtime: platform 0 = Host, 1 = CUDA; threads < 0 = number of
 * cores, 0 = no pool. Returns NULL if a thread cannot be started.
 */
xrt_runtime* xrt_runtime_new(int32_t platform, int32_t threads) {
  xrt_runtime* rt = calloc(1, sizeof *rt);
  if (!rt) return NULL;
  rt->platform = platform;
  if (threads < 0) { /* the cores this process may run on */
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                          : sysconf(_SC_NPROCESSORS_ONLN);
    threads = n > 0 ? (int32_t)n : 1;
  }
  if (platform != XRT_PLATFORM_HOST) threads = 0;
  pthread_mutex_init(&rt->mu, NULL);
  pthread_cond_init(&rt->cv, NULL);
  if (threads > 0) {
    rt->threads = calloc((size_t)threads, sizeof(pthread_t));
    if (!rt->threads) abort();
    for (int32_t i = 0; i < threads; i++) {
      if (pthread_create(&rt->threads[i], NULL, pool_main, rt) != 0) {
        rt->num_threads = i;
        pthread_mutex_lock(&rt->mu);
        rt->stopping = 1;
        pthread_cond_broadcast(&rt->cv);
        pthread_mutex_unlock(&rt->mu);
        for (int32_t j = 0; j < i; j++) pthread_join(rt->threads[j], NULL);
        free(rt->threads);
        free(rt);
        return NULL;
      }
    }
  }
  rt->num_threads = threads;
  XRT_COUNT(XRT_STAT_RUNTIMES_CREATED);
  return rt;
}

/** Sets the stream handed to handlers on CUDA runtimes. */
void xrt_runtime_set_stream(xrt_runtime* rt, void* stream) { rt->stream = stream; }

int32_t xrt_runtime_num_threads(xrt_runtime* rt) { return rt->num_threads; }

static void runtime_join_free(xrt_runtime* rt) {
  for (int32_t i = 0; i < rt->num_threads; i++) pthread_join(rt->threads[i], NULL);
  free(rt->threads);
  pthread_mutex_destroy(&rt->mu);
  pthread_cond_destroy(&rt->cv);
  free(rt);
  XRT_COUNT(XRT_STAT_RUNTIMES_DESTROYED);
}

/* Runtimes whose busy pool a reaper thread still joins, and the handler
 * libraries whose dlclose waits for them (a pool task may still run their
 * code). */
static pthread_mutex_t g_reap_mu = PTHREAD_MUTEX_INITIALIZER;
static int32_t g_reapers;
static void** g_deferred_dlclose;
static int32_t g_deferred_n, g_deferred_cap;

/** dlclose of a handler library while runtimes are reaped: 1 = deferred. */
int32_t xrt_defer_dlclose(void* handle) {
  pthread_mutex_lock(&g_reap_mu);
  if (g_reapers == 0) {
    pthread_mutex_unlock(&g_reap_mu);
    return 0;
  }
  if (g_deferred_n == g_deferred_cap) {
    int32_t cap = g_deferred_cap ? g_deferred_cap * 2 : 8;
    void** d = realloc(g_deferred_dlclose, (size_t)cap * sizeof(void*));
    if (!d) abort();
    g_deferred_dlclose = d;
    g_deferred_cap = cap;
  }
  g_deferred_dlclose[g_deferred_n++] = handle;
  pthread_mutex_unlock(&g_reap_mu);
  return 1;
}

int xrt_thread_start_detached(void* (*fn)(void*), void* arg) {
  Dl_info info;
  if (dladdr((void*)fn, &info) && info.dli_fname != NULL)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, fn, arg);
  pthread_attr_destroy(&attr);
  return rc == 0;
}

static void* reaper_main(void* arg) {
  runtime_join_free(arg);
  for (;;) {
    pthread_mutex_lock(&g_reap_mu);
    void* h = NULL;
    if (g_reapers == 1 && g_deferred_n > 0) h = g_deferred_dlclose[--g_deferred_n];
    if (h == NULL) g_reapers--;
    pthread_mutex_unlock(&g_reap_mu);
    if (h == NULL) return NULL;
    dlclose(h); /* the last reaper closes the libraries whose close waited */
  }
}

/**
 * Stops the pool (queued tasks still run) and frees the runtime. When the
 * pool is idle its threads are joined here; while tasks are queued or running
 * (one may wait for the caller's thread, e.g. a TS handler needing the JS
 * thread) a detached thread joins them and frees the runtime afterwards, so
 * the caller never blocks on them. Returns 1 when the free was deferred.
 */
/* Stops the pool; waits up to grace_ms for its tasks to finish. Returns
 * whether tasks are still queued or running. */
static int runtime_stop(xrt_runtime* rt, int grace_ms) {
  xrt_cuda_detach(rt);
  pthread_mutex_lock(&rt->mu);
  rt->stopping = 1;
  pthread_cond_broadcast(&rt->cv);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += (long)grace_ms * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  while ((rt->head != NULL || rt->running > 0) &&
         pthread_cond_timedwait(&rt->cv, &rt->mu, &until) == 0) {
  }
  int busy = rt->head != NULL || rt->running > 0;
  pthread_mutex_unlock(&rt->mu);
  return busy;
}

int32_t xrt_runtime_free(xrt_runtime* rt) {
  if (!rt) return 0;
  /* Tasks about to finish are joined here; ones still busy after the grace
   * (e.g. waiting for the JS thread) are left to a reaper. */
  if (runtime_stop(rt, 50)) {
    /* The reaper outlives this call (the library stays mapped for it). */
    pthread_mutex_lock(&g_reap_mu);
    g_reapers++;
    pthread_mutex_unlock(&g_reap_mu);
    if (xrt_thread_start_detached(reaper_main, rt)) return 1;
    pthread_mutex_lock(&g_reap_mu);
    g_reapers--;
    pthread_mutex_unlock(&g_reap_mu);
  }
  runtime_join_free(rt);
  return 0;
}

/** Like xrt_runtime_free but always joins the pool here (call it nonblocking). */
void xrt_runtime_free_join(xrt_runtime* rt) {
  if (!rt) return;
  runtime_stop(rt, 0);
  runtime_join_free(rt);
}

/* ------------------------------------------------------------------------ */
/* Instances                                                                 */
/* ------------------------------------------------------------------------ */

xrt_instance* xrt_instance_new(void) {
  xrt_instance* in = calloc(1, sizeof *in);
  if (!in) return NULL;
  pthread_mutex_init(&in->mu, NULL);
  XRT_COUNT(XRT_STAT_INSTANCES_CREATED);
  return in;
}

/** Whether the instance holds a state (1) and its type id through *type_id. */
int32_t xrt_instance_state(xrt_instance* in, int64_t* type_id) {
  pthread_mutex_lock(&in->mu);
  int has = in->has_state;
  if (type_id) *type_id = in->type_id;
  pthread_mutex_unlock(&in->mu);
  return has;
}

/** Runs the state's deleter (if any) and frees the instance. */
void xrt_instance_free(xrt_instance* in) {
  if (!in) return;
  if (in->has_state) {
    if (in->deleter) in->deleter(in->state);
    XRT_COUNT(XRT_STAT_STATES_DELETED);
  }
  pthread_mutex_destroy(&in->mu);
  free(in);
  XRT_COUNT(XRT_STAT_INSTANCES_DESTROYED);
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Error* normalize(XLA_FFI_Error* err) {
  if (err && !xrt_live_has(err, XRT_LIVE_ERROR))
    return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                         "The handler returned an XLA_FFI_Error* that is not a live error of "
                         "this runtime (not created by it, or already destroyed)");
  if (err && err->code == XLA_FFI_Error_Code_OK) {
    xrt_error_free(err);
    return NULL;
  }
  return err;
}

/* A handler that returned an error must not also leave a future; if it did,
 * the runtime still has to own (and eventually free) that future. */
static void drop_future(XLA_FFI_Future* f) {
  XLA_FFI_Error* e = NULL;
  if (future_take_or_orphan(f, &e)) xrt_error_free(e);
}

/**
 * Calls a handler synchronously on the calling thread with the frame's own
 * call frame and context. A pending future is orphaned and reported as
 * FAILED_PRECONDITION. Returns NULL on success.
 */
static XLA_FFI_Error* bad_future(XLA_FFI_Error* err) {
  xrt_error_free(err);
  return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                       "The handler set XLA_FFI_CallFrame.future to a pointer that is not a "
                       "live XLA_FFI_Future of this runtime");
}

static XLA_FFI_Error* call_frame_sync(xrt_runtime* rt, XLA_FFI_Handler* h,
                                      XLA_FFI_CallFrame* cf) {
  XRT_COUNT(XRT_STAT_CALLS);
  cf->future = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(rt, &scope);
  if (err) return err;
  int64_t blocked = xla_ffi_deno_js_block_enter();
  err = normalize(h(cf));
  xla_ffi_deno_js_block_leave(blocked);
  xrt_cuda_leave(rt, &scope);
  XLA_FFI_Future* f = cf->future;
  if (!f) return err;
  cf->future = NULL;
  if (!xrt_live_has(f, XRT_LIVE_FUTURE)) return bad_future(err);
  if (err) {
    drop_future(f);
    return err;
  }
  XLA_FFI_Error* fe = NULL;
  if (future_take_or_orphan(f, &fe)) return fe;
  return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                       "The handler returned a pending XLA_FFI_Future: it completes "
                       "asynchronously, so call it with Runtime.call (callSync only runs "
                       "handlers that finish synchronously)");
}

XLA_FFI_Error* xrt_call_sync(xrt_runtime* rt, XLA_FFI_Handler* h, xrt_frame* fr) {
  if (!rt || !h || !fr)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xrt_call_sync: runtime, handler and frame must not be null");
  fr->ctx.rt = rt;
  return call_frame_sync(rt, h, &fr->cf);
}

/**
 * Calls a handler on the calling thread with a call frame laid out elsewhere
 * (whose context is one of this runtime's frames), after checking the frame's
 * structure with xrt_check_call_frame: a malformed frame is an
 * INVALID_ARGUMENT error and the handler is not called.
 */
XLA_FFI_Error* xrt_call_checked(xrt_runtime* rt, XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf) {
  if (!rt || !h)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xrt_call_checked: runtime and handler must not be null");
  XLA_FFI_Error* bad = xrt_check_call_frame(cf);
  if (bad) return bad;
  cf->ctx->rt = rt;
  return call_frame_sync(rt, h, cf);
}

/* A snapshot of a frame's header and context, taken on the calling thread so
 * that later changes to the frame's configuration do not affect the call. */
typedef struct xrt_call {
  XLA_FFI_CallFrame cf;
  XLA_FFI_ExecutionContext ctx;
  int64_t* user;
  XLA_FFI_Future* future; /* xrt_call_begin: the pending future */
} xrt_call;

/** Snapshots a frame for xrt_call_run / xrt_call_threads (which free it). */
xrt_call* xrt_call_new(xrt_runtime* rt, const xrt_frame* fr) {
  if (!rt || !fr) return NULL;
  xrt_call* c = malloc(sizeof *c);
  if (!c) return NULL;
  c->cf = fr->cf;
  c->ctx = fr->ctx;
  c->ctx.rt = rt;
  c->user = NULL;
  if (fr->ctx.n_user > 0) {
    size_t bytes = sizeof(int64_t) * 2 * (size_t)fr->ctx.n_user;
    c->user = malloc(bytes);
    if (!c->user) {
      free(c);
      return NULL;
    }
    memcpy(c->user, fr->ctx.user, bytes);
  }
  c->ctx.user = c->user;
  return c;
}

static void call_free(xrt_call* c) {
  free(c->user);
  free(c);
}

/* One call on a private copy of the snapshot; waits for the handler's
 * future. Safe to run concurrently from many threads. */
static XLA_FFI_Error* call_copy(const xrt_call* tmpl, XLA_FFI_Handler* h) {
  XRT_COUNT(XRT_STAT_CALLS);
  XLA_FFI_ExecutionContext ctx = tmpl->ctx;
  XLA_FFI_CallFrame cf = tmpl->cf;
  cf.ctx = &ctx;
  cf.future = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(ctx.rt, &scope);
  if (err) return err;
  err = normalize(h(&cf));
  xrt_cuda_leave(ctx.rt, &scope);
  if (!cf.future) return err;
  if (!xrt_live_has(cf.future, XRT_LIVE_FUTURE)) return bad_future(err);
  if (err) {
    /* Keep ctx alive until the stray future completes. */
    XLA_FFI_Error* fe = future_wait_take(cf.future);
    xrt_error_free(fe);
    return err;
  }
  return future_wait_take(cf.future);
}

/**
 * Calls a handler with a snapshot and waits for its future, then frees the
 * snapshot. Meant for a `nonblocking` FFI call: it runs on a thread other
 * than the JavaScript one, so the event loop stays free for handlers that
 * need it.
 */
XLA_FFI_Error* xrt_call_run(xrt_call* c, XLA_FFI_Handler* h) {
  if (!c || !h) {
    if (c) call_free(c);
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xrt_call_run: call and handler must not be null");
  }
  XLA_FFI_Error* e = call_copy(c, h);
  call_free(c);
  return e;
}

/**
 * Calls a handler with a snapshot on the calling thread without waiting for
 * its future: returns 0 when the call is over (its error, or NULL, in *out;
 * the snapshot is freed), or 1 when the handler left a pending future: then
 * the notify callback (xrt_set_notify) gets the snapshot once the future
 * completes, and xrt_call_finish takes the result. For handlers that complete
 * their futures on another thread than the caller's, or whose waiting would
 * block the caller (TS handlers on the JS thread: the Promise settles later).
 */
int32_t xrt_call_begin(xrt_call* c, XLA_FFI_Handler* h, XLA_FFI_Error** out) {
  XRT_COUNT(XRT_STAT_CALLS);
  c->cf.ctx = &c->ctx;
  c->cf.future = NULL;
  c->future = NULL;
  *out = NULL;
  xrt_cuda_scope scope;
  XLA_FFI_Error* err = xrt_cuda_enter(c->ctx.rt, &scope);
  if (err) {
    *out = err;
    call_free(c);
    return 0;
  }
  err = normalize(h(&c->cf));
  xrt_cuda_leave(c->ctx.rt, &scope);
  XLA_FFI_Future* f = c->cf.future;
  if (f != NULL && !xrt_live_has(f, XRT_LIVE_FUTURE)) {
    *out = bad_future(err);
    call_free(c);
    return 0;
  }
  if (f == NULL || err != NULL) {
    if (f != NULL) drop_future(f);
    *out = err;
    call_free(c);
    return 0;
  }
  pthread_mutex_lock(&f->mu);
  if (f->state != FUT_PENDING) {
    *out = f->error;
    f->error = NULL;
    pthread_mutex_unlock(&f->mu);
    future_free(f);
    call_free(c);
    return 0;
  }
  f->notify = c;
  c->future = f;
  pthread_mutex_unlock(&f->mu);
  return 1;
}

/** After the notify callback: the future's error (or NULL); frees the snapshot. */
XLA_FFI_Error* xrt_call_finish(xrt_call* c) {
  XLA_FFI_Error* e = c->future ? future_wait_take(c->future) : NULL;
  call_free(c);
  return e;
}

typedef struct {
  const xrt_call* tmpl;
  XLA_FFI_Handler* h;
  int64_t iterations;
  pthread_mutex_t* mu;
  int64_t* out; /* [ok, failed, first error code] */
  char* msg;
  int32_t msg_cap;
} stress_arg;

static void* stress_main(void* p) {
  stress_arg* a = p;
  for (int64_t i = 0; i < a->iterations; i++) {
    XLA_FFI_Error* e = call_copy(a->tmpl, a->h);
    pthread_mutex_lock(a->mu);
    if (e) {
      if (a->out[1]++ == 0) {
        a->out[2] = e->code;
        if (a->msg && a->msg_cap > 0) snprintf(a->msg, (size_t)a->msg_cap, "%s", e->message);
      }
    } else {
      a->out[0]++;
    }
    pthread_mutex_unlock(a->mu);
    xrt_error_free(e);
  }
  return NULL;
}

/**
 * Calls a handler `iterations` times on each of `threads` new runtime
 * threads, as XLA calls handlers from its own threads, then frees the
 * snapshot. Writes out[0] = calls that succeeded, out[1] = calls that failed,
 * out[2] = the first failure's code, and its message into msg. Returns 0, or
 * -1 if a thread could not start. Blocks until all calls are done: call it
 * `nonblocking`.
 */
int32_t xrt_call_threads(xrt_call* c, XLA_FFI_Handler* h, int32_t threads, int64_t iterations,
                         int64_t* out, char* msg, int32_t msg_cap) {
  if (!c || !h || !out) {
    if (c) call_free(c);
    return -1;
  }
  if (threads <= 0) threads = 1;
  pthread_mutex_t mu;
  pthread_mutex_init(&mu, NULL);
  out[0] = out[1] = out[2] = 0;
  if (msg && msg_cap > 0) msg[0] = '\0';
  stress_arg a = {c, h, iterations, &mu, out, msg, msg_cap};
  pthread_t* th = calloc((size_t)threads, sizeof(pthread_t));
  if (!th) abort();
  int32_t started = 0;
  for (; started < threads; started++)
    if (pthread_create(&th[started], NULL, stress_main, &a) != 0) break;
  for (int32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(th);
  pthread_mutex_destroy(&mu);
  call_free(c);
  return started == threads ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Entry points for TypeScript: errors, registry, types, metadata, stats     */
/* ------------------------------------------------------------------------ */

int32_t xrt_error_code(XLA_FFI_Error* e) {
  if (e && !xrt_live_has(e, XRT_LIVE_ERROR)) return XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return e ? (int32_t)e->code : 0;
}
const char* xrt_error_message(XLA_FFI_Error* e) {
  if (e && !xrt_live_has(e, XRT_LIVE_ERROR))
    return "Invalid XLA_FFI_Error*: not created by this runtime, or already destroyed";
  return e ? e->message : "";
}
void xrt_error_destroy(XLA_FFI_Error* e) { xrt_error_free(e); }

/** Registers a bundle (4 pointers as u64) through the API's Handler_Register. */
XLA_FFI_Error* xrt_register(const char* name, int64_t name_len, const char* platform,
                            int64_t platform_len, const uint64_t* bundle, uint32_t traits) {
  if (!bundle)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "The handler bundle is null");
  XLA_FFI_Handler_Register_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  a.name.ptr = name;
  a.name.len = (size_t)name_len;
  a.platform.ptr = platform;
  a.platform.len = (size_t)platform_len;
  a.bundle.instantiate = (XLA_FFI_Handler*)(uintptr_t)bundle[0];
  a.bundle.prepare = (XLA_FFI_Handler*)(uintptr_t)bundle[1];
  a.bundle.initialize = (XLA_FFI_Handler*)(uintptr_t)bundle[2];
  a.bundle.execute = (XLA_FFI_Handler*)(uintptr_t)bundle[3];
  a.traits = traits;
  return xrt_api_table.XLA_FFI_Handler_Register(&a);
}

/** Looks a registration up; writes 4 bundle pointers and the traits into out. */
XLA_FFI_Error* xrt_lookup(const char* name, int64_t name_len, const char* platform,
                          int64_t platform_len, uint64_t* out) {
  XLA_FFI_ByteSpan ns = {name, (size_t)name_len}, ps = {platform, (size_t)platform_len};
  XLA_FFI_Error* bad = check_name(&ns, "handler name");
  if (!bad) bad = check_name(&ps, "platform name");
  if (!bad && !out) bad = xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "out is null");
  if (bad) return bad;
  if (!name) name = "";
  if (!platform) platform = "";
  int nl = (int)name_len, pl = (int)platform_len;
  int32_t canon = canonical_platform(platform, (size_t)platform_len);
  if (canon < 0)
    return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                         "Could not find registered platform with name: \"%.*s\". Available "
                         "platform names are: Host CUDA",
                         pl, platform);
  pthread_mutex_lock(&reg_mu);
  for (reg_entry* e = reg_head; e; e = e->next) {
    if (e->platform == canon && e->name_len == (size_t)nl &&
        memcmp(e->name, name, (size_t)nl) == 0) {
      out[0] = (uint64_t)(uintptr_t)e->bundle.instantiate;
      out[1] = (uint64_t)(uintptr_t)e->bundle.prepare;
      out[2] = (uint64_t)(uintptr_t)e->bundle.initialize;
      out[3] = (uint64_t)(uintptr_t)e->bundle.execute;
      out[4] = e->traits;
      pthread_mutex_unlock(&reg_mu);
      return NULL;
    }
  }
  pthread_mutex_unlock(&reg_mu);
  return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                       "No FFI handler registered for %.*s on a platform %.*s (canonical %s)", nl,
                       name, pl, platform, kPlatformNames[canon]);
}

/** Registers a type name through TypeId_Register; *type_id is in-out. */
XLA_FFI_Error* xrt_register_type(const char* name, int64_t len, int64_t* type_id) {
  if (!type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  XLA_FFI_TypeId id = {*type_id};
  XLA_FFI_TypeId_Register_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_TypeId_Register_Args_STRUCT_SIZE;
  a.name.ptr = name;
  a.name.len = (size_t)len;
  a.type_id = &id;
  XLA_FFI_Error* e = xrt_api_table.XLA_FFI_TypeId_Register(&a);
  if (!e) *type_id = id.type_id;
  return e;
}

/** Queries a handler's metadata: out = [major, minor, traits, state_type_id]. */
XLA_FFI_Error* xrt_metadata(XLA_FFI_Handler* h, int64_t* out) {
  if (!h || !out)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xrt_metadata: handler and out must not be null");
  XLA_FFI_Metadata_V0_2 md;
  XLA_FFI_Error* e = query_metadata(h, &md);
  if (e) return e;
  out[0] = md.api_version.major_version;
  out[1] = md.api_version.minor_version;
  out[2] = md.traits;
  out[3] = md.state_type_id.type_id;
  return NULL;
}

/** Copies up to n debug counters into out; returns how many exist. */
int32_t xrt_debug_stats(int64_t* out, int32_t n) {
  for (int32_t i = 0; i < n && i < XRT_STAT_COUNT; i++)
    out[i] = atomic_load_explicit(&xrt_stats[i], memory_order_relaxed);
  return XRT_STAT_COUNT;
}
