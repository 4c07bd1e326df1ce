/*
 * handler_harness.c: a minimal, independent XLA FFI runtime for testing TS
 * handler entry points: its own XLA_FFI_Api (errors, waitable futures, run
 * id, device ordinal, user data, state, scratch memory, a thread "pool",
 * stream, type ids), its own call-frame builder, and helpers that call a
 * handler from N pthreads. Nothing here is shared with the embedded runtime.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xla_ffi.h"

/* ---------------------------------------------------------------------- */
/* Errors and futures                                                      */
/* ---------------------------------------------------------------------- */

struct XLA_FFI_Error {
  int32_t code;
  char* msg;
};

static _Atomic int64_t g_live_errors;
static _Atomic int64_t g_live_futures;

static XLA_FFI_Error* new_error(int32_t code, const char* msg) {
  XLA_FFI_Error* e = malloc(sizeof *e);
  e->code = code;
  e->msg = strdup(msg ? msg : "");
  atomic_fetch_add(&g_live_errors, 1);
  return e;
}

static XLA_FFI_Error* api_error_create(XLA_FFI_Error_Create_Args* a) {
  return new_error((int32_t)a->errc, a->message);
}
static void api_error_get_message(XLA_FFI_Error_GetMessage_Args* a) { a->message = a->error->msg; }
static void api_error_destroy(XLA_FFI_Error_Destroy_Args* a) {
  if (!a->error) return;
  free(a->error->msg);
  free(a->error);
  atomic_fetch_sub(&g_live_errors, 1);
}

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;     /* 0 pending, 1 available, 2 error */
  int completions;
  XLA_FFI_Error* error;
};

static XLA_FFI_Error* api_future_create(XLA_FFI_Future_Create_Args* a) {
  XLA_FFI_Future* f = calloc(1, sizeof *f);
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  atomic_fetch_add(&g_live_futures, 1);
  a->future = f;
  return NULL;
}

