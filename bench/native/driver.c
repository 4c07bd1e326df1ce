/*
 * driver.c: calls a handler function pointer N times on a frame, on the
 * calling thread or on k foreign pthreads, and reports nanoseconds per call
 * (clock_gettime(CLOCK_MONOTONIC)). Every contender of the comparison (C,
 * Python ctypes callbacks, Deno callbacks) is driven through it the same way.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "bench.h"

typedef struct drive_job {
  XLA_FFI_Handler* handler;
  XLA_FFI_CallFrame* frame;
  int64_t iters;
  int64_t errors;
  double ns;
  void (*after)(void);
  struct drive_gate* gate;
} drive_job;

/* Start gate: threads wait until go != 0; go < 0 tells them to leave. */
typedef struct drive_gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int go;
} drive_gate;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void run_loop(drive_job* job) {
  int64_t errors = 0;
  double t0 = now_ns();
  for (int64_t i = 0; i < job->iters; i++) {
    if (job->handler(job->frame) != NULL) errors++;
  }
  job->ns = (now_ns() - t0) / (double)job->iters;
  job->errors = errors;
  if (job->after) job->after();
}

static void* thread_main(void* p) {
  drive_job* job = p;
  drive_gate* g = job->gate;
  pthread_mutex_lock(&g->mu);
  while (g->go == 0) pthread_cond_wait(&g->cv, &g->mu);
  int go = g->go;
  pthread_mutex_unlock(&g->mu);
  if (go > 0) run_loop(job);
  return NULL;
}

#define BENCH_MAX_THREADS 64

/*
 * Calls `handler(frame)` `iters` times. threads == 0: on the calling thread;
 * threads = k >= 1: on k new pthreads at once (each makes `iters` calls).
 * Writes the mean per-call latency in ns (averaged over the threads) to
 * *ns_per_call. Returns the number of calls that returned a non-NULL error,
 * or a negative value: -1 bad arguments, -2 a thread could not be started.
 * `after` (may be NULL) runs once on each calling thread after its loop,
 * outside the timing (used to collect what the handler decoded there).
 */
int64_t bench_drive(void* handler, void* frame, int64_t iters, int32_t threads,
                    double* ns_per_call, void (*after)(void)) {
  if (!handler || !frame || iters <= 0 || threads < 0 || threads > BENCH_MAX_THREADS ||
      !ns_per_call) {
    return -1;
  }
  drive_job jobs[BENCH_MAX_THREADS];
  if (threads == 0) {
    drive_job job = {(XLA_FFI_Handler*)handler, frame, iters, 0, 0.0, after, NULL};
    run_loop(&job);
    *ns_per_call = job.ns;
    return job.errors;
  }
  drive_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  pthread_t ids[BENCH_MAX_THREADS];
  int started = 0;
  for (int i = 0; i < threads; i++) {
    jobs[i] = (drive_job){(XLA_FFI_Handler*)handler, frame, iters, 0, 0.0, after, &gate};
  }
  for (; started < threads; started++) {
    if (pthread_create(&ids[started], NULL, thread_main, &jobs[started]) != 0) break;
  }
  pthread_mutex_lock(&gate.mu);
  gate.go = started < threads ? -1 : 1;
  pthread_cond_broadcast(&gate.cv);
  pthread_mutex_unlock(&gate.mu);
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
  if (started < threads) return -2;
  int64_t errors = 0;
  double sum = 0.0;
  for (int i = 0; i < threads; i++) {
    errors += jobs[i].errors;
    sum += jobs[i].ns;
  }
  *ns_per_call = sum / threads;
  return errors;
}

/*
 * The machine's state for the hand-off benchmarks: the mean round trip of
 * one cache line between two threads (each waits for the other's write with
 * pause), over `iters` round trips. A virtual machine whose vCPUs change
 * hosts switches between states (this bench's VM: about 0.5 µs and 0.9-1.7
 * µs), and every hand-off between two CPUs pays it, so the benches print it
 * beside their figures. Returns ns per round trip, or -1 when no thread
 * starts.
 */
static inline void bench_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

typedef struct {
  _Atomic int64_t a __attribute__((aligned(64)));
  _Atomic int64_t b __attribute__((aligned(64)));
  int64_t iters;
} ping_lines;

static void* ping_peer(void* p) {
  ping_lines* l = p;
  for (int64_t i = 1; i <= l->iters; i++) {
    while (atomic_load_explicit(&l->a, memory_order_acquire) != i) bench_relax();
    atomic_store_explicit(&l->b, i, memory_order_release);
  }
  return NULL;
}

double bench_round_trip_ns(int64_t iters) {
  static ping_lines l;
  atomic_store(&l.a, 0);
  atomic_store(&l.b, 0);
  l.iters = iters;
  pthread_t t;
  if (pthread_create(&t, NULL, ping_peer, &l) != 0) return -1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int64_t i = 1; i <= iters; i++) {
    atomic_store_explicit(&l.a, i, memory_order_release);
    while (atomic_load_explicit(&l.b, memory_order_acquire) != i) bench_relax();
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(t, NULL);
  return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
         (double)iters;
}
