/*
 * fuzz.c: a seeded, deterministic, bounded fuzzer of the embedded runtime.
 * Built with runtime_handlers.c into a test library; fuzz_run() resolves the
 * runtime's entry points from the main library (dlopen of its path) and runs
 * `cases` cases, each one of these targets:
 *
 *   0..17  one XLA_FFI_Api function with a mutated argument struct (struct
 *          size too small, null args, null/foreign/stale pointers, bogus enum
 *          values, names null, oversized or not UTF-8), called outside a
 *          handler (the Future_* functions are called inside one, as XLA
 *          handlers do);
 *   18     xla_ffi_deno_runtime_frame_build on a mutated frame description;
 *   19     a mutated call frame (struct sizes, null pointers, negative or huge
 *          counts and ranks, bogus dtype/arg/ret/attr types, names not sorted,
 *          duplicated or not UTF-8, oversized strings and arrays) fed to
 *          xla_ffi_deno_runtime_check_call_frame and to
 *          xla_ffi_deno_runtime_call (checked mode) with a C handler;
 *   20     the runtime's own C entry points with null or malformed inputs;
 *   21     handlers that misbehave (foreign or destroyed errors, futures that
 *          are not the runtime's, error plus future, pending futures);
 *   22     handler entry points called directly (as XLA calls them) with a
 *          mutated call frame: the `raw` handlers passed to fuzz_run (e.g. the
 *          module's TS handler entry points), or a C handler that checks its
 *          frame first. A frame known to be malformed must give an error.
 *
 * Pass: no crash, no hang; every returned error has a code in 1..16 and a
 * message; inputs known to be invalid give an error; and inputs valid by
 * construction give exactly the outcome the fuzzer predicts: success, or the
 * error the case makes on purpose (a handler that returns one, a stream on
 * Host, a state already set, a duplicate registration with other traits...).
 * The fuzzer keeps a model of what it registered (handler and type names
 * unique to the run, since the registries are process-wide) and of the
 * instance's state to predict them. The only outcomes it does not predict:
 * registrations under the empty name, which every run of the process shares.
 * A violation is counted and the first one is described with its case number
 * and seed.
 *
 * Pointers are mutated only within what is checkable in-process: null,
 * pointers to readable memory that is not the runtime's (a zeroed buffer),
 * released objects, and lengths bounded by a valid backing allocation.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#include "test_handler_util.h"

/* The C test handlers (runtime_handlers.c) used on valid frames. */
XLA_FFI_Error* test_noop(XLA_FFI_CallFrame* cf);
XLA_FFI_Error* test_return_error(XLA_FFI_CallFrame* cf);
XLA_FFI_Error* test_get_message(XLA_FFI_CallFrame* cf);
XLA_FFI_Error* test_stream(XLA_FFI_CallFrame* cf);
XLA_FFI_Error* test_device_memory(XLA_FFI_CallFrame* cf);
XLA_FFI_Error* test_future_misuse(XLA_FFI_CallFrame* cf);

/* ------------------------------------------------------------------------ */
/* The runtime's entry points                                                */
/* ------------------------------------------------------------------------ */

typedef struct frame frame; /* xrt_frame */
typedef struct rt rt;       /* xrt_runtime */
typedef struct inst inst;   /* xrt_instance */

static struct {
  const XLA_FFI_Api* (*api)(int32_t);
  rt* (*runtime_new)(int32_t, int32_t, int32_t);
  void (*runtime_free)(rt*);
  inst* (*instance_new)(void);
  void (*instance_free)(inst*);
  frame* (*frame_build)(const uint8_t*, int32_t);
  XLA_FFI_CallFrame* (*frame_call_frame)(frame*);
  void (*frame_configure)(frame*, int32_t, int64_t, int32_t, inst*, const int64_t*, int32_t);
  void (*frame_set_arg)(frame*, int32_t, double);
  void (*frame_free)(frame*);
  /* (mode, runtime, handler, frame or call frame, out) → 0, 1 (error in out[0]), 2 (begun) */
  int32_t (*call)(int32_t, rt*, XLA_FFI_Handler*, void*, void**);
  XLA_FFI_Error* (*check_call_frame)(const XLA_FFI_CallFrame*);
  void* (*call_new)(rt*, const frame*);
  XLA_FFI_Error* (*call_wait)(void*, XLA_FFI_Handler*, int32_t, int64_t, int64_t*, char*, int32_t,
                              void*, void*, void*, void*, void*, void*, void*, void*);
  int32_t (*error_code)(XLA_FFI_Error*);
  const char* (*error_message)(XLA_FFI_Error*);
  void (*error_destroy)(XLA_FFI_Error*);
  XLA_FFI_Error* (*reg)(rt*, const char*, int64_t, const char*, int64_t, const uint64_t*,
                        uint32_t);
  XLA_FFI_Error* (*lookup)(rt*, const char*, int64_t, const char*, int64_t, uint64_t*);
  XLA_FFI_Error* (*register_type)(rt*, const char*, int64_t, XLA_FFI_TypeId*, void*);
  XLA_FFI_Error* (*metadata)(rt*, XLA_FFI_Handler*, int64_t*);
  int32_t (*future_release)(XLA_FFI_Future*);
} X;

/* The runtime's calls the fuzzer makes: xla_ffi_deno_runtime_call in its synchronous modes
 * (runtime_internal.h: XRT_CALL_SYNC 0 with a frame, XRT_CALL_CHECKED 1 with a raw call frame),
 * and a snapshot's one call off the JS thread (xla_ffi_deno_runtime_call_wait, threads 0). */
static XLA_FFI_Error* call_sync(rt* r, XLA_FFI_Handler* h, frame* fr) {
  void* out[1] = {NULL};
  return X.call(0, r, h, fr, out) == 1 ? out[0] : NULL;
}
static XLA_FFI_Error* call_checked(rt* r, XLA_FFI_Handler* h, XLA_FFI_CallFrame* cf) {
  void* out[1] = {NULL};
  return X.call(1, r, h, cf, out) == 1 ? out[0] : NULL;
}
static XLA_FFI_Error* call_run(void* c, XLA_FFI_Handler* h) {
  return X.call_wait(c, h, 0, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

static int resolve(void* lib) {
#define R(field, name)                                   \
  do {                                                   \
    *(void**)&X.field = dlsym(lib, name);                \
    if (!X.field) return 0;                              \
  } while (0)
  R(api, "xla_ffi_deno_runtime_api_version");
  R(runtime_new, "xla_ffi_deno_runtime_new");
  R(runtime_free, "xla_ffi_deno_runtime_free");
  R(instance_new, "xla_ffi_deno_runtime_instance_new");
  R(instance_free, "xla_ffi_deno_runtime_instance_free");
  R(frame_build, "xla_ffi_deno_runtime_frame_build");
  R(frame_call_frame, "xla_ffi_deno_runtime_frame_call_frame");
  R(frame_configure, "xla_ffi_deno_runtime_frame_configure");
  R(frame_set_arg, "xla_ffi_deno_runtime_frame_set_arg");
  R(frame_free, "xla_ffi_deno_runtime_frame_free");
  R(call, "xla_ffi_deno_runtime_call");
  R(check_call_frame, "xla_ffi_deno_runtime_check_call_frame");
  R(call_new, "xla_ffi_deno_runtime_call_new");
  R(call_wait, "xla_ffi_deno_runtime_call_wait");
  R(error_code, "xla_ffi_deno_runtime_error_code");
  R(error_message, "xla_ffi_deno_runtime_error_message");
  R(error_destroy, "xla_ffi_deno_runtime_error_destroy");
  R(reg, "xla_ffi_deno_runtime_register");
  R(lookup, "xla_ffi_deno_runtime_lookup");
  R(register_type, "xla_ffi_deno_runtime_register_type");
  R(metadata, "xla_ffi_deno_runtime_metadata");
  R(future_release, "xla_ffi_deno_runtime_future_release");
#undef R
  return 1;
}

/* ------------------------------------------------------------------------ */
/* State of one run                                                          */
/* ------------------------------------------------------------------------ */

enum { T_API = 18, T_BUILD = 18, T_FRAME = 19, T_ENTRY = 20, T_HANDLER = 21, T_RAW = 22,
       T_COUNT = 23 };
enum { EXPECT_ANY = -1, EXPECT_FAIL = 0, EXPECT_OK = 1 };

static struct {
  uint64_t rng;
  uint64_t seed;
  int64_t case_no;
  int target;
  const XLA_FFI_Api* api;
  rt* runtime;
  frame* fr;   /* a valid frame whose context the API calls use */
  inst* in;    /* its instance (State_Set/Get) */
  XLA_FFI_ExecutionContext* ctx;
  int64_t user_value;
  int64_t errors, successes, violations;
  int64_t per_target[T_COUNT];
  char* msg;
  int32_t msg_cap;
  void* stale_error;  /* a destroyed XLA_FFI_Error* */
  void* stale_future; /* a released XLA_FFI_Future* */
  _Atomic int64_t tasks_run;
  char trace[64]; /* the mutations of the current case, for messages */
  XLA_FFI_Handler** raw;
  int32_t n_raw;
  int64_t tasks_scheduled;
  int64_t futures_left; /* futures the raw handlers left (async handlers) */
  uint32_t target_mask; /* targets to run (bit t), 0 = all */
  const int32_t* raw_expect; /* per raw handler: RAW_* (what it does with a valid frame) */
  int64_t flat_cap;          /* slots of the TS entry points' flat buffer (0: not TS) */
  /* The model: names of this run, what it registered, the instance's state. */
  char names[8][40];
  char bad_name[40];
  int n_reg, n_types;
  struct {
    char name[48], plat[48];
    size_t name_len, plat_len;
    void* execute;
    uint32_t traits;
  } reg[256];
  struct {
    char name[48];
    size_t len;
    int64_t id;
  } types[256];
  int state_has;
  int64_t state_type;
  /* Arena for call frames and descriptions, reset every case. */
  unsigned char* arena;
  size_t arena_used, arena_cap;
} F;

static uint64_t junk[64]; /* readable memory the runtime does not own */

static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (F.rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint32_t below(uint32_t n) { return n ? (uint32_t)(next() % n) : (uint32_t)next() * 0; }
static int chance(uint32_t n) { return below(n) == 0; }

static void* arena(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (F.arena_used + n > F.arena_cap) return NULL;
  void* p = F.arena + F.arena_used;
  F.arena_used += n;
  memset(p, 0, n);
  return p;
}

__attribute__((format(printf, 1, 2))) static void violation(const char* fmt, ...) {
  if (F.violations++ == 0 && F.msg && F.msg_cap > 0) {
    int n = snprintf(F.msg, (size_t)F.msg_cap, "case %lld (seed %llu, target %d%s): ",
                     (long long)F.case_no, (unsigned long long)F.seed, F.target, F.trace);
    if (n < 0) n = 0;
    if (n < F.msg_cap) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(F.msg + n, (size_t)(F.msg_cap - n), fmt, ap);
      va_end(ap);
    }
  }
}

/* Checks one result of the runtime (what == a label for messages). An error
 * must have a code in 1..16 and a non-empty message; it is destroyed. */
static void verdict(XLA_FFI_Error* e, int expect, const char* what) {
  if (e) {
    int32_t code = X.error_code(e);
    const char* m = X.error_message(e);
    if (code < 1 || code > 16) violation("%s: error code %d out of range", what, code);
    if (!m || !m[0]) violation("%s: error without a message", what);
    if (expect == EXPECT_OK) violation("%s: unexpected error %d: %s", what, code, m ? m : "");
    X.error_destroy(e);
    F.errors++;
  } else {
    if (expect == EXPECT_FAIL) violation("%s: invalid input accepted", what);
    F.successes++;
  }
}

/* An error made through the API (for SetError, GetMessage, Destroy). */
static XLA_FFI_Error* make_error(int code, const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg,
                                 (XLA_FFI_Error_Code)code};
  return F.api->XLA_FFI_Error_Create(&a);
}

static void destroy(XLA_FFI_Error* e) {
  XLA_FFI_Error_Destroy_Args a = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  F.api->XLA_FFI_Error_Destroy(&a);
}

/* A context pointer: usually ours, else null or foreign. *ok = valid. */
static XLA_FFI_ExecutionContext* pick_ctx(int* ok) {
  switch (below(6)) {
    case 0: *ok = 0; return NULL;
    case 1: *ok = 0; return (XLA_FFI_ExecutionContext*)junk;
    default: *ok = 1; return F.ctx;
  }
}

/* Names of this run ("fuzz.<run>.<letter>"): the registries outlive runs. */
static void name_run(void) {
  static _Atomic uint64_t runs;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  uint64_t run = ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) ^
                 (atomic_fetch_add(&runs, 1) << 48);
  for (int i = 0; i < 8; i++)
    snprintf(F.names[i], sizeof F.names[i], "fuzz.%llx.%c", (unsigned long long)run, 'a' + i);
  snprintf(F.bad_name, sizeof F.bad_name, "fuzz.%llx.\xff", (unsigned long long)run);
}

