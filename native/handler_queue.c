/*
 * handler_queue.c: calls of TS handlers from threads other than the JS
 * thread. Deno runs JS only on the JS thread: a synchronous call is queued
 * and its caller waits for the JS thread to serve it; an asynchronous one is
 * flattened at once, returns a future and is served later. What the calling
 * runtime needs current on the JS thread for the call (a CUDA context) comes
 * from its hooks (handler_host.h).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "handler_internal.h"

#define SPIN_NS 50000   /* how long a caller spins for its result before it sleeps */
/* Of which the first PAUSE_NS with pause, the rest yielding the CPU at each
 * turn: on a busy machine the JS thread may be waiting for this very CPU.
 * While other callers wait too, the spinning caller keeps pausing: the JS
 * thread is serving their calls, so it runs, and what would take this CPU is
 * mostly those callers, whose calls wait for the JS thread anyway (P2 with 4
 * calling threads: p99 21-24 µs and 0.41-0.48M calls/s, against 47-63 µs and
 * 0.35-0.39M yielding after 3 µs; one caller, on an idle machine or beside
 * another busy process, as before). */
#define PAUSE_NS 3000
#define YIELD_NS 5000   /* how long a caller that does not spin yields before it sleeps */

void xla_ffi_deno_handler_job_done(int32_t status);
void* xla_ffi_deno_handler_slot_pointer(int32_t i);

_Atomic(thread_cb_t) g_thread_cb;
static _Atomic int64_t g_wakeups, g_foreign_calls, g_settled_early, g_cpu_moves;

int32_t host_message_len(void) {
  int32_t len = ((const int32_t*)g_flat)[XFD_FLAT_MSG_LEN];
  return len < 0 ? 0 : len > MSG_CAP - 1 ? MSG_CAP - 1 : len;
}

int32_t host_copy_message(char* msg) {
  int32_t len = host_message_len();
  memcpy(msg, g_msg, (size_t)len);
  msg[len] = 0;
  return len;
}

