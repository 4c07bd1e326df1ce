/*
 * handler.c: a fixed pool of XLA_FFI_Handler entry points that forward calls
 * to TypeScript handlers: the TS handler host, what any XLA runtime loads.
 *
 * Each slot answers the metadata query in C, checks the frame size and stage
 * as ffi.h does, then hands the call to JavaScript:
 *   - on the JS thread: flattens the frame into the shared flat buffer and
 *     calls the inline callback (no thread hop);
 *   - on another thread, synchronous slot: queues the call for the JS thread
 *     and waits for its result (handler_queue.c);
 *   - on another thread, async slot: creates the future with the caller's
 *     Future_Create, queues the call and returns at once; the future
 *     completes when the JS Promise settles (handler_future.c).
 * Errors are always created with the calling runtime's Error_Create.
 *
 * The host knows nothing of the embedded runtime: a runtime in the same
 * library installs hooks (handler_host.h) and may call the host's public
 * functions, never the reverse.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crash.h"
#include "fp_mode.h"
#include "handler_internal.h"


typedef int32_t (*inline_cb_t)(int32_t slot);

/* The host's state, shared by its files (handler_internal.h). */
slot_config g_slots[SLOT_COUNT];
pthread_t g_js_thread;
_Atomic int g_js_thread_set;
int64_t* g_flat;
int64_t g_flat_cap;
uint8_t* g_msg;
uint8_t* g_aux;
_Atomic(const xla_ffi_deno_host_hooks*) g_hooks;
static _Atomic(inline_cb_t) g_inline_cb;

/* A runtime's hooks (handler_host.h): read on every call, installed once. */
int32_t xla_ffi_deno_host_install(const xla_ffi_deno_host_hooks* hooks) {
  if (hooks != NULL && hooks->struct_size < sizeof(xla_ffi_deno_host_hooks)) return -1;
  atomic_store_explicit(&g_hooks, hooks, memory_order_release);
  return 0;
}

/*
 * Benchmarks only, in a library built with -DXFD_PHASES (bench/handler_speed.ts
 * builds one for its per-phase breakdown): calls on the JS thread stop after a
 * phase and return success. 0: never (the normal case); 1: after the entry's
 * own checks (size, stage, slot); 2: after the frame check and flatten; higher
 * phases are TS's (host.ts _phaseStop). Without the flag the entry point has
 * no such check and this returns -1.
 */
#ifdef XFD_PHASES
static _Atomic int32_t g_phase_stop;
#define PHASE_STOP(n) \
  if (atomic_load_explicit(&g_phase_stop, memory_order_relaxed) == (n)) return NULL
#else
#define PHASE_STOP(n) ((void)0)
#endif

int32_t xla_ffi_deno_handler_phase_stop(int32_t phase) {
#ifdef XFD_PHASES
  return atomic_exchange(&g_phase_stop, phase);
#else
  (void)phase;
  return -1;
#endif
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
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  XLA_FFI_Metadata* m = ext->metadata;
  if (m == NULL || m->struct_size < XLA_FFI_Metadata_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "Unexpected XLA_FFI_Metadata size: expected at least %zu got %zu. "
             "Check installed software versions.",
             (size_t)XLA_FFI_Metadata_STRUCT_SIZE, m ? m->struct_size : (size_t)0);
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  /* A handler whose version was not chosen speaks the newest version both
   * sides know: its own, or the caller's when that is older (a jaxlib of 0.3
   * refuses a 0.4 handler at registration). Callers before 0.2 pass no api
   * (and take only their own version): the bound version stands there. */
  int32_t minor = s->minor;
  if (s->follow && s->major == 0 && f->api != NULL && f->api->api_version.major_version == 0) {
    int32_t caller = f->api->api_version.minor_version;
    if (caller >= 2 && caller < minor) minor = caller;
  }
  m->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  m->api_version.extension_start = NULL;
  m->api_version.major_version = s->major;
  m->api_version.minor_version = minor;
  m->traits = s->traits;
  if (s->major > 0 || s->minor >= 2) ((XLA_FFI_Metadata_V0_2*)m)->state_type_id.type_id = 0;
  return NULL;
}

/* The entry points (below): slot n's is what the crash slot names. */
static XLA_FFI_Handler* const g_entries[SLOT_COUNT];

