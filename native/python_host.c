/*
 * python_host.c: hosts a CPython interpreter (and through it jax/jaxlib, a
 * real XLA) inside the process, so that real XLA can call TS handlers.
 *
 * There are no Python headers here: the few functions of CPython's stable C
 * API that are needed are looked up with dlsym in the libpython the caller
 * names, and PyObject is opaque.
 *
 * Threading (why it is shaped like this): XLA calls custom-call handlers on
 * the thread that runs the program or on its own pool threads, and TS
 * handlers need the JS thread's event loop to run. So the JS thread must
 * never wait for Python. TS calls xla_ffi_deno_py_init and xla_ffi_deno_py_run
 * as `nonblocking` FFI functions (on Deno's blocking-pool threads), and those
 * only hand the request to this file's own worker threads and wait for it.
 * Python runs on those workers: each takes the GIL (PyGILState_Ensure
 * the first time, then its parked thread state), runs, and releases it. The
 * one exception is a synchronous run (xla_ffi_deno_py_run_sync), which the JS
 * thread asks for knowingly and which is guarded as described there.
 *
 * The workers never exit, and that is the point of having them. Deno's
 * blocking-pool threads end when idle and when the process exits; a thread
 * that ran Python (and through it native libraries with thread-local state,
 * such as OpenSSL's libcrypto behind hashlib) then runs those libraries'
 * thread-exit destructors, which race with the same libraries' atexit
 * cleanup on the exiting thread: OpenSSL frees every thread's handler list
 * at exit, and a pool thread ending at that moment freed its own again (a
 * double free seen under AddressSanitizer). A worker here is parked instead,
 * for the life of the process, as CPython's own threads are joined before
 * the interpreter's exit cleanup. The interpreter is initialised once, on a
 * worker, then releases the GIL with PyEval_SaveThread; it cannot be
 * initialised again after Py_Finalize, so it is never finalised.
 *
 * Reply buffer layout (shared with src/xla/_host.ts, which reads it, and
 * write_reply in src/xla/python/bridge.py, which writes it):
 *   int32 status (0 ok, 1 Python error as JSON, 2 reply too small, 3 text)
 *   uint32 length of the JSON or text that starts at byte 16
 *   uint64 bytes needed (status 2)
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "common.h"
#include "handler_host.h"

typedef struct py_object PyObject; /* opaque */

#define PY_FILE_INPUT 257 /* Py_file_input */
#define REPLY_HEADER 16

enum { ST_OK = 0, ST_TEXT = 3 };

static struct {
  int (*IsInitialized)(void);
  void (*InitializeEx)(int);
  void* (*EvalSaveThread)(void);
  void (*EvalRestoreThread)(void*);
  int (*GILStateEnsure)(void);
  void (*GILStateRelease)(int);
  void (*SetPythonHome)(const wchar_t*);
  wchar_t* (*DecodeLocale)(const char*, size_t*);
  PyObject* (*ImportAddModule)(const char*);
  PyObject* (*ModuleGetDict)(PyObject*);
  PyObject* (*DictGetItemString)(PyObject*, const char*);
  PyObject* (*RunStringFlags)(const char*, int, PyObject*, PyObject*, void*);
  PyObject* (*ObjectCall)(PyObject*, PyObject*, PyObject*);
  PyObject* (*TupleNew)(ptrdiff_t);
  int (*TupleSetItem)(PyObject*, ptrdiff_t, PyObject*);
  PyObject* (*LongFromUnsignedLongLong)(unsigned long long);
  PyObject* (*LongFromLongLong)(long long);
  PyObject* (*ErrOccurred)(void);
  void (*ErrFetch)(PyObject**, PyObject**, PyObject**);
  void (*ErrNormalize)(PyObject**, PyObject**, PyObject**);
  void (*ErrClear)(void);
  PyObject* (*ObjectStr)(PyObject*);
  PyObject* (*ObjectGetAttrString)(PyObject*, const char*);
  const char* (*UnicodeAsUTF8AndSize)(PyObject*, ptrdiff_t*);
  void (*IncRef)(PyObject*);
  void (*DecRef)(PyObject*);
  /* The native path of kept requests (kept_run). */
  int (*ObjectGetBuffer)(PyObject*, void*, int);
  void (*BufferRelease)(void*);
  PyObject* (*ObjectType)(PyObject*);
  ptrdiff_t (*TupleSize)(PyObject*);
  PyObject* (*TupleGetItem)(PyObject*, ptrdiff_t);
  ptrdiff_t (*ListSize)(PyObject*);
  PyObject* (*ListGetItem)(PyObject*, ptrdiff_t);
  int (*ObjectIsTrue)(PyObject*);
  int (*BytesAsStringAndSize)(PyObject*, char**, ptrdiff_t*);
  void* (*LongAsVoidPtr)(PyObject*);
  int (*ExceptionSetTraceback)(PyObject*, PyObject*);
  PyObject* TupleType; /* &PyTuple_Type */
  PyObject* ListType;  /* &PyList_Type */
  PyObject* None;      /* &_Py_NoneStruct */
} P;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static void* g_lib;
static char g_lib_path[4096];
static int g_ready;           /* the interpreter is initialised and the GIL released */
static PyObject* g_main_dict; /* borrowed from __main__ (never freed) */
static PyObject* g_dispatch;  /* strong reference to the bridge's dispatch function */