/* Copies the result TS wrote into the flat buffer into a thread's result. */
void xla_ffi_deno_handler_put_result(void* result) {
  call_result* r = (call_result*)result;
  if (r == NULL || g_flat == NULL) return;
  const int32_t* h = (const int32_t*)g_flat;
  r->code = h[XFD_FLAT_CODE];
  r->token = h[XFD_FLAT_TOKEN];
  r->len = host_copy_message(r->msg);
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
_Atomic int64_t g_js_blocked;
_Atomic int32_t g_js_block_kind; /* what blocks it: XFD_JS_BLOCK_* (handler_host.h) */
static _Atomic int64_t g_js_block_seq;

/* Called around a synchronous call on the JS thread; returns what to restore
 * (the previous epoch and kind, packed), or -1 off the JS thread. */
int64_t xla_ffi_deno_js_block_enter_as(int32_t kind) {
  if (!atomic_load_explicit(&g_js_thread_set, memory_order_relaxed) ||
      !pthread_equal(pthread_self(), g_js_thread))
    return -1;
  int64_t e = atomic_fetch_add(&g_js_block_seq, 1) + 1;
  int32_t prev_kind = atomic_exchange(&g_js_block_kind, kind);
  return atomic_exchange(&g_js_blocked, e) * 4 + (prev_kind & 3);
}

int64_t xla_ffi_deno_js_block_enter(void) { return xla_ffi_deno_js_block_enter_as(XFD_JS_BLOCK_CALL); }

void xla_ffi_deno_js_block_leave(int64_t saved) {
  if (saved < 0) return;
  atomic_store(&g_js_blocked, saved / 4);
  atomic_store(&g_js_block_kind, (int32_t)(saved % 4));
}

static _Atomic(const xla_ffi_deno_inline_caller*) g_inline_caller;

int32_t xla_ffi_deno_js_block_describe_inline(const xla_ffi_deno_inline_caller* caller) {
  if (caller != NULL && caller->struct_size < sizeof(xla_ffi_deno_inline_caller)) return -1;
  atomic_store(&g_inline_caller, caller);
  return 0;
}

xla_ffi_deno_inline_caller host_inline_caller(void) {
  const xla_ffi_deno_inline_caller* c = atomic_load(&g_inline_caller);
  xla_ffi_deno_inline_caller out = {sizeof out, "XLA",
                                    "a caller that runs XLA inline on the JS thread",
                                    "a run that leaves the JS thread free"};
  if (c == NULL) return out;
  if (c->runs != NULL) out.runs = c->runs;
  if (c->sync_runs != NULL) out.sync_runs = c->sync_runs;
  if (c->free_runs != NULL) out.free_runs = c->free_runs;
  return out;
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
 * less the JS thread's) spins, with pause for a few microseconds, then
 * yielding the CPU at each turn (on a busy machine the JS thread may be
 * waiting for that CPU); the others yield the CPU for a few
 * microseconds, then sleep on a futex, since spinning callers beyond that
 * would take CPU time from the JS thread. A sleeping
 * caller's completed job goes to a relay list that the spinning caller
 * drains with the wake-up calls; only when no caller spins does the JS thread
 * wake a sleeper itself.
 */
enum { JOB_WAITING = 0, JOB_SLEEPING = 1, JOB_RELAY = 2, JOB_DONE = 3 };

typedef struct job {
  /* The first line: all the JS thread reads of a synchronous call it takes,
   * and all it writes back (the result, then the state the caller waits on),
   * so that the call crosses between the two CPUs in as few cache lines as
   * possible (a synchronous call's job is line-aligned on its caller's stack,
   * see sync_call). */
  _Atomic int32_t state;  /* sync jobs: JOB_*; the caller returns on JOB_DONE */
  int32_t res_status;     /* sync jobs: the result (call_result's fields, written before JOB_DONE) */
  int32_t res_code;
  int32_t res_len;        /* the message's length: its bytes go to result->msg */
  int32_t res_token;
  int32_t slot;
  uint32_t generation;
  int16_t async;
  int16_t cpu;            /* the CPU its caller ran on when it made the call, or -1 */
  int64_t* flat;          /* the frame flattened by the caller (NULL: too large); malloc'ed
                           * for async jobs, on the caller's stack for sync ones */
  int32_t flat_n;         /* slots in flat */
  int32_t taken;          /* the JS thread took it from the queue (under g_q_mu) */
  uintptr_t caller;       /* the calling thread (pthread_self) */
  const void* context;    /* what the calling runtime needs current (its hook), or NULL */
  /* What the JS thread reads only on the way of a queued call or an error. */
  struct job* next;
  XLA_FFI_CallFrame* frame;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future; /* async jobs */
  struct job* relay_next; /* in g_relay */
  call_result* result;    /* sync jobs: the caller's (its message only) */
  _Atomic int32_t early;  /* async jobs: EARLY_* (the settled-early path) */
  int32_t early_code;     /* EARLY_DONE: the result (code 0: success) */
  char* early_msg;        /* EARLY_DONE with an error: its message (malloc'ed), or NULL */
} job;
_Static_assert(offsetof(job, context) + sizeof(void*) <= 64,
               "a synchronous call's hot fields fill one cache line");

/* Slots of the flat copy a synchronous caller makes on its stack (4 KiB);
 * a larger frame is flattened by the JS thread from the frame itself. */
#define SYNC_FLAT_SLOTS 512

/*
 * A synchronous call on its caller's stack: the job (its first line holds
 * what the JS thread reads and writes, see job), then the flattened frame,
 * so that the JS thread, given the job's address by the mailbox, fetches
 * the job and the first lines of the frame at once (sync_call_prefetch)
 * instead of one after the other.
 */
typedef struct {
  job j;
  int64_t flat[SYNC_FLAT_SLOTS];
} __attribute__((aligned(64))) sync_call;

/* Lines of a sync_call fetched ahead: the job's two, and the frame's first
 * (a call with a few buffers and attributes flattens to a few hundred bytes). */
#define SYNC_CALL_PREFETCH_LINES 6

/* JS thread: starts fetching the lines of the synchronous call at `j` (a
 * sync_call's job; a stale address is harmless: a prefetch never faults). */
static inline void sync_call_prefetch(const job* j) {
  const char* p = (const char*)j;
  for (int i = 0; i < SYNC_CALL_PREFETCH_LINES; i++) __builtin_prefetch(p + 64 * i, 0, 3);
}

/*
 * The settled-early path: an async call from another thread whose slot has a
 * settle bound waits up to that bound for the handler's Promise. The JS side
 * hands the result over with one compare-and-swap (EARLY_WAITING ->
 * EARLY_DONE) and the caller completes its future before returning it (XLA
 * then finds it available); a caller whose bound passed first swaps
 * EARLY_WAITING -> EARLY_GONE and returns the pending future, and the JS side
 * completes it when the Promise settles. Whoever loses the swap owns the job
 * afterwards: the caller frees it on EARLY_DONE, the JS side on EARLY_GONE.
 */
enum { EARLY_NONE = 0, EARLY_WAITING = 1, EARLY_DONE = 2, EARLY_GONE = 3 };

/*
 * Callers waiting for a Promise (the settled-early path): counted from before
 * the job is visible to the JS thread until one side wins the job's
 * compare-and-swap (the JS side's EARLY_DONE, the caller's EARLY_GONE); the
 * winner uncounts it. While one waits, the drainer does not linger: it serves
 * what is queued and returns, so the reactions that settle the Promise run.
 * A drainer lingering inside a Promise reaction (continueServing) holds back
 * every microtask queued after that reaction: once two reactions were queued
 * at once (after a stall of the JS thread), each call's Promise settled only
 * after the drainer had taken the next call, one call late, and every caller
 * waited out its whole settle bound (an `await null` handler called from a C
 * thread: rounds of 5000 calls with a median of 57 µs and 1600 settled early,
 * against 2.4 µs and 4400-4900).
 *
 * On a line of its own: the JS thread reads it at every call it takes, and
 * the line the linker gave it held the counts every synchronous caller
 * writes twice per call (g_sync_waiting, g_spinners), so that a caller's
 * write after its call came back took the line back from the JS thread.
 */
static struct __attribute__((aligned(64))) {
  _Atomic int32_t n;
} g_early_waiters;
_Static_assert(sizeof g_early_waiters == 64, "the count of waiting callers has its own line");

static void early_begin(job* j) {
  atomic_store(&j->early, EARLY_WAITING);
  atomic_fetch_add(&g_early_waiters.n, 1);
}

int32_t g_spare_cpus = 1;           /* callers that may spin at once */
static _Atomic int32_t g_sync_waiting; /* synchronous callers waiting for their result */
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

/*
 * The synchronous call the JS thread serves now (set when it takes one,
 * cleared after its caller is released), or NULL. A caller whose call is
 * being served keeps pausing rather than yielding: the JS thread is running
 * (on another CPU), so this CPU is not what it waits for, and a yield costs
 * more than the call's remaining wait (sched_yield takes 1.3-1.5 µs on a VM
 * whose round trip between its CPUs is 0.9 µs; a caller past its pause
 * noticed its result 1.8-4.9 µs after the JS thread wrote it).
 */
static _Atomic(job*) g_js_job;

/*
 * The mailbox: one call handed to the active drainer without the queue's
 * lock. A call in a loop crosses between the caller's CPU and the JS
 * thread's twice, and each cache line the two both write on the way costs a
 * transfer between the CPUs (about 0.4 µs on a VM whose round trip over one
 * line is 0.9 µs): the queue costs the lock's line and the head's, each way;
 * the mailbox is one line, which also holds what wakes a sleeping drainer.
 *
 * `open` is set by the drainer while it serves (next_job), and cleared, under
 * g_q_mu, before the drainer ends; whoever clears it empties the box into
 * the queue (or serves what it finds). A caller boxes its call while the
 * box is empty, then reads `open`: if the box is closed, it takes its call
 * back (the queue then carries it), unless a drainer took it first, which
 * one compare-and-swap decides. The
 * drainer serves the queue first (older calls, so a caller that keeps
 * refilling the box never starves the queued ones), then the box.
 */
static struct __attribute__((aligned(64))) { /* a line of its own (sizeof 64) */
  _Atomic(job*) box;      /* a call for the drainer, or NULL */
  _Atomic int32_t open;   /* a drainer serves: it empties the box before it ends */
  _Atomic int32_t seq;    /* bumped by every push and post: the lingering drainer sleeps on it */
  _Atomic int32_t sleeps; /* the lingering drainer sleeps on seq: wake it */
} g_mail;
_Static_assert(sizeof g_mail == 64, "the mailbox fills its cache line");

static void push_locked(job* j);

/* JS thread: the boxed call, if any. */
static job* mail_take(void) {
  job* j = atomic_load_explicit(&g_mail.box, memory_order_acquire);
  if (j == NULL) return NULL;
  /* The call's lines come from the caller's CPU while the exchange takes the box's line. */
  sync_call_prefetch(j);
  return atomic_exchange(&g_mail.box, NULL);
}

/* Under g_q_mu: closes the box; a call found in it goes to the queue. */
static void mail_close_locked(void) {
  atomic_store(&g_mail.open, 0);
  job* j = atomic_exchange(&g_mail.box, NULL);
  if (j != NULL) push_locked(j);
}

/* A caller: boxes j for the active drainer; 0 when it did not (no drainer,
 * the box full or closed meanwhile): then the queue carries it. An async
 * call's caller does not wait for it and never takes it back afterwards. */
static int mail_post(job* j) {
  /* No read of `open` first: a read, then the swap, would bring the line over twice. */
  job* none = NULL;
  if (!atomic_compare_exchange_strong(&g_mail.box, &none, j)) return 0;
  if (atomic_load(&g_mail.open)) {
    if (atomic_load(&g_mail.sleeps)) {
      atomic_fetch_add(&g_mail.seq, 1);
      futex_wake(&g_mail.seq);
    }
    return 1;
  }
  /* Closed meanwhile: take it back, unless the closing drainer took it. */
  job* mine = j;
  return !atomic_compare_exchange_strong(&g_mail.box, &mine, NULL);
}

/* JS thread only: the calling runtime's context made current for g_cur_job
 * (its queued_enter hook), left with the hooks that entered it. */
static const xla_ffi_deno_host_hooks* g_cur_hooks;
static const void* g_cur_context;
static xla_ffi_deno_host_scope g_cur_scope;

static void leave_job_context(void) {
  if (g_cur_hooks == NULL) return;
  g_cur_hooks->queued_leave(g_cur_context, &g_cur_scope);
  g_cur_hooks = NULL;
}

/* JS thread: makes what job j's runtime needs current (0, or an XLA error
 * code with the message in g_msg). */
static int32_t enter_job_context(const job* j) {
  const xla_ffi_deno_host_hooks* h = host_hooks();
  if (j->context == NULL || h == NULL || h->queued_enter == NULL) return 0;
  g_cur_scope.prev = NULL;
  g_cur_scope.changed = 0;
  int32_t code = h->queued_enter(j->context, &g_cur_scope, (char*)g_msg, MSG_CAP);
  if (code != 0) return code;
  if (h->queued_leave != NULL) {
    g_cur_hooks = h;
    g_cur_context = j->context;
  }
  return 0;
}

/* The calling thread: what job j needs current on the JS thread (the
 * calling runtime's queued_capture hook), or NULL. */
static const void* capture_context(const XLA_FFI_CallFrame* f) {
  const xla_ffi_deno_host_hooks* h = host_hooks();
  return h != NULL && h->queued_capture != NULL ? h->queued_capture(f) : NULL;
}

static void free_job(job* j) {
  free(j->early_msg);
  if (j->flat != (int64_t*)(j + 1)) free(j->flat); /* an async call's frame is in its block */
  free(j);
}

int32_t host_early_settle(void* waiter, int32_t code, const char* msg) {
  job* j = (job*)waiter;
  if (code != 0) {
    size_t n = strnlen(msg, MSG_CAP - 1);
    j->early_msg = malloc(n + 1);
    if (j->early_msg != NULL) {
      memcpy(j->early_msg, msg, n);
      j->early_msg[n] = 0;
    }
  }
  j->early_code = code;
  int32_t s = EARLY_WAITING;
  if (atomic_compare_exchange_strong(&j->early, &s, EARLY_DONE)) {
    atomic_fetch_sub(&g_early_waiters.n, 1);
    /* Counted here, on the thread that settles (the JS thread, but for a Promise settled before
     * its synchronous caller registered it): the count shares a line with the JS thread's count
     * of calls, and the caller's increment took that line from the JS thread every async call. */
    atomic_fetch_add_explicit(&g_settled_early, 1, memory_order_relaxed);
    return 1;
  }
  free_job(j); /* the caller returned the pending future: it completes below */
  return 0;
}

/* An async job's result; frees the job unless its waiting caller took it
 * (or, pending, the token keeps it for its waiting caller). */
static void finish_async(job* j, int32_t status, const call_result* r) {
  char buf[MSG_CAP];
  int early = atomic_load(&j->early) != EARLY_NONE;
  if (status == 2) {
    if (early) {
      host_token_register_waiter(r->token, j->api, j->future, j, 1);
      return;
    }
    host_token_register_waiter(r->token, j->api, j->future, NULL, 1);
    free_job(j);
    return;
  }
  int32_t code = status == 0 ? 0 : status == 1 ? r->code : XLA_FFI_Error_Code_INTERNAL;
  const char* msg = status == 1 ? r->msg : "TS handler dispatch failed (no handler host)";
  const XLA_FFI_Api* api = j->api;
  XLA_FFI_Future* fut = j->future;
  if (early) {
    if (host_early_settle(j, code, msg)) return;
  } else {
    free_job(j);
  }
  if (host_complete_future(api, fut, code, msg, buf, sizeof buf))
    host_report_failure("Failed to signal XLA_FFI_Future completion", buf);
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
      mail_close_locked();
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
      } else {
        j->taken = 1;
        pthread_mutex_unlock(&g_q_mu);
        j->res_code = XLA_FFI_Error_Code_INTERNAL;
        j->res_status = -1;
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

/*
 * The drainer's linger for the next call: it spins for LINGER_SPIN_NS (a
 * caller in a loop is usually back by then: XLA's next call of a jitted
 * program comes 5-15 µs after the last returned; a 10 µs spin left a tail of
 * calls paying a futex wake-up, 30 µs cost the most under load), then sleeps on g_mail.seq until
 * `until` or the next push, which wakes it. Sleeping leaves the CPU to the
 * callers: on a busy machine a spinning JS thread took the CPU from the very
 * thread that was about to make the next call, and calls then cost the
 * whole linger. When the last calls all came from one thread (XLA running
 * one program), the spin pauses only LINGER_PAUSE_NS (XLA's next call usually
 * comes within it) and then yields the CPU at each turn: that caller, if it
 * shares this CPU with another process's work, then runs at once instead of
 * after the spin (bench/xla_like.ts with one other busy process on 2 CPUs:
 * 43-44 µs per call with a pausing spin, 16-17 µs with this one; on an idle
 * machine the same within the noise). Calls from several threads keep the
 * pausing spin, through the whole linger: there the callers waiting for the
 * JS thread are what runs on the CPU it would yield, and yielding halved P2's
 * throughput with 4 callers.
 */
#define LINGER_SPIN_NS 20000
#define LINGER_PAUSE_NS 8000

/* JS thread only: the thread of the last call taken, and how many calls in a
 * row came from it. */
static uintptr_t g_last_caller;
static int32_t g_same_caller_calls;
#define ONE_CALLER_CALLS 8

/* glibc's registered rseq area (2.35 on), where sched_getcpu reads the CPU
 * without a system call; weak: absent from older glibc. */
extern const unsigned int __rseq_size __attribute__((weak));

/* Whether sched_getcpu is a read of memory, a few ns (x86-64: the vDSO; else
 * rseq), not a system call on every call (then CPUs are not compared). */
static int cpu_read_cheap(void) {
#if defined(__x86_64__)
  return 1;
#else
  return &__rseq_size != NULL && __rseq_size > 0;
#endif
}

/* The CPU the calling thread runs on, or -1 (unknown, or not cheap to know). */
static inline int16_t caller_cpu(void) {
  static _Atomic int cheap = -1;
  int k = atomic_load_explicit(&cheap, memory_order_relaxed);
  if (k < 0) atomic_store_explicit(&cheap, k = cpu_read_cheap(), memory_order_relaxed);
  if (!k) return -1;
  int c = sched_getcpu();
  return c >= 0 && c < INT16_MAX ? (int16_t)c : -1;
}

/*
 * The JS thread shares its CPU with the one thread calling it (JS thread
 * only): it moves to another CPU the process may use, by leaving that CPU
 * out of its affinity and then restoring the affinity it had (the kernel
 * moves a thread at once off a CPU its affinity no longer allows, and
 * restoring it does not move it back).
 *
 * Why: after a wake-up or a balancing pass the scheduler sometimes puts the
 * two on one CPU while another is idle, and leaves them there for many
 * milliseconds. Each call then waits for the caller to yield that CPU and
 * the caller for the JS thread's turn: in a jax loop with Python on a worker
 * (8 F32, sync TS handler) 1-8% of the calls, 17-18 µs each at the median
 * against 1.5-1.8 µs across two CPUs, so 0.2-1.6 µs on every call's mean.
 *
 * Only while some CPU is idle: no more threads are runnable than the
 * process may use CPUs (the kernel's count in /proc/loadavg). Beside a busy
 * process, sharing the caller's CPU is the scheduler's right choice: a JS
 * thread moved onto the busy CPU waited out whole time slices there
 * (bench/xla_like.ts beside one busy process: a tenth of the calls took 4
 * ms). At most once per interval, which doubles (up to 64 ms) while no CPU
 * is idle at four tries in a row (a thread runnable for a moment is common:
 * 3-4 runnable at some tries in a jax loop), so that it never fights the
 * scheduler where sharing a CPU is what the machine has to offer.
 */
#define CPU_MOVE_INTERVAL_NS 1000000LL
#define CPU_MOVE_MAX_INTERVAL_NS 64000000LL
static int64_t g_last_cpu_move, g_cpu_move_interval = CPU_MOVE_INTERVAL_NS;
static int32_t g_cpu_move_refusals; /* in a row */
/* Times the JS thread found itself on its caller's CPU and stayed because the machine looked busy
 * (a refusal, or a try skipped while backing off after refusals). */
static _Atomic int64_t g_cpu_moves_declined;

/* Whether at most `cpus` threads are runnable on the machine now (the
 * fourth field of /proc/loadavg, "runnable/total"); 0 when unknown. */
static int runnable_at_most(int cpus) {
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char b[128];
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return 0;
  b[n] = 0;
  const char* p = b;
  for (int field = 0; field < 3; field++) {
    p = strchr(p, ' ');
    if (p == NULL) return 0;
    p++;
  }
  char* end;
  long running = strtol(p, &end, 10);
  return end != p && *end == '/' && running <= cpus;
}

static void leave_cpu(int cpu) {
  int64_t now = mono_ns();
  if (now - g_last_cpu_move < g_cpu_move_interval) {
    if (g_cpu_move_interval > CPU_MOVE_INTERVAL_NS)
      atomic_fetch_add_explicit(&g_cpu_moves_declined, 1, memory_order_relaxed);
    return;
  }
  g_last_cpu_move = now;
  cpu_set_t mask, others;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0 || cpu >= CPU_SETSIZE ||
      !CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2)
    return; /* nowhere to go */
  if (!runnable_at_most(CPU_COUNT(&mask))) {
    atomic_fetch_add_explicit(&g_cpu_moves_declined, 1, memory_order_relaxed);
    /* No CPU is idle now: often a thread that runs for a moment, so back off only after a few. */
    if (++g_cpu_move_refusals >= 4 && g_cpu_move_interval < CPU_MOVE_MAX_INTERVAL_NS)
      g_cpu_move_interval *= 2;
    return;
  }
  g_cpu_move_refusals = 0;
  g_cpu_move_interval = CPU_MOVE_INTERVAL_NS;
  others = mask;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) != 0) return;
  sched_setaffinity(0, sizeof mask, &mask);
  atomic_fetch_add_explicit(&g_cpu_moves, 1, memory_order_relaxed);
}

