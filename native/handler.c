/*
 * handler.c: a fixed pool of XLA_FFI_Handler entry points that forward calls
 * to TypeScript handlers.
 *
 * Each slot answers the metadata query in C, checks the frame size and stage
 * as ffi.h does, then hands the call to JavaScript:
 *   - on the JS thread: flattens the frame into the shared flat buffer and
 *     calls the inline callback (no thread hop);
 *   - on another thread, synchronous slot: calls the thread-safe callback,
 *     which blocks this thread until JS returned;
 *   - on another thread, async slot: creates the future with the caller's
 *     Future_Create, queues the call for a dispatcher thread and returns at
 *     once; the future completes when the JS Promise settles.
 * Errors are always created with the calling runtime's Error_Create.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "handler_internal.h"
#include "xla_ffi_versions.h"
#include "runtime_internal.h"

#define SLOT_COUNT 1024
#define TOKEN_COUNT 65536
#define MSG_CAP 4096
#define SPIN_NS 50000   /* how long a caller spins for its result before it sleeps */
#define YIELD_NS 5000   /* how long a caller that does not spin yields before it sleeps */
#define AUX_MSG_OFFSET 16
#define STATE_TYPE_ID 0x5453535441544531LL /* explicit id of the TS state type */

typedef int32_t (*inline_cb_t)(int32_t slot);
typedef int32_t (*thread_cb_t)(void);

typedef struct {
  _Atomic int32_t in_use;
  int32_t stage;
  int32_t major;
  int32_t minor;
  uint32_t traits;
  int32_t async;
  _Atomic uint32_t generation; /* bumped on release: queued calls of a released handler fail */
  _Atomic int32_t pinned;      /* registered by name: never reused, even after release */
} slot_config;

/* A result of one call, filled by TS through xla_ffi_deno_handler_put_result. */
typedef struct {
  int32_t status; /* 0 ok, 1 error, 2 pending (token) */
  int32_t code;
  int32_t token;
  int32_t len;
  char msg[MSG_CAP];
} call_result;

void xla_ffi_deno_handler_put_result(void* result);
void xla_ffi_deno_handler_job_done(int32_t status);

static slot_config g_slots[SLOT_COUNT];
static pthread_t g_js_thread;
static _Atomic int g_js_thread_set;
static int64_t* g_flat;
static int64_t g_flat_cap;
static uint8_t* g_msg;     /* message bytes written by TS (MSG_CAP) */
static uint8_t* g_aux;     /* results of context helpers (MSG_CAP) */
static _Atomic(inline_cb_t) g_inline_cb;
static _Atomic(thread_cb_t) g_thread_cb;
static _Atomic int64_t g_failed_completions;
static _Atomic int64_t g_wakeups, g_foreign_calls;

/*
 * Benchmarks only (bench/handler_speed.ts prints a per-phase breakdown from
 * it): calls on the JS thread stop after a phase and return success. 0: never
 * (the normal case); 1: after the entry's own checks (size, stage, slot); 2:
 * after the frame check and flatten; higher phases are TS's (host.ts
 * _phaseStop).
 */
static _Atomic int32_t g_phase_stop;