/* Writes a text reply (status 3, or the given status). Never overflows. */
static void reply_text(uint8_t* reply, int64_t cap, int32_t status, const char* fmt, ...) {
  if (reply == NULL || cap < REPLY_HEADER) return;
  char* text = (char*)reply + REPLY_HEADER;
  size_t room = (size_t)(cap - REPLY_HEADER);
  int n = 0;
  if (room > 0) {
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(text, room, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= room) n = (int)room - 1;
  }
  int32_t st = status;
  uint32_t len = (uint32_t)n;
  uint64_t need = 0;
  memcpy(reply, &st, 4);
  memcpy(reply + 4, &len, 4);
  memcpy(reply + 8, &need, 8);
}

#define LOOKUP(field, sym, required)                                                 \
  do {                                                                               \
    *(void**)(&P.field) = dlsym(lib, sym);                                           \
    if (P.field == NULL && (required)) {                                             \
      reply_text(reply, cap, ST_TEXT, "%s has no symbol %s: it is not a libpython", \
                 path, sym);                                                         \
      return -1;                                                                     \
    }                                                                                \
  } while (0)

static int32_t resolve(void* lib, const char* path, uint8_t* reply, int64_t cap) {
  LOOKUP(IsInitialized, "Py_IsInitialized", 1);
  LOOKUP(InitializeEx, "Py_InitializeEx", 1);
  LOOKUP(EvalSaveThread, "PyEval_SaveThread", 1);
  LOOKUP(EvalRestoreThread, "PyEval_RestoreThread", 1);
  LOOKUP(GILStateEnsure, "PyGILState_Ensure", 1);
  LOOKUP(GILStateRelease, "PyGILState_Release", 1);
  LOOKUP(SetPythonHome, "Py_SetPythonHome", 0); /* deprecated; absent in newer Pythons */
  LOOKUP(DecodeLocale, "Py_DecodeLocale", 0);
  LOOKUP(ImportAddModule, "PyImport_AddModule", 1);
  LOOKUP(ModuleGetDict, "PyModule_GetDict", 1);
  LOOKUP(DictGetItemString, "PyDict_GetItemString", 1);
  LOOKUP(RunStringFlags, "PyRun_StringFlags", 1);
  LOOKUP(ObjectCall, "PyObject_Call", 1);
  LOOKUP(TupleNew, "PyTuple_New", 1);
  LOOKUP(TupleSetItem, "PyTuple_SetItem", 1);
  LOOKUP(LongFromUnsignedLongLong, "PyLong_FromUnsignedLongLong", 1);
  LOOKUP(LongFromLongLong, "PyLong_FromLongLong", 1);
  LOOKUP(ErrOccurred, "PyErr_Occurred", 1);
  LOOKUP(ErrFetch, "PyErr_Fetch", 1);
  LOOKUP(ErrNormalize, "PyErr_NormalizeException", 1);
  LOOKUP(ErrClear, "PyErr_Clear", 1);
  LOOKUP(ObjectStr, "PyObject_Str", 1);
  LOOKUP(ObjectGetAttrString, "PyObject_GetAttrString", 1);
  LOOKUP(UnicodeAsUTF8AndSize, "PyUnicode_AsUTF8AndSize", 1);
  LOOKUP(IncRef, "Py_IncRef", 1);
  LOOKUP(DecRef, "Py_DecRef", 1);
  LOOKUP(ObjectGetBuffer, "PyObject_GetBuffer", 1);
  LOOKUP(BufferRelease, "PyBuffer_Release", 1);
  LOOKUP(ObjectType, "PyObject_Type", 1);
  LOOKUP(TupleSize, "PyTuple_Size", 1);
  LOOKUP(TupleGetItem, "PyTuple_GetItem", 1);
  LOOKUP(ListSize, "PyList_Size", 1);
  LOOKUP(ListGetItem, "PyList_GetItem", 1);
  LOOKUP(ObjectIsTrue, "PyObject_IsTrue", 1);
  LOOKUP(BytesAsStringAndSize, "PyBytes_AsStringAndSize", 1);
  LOOKUP(LongAsVoidPtr, "PyLong_AsVoidPtr", 1);
  LOOKUP(ExceptionSetTraceback, "PyException_SetTraceback", 1);
  LOOKUP(TupleType, "PyTuple_Type", 1);
  LOOKUP(ListType, "PyList_Type", 1);
  LOOKUP(None, "_Py_NoneStruct", 1);
  return 0;
}

/*
 * Each worker keeps its Python thread state between runs (made by its first
 * PyGILState_Ensure, or the interpreter's main state on the worker that
 * initialised it, then parked with PyEval_SaveThread): a fresh thread state
 * per run costs more than the run of a small request. Workers never exit, so
 * the state is never deleted.
 */
static __thread void* t_tstate;

static void gil_take(void) {
  if (t_tstate == NULL)
    (void)P.GILStateEnsure(); /* new thread state, GIL held */
  else
    P.EvalRestoreThread(t_tstate);
}

static void gil_give(void) { t_tstate = P.EvalSaveThread(); }

/*
 * Loads libpython from `path` (RTLD_GLOBAL, so that extension modules such
 * as ctypes and jaxlib find its symbols), sets the home (`home`, may be
 * empty) and initialises the interpreter without signal handlers, then
 * releases the GIL. Returns 0 when it initialised, 1 when this library had
 * already done so with the same path, -1 on error (message in reply).
 * Runs on a worker (see xla_ffi_deno_py_init).
 */
