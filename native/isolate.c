/*
 * isolate.c: the parent's side of isolated handler libraries: starting the
 * child process (isolate_child.c) with a socket and a shared memory mapping,
 * one request at a time with a deadline, and what is known when the child
 * died (its wait status and the head of what it wrote to stderr).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate_protocol.h"
#include "xla_ffi.h"

#include <stddef.h>

/* The TypeScript side (src/runtime/isolate.ts) reads and writes the header at these offsets. */
_Static_assert(offsetof(xiso_header, symbol) == 80, "xiso_header layout");
_Static_assert(offsetof(xiso_header, status) == 336, "xiso_header layout");
_Static_assert(offsetof(xiso_header, fault_offset) == 368, "xiso_header layout");
_Static_assert(offsetof(xiso_header, message) == 376, "xiso_header layout");
_Static_assert(offsetof(xiso_header, metadata) == 2424, "xiso_header layout");
_Static_assert(sizeof(xiso_operand) == 24, "xiso_operand layout");
_Static_assert(sizeof(xiso_header) <= XISO_SYNC_OFFSET, "xiso_header size");
_Static_assert(XISO_SYNC_OFFSET + sizeof(xiso_sync) <= XISO_HEADER_BYTES, "xiso_sync size");
_Static_assert(offsetof(xiso_sync, reply) == 64, "xiso_sync layout");

/* How long the parent spins for an answer before it sleeps on the futex:
 * long enough for a short handler on a child that was awake, short enough
 * not to take a core from it on a busy machine. */
#define XISO_SPIN_NS 4000
/* The bounds of one futex sleep while waiting for an answer: between two,
 * the socket is checked for the child's death and its stderr drained. The
 * first is short (a child that died while idle is told quickly); each next
 * one doubles, up to the longest. */
#define XISO_SLICE_FIRST_NS 200000
#define XISO_SLICE_MAX_NS 10000000

#define XISO_STDERR_CAP 65536
#define XISO_HEAD_CAP 4096

typedef struct xiso {
  pid_t pid;
  int sock;
  int err_fd;
  int mem_fd;
  uint8_t* base;
  size_t size;
  uint32_t seq; /* the last request posted */
  int wstatus;
  int reaped;
  size_t err_len;
  char err[XISO_STDERR_CAP];
  int keep;          /* 1: what the child writes is kept, not passed on */
  int64_t out_bytes; /* what the child wrote, since the last xla_ffi_deno_isolate_output */
  int64_t out_lines;
  size_t head_len; /* the first bytes of it (kept mode) */
  char head[XISO_HEAD_CAP];
} xiso;

static int high_fd(int fd) {
  if (fd < 0) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return h;
}

static void fail(char* msg, int32_t cap, const char* what) {
  if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", what, strerror(errno));
}

/* What the child wrote to stderr (kept up to XISO_STDERR_CAP bytes per call). */
static int drain(xiso* x) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(x->err_fd, buf, sizeof buf);
    if (n > 0) {
      x->out_bytes += n;
      for (ssize_t i = 0; i < n; i++) x->out_lines += buf[i] == '\n';
      size_t room = XISO_STDERR_CAP - 1 - x->err_len;
      size_t k = (size_t)n < room ? (size_t)n : room;
      memcpy(x->err + x->err_len, buf, k);
      x->err_len += k;
      continue;
    }
    if (n == 0) return 0; /* end of file */
    if (errno == EINTR) continue;
    return 1; /* EAGAIN: nothing more now */
  }
}

/* Hands what the child wrote to stderr during a call that went well to this
 * process's stderr, so handlers' own output is not lost. */
static void pass_on(xiso* x) {
  if (x->keep) {
    size_t k = XISO_HEAD_CAP - x->head_len;
    if (k > x->err_len) k = x->err_len;
    memcpy(x->head + x->head_len, x->err, k);
    x->head_len += k;
    x->err_len = 0;
    return;
  }
  size_t off = 0;
  while (off < x->err_len) {
    ssize_t n = write(2, x->err + off, x->err_len - off);
    if (n <= 0) break;
    off += (size_t)n;
  }
  x->err_len = 0;
}

