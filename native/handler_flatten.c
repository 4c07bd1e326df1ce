/*
 * handler_flatten.c: copies an XLA_FFI_CallFrame into a flat array of 8-byte
 * slots that the TypeScript side reads through typed arrays (no per-field FFI
 * calls, no per-call allocation).
 *
 * Layout (slot = 8 bytes; "lo"/"hi" = the two int32 halves; "f64" = the slot
 * read as a double, used for addresses and int64 values). The header's
 * int32 indices are the XFD_FLAT_* of abi_facts.h (TS reads the same
 * numbers from src/abi/_facts.generated.ts):
 *   0..3    result area (written by TS: code, message length, token)
 *   4       stage (lo)
 *   5       api (f64)            6  ctx (f64)
 *   7       nargs (lo), where the result records start (hi)
 *   8       nrets (lo), where the attribute records start (hi)
 *   9       nattrs (lo), where the attribute records end (hi)
 *   10...   record index: where each argument, result and top-level attribute
 *           record starts (nargs + nrets + nattrs int32s, padded to a slot),
 *           so TS reads any operand without walking the records before it.
 *           Positions are int32 indices (byte offset / 4).
 *   then    args, then rets:   [type lo, dtype hi] [data f64] [rank lo] dims f64 x rank
 *           then attributes:   [type lo, slots of the whole record hi] [name length lo]
 *                              name bytes (padded to 8), then the value:
 *             SCALAR      [dtype lo] [raw value bytes]
 *             ARRAY       [dtype lo, count hi] raw element bytes (padded to 8)
 *             STRING      [length lo] bytes (padded to 8)
 *             DICTIONARY  [count lo] nested attribute records
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "handler_internal.h"
#include "xla_ffi_dtype.h"

int32_t xla_ffi_deno_dtype_width(int32_t dtype) {
  return (int32_t)xla_ffi_dtype_width(dtype);
}

typedef struct {
  int64_t* out;
  int64_t pos;
  int64_t cap;
} flat_writer;

static inline void set_lohi(int64_t* slot, int32_t lo, int32_t hi) {
  int32_t* p = (int32_t*)slot;
  p[0] = lo;
  p[1] = hi;
}

static inline void set_f64(int64_t* slot, double v) { memcpy(slot, &v, 8); }

/* The flat buffer is little-endian (TS reads it through typed arrays). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the TS handler flat buffer layout assumes a little-endian machine"
#endif

/* The n < 8 bytes at p, zero-padded to a word in memory order (at most
 * three loads, none past p + n). */
static inline uint64_t load_tail(const unsigned char* p, size_t n) {
  uint64_t x = 0;
  size_t k = 0;
  if (n & 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    x = v;
    k = 4;
  }
  if (n & 2) {
    uint16_t v;
    memcpy(&v, p + k, 2);
    x |= (uint64_t)v << (8 * k);
    k += 2;
  }
  if (n & 1) x |= (uint64_t)p[k] << (8 * k);
  return x;
}

/* Copies n bytes into whole 8-byte words from dst (the last one zero-padded;
 * dst has room for them): no libc call, no byte loop, for the short names
 * and values frames hold. */
static inline void copy_bytes(unsigned char* dst, const unsigned char* src, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(dst + i, src + i, 8);
  if (i < n) {
    uint64_t t = load_tail(src + i, n - i);
    memcpy(dst + i, &t, 8);
  }
}

static double addr(const void* p) { return (double)(uintptr_t)p; }

/* Returned by a checking flatten when the frame fails the check:
 * xla_ffi_deno_handler_check_frame then says why. */
#define FLAT_BAD (-3)

/* Whether n bytes are valid UTF-8 (ASCII words checked 8 bytes at a time). */
static inline int utf8_ok(const char* s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, s + i, 8);
    if (x & 0x8080808080808080ull) return xfd_utf8_valid((const unsigned char*)s + i, n - i);
  }
  if (i < n && (load_tail((const unsigned char*)s + i, n - i) & 0x8080808080808080ull))
    return xfd_utf8_valid((const unsigned char*)s + i, n - i);
  return 1;
}

/* x < y in byte order (names must be sorted and unique). */
static inline int name_before(const XLA_FFI_ByteSpan* x, const XLA_FFI_ByteSpan* y) {
  size_t n = x->len < y->len ? x->len : y->len;
  for (size_t i = 0; i < n; i++) {
    unsigned char a = (unsigned char)x->ptr[i], b = (unsigned char)y->ptr[i];
    if (a != b) return a < b;
  }
  return x->len < y->len;
}