int32_t xla_ffi_deno_handler_phase_stop(int32_t phase) {
  return atomic_exchange(&g_phase_stop, phase);
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */
/* ---------------------------------------------------------------------- */

static XLA_FFI_Error* make_error(const XLA_FFI_Api* api, int32_t code, const char* msg) {
  if (api == NULL || api->XLA_FFI_Error_Create == NULL) {
    fprintf(stderr, "deno-xla-ffi: cannot report a handler error (no XLA_FFI_Api): %s\n", msg);
    return NULL;
  }
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = (XLA_FFI_Error_Code)code;
  return api->XLA_FFI_Error_Create(&a);
}

static void destroy_error(const XLA_FFI_Api* api, XLA_FFI_Error* err) {
  if (err == NULL || api->XLA_FFI_Error_Destroy == NULL) return;
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->XLA_FFI_Error_Destroy(&d);
}

/* Copies an error's message into buf and destroys the error. */
static void take_message(const XLA_FFI_Api* api, XLA_FFI_Error* err, char* buf, size_t cap) {
  const char* m = "";
  XLA_FFI_Error_GetMessage_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE;
  g.error = err;
  if (api->XLA_FFI_Error_GetMessage) {
    api->XLA_FFI_Error_GetMessage(&g);
    if (g.message) m = g.message;
  }
  snprintf(buf, cap, "%s", m);
  destroy_error(api, err);
}

static void report_failure(const char* what, const char* msg) {
  atomic_fetch_add(&g_failed_completions, 1);
  fprintf(stderr, "deno-xla-ffi: %s: %s\n", what, msg);
}

/* ---------------------------------------------------------------------- */
/* Futures: tokens shared by TS (completion) and C (registration)          */
/* ---------------------------------------------------------------------- */

enum { TOKEN_FREE = 0, TOKEN_ALLOCATED, TOKEN_REGISTERED, TOKEN_EARLY, TOKEN_ABANDONED };

typedef struct {
  int32_t state;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  int32_t code;
  char* msg;
} token_entry;

static pthread_mutex_t g_token_mu = PTHREAD_MUTEX_INITIALIZER;
static token_entry g_tokens[TOKEN_COUNT];
static int32_t g_token_next = 1;

int32_t xla_ffi_deno_handler_token_alloc(void) {
  pthread_mutex_lock(&g_token_mu);
  for (int32_t n = 0; n < TOKEN_COUNT - 1; n++) {
    int32_t t = g_token_next;
    g_token_next = g_token_next + 1 >= TOKEN_COUNT ? 1 : g_token_next + 1;
    if (g_tokens[t].state == TOKEN_FREE) {
      g_tokens[t].state = TOKEN_ALLOCATED;
      pthread_mutex_unlock(&g_token_mu);
      return t;
    }
  }
  pthread_mutex_unlock(&g_token_mu);
  return 0;
}

/* Completes a future; returns 0 or -1 (message in buf). */
static int complete_future(const XLA_FFI_Api* api, XLA_FFI_Future* fut, int32_t code,
                           const char* msg, char* buf, size_t cap) {
  XLA_FFI_Error* err;
  if (code == 0) {
    if (!api->XLA_FFI_Future_SetAvailable) {
      snprintf(buf, cap, "the runtime has no Future_SetAvailable");
      return -1;
    }
    XLA_FFI_Future_SetAvailable_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
    a.future = fut;
    err = api->XLA_FFI_Future_SetAvailable(&a);
  } else {
    if (!api->XLA_FFI_Future_SetError) {
      snprintf(buf, cap, "the runtime has no Future_SetError");
      return -1;
    }
    XLA_FFI_Error* e = make_error(api, code, msg);
    if (e == NULL) {
      snprintf(buf, cap, "Error_Create returned NULL for: %s", msg);
      return -1;
    }
    XLA_FFI_Future_SetError_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
    a.future = fut;
    a.error = e;
    err = api->XLA_FFI_Future_SetError(&a);
    /* A refused error stays ours (the runtime takes it over only on success). */
    if (err != NULL) destroy_error(api, e);
  }
  if (err != NULL) {
    take_message(api, err, buf, cap);
    return -1;
  }
  return 0;
}

/* Called on the calling thread once the future exists. */
static void token_register(int32_t token, const XLA_FFI_Api* api, XLA_FFI_Future* fut) {
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  if (e->state == TOKEN_EARLY) {
    int32_t code = e->code;
    char* msg = e->msg;
    e->msg = NULL;
    e->state = TOKEN_FREE;
    pthread_mutex_unlock(&g_token_mu);
    char buf[MSG_CAP];
    if (complete_future(api, fut, code, msg ? msg : "", buf, sizeof buf))
      report_failure("Failed to signal XLA_FFI_Future completion", buf);
    free(msg);
    return;
  }
  e->state = TOKEN_REGISTERED;
  e->api = api;
  e->future = fut;
  pthread_mutex_unlock(&g_token_mu);
}

static void token_abandon(int32_t token) {
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  if (e->state == TOKEN_EARLY) {
    free(e->msg);
    e->msg = NULL;
    e->state = TOKEN_FREE;
  } else {
    e->state = TOKEN_ABANDONED;
  }
  pthread_mutex_unlock(&g_token_mu);
}

/*
 * Called by TS when a handler's Promise settled. Returns 0 completed, 1 kept
 * until the calling thread registers the future, 2 dropped (future creation
 * had failed and was reported to the caller), -1 unknown token, -2 the
 * completion failed (message in aux).
 */
int32_t xla_ffi_deno_handler_complete(int32_t token, int32_t code, const uint8_t* msg,
                                      int32_t len) {
  if (token <= 0 || token >= TOKEN_COUNT) return -1;
  char* text = malloc((size_t)len + 1);
  if (text == NULL) return -2;
  if (len > 0) memcpy(text, msg, (size_t)len);
  text[len] = 0;
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  switch (e->state) {
    case TOKEN_ALLOCATED:
      e->state = TOKEN_EARLY;
      e->code = code;
      e->msg = text;
      pthread_mutex_unlock(&g_token_mu);
      return 1;
    case TOKEN_ABANDONED:
      e->state = TOKEN_FREE;
      pthread_mutex_unlock(&g_token_mu);
      free(text);
      return 2;
    case TOKEN_REGISTERED: {
      const XLA_FFI_Api* api = e->api;
      XLA_FFI_Future* fut = e->future;
      e->state = TOKEN_FREE;
      pthread_mutex_unlock(&g_token_mu);
      char buf[MSG_CAP];
      int rc = complete_future(api, fut, code, text, buf, sizeof buf);
      free(text);
      if (rc) {
        report_failure("Failed to signal XLA_FFI_Future completion", buf);
        if (g_aux) {
          int32_t n = (int32_t)strnlen(buf, MSG_CAP - AUX_MSG_OFFSET - 1);
          memcpy(g_aux + AUX_MSG_OFFSET, buf, (size_t)n);
          ((int32_t*)g_aux)[2] = n;
        }
        return -2;
      }
      return 0;
    }
    default:
      pthread_mutex_unlock(&g_token_mu);
      free(text);
      return -1;
  }
}

/* Foreign calls served and wake-ups of the JS thread they needed. */
void xla_ffi_deno_handler_foreign_stats(double* out) {
  out[0] = (double)atomic_load(&g_foreign_calls);
  out[1] = (double)atomic_load(&g_wakeups);
}

int64_t xla_ffi_deno_handler_failed_completions(void) {
  return atomic_load(&g_failed_completions);
}

/* ---------------------------------------------------------------------- */
/* Finishing a call                                                        */
/* ---------------------------------------------------------------------- */

static XLA_FFI_Error* finish(XLA_FFI_CallFrame* f, int32_t status, int32_t code, const char* msg,
                             int32_t token) {
  const XLA_FFI_Api* api = f->api;
  switch (status) {
    case 0:
      return NULL;
    case 1:
      return make_error(api, code, msg);
    case 2: {
      if (api == NULL || api->XLA_FFI_Future_Create == NULL) {
        token_abandon(token);
        return make_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                          "The runtime does not support futures (no Future_Create)");
      }
      XLA_FFI_Future_Create_Args a;
      memset(&a, 0, sizeof a);
      a.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
      XLA_FFI_Error* err = api->XLA_FFI_Future_Create(&a);
      if (err != NULL) {
        token_abandon(token);
        return err;
      }
      f->future = a.future;
      token_register(token, api, a.future);
      return NULL;
    }
    default:
      return make_error(api, XLA_FFI_Error_Code_INTERNAL,
                        "TS handler dispatch failed (no handler host)");
  }
}