static XLA_FFI_Error* complete(XLA_FFI_Future* f, int done, XLA_FFI_Error* e) {
  if (f == NULL) return new_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Future must not be null");
  pthread_mutex_lock(&f->mu);
  f->completions++;
  if (f->done) {
    pthread_mutex_unlock(&f->mu);
    return new_error(XLA_FFI_Error_Code_FAILED_PRECONDITION, "Future is already completed");
  }
  f->done = done;
  f->error = e;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

static XLA_FFI_Error* api_future_set_available(XLA_FFI_Future_SetAvailable_Args* a) {
  return complete(a->future, 1, NULL);
}
static XLA_FFI_Error* api_future_set_error(XLA_FFI_Future_SetError_Args* a) {
  if (a->error == NULL || a->error->code == 0)
    return new_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Error must not be null or OK");
  return complete(a->future, 2, a->error);
}

/* ---------------------------------------------------------------------- */
/* Execution context                                                       */
/* ---------------------------------------------------------------------- */

typedef struct {
  int64_t run_id;
  int32_t device_ordinal;
  void* stream;
  int32_t has_pool;
  int64_t ud_ids[8];
  void* ud_ptrs[8];
  int32_t ud_n;
  int64_t state_id;
  void* state;
  void (*state_deleter)(void*);
  _Atomic int64_t live_allocations;
} hh_ctx;

#define HCTX(c) ((hh_ctx*)(c))

static XLA_FFI_Error* api_run_id(XLA_FFI_RunId_Get_Args* a) {
  if (!a->ctx) return new_error(XLA_FFI_Error_Code_INTERNAL, "No execution context");
  a->run_id = HCTX(a->ctx)->run_id;
  return NULL;
}
static XLA_FFI_Error* api_device_ordinal(XLA_FFI_DeviceOrdinal_Get_Args* a) {
  if (!a->ctx) return new_error(XLA_FFI_Error_Code_INTERNAL, "No execution context");
  a->device_ordinal = HCTX(a->ctx)->device_ordinal;
  return NULL;
}
static XLA_FFI_Error* api_stream_get(XLA_FFI_Stream_Get_Args* a) {
  if (!a->ctx || !HCTX(a->ctx)->stream)
    return new_error(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA FFI GPU stream is not available");
  a->stream = HCTX(a->ctx)->stream;
  return NULL;
}
static XLA_FFI_Error* api_ctx_get(XLA_FFI_ExecutionContext_Get_Args* a) {
  hh_ctx* c = HCTX(a->ctx);
  for (int i = 0; c && i < c->ud_n; i++) {
    if (c->ud_ids[i] == a->type_id->type_id) {
      a->data = c->ud_ptrs[i];
      return NULL;
    }
  }
  char buf[128];
  snprintf(buf, sizeof buf, "User data with type id %lld not found in execution context",
           (long long)a->type_id->type_id);
  return new_error(XLA_FFI_Error_Code_NOT_FOUND, buf);
}
static XLA_FFI_Error* api_state_set(XLA_FFI_State_Set_Args* a) {
  hh_ctx* c = HCTX(a->ctx);
  if (c->state) {
    char buf[128];
    snprintf(buf, sizeof buf, "State is already set with a type id %lld", (long long)c->state_id);
    return new_error(XLA_FFI_Error_Code_FAILED_PRECONDITION, buf);
  }
  c->state_id = a->type_id->type_id;
  c->state = a->state;
  c->state_deleter = a->deleter;
  return NULL;
}
static XLA_FFI_Error* api_state_get(XLA_FFI_State_Get_Args* a) {
  hh_ctx* c = HCTX(a->ctx);
  if (!c->state) return new_error(XLA_FFI_Error_Code_NOT_FOUND, "State is not set");
  if (c->state_id != a->type_id->type_id) {
    char buf[160];
    snprintf(buf, sizeof buf, "Set state type id %lld does not match the requested one %lld",
             (long long)c->state_id, (long long)a->type_id->type_id);
    return new_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  a->state = c->state;
  return NULL;
}
static XLA_FFI_Error* api_alloc(XLA_FFI_DeviceMemory_Allocate_Args* a) {
  if (a->alignment == 0 || (a->alignment & (a->alignment - 1)) || a->alignment > 16) {
    char buf[64];
    snprintf(buf, sizeof buf, "Unsupported alignment: %zu", a->alignment);
    return new_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  a->data = aligned_alloc(16, (a->size + 15) / 16 * 16 + 16);
  atomic_fetch_add(&HCTX(a->ctx)->live_allocations, 1);
  return NULL;
}
static XLA_FFI_Error* api_free(XLA_FFI_DeviceMemory_Free_Args* a) {
  free(a->data);
  atomic_fetch_sub(&HCTX(a->ctx)->live_allocations, 1);
  return NULL;
}

typedef struct {
  XLA_FFI_Task* task;
  void* data;
} pool_task;
static void* pool_main(void* p) {
  pool_task t = *(pool_task*)p;
  free(p);
  t.task(t.data);
  return NULL;
}
static XLA_FFI_Error* api_schedule(XLA_FFI_ThreadPool_Schedule_Args* a) {
  if (!a->ctx || !HCTX(a->ctx)->has_pool)
    return new_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "No intra-op thread pool available on this platform");
  pool_task* t = malloc(sizeof *t);
  t->task = a->task;
  t->data = a->data;
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&th, &attr, pool_main, t);
  pthread_attr_destroy(&attr);
  if (rc) {
    free(t);
    return new_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Cannot start a pool thread");
  }
  return NULL;
}
static XLA_FFI_Error* api_num_threads(XLA_FFI_ThreadPool_NumThreads_Args* a) {
  if (!a->ctx || !HCTX(a->ctx)->has_pool)
    return new_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "No intra-op thread pool available on this platform");
  *a->num_threads = 4;
  return NULL;
}

static pthread_mutex_t g_type_mu = PTHREAD_MUTEX_INITIALIZER;
static char* g_type_names[64];
static int64_t g_type_ids[64];
static int g_type_n;
static int64_t g_type_next = 1;
static XLA_FFI_Error* api_type_register(XLA_FFI_TypeId_Register_Args* a) {
  pthread_mutex_lock(&g_type_mu);
  for (int i = 0; i < g_type_n; i++) {
    if (strlen(g_type_names[i]) == a->name.len &&
        memcmp(g_type_names[i], a->name.ptr, a->name.len) == 0) {
      int64_t have = g_type_ids[i];
      pthread_mutex_unlock(&g_type_mu);
      if (a->type_id->type_id != 0 && a->type_id->type_id == have) return NULL;
      char buf[160];
      snprintf(buf, sizeof buf, "Type name %.*s already registered with type id %lld",
               (int)a->name.len, a->name.ptr, (long long)have);
      return new_error(XLA_FFI_Error_Code_INTERNAL, buf);
    }
  }
  if (g_type_n == 64) {
    pthread_mutex_unlock(&g_type_mu);
    return new_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Too many types");
  }
  if (a->type_id->type_id == 0) a->type_id->type_id = g_type_next++;
  g_type_names[g_type_n] = strndup(a->name.ptr, a->name.len);
  g_type_ids[g_type_n++] = a->type_id->type_id;
  pthread_mutex_unlock(&g_type_mu);
  return NULL;
}
static XLA_FFI_Error* api_handler_register(XLA_FFI_Handler_Register_Args* a) {
  (void)a;
  return new_error(XLA_FFI_Error_Code_UNIMPLEMENTED, "The test harness has no registry");
}

static XLA_FFI_Api g_api = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .extension_start = NULL,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, 0, 1},
    .internal_api = NULL,
    .XLA_FFI_Error_Create = api_error_create,
    .XLA_FFI_Error_GetMessage = api_error_get_message,
    .XLA_FFI_Error_Destroy = api_error_destroy,
    .XLA_FFI_Handler_Register = api_handler_register,
    .XLA_FFI_Stream_Get = api_stream_get,
    .XLA_FFI_TypeId_Register = api_type_register,
    .XLA_FFI_ExecutionContext_Get = api_ctx_get,
    .XLA_FFI_State_Set = api_state_set,
    .XLA_FFI_State_Get = api_state_get,
    .XLA_FFI_DeviceMemory_Allocate = api_alloc,
    .XLA_FFI_DeviceMemory_Free = api_free,
    .XLA_FFI_ThreadPool_Schedule = api_schedule,
    .XLA_FFI_ThreadPool_NumThreads = api_num_threads,
    .XLA_FFI_Future_Create = api_future_create,
    .XLA_FFI_Future_SetAvailable = api_future_set_available,
    .XLA_FFI_Future_SetError = api_future_set_error,
    .XLA_FFI_RunId_Get = api_run_id,
    .XLA_FFI_DeviceOrdinal_Get = api_device_ordinal,
};