static int32_t init_here(const char* path, const char* home, uint8_t* reply, int64_t cap) {
  pthread_mutex_lock(&g_mu);
  if (g_ready) {
    int same = strcmp(g_lib_path, path) == 0;
    pthread_mutex_unlock(&g_mu);
    if (same) return 1;
    reply_text(reply, cap, ST_TEXT,
               "Python is already hosted in this process from %s; one interpreter per process "
               "(asked for %s)",
               g_lib_path, path);
    return -1;
  }
  if (strlen(path) >= sizeof g_lib_path) {
    pthread_mutex_unlock(&g_mu);
    reply_text(reply, cap, ST_TEXT, "The libpython path is too long");
    return -1;
  }
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) {
    const char* e = dlerror();
    pthread_mutex_unlock(&g_mu);
    reply_text(reply, cap, ST_TEXT, "Cannot load %s: %s", path, e ? e : "unknown error");
    return -1;
  }
  if (resolve(lib, path, reply, cap) != 0) {
    dlclose(lib);
    pthread_mutex_unlock(&g_mu);
    return -1;
  }
  if (P.IsInitialized()) {
    /* Another library of this process runs this interpreter: its GIL is not ours to manage. */
    pthread_mutex_unlock(&g_mu);
    reply_text(reply, cap, ST_TEXT,
               "Python (%s) is already initialised in this process by another library; "
               "deno-xla-ffi must own the interpreter it hosts",
               path);
    return -1;
  }
  if (home != NULL && home[0] != 0 && P.SetPythonHome != NULL && P.DecodeLocale != NULL) {
    /* Py_SetPythonHome keeps the pointer: the decoded string lives for the process. */
    wchar_t* w = P.DecodeLocale(home, NULL);
    if (w != NULL) P.SetPythonHome(w);
  }
  P.InitializeEx(0);
  if (!P.IsInitialized()) {
    pthread_mutex_unlock(&g_mu);
    reply_text(reply, cap, ST_TEXT, "Py_InitializeEx failed for %s", path);
    return -1;
  }
  PyObject* main_module = P.ImportAddModule("__main__"); /* borrowed */
  g_main_dict = main_module ? P.ModuleGetDict(main_module) : NULL;
  t_tstate = P.EvalSaveThread(); /* the GIL is taken per run from now on */
  if (g_main_dict == NULL) {
    pthread_mutex_unlock(&g_mu);
    reply_text(reply, cap, ST_TEXT, "Python has no __main__ module");
    return -1;
  }
  g_lib = lib;
  snprintf(g_lib_path, sizeof g_lib_path, "%s", path);
  g_ready = 1;
  pthread_mutex_unlock(&g_mu);
  reply_text(reply, cap, ST_OK, "");
  return 0;
}


/* The pending Python exception as "Type: message" text (cleared). GIL held. */
static void exception_text(uint8_t* reply, int64_t cap, const char* what) {
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  P.ErrFetch(&type, &value, &tb);
  P.ErrNormalize(&type, &value, &tb);
  const char* tname = "Exception";
  PyObject* name = type ? P.ObjectGetAttrString(type, "__name__") : NULL;
  if (name) {
    const char* s = P.UnicodeAsUTF8AndSize(name, NULL);
    if (s) tname = s;
  }
  PyObject* str = value ? P.ObjectStr(value) : NULL;
  const char* msg = "";
  if (str) {
    const char* s = P.UnicodeAsUTF8AndSize(str, NULL);
    if (s) msg = s;
  }
  if (P.ErrOccurred()) P.ErrClear();
  reply_text(reply, cap, ST_TEXT, "%s: %s: %s", what, tname, msg);
  if (str) P.DecRef(str);
  if (name) P.DecRef(name);
  if (type) P.DecRef(type);
  if (value) P.DecRef(value);
  if (tb) P.DecRef(tb);
}

/*
 * The argument tuples of the last dispatch calls, (req, len, reply, cap) as
 * Python ints. A prepared call's caller reuses its request and reply buffers
 * (one frame per call in flight), so the same four values come back call
 * after call: the tuple made for them once is passed again, and a call
 * builds no ints, no tuple and parses no format. A tuple holds only values,
 * so one made for buffers since freed is still right for new buffers at the
 * same addresses. Read and written with the GIL held (which orders every
 * thread that calls the dispatcher); the tuples are never freed but when
 * replaced.
 */
#define ARGS_CACHED 8
static struct {
  const uint8_t* req;
  int64_t len;
  uint8_t* reply;
  int64_t cap;
  PyObject* args; /* strong reference, or NULL */
} g_args[ARGS_CACHED];
static unsigned g_args_next; /* the slot replaced next (round robin) */

/* The dispatcher's arguments for this request (borrowed from the cache: the
 * caller takes a reference for its call), or NULL with a Python exception
 * set. GIL held. */
static PyObject* dispatch_args(const uint8_t* req, int64_t len, uint8_t* reply, int64_t cap) {
  for (unsigned i = 0; i < ARGS_CACHED; i++) {
    if (g_args[i].args != NULL && g_args[i].req == req && g_args[i].reply == reply &&
        g_args[i].len == len && g_args[i].cap == cap)
      return g_args[i].args;
  }
  PyObject* t = P.TupleNew(4);
  if (t == NULL) return NULL;
  PyObject* v[4] = {P.LongFromUnsignedLongLong((unsigned long long)(uintptr_t)req),
                    P.LongFromLongLong((long long)len),
                    P.LongFromUnsignedLongLong((unsigned long long)(uintptr_t)reply),
                    P.LongFromLongLong((long long)cap)};
  int ok = 1;
  for (int i = 0; i < 4; i++) {
    /* PyTuple_SetItem steals v[i], also when it fails; a NULL item stays NULL. */
    if (v[i] == NULL || P.TupleSetItem(t, i, v[i]) != 0) {
      ok = 0;
      for (int j = i + 1; j < 4; j++)
        if (v[j] != NULL) P.DecRef(v[j]);
      break;
    }
  }
  if (!ok) {
    P.DecRef(t);
    return NULL;
  }
  unsigned slot = g_args_next++ % ARGS_CACHED;
  if (g_args[slot].args != NULL) P.DecRef(g_args[slot].args);
  g_args[slot].req = req;
  g_args[slot].len = len;
  g_args[slot].reply = reply;
  g_args[slot].cap = cap;
  g_args[slot].args = t;
  return t;
}

