/*
 * isolate_child.c: the process an isolated handler library runs in.
 *
 *   xla_ffi_deno_isolate <main library> <handler library> <exception guard library or ->
 *
 * Loads the module's main library (the embedded runtime) and the handler
 * library, then serves calls (isolate_protocol.h) until its socket closes.
 * With XLA_FFI_DENO_ISOLATE_PYTHON set (a libpython), the handlers are a
 * Python extension module's instead (`handlersFrom`, isolated): the process
 * hosts that Python through the main library's python_host.c, runs the
 * Python text of XLA_FFI_DENO_ISOLATE_PYTHON_BOOT (it imports the module,
 * calls its initializer and reads its registrations()), and its handlers
 * are looked up by their registered names in the table that text answers
 * (`name<TAB>address` lines); the handler library argument then only names
 * the module in messages.
 * Operands live in the shared mapping, so results land where the parent
 * reads them. For a guarded call the arguments' pages are made read-only
 * and the page before and after every operand inaccessible, in this process
 * only (the parent lays each operand out with pages of its own around it): a
 * write there faults at once, the fault handler records the operand and the
 * byte offset from its first byte (negative before it) in the shared header,
 * and the process dies of the signal as it would have. The protections stay
 * while the next requests are guarded calls with the same operand layout
 * (the parent writes their arguments through its own mapping).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "isolate_protocol.h"
#include "xla_ffi.h"

/* The main library's entry points this process uses (runtime.c, runtime_frame.c). */
static void* (*rt_new)(int32_t platform, int32_t threads, int32_t minor);
static void* (*frame_build)(const uint8_t* desc, int32_t len);
static void (*frame_configure)(void* fr, int32_t stage, int64_t run_id, int32_t ordinal,
                               void* instance, const int64_t* user, int32_t n_user);
static void (*frame_free)(void* fr);
/* xla_ffi_deno_runtime_call in mode 0 (XRT_CALL_SYNC of runtime_internal.h): returns 1 with
 * the call's error in out[0] when it failed, else 0. */
static int32_t (*call_here)(int32_t mode, void* rt, XLA_FFI_Handler* h, void* fr, void** out);
static void* (*call_new)(void* rt, const void* fr);
/* xla_ffi_deno_runtime_call_wait: threads 0 is one call on this thread; the eight arrays are
 * Deno's to keep alive (none here). */
static XLA_FFI_Error* (*call_wait)(void* c, XLA_FFI_Handler* h, int32_t threads,
                                   int64_t iterations, int64_t* out, char* msg, int32_t cap,
                                   void* b0, void* b1, void* b2, void* b3, void* b4, void* b5,
                                   void* b6, void* b7);
static int32_t (*error_code)(XLA_FFI_Error* e);
static const char* (*error_message)(XLA_FFI_Error* e);
static void (*error_destroy)(XLA_FFI_Error* e);
static void (*set_invoke_guard)(void* fn);
static XLA_FFI_Error* (*metadata_of)(void* rt, XLA_FFI_Handler* h, int64_t* out);
static void* (*instance_new)(void);
static void (*instance_free)(void* in);
static XLA_FFI_Error* (*register_type)(void* rt, const char* name, int64_t len, void* type_id,
                                       void* deleter);

/* The one instance calls with XISO_INSTANCE_* share, and the state types registered (by
 * their type id functions), registered again in each runtime made later. */
static void* g_instance;
#define MAX_TYPES 32
static struct {
  void* type_id;
  void* deleter;
  char name[256];
} g_types[MAX_TYPES];
static int g_n_types;

/* A Python module's handlers (XLA_FFI_DENO_ISOLATE_PYTHON): registered name -> address. */
#define MAX_PY_HANDLERS 1024
static int g_python;
static int g_n_py;
static struct {
  char name[256];
  void* fn;
} * g_py;

static uint8_t* g_base;
static size_t g_size;
static void* g_runtimes[8]; /* by API minor */
static size_t g_page;