static XLA_FFI_Error* api_future_set_available_failing(XLA_FFI_Future_SetAvailable_Args* a) {
  (void)a;
  return new_error(XLA_FFI_Error_Code_INTERNAL, "SetAvailable refused by the test runtime");
}
static XLA_FFI_Api g_api_failing;
/* An API table whose Future_SetAvailable always fails. */
const XLA_FFI_Api* hh_api_failing_completion(void) {
  g_api_failing = g_api;
  g_api_failing.XLA_FFI_Future_SetAvailable = api_future_set_available_failing;
  return &g_api_failing;
}

/* An API table with no futures, to test the error path. */
static XLA_FFI_Api g_api_nofuture;

const XLA_FFI_Api* hh_api(void) { return &g_api; }
const XLA_FFI_Api* hh_api_without_futures(void) {
  g_api_nofuture = g_api;
  g_api_nofuture.XLA_FFI_Future_Create = NULL;
  return &g_api_nofuture;
}
int64_t hh_live_errors(void) { return atomic_load(&g_live_errors); }
int64_t hh_live_futures(void) { return atomic_load(&g_live_futures); }

void* hh_ctx_new(double run_id, int32_t device_ordinal, int32_t has_pool, double stream) {
  hh_ctx* c = calloc(1, sizeof *c);
  c->run_id = (int64_t)run_id;
  c->device_ordinal = device_ordinal;
  c->has_pool = has_pool;
  c->stream = (void*)(uintptr_t)stream;
  return c;
}
int32_t hh_ctx_add_user_data(void* ctx, double type_id, double ptr) {
  hh_ctx* c = HCTX(ctx);
  if (c->ud_n == 8) return -1;
  c->ud_ids[c->ud_n] = (int64_t)type_id;
  c->ud_ptrs[c->ud_n++] = (void*)(uintptr_t)ptr;
  return 0;
}
int64_t hh_ctx_live_allocations(void* ctx) { return atomic_load(&HCTX(ctx)->live_allocations); }
int32_t hh_ctx_has_state(void* ctx) { return HCTX(ctx)->state != NULL; }
/* Destroys the context; the state deleter runs like at executable teardown. */
void hh_ctx_free(void* ctx) {
  hh_ctx* c = HCTX(ctx);
  if (c->state && c->state_deleter) c->state_deleter(c->state);
  free(c);
}

/* ---------------------------------------------------------------------- */
/* Call-frame builder                                                      */
/* ---------------------------------------------------------------------- */

typedef struct hh_attrs hh_attrs;
typedef struct {
  char* name;
  size_t name_len;
  XLA_FFI_AttrType type;
  void* payload;
  XLA_FFI_ByteSpan name_span;
  hh_attrs* dict;
} hh_attr;

struct hh_attrs {
  hh_attr items[64];
  int n;
  hh_attrs* parent;
  XLA_FFI_Attrs built;
  XLA_FFI_AttrType types[64];
  XLA_FFI_ByteSpan* names[64];
  void* ptrs[64];
};

typedef struct {
  XLA_FFI_Buffer bufs[2][64];
  int64_t dims[2][64][8];
  void* ptrs[2][64];
  XLA_FFI_ArgType types[2][64];
  int n[2];
  hh_attrs root;
  hh_attrs* cur;
  XLA_FFI_CallFrame frame;
} hh_builder;