/* A call waits in the queue or the box. */
static inline int work_waits(void) {
  return __atomic_load_n(&g_q_head, __ATOMIC_ACQUIRE) != NULL ||
         atomic_load_explicit(&g_mail.box, memory_order_acquire) != NULL;
}

static void linger(int64_t now, int64_t until) {
  /* Calls from several threads: pause through the whole linger (callers
   * queued behind each other come back later than one caller in a loop, and
   * a sleeping JS thread costs each of them a wake-up). */
  int one_caller = g_same_caller_calls >= ONE_CALLER_CALLS;
  int64_t spin_until = one_caller && now + LINGER_SPIN_NS < until ? now + LINGER_SPIN_NS : until;
  int64_t pause_until = one_caller ? now + LINGER_PAUSE_NS : spin_until;
  for (unsigned k = 1; spin_until > now && !work_waits(); k++) {
    if (now < pause_until) {
      cpu_relax();
      if ((k & 63) == 0) now = mono_ns();
    } else {
      sched_yield();
      now = mono_ns();
    }
  }
  while (!work_waits()) {
    now = mono_ns();
    if (now >= until) return;
    int32_t seq = atomic_load(&g_mail.seq);
    atomic_store(&g_mail.sleeps, 1);
    /* A push or post after the seq was read changes it: the wait returns at once. */
    if (!work_waits()) futex_wait(&g_mail.seq, seq, until - now);
    atomic_store(&g_mail.sleeps, 0);
  }
}

