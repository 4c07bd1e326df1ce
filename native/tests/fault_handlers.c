/*
 * fault_handlers.c: C test handlers that fail the way handlers under test
 * do: fatal signals (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL), a hang,
 * writes past the end of a result (next to it and far from it), before the
 * start of a result or an argument, into an argument, a heap overflow for
 * AddressSanitizer; an in-place update of an aliased buffer; and asynchronous
 * handlers (a future completed from a thread). Written against the project's
 * xla_ffi.h; each answers the metadata query first, as ffi.h does. Built with
 * -DFAULT_HANG_IN_CONSTRUCTOR, the library's initialiser never returns (a
 * library that hangs while it loads). fault_open_descriptors is no handler:
 * the tests call it in their own process to count and list its descriptors.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test_handler_util.h"

#define META(cf)                                           \
  do {                                                     \
    if (test_is_metadata(cf)) return test_answer_metadata(cf); \
  } while (0)

static XLA_FFI_Buffer* arg_at(XLA_FFI_CallFrame* cf, int64_t i) {
  return i < cf->args.size ? (XLA_FFI_Buffer*)cf->args.args[i] : NULL;
}

static XLA_FFI_Buffer* ret_at(XLA_FFI_CallFrame* cf, int64_t i) {
  return i < cf->rets.size ? (XLA_FFI_Buffer*)cf->rets.rets[i] : NULL;
}

static int64_t elements(const XLA_FFI_Buffer* b) {
  int64_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= b->dims[i];
  return n;
}

/* ret0 = 2 * arg0 (F32, same shape): a handler that behaves. */
XLA_FFI_Error* fault_ok(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* x = arg_at(cf, 0);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!x || !y) return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_ok: x -> y");
  const float* in = x->data;
  float* out = y->data;
  for (int64_t i = 0, n = elements(y); i < n; i++) out[i] = 2 * in[i];
  return NULL;
}

/* Writes through a null pointer: SIGSEGV. (UBSan, in the sanitized test
 * run, would report the null store first; this test wants the signal.) */
__attribute__((no_sanitize("undefined"))) XLA_FFI_Error* fault_segv(XLA_FFI_CallFrame* cf) {
  META(cf);
  volatile int* p = NULL;
  *p = 1;
  return NULL;
}

/* abort(): SIGABRT. */
XLA_FFI_Error* fault_abort(XLA_FFI_CallFrame* cf) {
  META(cf);
  abort();
}

/* An integer division by the number of results minus itself (zero): SIGFPE
 * on x86-64. UBSan would report it first; this test wants the signal. */
__attribute__((no_sanitize("undefined"))) XLA_FFI_Error* fault_fpe(XLA_FFI_CallFrame* cf) {
  META(cf);
  volatile int64_t zero = cf->rets.size - cf->rets.size;
  volatile int64_t r = 1 / zero;
  (void)r;
  raise(SIGFPE); /* where a division by zero does not trap */
  return NULL;
}

/* Reads a page of a mapping past the end of its (empty) file: SIGBUS. */
XLA_FFI_Error* fault_bus(XLA_FFI_CallFrame* cf) {
  META(cf);
  int fd = memfd_create("fault_bus", 0);
  if (fd < 0) return test_error(cf->api, XLA_FFI_Error_Code_INTERNAL, "memfd_create failed");
  volatile char* p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return test_error(cf->api, XLA_FFI_Error_Code_INTERNAL, "mmap failed");
  char c = p[0];
  (void)c;
  return NULL;
}

/* __builtin_trap(): SIGILL on x86-64 (ud2). */
XLA_FFI_Error* fault_ill(XLA_FFI_CallFrame* cf) {
  META(cf);
  __builtin_trap();
}

/* Never returns (sleeps in steps, so it costs no CPU while it waits to be killed). */
XLA_FFI_Error* fault_hang(XLA_FFI_CallFrame* cf) {
  META(cf);
  for (;;) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* Sleeps 50 ms, then succeeds: for calls that are slow but within a deadline. */
XLA_FFI_Error* fault_slow(XLA_FFI_CallFrame* cf) {
  META(cf);
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  return NULL;
}

/* Fills result 0 (any type) with 7s and writes one more element past its
 * end: the classic off-by-one. Element size from the dims' byte count: the
 * handler takes F32. */
XLA_FFI_Error* fault_past_end(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!y) return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_past_end: -> y");
  float* out = y->data;
  int64_t n = elements(y);
  for (int64_t i = 0; i <= n; i++) out[i] = 7; /* i == n is one too many */
  return NULL;
}

/* Fills result 0 (F32) with 7s and writes one element before its start:
 * an index computed one too low. */
XLA_FFI_Error* fault_before_start(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!y)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_before_start: -> y");
  float* out = y->data;
  for (int64_t i = -1, n = elements(y); i < n; i++) out[i] = 7; /* i == -1 is one too low */
  return NULL;
}

/* An asynchronous call: result 0 = 2 * argument 0 (F32), written 20 ms after
 * the handler returned its future, on a thread of its own; with `past_end`,
 * one element more. */
typedef struct {
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  const float* in;
  float* out;
  int64_t n;
  int past_end;
} async_job;

static void* async_run(void* p) {
  async_job* j = p;
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  for (int64_t i = 0; i < j->n; i++) j->out[i] = 2 * j->in[i];
  if (j->past_end) j->out[j->n] = 7;
  XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                        j->future};
  XLA_FFI_Error* e = j->api->XLA_FFI_Future_SetAvailable(&a);
  if (e) abort(); /* nothing to report it to */
  free(j);
  return NULL;
}