void* hh_frame_new(void) {
  hh_builder* b = calloc(1, sizeof *b);
  b->cur = &b->root;
  return b;
}

int32_t hh_buffer(void* bp, int32_t which, int32_t dtype, double data, int32_t rank,
                  const double* dims) {
  hh_builder* b = bp;
  if (b->n[which] == 64 || rank > 8) return -1;
  int i = b->n[which]++;
  XLA_FFI_Buffer* buf = &b->bufs[which][i];
  buf->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  buf->dtype = (XLA_FFI_DataType)dtype;
  buf->data = (void*)(uintptr_t)data;
  buf->rank = rank;
  for (int d = 0; d < rank; d++) b->dims[which][i][d] = (int64_t)dims[d];
  buf->dims = b->dims[which][i];
  b->ptrs[which][i] = buf;
  b->types[which][i] = XLA_FFI_ArgType_BUFFER;
  return i;
}

static hh_attr* new_attr(hh_builder* b, const char* name, int32_t len, XLA_FFI_AttrType t) {
  hh_attrs* a = b->cur;
  if (a->n == 64) return NULL;
  hh_attr* at = &a->items[a->n++];
  at->name = malloc((size_t)len + 1);
  memcpy(at->name, name, (size_t)len);
  at->name[len] = 0;
  at->name_len = (size_t)len;
  at->type = t;
  return at;
}

int32_t hh_attr_scalar(void* bp, const char* name, int32_t len, int32_t dtype, const void* value,
                       int32_t width) {
  hh_attr* at = new_attr(bp, name, len, XLA_FFI_AttrType_SCALAR);
  if (!at) return -1;
  XLA_FFI_Scalar* s = malloc(sizeof *s);
  s->dtype = (XLA_FFI_DataType)dtype;
  s->value = malloc(width > 0 ? (size_t)width : 1);
  memcpy(s->value, value, (size_t)width);
  at->payload = s;
  return 0;
}

int32_t hh_attr_array(void* bp, const char* name, int32_t len, int32_t dtype, int32_t count,
                      const void* data, int32_t bytes) {
  hh_attr* at = new_attr(bp, name, len, XLA_FFI_AttrType_ARRAY);
  if (!at) return -1;
  XLA_FFI_Array* a = malloc(sizeof *a);
  a->dtype = (XLA_FFI_DataType)dtype;
  a->size = (size_t)count;
  a->data = malloc(bytes > 0 ? (size_t)bytes : 1);
  memcpy(a->data, data, (size_t)bytes);
  at->payload = a;
  return 0;
}

int32_t hh_attr_string(void* bp, const char* name, int32_t len, const char* s, int32_t slen) {
  hh_attr* at = new_attr(bp, name, len, XLA_FFI_AttrType_STRING);
  if (!at) return -1;
  XLA_FFI_ByteSpan* sp = malloc(sizeof *sp);
  char* copy = malloc((size_t)slen + 1);
  memcpy(copy, s, (size_t)slen);
  sp->ptr = copy;
  sp->len = (size_t)slen;
  at->payload = sp;
  return 0;
}

int32_t hh_dict_begin(void* bp, const char* name, int32_t len) {
  hh_builder* b = bp;
  hh_attr* at = new_attr(b, name, len, XLA_FFI_AttrType_DICTIONARY);
  if (!at) return -1;
  at->dict = calloc(1, sizeof(hh_attrs));
  at->dict->parent = b->cur;
  b->cur = at->dict;
  return 0;
}

int32_t hh_dict_end(void* bp) {
  hh_builder* b = bp;
  if (!b->cur->parent) return -1;
  b->cur = b->cur->parent;
  return 0;
}

