/*
 * runtime_guard.c: the runtime's defences against bad input from code it does
 * not control (handlers, XLA, users' scripts):
 *
 *  - a registry of the live XLA_FFI_Errors and XLA_FFI_Futures this runtime
 *    created, so that a foreign, freed or twice-released pointer handed to an
 *    API function gives an error instead of undefined behaviour;
 *  - xla_ffi_deno_runtime_check_call_frame: the structural check of a whole XLA_FFI_CallFrame
 *    (common.c's xfd_check_frame, shared with the TS handler host) as an
 *    XLA_FFI_Error;
 *  - guard memory for guarded frames in the caller's process
 *    (src/runtime/_guard.ts): a mapping of its own, away from the
 *    allocator's heap, between two inaccessible pages.
 *
 * What cannot be checked in-process: non-null pointers to unmapped or unrelated
 * memory (wild pointers), function pointers, and buffer data sizes (a call
 * frame does not carry them). Those stay the caller's contract, as in XLA.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime_internal.h"

/* ------------------------------------------------------------------------ */
/* Live-object registry: sharded open-addressing hash sets of pointers       */
/* ------------------------------------------------------------------------ */

#define XRT_SHARDS 64

typedef struct {
  pthread_mutex_t mu;
  uintptr_t* slots; /* key = pointer | kind; 0 = empty */
  size_t cap;       /* power of two */
  size_t n;
} live_shard;

static live_shard shards[XRT_SHARDS];
static pthread_once_t shards_once = PTHREAD_ONCE_INIT;

static void shards_init(void) {
  for (int i = 0; i < XRT_SHARDS; i++) pthread_mutex_init(&shards[i].mu, NULL);
}

static uint64_t mix(uintptr_t p) {
  uint64_t h = (uint64_t)p >> 4;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

static live_shard* shard_of(const void* p) {
  pthread_once(&shards_once, shards_init);
  return &shards[mix((uintptr_t)p) % XRT_SHARDS];
}

static size_t home(const live_shard* s, uintptr_t key) {
  return (size_t)(mix(key & ~(uintptr_t)7) >> 6) & (s->cap - 1);
}

static void raw_insert(live_shard* s, uintptr_t key) {
  size_t i = home(s, key);
  while (s->slots[i]) i = (i + 1) & (s->cap - 1);
  s->slots[i] = key;
  s->n++;
}

static void grow(live_shard* s) {
  size_t old_cap = s->cap;
  uintptr_t* old = s->slots;
  s->cap = old_cap ? old_cap * 2 : 64;
  s->slots = calloc(s->cap, sizeof(uintptr_t));
  if (!s->slots) abort();
  s->n = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) raw_insert(s, old[i]);
  free(old);
}

static long find(const live_shard* s, uintptr_t key) {
  if (!s->cap) return -1;
  for (size_t i = home(s, key);; i = (i + 1) & (s->cap - 1)) {
    if (s->slots[i] == key) return (long)i;
    if (!s->slots[i]) return -1;
  }
}

void xrt_live_add(const void* p, int kind) {
  live_shard* s = shard_of(p);
  pthread_mutex_lock(&s->mu);
  if (2 * (s->n + 1) > s->cap) grow(s);
  raw_insert(s, (uintptr_t)p | (uintptr_t)kind);
  pthread_mutex_unlock(&s->mu);
}

/* Removes with backward-shift deletion (no tombstones); 1 if it was live. */
static int remove_locked(live_shard* s, uintptr_t key) {
  long at = find(s, key);
  if (at < 0) return 0;
  size_t i = (size_t)at, mask = s->cap - 1;
  s->slots[i] = 0;
  for (size_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
    size_t k = home(s, s->slots[j]);
    /* Leave slots[j] if its home lies cyclically in (i, j]. */
    int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (!stays) {
      s->slots[i] = s->slots[j];
      s->slots[j] = 0;
      i = j;
    }
  }
  s->n--;
  return 1;
}

int xrt_live_remove(const void* p, int kind) {
  if (!p) return 0;
  live_shard* s = shard_of(p);
  pthread_mutex_lock(&s->mu);
  int r = remove_locked(s, (uintptr_t)p | (uintptr_t)kind);
  pthread_mutex_unlock(&s->mu);
  return r;
}

int xrt_live_has(const void* p, int kind) {
  if (!p || ((uintptr_t)p & 7)) return 0;
  live_shard* s = shard_of(p);
  pthread_mutex_lock(&s->mu);
  int r = find(s, (uintptr_t)p | (uintptr_t)kind) >= 0;
  pthread_mutex_unlock(&s->mu);
  return r;
}

/* Locks p's shard and reports whether p is live: the object cannot be
 * released (xrt_live_remove blocks) until xrt_live_unlock. */
int xrt_live_lock(const void* p, int kind) {
  live_shard* s = shard_of(p);
  pthread_mutex_lock(&s->mu);
  if (!p || ((uintptr_t)p & 7)) return 0;
  return find(s, (uintptr_t)p | (uintptr_t)kind) >= 0;
}

void xrt_live_unlock(const void* p) { pthread_mutex_unlock(&shard_of(p)->mu); }

