/*
 * handler_guard.c: guarded entry points for handlers called by a runtime
 * that owns the buffers (real XLA): a pool of distinct XLA_FFI_Handler
 * entry points, each wrapping one handler, so that a write past the end or
 * before the start of a result, or into an argument, becomes a DATA_LOSS
 * error naming the handler, the operand and the byte offset, and XLA's
 * memory is never written outside the results' bounds.
 *
 * At the execute stage an entry point calls its handler with a copy of the
 * call frame whose result buffers point at shadow memory, 64-byte aligned,
 * with a page of canary bytes before and after each result, in a mapping of
 * its own between two inaccessible pages; each argument's bytes are
 * copied before the call and compared after it. After a successful return
 * the results' shadows are copied into the runtime's buffers. The frame's
 * api is a copy of the runtime's table whose Future_* functions are this
 * file's: a handler that returns a future is waited for on the calling
 * thread (as XLA itself does when it calls a handler synchronously) before
 * the checks, since it may still write its results until the future
 * completes. Other stages and the metadata query reach the handler
 * untouched.
 *
 * A finding of the guard wins over the handler's own error (which is then
 * destroyed). Errors are created with the runtime's Error_Create.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"
#include "xla_ffi_dtype.h"

#define GUARD_SLOTS 256
#define GUARD_NAME_CAP 256
#define GUARD_CANARY 4096 /* canary bytes before each result; at least as many after it */
#define GUARD_ALIGN 64

typedef struct {
  XLA_FFI_Handler* inner;
  char name[GUARD_NAME_CAP];
} guard_slot;

static guard_slot g_guard_slots[GUARD_SLOTS];
static _Atomic int32_t g_guard_count; /* slots published (their fields are immutable after) */
static pthread_mutex_t g_guard_mu = PTHREAD_MUTEX_INITIALIZER;

/* Byte `i` of a canary zone (the embedded runtime's pattern, src/runtime/_guard.ts). */
static inline uint8_t canary_byte(size_t i) { return (uint8_t)((0xcb + i * 37) & 0xff); }

/* ---------------------------------------------------------------------- */
/* Futures handed to a guarded handler                                     */
/* ---------------------------------------------------------------------- */

/* A future of a guarded call: completed by the handler, waited for by the
 * entry point, which then frees it. */
typedef struct {
  uint64_t magic;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  XLA_FFI_Error* error; /* the runtime's error the handler completed it with */
} guard_future;

#define GUARD_FUTURE_MAGIC 0x6775617264667574ull /* "guardfut" */

/* The runtime api of the guarded call running on this thread (for errors of
 * Future_Create, which has no api of its own to create them with). */
static _Thread_local const XLA_FFI_Api* t_api;

static XLA_FFI_Error* future_create(XLA_FFI_Future_Create_Args* args) {
  if (args == NULL || args->struct_size < XLA_FFI_Future_Create_Args_STRUCT_SIZE)
    return host_make_error(t_api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "Future_Create: the arguments are null or too small");
  guard_future* g = calloc(1, sizeof *g);
  if (g == NULL)
    return host_make_error(t_api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                           "Future_Create: out of memory");
  g->magic = GUARD_FUTURE_MAGIC;
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
  args->future = (XLA_FFI_Future*)g;
  return NULL;
}

static guard_future* as_guard_future(XLA_FFI_Future* f) {
  guard_future* g = (guard_future*)f;
  return g != NULL && g->magic == GUARD_FUTURE_MAGIC ? g : NULL;
}