static int cmp_attr(const void* x, const void* y) {
  const hh_attr* a = x;
  const hh_attr* b = y;
  size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
  int c = memcmp(a->name, b->name, n);
  if (c) return c;
  return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static void build_attrs(hh_attrs* a) {
  qsort(a->items, (size_t)a->n, sizeof(hh_attr), cmp_attr);
  for (int i = 0; i < a->n; i++) {
    hh_attr* at = &a->items[i];
    at->name_span.ptr = at->name;
    at->name_span.len = at->name_len;
    a->types[i] = at->type;
    a->names[i] = &at->name_span;
    if (at->dict) {
      build_attrs(at->dict);
      a->ptrs[i] = &at->dict->built;
    } else {
      a->ptrs[i] = at->payload;
    }
  }
  a->built.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  a->built.size = a->n;
  a->built.types = a->types;
  a->built.names = a->names;
  a->built.attrs = a->ptrs;
}

void* hh_frame_build(void* bp, const void* api, void* ctx, int32_t stage) {
  hh_builder* b = bp;
  build_attrs(&b->root);
  XLA_FFI_CallFrame* f = &b->frame;
  memset(f, 0, sizeof *f);
  f->struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f->api = api;
  f->ctx = ctx;
  f->stage = (XLA_FFI_ExecutionStage)stage;
  f->args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  f->args.size = b->n[0];
  f->args.types = b->types[0];
  f->args.args = b->ptrs[0];
  f->rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  f->rets.size = b->n[1];
  f->rets.types = (XLA_FFI_RetType*)b->types[1];
  f->rets.rets = b->ptrs[1];
  f->attrs = b->root.built;
  return f;
}

void hh_frame_set(void* frame, double struct_size, int32_t stage) {
  XLA_FFI_CallFrame* f = frame;
  f->struct_size = (size_t)struct_size;
  f->stage = (XLA_FFI_ExecutionStage)stage;
}

static void free_attrs(hh_attrs* a) {
  for (int i = 0; i < a->n; i++) {
    hh_attr* at = &a->items[i];
    free(at->name);
    if (at->dict) {
      free_attrs(at->dict);
      free(at->dict);
    } else if (at->type == XLA_FFI_AttrType_SCALAR) {
      free(((XLA_FFI_Scalar*)at->payload)->value);
      free(at->payload);
    } else if (at->type == XLA_FFI_AttrType_ARRAY) {
      free(((XLA_FFI_Array*)at->payload)->data);
      free(at->payload);
    } else if (at->type == XLA_FFI_AttrType_STRING) {
      free((void*)((XLA_FFI_ByteSpan*)at->payload)->ptr);
      free(at->payload);
    }
  }
}

void hh_frame_free(void* bp) {
  hh_builder* b = bp;
  free_attrs(&b->root);
  free(b);
}

/* ---------------------------------------------------------------------- */
/* Calls, errors, futures, metadata                                        */
/* ---------------------------------------------------------------------- */

void* hh_call(void* handler, void* frame) {
  XLA_FFI_CallFrame* f = frame;
  f->future = NULL;
  return ((XLA_FFI_Handler*)handler)(f);
}
void* hh_frame_future(void* frame) { return ((XLA_FFI_CallFrame*)frame)->future; }
int32_t hh_error_code(void* e) { return ((XLA_FFI_Error*)e)->code; }
const char* hh_error_message(void* e) { return ((XLA_FFI_Error*)e)->msg; }
void hh_error_destroy(void* e) {
  XLA_FFI_Error_Destroy_Args a = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api_error_destroy(&a);
}

/* Blocks until the future completes: 0 available, else the error code. */
int32_t hh_future_wait(void* fp) {
  XLA_FFI_Future* f = fp;
  pthread_mutex_lock(&f->mu);
  while (!f->done) pthread_cond_wait(&f->cv, &f->mu);
  int32_t code = f->done == 1 ? 0 : f->error->code;
  pthread_mutex_unlock(&f->mu);
  return code;
}
int32_t hh_future_done(void* fp) {
  XLA_FFI_Future* f = fp;
  pthread_mutex_lock(&f->mu);
  int d = f->done;
  pthread_mutex_unlock(&f->mu);
  return d;
}
int32_t hh_future_completions(void* fp) { return ((XLA_FFI_Future*)fp)->completions; }
const char* hh_future_message(void* fp) {
  XLA_FFI_Future* f = fp;
  return f->error ? f->error->msg : "";
}
void hh_future_free(void* fp) {
  XLA_FFI_Future* f = fp;
  if (f->error) hh_error_destroy(f->error);
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->cv);
  free(f);
  atomic_fetch_sub(&g_live_futures, 1);
}

/* Metadata query as a 0.1 runtime does it (api may be NULL). out: major,
 * minor, traits, error code (0 ok); the message goes into msg (cap 256). */
int32_t hh_metadata(void* handler, const void* api, int32_t ext_size, int32_t meta_size,
                    int32_t* out, char* msg) {
  uint8_t meta_mem[48];
  memset(meta_mem, 0xEE, sizeof meta_mem);
  XLA_FFI_Metadata* m = (XLA_FFI_Metadata*)meta_mem;
  memset(m, 0, sizeof *m);
  m->struct_size = meta_size > 0 ? (size_t)meta_size : XLA_FFI_Metadata_STRUCT_SIZE;
  m->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size =
      ext_size > 0 ? (size_t)ext_size : XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = m;
  XLA_FFI_CallFrame f;
  memset(&f, 0, sizeof f);
  f.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f.extension_start = &ext.extension_base;
  f.api = api;
  f.stage = XLA_FFI_ExecutionStage_EXECUTE;
  f.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  f.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  f.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  XLA_FFI_Error* e = ((XLA_FFI_Handler*)handler)(&f);
  out[0] = m->api_version.major_version;
  out[1] = m->api_version.minor_version;
  out[2] = (int32_t)m->traits;
  out[3] = e ? e->code : 0;
  msg[0] = 0;
  if (e) {
    snprintf(msg, 256, "%s", e->msg);
    hh_error_destroy(e);
  }
  return out[3];
}