/* Guarded ranges of the last guarded call (read by the fault handler): up to
 * three per operand (the page before, read-only argument pages, the page
 * after). They stay protected until a request needs other ones (or none).
 * The array only grows while none is armed. */
typedef struct {
  uintptr_t lo, hi;  /* the protected range */
  uintptr_t start;   /* the operand's first byte */
  uint32_t kind, index;
  int prot;
} guarded;
static guarded* g_guarded;
static size_t g_cap_guarded;
static volatile sig_atomic_t g_n_guarded;
static struct sigaction g_old_segv, g_old_bus;

static xiso_header* header(void) { return (xiso_header*)g_base; }
/* The wake-up words (the mapping moves when it grows: read g_base each time). */
static xiso_sync* sync_page(void) { return (xiso_sync*)(g_base + XISO_SYNC_OFFSET); }

/* How long the child spins for the next request after an answer before it
 * sleeps on the futex (a caller calling in a loop posts it within a few
 * microseconds), and the bound of one sleep, after which it checks that the
 * parent still holds the socket. */
#define XISO_CHILD_SPIN_NS 6000
#define XISO_IDLE_SLICE_NS 250000000

/* The next request after `seen` (0: the parent is gone, or closes the library). */
static uint32_t next_request(uint32_t seen) {
  for (;;) {
    xiso_sync* s = sync_page();
    uint32_t v = xiso_spin(&s->request, seen, XISO_CHILD_SPIN_NS);
    if (v == seen) v = xiso_sleep(&s->request, seen, &s->child_sleeping, XISO_IDLE_SLICE_NS);
    if (v != seen) return __atomic_load_n(&s->closing, __ATOMIC_ACQUIRE) ? 0 : v;
    /* The parent writes nothing on the socket: readable means it closed it. */
    struct pollfd p = {XISO_FD_SOCKET, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) return 0;
  }
}

static void say(int32_t status, int32_t code, const char* fmt, ...) {
  xiso_header* h = header();
  h->status = status;
  h->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->message, sizeof h->message, fmt, ap);
  va_end(ap);
}

static void take_error(XLA_FFI_Error* e) {
  if (!e) {
    say(XISO_OK, 0, "%s", "");
    return;
  }
  say(XISO_ERROR, error_code(e), "%s", error_message(e));
  error_destroy(e);
}

/* A handler by name: the library's symbol, or the Python module's registered handler. */
static void* find_handler(void* lib, const char* name) {
  if (!g_python) return dlsym(lib, name);
  for (int i = 0; i < g_n_py; i++)
    if (strcmp(g_py[i].name, name) == 0) return g_py[i].fn;
  return NULL;
}

/*
 * Hosts Python (libpython `path`, home XLA_FFI_DENO_ISOLATE_PYTHON_HOME) with the main
 * library's python_host.c, runs the boot text and reads its table of handlers. Returns 1, or
 * 0 with the reason said in the header.
 */