/*
 * The native path of kept requests. A prepared call's request that the
 * caller flags STABLE (src/xla/_prepared.ts: its words are those of its
 * frame's last call) and whose last call wrote its results in place is run
 * here, without the bridge's Python: the bridge hands back, from that call
 * (bridge.py, `kept`), the function it called, its arguments (NumPy arrays
 * over the frame's memory) and where each result goes, with its shape and the
 * format of the buffer jax exports for it. This path calls the same function
 * with the same arguments, checks each result as the bridge's finish_call
 * does (its shape, and its type by its buffer's format: one format per XLA
 * type), and copies it through the buffer protocol, which is how NumPy reads
 * a jax array in the bridge's `v[...] = x` (NumPy tries the buffer protocol
 * first; jaxlib's PyArray_bf_getbuffer, xla/python/py_array.cc, exports a
 * CPU array of default layout once it is ready, and refuses other layouts
 * and the types it has no PEP 3118 format for, such as bfloat16, with a
 * BufferError, after which NumPy falls back to __array__). Anything else
 * (an exception, a result of another type or shape, one jax exports no
 * buffer for, results not ready on the JS thread) goes to the bridge's
 * native_rest, which finishes the call as the bridge would have. What is
 * kept is dropped when the bridge's epoch moves (g_native[0]: programs
 * released or replaced, a plan's results learnt anew, a target registered
 * offThread), or when a request for its address comes without STABLE. Read and written with
 * the GIL held.
 */
#define KEPT_SLOTS 64
#define KEPT_OUTS 8
#define KEPT_DIMS 8
#define FAST_REQUEST 0xFFFFFFFFu
enum { F_DISPATCH = 1, F_FINISH = 2, F_STABLE = 4 };   /* bridge.py's request flags */
enum { S_WRITTEN = 4 };                                /* bridge.py's WRITTEN status */
enum { PYBUF_RECORDS_RO = 0x1c };                      /* PyBUF_STRIDES | PyBUF_FORMAT */

typedef struct { /* Py_buffer, as CPython's stable ABI lays it out */
  void* buf;
  PyObject* obj;
  ptrdiff_t len;
  ptrdiff_t itemsize;
  int readonly;
  int ndim;
  char* format;
  ptrdiff_t* shape;
  ptrdiff_t* strides;
  ptrdiff_t* suboffsets;
  void* internal;
} py_buffer;

typedef struct { /* one result as `kept` packs it: "<Q3q8qQ16s" */
  uint64_t dst;
  int64_t nbytes, itemsize, ndim, dims[KEPT_DIMS];
  uint64_t reserved;
  char format[16];
} kept_out;

typedef struct {
  const uint8_t* req;
  int64_t len;
  uint8_t* reply;
  int64_t cap;
  int64_t epoch;
  PyObject* hold; /* strong: the bridge's (function, arguments, array type, words) */
  PyObject* fn;   /* borrowed from hold */
  PyObject* args;
  PyObject* array_type;
  int64_t program, dispatchable, nouts;
  kept_out outs[KEPT_OUTS];
} kept_call;

static kept_call g_kept[KEPT_SLOTS];
static PyObject* g_native_rest;  /* strong: the bridge's native_rest, or NULL (no native path) */
static PyObject* g_no_args;      /* strong: (), the arguments of is_ready */
static int64_t* g_native;        /* the bridge's shared words (NATIVE), or NULL */
static int64_t g_kept_swept = -1; /* the epoch the slots were last swept for */

static kept_call* kept_slot(const uint8_t* req) {
  uint64_t h = ((uint64_t)(uintptr_t)req >> 6) * 0x9E3779B97F4A7C15ull;
  return &g_kept[h >> 58]; /* 64 slots */
}

static void kept_drop(kept_call* k) {
  PyObject* hold = k->hold;
  k->hold = NULL;
  k->req = NULL;
  if (hold != NULL) P.DecRef(hold);
}

/* Drops what is kept for an epoch before the bridge's (GIL held). */
static void kept_sweep(void) {
  if (g_native == NULL || g_native[0] == g_kept_swept) return;
  g_kept_swept = g_native[0];
  for (unsigned i = 0; i < KEPT_SLOTS; i++)
    if (g_kept[i].hold != NULL && g_kept[i].epoch != g_native[0]) kept_drop(&g_kept[i]);
}

/* Keeps what the bridge handed back for this request (GIL held); a value that
 * is not such a tuple keeps nothing. */
