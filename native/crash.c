/*
 * crash.c: the fatal-signal reporter. A segmentation fault (or bus error,
 * illegal instruction, arithmetic trap, abort) in a handler called
 * in-process ends the process; without this it ends it silently (exit 139).
 * With it installed (xla_ffi_deno_crash_install, once per process), a fatal
 * signal that arrives while a handler runs on the faulting thread first
 * writes one line to stderr:
 *
 *   deno-xla-ffi: handler 'fault_segv' of /path/libh.so died of SIGSEGV
 *   (segmentation fault at address 0x0): the process ends; ...how to contain it
 *
 * then the signal goes on to the handler installed before this one (V8's,
 * Deno's, Python's faulthandler, a sanitizer's), or, where there was none,
 * the default action ends the process with the same signal. A signal on a
 * thread where no handler runs is passed on untouched: V8 uses SIGSEGV for
 * its own ends (WebAssembly bounds checks).
 *
 * Which handler runs is the thread's slot (crash.h, one store before and
 * after a call); what it is called is looked up only when a signal arrives,
 * in a table the TS side fills (xla_ffi_deno_crash_describe) when it learns
 * a handler's name: HandlerLibrary.handler, Runtime.register, Xla.register,
 * a TS handler's creation, a Python module's handler (Xla.handlersFrom:
 * `where` is "python-module:" and the module's name). The signal handler
 * only reads memory and calls write(2), sigaction(2) and raise(3): it is
 * async-signal-safe.
 *
 * Real XLA calls registered handlers itself: Xla.register registers a
 * wrapper (xla_ffi_deno_crash_wrap, one of a fixed pool) that sets the slot
 * and calls the handler.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"

_Thread_local const void* xfd_running __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------------- */
/* Descriptions: handler pointer -> name and library                       */
/* ---------------------------------------------------------------------- */

#define DESC_CAP 4096
#define NAME_CAP 256
#define WHERE_CAP 512

typedef struct {
  _Atomic(const void*) fn;
  char name[NAME_CAP];   /* as printed, quotes included: 'my.op' (symbol fault_segv) */
  char where[WHERE_CAP]; /* the library's path; empty for a TS handler */
} crash_desc;

/* Entries are written in place (never freed), so a signal handler reading
 * one while another thread rewrites it sees at worst a mixed name. */
static crash_desc g_descs[DESC_CAP];
static _Atomic int32_t g_desc_count;
static pthread_mutex_t g_desc_mu = PTHREAD_MUTEX_INITIALIZER;

static void copy_text(char* dst, size_t cap, const char* src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = 0;
}

/*
 * What a crash in `fn` names: `name` as printed (quotes included) and
 * `where`, the path of its library ("" for a TS handler). A later
 * description of the same pointer replaces the earlier one. Returns 0, or -1
 * when the table is full (a crash in `fn` then names its address only).
 */
int32_t xla_ffi_deno_crash_describe(void* fn, const char* name, const char* where) {
  if (fn == NULL) return -1;
  pthread_mutex_lock(&g_desc_mu);
  int32_t n = atomic_load_explicit(&g_desc_count, memory_order_relaxed);
  int32_t i = 0;
  while (i < n && atomic_load_explicit(&g_descs[i].fn, memory_order_relaxed) != fn) i++;
  if (i == DESC_CAP) {
    pthread_mutex_unlock(&g_desc_mu);
    return -1;
  }
  copy_text(g_descs[i].name, NAME_CAP, name);
  copy_text(g_descs[i].where, WHERE_CAP, where);
  if (i == n) {
    atomic_store_explicit(&g_descs[i].fn, fn, memory_order_release);
    atomic_store_explicit(&g_desc_count, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&g_desc_mu);
  return 0;
}

static const crash_desc* find_desc(const void* fn) {
  int32_t n = atomic_load_explicit(&g_desc_count, memory_order_acquire);
  for (int32_t i = 0; i < n; i++)
    if (atomic_load_explicit(&g_descs[i].fn, memory_order_relaxed) == fn) return &g_descs[i];
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Wrappers for handlers real XLA calls                                    */
/* ---------------------------------------------------------------------- */

#define WRAP_COUNT 256

static _Atomic(XLA_FFI_Handler*) g_wrapped[WRAP_COUNT];

/* Puts the slot back (a cleanup: with -fexceptions, as the main library is
 * built, also when a C++ exception the handler throws unwinds through the
 * wrapper to XLA, which catches it). */
static void restore_running(const void** prev) { xfd_running = *prev; }

#ifdef __EXCEPTIONS
#define W1(n)                                                                         \
  static XLA_FFI_Error* wrap_##n(XLA_FFI_CallFrame* f) {                              \
    XLA_FFI_Handler* h = atomic_load_explicit(&g_wrapped[n], memory_order_relaxed);   \
    __attribute__((cleanup(restore_running))) const void* prev = xfd_running;         \
    xfd_running = (const void*)h;                                                     \
    return h(f);                                                                      \
  }
#else
/* Built without -fexceptions: a C++ exception the handler throws leaves the
 * slot naming it until the thread's next handler call. */
#define W1(n)                                                                         \
  static XLA_FFI_Error* wrap_##n(XLA_FFI_CallFrame* f) {                              \
    XLA_FFI_Handler* h = atomic_load_explicit(&g_wrapped[n], memory_order_relaxed);   \
    const void* prev = xfd_running;                                                   \
    xfd_running = (const void*)h;                                                     \
    XLA_FFI_Error* e = h(f);                                                          \
    restore_running(&prev);                                                           \
    return e;                                                                         \
  }