/* When the JS thread last completed a synchronous foreign call with its
 * result rather than a future (JS thread only). */
static int64_t g_last_sync_done;
/* JS thread only: a caller waits for a Promise of this batch (next_job then
 * does not linger). */
static int g_early_pending;

/* The crash slot while JS runs a queued call (JS thread only): it names the
 * call's entry point, then what it named before (the JS thread may serve
 * queued calls while it waits inside another call). */
static const void* g_job_prev;
static int g_job_named;

static void job_named(int32_t slot) {
  g_job_prev = xfd_running;
  xfd_running = xla_ffi_deno_handler_slot_pointer(slot);
  g_job_named = 1;
}

static void job_unnamed(void) {
  if (!g_job_named) return;
  xfd_running = g_job_prev;
  g_job_named = 0;
}

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
  job_unnamed();
  /* A caller waits for a Promise: its reactions run only once JS returns
   * (microtasks), and a drainer lingering in a reaction would hold back every
   * microtask queued after it. */
  if (g_early_pending || atomic_load_explicit(&g_early_waiters.n, memory_order_relaxed) > 0)
    linger_ns = 0;
  if (!atomic_load_explicit(&g_mail.open, memory_order_relaxed)) atomic_store(&g_mail.open, 1);
  for (;;) {
    /* Linger briefly for the next call before giving up the wake-up: callers
     * in a loop come back within microseconds, and a fresh wake-up of the JS
     * thread costs tens of them. */
    if (linger_ns != 0 && !work_waits()) {
      int64_t now = mono_ns();
      int64_t until = linger_ns > 0 ? now + linger_ns : g_last_sync_done - linger_ns;
      linger(now, until);
    }
    job* j = NULL;
    if (__atomic_load_n(&g_q_head, __ATOMIC_ACQUIRE) == NULL) j = mail_take();
    if (j == NULL) {
      pthread_mutex_lock(&g_q_mu);
      j = g_q_head;
      if (j == NULL) {
        mail_close_locked(); /* a call boxed meanwhile is queued: served below */
        j = g_q_head;
      }
      if (j == NULL) {
        g_q_active = 0;
        pthread_mutex_unlock(&g_q_mu);
        g_cur_job = NULL;
        g_early_pending = 0;
        return -1;
      }
      g_q_head = j->next;
      if (g_q_head == NULL) g_q_tail = NULL;
      j->taken = 1;
      pthread_mutex_unlock(&g_q_mu);
    }
    if (j->caller == g_last_caller) {
      if (g_same_caller_calls < ONE_CALLER_CALLS) g_same_caller_calls++;
      else if (j->cpu >= 0 && j->cpu == sched_getcpu()) leave_cpu(j->cpu);
    } else {
      g_last_caller = j->caller;
      g_same_caller_calls = 0;
    }
    g_cur_job = j;
    if (!j->async) atomic_store_explicit(&g_js_job, j, memory_order_relaxed);
    atomic_fetch_add(&g_foreign_calls, 1);
    if (atomic_load(&g_slots[j->slot].generation) != j->generation) {
      char text[128];
      int n = snprintf(text, sizeof text, "TS handler entry point %d was released", (int)j->slot);
      memcpy(g_msg, text, (size_t)n);
      ((int32_t*)g_flat)[XFD_FLAT_CODE] = XLA_FFI_Error_Code_FAILED_PRECONDITION;
      ((int32_t*)g_flat)[XFD_FLAT_MSG_LEN] = n;
      xla_ffi_deno_handler_job_done(1);
      continue;
    }
    /* A CUDA runtime's call runs with its context current, as on its own thread. */
    int32_t code = enter_job_context(j);
    if (code != 0) {
      ((int32_t*)g_flat)[XFD_FLAT_CODE] = code;
      ((int32_t*)g_flat)[XFD_FLAT_MSG_LEN] = (int32_t)strnlen((const char*)g_msg, MSG_CAP);
      xla_ffi_deno_handler_job_done(1);
      continue;
    }
    /* The caller flattened its frame (an async caller's frame is gone: it
     * returned a future; a sync caller's is in its own cache): copy it. */
    if (j->flat != NULL && j->flat_n <= g_flat_cap) {
      memcpy(g_flat, j->flat, (size_t)j->flat_n * sizeof(int64_t));
      job_named(j->slot);
      return j->slot;
    }
    if (!j->async && xla_ffi_deno_handler_flatten_into(j->frame, g_flat, g_flat_cap) >= 0) {
      job_named(j->slot);
      return j->slot;
    }
    static const char too_big[] = "The call frame is too large for the TS handler flat buffer";
    memcpy(g_msg, too_big, sizeof too_big - 1);
    ((int32_t*)g_flat)[XFD_FLAT_CODE] = XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
    ((int32_t*)g_flat)[XFD_FLAT_MSG_LEN] = (int32_t)(sizeof too_big - 1);
    xla_ffi_deno_handler_job_done(1);
  }
}