/* A name span: valid from a small pool, or null/oversized/not UTF-8.
 * *ok = 0 when it must be rejected. Oversized lengths point into a backing
 * allocation at least that long. */
static XLA_FFI_ByteSpan pick_name(int* ok) {
  XLA_FFI_ByteSpan s;
  const char* n = F.names[below(8)];
  s.ptr = n;
  s.len = strlen(n);
  *ok = 1;
  switch (below(10)) {
    case 0: s.ptr = NULL; s.len = 1 + below(100); *ok = 0; break;
    case 1: s.len = (size_t)1 << (13 + below(40)); *ok = 0; break; /* > XFD_MAX_NAME */
    case 2: s.ptr = NULL; s.len = 0; break; /* the empty name */
    case 3: {
      size_t len = strlen(F.bad_name);
      char* p = arena(len + 1);
      if (p) {
        memcpy(p, F.bad_name, len);
        s.ptr = p;
        s.len = len;
      }
      break; /* registry names need not be UTF-8 */
    }
    default: break;
  }
  return s;
}


/* ------------------------------------------------------------------------ */
/* The model: what a valid registration, lookup or state call must give      */
/* ------------------------------------------------------------------------ */

/* The runtime's canonical platform name (lower case; "cpu" is "host"). */
static size_t canon_platform(const XLA_FFI_ByteSpan* p, char* out, size_t cap) {
  size_t n = p->len < cap - 1 ? p->len : cap - 1;
  for (size_t i = 0; i < n; i++) {
    char c = p->ptr[i];
    out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  out[n] = '\0';
  if (n == 3 && memcmp(out, "cpu", 3) == 0) return (size_t)snprintf(out, cap, "host");
  if (n == 3 && memcmp(out, "gpu", 3) == 0) return (size_t)snprintf(out, cap, "cuda");
  return n;
}

/* The registration of a (valid) name on a platform in the model, or -1. */
static int reg_find(const XLA_FFI_ByteSpan* n, const char* plat, size_t plat_len) {
  for (int i = 0; i < F.n_reg; i++)
    if (F.reg[i].name_len == n->len && memcmp(F.reg[i].name, n->ptr, n->len) == 0 &&
        F.reg[i].plat_len == plat_len && memcmp(F.reg[i].plat, plat, plat_len) == 0)
      return i;
  return -1;
}

/*
 * The outcome of registering `execute` (the rest of the bundle null) with
 * `traits` under a valid name and platform on the 0.1 registry (XLA 0.1
 * ffi_api.cc: a second registration must have the same traits and bundle).
 * EXPECT_ANY only for the empty name, which every run of the process shares.
 */
static int expect_register(const XLA_FFI_ByteSpan* n, const XLA_FFI_ByteSpan* p, void* execute,
                           uint32_t traits) {
  if (n->len == 0) return EXPECT_ANY;
  char plat[48];
  if (p->len >= sizeof plat) return EXPECT_ANY; /* not a name pick_name makes valid */
  size_t pl = canon_platform(p, plat, sizeof plat);
  int i = reg_find(n, plat, pl);
  if (i >= 0) return F.reg[i].traits == traits && F.reg[i].execute == execute ? EXPECT_OK
                                                                              : EXPECT_FAIL;
  if (F.n_reg < (int)(sizeof F.reg / sizeof F.reg[0]) && n->len < sizeof F.reg[0].name) {
    memcpy(F.reg[F.n_reg].name, n->ptr, n->len);
    F.reg[F.n_reg].name_len = n->len;
    memcpy(F.reg[F.n_reg].plat, plat, pl);
    F.reg[F.n_reg].plat_len = pl;
    F.reg[F.n_reg].execute = execute;
    F.reg[F.n_reg].traits = traits;
    F.n_reg++;
  }
  return EXPECT_OK;
}

/* The outcome of looking a valid name up on a platform. */
static int expect_lookup(const XLA_FFI_ByteSpan* n, const XLA_FFI_ByteSpan* p) {
  if (n->len == 0) return EXPECT_ANY;
  char plat[48];
  if (p->len >= sizeof plat) return EXPECT_ANY;
  size_t pl = canon_platform(p, plat, sizeof plat);
  return reg_find(n, plat, pl) >= 0 ? EXPECT_OK : EXPECT_FAIL;
}

/* The outcome of registering a valid type name with id `want` (0: the
 * runtime assigns one); call type_learn with the result. XLA
 * type_registry.cc: a known name needs its own id again. */
static int expect_type(const XLA_FFI_ByteSpan* n, int64_t want) {
  if (n->len == 0) return EXPECT_ANY;
  for (int i = 0; i < F.n_types; i++)
    if (F.types[i].len == n->len && memcmp(F.types[i].name, n->ptr, n->len) == 0)
      return want != 0 && want == F.types[i].id ? EXPECT_OK : EXPECT_FAIL;
  return EXPECT_OK;
}

static void type_learn(const XLA_FFI_ByteSpan* n, int64_t id) {
  if (n->len == 0 || n->len >= sizeof F.types[0].name) return;
  for (int i = 0; i < F.n_types; i++)
    if (F.types[i].len == n->len && memcmp(F.types[i].name, n->ptr, n->len) == 0) return;
  if (F.n_types == (int)(sizeof F.types / sizeof F.types[0])) return;
  memcpy(F.types[F.n_types].name, n->ptr, n->len);
  F.types[F.n_types].len = n->len;
  F.types[F.n_types].id = id;
  F.n_types++;
}

/* ------------------------------------------------------------------------ */
/* Handlers and tasks the fuzzer uses                                        */
/* ------------------------------------------------------------------------ */

static void fuzz_task(void* p) {
  (void)p;
  atomic_fetch_add(&F.tasks_run, 1);
}

static void fuzz_delete(void* p) { free(p); }

static uint64_t walk_hash;
/* What fuzz_walk returned last: 0 success, 1 an error, -1 not called since reset. */
static int walk_result = -1;

/* The outcome a call of fuzz_walk on a valid frame must have (the walk itself
 * decides: it returns an error for about a quarter of the frames). */
static int walk_expect(const char* what) {
  if (walk_result < 0) {
    violation("%s: the handler was not called", what);
    return EXPECT_ANY;
  }
  return walk_result == 0 ? EXPECT_OK : EXPECT_FAIL;
}

static void walk_bytes(const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; i++) walk_hash = walk_hash * 31 + b[i];
}