/* Copies the result TS wrote into the flat buffer into a thread's result. */
void xla_ffi_deno_handler_put_result(void* result) {
  call_result* r = (call_result*)result;
  if (r == NULL || g_flat == NULL) return;
  const int32_t* h = (const int32_t*)g_flat;
  r->code = h[0];
  r->len = h[2];
  r->token = h[4];
  if (r->len < 0) r->len = 0;
  if (r->len > MSG_CAP - 1) r->len = MSG_CAP - 1;
  memcpy(r->msg, g_msg, (size_t)r->len);
  r->msg[r->len] = 0;
}

/* ---------------------------------------------------------------------- */
/* The JS thread blocked in a native handler                               */
/* ---------------------------------------------------------------------- */

/*
 * While the JS thread runs a native handler synchronously (Runtime.callSync),
 * it cannot serve calls from other threads. If that handler waits for such a
 * call (e.g. it runs a TS handler on a thread of its own and joins it), both
 * would wait forever. g_js_blocked holds the epoch of the blocking call (0:
 * none; inline TS handlers clear it, since the JS thread then runs JS): a
 * foreign caller still queued after BLOCK_GRACE_NS of one blocking call fails
 * with FAILED_PRECONDITION instead.
 */
#define BLOCK_GRACE_NS 500000000LL
static _Atomic int64_t g_js_blocked;
static _Atomic int64_t g_js_block_seq;

/* Called by the runtime around a synchronous call; returns what to restore. */
int64_t xla_ffi_deno_js_block_enter(void) {
  if (!atomic_load_explicit(&g_js_thread_set, memory_order_relaxed) ||
      !pthread_equal(pthread_self(), g_js_thread))
    return -1;
  int64_t e = atomic_fetch_add(&g_js_block_seq, 1) + 1;
  return atomic_exchange(&g_js_blocked, e);
}

void xla_ffi_deno_js_block_leave(int64_t saved) {
  if (saved >= 0) atomic_store(&g_js_blocked, saved);
}

/* ---------------------------------------------------------------------- */
/* Calls from other threads: a native queue drained by the JS thread       */
/* ---------------------------------------------------------------------- */

/*
 * Foreign calls go into one queue. At most one "drainer" is active: the
 * first caller that finds no drainer calls the thread-safe JS callback
 * (blocking itself), and that callback serves every queued call, including
 * those that arrive while it runs, until the queue is empty. Other callers
 * only wait for their own call: one costly wake-up of the JS thread serves
 * many calls. Async calls never wait: the dispatcher thread wakes the JS
 * thread for them when no drainer is active.
 *
 * A synchronous caller waits for its result without locks: the JS thread
 * completes a job with one atomic operation on its state and makes no system
 * call while some caller spins. At most one caller per spare CPU (the CPUs
 * less the JS thread's) spins; the others yield the CPU for a few
 * microseconds, then sleep on a futex, since spinning callers beyond that
 * would take CPU time from the JS thread. A sleeping
 * caller's completed job goes to a relay list that the spinning caller
 * drains with the wake-up calls; only when no caller spins does the JS thread
 * wake a sleeper itself.
 */
enum { JOB_WAITING = 0, JOB_SLEEPING = 1, JOB_RELAY = 2, JOB_DONE = 3 };

typedef struct job {
  struct job* next;
  int32_t slot;
  uint32_t generation;
  int32_t async;
  XLA_FFI_CallFrame* frame;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future; /* async jobs */
  int64_t* flat;          /* async jobs: the frame flattened by the caller (NULL: too large) */
  int32_t flat_n;         /* slots in flat */
  const xrt_runtime* cuda_rt; /* the calling CUDA runtime of this library, or NULL */
  int32_t taken;          /* the JS thread took it from the queue (under g_q_mu) */
  _Atomic int32_t state;  /* sync jobs: JOB_*; the caller returns on JOB_DONE */
  struct job* relay_next; /* in g_relay */
  call_result* result;    /* sync jobs: the caller's */
} job;

static int32_t g_spare_cpus = 1;    /* callers that may spin at once */
static _Atomic int32_t g_spinners;  /* callers spinning now */
static _Atomic(job*) g_relay;       /* completed jobs whose callers sleep */