/* JS thread: the current call returned `status` (result in the flat buffer). */
void xla_ffi_deno_handler_job_done(int32_t status) {
  job* j = g_cur_job;
  g_cur_job = NULL;
  job_unnamed();
  leave_job_context(); /* before the caller learns the call is over */
  if (j == NULL) return;
  if (j->async) {
    call_result* r = malloc(sizeof(call_result));
    if (r == NULL) {
      /* The job stays (a waiting caller may still read it): its future never
       * completes, reported loudly. */
      host_report_failure("Failed to signal XLA_FFI_Future completion", "out of memory");
      return;
    }
    r->status = status;
    xla_ffi_deno_handler_put_result(r);
    /* A waiting caller's Promise is pending: serve what is queued, but do not
     * linger, so the Promise can settle (its reactions run once JS returns). */
    if (status == 2 && atomic_load(&j->early) == EARLY_WAITING) g_early_pending = 1;
    finish_async(j, status, r);
    free(r);
    return;
  }
  /* The result goes into the job's first line, which the caller waits on; only a message goes
   * to the caller's result (another line). */
  const int32_t* h = (const int32_t*)g_flat;
  int32_t len = host_message_len();
  if (len > 0) host_copy_message(j->result->msg);
  j->res_code = h[XFD_FLAT_CODE];
  j->res_len = len;
  j->res_token = h[XFD_FLAT_TOKEN];
  j->res_status = status;
  /* Its caller will wait for the Promise (the settled-early path): do not linger. */
  if (status == 2 && g_slots[j->slot].settle_ns > 0) g_early_pending = 1;
  release_caller(j);
  /* After the release (j may be gone): only compared, never read through. */
  atomic_store_explicit(&g_js_job, NULL, memory_order_relaxed);
  /* A caller that got its result (not a future to wait on) comes back soon. */
  if (status != 2) g_last_sync_done = mono_ns();
}