static int host_python(void* main_lib, const char* path) {
  int32_t (*py_init)(const char*, const char*, uint8_t*, int64_t);
  int32_t (*py_run)(int32_t, const uint8_t*, int64_t, uint8_t*, int64_t);
  *(void**)(&py_init) = dlsym(main_lib, "xla_ffi_deno_py_init");
  *(void**)(&py_run) = dlsym(main_lib, "xla_ffi_deno_py_run");
  const char* home = getenv("XLA_FFI_DENO_ISOLATE_PYTHON_HOME");
  const char* boot = getenv("XLA_FFI_DENO_ISOLATE_PYTHON_BOOT");
  if (!py_init || !py_run || !boot) {
    say(XISO_ERROR, XLA_FFI_Error_Code_INTERNAL, "%s",
        !boot ? "XLA_FFI_DENO_ISOLATE_PYTHON_BOOT is not set"
              : "The main library hosts no Python (xla_ffi_deno_py_init)");
    return 0;
  }
  size_t cap = 1 << 20;
  uint8_t* reply = calloc(1, cap);
  g_py = calloc(MAX_PY_HANDLERS, sizeof *g_py);
  if (!reply || !g_py) {
    say(XISO_ERROR, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
    return 0;
  }
  /* Reply: int32 status (0 ok), uint32 length, then the text at byte 16. */
  int32_t rc = py_init(path, home ? home : "", reply, (int64_t)cap);
  if (rc >= 0) rc = py_run(0, (const uint8_t*)boot, (int64_t)strlen(boot), reply, (int64_t)cap);
  if (rc >= 0) rc = py_run(1, NULL, 0, reply, (int64_t)cap);
  int32_t status;
  uint32_t len;
  memcpy(&status, reply, 4);
  memcpy(&len, reply + 4, 4);
  if (len > cap - 17) len = (uint32_t)(cap - 17);
  char* text = (char*)reply + 16;
  text[len] = 0;
  if (rc < 0 || status != 0) {
    /* A module that is not there, or an initializer that failed: the text says which. */
    say(XISO_ERROR, rc < 0 ? XLA_FFI_Error_Code_UNAVAILABLE : XLA_FFI_Error_Code_NOT_FOUND, "%s",
        text);
    free(reply);
    return 0;
  }
  for (char* line = text; line && *line && g_n_py < MAX_PY_HANDLERS;) {
    char* end = strchr(line, '\n');
    if (end) *end = 0;
    char* tab = strchr(line, '\t');
    if (tab) {
      *tab = 0;
      snprintf(g_py[g_n_py].name, sizeof g_py[g_n_py].name, "%s", line);
      g_py[g_n_py].fn = (void*)(uintptr_t)strtoull(tab + 1, NULL, 10);
      if (g_py[g_n_py].fn) g_n_py++;
    }
    line = end ? end + 1 : NULL;
  }
  free(reply);
  g_python = 1;
  return 1;
}

/* SIGSEGV/SIGBUS: a write into a guarded range is recorded, then the signal
 * takes its course (the previous action: the default, or a sanitizer's). */
static void on_fault(int sig, siginfo_t* info, void* uc) {
  (void)uc;
  uintptr_t a = (uintptr_t)info->si_addr;
  for (sig_atomic_t i = 0; i < g_n_guarded; i++) {
    const guarded* g = &g_guarded[i];
    if (a >= g->lo && a < g->hi) {
      xiso_header* h = header();
      h->fault_kind = g->kind == 1 ? XISO_FAULT_RESULT : XISO_FAULT_ARGUMENT;
      h->fault_index = (int32_t)g->index;
      h->fault_offset = (int64_t)a - (int64_t)g->start;
      h->status = XISO_FAULT;
      break;
    }
  }
  sigaction(sig, sig == SIGBUS ? &g_old_bus : &g_old_segv, NULL);
  /* A fault re-runs the instruction under the restored action; a sent signal does not. */
  if (info->si_code <= 0) raise(sig);
}

static int map_to(size_t size) {
  if (size <= g_size) return 1;
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, XISO_FD_MEMORY, 0);
  if (p == MAP_FAILED) return 0;
  /* The old mapping takes its protections with it. */
  g_n_guarded = 0;
  if (g_base) munmap(g_base, g_size);
  g_base = p;
  g_size = size;
  return 1;
}

static void* runtime_for(int32_t minor) {
  if (minor < 0 || minor >= 8) return NULL;
  if (!g_runtimes[minor]) {
    g_runtimes[minor] = rt_new(0, 1, minor);
    for (int i = 0; g_runtimes[minor] && i < g_n_types; i++) {
      XLA_FFI_Error* e = register_type(g_runtimes[minor], g_types[i].name,
                                       (int64_t)strlen(g_types[i].name), g_types[i].type_id,
                                       g_types[i].deleter);
      if (e) error_destroy(e);
    }
  }
  return g_runtimes[minor];
}

/* Points the description's buffer addresses (offsets into the mapping, -1
 * for none) at this process's mapping. */