static void futex_wake(_Atomic int32_t* addr) {
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait(_Atomic int32_t* addr, int32_t value, int64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, value, &t, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/* Wakes the callers of every job in the relay list. */
static void relay_wakes(void) {
  if (atomic_load(&g_relay) == NULL) return;
  job* j = atomic_exchange(&g_relay, NULL);
  while (j != NULL) {
    job* next = j->relay_next;
    atomic_store_explicit(&j->state, JOB_DONE, memory_order_release);
    /* The caller may return as soon as it sees JOB_DONE: j is not read again
     * (a wake-up of a stack slot it left is a harmless spurious wake-up). */
    futex_wake(&j->state);
    j = next;
  }
}

/* The JS thread (or a failing drainer): j's result is written; release its caller. */
static void release_caller(job* j) {
  int32_t s = JOB_WAITING;
  if (atomic_compare_exchange_strong(&j->state, &s, JOB_DONE)) return; /* it spins */
  /* It sleeps (or is about to): it returns only on JOB_DONE, so j stays valid
   * until the relay has woken it. */
  atomic_store(&j->state, JOB_RELAY);
  job* head = atomic_load(&g_relay);
  do j->relay_next = head;
  while (!atomic_compare_exchange_weak(&g_relay, &head, j));
  if (atomic_load(&g_spinners) == 0) relay_wakes(); /* no caller spins to relay it */
}

static pthread_mutex_t g_q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_q_cv = PTHREAD_COND_INITIALIZER; /* dispatcher wake-up */
static job* g_q_head;
static job* g_q_tail;
static int g_q_active; /* a drainer is inside the JS callback */
static int g_dispatcher_started;
static job* g_cur_job; /* JS thread only */
/* JS thread only: the CUDA context made current for g_cur_job (its runtime's). */
static const xrt_runtime* g_cur_rt;
static xrt_cuda_scope g_cur_scope;

static void leave_job_context(void) {
  if (g_cur_rt == NULL) return;
  xrt_cuda_leave(g_cur_rt, &g_cur_scope);
  g_cur_rt = NULL;
}

static void finish_async(job* j, int32_t status, const call_result* r) {
  char buf[MSG_CAP];
  if (status == 2) {
    token_register(r->token, j->api, j->future);
    return;
  }
  int32_t code = status == 0 ? 0 : status == 1 ? r->code : XLA_FFI_Error_Code_INTERNAL;
  const char* msg = status == 1 ? r->msg : "TS handler dispatch failed (no handler host)";
  if (complete_future(j->api, j->future, code, msg, buf, sizeof buf))
    report_failure("Failed to signal XLA_FFI_Future completion", buf);
}

/* Runs the JS drainer; returns when the queue was found empty. */
static void drain(void) {
  thread_cb_t cb = atomic_load(&g_thread_cb);
  int32_t rc;
  /* 1: JS served its budget of calls and yields to its event loop; go on. */
  do {
    atomic_fetch_add(&g_wakeups, 1);
    rc = cb ? cb() : -1;
  } while (rc == 1);
  if (rc != 0) {
    /* No JS host: fail whatever is queued so no caller waits forever. */
    call_result r;
    memset(&r, 0, offsetof(call_result, msg));
    for (;;) {
      pthread_mutex_lock(&g_q_mu);
      job* j = g_q_head;
      if (j == NULL) {
        g_q_active = 0;
        pthread_mutex_unlock(&g_q_mu);
        return;
      }
      g_q_head = j->next;
      if (g_q_head == NULL) g_q_tail = NULL;
      if (j->async) {
        pthread_mutex_unlock(&g_q_mu);
        finish_async(j, -1, &r);
        free(j->flat);
        free(j);
      } else {
        j->taken = 1;
        pthread_mutex_unlock(&g_q_mu);
        j->result->code = XLA_FFI_Error_Code_INTERNAL;
        j->result->status = -1;
        release_caller(j);
      }
    }
  }
}

/*
 * JS thread: takes the next queued call, flattens its frame into the flat
 * buffer and returns its slot; -1 when the queue is empty (the drainer then
 * ends). A frame too large for the flat buffer is failed here.
 */
static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* When the JS thread last completed a synchronous foreign call with its
 * result rather than a future (JS thread only). */
static int64_t g_last_sync_done;

/*
 * done_status >= 0: the current call returned it (as job_done); then the
 * next, waiting up to linger_ns for one when the queue is empty. A negative
 * linger_ns (a Promise of this batch is pending, and its future completes
 * only after the drainer returns) waits only up to -linger_ns after the last
 * synchronous call completed with its result: its caller is likely to come
 * back, while one given a future waits for the drainer to return.
 */
int32_t xla_ffi_deno_handler_next_job(int32_t done_status, int32_t linger_ns) {
  if (done_status >= 0 && g_cur_job != NULL) xla_ffi_deno_handler_job_done(done_status);
  leave_job_context(); /* a job left without job_done */
  for (;;) {
    /* Linger briefly for the next call before giving up the wake-up: callers
     * in a loop come back within microseconds, and a fresh wake-up of the JS
     * thread costs tens of them. */
    if (linger_ns != 0 && __atomic_load_n(&g_q_head, __ATOMIC_ACQUIRE) == NULL) {
      int64_t now = mono_ns();
      int64_t until = linger_ns > 0 ? now + linger_ns : g_last_sync_done - linger_ns;
      for (unsigned k = 1; until > now && __atomic_load_n(&g_q_head, __ATOMIC_ACQUIRE) == NULL;
           k++) {
        cpu_relax();
        if ((k & 63) == 0 && mono_ns() >= until) break;
      }
    }
    pthread_mutex_lock(&g_q_mu);
    job* j = g_q_head;
    if (j == NULL) {
      g_q_active = 0;
      pthread_mutex_unlock(&g_q_mu);
      g_cur_job = NULL;
      return -1;
    }
    g_q_head = j->next;
    if (g_q_head == NULL) g_q_tail = NULL;
    j->taken = 1;
    pthread_mutex_unlock(&g_q_mu);
    g_cur_job = j;
    atomic_fetch_add(&g_foreign_calls, 1);
    if (atomic_load(&g_slots[j->slot].generation) != j->generation) {
      char text[128];
      int n = snprintf(text, sizeof text, "TS handler entry point %d was released", (int)j->slot);
      memcpy(g_msg, text, (size_t)n);
      ((int32_t*)g_flat)[0] = XLA_FFI_Error_Code_FAILED_PRECONDITION;
      ((int32_t*)g_flat)[2] = n;
      xla_ffi_deno_handler_job_done(1);
      continue;
    }
    /* A CUDA runtime's call runs with its context current, as on its own thread. */
    int32_t code =
        xrt_cuda_enter_runtime(j->cuda_rt, &g_cur_scope, &g_cur_rt, (char*)g_msg, MSG_CAP);
    if (code != 0) {
      ((int32_t*)g_flat)[0] = code;
      ((int32_t*)g_flat)[2] = (int32_t)strnlen((const char*)g_msg, MSG_CAP);
      xla_ffi_deno_handler_job_done(1);
      continue;
    }
    if (j->async) {
      /* The caller's frame is gone (it returned a future): use its flat copy. */
      if (j->flat != NULL && j->flat_n <= g_flat_cap) {
        memcpy(g_flat, j->flat, (size_t)j->flat_n * sizeof(int64_t));
        return j->slot;
      }
    } else if (xla_ffi_deno_handler_flatten_into(j->frame, g_flat, g_flat_cap) >= 0) {
      return j->slot;
    }
    static const char too_big[] = "The call frame is too large for the TS handler flat buffer";
    memcpy(g_msg, too_big, sizeof too_big - 1);
    ((int32_t*)g_flat)[0] = XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
    ((int32_t*)g_flat)[2] = (int32_t)(sizeof too_big - 1);
    xla_ffi_deno_handler_job_done(1);
  }
}

/* JS thread: the current call returned `status` (result in the flat buffer). */
void xla_ffi_deno_handler_job_done(int32_t status) {
  job* j = g_cur_job;
  g_cur_job = NULL;
  leave_job_context(); /* before the caller learns the call is over */
  if (j == NULL) return;
  if (j->async) {
    call_result* r = malloc(sizeof(call_result));
    if (r == NULL) {
      report_failure("Failed to signal XLA_FFI_Future completion", "out of memory");
      free(j->flat);
      free(j);
      return;
    }
    r->status = status;
    xla_ffi_deno_handler_put_result(r);
    finish_async(j, status, r);
    free(r);
    free(j->flat);
    free(j);
    return;
  }
  xla_ffi_deno_handler_put_result(j->result);
  j->result->status = status;
  release_caller(j);
  /* A caller that got its result (not a future to wait on) comes back soon. */
  if (status != 2) g_last_sync_done = mono_ns();
}

static void* dispatcher_main(void* unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&g_q_mu);
    while (g_q_head == NULL || g_q_active) pthread_cond_wait(&g_q_cv, &g_q_mu);
    g_q_active = 1;
    pthread_mutex_unlock(&g_q_mu);
    drain();
  }
  return NULL;
}