static void kept_keep(const uint8_t* req, int64_t len, uint8_t* reply, int64_t cap, PyObject* r) {
  if (g_native == NULL || r == NULL || r == P.None) return;
  PyObject* t = P.ObjectType(r);
  int is_tuple = t == P.TupleType;
  if (t != NULL) P.DecRef(t);
  if (!is_tuple || P.TupleSize(r) != 4) return;
  char* words = NULL;
  ptrdiff_t n = 0;
  PyObject* args = P.TupleGetItem(r, 1);
  PyObject* packed = P.TupleGetItem(r, 3);
  if (args == NULL || packed == NULL || P.BytesAsStringAndSize(packed, &words, &n) != 0) {
    P.ErrClear();
    return;
  }
  t = P.ObjectType(args);
  is_tuple = t == P.TupleType;
  if (t != NULL) P.DecRef(t);
  int64_t head[4];
  if (!is_tuple || n < (ptrdiff_t)sizeof head) return;
  memcpy(head, words, sizeof head);
  if (head[2] < 0 || head[2] > KEPT_OUTS ||
      n != (ptrdiff_t)(sizeof head + (size_t)head[2] * sizeof(kept_out)))
    return;
  kept_call* k = kept_slot(req);
  kept_drop(k);
  P.IncRef(r);
  k->hold = r;
  k->fn = P.TupleGetItem(r, 0);
  k->args = args;
  k->array_type = P.TupleGetItem(r, 2);
  k->program = head[0];
  k->dispatchable = head[1];
  k->nouts = head[2];
  memcpy(k->outs, words + sizeof head, (size_t)head[2] * sizeof(kept_out));
  for (int64_t i = 0; i < k->nouts; i++) k->outs[i].format[15] = 0;
  k->req = req;
  k->len = len;
  k->reply = reply;
  k->cap = cap;
  k->epoch = g_native[0];
}

/* Whether a buffer holds a kept result: its shape, item size, format and
 * C-contiguous strides, in the bytes its place in the frame has. */
static int kept_fits(const py_buffer* b, const kept_out* o) {
  if (b->len != o->nbytes || b->itemsize != o->itemsize || b->ndim != o->ndim) return 0;
  if (b->suboffsets != NULL) return 0;
  const char* f = b->format != NULL ? b->format : "B";
  if (strcmp(f, o->format) != 0) return 0;
  ptrdiff_t stride = b->itemsize;
  for (int d = b->ndim - 1; d >= 0; d--) {
    if (b->shape == NULL || b->shape[d] != o->dims[d]) return 0;
    if (b->strides != NULL && b->shape[d] > 1 && b->strides[d] != stride) return 0;
    stride *= b->shape[d];
  }
  return 1;
}

/* Hands a call to the bridge's native_rest: its results (out) or its pending
 * exception (out NULL). GIL held; the reply is written either way. */
static void kept_rest(const uint8_t* req, int64_t len, uint8_t* reply, int64_t cap,
                      PyObject* out) {
  PyObject *type = NULL, *exc = NULL, *tb = NULL;
  if (out == NULL) {
    P.ErrFetch(&type, &exc, &tb);
    P.ErrNormalize(&type, &exc, &tb);
    if (exc != NULL && tb != NULL) (void)P.ExceptionSetTraceback(exc, tb);
  }
  PyObject* a = dispatch_args(req, len, reply, cap);
  PyObject* t = a != NULL ? P.TupleNew(3) : NULL;
  PyObject* r = NULL;
  if (t != NULL) {
    PyObject* items[3] = {a, out != NULL ? out : P.None, exc != NULL ? exc : P.None};
    for (int i = 0; i < 3; i++) {
      P.IncRef(items[i]);
      (void)P.TupleSetItem(t, i, items[i]); /* steals; a new tuple's slot cannot fail */
    }
    r = P.ObjectCall(g_native_rest, t, NULL);
    P.DecRef(t);
  }
  if (r == NULL)
    exception_text(reply, cap, "The Python bridge failed");
  else
    P.DecRef(r);
  if (type) P.DecRef(type);
  if (exc) P.DecRef(exc);
  if (tb) P.DecRef(tb);
}

/* Whether a result is jax's array (type), its pending exception cleared. */
static int kept_is(PyObject* x, PyObject* type) {
  PyObject* t = P.ObjectType(x);
  if (t == NULL) {
    P.ErrClear();
    return 0;
  }
  int same = t == type;
  P.DecRef(t);
  return same;
}

/* Whether every leaf is ready (a dispatched call reads none that is not:
 * jax's buffer protocol would wait for it on the JS thread). */
static int kept_ready(PyObject** leaves, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    PyObject* m = P.ObjectGetAttrString(leaves[i], "is_ready");
    if (m == NULL) {
      P.ErrClear();
      return 0;
    }
    PyObject* r = P.ObjectCall(m, g_no_args, NULL);
    P.DecRef(m);
    int ok = r != NULL ? P.ObjectIsTrue(r) : -1;
    if (r != NULL) P.DecRef(r);
    if (ok != 1) {
      if (ok < 0) P.ErrClear();
      return 0;
    }
  }
  return 1;
}

/*
 * Runs a kept request natively. Returns 1 when its reply is written (by this
 * path or by native_rest), 0 when the bridge's dispatcher is to run it.
 * GIL held.
 */