/* ------------------------------------------------------------------------ */
/* Call frame check                                                          */
/* ------------------------------------------------------------------------ */

/**
 * Checks a call frame's structure with the shared check (common.c); NULL
 * when it is well formed, else an INVALID_ARGUMENT error that names the first
 * problem. The limits are the XFD_MAX_* values of abi_facts.h
 * (docs/reliability.md, "Guards").
 */
XLA_FFI_Error* xla_ffi_deno_runtime_check_call_frame(const XLA_FFI_CallFrame* cf) {
  static const xfd_frame_rules rules = {.whole = 1, .own = 1, .ctx_tag = XRT_CTX_MAGIC};
  char buf[1024];
  int32_t code = xfd_check_frame(cf, &rules, buf, sizeof buf);
  return code ? xrt_error_new((XLA_FFI_Error_Code)code, "%s", buf) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Guard memory                                                              */
/* ------------------------------------------------------------------------ */

static size_t page_size(void) {
  static size_t page;
  if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
  return page;
}

/**
 * Guard memory of `size` bytes (rounded up to whole pages, zeroed) in an
 * anonymous mapping of its own with an inaccessible page before and after
 * it; NULL when `size` is not positive or the mapping fails. A stray write
 * near the memory lands in it (the caller's canaries tell), never in the
 * allocator's metadata; one beyond a whole page of it faults instead of
 * corrupting whatever lies there.
 */
void* xla_ffi_deno_runtime_guard_map(double size) {
  size_t page = page_size();
  if (!(size > 0) || size > (double)(SIZE_MAX / 2)) return NULL;
  size_t bytes = ((size_t)size + page - 1) & ~(page - 1);
  uint8_t* p = mmap(NULL, bytes + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (mprotect(p + page, bytes, PROT_READ | PROT_WRITE) != 0) {
    munmap(p, bytes + 2 * page);
    return NULL;
  }
  return p + page;
}

/** Unmaps guard memory from xla_ffi_deno_runtime_guard_map with the same `size`; 0 on success. */
int32_t xla_ffi_deno_runtime_guard_unmap(void* p, double size) {
  size_t page = page_size();
  if (!p || !(size > 0)) return -1;
  size_t bytes = ((size_t)size + page - 1) & ~(page - 1);
  return munmap((uint8_t*)p - page, bytes + 2 * page) == 0 ? 0 : -1;
}

/* Canary byte k of guard memory (k from its start): the pattern the caller
 * (src/runtime/_guard.ts, _canaryByte) writes; it repeats every 256 bytes. */
#define GUARD_PERIOD 256
#define GUARD_CHUNK 8192 /* bytes compared at once (a zone is a page and a little) */
static uint8_t guard_pattern[GUARD_CHUNK + GUARD_PERIOD];
static pthread_once_t guard_pattern_once = PTHREAD_ONCE_INIT;

static void guard_pattern_init(void) {
  for (int i = 0; i < GUARD_CHUNK + GUARD_PERIOD; i++)
    guard_pattern[i] = (uint8_t)((0xcb + i * 37) & 0xff);
}

/* Compares [from, from + len) of guard memory `base` with its canaries; the
 * first changed byte's offset from `base`, or -1. A changed zone is restored. */
static int64_t guard_zone(uint8_t* base, size_t from, size_t len) {
  int64_t first = -1;
  for (size_t done = 0; done < len;) {
    size_t k = from + done, phase = k % GUARD_PERIOD;
    size_t n = len - done < GUARD_CHUNK ? len - done : GUARD_CHUNK;
    const uint8_t* want = guard_pattern + phase;
    if (memcmp(base + k, want, n) != 0) {
      if (first < 0) {
        size_t i = 0;
        while (base[k + i] == want[i]) i++;
        first = (int64_t)(k + i);
      }
      memcpy(base + k, want, n);
    }
    done += n;
  }
  return first;
}

/**
 * Checks the canary zones of guard memory `base`: `zones` holds n pairs
 * (offset, length) of byte ranges; every changed zone is restored. Returns
 * the index of the first changed zone, with the offset of its first changed
 * byte (from `base`) in out[0]; -1 when all are whole.
 */
int32_t xla_ffi_deno_runtime_guard_check(void* base, const double* zones, int32_t n, double* out) {
  pthread_once(&guard_pattern_once, guard_pattern_init);
  int32_t hit = -1;
  for (int32_t z = 0; z < n; z++) {
    int64_t at = guard_zone(base, (size_t)zones[2 * z], (size_t)zones[2 * z + 1]);
    if (at >= 0 && hit < 0) {
      hit = z;
      out[0] = (double)at;
    }
  }
  return hit;
}

/** The first byte offset where a[0, n) and b[0, n) differ, or -1. */
double xla_ffi_deno_runtime_guard_difference(const void* a, const void* b, double n) {
  const uint8_t *x = a, *y = b;
  size_t len = (size_t)n;
  for (size_t done = 0; done < len; done += 4096) {
    size_t m = len - done < 4096 ? len - done : 4096;
    if (memcmp(x + done, y + done, m) == 0) continue;
    size_t i = done;
    while (x[i] == y[i]) i++;
    return (double)i;
  }
  return -1;
}
