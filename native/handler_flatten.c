/*
 * handler_flatten.c: copies an XLA_FFI_CallFrame into a flat array of 8-byte
 * slots that the TypeScript side reads through typed arrays (no per-field FFI
 * calls, no per-call allocation).
 *
 * Layout (slot = 8 bytes; "lo"/"hi" = the two int32 halves; "f64" = the slot
 * read as a double, used for addresses and int64 values):
 *   0..3    result area (written by TS: code, message length, token)
 *   4       stage (lo)
 *   5       api (f64)            6  ctx (f64)
 *   7       nargs (lo)           8  nrets (lo)       9  nattrs (lo)
 *   10...   args, then rets:   [type lo, dtype hi] [data f64] [rank lo] dims f64 x rank
 *           then attributes:   [type lo, slots of the whole record hi] [name length lo]
 *                              name bytes (padded to 8), then the value:
 *             SCALAR      [dtype lo] [raw value bytes]
 *             ARRAY       [dtype lo, count hi] raw element bytes (padded to 8)
 *             STRING      [length lo] bytes (padded to 8)
 *             DICTIONARY  [count lo] nested attribute records
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <string.h>

#include "handler_internal.h"

int32_t xla_ffi_deno_dtype_width(int32_t dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8:
      return 1;
    case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
    case XLA_FFI_DataType_BF16:
      return 2;
    case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32:
      return 4;
    case XLA_FFI_DataType_S64: case XLA_FFI_DataType_U64: case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C64:
      return 8;
    case XLA_FFI_DataType_C128:
      return 16;
    case XLA_FFI_DataType_INVALID: case XLA_FFI_DataType_TOKEN:
      return 0;
    default:
      return (dtype >= 19 && dtype <= 33) ? 1 : 0;
  }
}

typedef struct {
  int64_t* out;
  int64_t pos;
  int64_t cap;
} flat_writer;

static inline int put_lohi(flat_writer* w, int32_t lo, int32_t hi) {
  if (w->pos >= w->cap) return -1;
  int32_t* p = (int32_t*)&w->out[w->pos++];
  p[0] = lo;
  p[1] = hi;
  return 0;
}

static inline int put_f64(flat_writer* w, double v) {
  if (w->pos >= w->cap) return -1;
  memcpy(&w->out[w->pos++], &v, 8);
  return 0;
}

static inline int put_bytes(flat_writer* w, const void* src, size_t n) {
  int64_t slots = (int64_t)((n + 7) / 8);
  if (w->pos + slots > w->cap) return -1;
  if (slots > 0) {
    w->out[w->pos + slots - 1] = 0;
    if (n > 0 && src != NULL) memcpy(&w->out[w->pos], src, n);
  }
  w->pos += slots;
  return 0;
}

static double addr(const void* p) { return (double)(uintptr_t)p; }

static int put_buffers(flat_writer* w, int64_t n, const int32_t* types, void* const* items) {
  for (int64_t i = 0; i < n; i++) {
    int32_t type = types ? types[i] : 0;
    const XLA_FFI_Buffer* b = items ? (const XLA_FFI_Buffer*)items[i] : NULL;
    if (type != XLA_FFI_ArgType_BUFFER || b == NULL) {
      if (put_lohi(w, type, -1) || put_f64(w, 0) || put_lohi(w, 0, 0)) return -1;
      continue;
    }
    int64_t rank = b->rank;
    if (rank < 0 || (rank > 0 && b->dims == NULL)) rank = 0;
    if (put_lohi(w, type, (int32_t)b->dtype) || put_f64(w, addr(b->data)) ||
        put_lohi(w, (int32_t)rank, 0))
      return -1;
    for (int64_t d = 0; d < rank; d++)
      if (put_f64(w, (double)b->dims[d])) return -1;
  }
  return 0;
}

static int put_attrs(flat_writer* w, const XLA_FFI_Attrs* attrs, int depth) {
  if (depth > 64) return -2;
  for (int64_t i = 0; i < attrs->size; i++) {
    int64_t start = w->pos;
    int32_t type = attrs->types ? (int32_t)attrs->types[i] : 0;
    const XLA_FFI_ByteSpan* name = attrs->names ? attrs->names[i] : NULL;
    size_t name_len = name ? name->len : 0;
    if (put_lohi(w, type, 0) || put_lohi(w, (int32_t)name_len, 0) ||
        put_bytes(w, name ? name->ptr : NULL, name_len))
      return -1;
    const void* value = attrs->attrs ? attrs->attrs[i] : NULL;
    switch (type) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = (const XLA_FFI_Scalar*)value;
        int32_t dt = s ? (int32_t)s->dtype : 0;
        int32_t width = xla_ffi_deno_dtype_width(dt);
        if (width > 8) width = 8;
        if (put_lohi(w, dt, 0)) return -1;
        if (w->pos >= w->cap) return -1;
        w->out[w->pos] = 0;
        if (s && s->value && width > 0) memcpy(&w->out[w->pos], s->value, (size_t)width);
        w->pos++;
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* a = (const XLA_FFI_Array*)value;
        int32_t dt = a ? (int32_t)a->dtype : 0;
        size_t count = a ? a->size : 0;
        int32_t width = xla_ffi_deno_dtype_width(dt);
        if (count > 0x7fffffff) return -1;
        if (put_lohi(w, dt, (int32_t)count) ||
            put_bytes(w, a ? a->data : NULL, count * (size_t)width))
          return -1;
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = (const XLA_FFI_ByteSpan*)value;
        size_t len = s ? s->len : 0;
        if (len > 0x7fffffff) return -1;
        if (put_lohi(w, (int32_t)len, 0) || put_bytes(w, s ? s->ptr : NULL, len)) return -1;
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        const XLA_FFI_Attrs* d = (const XLA_FFI_Attrs*)value;
        int64_t count = d ? d->size : 0;
        if (put_lohi(w, (int32_t)count, 0)) return -1;
        if (d) {
          int rc = put_attrs(w, d, depth + 1);
          if (rc) return rc;
        }
        break;
      }
      default:
        break;
    }
    ((int32_t*)&w->out[start])[1] = (int32_t)(w->pos - start);
  }
  return 0;
}

int32_t xla_ffi_deno_handler_flatten_into(const XLA_FFI_CallFrame* f, int64_t* out, int64_t cap) {
  flat_writer w = {out, FLAT_HEADER_SLOTS, cap};
  if (cap < FLAT_HEADER_SLOTS + 6) return -1;
  out[0] = out[1] = out[2] = out[3] = 0;
  if (put_lohi(&w, (int32_t)f->stage, 0) || put_f64(&w, addr(f->api)) ||
      put_f64(&w, addr(f->ctx)) || put_lohi(&w, (int32_t)f->args.size, 0) ||
      put_lohi(&w, (int32_t)f->rets.size, 0) || put_lohi(&w, (int32_t)f->attrs.size, 0))
    return -1;
  if (put_buffers(&w, f->args.size, (const int32_t*)f->args.types, f->args.args)) return -1;
  if (put_buffers(&w, f->rets.size, (const int32_t*)f->rets.types, f->rets.rets)) return -1;
  int rc = put_attrs(&w, &f->attrs, 0);
  if (rc) return rc;
  return (int32_t)w.pos;
}