static int kept_run(const uint8_t* req, int64_t len, uint8_t* reply, int64_t cap) {
  if (g_native == NULL || len < 32 || ((uintptr_t)req & 7) != 0) return 0;
  const uint64_t* w = (const uint64_t*)(const void*)req;
  if ((uint32_t)w[0] != FAST_REQUEST) return 0;
  uint32_t flags = (uint32_t)(w[3] >> 32);
  kept_call* k = kept_slot(req);
  if (!(flags & F_STABLE)) {
    /* The request's words changed (or a new frame took the address): nothing kept holds. */
    if (k->req == req) kept_drop(k);
    return 0;
  }
  if (flags & F_FINISH) return 0;
  if (k->hold == NULL || k->req != req || k->len != len || k->reply != reply || k->cap != cap)
    return 0;
  if (k->epoch != g_native[0]) {
    kept_drop(k);
    return 0;
  }
  if ((flags & F_DISPATCH) && !k->dispatchable) return 0; /* the bridge says NOT_DISPATCHED */
  /* The slot may be replaced while the function runs (it may let go of the GIL). */
  kept_call c;
  memcpy(&c, k, offsetof(kept_call, outs) + (size_t)k->nouts * sizeof(kept_out));
  P.IncRef(c.hold);
  if (flags & F_DISPATCH) g_native[1]++;
  PyObject* out = P.ObjectCall(c.fn, c.args, NULL);
  if (out == NULL) {
    kept_rest(req, len, reply, cap, NULL);
    P.DecRef(c.hold);
    return 1;
  }
  /* The leaves, as the bridge's leaves_of finds them for a tuple or list of arrays. */
  PyObject* leaves[KEPT_OUTS];
  int64_t n = -1;
  if (c.program && kept_is(out, c.array_type)) {
    leaves[0] = out;
    n = 1;
  } else {
    PyObject* t = P.ObjectType(out);
    int tuple = t == P.TupleType, list = t == P.ListType;
    if (t != NULL) P.DecRef(t);
    ptrdiff_t size = tuple ? P.TupleSize(out) : list ? P.ListSize(out) : -1;
    if (size == c.nouts) {
      n = size;
      for (ptrdiff_t i = 0; i < size && n >= 0; i++) {
        leaves[i] = tuple ? P.TupleGetItem(out, i) : P.ListGetItem(out, i);
        if (leaves[i] == NULL || !kept_is(leaves[i], c.array_type)) n = -1;
      }
    }
  }
  py_buffer bufs[KEPT_OUTS];
  int64_t got = 0;
  int ok = n == c.nouts && n > 0 && (!(flags & F_DISPATCH) || kept_ready(leaves, n));
  for (; ok && got < n; got++) {
    if (P.ObjectGetBuffer(leaves[got], &bufs[got], PYBUF_RECORDS_RO) != 0) {
      P.ErrClear();
      ok = 0;
      break;
    }
    if (!kept_fits(&bufs[got], &c.outs[got])) {
      got++;
      ok = 0;
    }
  }
  if (ok) {
    for (int64_t i = 0; i < n; i++)
      if (c.outs[i].nbytes > 0)
        memcpy((void*)(uintptr_t)c.outs[i].dst, bufs[i].buf, (size_t)c.outs[i].nbytes);
  }
  for (int64_t i = 0; i < got; i++) P.BufferRelease(&bufs[i]);
  if (ok) {
    int32_t status[2] = {S_WRITTEN, 0};
    memcpy(reply, status, sizeof status);
    g_native[2]++;
  } else {
    kept_rest(req, len, reply, cap, out);
  }
  P.DecRef(out);
  P.DecRef(c.hold);
  return 1;
}

/* Takes the native path's part of a newly installed dispatcher (its `native`
 * attribute: native_rest and the address of the shared words); a dispatcher
 * without one (an isolate's) runs every request itself. GIL held. */
static void native_install(PyObject* dispatch) {
  for (unsigned i = 0; i < KEPT_SLOTS; i++) kept_drop(&g_kept[i]);
  if (g_native_rest != NULL) P.DecRef(g_native_rest);
  g_native_rest = NULL;
  g_native = NULL;
  PyObject* native = P.ObjectGetAttrString(dispatch, "native");
  if (native == NULL) {
    P.ErrClear();
    return;
  }
  PyObject* t = P.ObjectType(native);
  int ok = t == P.TupleType && P.TupleSize(native) == 2;
  if (t != NULL) P.DecRef(t);
  PyObject* rest = ok ? P.TupleGetItem(native, 0) : NULL;
  void* words = ok ? P.LongAsVoidPtr(P.TupleGetItem(native, 1)) : NULL;
  if (g_no_args == NULL) g_no_args = P.TupleNew(0);
  if (rest != NULL && words != NULL && g_no_args != NULL) {
    P.IncRef(rest);
    g_native_rest = rest;
    g_native = words;
    g_kept_swept = -1;
  }
  if (P.ErrOccurred()) P.ErrClear();
  P.DecRef(native);
}

/*
 * Runs Python with the GIL held, on the calling (worker) thread.
 *   mode 0: `req` is Python source (UTF-8, `len` bytes) executed in
 *           __main__'s namespace; afterwards __main__._deno_xla_dispatch, if
 *           defined, becomes the dispatch function of mode 1.
 *   mode 1: calls dispatch(req_address, len, reply_address, cap) (the
 *           arguments from dispatch_args); the dispatcher writes its reply
 *           and catches its own exceptions.
 * Returns 0 when Python ran (its reply says how it went), -1 when it could
 * not (text reply). Runs on a worker (see xla_ffi_deno_py_run), or on the JS
 * thread for a synchronous run (xla_ffi_deno_py_run_sync).
 */