/*
 * The buffer records. check: also check each buffer as check_buffers does,
 * returning FLAT_BAD on a failure; without it (a frame checked before), odd
 * entries are flattened as a type without data. The writers keep the
 * position in a local and write through a restrict pointer: no reload after
 * every store.
 */
static inline __attribute__((always_inline)) int put_buffers_impl(flat_writer* w, int64_t n,
                                                                  const int32_t* types,
                                                                  void* const* items,
                                                                  int32_t* index, int check,
                                                                  int execute) {
  if (check && n > 0 && (types == NULL || items == NULL)) return FLAT_BAD;
  int64_t* restrict out = w->out;
  int64_t pos = w->pos;
  const int64_t cap = w->cap;
  for (int64_t i = 0; i < n; i++) {
    index[i] = (int32_t)(pos * 2);
    int32_t type = types ? types[i] : 0;
    const XLA_FFI_Buffer* b = items ? (const XLA_FFI_Buffer*)items[i] : NULL;
    if (check && (type != XLA_FFI_ArgType_BUFFER || b == NULL ||
                  b->struct_size < XLA_FFI_Buffer_STRUCT_SIZE ||
                  (!xfd_dtype_valid(b->dtype) && b->dtype != XLA_FFI_DataType_TOKEN) || b->rank < 0 ||
                  b->rank > XFD_MAX_RANK || (b->rank > 0 && b->dims == NULL)))
      return FLAT_BAD;
    if (type != XLA_FFI_ArgType_BUFFER || b == NULL) {
      if (3 > cap - pos) return -1;
      set_lohi(out + pos, type, -1);
      out[pos + 1] = 0;
      out[pos + 2] = 0;
      pos += 3;
      continue;
    }
    int64_t rank = b->rank;
    if (rank < 0 || (rank > 0 && b->dims == NULL)) rank = 0;
    if (3 + rank > cap - pos) return -1;
    int64_t* o = out + pos;
    set_lohi(o, type, (int32_t)b->dtype);
    set_f64(o + 1, addr(b->data));
    set_lohi(o + 2, (int32_t)rank, 0);
    const int64_t* dims = b->dims;
    int64_t elements = 1;
    for (int64_t d = 0; d < rank; d++) {
      int64_t v = dims[d];
      /* No division per dimension: this check runs on every call. */
      if (check && (v < 0 || __builtin_mul_overflow(elements, v, &elements))) return FLAT_BAD;
      set_f64(o + 3 + d, (double)v);
    }
    if (check && execute && elements > 0 && b->data == NULL &&
        b->dtype != XLA_FFI_DataType_TOKEN)
      return FLAT_BAD;
    pos += 3 + rank;
  }
  w->pos = pos;
  return 0;
}

static int put_attrs_checked(flat_writer* w, const XLA_FFI_Attrs* attrs, int depth,
                             int32_t* index);
static int put_attrs_plain(flat_writer* w, const XLA_FFI_Attrs* attrs, int depth,
                           int32_t* index);

/* n bytes into slots from out[pos] (the last slot zero-padded); returns the slots. */
static inline int64_t put_padded(int64_t* restrict out, int64_t pos, const void* src, size_t n) {
  int64_t slots = (int64_t)((n + 7) / 8);
  if (slots > 0) {
    out[pos + slots - 1] = 0;
    if (src != NULL) copy_bytes((unsigned char*)&out[pos], src, n);
  }
  return slots;
}

/*
 * The attribute records. index: where to note each record's position (top
 * level only), or NULL. check: also check as check_attrs does.
 */