static void push_locked(job* j) {
  j->next = NULL;
  if (g_q_tail) g_q_tail->next = j; else __atomic_store_n(&g_q_head, j, __ATOMIC_RELEASE);
  g_q_tail = j;
}

/* Starts the dispatcher thread once; returns 0 when it cannot start. */
static int ensure_dispatcher_locked(void) {
  if (g_dispatcher_started) return 1;
  /* The dispatcher thread lives as long as the process (its library stays
   * mapped: closing it, as Deno does at exit, never unmaps code it runs). */
  if (!xrt_thread_start_detached(dispatcher_main, NULL)) return 0;
  g_dispatcher_started = 1;
  return 1;
}

static XLA_FFI_Error* call_async_foreign(int32_t slot, XLA_FFI_CallFrame* f) {
  const XLA_FFI_Api* api = f->api;
  if (api == NULL || api->XLA_FFI_Future_Create == NULL)
    return make_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                      "The runtime does not support futures (no Future_Create)");
  job* j = calloc(1, sizeof(job));
  if (j == NULL) return make_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
  /* The frame is valid only during this call (XLA builds it, and the execution
   * context, on its stack): flatten it now; the JS thread decodes the copy. */
  int64_t small[512];
  memset(small, 0, FLAT_HEADER_SLOTS * sizeof(int64_t)); /* the result area, copied too */
  int32_t used = xla_ffi_deno_handler_flatten_into(f, small, 512);
  const int64_t* src = small;
  int64_t* big = NULL;
  if (used < 0 && g_flat_cap > 512) {
    big = calloc((size_t)g_flat_cap, sizeof(int64_t));
    if (big != NULL) used = xla_ffi_deno_handler_flatten_into(f, big, g_flat_cap);
    src = big;
  }
  if (used >= 0) {
    j->flat = malloc((size_t)used * sizeof(int64_t));
    if (j->flat == NULL) {
      free(big);
      free(j);
      return make_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
    }
    memcpy(j->flat, src, (size_t)used * sizeof(int64_t));
    j->flat_n = used;
  }
  free(big);
  XLA_FFI_Future_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  XLA_FFI_Error* err = api->XLA_FFI_Future_Create(&a);
  if (err != NULL) {
    free(j->flat);
    free(j);
    return err;
  }
  j->slot = slot;
  j->generation = atomic_load(&g_slots[slot].generation);
  j->async = 1;
  j->frame = f;
  j->cuda_rt = xrt_cuda_runtime_of(f);
  j->api = api;
  j->future = a.future;
  f->future = a.future;
  pthread_mutex_lock(&g_q_mu);
  if (!ensure_dispatcher_locked()) {
    pthread_mutex_unlock(&g_q_mu);
    free(j->flat);
    free(j);
    char buf[MSG_CAP];
    if (complete_future(api, a.future, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                        "Cannot start the TS handler dispatcher thread", buf, sizeof buf))
      report_failure("Failed to signal XLA_FFI_Future completion", buf);
    return NULL;
  }
  push_locked(j);
  if (!g_q_active) pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
  return NULL;
}

/* The caller's wait for a queued synchronous call; false when it was taken
 * back from the queue (the JS thread stayed blocked, see g_js_blocked). */
static int wait_for_job(job* j) {
  /* Spin while a spare CPU is left for it, relaying wake-ups meanwhile. */
  if (atomic_fetch_add(&g_spinners, 1) < g_spare_cpus) {
    int64_t until = mono_ns() + SPIN_NS;
    for (unsigned k = 1; atomic_load_explicit(&j->state, memory_order_acquire) != JOB_DONE; k++) {
      cpu_relax();
      if ((k & 63) == 0) {
        relay_wakes();
        if (mono_ns() >= until) break;
      }
    }
  }
  atomic_fetch_sub(&g_spinners, 1);
  relay_wakes(); /* what was queued for this caller to relay while it spun */
  /* Not spinning: yield the CPU a few times before sleeping. A call queued
   * behind a few others completes within microseconds, and a futex sleep
   * and wake-up cost more than that on this side. */
  int64_t until = mono_ns() + YIELD_NS;
  while (atomic_load_explicit(&j->state, memory_order_acquire) != JOB_DONE && mono_ns() < until)
    sched_yield();
  int64_t seen = 0, since = 0;
  for (;;) {
    int32_t s = JOB_WAITING;
    if (!atomic_compare_exchange_strong(&j->state, &s, JOB_SLEEPING) && s == JOB_DONE) return 1;
    if (s == JOB_WAITING) s = JOB_SLEEPING;
    futex_wait(&j->state, s, 50000000LL);
    if (atomic_load_explicit(&j->state, memory_order_acquire) == JOB_DONE) return 1;
    /* Still queued while the JS thread stays blocked in one native call? */
    int64_t b = atomic_load(&g_js_blocked);
    if (b == 0 || b != seen) {
      seen = b;
      since = mono_ns();
      continue;
    }
    if (mono_ns() - since < BLOCK_GRACE_NS) continue;
    pthread_mutex_lock(&g_q_mu);
    if (j->taken) {
      pthread_mutex_unlock(&g_q_mu);
      continue; /* the JS thread has it now: it completes it */
    }
    job** pp = &g_q_head;
    job* prev = NULL;
    while (*pp != NULL && *pp != j) {
      prev = *pp;
      pp = &(*pp)->next;
    }
    if (*pp == j) {
      *pp = j->next;
      if (g_q_tail == j) g_q_tail = prev;
    }
    pthread_mutex_unlock(&g_q_mu);
    return 0;
  }
}