#endif
#define W2(n) W1(n##0) W1(n##1)
#define W4(n) W2(n##0) W2(n##1)
#define W8(n) W4(n##0) W4(n##1)
#define W16(n) W8(n##0) W8(n##1)
#define W32(n) W16(n##0) W16(n##1)
#define W64(n) W32(n##0) W32(n##1)
#define W128(n) W64(n##0) W64(n##1)
#define W256(n) W128(n##0) W128(n##1)

/* Binary literals as indices: 0b + 8 binary digits. */
W256(0b)

#define P1(n) wrap_##n,
#define P2(n) P1(n##0) P1(n##1)
#define P4(n) P2(n##0) P2(n##1)
#define P8(n) P4(n##0) P4(n##1)
#define P16(n) P8(n##0) P8(n##1)
#define P32(n) P16(n##0) P16(n##1)
#define P64(n) P32(n##0) P32(n##1)
#define P128(n) P64(n##0) P64(n##1)
#define P256(n) P128(n##0) P128(n##1)

static XLA_FFI_Handler* const g_wrappers[WRAP_COUNT] = {P256(0b)};

/*
 * A handler that calls `fn` with the thread's slot naming `fn`: what
 * Xla.register gives XLA for a C handler. The same `fn` gets the same
 * wrapper; wrappers are never released (XLA keeps registrations for good).
 * Returns `fn` itself when all wrappers are taken (its crashes are then not
 * named).
 */
void* xla_ffi_deno_crash_wrap(void* fn) {
  if (fn == NULL) return NULL;
  pthread_mutex_lock(&g_desc_mu);
  void* out = fn;
  for (int32_t i = 0; i < WRAP_COUNT; i++) {
    XLA_FFI_Handler* h = atomic_load_explicit(&g_wrapped[i], memory_order_relaxed);
    if (h == (XLA_FFI_Handler*)fn || h == NULL) {
      if (h == NULL) atomic_store_explicit(&g_wrapped[i], (XLA_FFI_Handler*)fn, memory_order_release);
      out = (void*)g_wrappers[i];
      break;
    }
  }
  pthread_mutex_unlock(&g_desc_mu);
  return out;
}

/* Whether `p` is one of the wrappers (tests). */
int32_t xla_ffi_deno_crash_is_wrapper(void* p) {
  for (int32_t i = 0; i < WRAP_COUNT; i++)
    if ((void*)g_wrappers[i] == p) return 1;
  return 0;
}

/* The calling thread's slot (tests: NULL between calls). */
void* xla_ffi_deno_crash_running(void) { return (void*)xfd_running; }

/* ---------------------------------------------------------------------- */
/* The signal handler                                                      */
/* ---------------------------------------------------------------------- */

static const int k_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NSIG_WATCHED ((int)(sizeof k_signals / sizeof k_signals[0]))
static struct sigaction g_old[NSIG_WATCHED];
static _Atomic int g_installed;
static _Atomic int g_reported;

/* A line built without allocating: text appended into a fixed buffer. */
typedef struct {
  char b[1536];
  size_t n;
} line_buf;

static void put(line_buf* l, const char* s) {
  while (*s && l->n < sizeof l->b - 1) l->b[l->n++] = *s++;
}

static void put_hex(line_buf* l, uintptr_t v) {
  char tmp[2 + 2 * sizeof v + 1];
  int i = (int)sizeof tmp - 1;
  tmp[i] = 0;
  do {
    tmp[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  tmp[--i] = 'x';
  tmp[--i] = '0';
  put(l, tmp + i);
}

static const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault";
    case SIGBUS: return "SIGBUS (bus error";
    case SIGILL: return "SIGILL (illegal instruction";
    case SIGFPE: return "SIGFPE (arithmetic exception";
    case SIGABRT: return "SIGABRT (aborted";
    default: return "a fatal signal (";
  }
}