static inline __attribute__((always_inline)) int put_attrs_impl(flat_writer* w,
                                                                const XLA_FFI_Attrs* attrs,
                                                                int depth, int32_t* index,
                                                                int check) {
  if (check) {
    if (depth > XFD_MAX_DEPTH || attrs->struct_size < XLA_FFI_Attrs_STRUCT_SIZE ||
        attrs->size < 0 || attrs->size > XFD_MAX_ATTRS ||
        (attrs->size > 0 && (attrs->types == NULL || attrs->names == NULL || attrs->attrs == NULL)))
      return FLAT_BAD;
  } else if (depth > 64) {
    return -2;
  }
  int64_t* restrict out = w->out;
  int64_t pos = w->pos;
  const int64_t cap = w->cap;
  const int64_t size = attrs->size;
  for (int64_t i = 0; i < size; i++) {
    int64_t start = pos;
    if (index) index[i] = (int32_t)(start * 2);
    int32_t type = attrs->types ? (int32_t)attrs->types[i] : 0;
    const XLA_FFI_ByteSpan* name = attrs->names ? attrs->names[i] : NULL;
    const void* value = attrs->attrs ? attrs->attrs[i] : NULL;
    if (check && (name == NULL || name->len > XFD_MAX_NAME || (name->len > 0 && name->ptr == NULL) ||
                  !utf8_ok(name->ptr, name->len) ||
                  (i > 0 && !name_before(attrs->names[i - 1], name)) || value == NULL))
      return FLAT_BAD;
    size_t name_len = name ? name->len : 0;
    if (name_len > 0x7fffffff || 2 + (int64_t)((name_len + 7) / 8) > cap - pos) return -1;
    set_lohi(out + pos, type, 0);
    set_lohi(out + pos + 1, (int32_t)name_len, 0);
    pos += 2 + put_padded(out, pos + 2, name ? name->ptr : NULL, name_len);
    switch (type) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = (const XLA_FFI_Scalar*)value;
        if (check && (!xfd_dtype_valid(s->dtype) || s->value == NULL)) return FLAT_BAD;
        int32_t dt = s ? (int32_t)s->dtype : 0;
        size_t width = xla_ffi_dtype_width(dt);
        if (width > 8) width = 8;
        if (2 > cap - pos) return -1;
        set_lohi(out + pos, dt, 0);
        out[pos + 1] = 0;
        if (s && s->value) copy_bytes((unsigned char*)&out[pos + 1], s->value, width);
        pos += 2;
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* a = (const XLA_FFI_Array*)value;
        if (check && (!xfd_dtype_valid(a->dtype) || a->size > (size_t)XFD_MAX_ARRAY ||
                      (a->size > 0 && a->data == NULL)))
          return FLAT_BAD;
        int32_t dt = a ? (int32_t)a->dtype : 0;
        size_t count = a ? a->size : 0;
        size_t bytes = count * xla_ffi_dtype_width(dt);
        if (count > 0x7fffffff || 1 + (int64_t)((bytes + 7) / 8) > cap - pos) return -1;
        set_lohi(out + pos, dt, (int32_t)count);
        pos += 1 + put_padded(out, pos + 1, a ? a->data : NULL, bytes);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = (const XLA_FFI_ByteSpan*)value;
        if (check && (s->len > (size_t)XFD_MAX_STRING || (s->len > 0 && s->ptr == NULL)))
          return FLAT_BAD;
        size_t len = s ? s->len : 0;
        if (len > 0x7fffffff || 1 + (int64_t)((len + 7) / 8) > cap - pos) return -1;
        set_lohi(out + pos, (int32_t)len, 0);
        pos += 1 + put_padded(out, pos + 1, s ? s->ptr : NULL, len);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        const XLA_FFI_Attrs* d = (const XLA_FFI_Attrs*)value;
        int64_t count = d ? d->size : 0;
        if (!check && count < 0) count = 0;
        if (1 > cap - pos) return -1;
        set_lohi(out + pos, (int32_t)count, 0);
        pos += 1;
        if (d) {
          w->pos = pos;
          int rc = check ? put_attrs_checked(w, d, depth + 1, NULL)
                         : put_attrs_plain(w, d, depth + 1, NULL);
          if (rc) return rc;
          pos = w->pos;
        }
        break;
      }
      default:
        if (check) return FLAT_BAD;
        break;
    }
    ((int32_t*)&out[start])[1] = (int32_t)(pos - start);
  }
  w->pos = pos;
  return 0;
}

static int put_attrs_checked(flat_writer* w, const XLA_FFI_Attrs* attrs, int depth,
                             int32_t* index) {
  return put_attrs_impl(w, attrs, depth, index, 1);
}

static int put_attrs_plain(flat_writer* w, const XLA_FFI_Attrs* attrs, int depth,
                           int32_t* index) {
  return put_attrs_impl(w, attrs, depth, index, 0);
}

