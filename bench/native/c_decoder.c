/*
 * c_decoder.c: the C floor. A decoder of any call frame that copies what a
 * handler binding needs (per buffer: dtype, data pointer, rank, dims; per
 * attribute: name, type and value, strings and arrays copied, dictionaries
 * recursively) into a bench_decoded; the handler that wraps it; and the
 * canonical text and digest every contender computes from its own decode.
 *
 * Canonical text (one line per item, each ending in '\n'; numbers decimal,
 * hex lowercase, bytes in memory order):
 *   stage <stage>
 *   args <n>
 *   buf <dtype> <rank> <dims joined by 'x', '-' for rank 0> <hex of the first min(4, nbytes) data bytes>
 *   rets <n>
 *   buf ...
 *   attrs <n>
 *   <name> scalar <dtype> <hex of the value bytes>
 *   <name> array <dtype> <size> <hex of all element bytes>
 *   <name> string <hex of the bytes>
 *   <name> dict <n>        followed by its n entries
 * The digest is the 64-bit FNV-1a hash of that text, as 16 lowercase hex digits.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static int pool_copy(bench_decoded* out, const void* src, size_t n, uint32_t* off) {
  if (out->pool_used + n > BENCH_POOL_BYTES) return -1;
  *off = out->pool_used;
  if (n) memcpy(out->pool + out->pool_used, src, n);
  out->pool_used += (uint32_t)n;
  return 0;
}

static int decode_buffer(const XLA_FFI_Buffer* b, bench_buffer* out) {
  if (b->rank < 0 || b->rank > BENCH_MAX_RANK) return -1;
  out->dtype = (int32_t)b->dtype;
  out->data = b->data;
  out->rank = b->rank;
  for (int64_t i = 0; i < b->rank; i++) out->dims[i] = b->dims[i];
  return 0;
}

static int decode_attrs(const XLA_FFI_Attrs* attrs, bench_decoded* out) {
  for (int64_t i = 0; i < attrs->size; i++) {
    if (out->attr_total >= BENCH_MAX_ATTRS) return -1;
    bench_attr* a = &out->attrs[out->attr_total++];
    const XLA_FFI_ByteSpan* name = attrs->names[i];
    a->type = (int32_t)attrs->types[i];
    a->dtype = 0;
    a->count = 0;
    a->value_off = a->value_len = 0;
    a->name_len = (uint32_t)name->len;
    if (pool_copy(out, name->ptr, name->len, &a->name_off)) return -1;
    switch (attrs->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = attrs->attrs[i];
        int64_t n = (int64_t)xla_ffi_dtype_width(s->dtype);
        if (n == 0) return -1;
        a->dtype = (int32_t)s->dtype;
        a->value_len = (uint32_t)n;
        if (pool_copy(out, s->value, (size_t)n, &a->value_off)) return -1;
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = attrs->attrs[i];
        int64_t n = (int64_t)xla_ffi_dtype_width(arr->dtype);
        if (n == 0) return -1;
        a->dtype = (int32_t)arr->dtype;
        a->count = (int64_t)arr->size;
        a->value_len = (uint32_t)(n * (int64_t)arr->size);
        if (pool_copy(out, arr->data, a->value_len, &a->value_off)) return -1;
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = attrs->attrs[i];
        a->value_len = (uint32_t)s->len;
        if (pool_copy(out, s->ptr, s->len, &a->value_off)) return -1;
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        const XLA_FFI_Attrs* d = attrs->attrs[i];
        a->count = d->size;
        if (decode_attrs(d, out)) return -1;
        break;
      }
      default:
        return -1;
    }
  }
  return 0;
}

__attribute__((noinline)) int bench_decode(const XLA_FFI_CallFrame* frame, bench_decoded* out) {
  int64_t nargs = frame->args.size, nrets = frame->rets.size;
  if (nargs < 0 || nrets < 0 || nargs + nrets > BENCH_MAX_BUFFERS) return -1;
  out->stage = (int32_t)frame->stage;
  out->num_args = (int32_t)nargs;
  out->num_rets = (int32_t)nrets;
  out->num_attrs = (int32_t)frame->attrs.size;
  out->attr_total = 0;
  out->pool_used = 0;
  for (int64_t i = 0; i < nargs; i++) {
    if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) return -1;
    if (decode_buffer(frame->args.args[i], &out->buffers[i])) return -1;
  }
  for (int64_t i = 0; i < nrets; i++) {
    if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) return -1;
    if (decode_buffer(frame->rets.rets[i], &out->buffers[nargs + i])) return -1;
  }
  return decode_attrs(&frame->attrs, out);
}

/* ---- canonical text -------------------------------------------------- */