static void reap(xiso* x, int kill_first) {
  if (x->reaped || x->pid <= 0) return;
  if (kill_first) kill(x->pid, SIGKILL);
  while (waitpid(x->pid, &x->wstatus, 0) < 0 && errno == EINTR) {
  }
  x->reaped = 1;
}

/**
 * Starts the child: `argv` is its NUL-separated argument list (program path
 * first) and `envp` its NUL-separated environment, each ended by an empty
 * string. Maps `size` bytes of shared memory (at least a page). Returns the
 * handle, or NULL with the reason in msg.
 */
xiso* xla_ffi_deno_isolate_start(const char* argv_block, const char* env_block, int64_t size,
                                 char* msg, int32_t cap) {
  if (!argv_block || !env_block || size < XISO_HEADER_BYTES) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "xla_ffi_deno_isolate_start: bad arguments");
    return NULL;
  }
  char* argv[16];
  int argc = 0;
  for (const char* p = argv_block; *p && argc < 15; p += strlen(p) + 1) argv[argc++] = (char*)p;
  argv[argc] = NULL;
  int envc = 0;
  for (const char* p = env_block; *p; p += strlen(p) + 1) envc++;
  char** envp = calloc((size_t)envc + 1, sizeof(char*));
  if (!envp) {
    fail(msg, cap, "Out of memory");
    return NULL;
  }
  envc = 0;
  for (const char* p = env_block; *p; p += strlen(p) + 1) envp[envc++] = (char*)p;
  xiso* x = calloc(1, sizeof *x);
  if (!x) {
    free(envp);
    fail(msg, cap, "Out of memory");
    return NULL;
  }
  x->sock = x->err_fd = x->mem_fd = -1;
  int sv[2] = {-1, -1}, ep[2] = {-1, -1};
  int child_mem = -1;
  posix_spawn_file_actions_t fa;
  int fa_ok = 0;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    fail(msg, cap, "socketpair");
    goto error;
  }
  sv[0] = high_fd(sv[0]);
  sv[1] = high_fd(sv[1]);
  if (pipe2(ep, O_CLOEXEC) != 0) {
    fail(msg, cap, "pipe");
    goto error;
  }
  ep[0] = high_fd(ep[0]);
  ep[1] = high_fd(ep[1]);
  x->mem_fd = high_fd(memfd_create("xla_ffi_deno_isolate", MFD_CLOEXEC));
  if (x->mem_fd < 0 || ftruncate(x->mem_fd, size) != 0) {
    fail(msg, cap, "Creating the shared memory");
    goto error;
  }
  x->base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, x->mem_fd, 0);
  if (x->base == MAP_FAILED) {
    x->base = NULL;
    fail(msg, cap, "Mapping the shared memory");
    goto error;
  }
  x->size = (size_t)size;
  child_mem = x->mem_fd;
  if (sv[0] < 0 || sv[1] < 0 || ep[0] < 0 || ep[1] < 0) {
    fail(msg, cap, "Duplicating descriptors");
    goto error;
  }
  if (posix_spawn_file_actions_init(&fa) != 0) goto error;
  fa_ok = 1;
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
  posix_spawn_file_actions_adddup2(&fa, sv[1], XISO_FD_SOCKET);
  posix_spawn_file_actions_adddup2(&fa, child_mem, XISO_FD_MEMORY);
  int rc = posix_spawn(&x->pid, argv[0], &fa, NULL, argv, envp);
  if (rc != 0) {
    errno = rc;
    fail(msg, cap, argv[0]);
    x->pid = 0;
    goto error;
  }
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  close(ep[1]);
  free(envp);
  x->sock = sv[0];
  x->err_fd = ep[0];
  fcntl(x->err_fd, F_SETFL, fcntl(x->err_fd, F_GETFL) | O_NONBLOCK);
  return x;