static inline __attribute__((always_inline)) int32_t flatten_impl(const XLA_FFI_CallFrame* f,
                                                                  int64_t* out, int64_t cap,
                                                                  int check) {
  int execute = 0;
  if (check) {
    int own = host_own_api(f->api);
    if (own && !host_own_ctx(f->ctx)) return FLAT_BAD;
    execute = own && f->stage == XLA_FFI_ExecutionStage_EXECUTE;
    if (f->args.struct_size < XLA_FFI_Args_STRUCT_SIZE ||
        f->rets.struct_size < XLA_FFI_Rets_STRUCT_SIZE || f->args.size > XFD_MAX_OPERANDS ||
        f->rets.size > XFD_MAX_OPERANDS)
      return FLAT_BAD;
  }
  int64_t nargs = f->args.size, nrets = f->rets.size, nattrs = f->attrs.size;
  if (nargs < 0 || nrets < 0 || nattrs < 0 || (check && nattrs > XFD_MAX_ATTRS))
    return check ? FLAT_BAD : -1;
  /* Each count is at most cap (no overflow summing them) and every position fits an int32. */
  if (nargs > cap || nrets > cap || nattrs > cap || cap > INT32_MAX / 2) return -1;
  int64_t records = nargs + nrets + nattrs;
  int64_t first = XFD_FLAT_INDEX / 2 + (records + 1) / 2;
  if (records > cap || first > cap) return -1;
  flat_writer w = {out, first, cap};
  int32_t* head = (int32_t*)out;
  int32_t* index = head + XFD_FLAT_INDEX;
  if (records % 2) index[records] = 0;
  memset(out, 0, XFD_FLAT_HEADER * sizeof(int32_t)); /* the result area */
  head[XFD_FLAT_STAGE] = (int32_t)f->stage;
  head[XFD_FLAT_STAGE + 1] = 0;
  set_f64(&out[XFD_FLAT_API / 2], addr(f->api));
  set_f64(&out[XFD_FLAT_CTX / 2], addr(f->ctx));
  head[XFD_FLAT_NARGS] = (int32_t)nargs;
  head[XFD_FLAT_NRETS] = (int32_t)nrets;
  head[XFD_FLAT_NATTRS] = (int32_t)nattrs;
  int rc = put_buffers_impl(&w, nargs, (const int32_t*)f->args.types, f->args.args, index, check,
                            execute);
  if (rc) return rc;
  head[XFD_FLAT_RETS_AT] = (int32_t)(w.pos * 2);
  rc = put_buffers_impl(&w, nrets, (const int32_t*)f->rets.types, f->rets.rets, index + nargs,
                        check, execute);
  if (rc) return rc;
  head[XFD_FLAT_ATTRS_AT] = (int32_t)(w.pos * 2);
  rc = check ? put_attrs_checked(&w, &f->attrs, 0, index + nargs + nrets)
             : put_attrs_plain(&w, &f->attrs, 0, index + nargs + nrets);
  if (rc) return rc;
  head[XFD_FLAT_ATTRS_END] = (int32_t)(w.pos * 2);
  return (int32_t)w.pos;
}

int32_t xla_ffi_deno_handler_flatten_into(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap) {
  return flatten_impl(f, out, cap, 0);
}

/* ---------------------------------------------------------------------- */
/* Frame check: what the entry points verify before the frame reaches TS  */
/* ---------------------------------------------------------------------- */

/*
 * The structural check every TS entry point runs on a call frame before it
 * flattens it: the shared check of common.c. The frame's api is checked by
 * the caller; the execution context only when the api is a table of the
 * runtime that installed hooks (handler_host.h: then it must be one of its
 * contexts, and buffers with elements need data, as in the runtime's own
 * check); other runtimes' contexts are opaque and go to their own API
 * functions. Returns 0, or an XLA error code with the message in buf.
 */
int32_t xla_ffi_deno_handler_check_frame(const XLA_FFI_CallFrame* f, char* buf, size_t cap) {
  xfd_frame_rules rules = {.whole = 0, .own = host_own_api(f->api), .ctx_tag = 0};
  const xla_ffi_deno_host_hooks* hooks = rules.own ? host_hooks() : NULL;
  if (hooks != NULL) rules.ctx_tag = hooks->ctx_tag;
  return xfd_check_frame(f, &rules, buf, cap);
}

/*
 * Checks and flattens a frame in one walk (the JS thread's inline path).
 * Returns the slots used, or -1 with *code 0 when the frame does not fit, or
 * -1 with an XLA error code in *code and the message in buf when it fails the
 * check. Messages come from xla_ffi_deno_handler_check_frame, run again only
 * when this walk stopped, so they are the same on every path.
 */
int32_t xla_ffi_deno_handler_check_flatten(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap,
                                           char* buf, size_t bufcap, int32_t* code) {
  *code = 0;
  int32_t used = flatten_impl(f, out, cap, 1);
  if (used >= 0) return used;
  /* A check failure, or no room: the check's verdict comes first (as when
   * the frame was checked before it was flattened). */
  *code = xla_ffi_deno_handler_check_frame(f, buf, bufcap);
  if (*code != 0 || used != FLAT_BAD) return -1;
  /* The walks disagree (a bug): the full check passed, so flatten unchecked. */
  used = flatten_impl(f, out, cap, 0);
  return used >= 0 ? used : -1;
}