static int32_t run_here(int32_t mode, const uint8_t* req, int64_t len, uint8_t* reply,
                        int64_t cap) {
  if (!__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE)) {
    reply_text(reply, cap, ST_TEXT, "Python is not initialised in this process");
    return -1;
  }
  if (len < 0 || (len > 0 && req == NULL) || reply == NULL || cap < REPLY_HEADER) {
    reply_text(reply, cap, ST_TEXT, "Bad request to the Python host");
    return -1;
  }
  gil_take();
  int32_t rc = 0;
  if (mode == 0) {
    char* src = malloc((size_t)len + 1);
    if (src == NULL) {
      reply_text(reply, cap, ST_TEXT, "Out of memory");
      rc = -1;
    } else {
      if (len > 0) memcpy(src, req, (size_t)len);
      src[len] = 0;
      PyObject* r = P.RunStringFlags(src, PY_FILE_INPUT, g_main_dict, g_main_dict, NULL);
      free(src);
      if (r == NULL) {
        exception_text(reply, cap, "Python bootstrap failed");
        rc = -1;
      } else {
        P.DecRef(r);
        PyObject* d = P.DictGetItemString(g_main_dict, "_deno_xla_dispatch"); /* borrowed */
        if (d != NULL && d != g_dispatch) {
          P.IncRef(d);
          if (g_dispatch) P.DecRef(g_dispatch);
          g_dispatch = d;
          native_install(d);
        }
        reply_text(reply, cap, ST_OK, "");
      }
    }
  } else if (g_dispatch == NULL) {
    reply_text(reply, cap, ST_TEXT, "The Python bridge is not installed");
    rc = -1;
  } else if (kept_run(req, len, reply, cap)) {
    /* run natively (its reply written) */
  } else {
    kept_sweep();
    /* Held for the call: the dispatcher may release the GIL (jax does while XLA runs), and
     * another thread's call may then replace the tuple in the cache. */
    PyObject* args = dispatch_args(req, len, reply, cap);
    PyObject* r = NULL;
    if (args != NULL) {
      P.IncRef(args);
      r = P.ObjectCall(g_dispatch, args, NULL);
      P.DecRef(args);
    }
    if (r == NULL) {
      exception_text(reply, cap, "The Python bridge failed");
      rc = -1;
    } else {
      kept_keep(req, len, reply, cap, r);
      P.DecRef(r);
    }
  }
  gil_give();
  return rc;
}

/* ---------------------------------------------------------------------- */
/* The workers: Python's threads, alive for the life of the process         */
/* ---------------------------------------------------------------------- */

/* A request waiting for a worker, on its caller's stack. */
typedef struct py_request {
  struct py_request* next;
  int init; /* 1: init_here(path, home), 0: run_here(mode, req, len) */
  const char* path;
  const char* home;
  int32_t mode;
  const uint8_t* req;
  int64_t len;
  uint8_t* reply;
  int64_t cap;
  int32_t rc;
  int done;                /* under g_pool_mu */
  pthread_cond_t done_cv;  /* with g_pool_mu */
} py_request;

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_work_cv = PTHREAD_COND_INITIALIZER;
static py_request* g_head;
static py_request* g_tail;
static int g_queued;  /* requests no worker took yet */
static int g_idle;    /* workers waiting for one */
static int g_workers; /* workers started */

static void* worker_main(void* unused) {
  (void)unused;
  pthread_setname_np(pthread_self(), "deno-xla-python"); /* what a debugger lists */
  pthread_mutex_lock(&g_pool_mu);
  for (;;) {
    while (g_head == NULL) {
      g_idle++;
      pthread_cond_wait(&g_work_cv, &g_pool_mu);
      g_idle--;
    }
    py_request* r = g_head;
    g_head = r->next;
    if (g_head == NULL) g_tail = NULL;
    g_queued--;
    pthread_mutex_unlock(&g_pool_mu);
    r->rc = r->init ? init_here(r->path, r->home, r->reply, r->cap)
                    : run_here(r->mode, r->req, r->len, r->reply, r->cap);
    pthread_mutex_lock(&g_pool_mu);
    r->done = 1; /* the caller reads it under g_pool_mu: r stays valid until then */
    pthread_cond_signal(&r->done_cv);
  }
  return NULL;
}

/* Starts one more worker (g_pool_mu held); 0 when it cannot. Workers run
 * this library's code for the life of the process, also after Deno closed the
 * library at exit: xfd_thread_start_detached keeps it mapped. */
static int start_worker_locked(void) {
  if (!xfd_thread_start_detached(worker_main, NULL)) return 0;
  g_workers++;
  return 1;
}

/* Hands r to a worker (starting one when none is idle) and waits for it.
 * Returns r's result, or -1 (text reply) when no worker can run it. */
static int32_t submit(py_request* r) {
  r->next = NULL;
  r->done = 0;
  pthread_cond_init(&r->done_cv, NULL);
  pthread_mutex_lock(&g_pool_mu);
  if (g_tail) g_tail->next = r; else g_head = r;
  g_tail = r;
  g_queued++;
  if (g_idle >= g_queued) {
    pthread_cond_signal(&g_work_cv);
  } else if (!start_worker_locked() && g_workers == 0) {
    /* No worker at all: take r back. */
    py_request* prev = NULL;
    for (py_request* q = g_head; q != r; q = q->next) prev = q;
    if (prev) prev->next = r->next; else g_head = r->next;
    if (g_tail == r) g_tail = prev;
    g_queued--;
    pthread_mutex_unlock(&g_pool_mu);
    pthread_cond_destroy(&r->done_cv);
    reply_text(r->reply, r->cap, ST_TEXT, "Cannot start a thread for the Python host");
    return -1;
  } /* else a busy worker takes it when it is done */
  while (!r->done) pthread_cond_wait(&r->done_cv, &g_pool_mu);
  pthread_mutex_unlock(&g_pool_mu);
  pthread_cond_destroy(&r->done_cv);
  return r->rc;
}

/*
 * Loads and initialises the interpreter on a worker (init_here); called as
 * a nonblocking function (never on the JS thread), it waits for the worker.
 */