static int patch_description(uint8_t* d, size_t len) {
  if (len < 8) return 0;
  uint32_t counts[2];
  memcpy(counts, d, 8);
  size_t off = 8;
  for (uint64_t i = 0; i < (uint64_t)counts[0] + counts[1]; i++) {
    if (off + 16 > len) return 0;
    uint32_t rank;
    memcpy(&rank, d + off + 4, 4);
    double rel;
    memcpy(&rel, d + off + 8, 8);
    double abs = rel < 0 ? 0 : (double)(uintptr_t)(g_base + (uint64_t)rel);
    memcpy(d + off + 8, &abs, 8);
    off += 16 + 8 * (size_t)rank;
  }
  return off <= len;
}

static uintptr_t page_down(uintptr_t a) { return a & ~(uintptr_t)(g_page - 1); }
static uintptr_t page_up(uintptr_t a) { return page_down(a + g_page - 1); }

/* Records [lo, hi) of an operand, to be protected with `prot`. */
static int record(uintptr_t lo, uintptr_t hi, int prot, uintptr_t start, const xiso_operand* op) {
  if (lo < (uintptr_t)(g_base + XISO_HEADER_BYTES) || hi > (uintptr_t)(g_base + g_size)) return 0;
  g_guarded[g_n_guarded] = (guarded){lo, hi, start, op->kind, op->index, prot};
  g_n_guarded = g_n_guarded + 1;
  return 1;
}

/* An inaccessible page before and after every operand, read-only arguments.
 * Neighbouring ranges with one protection (the page after an operand and the
 * page before the next) take one mprotect; each keeps its own record, so a
 * fault names the operand its page belongs to. */
static int guard_on(const xiso_header* h) {
  const xiso_operand* ops = (const xiso_operand*)(g_base + h->ops_offset);
  if ((size_t)h->n_ops * 3 > g_cap_guarded) {
    guarded* grown = realloc(g_guarded, sizeof(guarded) * 3 * (size_t)h->n_ops);
    if (!grown) return 0;
    g_guarded = grown;
    g_cap_guarded = 3 * (size_t)h->n_ops;
  }
  g_n_guarded = 0;
  for (uint32_t i = 0; i < h->n_ops; i++) {
    /* A zero-sized operand has an address too, between inaccessible pages:
     * any access through it faults, and names it. */
    uintptr_t start = (uintptr_t)(g_base + ops[i].offset);
    uintptr_t first = page_down(start), last = page_up(start + ops[i].size);
    if (!record(first - g_page, first, PROT_NONE, start, &ops[i])) return 0;
    if (ops[i].kind == 0 && last > first && !record(first, last, PROT_READ, start, &ops[i]))
      return 0;
    if (!record(last, last + g_page, PROT_NONE, start, &ops[i])) return 0;
  }
  int n = g_n_guarded;
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && g_guarded[j].lo == g_guarded[j - 1].hi && g_guarded[j].prot == g_guarded[i].prot)
      j++;
    if (mprotect((void*)g_guarded[i].lo, g_guarded[j - 1].hi - g_guarded[i].lo, g_guarded[i].prot))
      return 0;
    i = j;
  }
  return 1;
}

/* The operand table the protections in place were made for (guard_on's
 * input, copied: the handler can write into the shared page). */
static xiso_operand* g_armed;
static size_t g_cap_armed;
static uint32_t g_n_armed;

/* Whether the protections in place are those request `h` asks for: then they
 * stay (the parent writes the next call's arguments through its own mapping,
 * which has none), and a run of guarded calls with one frame pays no mprotect. */
static int guard_same(const xiso_header* h) {
  if (g_n_guarded == 0 || h->n_ops != g_n_armed || h->ops_offset > g_size ||
      (uint64_t)h->n_ops * sizeof(xiso_operand) > g_size - h->ops_offset)
    return 0;
  if (memcmp(g_armed, g_base + h->ops_offset, sizeof(xiso_operand) * h->n_ops) != 0) return 0;
  /* The description (which this process patches) clear of them. */
  uintptr_t lo = (uintptr_t)(g_base + h->desc_offset), hi = lo + h->desc_length;
  for (sig_atomic_t i = 0; i < g_n_guarded; i++)
    if (lo < g_guarded[i].hi && g_guarded[i].lo < hi) return 0;
  return 1;
}