static XLA_FFI_Error* async_call(XLA_FFI_CallFrame* cf, int past_end) {
  XLA_FFI_Buffer* x = arg_at(cf, 0);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!x || !y) return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "async: x -> y");
  async_job* j = malloc(sizeof *j);
  if (!j) return test_error(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "malloc failed");
  XLA_FFI_Future_Create_Args c;
  memset(&c, 0, sizeof c);
  c.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&c);
  if (e) {
    free(j);
    return e;
  }
  *j = (async_job){cf->api, c.future, x->data, y->data, elements(y), past_end};
  pthread_t t;
  if (pthread_create(&t, NULL, async_run, j) != 0) abort(); /* the future must complete */
  pthread_detach(t);
  cf->future = c.future;
  return NULL;
}

XLA_FFI_Error* fault_async_ok(XLA_FFI_CallFrame* cf) {
  META(cf);
  return async_call(cf, 0);
}

XLA_FFI_Error* fault_async_past_end(XLA_FFI_CallFrame* cf) {
  META(cf);
  return async_call(cf, 1);
}

/* Writes past the end of result 0 and also fails with its own error
 * (INTERNAL "fault_past_end_and_fail"): the guard's finding comes first. */
XLA_FFI_Error* fault_past_end_and_fail(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!y) return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "-> y");
  ((float*)y->data)[elements(y)] = 7;
  return test_error(cf->api, XLA_FFI_Error_Code_INTERNAL, "fault_past_end_and_fail");
}

/* Copies argument 0 into result 0 and writes 9 into element 1 of argument 1
 * (F32): a write into an input. */
XLA_FFI_Error* fault_arg_write(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* a = arg_at(cf, 1);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  XLA_FFI_Buffer* x = arg_at(cf, 0);
  if (!a || !x || !y)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_arg_write: x, a -> y");
  memcpy(y->data, x->data, (size_t)elements(y) * 4);
  ((float*)a->data)[1] = 9;
  return NULL;
}

/* Writes one byte past an 8-byte heap block: AddressSanitizer reports it
 * when this library is built with -fsanitize=address; silent otherwise. */
XLA_FFI_Error* fault_heap_overflow(XLA_FFI_CallFrame* cf) {
  META(cf);
  volatile size_t size = 8; /* opaque to the compiler's bounds check */
  volatile char* p = malloc(size);
  if (!p) return test_error(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "malloc failed");
  p[size] = 1;
  free((void*)p);
  return NULL;
}

/* Copies argument 0 into result 0 and writes 9 into the element just before
 * argument 1 (F32): a write before an input's first byte. */
XLA_FFI_Error* fault_before_arg(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* a = arg_at(cf, 1);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  XLA_FFI_Buffer* x = arg_at(cf, 0);
  if (!a || !x || !y)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_before_arg: x, a -> y");
  memcpy(y->data, x->data, (size_t)elements(y) * 4);
  ((float*)a->data)[-1] = 9;
  return NULL;
}

/* Fills result 0 (F32) with 7s and writes 7 into the element 256 elements
 * past its end (1 KiB past it): a stray write well away from the buffer. */
XLA_FFI_Error* fault_far_past_end(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!y)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_far_past_end: -> y");
  volatile float* out = y->data;
  int64_t n = elements(y);
  for (int64_t i = 0; i < n; i++) out[i] = 7;
  out[n + 256] = 7;
  return NULL;
}

/* Adds 1 to argument 0 in place: result 0 must be argument 0's buffer (an
 * input-output alias, F32), else INVALID_ARGUMENT. */
XLA_FFI_Error* fault_in_place(XLA_FFI_CallFrame* cf) {
  META(cf);
  XLA_FFI_Buffer* x = arg_at(cf, 0);
  XLA_FFI_Buffer* y = ret_at(cf, 0);
  if (!x || !y)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "fault_in_place: x -> x");
  if (x->data != y->data)
    return test_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "fault_in_place: the aliased argument and result are different buffers");
  float* p = y->data;
  for (int64_t i = 0, n = elements(y); i < n; i++) p[i] += 1;
  return NULL;
}

#ifdef FAULT_HANG_IN_CONSTRUCTOR
/* Runs when the library is loaded, before any handler can be called. */
__attribute__((constructor)) static void fault_hang_while_loading(void) {
  for (;;) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}
#endif

/* The number of descriptors open in the calling process (the entries of
 * /proc/self/fd, less the one that lists them), or -1. Counted in the process
 * itself: another process listing them (ls) races with the descriptors its
 * own start opens and closes in this one (the child's standard streams). */
int32_t fault_open_descriptors(char* out, int32_t cap) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int self = dirfd(d);
  int32_t n = 0, used = 0;
  if (out && cap > 0) out[0] = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == self) continue;
    n++;
    if (!out || cap <= 0) continue;
    /* "fd -> target" lines, so that a test can say which descriptors are new. */
    char target[256];
    ssize_t k = readlinkat(self, e->d_name, target, sizeof target - 1);
    target[k > 0 ? k : 0] = 0;
    int w = snprintf(out + used, (size_t)(cap - used), "%s -> %s\n", e->d_name, target);
    if (w > 0 && used + w < cap) used += w;
  }
  closedir(d);
  return n;
}