static void walk_attrs(const XLA_FFI_Attrs* a) {
  for (int64_t i = 0; i < a->size; i++) {
    walk_bytes(a->names[i]->ptr, a->names[i]->len);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = a->attrs[i];
        walk_bytes(s->value, xla_ffi_dtype_width(s->dtype));
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = a->attrs[i];
        walk_bytes(arr->data, arr->size * xla_ffi_dtype_width(arr->dtype));
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = a->attrs[i];
        walk_bytes(s->ptr, s->len);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        walk_attrs(a->attrs[i]);
        break;
      default:
        break;
    }
  }
}

static void walk_buffer(const XLA_FFI_Buffer* b) {
  int64_t n = 1;
  for (int64_t d = 0; d < b->rank; d++) n *= b->dims[d];
  walk_bytes(b->dims, sizeof(int64_t) * (size_t)b->rank);
  if (n > 0 && b->data && b->dtype != XLA_FFI_DataType_TOKEN) walk_bytes(b->data, 1);
}

/* Reads every part of a (checked) frame, calls the context functions, and
 * returns an error for about a quarter of the frames. */
static XLA_FFI_Error* fuzz_walk(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  walk_result = 1;
  walk_hash = 7;
  for (int64_t i = 0; i < cf->args.size; i++) walk_buffer(cf->args.args[i]);
  for (int64_t i = 0; i < cf->rets.size; i++) walk_buffer(cf->rets.rets[i]);
  walk_attrs(&cf->attrs);
  XLA_FFI_RunId_Get_Args r = {XLA_FFI_RunId_Get_Args_STRUCT_SIZE, NULL, cf->ctx, 0};
  XLA_FFI_Error* e = cf->api->XLA_FFI_RunId_Get(&r);
  if (e) return e;
  XLA_FFI_DeviceOrdinal_Get_Args d = {XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, NULL, cf->ctx,
                                      0};
  e = cf->api->XLA_FFI_DeviceOrdinal_Get(&d);
  if (e) return e;
  int64_t nt = 0;
  XLA_FFI_ThreadPool_NumThreads_Args t = {XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, &nt};
  e = cf->api->XLA_FFI_ThreadPool_NumThreads(&t);
  walk_result = 1;
  if (e) return e;
  if ((walk_hash & 3) == 0) {
    char m[64];
    snprintf(m, sizeof m, "walk %llx", (unsigned long long)walk_hash);
    return make_error((int)(walk_hash % 16) + 1, m);
  }
  walk_result = 0;
  return NULL;
}

/* Misbehaving handler; the mode is set by the case. */
static int bad_mode;
static XLA_FFI_Future* bad_pending;

static XLA_FFI_Error* new_future(void) {
  XLA_FFI_Future_Create_Args c = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = F.api->XLA_FFI_Future_Create(&c);
  if (e) return e;
  bad_pending = c.future;
  return NULL;
}

static XLA_FFI_Error* complete(XLA_FFI_Future* f) {
  XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL, f};
  return F.api->XLA_FFI_Future_SetAvailable(&a);
}