/* ---------------------------------------------------------------------- */
/* Calls from N threads                                                    */
/* ---------------------------------------------------------------------- */

typedef struct {
  void* handler;
  XLA_FFI_CallFrame* frame;
  int64_t calls;
  int64_t errors;
  int64_t* lat;
  char first_error[256];
} thread_job;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void* thread_main(void* p) {
  thread_job* j = p;
  for (int64_t i = 0; i < j->calls; i++) {
    int64_t t0 = now_ns();
    j->frame->future = NULL;
    XLA_FFI_Error* e = ((XLA_FFI_Handler*)j->handler)(j->frame);
    int32_t code = 0;
    const char* msg = "";
    if (e) {
      code = e->code;
      msg = e->msg;
    } else if (j->frame->future) {
      XLA_FFI_Future* f = j->frame->future;
      code = hh_future_wait(f);
      if (code) msg = f->error->msg;
      if (code && !j->first_error[0]) snprintf(j->first_error, 256, "%s", msg);
      hh_future_free(f);
      j->frame->future = NULL;
      msg = "";
    }
    if (j->lat) j->lat[i] = now_ns() - t0;
    if (code) {
      if (!j->first_error[0] && msg[0]) snprintf(j->first_error, 256, "%s", msg);
      j->errors++;
    }
    if (e) hh_error_destroy(e);
  }
  return NULL;
}

static int cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

/*
 * Calls handlers[t] with frames[t] `calls` times on each of n threads (future
 * completions awaited on the calling thread). out: [0] wall ns, [1] median
 * call ns, [2] errors, [3] p99 ns. The first error message goes into msg.
 */
int32_t hh_run_threads(void* const* handlers, void* const* frames, int32_t n, int32_t calls,
                       double* out, char* msg) {
  pthread_t th[64];
  thread_job jobs[64];
  if (n > 64) n = 64;
  int64_t* lat = malloc(sizeof(int64_t) * (size_t)n * (size_t)calls);
  int64_t t0 = now_ns();
  for (int i = 0; i < n; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].handler = handlers[i];
    jobs[i].frame = frames[i];
    jobs[i].calls = calls;
    jobs[i].lat = lat ? lat + (size_t)i * (size_t)calls : NULL;
    pthread_create(&th[i], NULL, thread_main, &jobs[i]);
  }
  int64_t errors = 0;
  msg[0] = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    errors += jobs[i].errors;
    if (!msg[0] && jobs[i].first_error[0]) snprintf(msg, 256, "%s", jobs[i].first_error);
  }
  out[0] = (double)(now_ns() - t0);
  size_t total = (size_t)n * (size_t)calls;
  if (lat && total > 0) {
    qsort(lat, total, sizeof(int64_t), cmp_i64);
    out[1] = (double)lat[total / 2];
    out[3] = (double)lat[total * 99 / 100];
  }
  out[2] = (double)errors;
  free(lat);
  return (int32_t)errors;
}

/* ---------------------------------------------------------------------- */
/* A caller sharing the JS thread's CPU                                    */
/* ---------------------------------------------------------------------- */

/* Whether sched_getcpu reads memory rather than making a system call (as the
 * handler host decides whether to compare CPUs: x86-64, or glibc's rseq). */
extern const unsigned int __rseq_size __attribute__((weak));

int32_t hh_cpu_read_cheap(void) {
#if defined(__x86_64__)
  return 1;
#else
  return &__rseq_size != NULL && __rseq_size > 0;
#endif
}

/* The CPU the calling thread runs on now. */
int32_t hh_current_cpu(void) { return sched_getcpu(); }

/* Threads runnable on the machine now (the kernel's count in /proc/loadavg), or -1 if unreadable.
 * Read here rather than from TS: a test run with scoped permissions may not read /proc. */
int32_t hh_runnable_threads(void) {
  FILE* f = fopen("/proc/loadavg", "r");
  if (f == NULL) return -1;
  double a, b, c;
  int running = -1, total;
  if (fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) != 5) running = -1;
  fclose(f);
  return running;
}

/* Whether the calling thread may use exactly the CPUs of the mask saved by hh_pin_self. */
static cpu_set_t g_saved_mask;

