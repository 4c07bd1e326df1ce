/*
 * isolate_protocol.h: what the parent (isolate.c, in the main library) and
 * the child process of an isolated handler library (isolate_child.c) share.
 *
 * One call at a time. The parent writes a request into the first page of a
 * shared memory mapping (a memfd both map), with the frame description and
 * the operands' data after it, and posts it by bumping a sequence number in
 * that page (xiso_sync); the child builds the call frame over the shared
 * operands, calls the handler, writes its reply into the same page and posts
 * the number back. Each side waits for the other's number by spinning a few
 * microseconds, then on a futex (shared, not private: two processes map the
 * page); the poster wakes the futex only when the other side said it sleeps
 * there. The socket stays for what a futex cannot tell: a child that dies
 * closes its end (the parent, between bounded futex waits, sees end of file
 * and reaps it), the child's first answer (ready, or why not) is one byte on
 * it, and a parent that closes it (or dies) ends the child.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_ISOLATE_PROTOCOL_H_
#define DENO_XLA_FFI_ISOLATE_PROTOCOL_H_

#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The child's file descriptors: the socket and the shared memory. */
#define XISO_FD_SOCKET 3
#define XISO_FD_MEMORY 4

/* Requests. */
enum {
  XISO_OP_CALL_SYNC = 1, /* xla_ffi_deno_runtime_call, synchronously: handlers that finish so */
  XISO_OP_CALL = 2,      /* xla_ffi_deno_runtime_call_wait: waits for the handler's future */
  XISO_OP_THREADS = 3,   /* xla_ffi_deno_runtime_call_wait from runtime threads */
  XISO_OP_RESOLVE = 4,   /* whether `symbol` exists */
  XISO_OP_METADATA = 5,  /* xla_ffi_deno_runtime_metadata: the handler's API version, traits, state type id */
  XISO_OP_REGISTER_TYPE = 6, /* registers the type of type id function `symbol` (NAME_type_id) */
};

/* xiso_header.instance: 0 none; KEEP: the kept instance (made when there is none); FRESH: a
 * new one first (the old one's states deleted). */
enum { XISO_INSTANCE_KEEP = 1, XISO_INSTANCE_FRESH = 2 };

/* Reply statuses. */
enum {
  XISO_OK = 0,
  XISO_ERROR = 1, /* code and message */
  XISO_FAULT = 2, /* a guarded operand was written where it must not be (then the child dies) */
};

/* Fault kinds (XISO_FAULT): the operand written next to (or into); the
 * offset from its first byte tells before it (negative), into it or past it. */
enum { XISO_FAULT_RESULT = 1, XISO_FAULT_ARGUMENT = 2 };

/* One operand of a guarded call: where it lies in the mapping. */
typedef struct xiso_operand {
  uint64_t offset;
  uint64_t size;
  uint32_t kind; /* 0 argument, 1 result */
  uint32_t index;
} xiso_operand;

#define XISO_MESSAGE_CAP 2048

/* The first page of the mapping. Offsets are from the mapping's start. */
typedef struct xiso_header {
  /* Request (parent -> child). */
  uint32_t op;
  int32_t minor; /* API version 0.minor */
  int32_t stage;
  int32_t device_ordinal;
  int64_t run_id;
  int32_t threads;
  int32_t guard; /* 1: operands laid out for guards (see isolate_child.c) */
  int64_t iterations;
  uint64_t map_size; /* the mapping's size for this request */
  uint64_t ops_offset;
  uint32_t n_ops;
  uint32_t instance; /* XISO_INSTANCE_*: the child's one kept instance in the call's context */
  uint64_t desc_offset;
  uint64_t desc_length;
  char symbol[256];
  /* Reply (child -> parent). */
  int32_t status;
  int32_t code;
  int64_t ok;
  int64_t failed;
  int32_t fault_kind;
  int32_t fault_index;
  int64_t fault_offset;
  char message[XISO_MESSAGE_CAP];
  int64_t metadata[4]; /* XISO_OP_METADATA: major, minor, traits, state type id */
} xiso_header;

#define XISO_HEADER_BYTES 4096

/* The wake-up words, at XISO_SYNC_OFFSET in the first page (after
 * xiso_header). Each side writes its own cache line. Sequence numbers start
 * at 0 (the memfd is zero-filled) and skip 0 when they wrap; request n is
 * answered when reply == n. */
typedef struct xiso_sync {
  /* Parent's line. */
  uint32_t request;         /* the last request posted */
  uint32_t closing;         /* 1: the parent closes the library; the child exits at the next request */
  uint32_t parent_sleeping; /* 1: the parent waits (or is about to) on `reply` in FUTEX_WAIT */
  uint32_t pad0[13];
  /* Child's line. */
  uint32_t reply;          /* the last request answered */
  uint32_t taken;          /* the last request the child began to serve */
  uint32_t child_sleeping; /* 1: the child waits (or is about to) on `request` in FUTEX_WAIT */
  uint32_t pad1[13];
} xiso_sync;

#define XISO_SYNC_OFFSET 3072

static inline int64_t xiso_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* FUTEX_WAIT while *w == old, at most `ns` (negative: no bound). Shared, not
 * FUTEX_PRIVATE_FLAG: the word is in memory two processes map. */
static inline void xiso_futex_wait(uint32_t* w, uint32_t old, int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  syscall(SYS_futex, w, FUTEX_WAIT, old, ns < 0 ? NULL : &ts, NULL, 0);
}

static inline void xiso_futex_wake(uint32_t* w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

/* Posts `value` in *w, waking the other side if it said it sleeps on it:
 * the flag is taken with an exchange, so one post wakes at most once. */
static inline void xiso_post(uint32_t* w, uint32_t value, uint32_t* sleeping) {
  __atomic_store_n(w, value, __ATOMIC_SEQ_CST);
  if (__atomic_exchange_n(sleeping, 0, __ATOMIC_SEQ_CST)) xiso_futex_wake(w);
}

/* Spins while *w == old for at most `ns` nanoseconds: a short busy wait,
 * then sched_yield (which lets the other side run when both share a CPU).
 * Returns the value last read. */
static inline uint32_t xiso_spin(const uint32_t* w, uint32_t old, int64_t ns) {
  uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  if (v != old || ns <= 0) return v;
  int64_t start = xiso_now_ns();
  for (unsigned i = 1;; i++) {
    if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      __asm__ __volatile__("yield");
#endif
    } else {
      sched_yield();
    }
    v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if (v != old) return v;
    if ((i >= 64 || (i & 15) == 0) && xiso_now_ns() - start >= ns) return v;
  }
}

/* Sleeps on *w while it is `old`, at most `ns`, after saying so in
 * *sleeping (the other side's xiso_post then wakes it); returns *w. */
static inline uint32_t xiso_sleep(uint32_t* w, uint32_t old, uint32_t* sleeping, int64_t ns) {
  __atomic_store_n(sleeping, 1, __ATOMIC_SEQ_CST);
  uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
  if (v == old) {
    xiso_futex_wait(w, old, ns);
    v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  }
  __atomic_store_n(sleeping, 0, __ATOMIC_SEQ_CST);
  return v;
}

#endif /* DENO_XLA_FFI_ISOLATE_PROTOCOL_H_ */