static XLA_FFI_Error* call_sync_foreign(int32_t slot, XLA_FFI_CallFrame* f) {
  call_result r;
  memset(&r, 0, offsetof(call_result, msg));
  r.msg[0] = 0;
  r.status = -1;
  job j;
  memset(&j, 0, sizeof j);
  j.slot = slot;
  j.generation = atomic_load(&g_slots[slot].generation);
  j.frame = f;
  j.cuda_rt = xrt_cuda_runtime_of(f);
  j.api = f->api;
  j.result = &r;
  pthread_mutex_lock(&g_q_mu);
  if (!ensure_dispatcher_locked()) {
    pthread_mutex_unlock(&g_q_mu);
    return make_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                      "Cannot start the TS handler dispatcher thread");
  }
  push_locked(&j);
  if (!g_q_active) pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
  if (!wait_for_job(&j)) {
    r.status = 1;
    r.code = XLA_FFI_Error_Code_FAILED_PRECONDITION;
    snprintf(r.msg, MSG_CAP, "%s",
             "A TS handler called from another thread cannot run: the JS thread is blocked in a "
             "native handler called with Runtime.callSync, which waits for it. Call that "
             "handler with Runtime.call so the JS thread stays free");
  }
  return finish(f, r.status, r.code, r.msg, r.token);
}

/* ---------------------------------------------------------------------- */
/* The entry point                                                         */
/* ---------------------------------------------------------------------- */

static const char* stage_name(int32_t s) {
  switch (s) {
    case 0: return "instantiate";
    case 1: return "prepare";
    case 2: return "initialize";
    case 3: return "execute";
    default: return "unknown";
  }
}

static XLA_FFI_Error* answer_metadata(const slot_config* s, XLA_FFI_CallFrame* f) {
  XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)f->extension_start;
  char buf[256];
  if (ext->extension_base.struct_size < XLA_FFI_Metadata_Extension_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "Unexpected XLA_FFI_Metadata_Extension size: expected at least %zu got %zu. "
             "Check installed software versions.",
             (size_t)XLA_FFI_Metadata_Extension_STRUCT_SIZE, ext->extension_base.struct_size);
    return make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  XLA_FFI_Metadata* m = ext->metadata;
  if (m == NULL || m->struct_size < XLA_FFI_Metadata_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "Unexpected XLA_FFI_Metadata size: expected at least %zu got %zu. "
             "Check installed software versions.",
             (size_t)XLA_FFI_Metadata_STRUCT_SIZE, m ? m->struct_size : (size_t)0);
    return make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  m->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  m->api_version.extension_start = NULL;
  m->api_version.major_version = s->major;
  m->api_version.minor_version = s->minor;
  m->traits = s->traits;
  if (s->major > 0 || s->minor >= 2) ((XLA_FFI_Metadata_V0_2*)m)->state_type_id.type_id = 0;
  return NULL;
}

static XLA_FFI_Error* slot_entry(int32_t n, XLA_FFI_CallFrame* f) {
  if (f == NULL) {
    xrt_warn("deno-xla-ffi: TS handler entry point %d called with a null call frame", (int)n);
    return NULL; /* no api to create an error with */
  }
  slot_config* s = &g_slots[n];
  char buf[512];
  if (f->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "Unexpected XLA_FFI_CallFrame size: expected %zu got %zu. "
             "Check installed software versions.",
             (size_t)XLA_FFI_CallFrame_STRUCT_SIZE, f->struct_size);
    return make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  int live = atomic_load(&s->in_use);
  if (f->extension_start != NULL && f->extension_start->type == XLA_FFI_Extension_Metadata) {
    if (live) return answer_metadata(s, f);
  }
  /* Without an api (XLA's metadata query has none) no XLA_FFI_Error can be
   * made: the call is refused with a warning instead. */
  if (f->api == NULL) {
    xrt_warn("deno-xla-ffi: TS handler entry point %d called with a call frame without an api; "
             "not called", (int)n);
    return NULL;
  }
  if (!live) {
    snprintf(buf, sizeof buf, "TS handler entry point %d was released", (int)n);
    return make_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, buf);
  }
  if ((int32_t)f->stage != s->stage) {
    snprintf(buf, sizeof buf, "Wrong execution stage: expected `%s` but got `%s`",
             stage_name(s->stage), stage_name((int32_t)f->stage));
    return make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  if (atomic_load(&g_js_thread_set) && pthread_equal(pthread_self(), g_js_thread)) {
    int32_t stop = atomic_load_explicit(&g_phase_stop, memory_order_relaxed);
    if (stop == 1) return NULL;
    /* The frame is checked and flattened in one walk. */
    int32_t code;
    int32_t used = xla_ffi_deno_handler_check_flatten(f, g_flat, g_flat_cap, buf, sizeof buf, &code);
    if (used < 0) {
      if (code) return make_error(f->api, code, buf);
      return make_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                        "The call frame is too large for the TS handler flat buffer");
    }
    inline_cb_t cb = atomic_load(&g_inline_cb);
    if (cb == NULL) return finish(f, -1, 0, "", 0);
    if (stop == 2) return NULL;
    /* The JS thread runs JS now (only this thread writes g_js_blocked). */
    int64_t blocked = atomic_load_explicit(&g_js_blocked, memory_order_relaxed);
    if (blocked) atomic_store(&g_js_blocked, 0);
    int32_t status = cb(n);
    if (blocked) atomic_store(&g_js_blocked, blocked);
    const int32_t* h = (const int32_t*)g_flat;
    if (status == 1) {
      int32_t len = h[2];
      if (len < 0) len = 0;
      if (len > MSG_CAP - 1) len = MSG_CAP - 1;
      char msg[MSG_CAP];
      memcpy(msg, g_msg, (size_t)len);
      msg[len] = 0;
      return finish(f, 1, h[0], msg, 0);
    }
    return finish(f, status, h[0], "", h[4]);
  }
  /* Checked on the calling thread, before any future or queued job exists. */
  int32_t bad = xla_ffi_deno_handler_check_frame(f, buf, sizeof buf);
  if (bad) return make_error(f->api, bad, buf);
  if (s->async) return call_async_foreign(n, f);
  return call_sync_foreign(n, f);
}