/*
 * JS thread, outside the thread-safe callback (a Promise reaction that just
 * handed a waiting caller its result): claim 1 makes this thread the drainer
 * when none is active (returns 1; it then serves with next_job as the
 * callback does, and the role ends when next_job returns -1); claim 0 gives
 * the role up after a budget of calls, waking the dispatcher for what is
 * still queued. Returns 0 when a drainer is already active.
 */
int32_t xla_ffi_deno_handler_drain_claim(int32_t claim) {
  pthread_mutex_lock(&g_q_mu);
  int32_t rc = 0;
  if (claim) {
    if (!g_q_active) g_q_active = rc = 1;
  } else {
    g_q_active = 0;
    g_early_pending = 0;
    mail_close_locked();
    if (g_q_head != NULL) pthread_cond_signal(&g_q_cv);
  }
  pthread_mutex_unlock(&g_q_mu);
  return rc;
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
  atomic_fetch_add(&g_mail.seq, 1);
  if (atomic_load(&g_mail.sleeps)) futex_wake(&g_mail.seq); /* a lingering drainer sleeps */
}

/* Starts the dispatcher thread once; returns 0 when it cannot start. */
static int ensure_dispatcher_locked(void) {
  if (__atomic_load_n(&g_dispatcher_started, __ATOMIC_RELAXED)) return 1;
  /* The dispatcher thread lives as long as the process (its library stays
   * mapped: closing it, as Deno does at exit, never unmaps code it runs). */
  if (!xfd_thread_start_detached(dispatcher_main, NULL)) return 0;
  __atomic_store_n(&g_dispatcher_started, 1, __ATOMIC_RELAXED);
  return 1;
}


/*
 * A caller's busy wait on `*w` for at most `ns`: while `*w == v` (until_equal
 * 0) or `*w != v` (until_equal 1). With `pause`, it spins with cpu_relax for
 * the first PAUSE_NS, then yields the CPU at each turn; without, it yields
 * from the start. It keeps pausing while other callers wait too, or while
 * the JS thread serves `mine` (NULL: none). Relays sleeping callers' wake-ups
 * as it goes.
 */