int32_t hh_affinity_restored(void) {
  cpu_set_t m;
  return sched_getaffinity(0, sizeof m, &m) == 0 && CPU_EQUAL(&m, &g_saved_mask);
}

/* Gives the calling thread the CPUs saved by hh_pin_self again. */
int32_t hh_unpin_self(void) { return sched_setaffinity(0, sizeof g_saved_mask, &g_saved_mask); }

/* Pins the calling thread to `cpu`, saving the CPUs it may use; returns its thread id, or -1. */
int32_t hh_pin_self(int32_t cpu) {
  cpu_set_t one;
  if (sched_getaffinity(0, sizeof g_saved_mask, &g_saved_mask) != 0) return -1;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return -1;
  return (int32_t)syscall(SYS_gettid);
}

typedef struct {
  void* handler;
  XLA_FFI_CallFrame* frame;
  int32_t calls, cpu, tid, release_after;
  int64_t errors;
} pinned_job;

static void* pinned_main(void* p) {
  pinned_job* j = p;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(j->cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    j->errors = -1;
    return NULL;
  }
  for (int32_t i = 0; i < j->calls; i++) {
    /* The pinned thread `tid` may use its CPUs again; the kernel leaves it where it runs. */
    if (i == j->release_after) sched_setaffinity(j->tid, sizeof g_saved_mask, &g_saved_mask);
    j->frame->future = NULL;
    XLA_FFI_Error* e = ((XLA_FFI_Handler*)j->handler)(j->frame);
    if (e) {
      j->errors++;
      hh_error_destroy(e);
    }
  }
  return NULL;
}

/*
 * Calls a synchronous handler `calls` times from one thread pinned to `cpu`;
 * before call `release_after` it gives thread `tid` (pinned with
 * hh_pin_self) the CPUs it had again. Returns the failed calls (-1: the
 * thread could not be pinned).
 */
int32_t hh_run_pinned(void* handler, void* frame, int32_t calls, int32_t cpu, int32_t tid,
                      int32_t release_after) {
  pinned_job j = {handler, frame, calls, cpu, tid, release_after, 0};
  pthread_t th;
  if (pthread_create(&th, NULL, pinned_main, &j) != 0) return -1;
  pthread_join(th, NULL);
  return (int32_t)j.errors;
}

/*
 * As XLA calls a handler from its thread: the frame written afresh before
 * every call (XLA builds it on its stack: its lines are then in the calling
 * CPU's cache, not the handler host's), and `gap_ns` of other work between
 * calls (XLA's and Python's own, ~5 us per call of a jitted program).
 */
static void rewrite(void* p, size_t n) {
  volatile unsigned char* b = (volatile unsigned char*)p;
  for (size_t i = 0; i < n; i += 64) b[i] = b[i];
  if (n > 0) b[n - 1] = b[n - 1];
}

static void rewrite_attrs(XLA_FFI_Attrs* a) {
  rewrite(a->types, sizeof(*a->types) * (size_t)a->size);
  rewrite(a->names, sizeof(*a->names) * (size_t)a->size);
  rewrite(a->attrs, sizeof(*a->attrs) * (size_t)a->size);
  for (int64_t i = 0; i < a->size; i++) {
    rewrite(a->names[i], sizeof(XLA_FFI_ByteSpan));
    rewrite((void*)a->names[i]->ptr, a->names[i]->len);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        XLA_FFI_Scalar* s = a->attrs[i];
        rewrite(s, sizeof *s);
        rewrite(s->value, 8);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        XLA_FFI_Array* arr = a->attrs[i];
        rewrite(arr, sizeof *arr);
        rewrite(arr->data, arr->size * 8);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        XLA_FFI_ByteSpan* s = a->attrs[i];
        rewrite(s, sizeof *s);
        rewrite((void*)s->ptr, s->len);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        rewrite(a->attrs[i], sizeof(XLA_FFI_Attrs));
        rewrite_attrs(a->attrs[i]);
        break;
      default:
        break;
    }
  }
}

static void rewrite_buffers(int64_t n, void** bufs, void* types, size_t type_size) {
  rewrite(types, type_size * (size_t)n);
  rewrite(bufs, sizeof(void*) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    XLA_FFI_Buffer* b = bufs[i];
    if (b == NULL) continue;
    rewrite(b, sizeof *b);
    rewrite(b->dims, sizeof(int64_t) * (size_t)b->rank);
  }
}

static void rewrite_frame(XLA_FFI_CallFrame* f) {
  rewrite(f, sizeof *f);
  rewrite_buffers(f->args.size, f->args.args, f->args.types, sizeof(*f->args.types));
  rewrite_buffers(f->rets.size, f->rets.rets, f->rets.types, sizeof(*f->rets.types));
  rewrite_attrs(&f->attrs);
}

