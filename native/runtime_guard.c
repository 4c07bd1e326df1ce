/*
 * runtime_guard.c: the runtime's defences against bad input from code it does
 * not control (handlers, XLA, users' scripts):
 *
 *  - a registry of the live XLA_FFI_Errors and XLA_FFI_Futures this runtime
 *    created, so that a foreign, freed or twice-released pointer handed to an
 *    API function gives an error instead of undefined behaviour;
 *  - xrt_check_call_frame: a structural check of a whole XLA_FFI_CallFrame
 *    (struct sizes, null pointers, counts, ranks, enum values, attribute
 *    names sorted, unique and UTF-8), with the documented limits of common.h;
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
#include <stdarg.h>
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

#define BAD(...) xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, __VA_ARGS__)

static XLA_FFI_Error* check_buffer(const XLA_FFI_Buffer* b, const char* what, int64_t i,
                                   int execute) {
  if (!b) return BAD("%s %lld: the buffer pointer is null", what, (long long)i);
  if (b->struct_size < XLA_FFI_Buffer_STRUCT_SIZE)
    return BAD("%s %lld: Unexpected XLA_FFI_Buffer size: expected %zu, got %zu", what,
               (long long)i, (size_t)XLA_FFI_Buffer_STRUCT_SIZE, b->struct_size);
  if (!xfd_dtype_valid(b->dtype) && b->dtype != XLA_FFI_DataType_TOKEN)
    return BAD("%s %lld: invalid data type %d", what, (long long)i, (int)b->dtype);
  if (b->rank < 0 || b->rank > XFD_MAX_RANK)
    return BAD("%s %lld: rank %lld is out of range [0, %d]", what, (long long)i,
               (long long)b->rank, XFD_MAX_RANK);
  if (b->rank > 0 && !b->dims)
    return BAD("%s %lld: dims is null for rank %lld", what, (long long)i, (long long)b->rank);
  int64_t elements = 1;
  for (int64_t d = 0; d < b->rank; d++) {
    int64_t v = b->dims[d];
    if (v < 0)
      return BAD("%s %lld: negative dimension %lld at %lld", what, (long long)i, (long long)v,
                 (long long)d);
    if (v != 0 && elements > INT64_MAX / v)
      return BAD("%s %lld: the element count overflows int64", what, (long long)i);
    elements *= v;
  }
  if (execute && elements > 0 && !b->data && b->dtype != XLA_FFI_DataType_TOKEN)
    return BAD("%s %lld: data is null for %lld elements", what, (long long)i,
               (long long)elements);
  return NULL;
}

static XLA_FFI_Error* check_span(const XLA_FFI_ByteSpan* s, size_t limit, const char* what,
                                 const char* where) {
  if (!s) return BAD("%s%s is null", where, what);
  if (s->len > limit)
    return BAD("%s%s length %zu exceeds the limit %zu", where, what, s->len, limit);
  if (s->len > 0 && !s->ptr) return BAD("%s%s is null with length %zu", where, what, s->len);
  return NULL;
}

static int span_cmp(const XLA_FFI_ByteSpan* x, const XLA_FFI_ByteSpan* y) {
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
  if (c) return c;
  return (x->len > y->len) - (x->len < y->len);
}

static XLA_FFI_Error* check_attrs(const XLA_FFI_Attrs* a, int depth) {
  if (depth > XFD_MAX_DEPTH)
    return BAD("attributes nest deeper than the limit %d", XFD_MAX_DEPTH);
  if (a->struct_size < XLA_FFI_Attrs_STRUCT_SIZE)
    return BAD("Unexpected XLA_FFI_Attrs size: expected %zu, got %zu",
               (size_t)XLA_FFI_Attrs_STRUCT_SIZE, a->struct_size);
  if (a->size < 0 || a->size > XFD_MAX_ATTRS)
    return BAD("attribute count %lld is out of range [0, %d]", (long long)a->size,
               XFD_MAX_ATTRS);
  if (a->size > 0 && (!a->types || !a->names || !a->attrs))
    return BAD("attributes: types, names or attrs is null for %lld attributes",
               (long long)a->size);
  for (int64_t i = 0; i < a->size; i++) {
    char where[48];
    snprintf(where, sizeof where, "attribute %lld: ", (long long)i);
    XLA_FFI_Error* e = check_span(a->names[i], XFD_MAX_NAME, "name", where);
    if (e) return e;
    const XLA_FFI_ByteSpan* nm = a->names[i];
    if (!xfd_utf8_valid((const unsigned char*)nm->ptr, nm->len))
      return BAD("%sthe name is not valid UTF-8", where);
    if (i > 0 && span_cmp(a->names[i - 1], nm) >= 0)
      return BAD("%sname '%.*s' is not after '%.*s' (names must be sorted and unique)", where,
                 (int)nm->len, nm->ptr, (int)a->names[i - 1]->len, a->names[i - 1]->ptr);
    const void* v = a->attrs[i];
    if (!v) return BAD("%s'%.*s' has a null value", where, (int)nm->len, nm->ptr);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = v;
        if (!xfd_dtype_valid(s->dtype))
          return BAD("%s'%.*s': invalid scalar data type %d", where, (int)nm->len, nm->ptr,
                     (int)s->dtype);
        if (!s->value) return BAD("%s'%.*s': the scalar value is null", where, (int)nm->len,
                                  nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = v;
        if (!xfd_dtype_valid(arr->dtype))
          return BAD("%s'%.*s': invalid array data type %d", where, (int)nm->len, nm->ptr,
                     (int)arr->dtype);
        if (arr->size > XFD_MAX_ARRAY)
          return BAD("%s'%.*s': array size %zu exceeds the limit %lld", where, (int)nm->len,
                     nm->ptr, arr->size, (long long)XFD_MAX_ARRAY);
        if (arr->size > 0 && !arr->data)
          return BAD("%s'%.*s': the array data is null", where, (int)nm->len, nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        e = check_span(v, XFD_MAX_STRING, "string", where);
        if (e) return e;
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        e = check_attrs(v, depth + 1);
        if (e) return e;
        break;
      default:
        return BAD("%s'%.*s': invalid attribute type %d", where, (int)nm->len, nm->ptr,
                   (int)a->types[i]);
    }
  }
  return NULL;
}

/**
 * Checks a call frame's structure; NULL when it is well formed, else an
 * INVALID_ARGUMENT error that names the first problem. The limits are the
 * XFD_MAX_* values in common.h (docs/reliability.md, "Guards").
 */