/* 1024 distinct entry points, generated. */
#define E1(n) static XLA_FFI_Error* entry_##n(XLA_FFI_CallFrame* f) { return slot_entry(n, f); }
#define E2(n) E1(n##0) E1(n##1)
#define E4(n) E2(n##0) E2(n##1)
#define E8(n) E4(n##0) E4(n##1)
#define E16(n) E8(n##0) E8(n##1)
#define E32(n) E16(n##0) E16(n##1)
#define E64(n) E32(n##0) E32(n##1)
#define E128(n) E64(n##0) E64(n##1)
#define E256(n) E128(n##0) E128(n##1)
#define E512(n) E256(n##0) E256(n##1)
#define E1024(n) E512(n##0) E512(n##1)

/* Binary literals as slot numbers: 0b + 10 binary digits. */
E1024(0b)

#define T1(n) entry_##n,
#define T2(n) T1(n##0) T1(n##1)
#define T4(n) T2(n##0) T2(n##1)
#define T8(n) T4(n##0) T4(n##1)
#define T16(n) T8(n##0) T8(n##1)
#define T32(n) T16(n##0) T16(n##1)
#define T64(n) T32(n##0) T32(n##1)
#define T128(n) T64(n##0) T64(n##1)
#define T256(n) T128(n##0) T128(n##1)
#define T512(n) T256(n##0) T256(n##1)
#define T1024(n) T512(n##0) T512(n##1)

static XLA_FFI_Handler* const g_entries[SLOT_COUNT] = {T1024(0b)};

/* ---------------------------------------------------------------------- */
/* Host set-up and slot management (called from TS on the JS thread)       */
/* ---------------------------------------------------------------------- */

int32_t xla_ffi_deno_handler_slot_count(void) { return SLOT_COUNT; }
int32_t xla_ffi_deno_handler_msg_cap(void) { return MSG_CAP; }

/* Returns 0, or -1 when another JS thread already hosts the handlers. */
static pid_t g_js_tid;

/* Whether the hosting JS thread still runs (a thread id of this process). */
static int host_alive(void) {
  return syscall(SYS_tgkill, getpid(), g_js_tid, 0) == 0;
}

int32_t xla_ffi_deno_handler_init(int64_t* flat, int64_t cap_slots, uint8_t* msg, uint8_t* aux,
                                  void* inline_cb, void* thread_cb) {
  /* Another JS thread takes over when the host ended (a finished Worker) or
   * holds no handler any more (e.g. an earlier module of `deno test`, whose
   * isolate ran on another thread of the same process). */
  if (atomic_load(&g_js_thread_set) && !pthread_equal(pthread_self(), g_js_thread) &&
      host_alive()) {
    for (int32_t i = 0; i < SLOT_COUNT; i++)
      if (atomic_load(&g_slots[i].in_use)) return -1;
  }
  g_js_tid = (pid_t)syscall(SYS_gettid);
  /* Spinning callers beyond two only burn CPU: every call waits for the one
   * JS thread, and one spinner relays the wake-ups of all sleepers. */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  g_spare_cpus = cpus > 2 ? 2 : 1;
  g_flat = flat;
  g_flat_cap = cap_slots;
  g_msg = msg;
  g_aux = aux;
  g_js_thread = pthread_self();
  atomic_store(&g_js_thread_set, 1);
  atomic_store(&g_inline_cb, (inline_cb_t)inline_cb);
  atomic_store(&g_thread_cb, (thread_cb_t)thread_cb);
  return 0;
}

/* Where the search for a free slot starts: after the last slot handed out,
 * so a released slot is reused as late as possible and a pointer some C code
 * kept after close keeps answering "was released" for as long as possible. */
static int32_t g_slot_cursor;

/* Claims a free slot; returns its index or -1 when all are taken. */
int32_t xla_ffi_deno_handler_slot_acquire(int32_t stage, int32_t major, int32_t minor,
                                          uint32_t traits, int32_t async) {
  for (int32_t k = 0; k < SLOT_COUNT; k++) {
    int32_t i = (g_slot_cursor + k) % SLOT_COUNT;
    slot_config* s = &g_slots[i];
    if (atomic_load(&s->in_use) || atomic_load(&s->pinned)) continue;
    s->stage = stage;
    s->major = major;
    s->minor = minor;
    s->traits = traits;
    s->async = async;
    atomic_store(&s->in_use, 1);
    g_slot_cursor = (i + 1) % SLOT_COUNT;
    return i;
  }
  return -1;
}

void xla_ffi_deno_handler_slot_release(int32_t i) {
  if (i < 0 || i >= SLOT_COUNT) return;
  atomic_fetch_add(&g_slots[i].generation, 1);
  atomic_store(&g_slots[i].in_use, 0);
}