static void wait_word(_Atomic int32_t* w, int32_t v, int until_equal, int64_t ns, int pause,
                      const job* mine) {
  int64_t now = mono_ns(), until = now + ns, pause_until = pause ? now + PAUSE_NS : now;
  int pausing = pause;
  for (unsigned k = 1; (atomic_load_explicit(w, memory_order_acquire) == v) != until_equal; k++) {
    if (pausing) cpu_relax();
    else sched_yield();
    if ((k & 63) == 0 || !pausing) {
      relay_wakes();
      now = mono_ns();
      if (now >= until) break;
      /* Others wait for the JS thread too, or it serves this call: it is
       * busy serving, keep pausing. */
      if (pause && now >= pause_until &&
          (atomic_load_explicit(&g_sync_waiting, memory_order_relaxed) > 1 ||
           (mine != NULL && atomic_load_explicit(&g_js_job, memory_order_relaxed) == mine)))
        pause_until = now + PAUSE_NS;
      pausing = now < pause_until;
    }
  }
}

/*
 * The settled-early path, on the calling thread: waits up to `ns` for the
 * JS side to hand over the result of job j (never longer: the JS thread may
 * be busy, or the Promise may wait for I/O). Spins briefly while a spare CPU
 * is left for it, then yields (relaying sleeping callers' wake-ups, as a
 * spinning synchronous caller does). Then completes the future with the result, or
 * leaves it pending for the JS side.
 *
 * Why an available future is enough: XLA takes the call frame's future as an
 * AsyncValueRef (xla/ffi/ffi_api.cc, CallAsync -> TakeFuture; Call blocks in
 * BlockUntilReady), so a future completed before the handler returns costs
 * XLA what a synchronous return does, as a C++ handler returning an already
 * available ffi::Future does.
 */
static XLA_FFI_Error* early_wait(job* j, int64_t ns) {
  int spin = atomic_fetch_add(&g_spinners, 1) < g_spare_cpus;
  wait_word(&j->early, EARLY_WAITING, 0, ns, spin, NULL);
  atomic_fetch_sub(&g_spinners, 1);
  relay_wakes();
  int32_t s = EARLY_WAITING;
  if (atomic_compare_exchange_strong(&j->early, &s, EARLY_GONE)) {
    atomic_fetch_sub(&g_early_waiters.n, 1);
    return NULL; /* pending */
  }
  /* EARLY_DONE: the job is ours again (host_early_settle counted it). */
  char buf[MSG_CAP];
  if (host_complete_future(j->api, j->future, j->early_code,
                           j->early_msg != NULL ? j->early_msg : "", buf, sizeof buf))
    host_report_failure("Failed to signal XLA_FFI_Future completion", buf);
  free_job(j);
  return NULL;
}

XLA_FFI_Error* host_call_async_foreign(int32_t slot, XLA_FFI_CallFrame* f) {
  const XLA_FFI_Api* api = f->api;
  if (api == NULL || api->XLA_FFI_Future_Create == NULL)
    return host_make_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                      "The runtime does not support futures (no Future_Create)");
  /* The frame is valid only during this call (XLA builds it, and the execution
   * context, on its stack): flatten it now; the JS thread decodes the copy. */
  int64_t small[512];
  memset(small, 0, XFD_FLAT_HEADER * sizeof(int32_t)); /* the result area, copied too */
  int32_t used = xla_ffi_deno_handler_flatten_into(f, small, 512);
  const int64_t* src = small;
  int64_t* big = NULL;
  if (used < 0 && g_flat_cap > 512) {
    big = calloc((size_t)g_flat_cap, sizeof(int64_t));
    if (big != NULL) used = xla_ffi_deno_handler_flatten_into(f, big, g_flat_cap);
    src = big;
  }
  /* The job and its flattened frame in one block, laid out as a synchronous
   * call's (sync_call), so the JS thread fetches both at once. Not aligned to
   * a line: glibc serves aligned_alloc from its arena instead of the thread's
   * cache, and that cost a tenth of the calls 15-20 µs (bench/xla_like.ts,
   * async p90). */
  size_t bytes = sizeof(job) + (used > 0 ? (size_t)used * sizeof(int64_t) : 0);
  job* j = malloc(bytes);
  if (j == NULL) {
    free(big);
    return host_make_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
  }
  memset(j, 0, sizeof *j);
  if (used >= 0) {
    j->flat = (int64_t*)(j + 1);
    memcpy(j->flat, src, (size_t)used * sizeof(int64_t));
    j->flat_n = used;
  }
  free(big);
  XLA_FFI_Future_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  XLA_FFI_Error* err = api->XLA_FFI_Future_Create(&a);
  if (err != NULL) {
    free(j);
    return err;
  }
  j->slot = slot;
  j->generation = atomic_load(&g_slots[slot].generation);
  j->caller = (uintptr_t)pthread_self();
  j->cpu = caller_cpu();
  j->async = 1;
  j->frame = f;
  j->context = capture_context(f);
  j->api = api;
  j->future = a.future;
  f->future = a.future;
  int64_t settle_ns = g_slots[slot].settle_ns;
  if (settle_ns > 0) early_begin(j);
  /* The box is open only while a drainer serves (it then takes the call). */
  if (mail_post(j)) return settle_ns > 0 ? early_wait(j, settle_ns) : NULL;
  pthread_mutex_lock(&g_q_mu);
  if (!ensure_dispatcher_locked()) {
    pthread_mutex_unlock(&g_q_mu);
    if (settle_ns > 0) atomic_fetch_sub(&g_early_waiters.n, 1);
    free(j);
    char buf[MSG_CAP];
    if (host_complete_future(api, a.future, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                        "Cannot start the TS handler dispatcher thread", buf, sizeof buf))
      host_report_failure("Failed to signal XLA_FFI_Future completion", buf);
    return NULL;
  }
  push_locked(j);
  if (!g_q_active) pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
  if (settle_ns > 0) return early_wait(j, settle_ns);
  return NULL;
}

/* The caller's wait for a queued synchronous call; false when it was taken
 * back from the queue (the JS thread stayed blocked, see g_js_blocked). */