static void complete(guard_future* g, XLA_FFI_Error* e) {
  pthread_mutex_lock(&g->mu);
  g->done = 1;
  g->error = e;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

/* Completion comes from any thread, where t_api is not set: these errors go
 * to stderr too, since the handler may have no way to show them. */
static XLA_FFI_Error* future_set_available(XLA_FFI_Future_SetAvailable_Args* args) {
  guard_future* g = args ? as_guard_future(args->future) : NULL;
  if (g == NULL) {
    host_report_failure("Future_SetAvailable", "not a future of a guarded call");
    return NULL;
  }
  complete(g, NULL);
  return NULL;
}

static XLA_FFI_Error* future_set_error(XLA_FFI_Future_SetError_Args* args) {
  guard_future* g = args ? as_guard_future(args->future) : NULL;
  if (g == NULL) {
    host_report_failure("Future_SetError", "not a future of a guarded call");
    return NULL;
  }
  complete(g, args->error);
  return NULL;
}

/* Waits for a guarded call's future; returns its error (NULL: available). */
static XLA_FFI_Error* wait_future(guard_future* g) {
  pthread_mutex_lock(&g->mu);
  while (!g->done) pthread_cond_wait(&g->cv, &g->mu);
  XLA_FFI_Error* e = g->error;
  pthread_mutex_unlock(&g->mu);
  g->magic = 0;
  pthread_cond_destroy(&g->cv);
  pthread_mutex_destroy(&g->mu);
  free(g);
  return e;
}

/* The runtime's api table with this file's Future_* functions, one per
 * runtime table (a process has one or two: XLA's CPU client and a GPU
 * plugin). Kept for the life of the process. */
#define GUARD_APIS 8
typedef struct {
  const XLA_FFI_Api* outer;
  XLA_FFI_Api* copy;
} api_pair;
static api_pair g_apis[GUARD_APIS];
static _Atomic int32_t g_api_count;

static const size_t FUTURE_SLOTS_END =
    offsetof(XLA_FFI_Api, XLA_FFI_Future_SetError) + sizeof(void*);

static XLA_FFI_Api* guarded_api(const XLA_FFI_Api* outer) {
  int32_t n = atomic_load_explicit(&g_api_count, memory_order_acquire);
  for (int32_t i = 0; i < n; i++)
    if (g_apis[i].outer == outer) return g_apis[i].copy;
  if (outer->struct_size < FUTURE_SLOTS_END) return NULL;
  pthread_mutex_lock(&g_guard_mu);
  XLA_FFI_Api* copy = NULL;
  n = atomic_load(&g_api_count);
  for (int32_t i = 0; i < n && copy == NULL; i++)
    if (g_apis[i].outer == outer) copy = g_apis[i].copy;
  if (copy == NULL && n < GUARD_APIS) {
    /* The whole table as the runtime sized it: slots after ours stay its own. */
    copy = malloc(outer->struct_size);
    if (copy != NULL) {
      memcpy(copy, outer, outer->struct_size);
      copy->XLA_FFI_Future_Create = future_create;
      copy->XLA_FFI_Future_SetAvailable = future_set_available;
      copy->XLA_FFI_Future_SetError = future_set_error;
      g_apis[n].outer = outer;
      g_apis[n].copy = copy;
      atomic_store_explicit(&g_api_count, n + 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_guard_mu);
  return copy;
}

/* ---------------------------------------------------------------------- */
/* The guarded call                                                        */
/* ---------------------------------------------------------------------- */

static void destroy_error(const XLA_FFI_Api* api, XLA_FFI_Error* err) {
  if (err == NULL || api == NULL || api->XLA_FFI_Error_Destroy == NULL) return;
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->XLA_FFI_Error_Destroy(&d);
}

/*
 * A buffer's data size in bytes as XLA lays it out; 0 for tokens, -1 when it
 * does not fit int64_t. XLA keeps the sub-byte types packed (S4/U4 and
 * F4E2M1FN two values a byte, S2/U2 four, the first in the low bits), so
 * their buffers hold ceil(count × bits / 8) bytes, fewer than ffi.h's
 * size_bytes() (ByteWidth 1 × count) says: shadowing size_bytes() would
 * read and write past XLA's buffer. (XLA's layouts give these types
 * element_size_in_bits < 8, so its buffer assignment sizes them packed;
 * seen with jaxlib 0.10.2: u4[5] = 1..5 arrives as 21 43 05, u2[5] =
 * 1,2,3,0,1 as 39 01; tests/_xla_guard_cases.ts subByte.)
 */
static int64_t buffer_bytes(const XLA_FFI_Buffer* b) {
  if (b->dtype == XLA_FFI_DataType_TOKEN) return 0;
  int sub_byte = xla_ffi_dtype_is_sub_byte(b->dtype);
  int64_t n = sub_byte ? 1 : (int64_t)xla_ffi_dtype_width(b->dtype);
  for (int64_t d = 0; d < b->rank; d++) {
    int64_t v = b->dims[d];
    if (v < 0) return -1;
    if (v != 0 && n > INT64_MAX / v) return -1;
    n *= v;
  }
  if (sub_byte) {
    int64_t bits = xla_ffi_dtype_bits(b->dtype);
    if (n > (INT64_MAX - 7) / bits) return -1;
    n = (n * bits + 7) / 8;
  }
  return n;
}

static size_t round_up(size_t n) { return (n + GUARD_ALIGN - 1) & ~(size_t)(GUARD_ALIGN - 1); }

/* What one guarded execute call holds. */
typedef struct {
  int64_t nargs, nrets;
  int64_t* arg_size;          /* -1: not checked (not a buffer) */
  size_t* arg_off;            /* each argument's copy in `copies` */
  uint8_t* copies;
  int64_t* ret_size;          /* -1: not shadowed (passed through) */
  size_t* ret_off;            /* each result's zone in `shadow` (front canary first) */
  size_t* ret_zone;           /* the zone's length */
  uint8_t* shadow;            /* GUARD_ALIGN-aligned, inside `map` */
  uint8_t* map;               /* the mapping: an inaccessible page, the shadows, another */
  size_t map_len;
  XLA_FFI_Buffer* ret_bufs;   /* the copies the handler sees */
  void** ret_ptrs;
  int64_t* alias_of;          /* per argument: the result whose shadow it shares, or -1 */
  XLA_FFI_Buffer* arg_bufs;   /* aliased arguments' copies the handler sees */
  void** arg_ptrs;            /* NULL: the runtime's arguments, as they are */
} guard_call;

static void guard_free(guard_call* g) {
  free(g->arg_size);
  free(g->arg_off);
  free(g->copies);
  free(g->ret_size);
  free(g->ret_off);
  free(g->ret_zone);
  if (g->map != NULL) munmap(g->map, g->map_len);
  free(g->ret_bufs);
  free(g->ret_ptrs);
  free(g->alias_of);
  free(g->arg_bufs);
  free(g->arg_ptrs);
}

/* Whether result `j` of `f` is a buffer the guard shadows: its byte size, or -1. */
static int64_t shadowed_size(const XLA_FFI_CallFrame* f, size_t j) {
  const XLA_FFI_Buffer* b = f->rets.rets[j];
  if (f->rets.types[j] != XLA_FFI_RetType_BUFFER || b == NULL ||
      b->dtype == XLA_FFI_DataType_TOKEN)
    return -1;
  return buffer_bytes(b);
}

/* Lays out and fills the shadows and copies; 0, or -1 (message in buf). */
static int guard_prepare(guard_call* g, const XLA_FFI_CallFrame* f, char* buf, size_t cap) {
  g->nargs = f->args.size > 0 ? f->args.size : 0;
  g->nrets = f->rets.size > 0 ? f->rets.size : 0;
  size_t na = (size_t)g->nargs, nr = (size_t)g->nrets;
  g->arg_size = calloc(na + 1, sizeof(int64_t));
  g->arg_off = calloc(na + 1, sizeof(size_t));
  g->ret_size = calloc(nr + 1, sizeof(int64_t));
  g->ret_off = calloc(nr + 1, sizeof(size_t));
  g->ret_zone = calloc(nr + 1, sizeof(size_t));
  g->ret_bufs = calloc(nr + 1, sizeof(XLA_FFI_Buffer));
  g->ret_ptrs = calloc(nr + 1, sizeof(void*));
  g->alias_of = calloc(na + 1, sizeof(int64_t));
  if (!g->arg_size || !g->arg_off || !g->ret_size || !g->ret_off || !g->ret_zone ||
      !g->ret_bufs || !g->ret_ptrs || !g->alias_of) {
    snprintf(buf, cap, "out of memory for the guard's bookkeeping");
    return -1;
  }
  size_t total = 0;
  int any_alias = 0;
  for (size_t i = 0; i < na; i++) {
    const XLA_FFI_Buffer* b = f->args.args[i];
    g->arg_size[i] = -1;
    g->alias_of[i] = -1;
    if (f->args.types[i] != XLA_FFI_ArgType_BUFFER || b == NULL || b->data == NULL) continue;
    int64_t n = buffer_bytes(b);
    if (n < 0) {
      snprintf(buf, cap, "argument %zu: its byte size overflows", i);
      return -1;
    }
    /* An argument that is a result's memory (input_output_aliases: XLA hands both the
     * same buffer) shares that result's shadow, as under the embedded guard: the
     * handler sees one address, and its writes there are the result's. */
    if (n > 0) {
      for (size_t j = 0; j < nr && g->alias_of[i] < 0; j++) {
        const XLA_FFI_Buffer* r = f->rets.rets[j];
        if (shadowed_size(f, j) != n || r->data != b->data) continue;
        int taken = 0;
        for (size_t k = 0; k < i; k++) taken |= g->alias_of[k] == (int64_t)j;
        if (!taken) g->alias_of[i] = (int64_t)j;
      }
      if (g->alias_of[i] >= 0) {
        any_alias = 1;
        continue; /* not an argument to compare: writes into it are the result's */
      }
    }
    g->arg_size[i] = n;
    g->arg_off[i] = total;
    total += (size_t)n;
  }
  g->copies = malloc(total > 0 ? total : 1);
  if (g->copies == NULL) {
    snprintf(buf, cap, "out of memory for copies of the arguments (%zu bytes)", total);
    return -1;
  }
  for (size_t i = 0; i < na; i++)
    if (g->arg_size[i] > 0)
      memcpy(g->copies + g->arg_off[i], ((const XLA_FFI_Buffer*)f->args.args[i])->data,
             (size_t)g->arg_size[i]);
  size_t shadow = 0;
  for (size_t i = 0; i < nr; i++) {
    const XLA_FFI_Buffer* b = f->rets.rets[i];
    g->ret_size[i] = -1;
    if (f->rets.types[i] != XLA_FFI_RetType_BUFFER || b == NULL ||
        b->dtype == XLA_FFI_DataType_TOKEN)
      continue;
    int64_t n = buffer_bytes(b);
    if (n < 0) {
      snprintf(buf, cap, "result %zu: its byte size overflows", i);
      return -1;
    }
    g->ret_size[i] = n;
    g->ret_off[i] = shadow;
    g->ret_zone[i] = GUARD_CANARY + round_up((size_t)n) + GUARD_CANARY;
    shadow += g->ret_zone[i];
  }
  /* The shadows live in a mapping of their own, away from the allocator's
   * heap, between two inaccessible pages: a write that skips a canary zone
   * ends in a fault (which the fatal-signal report names) rather than in
   * another allocation. */
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t body = (shadow + page - 1) / page * page;
  if (body == 0) body = page;
  void* m = mmap(NULL, body + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    snprintf(buf, cap, "out of memory for the results' shadows (%zu bytes)", shadow);
    return -1;
  }
  g->map = m;
  g->map_len = body + 2 * page;
  if (mprotect(g->map, page, PROT_NONE) != 0 ||
      mprotect(g->map + page + body, page, PROT_NONE) != 0) {
    snprintf(buf, cap, "could not protect the guard pages of the results' shadows");
    return -1;
  }
  g->shadow = g->map + page;
  for (size_t i = 0; i < nr; i++) {
    const XLA_FFI_Buffer* b = f->rets.rets[i];
    g->ret_ptrs[i] = f->rets.rets[i];
    if (g->ret_size[i] < 0) continue;
    uint8_t* zone = g->shadow + g->ret_off[i];
    size_t n = (size_t)g->ret_size[i];
    for (size_t k = 0; k < GUARD_CANARY; k++) zone[k] = canary_byte(k);
    uint8_t* data = zone + GUARD_CANARY;
    /* The runtime's bytes (an aliased argument's, say) as the handler would see them. */
    if (n > 0 && b->data != NULL) memcpy(data, b->data, n);
    for (size_t k = n, j = 0; k < g->ret_zone[i] - GUARD_CANARY; k++, j++)
      data[k] = canary_byte(j);
    size_t bsize = b->struct_size < sizeof(XLA_FFI_Buffer) ? b->struct_size : sizeof(XLA_FFI_Buffer);
    memcpy(&g->ret_bufs[i], b, bsize);
    g->ret_bufs[i].data = data;
    g->ret_ptrs[i] = &g->ret_bufs[i];
  }
  if (any_alias) {
    g->arg_bufs = calloc(na + 1, sizeof(XLA_FFI_Buffer));
    g->arg_ptrs = calloc(na + 1, sizeof(void*));
    if (!g->arg_bufs || !g->arg_ptrs) {
      snprintf(buf, cap, "out of memory for the guard's bookkeeping");
      return -1;
    }
    for (size_t i = 0; i < na; i++) {
      g->arg_ptrs[i] = f->args.args[i];
      if (g->alias_of[i] < 0) continue;
      const XLA_FFI_Buffer* b = f->args.args[i];
      size_t bsize = b->struct_size < sizeof(XLA_FFI_Buffer) ? b->struct_size : sizeof(XLA_FFI_Buffer);
      memcpy(&g->arg_bufs[i], b, bsize);
      g->arg_bufs[i].data = g->ret_bufs[g->alias_of[i]].data;
      g->arg_ptrs[i] = &g->arg_bufs[i];
    }
  }
  return 0;
}

/* The guard's checks after the call: 0, or -1 with the finding in buf. The
 * wording is the embedded runtime's (src/runtime/_guard.ts). */
static int guard_check(const guard_call* g, const XLA_FFI_CallFrame* f, const char* name,
                       char* buf, size_t cap) {
  for (int64_t i = 0; i < g->nrets; i++) {
    if (g->ret_size[i] < 0) continue;
    const uint8_t* zone = g->shadow + g->ret_off[i];
    size_t n = (size_t)g->ret_size[i];
    for (size_t k = 0; k < GUARD_CANARY; k++) {
      if (zone[k] != canary_byte(k)) {
        snprintf(buf, cap,
                 "Handler '%s' wrote before the start of result %lld at byte offset -%zu, "
                 "%zu byte%s before its first byte (the result has %zu bytes; found by a "
                 "canary before it)",
                 name, (long long)i, GUARD_CANARY - k, GUARD_CANARY - k,
                 GUARD_CANARY - k == 1 ? "" : "s", n);
        return -1;
      }
    }
    const uint8_t* data = zone + GUARD_CANARY;
    for (size_t k = n, j = 0; k < g->ret_zone[i] - GUARD_CANARY; k++, j++) {
      if (data[k] != canary_byte(j)) {
        snprintf(buf, cap,
                 "Handler '%s' wrote past the end of result %lld at byte offset %zu "
                 "(the result has %zu bytes; found by a canary after the call)",
                 name, (long long)i, k, n);
        return -1;
      }
    }
  }
  for (int64_t i = 0; i < g->nargs; i++) {
    if (g->arg_size[i] <= 0) continue;
    const uint8_t* now = ((const XLA_FFI_Buffer*)f->args.args[i])->data;
    const uint8_t* was = g->copies + g->arg_off[i];
    size_t n = (size_t)g->arg_size[i];
    if (memcmp(now, was, n) == 0) continue;
    size_t k = 0;
    while (k < n && now[k] == was[k]) k++;
    snprintf(buf, cap,
             "Handler '%s' wrote into argument %lld at byte offset %zu "
             "(arguments are read-only; found by a copy compared after the call)",
             name, (long long)i, k);
    return -1;
  }
  return 0;
}

static XLA_FFI_Error* guarded_execute(const guard_slot* s, XLA_FFI_CallFrame* f) {
  char buf[1024];
  if (f->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "The guard of handler '%s' cannot read a call frame of %zu bytes (expected at "
             "least %zu)",
             s->name, f->struct_size, (size_t)XLA_FFI_CallFrame_STRUCT_SIZE);
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  if ((f->args.size > 0 && (f->args.types == NULL || f->args.args == NULL)) ||
      (f->rets.size > 0 && (f->rets.types == NULL || f->rets.rets == NULL))) {
    snprintf(buf, sizeof buf, "The guard of handler '%s' got a call frame with null operands",
             s->name);
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  XLA_FFI_Api* api = guarded_api(f->api);
  if (api == NULL) {
    snprintf(buf, sizeof buf,
             "The guard of handler '%s' cannot wrap an XLA_FFI_Api of %zu bytes (out of memory, "
             "or a table without futures)",
             s->name, f->api->struct_size);
    return host_make_error(f->api, XLA_FFI_Error_Code_INTERNAL, buf);
  }
  guard_call g;
  memset(&g, 0, sizeof g);
  char why[256];
  if (guard_prepare(&g, f, why, sizeof why) != 0) {
    guard_free(&g);
    snprintf(buf, sizeof buf, "The guard of handler '%s': %s", s->name, why);
    return host_make_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, buf);
  }
  /* The handler's frame: the runtime's, with shadowed results and the api
   * whose futures the guard can wait for. */
  XLA_FFI_CallFrame copy;
  memset(&copy, 0, sizeof copy);
  memcpy(&copy, f, XLA_FFI_CallFrame_STRUCT_SIZE);
  copy.api = api;
  copy.rets.rets = g.ret_ptrs;
  if (g.arg_ptrs != NULL) copy.args.args = g.arg_ptrs;
  copy.future = NULL;
  const XLA_FFI_Api* outer_api = t_api;
  t_api = f->api;
  XLA_FFI_Error* err = s->inner(&copy);
  t_api = outer_api;
  if (err == NULL && copy.future != NULL) {
    guard_future* gf = as_guard_future(copy.future);
    if (gf == NULL) {
      /* Not made by the table the handler was given: nothing to wait for. */
      guard_free(&g);
      snprintf(buf, sizeof buf,
               "Handler '%s' returned a future the guard did not create: a guarded handler "
               "must create its future with its call frame's api",
               s->name);
      return host_make_error(f->api, XLA_FFI_Error_Code_INTERNAL, buf);
    }
    err = wait_future(gf);
  }
  XLA_FFI_Error* out = NULL;
  if (guard_check(&g, f, s->name, buf, sizeof buf) != 0) {
    destroy_error(f->api, err); /* the guard's finding comes first */
    /* The runtime's arguments are left as they were before the call. */
    for (int64_t i = 0; i < g.nargs; i++) {
      if (g.arg_size[i] <= 0) continue;
      uint8_t* now = ((const XLA_FFI_Buffer*)f->args.args[i])->data;
      const uint8_t* was = g.copies + g.arg_off[i];
      if (memcmp(now, was, (size_t)g.arg_size[i]) != 0) memcpy(now, was, (size_t)g.arg_size[i]);
    }
    out = host_make_error(f->api, XLA_FFI_Error_Code_DATA_LOSS, buf);
    if (out == NULL) xfd_warn("deno-xla-ffi: %s", buf);
  } else if (err != NULL) {
    out = err;
  } else {
    for (int64_t i = 0; i < g.nrets; i++) {
      const XLA_FFI_Buffer* b = f->rets.rets[i];
      if (g.ret_size[i] > 0 && b->data != NULL)
        memcpy(b->data, g.shadow + g.ret_off[i] + GUARD_CANARY, (size_t)g.ret_size[i]);
    }
  }
  guard_free(&g);
  return out;
}

static XLA_FFI_Error* guard_entry(int32_t n, XLA_FFI_CallFrame* f) {
  const guard_slot* s = &g_guard_slots[n];
  /* Metadata, null frames, frames without an api and stages other than
   * execute: the handler's own business. */
  if (f == NULL || f->api == NULL || f->struct_size < offsetof(XLA_FFI_CallFrame, args) ||
      (f->extension_start != NULL && f->extension_start->type == XLA_FFI_Extension_Metadata) ||
      f->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return s->inner(f);
  return guarded_execute(s, f);
}

/* 256 distinct entry points, generated. */
#define G1(n) static XLA_FFI_Error* guard_##n(XLA_FFI_CallFrame* f) { return guard_entry(n, f); }
#define G2(n) G1(n##0) G1(n##1)
#define G4(n) G2(n##0) G2(n##1)
#define G8(n) G4(n##0) G4(n##1)
#define G16(n) G8(n##0) G8(n##1)
#define G32(n) G16(n##0) G16(n##1)
#define G64(n) G32(n##0) G32(n##1)
#define G128(n) G64(n##0) G64(n##1)
#define G256(n) G128(n##0) G128(n##1)

/* Binary literals as slot numbers: 0b + 8 binary digits. */
G256(0b)

#define U1(n) guard_##n,
#define U2(n) U1(n##0) U1(n##1)
#define U4(n) U2(n##0) U2(n##1)
#define U8(n) U4(n##0) U4(n##1)
#define U16(n) U8(n##0) U8(n##1)
#define U32(n) U16(n##0) U16(n##1)
#define U64(n) U32(n##0) U32(n##1)
#define U128(n) U64(n##0) U64(n##1)
#define U256(n) U128(n##0) U128(n##1)

static XLA_FFI_Handler* const g_guard_entries[GUARD_SLOTS] = {U256(0b)};

/*
 * The guarded entry point of `inner`, named `name` in the guard's messages:
 * the same one for the same handler and name. Entry points are never
 * released (a runtime keeps a registered handler for the life of the
 * process). NULL when all GUARD_SLOTS are taken or inner is NULL.
 */
void* xla_ffi_deno_guard_wrap(void* inner, const char* name) {
  if (inner == NULL) return NULL;
  const char* nm = name != NULL ? name : "handler";
  void* out = NULL;
  pthread_mutex_lock(&g_guard_mu);
  int32_t n = atomic_load(&g_guard_count);
  for (int32_t i = 0; i < n && out == NULL; i++)
    if ((void*)g_guard_slots[i].inner == inner &&
        strncmp(g_guard_slots[i].name, nm, GUARD_NAME_CAP - 1) == 0)
      out = (void*)g_guard_entries[i];
  if (out == NULL && n < GUARD_SLOTS) {
    g_guard_slots[n].inner = (XLA_FFI_Handler*)inner;
    snprintf(g_guard_slots[n].name, GUARD_NAME_CAP, "%s", nm);
    atomic_store_explicit(&g_guard_count, n + 1, memory_order_release);
    out = (void*)g_guard_entries[n];
  }
  pthread_mutex_unlock(&g_guard_mu);
  return out;
}

/* The handler a guarded entry point wraps, or NULL when `ptr` is none. */
void* xla_ffi_deno_guard_inner(void* ptr) {
  int32_t n = atomic_load_explicit(&g_guard_count, memory_order_acquire);
  for (int32_t i = 0; i < n; i++)
    if ((void*)g_guard_entries[i] == ptr) return (void*)g_guard_slots[i].inner;
  return NULL;
}

/* The number of guarded entry points (GUARD_SLOTS). */
int32_t xla_ffi_deno_guard_slot_count(void) { return GUARD_SLOTS; }
