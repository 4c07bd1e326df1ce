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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "handler_internal.h"
#include "runtime_internal.h"
#include "xla_ffi_dtype.h"

int32_t xla_ffi_deno_dtype_width(int32_t dtype) {
  return (int32_t)xla_ffi_dtype_width(dtype);
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

/* ---------------------------------------------------------------------- */
/* Frame check: what the entry points verify before the frame reaches TS  */
/* ---------------------------------------------------------------------- */

/*
 * The structural check every TS entry point runs on a call frame before it
 * flattens it (same limits and message shapes as the embedded runtime's
 * xrt_check_call_frame, without its snprintf on the good path). The frame's
 * api is checked by the caller; the execution context only when the api is
 * the embedded runtime's (then it must be one of its contexts, and buffers with
 * elements need data, as in its check); other runtimes' contexts are opaque
 * and go to their own API functions.
 * Returns 0, or an XLA error code with the message in buf.
 */
__attribute__((format(printf, 3, 4))) static int32_t bad(char* buf, size_t cap, const char* fmt,
                                                         ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return XLA_FFI_Error_Code_INVALID_ARGUMENT;
}

static int32_t check_buffers(int64_t n, const int32_t* types, void* const* items, int execute,
                             const char* what, char* buf, size_t cap) {
  if (n < 0 || n > XRT_MAX_OPERANDS)
    return bad(buf, cap, "%s count %lld is out of range [0, %d]", what, (long long)n,
               XRT_MAX_OPERANDS);
  if (n > 0 && (types == NULL || items == NULL))
    return bad(buf, cap, "%s: types or buffers are null for %lld operands", what, (long long)n);
  for (int64_t i = 0; i < n; i++) {
    if (types[i] != XLA_FFI_ArgType_BUFFER)
      return bad(buf, cap, "%s %lld: invalid type %d", what, (long long)i, (int)types[i]);
    const XLA_FFI_Buffer* b = (const XLA_FFI_Buffer*)items[i];
    if (b == NULL) return bad(buf, cap, "%s %lld: the buffer pointer is null", what, (long long)i);
    if (b->struct_size < XLA_FFI_Buffer_STRUCT_SIZE)
      return bad(buf, cap, "%s %lld: Unexpected XLA_FFI_Buffer size: expected %zu, got %zu", what,
                 (long long)i, (size_t)XLA_FFI_Buffer_STRUCT_SIZE, b->struct_size);
    if (!xrt_dtype_valid(b->dtype) && b->dtype != XLA_FFI_DataType_TOKEN)
      return bad(buf, cap, "%s %lld: invalid data type %d", what, (long long)i, (int)b->dtype);
    if (b->rank < 0 || b->rank > XRT_MAX_RANK)
      return bad(buf, cap, "%s %lld: rank %lld is out of range [0, %d]", what, (long long)i,
                 (long long)b->rank, XRT_MAX_RANK);
    if (b->rank > 0 && b->dims == NULL)
      return bad(buf, cap, "%s %lld: dims is null for rank %lld", what, (long long)i,
                 (long long)b->rank);
    int64_t elements = 1;
    for (int64_t d = 0; d < b->rank; d++) {
      int64_t v = b->dims[d];
      if (v < 0)
        return bad(buf, cap, "%s %lld: negative dimension %lld at %lld", what, (long long)i,
                   (long long)v, (long long)d);
      if (v != 0 && elements > INT64_MAX / v)
        return bad(buf, cap, "%s %lld: the element count overflows int64", what, (long long)i);
      elements *= v;
    }
    if (execute && elements > 0 && b->data == NULL && b->dtype != XLA_FFI_DataType_TOKEN)
      return bad(buf, cap, "%s %lld: data is null for %lld elements", what, (long long)i,
                 (long long)elements);
  }
  return 0;
}

static int span_less(const XLA_FFI_ByteSpan* x, const XLA_FFI_ByteSpan* y) {
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
  return c < 0 || (c == 0 && x->len < y->len);
}

static int32_t check_attrs(const XLA_FFI_Attrs* a, int depth, char* buf, size_t cap) {
  if (depth > XRT_MAX_DEPTH)
    return bad(buf, cap, "attributes nest deeper than the limit %d", XRT_MAX_DEPTH);
  if (a->struct_size < XLA_FFI_Attrs_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Attrs size: expected %zu, got %zu",
               (size_t)XLA_FFI_Attrs_STRUCT_SIZE, a->struct_size);
  if (a->size < 0 || a->size > XRT_MAX_ATTRS)
    return bad(buf, cap, "attribute count %lld is out of range [0, %d]", (long long)a->size,
               XRT_MAX_ATTRS);
  if (a->size > 0 && (a->types == NULL || a->names == NULL || a->attrs == NULL))
    return bad(buf, cap, "attributes: types, names or attrs is null for %lld attributes",
               (long long)a->size);
  for (int64_t i = 0; i < a->size; i++) {
    const XLA_FFI_ByteSpan* nm = a->names[i];
    if (nm == NULL) return bad(buf, cap, "attribute %lld: name is null", (long long)i);
    if (nm->len > XRT_MAX_NAME)
      return bad(buf, cap, "attribute %lld: name length %zu exceeds the limit %d", (long long)i,
                 nm->len, XRT_MAX_NAME);
    if (nm->len > 0 && nm->ptr == NULL)
      return bad(buf, cap, "attribute %lld: name is null with length %zu", (long long)i, nm->len);
    if (!xrt_utf8_valid((const unsigned char*)nm->ptr, nm->len))
      return bad(buf, cap, "attribute %lld: the name is not valid UTF-8", (long long)i);
    if (i > 0 && !span_less(a->names[i - 1], nm))
      return bad(buf, cap, "attribute %lld: name '%.*s' is not after '%.*s' (names must be sorted "
                 "and unique)", (long long)i, (int)nm->len, nm->ptr, (int)a->names[i - 1]->len,
                 a->names[i - 1]->ptr);
    const void* v = a->attrs[i];
    if (v == NULL)
      return bad(buf, cap, "attribute %lld: '%.*s' has a null value", (long long)i, (int)nm->len,
                 nm->ptr);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = v;
        if (!xrt_dtype_valid(s->dtype))
          return bad(buf, cap, "attribute %lld: '%.*s': invalid scalar data type %d",
                     (long long)i, (int)nm->len, nm->ptr, (int)s->dtype);
        if (s->value == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': the scalar value is null", (long long)i,
                     (int)nm->len, nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = v;
        if (!xrt_dtype_valid(arr->dtype))
          return bad(buf, cap, "attribute %lld: '%.*s': invalid array data type %d",
                     (long long)i, (int)nm->len, nm->ptr, (int)arr->dtype);
        if (arr->size > (size_t)XRT_MAX_ARRAY)
          return bad(buf, cap, "attribute %lld: '%.*s': array size %zu exceeds the limit %lld",
                     (long long)i, (int)nm->len, nm->ptr, arr->size, (long long)XRT_MAX_ARRAY);
        if (arr->size > 0 && arr->data == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': the array data is null", (long long)i,
                     (int)nm->len, nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = v;
        if (s->len > (size_t)XRT_MAX_STRING)
          return bad(buf, cap, "attribute %lld: '%.*s': string length %zu exceeds the limit %lld",
                     (long long)i, (int)nm->len, nm->ptr, s->len, (long long)XRT_MAX_STRING);
        if (s->len > 0 && s->ptr == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': string is null with length %zu",
                     (long long)i, (int)nm->len, nm->ptr, s->len);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        int32_t rc = check_attrs(v, depth + 1, buf, cap);
        if (rc) return rc;
        break;
      }
      default:
        return bad(buf, cap, "attribute %lld: '%.*s': invalid attribute type %d", (long long)i,
                   (int)nm->len, nm->ptr, (int)a->types[i]);
    }
  }
  return 0;
}

int32_t xla_ffi_deno_handler_check_frame(const XLA_FFI_CallFrame* f, char* buf, size_t cap) {
  /* The context is opaque to handlers (the runtime's API functions take it);
   * the embedded runtime's own contexts are recognisable, so check them. */
  if (xrt_is_own_api(f->api)) {
    if (f->ctx == NULL) return bad(buf, cap, "The call frame's execution context is null");
    if (f->ctx->magic != XRT_CTX_MAGIC)
      return bad(buf, cap, "The call frame's execution context was not created by this runtime");
  }
  /* Null data with elements: an error under the embedded runtime (as its
   * check has it); other runtimes may pass it, and TS sees an empty view. */
  int execute = f->stage == XLA_FFI_ExecutionStage_EXECUTE && xrt_is_own_api(f->api);
  if (f->args.struct_size < XLA_FFI_Args_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Args size: expected %zu, got %zu",
               (size_t)XLA_FFI_Args_STRUCT_SIZE, f->args.struct_size);
  int32_t rc = check_buffers(f->args.size, (const int32_t*)f->args.types, f->args.args, execute,
                             "argument", buf, cap);
  if (rc) return rc;
  if (f->rets.struct_size < XLA_FFI_Rets_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Rets size: expected %zu, got %zu",
               (size_t)XLA_FFI_Rets_STRUCT_SIZE, f->rets.struct_size);
  rc = check_buffers(f->rets.size, (const int32_t*)f->rets.types, f->rets.rets, execute, "result",
                     buf, cap);
  if (rc) return rc;
  return check_attrs(&f->attrs, 0, buf, cap);
}