static XLA_FFI_Error* fuzz_bad(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  bad_pending = NULL;
  switch (bad_mode) {
    case 0: return (XLA_FFI_Error*)junk; /* not an error of the runtime */
    case 1: return F.stale_error;        /* destroyed (or null) */
    case 2: cf->future = (XLA_FFI_Future*)junk; return NULL;
    case 3: cf->future = F.stale_future; return NULL;
    case 4: { /* an error and a completed future */
      if (new_future()) return make_error(13, "create failed");
      destroy(complete(bad_pending));
      cf->future = bad_pending;
      return make_error(10, "error and future");
    }
    case 5: { /* a pending future from a synchronous call: orphaned, completed later */
      if (new_future()) return make_error(13, "create failed");
      cf->future = bad_pending;
      return NULL;
    }
    case 6: return make_error(XLA_FFI_Error_Code_OK, "fine"); /* OK = success */
    default: { /* a code outside the enum (reads as UNKNOWN); 0 would be OK */
      int code = (int)(next() % 1000) - 500;
      return make_error(code == 0 ? 501 : code, "bogus code");
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Targets 0..17: API functions                                              */
/* ------------------------------------------------------------------------ */

static const size_t kSizes[18] = {
    XLA_FFI_Error_Create_Args_STRUCT_SIZE,          XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE,
    XLA_FFI_Error_Destroy_Args_STRUCT_SIZE,         XLA_FFI_Handler_Register_Args_STRUCT_SIZE,
    XLA_FFI_Stream_Get_Args_STRUCT_SIZE,            XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE,
    XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE,  XLA_FFI_State_Set_Args_STRUCT_SIZE,
    XLA_FFI_State_Get_Args_STRUCT_SIZE,             XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE,
    XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE,     XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE,
    XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, XLA_FFI_Future_Create_Args_STRUCT_SIZE,
    XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE,   XLA_FFI_Future_SetError_Args_STRUCT_SIZE,
    XLA_FFI_RunId_Get_Args_STRUCT_SIZE,             XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE,
};

/* Plan for a Future_* case, run inside fuzz_future. */
static int fut_fn;
static int64_t fut_result[2];
/* The outcome of the call a Future case makes: the future it hands to the
 * runtime ends available, or with the error a valid SetError gave it. */
static int fut_expect;

static XLA_FFI_Error* fuzz_future(XLA_FFI_CallFrame* cf);

/* Builds the args of API function `fn` in buf; returns the pointer to pass
 * (null when the case passes null args) and sets *ok (input valid). */
static void* api_args(int fn, uint64_t* buf, int* ok, int* size_ok) {
  memset(buf, 0, 16 * sizeof(uint64_t));
  *ok = 1;
  *size_ok = 1;
  size_t size = kSizes[fn];
  switch (below(8)) {
    case 0: size = below((uint32_t)size); *size_ok = 0; break; /* too small */
    case 1: size += 1 + below(64); break;                    /* a newer, larger struct */
    default: break;
  }
  buf[0] = size;
  if (chance(16)) {
    *size_ok = 0;
    return NULL;
  }
  return buf;
}

static void api_case(int fn) {
  uint64_t buf[16];
  int ok, size_ok;
  void* args = api_args(fn, buf, &ok, &size_ok);
  const XLA_FFI_Api* api = F.api;
  int expect = EXPECT_ANY;
  XLA_FFI_Error* e = NULL;
  char label[64];
  snprintf(label, sizeof label, "API function %d", fn);
  int ctx_ok = 1;
  switch (fn) {
    case 0: { /* Error_Create: always yields an error object */
      XLA_FFI_Error_Create_Args* a = (void*)buf;
      const char* msgs[] = {"fuzz message", "", NULL, "x\xff\xfe invalid utf-8"};
      a->message = msgs[below(4)];
      if (chance(8)) {
        char* big = arena(65536);
        if (big) {
          memset(big, 'm', 65535);
          a->message = big;
        }
      }
      a->errc = (XLA_FFI_Error_Code)(chance(2) ? below(17) : (uint32_t)next());
      e = api->XLA_FFI_Error_Create(args);
      if (!e) {
        violation("Error_Create returned null");
        return;
      }
      int32_t code = X.error_code(e);
      if (code < 0 || code > 16) violation("Error_Create: code %d out of range", code);
      XLA_FFI_Error_GetMessage_Args g = {XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, NULL, e,
                                         NULL};
      api->XLA_FFI_Error_GetMessage(&g);
      if (!g.message) violation("GetMessage returned null");
      destroy(e);
      F.successes++;
      return;
    }
    case 1: { /* GetMessage: void */
      XLA_FFI_Error_GetMessage_Args* a = (void*)buf;
      XLA_FFI_Error* own = NULL;
      switch (below(4)) {
        case 0: a->error = NULL; break;
        case 1: a->error = (XLA_FFI_Error*)junk; break;
        case 2: a->error = F.stale_error; break;
        default: a->error = own = make_error(1 + (int)below(16), "get message"); break;
      }
      api->XLA_FFI_Error_GetMessage(args);
      if (args && size_ok && !a->message) violation("GetMessage left the message null");
      if (own) {
        F.stale_error = own;
        destroy(own);
      }
      F.successes++;
      return;
    }
    case 2: { /* Destroy: void; foreign and destroyed pointers are ignored */
      XLA_FFI_Error_Destroy_Args* a = (void*)buf;
      XLA_FFI_Error* own = NULL;
      switch (below(4)) {
        case 0: a->error = NULL; break;
        case 1: a->error = (XLA_FFI_Error*)junk; break;
        case 2: a->error = F.stale_error; break;
        default: a->error = own = make_error(3, "destroy me"); break;
      }
      api->XLA_FFI_Error_Destroy(args);
      if (own) {
        /* Destroyed by the call whenever the args are there (a small
         * struct_size is only logged, as XLA does); else destroy it now. */
        if (!args) destroy(own);
        F.stale_error = own;
        destroy(own); /* a second destroy: ignored */
      }
      F.successes++;
      return;
    }
    case 3: { /* Handler_Register */
      XLA_FFI_Handler_Register_Args* a = (void*)buf;
      int nok, pok;
      a->name = pick_name(&nok);
      a->platform = pick_name(&pok);
      if (!chance(4)) {
        const char* plats[] = {"Host", "cpu", "CPU", "host"};
        a->platform.ptr = plats[below(4)];
        a->platform.len = strlen(a->platform.ptr);
        pok = 1;
      }
      a->bundle.execute = chance(8) ? NULL : (chance(2) ? fuzz_walk : test_noop);
      a->traits = chance(4) ? (uint32_t)next() : 0;
      ok = nok && pok && a->bundle.execute;
      expect = size_ok && ok ? expect_register(&a->name, &a->platform, (void*)a->bundle.execute,
                                               a->traits)
                             : EXPECT_FAIL;
      e = api->XLA_FFI_Handler_Register(args);
      break;
    }
    case 4: { /* Stream_Get: no stream on Host */
      XLA_FFI_Stream_Get_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      expect = EXPECT_FAIL;
      e = api->XLA_FFI_Stream_Get(args);
      break;
    }
    case 5: { /* TypeId_Register */
      XLA_FFI_TypeId_Register_Args* a = (void*)buf;
      XLA_FFI_TypeId id = {chance(2) ? 0 : (int64_t)below(4) + 1000};
      int nok;
      a->name = pick_name(&nok);
      a->type_id = chance(6) ? NULL : &id;
      int valid = size_ok && nok && a->type_id;
      expect = valid ? expect_type(&a->name, id.type_id) : EXPECT_FAIL;
      e = api->XLA_FFI_TypeId_Register(args);
      if (valid && !e) type_learn(&a->name, id.type_id);
      break;
    }
    case 6: { /* ExecutionContext_Get: user data type id 77 is set */
      XLA_FFI_ExecutionContext_Get_Args* a = (void*)buf;
      XLA_FFI_TypeId id = {chance(2) ? 77 : (int64_t)next()};
      a->ctx = pick_ctx(&ctx_ok);
      a->type_id = chance(6) ? NULL : &id;
      int good = size_ok && ctx_ok && a->type_id;
      expect = good && id.type_id == 77 ? EXPECT_OK : EXPECT_FAIL; /* NOT_FOUND otherwise */
      e = api->XLA_FFI_ExecutionContext_Get(args);
      if (!e && *(int64_t*)a->data != F.user_value) violation("ExecutionContext_Get: wrong data");
      break;
    }
    case 7: { /* State_Set: a fresh instance every 4th case */
      XLA_FFI_State_Set_Args* a = (void*)buf;
      XLA_FFI_TypeId id = {(int64_t)below(3) + 50};
      a->ctx = pick_ctx(&ctx_ok);
      a->type_id = chance(6) ? NULL : &id;
      a->state = malloc(16);
      a->deleter = chance(4) ? NULL : fuzz_delete;
      if (!a->deleter) {
        free(a->state);
        a->state = junk; /* no deleter: the state is not owned */
      }
      /* One state per instance (0.1: the instantiate stage's). */
      int valid = size_ok && ctx_ok && a->type_id;
      expect = valid && !F.state_has ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_State_Set(args);
      if (e && a->deleter) free(a->state);
      if (valid && !e && !F.state_has) {
        F.state_has = 1;
        F.state_type = id.type_id;
      }
      break;
    }
    case 8: { /* State_Get */
      XLA_FFI_State_Get_Args* a = (void*)buf;
      XLA_FFI_TypeId id = {(int64_t)below(3) + 50};
      a->ctx = pick_ctx(&ctx_ok);
      a->type_id = chance(6) ? NULL : &id;
      int valid = size_ok && ctx_ok && a->type_id;
      expect = valid && F.state_has && F.state_type == id.type_id ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_State_Get(args);
      break;
    }
    case 9: { /* DeviceMemory_Allocate: not on Host */
      XLA_FFI_DeviceMemory_Allocate_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      a->size = (size_t)next();
      a->alignment = (size_t)1 << below(64);
      expect = EXPECT_FAIL;
      e = api->XLA_FFI_DeviceMemory_Allocate(args);
      break;
    }
    case 10: { /* DeviceMemory_Free: not on Host */
      XLA_FFI_DeviceMemory_Free_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      a->size = (size_t)next();
      a->data = chance(2) ? NULL : junk;
      expect = EXPECT_FAIL;
      e = api->XLA_FFI_DeviceMemory_Free(args);
      break;
    }
    case 11: { /* ThreadPool_Schedule */
      XLA_FFI_ThreadPool_Schedule_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      a->task = chance(6) ? NULL : fuzz_task;
      a->data = junk;
      expect = size_ok && ctx_ok && a->task ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_ThreadPool_Schedule(args);
      if (!e) F.tasks_scheduled++;
      break;
    }
    case 12: { /* ThreadPool_NumThreads */
      XLA_FFI_ThreadPool_NumThreads_Args* a = (void*)buf;
      int64_t n = -1;
      a->ctx = pick_ctx(&ctx_ok);
      a->num_threads = chance(6) ? NULL : &n;
      expect = size_ok && ctx_ok && a->num_threads ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_ThreadPool_NumThreads(args);
      if (!e && n != 2) violation("NumThreads: %lld, expected 2", (long long)n);
      break;
    }
    case 13:
    case 14:
    case 15: { /* Future_*: inside a handler, which returns the future */
      fut_fn = fn;
      fut_expect = EXPECT_ANY;
      e = call_sync(F.runtime, fuzz_future, F.fr);
      if (fut_expect == EXPECT_ANY) violation("Future case: the handler was not called");
      verdict(e, fut_expect, label);
      if (fut_result[0]) violation("Future case: %s", "invalid input accepted");
      /* Outside any call no future is live: a released one is an error. */
      if (F.stale_future) {
        verdict(complete(F.stale_future), EXPECT_FAIL, "SetAvailable on a released future");
      }
      return;
    }
    case 16: {
      XLA_FFI_RunId_Get_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      expect = size_ok && ctx_ok ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_RunId_Get(args);
      if (!e && a->run_id != 42) violation("RunId_Get: %lld", (long long)a->run_id);
      break;
    }
    default: {
      XLA_FFI_DeviceOrdinal_Get_Args* a = (void*)buf;
      a->ctx = pick_ctx(&ctx_ok);
      expect = size_ok && ctx_ok ? EXPECT_OK : EXPECT_FAIL;
      e = api->XLA_FFI_DeviceOrdinal_Get(args);
      if (!e && a->device_ordinal != 3) violation("DeviceOrdinal_Get: %d", a->device_ordinal);
      break;
    }
  }
  if (!size_ok || !ctx_ok) expect = EXPECT_FAIL;
  (void)ok;
  verdict(e, expect, label);
}

/* Runs one Future_* case (fut_fn) inside a handler. fut_result[0] counts
 * invalid inputs that were accepted. The future it creates is always
 * completed once and handed to the runtime, which releases it. */
static XLA_FFI_Error* fuzz_future(XLA_FFI_CallFrame* cf) {
  if (test_is_metadata(cf)) return test_answer_metadata(cf);
  fut_result[0] = 0;
  uint64_t buf[16];
  int ok, size_ok;
  XLA_FFI_Future* f = NULL;
  if (fut_fn == 13) {
    void* args = api_args(13, buf, &ok, &size_ok);
    XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(args);
    fut_expect = e ? EXPECT_FAIL : EXPECT_OK;
    if (e) {
      if (size_ok) fut_result[0]++;
      return e; /* the handler's error: the runtime checks and frees it */
    }
    if (!size_ok) fut_result[0]++;
    f = ((XLA_FFI_Future_Create_Args*)buf)->future;
  } else {
    XLA_FFI_Future_Create_Args c = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
    XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&c);
    fut_expect = EXPECT_FAIL;
    if (e) {
      violation("Future_Create with valid arguments failed");
      return e;
    }
    f = c.future;
    void* args = api_args(fut_fn, buf, &ok, &size_ok);
    int fok = 1;
    void* target = f;
    switch (below(5)) {
      case 0: target = NULL; fok = 0; break;
      case 1: target = junk; fok = 0; break;
      case 2:
        if (F.stale_future && F.stale_future != f) {
          target = F.stale_future;
          fok = 0;
        }
        break;
      default: break;
    }
    if (fut_fn == 14) {
      ((XLA_FFI_Future_SetAvailable_Args*)buf)->future = target;
      e = cf->api->XLA_FFI_Future_SetAvailable(args);
    } else {
      XLA_FFI_Future_SetError_Args* a = (void*)buf;
      a->future = target;
      int eok = 1;
      switch (below(5)) {
        case 0: a->error = NULL; eok = 0; break;
        case 1: a->error = (XLA_FFI_Error*)junk; eok = 0; break;
        case 2: a->error = make_error(XLA_FFI_Error_Code_OK, "ok"); eok = 0; break;
        default: a->error = make_error(1 + (int)below(16), "future failed"); break;
      }
      XLA_FFI_Error* given = a->error;
      e = cf->api->XLA_FFI_Future_SetError(args);
      /* The runtime takes the error over only when the call succeeds (XLA
       * ffi_api.cc); a refused one is still the caller's. */
      if (e && given && given != (XLA_FFI_Error*)junk) destroy(given);
      fok = fok && eok;
    }
    /* A valid SetError leaves the future failed; anything else, available. */
    fut_expect = fut_fn == 15 && !e && size_ok && fok ? EXPECT_FAIL : EXPECT_OK;
    if (e) {
      if (size_ok && fok) fut_result[0]++; /* a valid completion failed */
      destroy(e);
    } else if (!(size_ok && fok)) {
      fut_result[0]++;
    }
  }
  /* Complete it (again: already completed is an error, then ignored). */
  XLA_FFI_Error* e = complete(f);
  if (e) destroy(e);
  cf->future = f;
  F.stale_future = f;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Target 18: frame descriptions                                             */
/* ------------------------------------------------------------------------ */

static const int kDtypes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 18, 19, 20, 23, 24, 25};

typedef struct {
  unsigned char* p;
  size_t n, cap;
} wbuf;

static void put(wbuf* w, const void* src, size_t n) {
  size_t padded = (n + 7) & ~(size_t)7;
  if (w->n + padded > w->cap) return;
  memset(w->p + w->n, 0, padded);
  memcpy(w->p + w->n, src, n);
  w->n += padded;
}
static void put2(wbuf* w, uint32_t a, uint32_t b) {
  uint32_t v[2] = {a, b};
  put(w, v, 8);
}

static void describe_dict(wbuf* w, int depth) {
  uint32_t n = below(5);
  put2(w, n, 0);
  for (uint32_t i = 0; i < n; i++) {
    char name[16];
    int len = snprintf(name, sizeof name, "k%u_%u", i, below(1000));
    uint32_t type = 1 + below(depth < 2 ? 4 : 3);
    if (type == 2 && depth >= 2) type = 3;
    put2(w, type == 2 ? 2 : type, (uint32_t)len);
    put(w, name, (size_t)len);
    switch (type) {
      case 1: { /* array */
        uint32_t dt = (uint32_t)kDtypes[below(15)], count = below(6);
        put2(w, dt, count);
        uint8_t data[96] = {0};
        put(w, data, count * xla_ffi_dtype_width(dt));
        break;
      }
      case 2: describe_dict(w, depth + 1); break;
      case 3: { /* scalar */
        put2(w, (uint32_t)kDtypes[below(15)], 0);
        uint64_t v = next();
        put(w, &v, 8);
        break;
      }
      default: { /* string */
        uint32_t len2 = below(20);
        put2(w, len2, 0);
        put(w, "abcdefghijklmnopqrstuvwxyz", len2);
        break;
      }
    }
  }
}

static size_t describe_frame(wbuf* w, uint64_t data_addr) {
  uint32_t nargs = below(4), nrets = below(3);
  put2(w, nargs, nrets);
  for (uint32_t i = 0; i < nargs + nrets; i++) {
    uint32_t rank = below(4);
    put2(w, (uint32_t)kDtypes[below(15)], rank);
    double addr = (double)data_addr;
    put(w, &addr, 8);
    for (uint32_t d = 0; d < rank; d++) {
      int64_t dim = below(3);
      put(w, &dim, 8);
    }
  }
  describe_dict(w, 0);
  return w->n;
}

static unsigned char backing[4096] __attribute__((aligned(16)));

static void build_case(void) {
  wbuf w = {arena(8192), 0, 8192};
  if (!w.p) return;
  size_t len = describe_frame(&w, (uint64_t)(uintptr_t)backing);
  int mutated = 0;
  int rounds = (int)below(4);
  for (int r = 0; r < rounds; r++) {
    mutated = 1;
    switch (below(5)) {
      case 0: len = below((uint32_t)len + 1); break;             /* truncated */
      case 1: w.p[below((uint32_t)len)] ^= (uint8_t)(1u << below(8)); break; /* a bit */
      case 2: {                                                  /* a u32 field */
        uint32_t v[] = {0, 1, 0x7fffffff, 0xffffffff, 0x80000000, 13, 255, 65537};
        size_t at = (size_t)below((uint32_t)(len / 4)) * 4;
        if (len >= 4) memcpy(w.p + at, &v[below(8)], 4);
        break;
      }
      case 3: { /* huge counts */
        uint32_t v = 0xffffffffu - below(4);
        memcpy(w.p + 4 * below(2), &v, 4);
        break;
      }
      default: if (len >= 8) len += 8 * below(4); break; /* trailing bytes (zeroed arena) */
    }
  }
  if (len > w.cap) len = w.cap;
  frame* fr = X.frame_build(w.p, (int32_t)len);
  if (!fr) {
    if (!mutated) violation("a valid frame description was rejected");
    F.errors++;
    return;
  }
  XLA_FFI_CallFrame* cf = X.frame_call_frame(fr);
  /* Mutated addresses are wild pointers: point every buffer at real memory. */
  for (int64_t i = 0; i < cf->args.size; i++) ((XLA_FFI_Buffer*)cf->args.args[i])->data = backing;
  for (int64_t i = 0; i < cf->rets.size; i++) ((XLA_FFI_Buffer*)cf->rets.rets[i])->data = backing;
  XLA_FFI_Error* e = X.check_call_frame(cf);
  if (e) {
    violation("a built frame fails the frame check: %s", X.error_message(e));
    X.error_destroy(e);
  } else {
    walk_result = -1;
    e = call_sync(F.runtime, fuzz_walk, fr);
    verdict(e, walk_expect("walk of a built frame"), "walk of a built frame");
  }
  X.frame_free(fr);
  F.successes++;
}

/* ------------------------------------------------------------------------ */
/* Target 19: mutated call frames                                            */
/* ------------------------------------------------------------------------ */

#define CAP 4

/* A valid call frame in the arena: buffers' data in `backing`, dims backed
 * by 8 entries, attributes sorted by name; nested up to depth 2. */
static int gen_attrs(XLA_FFI_Attrs* a, int depth) {
  int64_t n = below(6);
  a->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  a->size = n;
  a->types = arena(sizeof(XLA_FFI_AttrType) * CAP * 2);
  a->names = arena(sizeof(void*) * CAP * 2);
  a->attrs = arena(sizeof(void*) * CAP * 2);
  if (!a->types || !a->names || !a->attrs) return 0;
  for (int64_t i = 0; i < n; i++) {
    XLA_FFI_ByteSpan* nm = arena(sizeof *nm);
    char* s = arena(16);
    if (!nm || !s) return 0;
    nm->len = (size_t)snprintf(s, 16, "n%02d_%c", (int)i, 'a' + (int)below(26));
    nm->ptr = s;
    a->names[i] = nm;
    uint32_t t = 1 + below(depth < 2 ? 4 : 3);
    if (t == 2 && depth >= 2) t = 3;
    a->types[i] = (XLA_FFI_AttrType)t;
    switch (t) {
      case 1: {
        XLA_FFI_Array* arr = arena(sizeof *arr);
        if (!arr) return 0;
        arr->dtype = (XLA_FFI_DataType)kDtypes[below(15)];
        arr->size = below(5);
        if (chance(16)) arr->size = 1000 + below(3000); /* oversized (backed) */
        arr->data = arena(arr->size * 16 + 16);
        if (!arr->data) return 0;
        a->attrs[i] = arr;
        break;
      }
      case 2: {
        XLA_FFI_Attrs* d = arena(sizeof *d);
        if (!d || !gen_attrs(d, depth + 1)) return 0;
        a->attrs[i] = d;
        break;
      }
      case 3: {
        XLA_FFI_Scalar* sc = arena(sizeof *sc);
        if (!sc) return 0;
        sc->dtype = (XLA_FFI_DataType)kDtypes[below(15)];
        sc->value = arena(16);
        if (!sc->value) return 0;
        a->attrs[i] = sc;
        break;
      }
      default: {
        XLA_FFI_ByteSpan* str = arena(sizeof *str);
        if (!str) return 0;
        str->len = chance(16) ? 60000 + below(5000) : below(20); /* oversized (backed) */
        char* p = arena(str->len + 1);
        if (!p) return 0;
        memset(p, 's', str->len);
        str->ptr = p;
        a->attrs[i] = str;
        break;
      }
    }
  }
  return 1;
}

static XLA_FFI_Buffer* gen_buffer(void) {
  XLA_FFI_Buffer* b = arena(sizeof *b);
  int64_t* dims = arena(8 * sizeof(int64_t));
  if (!b || !dims) return NULL;
  b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  b->dtype = (XLA_FFI_DataType)kDtypes[below(20)];
  b->rank = below(5);
  for (int d = 0; d < 8; d++) dims[d] = below(3);
  b->dims = dims;
  b->data = backing;
  return b;
}

static XLA_FFI_CallFrame* gen_frame(void) {
  XLA_FFI_CallFrame* cf = arena(sizeof *cf);
  if (!cf) return NULL;
  cf->struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  cf->api = F.api;
  cf->ctx = F.ctx;
  cf->stage = XLA_FFI_ExecutionStage_EXECUTE;
  cf->args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  cf->args.size = below(CAP + 1);
  cf->args.types = arena(sizeof(XLA_FFI_ArgType) * CAP);
  cf->args.args = arena(sizeof(void*) * CAP);
  cf->rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  cf->rets.size = below(CAP + 1);
  cf->rets.types = arena(sizeof(XLA_FFI_RetType) * CAP);
  cf->rets.rets = arena(sizeof(void*) * CAP);
  if (!cf->args.types || !cf->args.args || !cf->rets.types || !cf->rets.rets) return NULL;
  for (int i = 0; i < CAP; i++) {
    cf->args.types[i] = XLA_FFI_ArgType_BUFFER;
    cf->rets.types[i] = XLA_FFI_RetType_BUFFER;
    if (!(cf->args.args[i] = gen_buffer()) || !(cf->rets.rets[i] = gen_buffer())) return NULL;
  }
  if (!gen_attrs(&cf->attrs, 0)) return NULL;
  return cf;
}

/* Later mutations only index what the generator backed: counts already made
 * out of range, and arrays already nulled, are left alone. */
static uint32_t backed(int64_t n, int64_t cap) { return n < 0 || n > cap ? 0 : (uint32_t)n; }

static uint32_t dict_n(const XLA_FFI_Attrs* a) {
  if (!a || !a->types || !a->names || !a->attrs || a->struct_size < XLA_FFI_Attrs_STRUCT_SIZE)
    return 0;
  return backed(a->size, 2 * CAP);
}

/* A random dictionary of the frame (the top level or a nested one). */
static XLA_FFI_Attrs* some_dict(XLA_FFI_CallFrame* cf) {
  XLA_FFI_Attrs* a = &cf->attrs;
  uint32_t n = dict_n(a);
  for (uint32_t i = 0; i < n; i++)
    if (a->types[i] == XLA_FFI_AttrType_DICTIONARY && a->attrs[i] && chance(2))
      return a->attrs[i];
  return a;
}

static XLA_FFI_Buffer* some_buffer(XLA_FFI_CallFrame* cf) {
  uint32_t na = cf->args.args ? backed(cf->args.size, CAP) : 0;
  uint32_t nr = cf->rets.rets ? backed(cf->rets.size, CAP) : 0;
  XLA_FFI_Buffer* b = NULL;
  if (chance(2) && na > 0) b = cf->args.args[below(na)];
  else if (nr > 0) b = cf->rets.rets[below(nr)];
  return b && b->struct_size >= XLA_FFI_Buffer_STRUCT_SIZE ? b : NULL;
}

static int64_t huge(void) {
  int64_t v[] = {-1, INT64_MIN, INT64_MAX, -(int64_t)below(1000) - 2, 1ll << 40, 65537,
                 1ll << 31};
  return v[below(7)];
}

/* One mutation; returns 1 if the frame is now certainly invalid. The valid
 * mutations (fewer operands, another rank, larger sizes, swaps) are skipped
 * once the frame is bad: they could hide or undo an earlier fault. */
static int mutate_frame(XLA_FFI_CallFrame* cf, int bad) {
  XLA_FFI_Buffer* b;
  XLA_FFI_Attrs* a;
  uint32_t kind = below(24);
  size_t used = strlen(F.trace);
  snprintf(F.trace + used, sizeof F.trace - used, "%sm%u", used ? "," : ", mutations ", kind);
  switch (kind) {
    case 0: cf->struct_size = below(XLA_FFI_CallFrame_STRUCT_SIZE); return 1;
    case 1: cf->api = NULL; return 1;
    case 2: cf->ctx = chance(2) ? NULL : (XLA_FFI_ExecutionContext*)junk; return 1;
    case 3: cf->stage = (XLA_FFI_ExecutionStage)(4 + below(1u << 31)); return 1;
    case 4: cf->args.size = huge(); return cf->args.size < 0 || cf->args.size > 65536;
    case 5: cf->rets.size = huge(); return cf->rets.size < 0 || cf->rets.size > 65536;
    case 6:
      if (backed(cf->args.size, CAP) == 0) return 0;
      if (chance(2)) cf->args.types = NULL; else cf->args.args = NULL;
      return 1;
    case 7:
      if (backed(cf->args.size, CAP) == 0 || !cf->args.types) return 0;
      cf->args.types[below(backed(cf->args.size, CAP))] = (XLA_FFI_ArgType)(2 + below(100));
      return 1;
    case 8:
      if (backed(cf->rets.size, CAP) == 0 || !cf->rets.rets) return 0;
      cf->rets.rets[below(backed(cf->rets.size, CAP))] = NULL;
      return 1;
    case 9:
      if (!(b = some_buffer(cf))) return 0;
      b->struct_size = below(XLA_FFI_Buffer_STRUCT_SIZE);
      return 1;
    case 10: {
      if (!(b = some_buffer(cf))) return 0;
      int bad[] = {0, 13, 14, 34, 99, -1, 1 << 30};
      b->dtype = (XLA_FFI_DataType)bad[below(7)];
      return 1;
    }
    case 11:
      if (!(b = some_buffer(cf))) return 0;
      b->rank = huge();
      return b->rank < 0 || b->rank > 256;
    case 12:
      if (bad || !(b = some_buffer(cf)) || !b->dims || !b->data || backed(b->rank, 8) != b->rank)
        return 0;
      b->rank = below(9); /* within the 8 backed dims: valid */
      return 0;
    case 13:
      if (!(b = some_buffer(cf)) || !b->dims || backed(b->rank, 8) == 0) return 0;
      if (chance(2)) {
        b->dims = NULL;
      } else {
        b->dims[below((uint32_t)b->rank)] = -1 - (int64_t)below(1000);
      }
      return 1;
    case 14:
      if (!(b = some_buffer(cf)) || !b->dims || backed(b->rank, 8) < 2) return 0;
      b->dims[0] = b->dims[1] = 1ll << 62; /* the element count overflows */
      return 1;
    case 15: {
      if (!(b = some_buffer(cf)) || !b->dims || backed(b->rank, 8) != b->rank) return 0;
      b->data = NULL; /* invalid only when it has elements (stage is EXECUTE) */
      /* Dims may already be huge (mutation 14): count without overflowing. */
      int64_t n = 1;
      int zero = 0;
      for (int64_t d = 0; d < b->rank; d++) {
        if (b->dims[d] == 0) zero = 1;
        else if (__builtin_mul_overflow(n, b->dims[d], &n)) n = INT64_MAX;
      }
      if (zero) n = 0;
      return n > 0 && b->dtype != XLA_FFI_DataType_TOKEN;
    }
    case 16:
      a = some_dict(cf);
      if (chance(2)) {
        a->size = huge();
        return a->size < 0 || a->size > 65536;
      }
      if (dict_n(a) == 0) return 0;
      if (chance(3)) a->names = NULL; else if (chance(2)) a->types = NULL; else a->attrs = NULL;
      return 1;
    case 17: { /* names: null span, null pointer, oversized */
      a = some_dict(cf);
      if (dict_n(a) == 0) return 0;
      int64_t i = below(dict_n(a));
      XLA_FFI_ByteSpan* nm = a->names[i];
      if (!nm) return 0;
      switch (below(3)) {
        case 0: a->names[i] = NULL; break;
        case 1: nm->ptr = NULL; nm->len = 1 + below(10); break;
        default: nm->len = (size_t)4097 + below(1u << 30); break;
      }
      return 1;
    }
    case 18: { /* a name that is not UTF-8 (its first byte stays, so order holds) */
      a = some_dict(cf);
      if (dict_n(a) == 0) return 0;
      XLA_FFI_ByteSpan* nm = a->names[below(dict_n(a))];
      if (!nm || !nm->ptr || nm->len > 16) return 0;
      const char* bad[] = {"\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf8\x88\x80\x80"};
      const char* s = bad[below(5)];
      char* p = (char*)nm->ptr;
      size_t l = strlen(s);
      if (nm->len < 1 + l) return 0;
      memcpy(p + nm->len - l, s, l);
      return 1;
    }
    case 19: { /* unsorted or duplicated names */
      a = some_dict(cf);
      if (bad || dict_n(a) < 2) return 0; /* a second swap could undo the first */
      int64_t i = below(dict_n(a) - 1);
      if (chance(2)) {
        XLA_FFI_ByteSpan* t = a->names[i];
        a->names[i] = a->names[i + 1];
        a->names[i + 1] = t;
      } else {
        a->names[i + 1] = a->names[i];
      }
      return 1;
    }
    case 20: { /* bogus attribute type or a null value */
      a = some_dict(cf);
      if (dict_n(a) == 0) return 0;
      int64_t i = below(dict_n(a));
      if (chance(2))
        a->types[i] = (XLA_FFI_AttrType)(chance(2) ? 0 : 5 + below(1000));
      else
        a->attrs[i] = NULL;
      return 1;
    }
    case 21: { /* bad payloads */
      a = some_dict(cf);
      for (uint32_t i = 0; i < dict_n(a); i++) {
        void* v = a->attrs[i];
        if (!v) continue;
        switch (a->types[i]) {
          case XLA_FFI_AttrType_SCALAR:
            if (chance(2)) ((XLA_FFI_Scalar*)v)->dtype = (XLA_FFI_DataType)(chance(2) ? 0 : 40);
            else ((XLA_FFI_Scalar*)v)->value = NULL;
            return 1;
          case XLA_FFI_AttrType_ARRAY: {
            XLA_FFI_Array* arr = v;
            switch (below(3)) {
              case 0: arr->dtype = (XLA_FFI_DataType)14; return 1;
              case 1: arr->size = (size_t)huge() | ((size_t)1 << 40); return 1;
              default: if (arr->size == 0) return 0; arr->data = NULL; return 1;
            }
          }
          case XLA_FFI_AttrType_STRING: {
            XLA_FFI_ByteSpan* s = v;
            if (chance(2)) {
              s->len = ((size_t)1 << 30) + 1 + below(1000);
              return 1;
            }
            if (s->len == 0) return 0;
            s->ptr = NULL;
            return 1;
          }
          case XLA_FFI_AttrType_DICTIONARY:
            ((XLA_FFI_Attrs*)v)->size = -1;
            return 1;
          default: break;
        }
      }
      return 0;
    }
    case 22: /* a valid smaller frame: fewer operands */
      if (!bad && backed(cf->args.size, CAP) > 0) cf->args.size--;
      return 0;
    default: /* sizes larger than needed (newer structs) are fine */
      if (bad) return 0;
      cf->struct_size += 8;
      cf->args.struct_size += 8 * below(3);
      return 0;
  }
}

/* A generated frame mutated 0 to 2 times; *bad says whether a mutation made
 * it invalid. NULL (a violation counted) when the case's arena is too small. */
static XLA_FFI_CallFrame* mutated_frame(int* bad) {
  *bad = 0;
  XLA_FFI_CallFrame* cf = gen_frame();
  if (!cf) {
    violation("the case's arena is too small");
    return NULL;
  }
  int rounds = (int)below(3);
  for (int r = 0; r < rounds; r++) *bad |= mutate_frame(cf, *bad);
  return cf;
}

/* A handler entry point that checks its frame before reading it, as a
 * robust entry point called by XLA must. */
static XLA_FFI_Error* checked_entry(XLA_FFI_CallFrame* cf) {
  if (cf && cf->struct_size >= XLA_FFI_CallFrame_STRUCT_SIZE && test_is_metadata(cf))
    return test_answer_metadata(cf);
  XLA_FFI_Error* e = X.check_call_frame(cf);
  return e ? e : fuzz_walk(cf);
}

/*
 * What a raw handler does with a valid frame: the test that passes the
 * handlers (tests/_fuzz_handlers.ts) declares one of these for each.
 */
enum {
  RAW_OK = 0,       /* succeeds, or returns a future, on every valid frame */
  RAW_FAIL = 1,     /* fails on every frame this fuzzer makes */
  RAW_TYPED = 2,    /* arg(F32, 2) arg(S32) ret(F32) attr n00_a i32, attr n01_b f32[] */
  RAW_OPTIONAL = 3, /* arg() optionalArg(F64) remainingArgs() ...: an argument, the 2nd F64 */
  RAW_THROWS = 4,   /* throws when the argument count % 5 < 3, else a failed future */
};

static int attr_is(const XLA_FFI_Attrs* a, int64_t i, const char* name, XLA_FFI_AttrType type,
                   XLA_FFI_DataType dtype) {
  const XLA_FFI_ByteSpan* n = a->names[i];
  if (n->len != strlen(name) || memcmp(n->ptr, name, n->len) != 0 || a->types[i] != type)
    return 0;
  return type == XLA_FFI_AttrType_SCALAR ? ((const XLA_FFI_Scalar*)a->attrs[i])->dtype == dtype
                                         : ((const XLA_FFI_Array*)a->attrs[i])->dtype == dtype;
}

static XLA_FFI_DataType arg_dtype(const XLA_FFI_CallFrame* cf, int64_t i) {
  return ((const XLA_FFI_Buffer*)cf->args.args[i])->dtype;
}

static int raw_expected(int32_t kind, const XLA_FFI_CallFrame* cf) {
  int64_t na = cf->args.size;
  switch (kind) {
    case RAW_OK:
      return EXPECT_OK;
    case RAW_TYPED:
      return na == 2 && cf->rets.size == 1 && cf->attrs.size == 2 &&
                     arg_dtype(cf, 0) == XLA_FFI_DataType_F32 &&
                     ((const XLA_FFI_Buffer*)cf->args.args[0])->rank == 2 &&
                     arg_dtype(cf, 1) == XLA_FFI_DataType_S32 &&
                     ((const XLA_FFI_Buffer*)cf->rets.rets[0])->dtype == XLA_FFI_DataType_F32 &&
                     attr_is(&cf->attrs, 0, "n00_a", XLA_FFI_AttrType_SCALAR,
                             XLA_FFI_DataType_S32) &&
                     attr_is(&cf->attrs, 1, "n01_b", XLA_FFI_AttrType_ARRAY,
                             XLA_FFI_DataType_F32)
                 ? EXPECT_OK
                 : EXPECT_FAIL;
    case RAW_OPTIONAL:
      return na >= 1 && (na < 2 || arg_dtype(cf, 1) == XLA_FFI_DataType_F64) ? EXPECT_OK
                                                                             : EXPECT_FAIL;
    case RAW_THROWS:
      return na % 5 < 3 ? EXPECT_FAIL : EXPECT_OK;
    default:
      return EXPECT_FAIL;
  }
}

/* Slots a valid frame takes in the TS entry points' flat buffer (the layout
 * of native/handler_flatten.c): a larger one is refused, RESOURCE_EXHAUSTED. */
static int64_t attr_slots(const XLA_FFI_Attrs* a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a->size; i++) {
    n += 2 + (int64_t)((a->names[i]->len + 7) / 8);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR:
        n += 2;
        break;
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = a->attrs[i];
        n += 1 + (int64_t)((arr->size * xla_ffi_dtype_width(arr->dtype) + 7) / 8);
        break;
      }
      case XLA_FFI_AttrType_STRING:
        n += 1 + (int64_t)((((const XLA_FFI_ByteSpan*)a->attrs[i])->len + 7) / 8);
        break;
      default:
        n += 1 + attr_slots(a->attrs[i]);
        break;
    }
  }
  return n;
}