/* The slot whose entry point is `ptr`, or -1 when it is none. */
int32_t xla_ffi_deno_handler_slot_of(void* ptr) {
  for (int32_t i = 0; i < SLOT_COUNT; i++)
    if ((void*)g_entries[i] == ptr) return i;
  return -1;
}

/* The slot of `ptr` if it is a TS entry point whose slot is released, else -1. */
int32_t xla_ffi_deno_handler_released_slot(void* ptr) {
  int32_t i = xla_ffi_deno_handler_slot_of(ptr);
  return i >= 0 && !atomic_load(&g_slots[i].in_use) ? i : -1;
}

/* Whether the calling thread is the JS thread that hosts TS handlers. */
int32_t xla_ffi_deno_handler_is_host(void) {
  return atomic_load(&g_js_thread_set) && pthread_equal(pthread_self(), g_js_thread);
}

/*
 * A runtime registered `ptr` by name (registrations are never removed): if it
 * is a TS entry point, its slot is never handed to another handler, so the
 * name cannot come to call a different function. Returns the slot or -1.
 */
int32_t xla_ffi_deno_handler_pin(void* ptr) {
  int32_t i = xla_ffi_deno_handler_slot_of(ptr);
  if (i >= 0) atomic_store(&g_slots[i].pinned, 1);
  return i;
}

/* Slots kept out of reuse by registrations. */
int32_t xla_ffi_deno_handler_pinned_count(void) {
  int32_t n = 0;
  for (int32_t i = 0; i < SLOT_COUNT; i++) n += atomic_load(&g_slots[i].pinned) ? 1 : 0;
  return n;
}

void* xla_ffi_deno_handler_slot_pointer(int32_t i) {
  return (i >= 0 && i < SLOT_COUNT) ? (void*)g_entries[i] : NULL;
}

/* Flattens a frame (thread-safe path; JS thread only). */
int32_t xla_ffi_deno_handler_flatten(void* frame) {
  if (frame == NULL || g_flat == NULL) return -1;
  return xla_ffi_deno_handler_flatten_into((const XLA_FFI_CallFrame*)frame, g_flat, g_flat_cap);
}

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
  take_message(api, err, buf, sizeof buf);
  return aux_text(buf);
}

#define NEED(api, fn)                                                     \
  do {                                                                    \
    if ((api) == NULL) return aux_text("no XLA_FFI_Api in the call frame"); \
    if ((api)->fn == NULL) return aux_text("the runtime does not implement " #fn); \
  } while (0)

int32_t xla_ffi_deno_ctx_run_id(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_RunId_Get);
  XLA_FFI_RunId_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_RunId_Get_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  XLA_FFI_Error* e = api->XLA_FFI_RunId_Get(&a);
  if (e) return aux_error(api, e);
  aux_value((double)a.run_id);
  return 0;
}

int32_t xla_ffi_deno_ctx_device_ordinal(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_DeviceOrdinal_Get);
  XLA_FFI_DeviceOrdinal_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  XLA_FFI_Error* e = api->XLA_FFI_DeviceOrdinal_Get(&a);
  if (e) return aux_error(api, e);
  aux_value((double)a.device_ordinal);
  return 0;
}

int32_t xla_ffi_deno_ctx_stream(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_Stream_Get);
  XLA_FFI_Stream_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  XLA_FFI_Error* e = api->XLA_FFI_Stream_Get(&a);
  if (e) return aux_error(api, e);
  aux_value((double)(uintptr_t)a.stream);
  return 0;
}

int32_t xla_ffi_deno_ctx_user_data(double api_d, double ctx, double type_id) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_ExecutionContext_Get);
  XLA_FFI_TypeId id = {(int64_t)type_id};
  XLA_FFI_ExecutionContext_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  a.type_id = &id;
  XLA_FFI_Error* e = api->XLA_FFI_ExecutionContext_Get(&a);
  if (e) return aux_error(api, e);
  aux_value((double)(uintptr_t)a.data);
  return 0;
}

int32_t xla_ffi_deno_ctx_scratch_alloc(double api_d, double ctx, double size, double align) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_DeviceMemory_Allocate);
  XLA_FFI_DeviceMemory_Allocate_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  a.size = (size_t)size;
  a.alignment = (size_t)align;
  XLA_FFI_Error* e = api->XLA_FFI_DeviceMemory_Allocate(&a);
  if (e) return aux_error(api, e);
  aux_value((double)(uintptr_t)a.data);
  return 0;
}

int32_t xla_ffi_deno_ctx_scratch_free(double api_d, double ctx, double size, double data) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_DeviceMemory_Free);
  XLA_FFI_DeviceMemory_Free_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  a.size = (size_t)size;
  a.data = (void*)(uintptr_t)data;
  XLA_FFI_Error* e = api->XLA_FFI_DeviceMemory_Free(&a);
  if (e) return aux_error(api, e);
  return 0;
}

int32_t xla_ffi_deno_ctx_num_threads(double api_d, double ctx) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_ThreadPool_NumThreads);
  int64_t n = 0;
  XLA_FFI_ThreadPool_NumThreads_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  a.num_threads = &n;
  XLA_FFI_Error* e = api->XLA_FFI_ThreadPool_NumThreads(&a);
  if (e) return aux_error(api, e);
  aux_value((double)n);
  return 0;
}

int32_t xla_ffi_deno_ctx_schedule(double api_d, double ctx, double task, double data) {
  const XLA_FFI_Api* api = API(api_d);
  NEED(api, XLA_FFI_ThreadPool_Schedule);
  XLA_FFI_ThreadPool_Schedule_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE;
  a.ctx = CTX(ctx);
  a.task = (XLA_FFI_Task*)(uintptr_t)task;
  a.data = (void*)(uintptr_t)data;
  XLA_FFI_Error* e = api->XLA_FFI_ThreadPool_Schedule(&a);
  if (e) return aux_error(api, e);
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