typedef struct text_out {
  char* buf;
  int64_t cap, len;
} text_out;

static void put(text_out* t, const char* s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (t->len < t->cap) t->buf[t->len] = s[i];
    t->len++;
  }
}

static void puts_(text_out* t, const char* s) { put(t, s, strlen(s)); }

static void put_i64(text_out* t, int64_t v) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  put(t, tmp, (size_t)n);
}

static void put_hex(text_out* t, const unsigned char* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    char two[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
    put(t, two, 2);
  }
}

static void put_buffer(text_out* t, const bench_buffer* b) {
  int64_t elems = 1;
  puts_(t, "buf ");
  put_i64(t, b->dtype);
  puts_(t, " ");
  put_i64(t, b->rank);
  puts_(t, " ");
  if (b->rank == 0) puts_(t, "-");
  for (int64_t i = 0; i < b->rank; i++) {
    if (i) puts_(t, "x");
    put_i64(t, b->dims[i]);
    elems *= b->dims[i];
  }
  int64_t bytes = elems * (int64_t)xla_ffi_dtype_width(b->dtype);
  puts_(t, " ");
  put_hex(t, b->data, (size_t)(bytes < 4 ? bytes : 4));
  puts_(t, "\n");
}

static int64_t put_attrs(text_out* t, const bench_decoded* d, int64_t at, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    const bench_attr* a = &d->attrs[at++];
    put(t, (const char*)d->pool + a->name_off, a->name_len);
    switch (a->type) {
      case XLA_FFI_AttrType_SCALAR:
        puts_(t, " scalar ");
        put_i64(t, a->dtype);
        puts_(t, " ");
        put_hex(t, d->pool + a->value_off, a->value_len);
        puts_(t, "\n");
        break;
      case XLA_FFI_AttrType_ARRAY:
        puts_(t, " array ");
        put_i64(t, a->dtype);
        puts_(t, " ");
        put_i64(t, a->count);
        puts_(t, " ");
        put_hex(t, d->pool + a->value_off, a->value_len);
        puts_(t, "\n");
        break;
      case XLA_FFI_AttrType_STRING:
        puts_(t, " string ");
        put_hex(t, d->pool + a->value_off, a->value_len);
        puts_(t, "\n");
        break;
      default: /* dictionary */
        puts_(t, " dict ");
        put_i64(t, a->count);
        puts_(t, "\n");
        at = put_attrs(t, d, at, a->count);
        break;
    }
  }
  return at;
}

static int64_t canonical_of(const bench_decoded* d, char* out, int64_t cap) {
  text_out t = {out, cap, 0};
  puts_(&t, "stage ");
  put_i64(&t, d->stage);
  puts_(&t, "\nargs ");
  put_i64(&t, d->num_args);
  puts_(&t, "\n");
  for (int32_t i = 0; i < d->num_args; i++) put_buffer(&t, &d->buffers[i]);
  puts_(&t, "rets ");
  put_i64(&t, d->num_rets);
  puts_(&t, "\n");
  for (int32_t i = 0; i < d->num_rets; i++) put_buffer(&t, &d->buffers[d->num_args + i]);
  puts_(&t, "attrs ");
  put_i64(&t, d->num_attrs);
  puts_(&t, "\n");
  put_attrs(&t, d, 0, d->num_attrs);
  return t.len;
}