static int64_t flat_slots(const XLA_FFI_CallFrame* cf) {
  int64_t n = 10 + (cf->args.size + cf->rets.size + cf->attrs.size + 1) / 2;
  for (int64_t i = 0; i < cf->args.size; i++) n += 3 + ((XLA_FFI_Buffer*)cf->args.args[i])->rank;
  for (int64_t i = 0; i < cf->rets.size; i++) n += 3 + ((XLA_FFI_Buffer*)cf->rets.rets[i])->rank;
  return n + attr_slots(&cf->attrs);
}

static void raw_case(void) {
  int bad;
  XLA_FFI_CallFrame* cf = mutated_frame(&bad);
  if (!cf) return;
  /* The api pointer must stay readable for an error to be made: a null api
   * is fed only to the runtime's own check (target 19). */
  if (!cf->api) cf->api = F.api;
  if (cf->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE) cf->struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  XLA_FFI_Error* chk = X.check_call_frame(cf);
  bad = chk != NULL; /* the runtime's check is the reference */
  if (chk) X.error_destroy(chk);
  int pick = F.n_raw > 0 ? (int)below((uint32_t)F.n_raw) : -1;
  XLA_FFI_Handler* h = pick >= 0 ? F.raw[pick] : checked_entry;
  /* A valid frame: what the handler must do with it. */
  int expect = EXPECT_FAIL, too_large = 0;
  /* A handler (ffi.h's CheckStructSize, and ours) needs the call frame's own
   * size exactly; a larger one, valid for the runtime's check, is refused. */
  if (!bad && pick >= 0 && cf->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE) {
    expect = EXPECT_FAIL;
  } else if (!bad && pick >= 0) {
    too_large = F.flat_cap > 0 && flat_slots(cf) > F.flat_cap;
    expect = too_large ? EXPECT_FAIL : F.raw_expect ? raw_expected(F.raw_expect[pick], cf)
                                                    : EXPECT_ANY;
  }
  cf->future = NULL;
  walk_result = -1;
  XLA_FFI_Error* e = h(cf);
  if (!bad && pick < 0) expect = walk_expect("handler entry point");
  if (too_large && e && X.error_code(e) != XLA_FFI_Error_Code_RESOURCE_EXHAUSTED)
    violation("a frame too large for the flat buffer: error %d, not RESOURCE_EXHAUSTED",
              X.error_code(e));
  if (cf->future) {
    /* An async handler accepted the frame: the fuzzer, in XLA's place, owns
     * the future; it is released here (orphaned while pending). */
    if (bad) violation("a handler entry point left a future on a frame it rejected");
    if (e) violation("a handler entry point returned an error and left a future");
    if (X.future_release(cf->future) != 0)
      violation("a handler entry point left a future that is not the runtime's");
    cf->future = NULL;
    F.futures_left++;
  }
  verdict(e, expect, "handler entry point");
}