static XLA_FFI_Error* slot_entry(int32_t n, XLA_FFI_CallFrame* f) {
  if (f == NULL) {
    xfd_warn("deno-xla-ffi: TS handler entry point %d called with a null call frame", (int)n);
    return NULL; /* no api to create an error with */
  }
  slot_config* s = &g_slots[n];
  char buf[512];
  if (f->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE) {
    snprintf(buf, sizeof buf,
             "Unexpected XLA_FFI_CallFrame size: expected %zu got %zu. "
             "Check installed software versions.",
             (size_t)XLA_FFI_CallFrame_STRUCT_SIZE, f->struct_size);
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  int live = atomic_load(&s->in_use);
  if (f->extension_start != NULL && f->extension_start->type == XLA_FFI_Extension_Metadata) {
    if (live) return answer_metadata(s, f);
  }
  /* Without an api (XLA's metadata query has none) no XLA_FFI_Error can be
   * made: the call is refused with a warning instead. */
  if (f->api == NULL) {
    xfd_warn("deno-xla-ffi: TS handler entry point %d called with a call frame without an api; "
             "not called", (int)n);
    return NULL;
  }
  if (!live) {
    snprintf(buf, sizeof buf, "TS handler entry point %d was released", (int)n);
    return host_make_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, buf);
  }
  if ((int32_t)f->stage != s->stage) {
    snprintf(buf, sizeof buf, "Wrong execution stage: expected `%s` but got `%s`",
             stage_name(s->stage), stage_name((int32_t)f->stage));
    return host_make_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, buf);
  }
  if (atomic_load(&g_js_thread_set) && pthread_equal(pthread_self(), g_js_thread)) {
    PHASE_STOP(1);
    /* The frame is checked and flattened in one walk. */
    int32_t code;
    int32_t used = xla_ffi_deno_handler_check_flatten(f, g_flat, g_flat_cap, buf, sizeof buf, &code);
    if (used < 0) {
      if (code) return host_make_error(f->api, code, buf);
      return host_make_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                        "The call frame is too large for the TS handler flat buffer");
    }
    inline_cb_t cb = atomic_load(&g_inline_cb);
    if (cb == NULL) return host_finish(f, -1, 0, "", 0);
    PHASE_STOP(2);
    /* The JS thread runs JS now (only this thread writes g_js_blocked). */
    int64_t blocked = atomic_load_explicit(&g_js_blocked, memory_order_relaxed);
    /* XLA runs this program inline on the JS thread (its caller runs here): a
     * pending future would be waited for on this thread, where the Promise
     * can never settle (xla/ffi/ffi_api.cc: Call passes the frame's future
     * to BlockUntilReady, tsl::BlockUntilReady on the calling thread; through
     * CallAsync the program completes only with the future, and the caller
     * that runs XLA on this thread waits for its result).
     * An async handler is refused before it runs: once the call failed, XLA
     * frees its buffers, which the rest of the handler would write (ffi_api.cc:
     * a handler that returns an error must not launch asynchronous work). */
    int xla_inline = blocked && atomic_load_explicit(&g_js_block_kind, memory_order_relaxed) ==
                                    XFD_JS_BLOCK_XLA_INLINE;
    if (xla_inline && s->async) return host_refuse_pending(f, 0);
    if (blocked) atomic_store(&g_js_blocked, 0);
    XFD_RUNNING_ENTER(g_entries[n]);
    /* JavaScript's arithmetic is IEEE 754's: a TS handler XLA calls inline
     * runs with denormals kept and rounding to nearest, as it does from any
     * other thread (XLA's CPU client flushes denormals on its threads and
     * around an inline execute: xla/pjrt/cpu/cpu_client.cc, execute_thunks,
     * tsl::port::ScopedFlushDenormal). The caller's mode is restored after. */
    xfd_fp_mode saved = xfd_fp_enter_js();
    int32_t status = cb(n);
    xfd_fp_leave(saved);
    XFD_RUNNING_LEAVE();
    if (blocked) atomic_store(&g_js_blocked, blocked);
    if (status == 2 && xla_inline) return host_refuse_pending(f, ((const int32_t*)g_flat)[XFD_FLAT_TOKEN]);
    const int32_t* h = (const int32_t*)g_flat;
    if (status == 1) {
      char msg[MSG_CAP];
      host_copy_message(msg);
      return host_finish(f, 1, h[XFD_FLAT_CODE], msg, 0);
    }
    if (status == 0) return NULL;
    return host_finish(f, status, h[XFD_FLAT_CODE], "", h[XFD_FLAT_TOKEN]);
  }
  /* Checked on the calling thread, before any future or queued job exists
   * (a synchronous call checks and flattens its frame in one walk there). */
  if (!s->async) return host_call_sync_foreign(n, f);
  int32_t bad = xla_ffi_deno_handler_check_frame(f, buf, sizeof buf);
  if (bad) return host_make_error(f->api, bad, buf);
  return host_call_async_foreign(n, f);
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
    /* async: bit 0 asynchronous; bits 1-29 how long (ns) a caller on another
     * thread waits for the handler's Promise to settle (the settled-early
     * path); bit 30: the version was not chosen (answer_metadata). */
    s->async = async & 1;
    s->settle_ns = (async & 0x3fffffff) >> 1;
    s->follow = (async >> 30) & 1;
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

/* The span of code the entry points take (computed once; racing threads compute the same). */
static _Atomic uintptr_t g_entry_lo, g_entry_hi;

/* Whether `h` lies within the entry points' code: a TS handler's entry point (the
 * compiler lays them out together; nothing else there is ever a handler). One
 * comparison a call, for the runtime's choice of floating-point mode. */
int32_t xla_ffi_deno_handler_is_entry(const void* h) {
  uintptr_t lo = atomic_load_explicit(&g_entry_lo, memory_order_relaxed);
  uintptr_t hi = atomic_load_explicit(&g_entry_hi, memory_order_relaxed);
  if (hi == 0) {
    lo = UINTPTR_MAX;
    for (int32_t i = 0; i < SLOT_COUNT; i++) {
      uintptr_t a = (uintptr_t)g_entries[i];
      if (a < lo) lo = a;
      if (a > hi) hi = a;
    }
    atomic_store_explicit(&g_entry_lo, lo, memory_order_relaxed);
    atomic_store_explicit(&g_entry_hi, hi, memory_order_relaxed);
  }
  uintptr_t a = (uintptr_t)h;
  return a >= lo && a <= hi;
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