/* The prefix of a description's `where` that names a Python module, not a library's path. */
#define PY_MODULE "python-module:"

static void report(int sig, const siginfo_t* si, const void* fn) {
  line_buf l = {.n = 0};
  const crash_desc* d = find_desc(fn);
  int ts = d != NULL && d->where[0] == 0;
  /* A Python extension module's handler (handlersFrom): `where` is PY_MODULE and its name. */
  const char* module = d != NULL && strncmp(d->where, PY_MODULE, sizeof PY_MODULE - 1) == 0
                           ? d->where + sizeof PY_MODULE - 1
                           : NULL;
  put(&l, "deno-xla-ffi: ");
  if (d == NULL) {
    put(&l, "the handler at ");
    put_hex(&l, (uintptr_t)fn);
  } else {
    put(&l, ts ? "TS handler " : "handler ");
    put(&l, d->name);
    if (module != NULL) {
      put(&l, " of the Python module ");
      put(&l, module);
    } else if (!ts) {
      put(&l, " of ");
      put(&l, d->where);
    }
  }
  put(&l, ", called in this process, died of ");
  put(&l, signal_name(sig));
  /* si_code > 0: raised by the kernel for an instruction; si_addr is the
   * faulting address (SEGV, BUS) or instruction (ILL, FPE). */
  if (sig != SIGABRT && si != NULL && si->si_code > 0) {
    put(&l, " at ");
    if (sig == SIGSEGV || sig == SIGBUS) put(&l, "address ");
    put_hex(&l, (uintptr_t)si->si_addr);
  }
  put(&l, "); the process ends. ");
  if (module != NULL) {
    /* Its shared object cannot be opened on its own (it needs the interpreter's symbols). */
    put(&l, "To make such a crash an error of the call, run the handler in a child process "
            "that hosts its module: cli run|fuzz --python-module ");
    put(&l, module);
    put(&l, ", or fuzzHandler(handler, { isolate: true }) (docs/faults.md)");
  } else if (ts) {
    put(&l, "A TS handler faults through a raw pointer (Deno.UnsafePointerView, "
            "Deno.UnsafePointer): check the addresses it reads and writes");
  } else if (d == NULL) {
    /* No library it came from: a Python extension module's handler (handlersFrom) or a raw
     * pointer. Isolation is for a shared library's exported handlers. */
    put(&l, "A handler that is not a shared library's export (a Python extension module's, "
            "a raw pointer) runs in the process that calls it: to survive its crashes, make "
            "the calls that may crash from a child process (docs/faults.md); a shared "
            "library's handler is isolated with HandlerLibrary.open(path, { isolate: true })");
  } else {
    put(&l, "To make such a crash an error of the call, open its library with "
            "HandlerLibrary.open(path, { isolate: true }) (docs/faults.md)");
  }
  l.b[l.n++] = '\n';
  const char* p = l.b;
  size_t left = l.n;
  while (left > 0) {
    ssize_t w = write(STDERR_FILENO, p, left);
    if (w <= 0) break;
    p += w;
    left -= (size_t)w;
  }
}

/* Hands the signal to what was installed before: its function, or the
 * default action (restored, and the signal raised again: it is blocked
 * until this handler returns, then ends the process with the same signal). */
static void chain(int i, int sig, siginfo_t* si, void* uc) {
  const struct sigaction* old = &g_old[i];
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction != NULL) old->sa_sigaction(sig, si, uc);
    return;
  }
  if (old->sa_handler == SIG_IGN && si != NULL && si->si_code <= 0) return; /* sent, ignored */
  if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    return;
  }
  old->sa_handler(sig);
}

static void on_fatal(int sig, siginfo_t* si, void* uc) {
  int i = 0;
  while (i < NSIG_WATCHED && k_signals[i] != sig) i++;
  if (i == NSIG_WATCHED) return;
  const void* fn = xfd_running;
  if (fn != NULL && atomic_exchange(&g_reported, 1) == 0) report(sig, si, fn);
  chain(i, sig, si, uc);
}

/*
 * Installs the reporter for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT,
 * chained to the handlers installed now. Once per process; later calls do
 * nothing. Returns the number of signals it watches.
 */
int32_t xla_ffi_deno_crash_install(void) {
  if (atomic_exchange(&g_installed, 1)) return NSIG_WATCHED;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  int32_t n = 0;
  for (int i = 0; i < NSIG_WATCHED; i++) {
    /* The old action is read first, so that it is in place before our
     * handler can run. */
    if (sigaction(k_signals[i], NULL, &g_old[i]) != 0) continue;
    if (sigaction(k_signals[i], &sa, NULL) == 0) n++;
  }
  return n;
}