static void frame_case(void) {
  int bad;
  XLA_FFI_CallFrame* cf = mutated_frame(&bad);
  if (!cf) return;
  XLA_FFI_Error* e = X.check_call_frame(cf);
  int rejected = e != NULL;
  verdict(e, bad ? EXPECT_FAIL : EXPECT_OK, "xla_ffi_deno_runtime_check_call_frame");
  /* Handlers that read only what the frame check guarantees. (Handlers that
   * complete futures from the pool are left out: their futures outlive the
   * call, and the stale-future cases must see no live future.) */
  XLA_FFI_Handler* handlers[] = {fuzz_walk,        fuzz_walk,   test_noop,
                                 test_return_error, test_get_message, test_stream,
                                 test_device_memory, test_future_misuse};
  XLA_FFI_Handler* h = handlers[below(8)];
  walk_result = -1;
  e = call_checked(F.runtime, h, cf);
  if (rejected && (!e || X.error_code(e) != XLA_FFI_Error_Code_INVALID_ARGUMENT))
    violation("xla_ffi_deno_runtime_call (checked) called a handler with a frame it rejects");
  /* On a valid frame (whose attribute names none of these handlers reads)
   * test_noop succeeds, fuzz_walk does what it decides, and the others fail:
   * an error on purpose, no stream or device memory on Host, a future
   * completed twice. */
  int expect = rejected            ? EXPECT_FAIL
               : h == fuzz_walk    ? walk_expect("xla_ffi_deno_runtime_call (checked)")
               : h == test_noop    ? EXPECT_OK
                                   : EXPECT_FAIL;
  verdict(e, expect, "xla_ffi_deno_runtime_call (checked)");
}