static unsigned char g_other_work[16384];

/*
 * Calls `handler` with `frame` `calls` times on a thread of its own, the
 * frame rewritten before each call and `gap_ns` of other work (writing a
 * private 16 KiB buffer) after it. out: [0] median call ns, [1] p90 ns,
 * [2] errors. Returns the errors.
 */
int32_t hh_run_xla_like(void* handler, void* frame, int32_t calls, int32_t gap_ns, double* out) {
  int64_t* lat = malloc(sizeof(int64_t) * (size_t)(calls > 0 ? calls : 1));
  if (lat == NULL) return -1;
  XLA_FFI_CallFrame* f = frame;
  int64_t errors = 0;
  for (int32_t i = 0; i < calls; i++) {
    rewrite_frame(f);
    f->future = NULL;
    int64_t t0 = now_ns();
    XLA_FFI_Error* e = ((XLA_FFI_Handler*)handler)(f);
    lat[i] = now_ns() - t0;
    if (e) {
      errors++;
      hh_error_destroy(e);
    }
    int64_t until = now_ns() + gap_ns;
    unsigned k = 0;
    while (now_ns() < until) {
      for (int j = 0; j < 64; j++, k++) g_other_work[(k * 64) % sizeof g_other_work] = (unsigned char)k;
    }
  }
  qsort(lat, (size_t)calls, sizeof(int64_t), cmp_i64);
  out[0] = calls > 0 ? (double)lat[calls / 2] : 0;
  out[1] = calls > 0 ? (double)lat[(size_t)calls * 9 / 10] : 0;
  out[2] = (double)errors;
  free(lat);
  return (int32_t)errors;
}

/* Calls a handler `calls` times on this thread; returns the mean ns per call. */
double hh_loop(void* handler, void* frame, int32_t calls) {
  int64_t t0 = now_ns();
  XLA_FFI_CallFrame* f = frame;
  for (int32_t i = 0; i < calls; i++) {
    f->future = NULL;
    XLA_FFI_Error* e = ((XLA_FFI_Handler*)handler)(f);
    if (e) {
      hh_error_destroy(e);
      return -1;
    }
  }
  return (double)(now_ns() - t0) / calls;
}

/* A native task for thread-pool tests: completes the future passed as data. */
static void complete_task(void* data) {
  XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL, data};
  XLA_FFI_Error* e = api_future_set_available(&a);
  if (e) hh_error_destroy(e);
}
void* hh_complete_task(void) { return (void*)complete_task; }

/* A fresh pending harness future (free with hh_future_free). */
void* hh_future_new(void) {
  XLA_FFI_Future_Create_Args a = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  api_future_create(&a);
  return a.future;
}

/* ---------------------------------------------------------------------- */
/* A frame that lives only during the call, as XLA's                       */
/* ---------------------------------------------------------------------- */

typedef struct {
  void* handler;
  const XLA_FFI_CallFrame* frame;
  int32_t code;
  char msg[256];
} stack_frame_job;

static void* stack_frame_main(void* p) {
  stack_frame_job* j = p;
  XLA_FFI_CallFrame f = *j->frame; /* on this thread's stack, like XLA's CallFrame::Build */
  f.future = NULL;
  XLA_FFI_Error* e = ((XLA_FFI_Handler*)j->handler)(&f);
  XLA_FFI_Future* fut = f.future;
  /* The call returned: the frame is gone. Overwrite it before waiting for the future. */
  volatile unsigned char* bytes = (volatile unsigned char*)&f;
  for (size_t i = 0; i < sizeof f; i++) bytes[i] = 0xAB;
  j->code = 0;
  if (e) {
    j->code = e->code;
    snprintf(j->msg, sizeof j->msg, "%s", e->msg);
    hh_error_destroy(e);
  } else if (fut) {
    j->code = hh_future_wait(fut);
    if (j->code) snprintf(j->msg, sizeof j->msg, "%s", fut->error->msg);
    hh_future_free(fut);
  }
  return NULL;
}

/*
 * Calls `handler` once from a new thread with a copy of `frame` on that
 * thread's stack, overwritten as soon as the handler returns (an async handler
 * still has its future pending then), and waits for the future. Returns 0 or
 * the error code; the message goes into msg (cap 256).
 */
int32_t hh_call_stack_frame(void* handler, void* frame, char* msg) {
  stack_frame_job j;
  memset(&j, 0, sizeof j);
  j.handler = handler;
  j.frame = frame;
  pthread_t th;
  if (pthread_create(&th, NULL, stack_frame_main, &j) != 0) return -1;
  pthread_join(th, NULL);
  snprintf(msg, 256, "%s", j.msg);
  return j.code;
}