XLA_FFI_Error* xrt_check_call_frame(const XLA_FFI_CallFrame* cf) {
  if (!cf) return BAD("The call frame is null");
  if (cf->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)
    return BAD("Unexpected XLA_FFI_CallFrame size: expected %zu, got %zu",
               (size_t)XLA_FFI_CallFrame_STRUCT_SIZE, cf->struct_size);
  if (!cf->api) return BAD("The call frame's api is null");
  if (cf->api->struct_size < XLA_FFI_Api_STRUCT_SIZE)
    return BAD("Unexpected XLA_FFI_Api size: expected %zu, got %zu",
               (size_t)XLA_FFI_Api_STRUCT_SIZE, cf->api->struct_size);
  if (!cf->ctx) return BAD("The call frame's execution context is null");
  if (cf->ctx->magic != XRT_CTX_MAGIC)
    return BAD("The call frame's execution context was not created by this runtime");
  if ((uint32_t)cf->stage > (uint32_t)XLA_FFI_ExecutionStage_EXECUTE)
    return BAD("Invalid execution stage %d", (int)cf->stage);
  int execute = cf->stage == XLA_FFI_ExecutionStage_EXECUTE;
  const XLA_FFI_Args* args = &cf->args;
  if (args->struct_size < XLA_FFI_Args_STRUCT_SIZE)
    return BAD("Unexpected XLA_FFI_Args size: expected %zu, got %zu",
               (size_t)XLA_FFI_Args_STRUCT_SIZE, args->struct_size);
  if (args->size < 0 || args->size > XFD_MAX_OPERANDS)
    return BAD("argument count %lld is out of range [0, %d]", (long long)args->size,
               XFD_MAX_OPERANDS);
  if (args->size > 0 && (!args->types || !args->args))
    return BAD("args: types or args is null for %lld arguments", (long long)args->size);
  for (int64_t i = 0; i < args->size; i++) {
    if (args->types[i] != XLA_FFI_ArgType_BUFFER)
      return BAD("argument %lld: invalid argument type %d", (long long)i, (int)args->types[i]);
    XLA_FFI_Error* e = check_buffer(args->args[i], "argument", i, execute);
    if (e) return e;
  }
  const XLA_FFI_Rets* rets = &cf->rets;
  if (rets->struct_size < XLA_FFI_Rets_STRUCT_SIZE)
    return BAD("Unexpected XLA_FFI_Rets size: expected %zu, got %zu",
               (size_t)XLA_FFI_Rets_STRUCT_SIZE, rets->struct_size);
  if (rets->size < 0 || rets->size > XFD_MAX_OPERANDS)
    return BAD("result count %lld is out of range [0, %d]", (long long)rets->size,
               XFD_MAX_OPERANDS);
  if (rets->size > 0 && (!rets->types || !rets->rets))
    return BAD("rets: types or rets is null for %lld results", (long long)rets->size);
  for (int64_t i = 0; i < rets->size; i++) {
    if (rets->types[i] != XLA_FFI_RetType_BUFFER)
      return BAD("result %lld: invalid result type %d", (long long)i, (int)rets->types[i]);
    XLA_FFI_Error* e = check_buffer(rets->rets[i], "result", i, execute);
    if (e) return e;
  }
  return check_attrs(&cf->attrs, 0);
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
void* xrt_guard_map(double size) {
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

/** Unmaps guard memory from xrt_guard_map with the same `size`; 0 on success. */
int32_t xrt_guard_unmap(void* p, double size) {
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
int32_t xrt_guard_check(void* base, const double* zones, int32_t n, double* out) {
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
double xrt_guard_difference(const void* a, const void* b, double n) {
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