/* Remembers the operand table guard_on protected. */
static void guard_keep(const xiso_header* h) {
  if (h->n_ops > g_cap_armed) {
    xiso_operand* grown = realloc(g_armed, sizeof(xiso_operand) * h->n_ops);
    if (!grown) {
      g_n_armed = 0;
      return;
    }
    g_armed = grown;
    g_cap_armed = h->n_ops;
  }
  memcpy(g_armed, g_base + h->ops_offset, sizeof(xiso_operand) * h->n_ops);
  g_n_armed = h->n_ops;
}

/* Everything guard_on protected is read-write again: one mprotect over the
 * span from the first range to the last. */
static void guard_off(void) {
  int n = g_n_guarded;
  g_n_guarded = 0;
  if (n == 0) return;
  uintptr_t lo = g_guarded[0].lo, hi = g_guarded[0].hi;
  for (int i = 1; i < n; i++) {
    if (g_guarded[i].lo < lo) lo = g_guarded[i].lo;
    if (g_guarded[i].hi > hi) hi = g_guarded[i].hi;
  }
  mprotect((void*)lo, hi - lo, PROT_READ | PROT_WRITE);
}

static void serve(void* lib) {
  xiso_header* h = header();
  h->status = XISO_OK;
  h->code = 0;
  h->message[0] = '\0';
  h->fault_kind = 0;
  if (h->op == XISO_OP_RESOLVE) {
    h->symbol[sizeof h->symbol - 1] = '\0';
    dlerror();
    if (!find_handler(lib, h->symbol)) {
      const char* e = g_python ? "the module registers no such handler" : dlerror();
      say(XISO_ERROR, XLA_FFI_Error_Code_NOT_FOUND, "%s", e ? e : "no such symbol");
    }
    return;
  }
  void* rt = runtime_for(h->minor);
  if (!rt) {
    say(XISO_ERROR, XLA_FFI_Error_Code_INVALID_ARGUMENT, "Unsupported API version 0.%d",
        (int)h->minor);
    return;
  }
  h->symbol[sizeof h->symbol - 1] = '\0';
  if (h->op == XISO_OP_REGISTER_TYPE && g_python) {
    say(XISO_ERROR, XLA_FFI_Error_Code_UNIMPLEMENTED,
        "State types by type id function ('%s') are a shared library's; a Python module's "
        "handlers register none here",
        h->symbol);
    return;
  }
  XLA_FFI_Handler* fn = (XLA_FFI_Handler*)find_handler(lib, h->symbol);
  if (!fn) {
    say(XISO_ERROR, XLA_FFI_Error_Code_NOT_FOUND, "Symbol '%s' not found", h->symbol);
    return;
  }
  if (h->op == XISO_OP_METADATA) {
    take_error(metadata_of(rt, fn, h->metadata));
    return;
  }
  if (h->op == XISO_OP_REGISTER_TYPE) {
    /* fn is the type id function: XLA_FFI_TypeId* NAME_type_id(void). */
    if (g_n_types >= MAX_TYPES) {
      say(XISO_ERROR, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "More than %d state types",
          MAX_TYPES);
      return;
    }
    void* type_id = ((void* (*)(void))(void*)fn)();
    size_t n = strlen(h->symbol);
    const char* suffix = "_type_id";
    size_t stem = n > 8 && strcmp(h->symbol + n - 8, suffix) == 0 ? n - 8 : n;
    char info_name[280];
    snprintf(info_name, sizeof info_name, "%.*s_type_info", (int)stem, h->symbol);
    void* info_fn = dlsym(lib, info_name);
    void* deleter = NULL;
    if (info_fn) {
      const XLA_FFI_TypeInfo_V0_2* info = ((const XLA_FFI_TypeInfo_V0_2* (*)(void))info_fn)();
      if (info) deleter = (void*)info->deleter;
    }
    int k = g_n_types++;
    g_types[k].type_id = type_id;
    g_types[k].deleter = deleter;
    snprintf(g_types[k].name, sizeof g_types[k].name, "%.*s", (int)stem, h->symbol);
    for (int m = 0; m < 8; m++) {
      if (!g_runtimes[m]) continue;
      XLA_FFI_Error* e = register_type(g_runtimes[m], g_types[k].name,
                                       (int64_t)strlen(g_types[k].name), type_id, deleter);
      if (e) {
        take_error(e);
        return;
      }
    }
    return;
  }
  /* A guarded call keeps the protections of the one before when they are
   * the ones it needs; anything else starts from none (before the
   * description is patched in place: it may lie where they are). */
  if (!h->guard || !guard_same(h)) guard_off();
  if (h->desc_offset + h->desc_length > g_size || h->desc_length > INT32_MAX ||
      !patch_description(g_base + h->desc_offset, h->desc_length)) {
    say(XISO_ERROR, XLA_FFI_Error_Code_INVALID_ARGUMENT, "Malformed call frame description");
    return;
  }
  void* fr = frame_build(g_base + h->desc_offset, (int32_t)h->desc_length);
  if (!fr) {
    say(XISO_ERROR, XLA_FFI_Error_Code_INVALID_ARGUMENT, "Laying out the call frame failed");
    return;
  }
  if (h->instance & XISO_INSTANCE_FRESH) {
    if (g_instance) instance_free(g_instance);
    g_instance = NULL;
  }
  if (h->instance && !g_instance) g_instance = instance_new();
  frame_configure(fr, h->stage, h->run_id, h->device_ordinal, h->instance ? g_instance : NULL,
                  NULL, 0);
  if (h->guard && g_n_guarded == 0) {
    if (!guard_on(h)) {
      guard_off();
      frame_free(fr);
      say(XISO_ERROR, XLA_FFI_Error_Code_INTERNAL, "Protecting the guarded operands failed: %s",
          strerror(errno));
      return;
    }
    guard_keep(h);
  }
  if (h->op == XISO_OP_CALL_SYNC) {
    void* out[1] = {NULL};
    take_error(call_here(0, rt, fn, fr, out) == 1 ? out[0] : NULL);
  } else if (h->op == XISO_OP_CALL) {
    void* c = call_new(rt, fr);
    if (!c)
      say(XISO_ERROR, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
    else
      take_error(call_wait(c, fn, 0, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                           NULL));
  } else if (h->op == XISO_OP_THREADS) {
    void* c = call_new(rt, fr);
    int64_t out[3] = {0, 0, 0};
    XLA_FFI_Error* e = NULL;
    if (!c) {
      say(XISO_ERROR, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Out of memory");
    } else if ((e = call_wait(c, fn, h->threads, h->iterations, out, h->message,
                              (int32_t)sizeof h->message, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL)) != NULL) {
      take_error(e);
    } else {
      h->ok = out[0];
      h->failed = out[1];
      h->code = (int32_t)out[2];
    }
  } else {
    say(XISO_ERROR, XLA_FFI_Error_Code_INVALID_ARGUMENT, "Unknown request %u", h->op);
  }
  frame_free(fr);
}

#define RESOLVE(var, name)                                  \
  do {                                                      \
    *(void**)(&var) = dlsym(main_lib, name);                \
    if (!var) {                                             \
      fprintf(stderr, "xla_ffi_deno_isolate: %s has no %s\n", argv[1], name); \
      return 2;                                             \
    }                                                       \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: xla_ffi_deno_isolate <main library> <handler library> <guard library>\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  /* Kept output (IsolateOptions.output): what handlers print to stdout joins stderr's pipe. */
  const char* out = getenv("XLA_FFI_DENO_ISOLATE_OUTPUT");
  if (out && strcmp(out, "keep") == 0) dup2(2, 1);
  g_page = (size_t)sysconf(_SC_PAGESIZE);
  if (!map_to(XISO_HEADER_BYTES)) {
    fprintf(stderr, "xla_ffi_deno_isolate: cannot map the shared memory: %s\n", strerror(errno));
    return 2;
  }
  void* main_lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!main_lib) {
    say(XISO_ERROR, XLA_FFI_Error_Code_UNAVAILABLE, "Cannot load %s: %s", argv[1], dlerror());
  } else {
    RESOLVE(rt_new, "xla_ffi_deno_runtime_new");
    RESOLVE(frame_build, "xla_ffi_deno_runtime_frame_build");
    RESOLVE(frame_configure, "xla_ffi_deno_runtime_frame_configure");
    RESOLVE(frame_free, "xla_ffi_deno_runtime_frame_free");
    RESOLVE(call_here, "xla_ffi_deno_runtime_call");
    RESOLVE(call_new, "xla_ffi_deno_runtime_call_new");
    RESOLVE(call_wait, "xla_ffi_deno_runtime_call_wait");
    RESOLVE(error_code, "xla_ffi_deno_runtime_error_code");
    RESOLVE(error_message, "xla_ffi_deno_runtime_error_message");
    RESOLVE(error_destroy, "xla_ffi_deno_runtime_error_destroy");
    RESOLVE(set_invoke_guard, "xla_ffi_deno_runtime_set_invoke_guard");
    RESOLVE(metadata_of, "xla_ffi_deno_runtime_metadata");
    RESOLVE(instance_new, "xla_ffi_deno_runtime_instance_new");
    RESOLVE(instance_free, "xla_ffi_deno_runtime_instance_free");
    RESOLVE(register_type, "xla_ffi_deno_runtime_register_type");
  }
  void* lib = NULL;
  if (main_lib) {
    if (strcmp(argv[3], "-") != 0) {
      void* g = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
      void* fn = g ? dlsym(g, "xla_ffi_deno_guarded_invoke") : NULL;
      if (fn) set_invoke_guard(fn);
    }
    const char* python = getenv("XLA_FFI_DENO_ISOLATE_PYTHON");
    if (python && python[0]) {
      /* Any non-null handle: handlers are found in the module's table (find_handler). */
      lib = host_python(main_lib, python) ? main_lib : NULL;
      if (lib) say(XISO_OK, 0, "%s", "");
    } else if (!(lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)))
      say(XISO_ERROR, XLA_FFI_Error_Code_UNAVAILABLE, "Cannot load the handler library %s: %s",
          argv[2], dlerror());
    else
      say(XISO_OK, 0, "%s", "");
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  stack_t ss = {.ss_sp = malloc(SIGSTKSZ * 4), .ss_size = SIGSTKSZ * 4, .ss_flags = 0};
  if (ss.ss_sp) sigaltstack(&ss, NULL);
  sigaction(SIGSEGV, &sa, &g_old_segv);
  sigaction(SIGBUS, &sa, &g_old_bus);
  /* Ready (or the reason not, in the header): one byte on the socket. */
  char b = lib ? 'R' : 'E';
  if (write(XISO_FD_SOCKET, &b, 1) != 1) return 0;
  if (!lib) return 0;
  uint32_t seen = 0;
  for (;;) {
    uint32_t req = next_request(seen);
    if (req == 0) return 0; /* the parent closed the library (or died) */
    __atomic_store_n(&sync_page()->taken, req, __ATOMIC_SEQ_CST);
    uint64_t want = header()->map_size;
    if (!map_to(want)) {
      say(XISO_ERROR, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "Cannot map %llu bytes: %s",
          (unsigned long long)want, strerror(errno));
    } else {
      if (header()->guard) {
        /* Arm the guard fault handler again (a handler may have replaced it). */
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
      }
      serve(lib);
    }
    xiso_sync* s = sync_page();
    xiso_post(&s->reply, req, &s->parent_sleeping);
    seen = req;
  }
}