int32_t xla_ffi_deno_py_init(const char* path, const char* home, uint8_t* reply, int64_t cap) {
  py_request r = {.init = 1, .path = path, .home = home, .reply = reply, .cap = cap};
  return submit(&r);
}

/*
 * Runs Python on a worker (run_here); called as a nonblocking function (never
 * on the JS thread), it waits for the worker.
 */
int32_t xla_ffi_deno_py_run(int32_t mode, const uint8_t* req, int64_t len, uint8_t* reply,
                            int64_t cap) {
  py_request r = {.mode = mode, .req = req, .len = len, .reply = reply, .cap = cap};
  return submit(&r);
}

/*
 * Runs Python on the calling thread: the JS thread, called as a synchronous
 * FFI function (Xla.runPythonSync, XlaProgram.runSync). XLA runs a cheap
 * program inline on the thread that calls it, so the TS handlers it calls run
 * inline on the JS thread, without the two thread hand-offs of a call from a
 * worker. The JS thread is marked blocked meanwhile (handler_host.h): a TS
 * handler XLA calls from another thread fails after the guard's grace instead
 * of waiting forever, and one called inline that returns a Promise fails at
 * once. TS refuses it while requests run on the workers (one of them could
 * hold the GIL while waiting for the JS thread). Ctrl-C meanwhile ends the
 * process with status 130 (below).
 */
/*
 * Ctrl-C during a synchronous run: Python runs signal handlers only on its
 * main thread (a worker here, idle meanwhile), so its SIGINT handler would
 * only trip a flag and the run would go on. The run ends the process as
 * Ctrl-C ends a Deno program (exit status 130), as an asynchronous run does
 * when Python raises KeyboardInterrupt.
 */
/*
 * The handler is installed once, at the first synchronous run, and chains to
 * the handler it replaced outside synchronous runs: two sigaction calls per
 * run cost more than a small program's run (3-7 µs on a virtual machine). A
 * handler installed later that chains to the one before it, as Deno's own
 * (signal-hook) does, still reaches this one.
 */
static _Atomic int g_sync_running;
static struct sigaction g_sigint_prev;
static pthread_once_t g_sigint_once = PTHREAD_ONCE_INIT;

static void sync_run_interrupted(int sig, siginfo_t* info, void* ctx) {
  if (atomic_load(&g_sync_running)) _exit(130);
  if (g_sigint_prev.sa_flags & SA_SIGINFO) {
    if (g_sigint_prev.sa_sigaction != NULL) g_sigint_prev.sa_sigaction(sig, info, ctx);
    return;
  }
  if (g_sigint_prev.sa_handler == SIG_IGN) return;
  if (g_sigint_prev.sa_handler == SIG_DFL) {
    signal(sig, SIG_DFL); /* as if never installed: the default action */
    raise(sig);
    return;
  }
  g_sigint_prev.sa_handler(sig);
}

static void install_sigint(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = sync_run_interrupted;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGINT, &sa, &g_sigint_prev) != 0) memset(&g_sigint_prev, 0, sizeof g_sigint_prev);
}

static int32_t run_sync_as(const xla_ffi_deno_inline_caller* who, int32_t mode,
                           const uint8_t* req, int64_t len, uint8_t* reply, int64_t cap) {
  pthread_once(&g_sigint_once, install_sigint);
  xla_ffi_deno_js_block_describe_inline(who);
  int64_t saved = xla_ffi_deno_js_block_enter_as(XFD_JS_BLOCK_XLA_INLINE);
  atomic_fetch_add(&g_sync_running, 1);
  int32_t rc = run_here(mode, req, len, reply, cap);
  atomic_fetch_sub(&g_sync_running, 1);
  xla_ffi_deno_js_block_leave(saved);
  return rc;
}

int32_t xla_ffi_deno_py_run_sync(int32_t mode, const uint8_t* req, int64_t len, uint8_t* reply,
                                 int64_t cap) {
  static const xla_ffi_deno_inline_caller self = {
      sizeof self, "Python", "Xla.runPythonSync or XlaProgram.runSync", "run() or runPython()"};
  return run_sync_as(&self, mode, req, len, reply, cap);
}

/*
 * The dispatch of XlaProgram.run and Xla.ffiCall for a program that calls no
 * target registered with a TS entry point (src/xla/_prepared.ts): Python
 * starts it on the JS thread, as a jitted function's call does in Python, and
 * XLA runs a cheap program inline; the rest runs on XLA's threads and a
 * worker waits for it. The same rules as a synchronous run hold meanwhile, so
 * a TS entry point registered by other means (a capsule handed to jax in
 * runPython) that XLA reaches fails with FAILED_PRECONDITION, never hangs.
 */
int32_t xla_ffi_deno_py_dispatch_sync(const uint8_t* req, int64_t len, uint8_t* reply,
                                      int64_t cap) {
  static const xla_ffi_deno_inline_caller self = {
      sizeof self, "a program dispatched as one that calls no TS handler",
      "XlaProgram.run or Xla.ffiCall, whose program calls a TS entry point not registered "
      "through Xla.register",
      "its target registered through Xla.register"};
  return run_sync_as(&self, 1, req, len, reply, cap);
}

/* Whether this process hosts Python (1) and the libpython path into buf. */
int32_t xla_ffi_deno_py_hosted(uint8_t* buf, int64_t cap) {
  pthread_mutex_lock(&g_mu);
  int ready = g_ready;
  if (ready && buf != NULL && cap > 0) snprintf((char*)buf, (size_t)cap, "%s", g_lib_path);
  pthread_mutex_unlock(&g_mu);
  return ready;
}