static int wait_for_job(job* j) {
  /* Spin while a spare CPU is left for it, relaying wake-ups meanwhile. */
  if (atomic_fetch_add(&g_spinners, 1) < g_spare_cpus)
    wait_word(&j->state, JOB_DONE, 1, SPIN_NS, 1, j);
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
    job* mine = j;
    if (atomic_compare_exchange_strong(&g_mail.box, &mine, NULL)) {
      pthread_mutex_unlock(&g_q_mu);
      return 0; /* taken back from the box */
    }
    job** pp = &g_q_head;
    job* prev = NULL;
    while (*pp != NULL && *pp != j) {
      prev = *pp;
      pp = &(*pp)->next;
    }
    if (*pp != j) {
      pthread_mutex_unlock(&g_q_mu);
      continue; /* neither boxed nor queued: the JS thread took it from the box */
    }
    *pp = j->next;
    if (g_q_tail == j) g_q_tail = prev;
    pthread_mutex_unlock(&g_q_mu);
    return 0;
  }
}

XLA_FFI_Error* host_call_sync_foreign(int32_t slot, XLA_FFI_CallFrame* f) {
  /* Checked and flattened here, in one walk over memory this thread just
   * wrote, so the JS thread copies a few cache lines instead of walking
   * XLA's frame from another CPU. */
  sync_call c;
  int64_t* flat = c.flat;
  memset(flat, 0, XFD_FLAT_HEADER * sizeof(int32_t)); /* the result area */
  char text[512]; /* as the entry's own checks */
  int32_t bad;
  int32_t used = xla_ffi_deno_handler_check_flatten(f, flat, SYNC_FLAT_SLOTS, text, sizeof text,
                                                    &bad);
  if (used < 0 && bad) return host_make_error(f->api, bad, text);
  call_result r;
  memset(&r, 0, offsetof(call_result, msg));
  r.msg[0] = 0;
  r.status = -1;
  job* const j = &c.j;
  memset(j, 0, sizeof *j);
  j->res_status = -1;
  j->slot = slot;
  j->generation = atomic_load(&g_slots[slot].generation);
  j->caller = (uintptr_t)pthread_self();
  j->cpu = caller_cpu();
  j->frame = f;
  j->context = capture_context(f);
  j->api = f->api;
  j->result = &r;
  if (used >= 0) {
    j->flat = flat;
    j->flat_n = used;
  }
  /* The box is open only while a drainer serves, which a queued call started. */
  if (!mail_post(j)) {
    pthread_mutex_lock(&g_q_mu);
    if (!ensure_dispatcher_locked()) {
      pthread_mutex_unlock(&g_q_mu);
      return host_make_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                             "Cannot start the TS handler dispatcher thread");
    }
    push_locked(j);
    if (!g_q_active) pthread_cond_signal(&g_q_cv);
    pthread_mutex_unlock(&g_q_mu);
  }
  atomic_fetch_add_explicit(&g_sync_waiting, 1, memory_order_relaxed);
  int served = wait_for_job(j);
  atomic_fetch_sub_explicit(&g_sync_waiting, 1, memory_order_relaxed);
  if (served) {
    r.status = j->res_status;
    r.code = j->res_code;
    r.len = j->res_len;
    r.token = j->res_token;
  } else {
    r.status = 1;
    r.code = XLA_FFI_Error_Code_FAILED_PRECONDITION;
    int32_t kind = atomic_load(&g_js_block_kind);
    if (kind == XFD_JS_BLOCK_XLA_INLINE) {
      /* The caller that runs XLA inline names its own runs (handler_host.h). */
      xla_ffi_deno_inline_caller who = host_inline_caller();
      snprintf(r.msg, MSG_CAP,
               "A TS handler called from another thread cannot run: the JS thread runs %s "
               "synchronously (%s) and XLA called the handler from one of its own threads (a "
               "program it does not run inline on the calling thread). Use %s so the JS thread "
               "stays free",
               who.runs, who.sync_runs, who.free_runs);
    } else {
      snprintf(r.msg, MSG_CAP, "%s",
               kind == XFD_JS_BLOCK_FFI_CALL
                   ? "A TS handler called from another thread cannot run: the JS thread is "
                     "blocked in a native handler Runtime.ffiCall runs on it (as XLA runs a "
                     "synchronous handler inline), which waits for it. Give that ffiCall "
                     "offThread: true so the JS thread stays free"
                   : "A TS handler called from another thread cannot run: the JS thread is "
                     "blocked in a native handler called with Runtime.callSync, which waits for "
                     "it. Call that handler with Runtime.call so the JS thread stays free");
    }
  }
  int64_t settle_ns = g_slots[slot].settle_ns;
  job* w;
  if (r.status == 2 && settle_ns > 0 && (w = calloc(1, sizeof(job))) != NULL) {
    /* The handler returned a Promise: wait for it as an async call does. */
    w->async = 1;
    early_begin(w);
    XLA_FFI_Error* err = host_pending_future(f, r.token, w);
    if (err != NULL || f->future == NULL) {
      atomic_fetch_sub(&g_early_waiters.n, 1);
      free(w);
      return err;
    }
    w->api = f->api;
    w->future = f->future;
    return early_wait(w, settle_ns);
  }
  return host_finish(f, r.status, r.code, r.msg, r.token);
}

/* Foreign calls served, wake-ups of the JS thread they needed, async calls
 * whose caller got the settled result (the settled-early path), moves of the
 * JS thread off its caller's CPU (leave_cpu), and the times it stayed there
 * because the machine looked busy. */
void xla_ffi_deno_handler_foreign_stats(double* out) {
  out[0] = (double)atomic_load(&g_foreign_calls);
  out[1] = (double)atomic_load(&g_wakeups);
  out[2] = (double)atomic_load(&g_settled_early);
  out[3] = (double)atomic_load(&g_cpu_moves);
  out[4] = (double)atomic_load(&g_cpu_moves_declined);
}