error:
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  for (int i = 0; i < 2; i++) {
    if (sv[i] >= 0) close(sv[i]);
    if (ep[i] >= 0) close(ep[i]);
  }
  if (x->base) munmap(x->base, x->size);
  if (x->mem_fd >= 0) close(x->mem_fd);
  free(x);
  free(envp);
  return NULL;
}

/** The shared mapping's address now (it moves when it grows). */
void* xla_ffi_deno_isolate_base(xiso* x) { return x ? x->base : NULL; }

/** Grows the shared mapping to at least `size` bytes; its new address, or NULL. */
void* xla_ffi_deno_isolate_reserve(xiso* x, int64_t size) {
  if (!x || size <= 0) return NULL;
  if ((size_t)size <= x->size) return x->base;
  if (ftruncate(x->mem_fd, size) != 0) return NULL;
  void* p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, x->mem_fd, 0);
  if (p == MAP_FAILED) return NULL;
  munmap(x->base, x->size);
  x->base = p;
  x->size = (size_t)size;
  return p;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the child's one-byte answer. 0: it came; 1: the child died
 * (reaped); 2: the deadline passed (the child is killed and reaped); -1: an
 * I/O error (the child is killed). */
static int32_t wait_answer(xiso* x, int32_t timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  int err_open = 1;
  for (;;) {
    struct pollfd fds[2] = {{x->sock, POLLIN, 0}, {x->err_fd, POLLIN, 0}};
    int wait = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      if (left <= 0) {
        reap(x, 1);
        drain(x);
        return 2;
      }
      wait = left > INT32_MAX ? INT32_MAX : (int)left;
    }
    int n = poll(fds, err_open ? 2 : 1, wait);
    if (n < 0) {
      if (errno == EINTR) continue;
      reap(x, 1);
      return -1;
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      if (drain(x) == 0) err_open = 0;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char b;
      ssize_t r = read(x->sock, &b, 1);
      if (r == 1) {
        drain(x);
        return 0;
      }
      if (r < 0 && errno == EINTR) continue;
      /* End of file: the child is gone. Read what it said, then reap it. */
      while (err_open) {
        struct pollfd e = {x->err_fd, POLLIN, 0};
        if (poll(&e, 1, 1000) <= 0 || drain(x) == 0) break;
      }
      reap(x, 0);
      return 1;
    }
  }
}

/** Waits for the child to be ready (its first answer); as xla_ffi_deno_isolate_call. */
int32_t xla_ffi_deno_isolate_ready(xiso* x, int32_t timeout_ms) {
  if (!x || x->reaped) return -1;
  x->err_len = 0;
  int32_t r = wait_answer(x, timeout_ms);
  if (r == 0) pass_on(x);
  return r;
}

static xiso_sync* sync_of(xiso* x) { return (xiso_sync*)(x->base + XISO_SYNC_OFFSET); }

/* The child's socket between the posting of request `seq` and its answer
 * (the child writes nothing on it then). 0: nothing; otherwise, as
 * wait_reply: 1 the child died (reaped) while serving the request, 3 it had
 * died before taking it (reaped), -1 it wrote a byte (killed). */