/* 64-bit FNV-1a of `len` bytes. */
uint64_t bench_fnv1a64(const char* p, int64_t len) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t i = 0; i < len; i++) {
    h ^= (unsigned char)p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* ---- exported entry points ------------------------------------------ */

static _Thread_local bench_decoded t_last;
static _Thread_local int t_last_ok;

/* The C floor as an XLA handler: decodes into this thread's result. Returns
 * a non-NULL sentinel (never dereferenced by the driver) when the decode fails. */
XLA_FFI_Error* bench_c_decode_handler(XLA_FFI_CallFrame* frame) {
  static char failure;
  t_last_ok = bench_decode(frame, &t_last) == 0;
  return t_last_ok ? NULL : (XLA_FFI_Error*)(void*)&failure;
}

/* A handler that does nothing: the cost of the call itself. Like every ffi.h
 * handler it answers the metadata query (API version 0.1, no traits), so a
 * runtime can register it. */
XLA_FFI_Error* bench_noop_handler(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != NULL &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata* m = ((XLA_FFI_Metadata_Extension*)frame->extension_start)->metadata;
    m->api_version.major_version = XLA_FFI_API_MAJOR;
    m->api_version.minor_version = XLA_FFI_API_MINOR;
    m->traits = 0;
  }
  return NULL;
}

/* Canonical text of a fresh decode of `frame` into `out` (up to `cap` bytes);
 * returns the full length, or -1 when the frame does not decode. */
int64_t bench_c_canonical(const XLA_FFI_CallFrame* frame, char* out, int64_t cap) {
  static _Thread_local bench_decoded d;
  if (!frame || bench_decode(frame, &d)) return -1;
  return canonical_of(&d, out, cap);
}

/* Digest of the last decode bench_c_decode_handler made on this thread; 0
 * when there was none or it failed. */
uint64_t bench_c_last_digest(void) {
  static _Thread_local char text[1 << 16];
  if (!t_last_ok) return 0;
  int64_t n = canonical_of(&t_last, text, (int64_t)sizeof text);
  if (n > (int64_t)sizeof text) return 0;
  return bench_fnv1a64(text, n);
}

static pthread_mutex_t g_digest_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_digest;
static int g_digest_state; /* 0 none, 1 recorded, -1 threads disagreed or failed */

/* Driver `after` hook: records this thread's last digest; threads that
 * disagree (or a thread without a good decode) mark the record as failed. */
void bench_c_record_digest(void) {
  uint64_t d = bench_c_last_digest();
  pthread_mutex_lock(&g_digest_mu);
  if (d == 0 || (g_digest_state == 1 && g_digest != d)) {
    g_digest_state = -1;
  } else if (g_digest_state == 0) {
    g_digest = d;
    g_digest_state = 1;
  }
  pthread_mutex_unlock(&g_digest_mu);
}

/* Returns and clears the digest the hook recorded: 0 when none was
 * recorded or the threads disagreed. */
uint64_t bench_c_take_digest(void) {
  pthread_mutex_lock(&g_digest_mu);
  uint64_t d = g_digest_state == 1 ? g_digest : 0;
  g_digest_state = 0;
  g_digest = 0;
  pthread_mutex_unlock(&g_digest_mu);
  return d;
}

/* Addresses of this library's handlers and hooks, for callers that cannot
 * take a symbol's address themselves (Deno, ctypes): 0 the C floor handler,
 * 1 the no-op handler, 2 the bench_c_record_digest hook; NULL otherwise. */
void* bench_c_address(int32_t which) {
  switch (which) {
    case 0:
      return (void*)bench_c_decode_handler;
    case 1:
      return (void*)bench_noop_handler;
    case 2:
      return (void*)bench_c_record_digest;
    default:
      return NULL;
  }
}