/* ------------------------------------------------------------------------ */
/* Targets 20, 21: the runtime's C entry points, misbehaving handlers        */
/* ------------------------------------------------------------------------ */

static void entry_case(void) {
  int ok, pok;
  switch (below(9)) {
    case 0: {
      XLA_FFI_ByteSpan n = pick_name(&ok), p = pick_name(&pok);
      if (chance(2)) {
        p.ptr = "Host";
        p.len = 4;
        pok = 1;
      }
      uint64_t bundle[4] = {0, 0, 0, (uint64_t)(uintptr_t)fuzz_walk};
      int has = !chance(8);
      int expect = ok && pok && has ? expect_register(&n, &p, (void*)fuzz_walk, 0) : EXPECT_FAIL;
      verdict(X.reg(F.runtime, n.ptr, (int64_t)n.len, p.ptr, (int64_t)p.len, has ? bundle : NULL,
                    0),
              expect, "xla_ffi_deno_runtime_register");
      break;
    }
    case 1: {
      XLA_FFI_ByteSpan n = pick_name(&ok), p = pick_name(&pok);
      uint64_t out[6];
      int has = !chance(8);
      if (chance(2)) {
        p.ptr = "cpu";
        p.len = 3;
        pok = 1;
      }
      verdict(X.lookup(F.runtime, n.ptr, (int64_t)n.len, p.ptr, (int64_t)p.len, has ? out : NULL),
              ok && pok && has ? expect_lookup(&n, &p) : EXPECT_FAIL,
              "xla_ffi_deno_runtime_lookup");
      break;
    }
    case 2: {
      XLA_FFI_ByteSpan n = pick_name(&ok);
      XLA_FFI_TypeId id = {chance(2) ? 0 : 1000 + (int64_t)below(4)};
      int has = !chance(8);
      int expect = ok && has ? expect_type(&n, id.type_id) : EXPECT_FAIL;
      XLA_FFI_Error* e = X.register_type(F.runtime, n.ptr, (int64_t)n.len, has ? &id : NULL, NULL);
      if (ok && has && !e) type_learn(&n, id.type_id);
      verdict(e, expect, "xla_ffi_deno_runtime_register_type");
      break;
    }
    case 3: {
      int64_t out[4];
      int h = below(3);
      verdict(X.metadata(F.runtime, h == 0 ? NULL : fuzz_walk, h == 1 ? NULL : out),
              h == 2 ? EXPECT_OK : EXPECT_FAIL, "xla_ffi_deno_runtime_metadata");
      break;
    }
    case 4: {
      int which = below(3);
      verdict(call_sync(which == 0 ? NULL : F.runtime, which == 1 ? NULL : test_noop,
                          which == 2 ? NULL : F.fr),
              EXPECT_FAIL, "xla_ffi_deno_runtime_call (sync) with a null input");
      break;
    }
    case 5: {
      if (X.call_new(NULL, F.fr) || X.call_new(F.runtime, NULL))
        violation("xla_ffi_deno_runtime_call_new accepted a null input");
      void* c = X.call_new(F.runtime, F.fr);
      if (!c) {
        violation("xla_ffi_deno_runtime_call_new failed");
        break;
      }
      int null_h = chance(2);
      walk_result = -1;
      XLA_FFI_Error* e = call_run(c, null_h ? NULL : fuzz_walk);
      verdict(e, null_h ? EXPECT_FAIL : walk_expect("xla_ffi_deno_runtime_call_wait"),
              "xla_ffi_deno_runtime_call_wait");
      break;
    }
    case 6: /* out-of-range argument indices and a null frame are ignored */
      X.frame_set_arg(F.fr, (int32_t)huge(), 0.0);
      X.frame_set_arg(NULL, 0, 0.0);
      X.frame_configure(NULL, 3, 0, 0, NULL, NULL, 0);
      F.successes++;
      break;
    case 7: /* null and foreign call frames */
      verdict(X.check_call_frame(chance(2) ? NULL : (const XLA_FFI_CallFrame*)junk),
              EXPECT_FAIL, "xla_ffi_deno_runtime_check_call_frame on a null or foreign frame");
      break;
    default: { /* foreign and destroyed errors read through the TS entries */
      XLA_FFI_Error* e = chance(2) ? (XLA_FFI_Error*)junk : F.stale_error;
      if (e) {
        int32_t code = X.error_code(e);
        const char* m = X.error_message(e);
        if (code < 1 || code > 16 || !m || !m[0])
          violation("xla_ffi_deno_runtime_error_code/message on a foreign error: %d", code);
        X.error_destroy(e); /* ignored */
      }
      F.successes++;
      break;
    }
  }
}

