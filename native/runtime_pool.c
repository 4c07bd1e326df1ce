/*
 * runtime_pool.c: the embedded runtime's objects: a runtime (its API
 * version, platform, stream, CUDA device) with its pthread pool, freed
 * without blocking on busy pool tasks (a reaper thread joins them, and
 * handler libraries whose code they may run are closed after it), and the
 * handler instances that hold state across calls.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime_internal.h"

/* ------------------------------------------------------------------------ */
/* Runtime and thread pool                                                   */
/* ------------------------------------------------------------------------ */

static void* pool_main(void* arg) {
  xrt_runtime* rt = arg;
  /* XLA's pool threads flush denormals for their whole life (fp_mode.h). */
  (void)xfd_fp_enter_xla();
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
 * Creates a runtime of API version 0.minor (1 to 4): platform 0 = Host,
 * 1 = CUDA; threads < 0 = number of cores, 0 = no pool. Returns NULL if the
 * version is not spoken or a thread cannot be started.
 */
xrt_runtime* xla_ffi_deno_runtime_new(int32_t platform, int32_t threads, int32_t minor) {
  const xrt_abi* abi = xrt_abi_for(minor);
  if (!abi) return NULL;
  xrt_runtime* rt = calloc(1, sizeof *rt);
  if (!rt) return NULL;
  rt->abi = abi;
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
void xla_ffi_deno_runtime_set_stream(xrt_runtime* rt, void* stream) { rt->stream = stream; }

int32_t xla_ffi_deno_runtime_num_threads(xrt_runtime* rt) { return rt->num_threads; }

/** The runtime's API version (minor; the major is 0). */
int32_t xla_ffi_deno_runtime_api_minor(xrt_runtime* rt) { return rt->abi->minor; }

/** The XLA_FFI_Api table handlers get from this runtime. */
const XLA_FFI_Api* xla_ffi_deno_runtime_api(xrt_runtime* rt) { return rt->abi->api; }

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

int32_t xla_ffi_deno_runtime_free(xrt_runtime* rt) {
  if (!rt) return 0;
  /* Tasks about to finish are joined here; ones still busy after the grace
   * (e.g. waiting for the JS thread) are left to a reaper. */
  if (runtime_stop(rt, 50)) {
    /* The reaper outlives this call (the library stays mapped for it). */
    pthread_mutex_lock(&g_reap_mu);
    g_reapers++;
    pthread_mutex_unlock(&g_reap_mu);
    if (xfd_thread_start_detached(reaper_main, rt)) return 1;
    pthread_mutex_lock(&g_reap_mu);
    g_reapers--;
    pthread_mutex_unlock(&g_reap_mu);
  }
  runtime_join_free(rt);
  return 0;
}

/** Like xla_ffi_deno_runtime_free but always joins the pool here (call it nonblocking). */
void xla_ffi_deno_runtime_free_join(xrt_runtime* rt) {
  if (!rt) return;
  runtime_stop(rt, 0);
  runtime_join_free(rt);
}

/* ------------------------------------------------------------------------ */
/* Instances                                                                 */
/* ------------------------------------------------------------------------ */

xrt_instance* xla_ffi_deno_runtime_instance_new(void) {
  xrt_instance* in = calloc(1, sizeof *in);
  if (!in) return NULL;
  pthread_mutex_init(&in->mu, NULL);
  XRT_COUNT(XRT_STAT_INSTANCES_CREATED);
  return in;
}

/** Whether the instance holds a state of `stage` (instantiate 0, prepare 1,
 * initialize 2) (1) and its type id through *type_id. */
int32_t xla_ffi_deno_runtime_instance_state(xrt_instance* in, int32_t stage, int64_t* type_id) {
  if (stage < 0 || stage >= XRT_STATE_STAGES) return 0;
  pthread_mutex_lock(&in->mu);
  int has = in->states[stage].has;
  if (type_id) *type_id = in->states[stage].type_id;
  pthread_mutex_unlock(&in->mu);
  return has;
}

/** Runs the states' deleters (if any) and frees the instance. */
void xla_ffi_deno_runtime_instance_free(xrt_instance* in) {
  if (!in) return;
  for (int i = XRT_STATE_STAGES - 1; i >= 0; i--) {
    xrt_state* s = &in->states[i];
    if (!s->has) continue;
    if (s->deleter) s->deleter(s->state);
    XRT_COUNT(XRT_STAT_STATES_DELETED);
  }
  pthread_mutex_destroy(&in->mu);
  free(in);
  XRT_COUNT(XRT_STAT_INSTANCES_DESTROYED);
}