static int32_t check_child(xiso* x, uint32_t seq, int* err_open) {
  struct pollfd fds[2] = {{x->sock, POLLIN, 0}, {x->err_fd, POLLIN, 0}};
  int n;
  do {
    n = poll(fds, *err_open ? 2 : 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    reap(x, 1);
    return -1;
  }
  if (*err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
    if (drain(x) == 0) *err_open = 0;
  }
  if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) return 0;
  /* Answered just before it ended: the answer stands (the next request finds it gone). */
  if (__atomic_load_n(&sync_of(x)->reply, __ATOMIC_ACQUIRE) == seq) return 0;
  /* End of file: the child is gone (its descriptors close before it can be
   * reaped): read what it said, then reap it. A byte instead breaks the
   * protocol: it is killed then. */
  char b;
  ssize_t r;
  do {
    r = recv(x->sock, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  } while (r < 0 && errno == EINTR);
  if (r > 0) {
    reap(x, 1);
    drain(x);
    return -1;
  }
  for (int i = 0; i < 100 && *err_open; i++) {
    struct pollfd e = {x->err_fd, POLLIN, 0};
    if (poll(&e, 1, 10) <= 0 || drain(x) == 0) break;
  }
  reap(x, 0);
  return __atomic_load_n(&sync_of(x)->taken, __ATOMIC_ACQUIRE) == seq ? 1 : 3;
}

/* The number of the next request: never 0 (the child's "no request yet"). */
static uint32_t next_seq(xiso* x) {
  if (++x->seq == 0) x->seq = 1;
  return x->seq;
}

/* Waits for the answer to request `seq` (`prev` answered before it): a short
 * spin, then futex sleeps of growing bounds, checking the socket between
 * them. Returns as xla_ffi_deno_isolate_call. */
static int32_t wait_reply(xiso* x, uint32_t prev, uint32_t seq, int32_t timeout_ms) {
  xiso_sync* s = sync_of(x);
  int64_t deadline = timeout_ms < 0 ? -1 : xiso_now_ns() + (int64_t)timeout_ms * 1000000;
  int64_t slice = XISO_SLICE_FIRST_NS;
  int err_open = 1;
  uint32_t v = xiso_spin(&s->reply, prev, XISO_SPIN_NS);
  for (;;) {
    if (v == seq) {
      drain(x);
      return 0;
    }
    int64_t bound = slice;
    if (deadline >= 0) {
      int64_t left = deadline - xiso_now_ns();
      if (left <= 0) {
        reap(x, 1);
        drain(x);
        return 2;
      }
      if (left < bound) bound = left;
    }
    v = xiso_sleep(&s->reply, v, &s->parent_sleeping, bound);
    if (v == seq) continue;
    int32_t gone = check_child(x, seq, &err_open);
    if (gone != 0) return gone;
    v = __atomic_load_n(&s->reply, __ATOMIC_ACQUIRE);
    if (slice < XISO_SLICE_MAX_NS) slice *= 2;
  }
}

/**
 * Posts the request in the shared header and waits for the answer, at most
 * `timeout_ms` (negative: no deadline). Returns 0 (answer in the header), 1
 * (the child died: xla_ffi_deno_isolate_exit), 2 (deadline passed: the child
 * was killed), 3 (the child had died before the request, while idle: it did
 * not take it; xla_ffi_deno_isolate_exit and xla_ffi_deno_isolate_stderr say
 * how) or -1 (I/O error: the child was killed). Run it `nonblocking` from JS for Runtime.call; on the JS thread
 * (callSync) the deadline bounds the wait.
 */
int32_t xla_ffi_deno_isolate_call(xiso* x, int32_t timeout_ms) {
  if (!x || x->reaped) return -1;
  x->err_len = 0;
  xiso_sync* s = sync_of(x);
  uint32_t prev = x->seq, seq = next_seq(x);
  xiso_post(&s->request, seq, &s->child_sleeping);
  int32_t r = wait_reply(x, prev, seq, timeout_ms);
  if (r == 0) pass_on(x);
  return r;
}

/** After a death: out[0] = the exit status (-1 if signalled), out[1] = the signal (0 if none). */
void xla_ffi_deno_isolate_exit(xiso* x, int32_t* out) {
  out[0] = -1;
  out[1] = 0;
  if (!x || !x->reaped) return;
  if (WIFEXITED(x->wstatus)) out[0] = WEXITSTATUS(x->wstatus);
  if (WIFSIGNALED(x->wstatus)) out[1] = WTERMSIG(x->wstatus);
}

/** Copies what the child wrote to stderr during the last request; returns its length. */
int32_t xla_ffi_deno_isolate_stderr(xiso* x, uint8_t* buf, int32_t cap) {
  if (!x || !buf || cap <= 0) return 0;
  size_t n = x->err_len < (size_t)cap ? x->err_len : (size_t)cap;
  memcpy(buf, x->err, n);
  return (int32_t)n;
}

/** 1: what the child writes (stdout is its stderr then) is kept and counted, not passed on. */
void xla_ffi_deno_isolate_keep_output(xiso* x, int32_t keep) {
  if (x) x->keep = keep != 0;
}

/**
 * What the child wrote since the last call: counts[0] bytes, counts[1]
 * lines; copies its first bytes (kept mode) to buf and returns their length.
 */
int32_t xla_ffi_deno_isolate_output(xiso* x, int64_t* counts, uint8_t* buf, int32_t cap) {
  counts[0] = counts[1] = 0;
  if (!x) return 0;
  counts[0] = x->out_bytes;
  counts[1] = x->out_lines;
  size_t n = buf && cap > 0 ? (x->head_len < (size_t)cap ? x->head_len : (size_t)cap) : 0;
  if (n > 0) memcpy(buf, x->head, n);
  x->out_bytes = x->out_lines = 0;
  x->head_len = 0;
  return (int32_t)n;
}

/** The child's process id (0 when none). */
int32_t xla_ffi_deno_isolate_pid(xiso* x) { return x && !x->reaped ? (int32_t)x->pid : 0; }

/** Ends the child (asking it to exit, then closing its socket; killed if it does not exit within 1 s) and frees everything. */
void xla_ffi_deno_isolate_close(xiso* x) {
  if (!x) return;
  if (!x->reaped && x->base) {
    xiso_sync* s = sync_of(x);
    __atomic_store_n(&s->closing, 1, __ATOMIC_SEQ_CST);
    xiso_post(&s->request, next_seq(x), &s->child_sleeping);
  }
  if (x->sock >= 0) close(x->sock);
  if (!x->reaped && x->pid > 0) {
    int64_t deadline = now_ms() + 1000;
    for (;;) {
      pid_t r = waitpid(x->pid, &x->wstatus, WNOHANG);
      if (r == x->pid) {
        x->reaped = 1;
        break;
      }
      if (r < 0 && errno != EINTR) break;
      if (now_ms() >= deadline) {
        reap(x, 1);
        break;
      }
      struct timespec ts = {0, 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  if (x->err_fd >= 0) close(x->err_fd);
  if (x->base) munmap(x->base, x->size);
  if (x->mem_fd >= 0) close(x->mem_fd);
  free(x);
}

/* What an isolated library's handler is in this process: a handler that
 * fails when it is called here (it runs only in the library's process). */
static XLA_FFI_Error* isolated_stub(XLA_FFI_CallFrame* cf) {
  if (!cf) return NULL;
  /* The metadata query of a registration: the runtime's own version, traits
   * 0 (registering by name works; Runtime.callSync and friends then call the
   * isolated handler registered under the name in its process). */
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)cf->extension_start;
    ext->metadata->api_version.major_version = 0;
    ext->metadata->api_version.minor_version = cf->api ? cf->api->api_version.minor_version : 1;
    ext->metadata->traits = 0;
    return NULL;
  }
  if (!cf->api) return NULL;
  XLA_FFI_Error_Create_Args a = {
      XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL,
      "This handler belongs to an isolated handler library: it runs in that library's process, "
      "through Runtime.callSync, call or callOnThreads (directly or by a name registered with "
      "Runtime.register), never in this process",
      XLA_FFI_Error_Code_FAILED_PRECONDITION};
  return cf->api->XLA_FFI_Error_Create(&a);
}

/** The address of the stand-in handler of isolated libraries' handlers. */
void* xla_ffi_deno_isolate_stub(void) { return (void*)(uintptr_t)&isolated_stub; }

/** The page size (the unit of guard pages in the child). */
int32_t xla_ffi_deno_isolate_page_size(void) { return (int32_t)sysconf(_SC_PAGESIZE); }