static void handler_case(void) {
  bad_mode = (int)below(8);
  snprintf(F.trace, sizeof F.trace, ", mode %d", bad_mode);
  int checked = chance(2);
  XLA_FFI_Error* e = checked ? call_checked(F.runtime, fuzz_bad, X.frame_call_frame(F.fr))
                             : call_sync(F.runtime, fuzz_bad, F.fr);
  int expect = EXPECT_FAIL;
  if (bad_mode == 1 && !F.stale_error) expect = EXPECT_OK; /* returned null */
  if (bad_mode == 3 && !F.stale_future) expect = EXPECT_OK;
  if (bad_mode == 6) expect = EXPECT_OK;
  verdict(e, expect, "misbehaving handler");
  if (bad_mode == 5 && bad_pending) { /* complete the orphaned future: it frees itself */
    XLA_FFI_Error* c = complete(bad_pending);
    if (c) violation("completing an orphaned future failed");
    if (c) destroy(c);
  }
  if ((bad_mode == 4 || bad_mode == 5) && bad_pending) F.stale_future = bad_pending;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Runs `cases` fuzz cases from `seed` against the runtime in `main_lib`;
 * `raw` (n_raw pointers, may be 0) are handler entry points fed mutated
 * frames directly (target 22). out[0] = cases, out[1] = errors returned,
 * out[2] = successes, out[3] = violations, out[4 + t] = cases of target t
 * (23 targets), out[27] = pool tasks scheduled, out[28] = pool tasks run.
 * The first violation is described in msg. Returns 0, or -1 if the runtime's
 * entry points cannot be resolved.
 */
static int32_t run(const char* main_lib, uint64_t seed, int64_t cases, const uint64_t* raw,
                   const int32_t* raw_expect, int32_t n_raw, uint32_t mask, int64_t flat_cap,
                   int64_t* out, char* msg, int32_t msg_cap);

int32_t fuzz_run(const char* main_lib, uint64_t seed, int64_t cases, const uint64_t* raw,
                 int32_t n_raw, int64_t* out, char* msg, int32_t msg_cap) {
  return run(main_lib, seed, cases, raw, NULL, n_raw, 0, 0, out, msg, msg_cap);
}

/**
 * As fuzz_run, but runs only the targets whose bit is set in `mask` (e.g.
 * 1 << 22: every case feeds a mutated frame to a `raw` handler entry point).
 * raw_expect (n_raw RAW_* values, or null: outcomes of valid frames not
 * predicted) says what each raw handler does with a valid frame; flat_cap
 * (slots, 0: none) is the TS entry points' flat buffer, which refuses larger
 * frames. out[29] = futures the raw handlers left on accepted frames
 * (released).
 */
int32_t fuzz_run_targets(const char* main_lib, uint64_t seed, int64_t cases, const uint64_t* raw,
                         const int32_t* raw_expect, int32_t n_raw, uint32_t mask,
                         int64_t flat_cap, int64_t* out, char* msg, int32_t msg_cap) {
  return run(main_lib, seed, cases, raw, raw_expect, n_raw, mask, flat_cap, out, msg, msg_cap);
}

static int32_t run(const char* main_lib, uint64_t seed, int64_t cases, const uint64_t* raw,
                   const int32_t* raw_expect, int32_t n_raw, uint32_t mask, int64_t flat_cap,
                   int64_t* out, char* msg, int32_t msg_cap) {
  void* lib = dlopen(main_lib, RTLD_NOW | RTLD_LOCAL);
  if (!lib || !resolve(lib)) {
    if (msg && msg_cap > 0) snprintf(msg, (size_t)msg_cap, "cannot load %s", main_lib);
    if (lib) dlclose(lib);
    return -1;
  }
  memset(&F, 0, sizeof F);
  F.seed = F.rng = seed;
  F.msg = msg;
  F.msg_cap = msg_cap;
  F.raw = (XLA_FFI_Handler**)(uintptr_t)raw;
  F.n_raw = raw ? n_raw : 0;
  F.raw_expect = raw_expect;
  F.flat_cap = flat_cap;
  name_run();
  F.target_mask = mask & ((1u << T_COUNT) - 1);
  if (msg && msg_cap > 0) msg[0] = '\0';
  F.arena_cap = 1 << 20;
  F.arena = aligned_alloc(16, F.arena_cap);
  /* The API cases lay their arguments out as ABI 0.1 does: fuzz that table. */
  F.api = X.api(1);
  F.runtime = X.runtime_new(0, 2, 1);
  uint8_t desc[16] = {0}; /* no operands, no attributes */
  F.fr = X.frame_build(desc, 16);
  if (!F.arena || !F.runtime || !F.fr) {
    if (msg && msg_cap > 0) snprintf(msg, (size_t)msg_cap, "cannot set up the fuzzer");
    return -1;
  }
  F.user_value = 0x5eed;
  int64_t user[2] = {77, (int64_t)(intptr_t)&F.user_value};
  F.in = X.instance_new();
  X.frame_configure(F.fr, 3, 42, 3, F.in, user, 1);
  call_sync(F.runtime, test_noop, F.fr); /* sets the context's runtime */
  F.ctx = X.frame_call_frame(F.fr)->ctx;

  for (F.case_no = 0; F.case_no < cases; F.case_no++) {
    F.arena_used = 0;
    F.trace[0] = '\0';
    F.target = (int)below(T_COUNT);
    if (F.target_mask && !(F.target_mask & (1u << F.target))) {
      /* Another target of the mask, in order from the drawn one. */
      while (!(F.target_mask & (1u << F.target))) F.target = (F.target + 1) % T_COUNT;
    }
    F.per_target[F.target]++;
    if (F.target < T_API) {
      if (F.target == 7 && chance(4)) { /* a fresh instance for State_Set */
        X.frame_configure(F.fr, 3, 42, 3, NULL, user, 1);
        X.instance_free(F.in);
        F.in = X.instance_new();
        X.frame_configure(F.fr, 3, 42, 3, F.in, user, 1);
        F.state_has = 0;
      }
      api_case(F.target);
    } else if (F.target == T_BUILD) {
      build_case();
    } else if (F.target == T_FRAME) {
      frame_case();
    } else if (F.target == T_ENTRY) {
      entry_case();
    } else if (F.target == T_HANDLER) {
      handler_case();
    } else {
      raw_case();
    }
  }

  X.frame_free(F.fr);
  X.instance_free(F.in);
  X.runtime_free(F.runtime); /* drains the pool */
  free(F.arena);
  out[0] = cases;
  out[1] = F.errors;
  out[2] = F.successes;
  out[3] = F.violations;
  for (int t = 0; t < T_COUNT; t++) out[4 + t] = F.per_target[t];
  out[27] = F.tasks_scheduled;
  out[28] = atomic_load(&F.tasks_run);
  out[29] = F.futures_left;
  if (F.tasks_scheduled != out[28])
    violation("pool tasks: %lld scheduled, %lld run", (long long)F.tasks_scheduled,
              (long long)out[28]);
  out[3] = F.violations;
  dlclose(lib);
  return 0;
}
