/*
 * common.c: the utilities of common.h, shared by the TS handler host, the
 * embedded runtime and the Python host, and the one call-frame check both
 * the runtime (checkCallFrame, checked calls) and the handler host
 * (every TS entry point) run.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static _Atomic int warnings;

void xfd_warn(const char* fmt, ...) {
  int n = atomic_fetch_add(&warnings, 1);
  if (n > XFD_MAX_WARNINGS) return;
  if (n == XFD_MAX_WARNINGS) {
    fprintf(stderr, "xla_ffi_deno: further warnings suppressed\n");
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int xfd_utf8_valid(const unsigned char* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t k;
    uint32_t cp;
    if (c < 0x80) {
      i++;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      k = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      k = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      k = 3, cp = c & 0x07;
    } else {
      return 0;
    }
    if (n - i <= k) return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((s[i + j] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + j] & 0x3F);
    }
    if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += k + 1;
  }
  return 1;
}

int xfd_thread_start_detached(void* (*fn)(void*), void* arg) {
  Dl_info info;
  if (dladdr((void*)fn, &info) && info.dli_fname != NULL)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, fn, arg);
  pthread_attr_destroy(&attr);
  return rc == 0;
}

/* ------------------------------------------------------------------------ */
/* Call frame check                                                          */
/* ------------------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int32_t bad(char* buf, size_t cap, const char* fmt,
                                                         ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return XLA_FFI_Error_Code_INVALID_ARGUMENT;
}

/* How a list of operands is named in messages. */
typedef struct {
  const char* one;   /* "argument" */
  const char* field; /* "args" */
  const char* many;  /* "arguments" */
} operand_words;

static int32_t check_buffers(int64_t n, const int32_t* types, void* const* items, int execute,
                             const operand_words* w, char* buf, size_t cap) {
  if (n < 0 || n > XFD_MAX_OPERANDS)
    return bad(buf, cap, "%s count %lld is out of range [0, %d]", w->one, (long long)n,
               XFD_MAX_OPERANDS);
  if (n > 0 && (types == NULL || items == NULL))
    return bad(buf, cap, "%s: types or %s is null for %lld %s", w->field, w->field, (long long)n,
               w->many);
  for (int64_t i = 0; i < n; i++) {
    if (types[i] != XLA_FFI_ArgType_BUFFER)
      return bad(buf, cap, "%s %lld: invalid %s type %d", w->one, (long long)i, w->one,
                 (int)types[i]);
    const XLA_FFI_Buffer* b = (const XLA_FFI_Buffer*)items[i];
    if (b == NULL)
      return bad(buf, cap, "%s %lld: the buffer pointer is null", w->one, (long long)i);
    if (b->struct_size < XLA_FFI_Buffer_STRUCT_SIZE)
      return bad(buf, cap, "%s %lld: Unexpected XLA_FFI_Buffer size: expected %zu, got %zu", w->one,
                 (long long)i, (size_t)XLA_FFI_Buffer_STRUCT_SIZE, b->struct_size);
    if (!xfd_dtype_valid(b->dtype) && b->dtype != XLA_FFI_DataType_TOKEN)
      return bad(buf, cap, "%s %lld: invalid data type %d", w->one, (long long)i, (int)b->dtype);
    if (b->rank < 0 || b->rank > XFD_MAX_RANK)
      return bad(buf, cap, "%s %lld: rank %lld is out of range [0, %d]", w->one, (long long)i,
                 (long long)b->rank, XFD_MAX_RANK);
    if (b->rank > 0 && b->dims == NULL)
      return bad(buf, cap, "%s %lld: dims is null for rank %lld", w->one, (long long)i,
                 (long long)b->rank);
    int64_t elements = 1;
    for (int64_t d = 0; d < b->rank; d++) {
      int64_t v = b->dims[d];
      if (v < 0)
        return bad(buf, cap, "%s %lld: negative dimension %lld at %lld", w->one, (long long)i,
                   (long long)v, (long long)d);
      if (__builtin_mul_overflow(elements, v, &elements))
        return bad(buf, cap, "%s %lld: the element count overflows int64", w->one, (long long)i);
    }
    if (execute && elements > 0 && b->data == NULL && b->dtype != XLA_FFI_DataType_TOKEN)
      return bad(buf, cap, "%s %lld: data is null for %lld elements", w->one, (long long)i,
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
  if (depth > XFD_MAX_DEPTH)
    return bad(buf, cap, "attributes nest deeper than the limit %d", XFD_MAX_DEPTH);
  if (a->struct_size < XLA_FFI_Attrs_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Attrs size: expected %zu, got %zu",
               (size_t)XLA_FFI_Attrs_STRUCT_SIZE, a->struct_size);
  if (a->size < 0 || a->size > XFD_MAX_ATTRS)
    return bad(buf, cap, "attribute count %lld is out of range [0, %d]", (long long)a->size,
               XFD_MAX_ATTRS);
  if (a->size > 0 && (a->types == NULL || a->names == NULL || a->attrs == NULL))
    return bad(buf, cap, "attributes: types, names or attrs is null for %lld attributes",
               (long long)a->size);
  for (int64_t i = 0; i < a->size; i++) {
    const XLA_FFI_ByteSpan* nm = a->names[i];
    long long at = (long long)i;
    if (nm == NULL) return bad(buf, cap, "attribute %lld: name is null", at);
    if (nm->len > XFD_MAX_NAME)
      return bad(buf, cap, "attribute %lld: name length %zu exceeds the limit %d", at, nm->len,
                 XFD_MAX_NAME);
    if (nm->len > 0 && nm->ptr == NULL)
      return bad(buf, cap, "attribute %lld: name is null with length %zu", at, nm->len);
    if (!xfd_utf8_valid((const unsigned char*)nm->ptr, nm->len))
      return bad(buf, cap, "attribute %lld: the name is not valid UTF-8", at);
    int len = (int)nm->len;
    if (i > 0 && !span_less(a->names[i - 1], nm))
      return bad(buf, cap,
                 "attribute %lld: name '%.*s' is not after '%.*s' (names must be sorted and "
                 "unique)",
                 at, len, nm->ptr, (int)a->names[i - 1]->len, a->names[i - 1]->ptr);
    const void* v = a->attrs[i];
    if (v == NULL) return bad(buf, cap, "attribute %lld: '%.*s' has a null value", at, len, nm->ptr);
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = v;
        if (!xfd_dtype_valid(s->dtype))
          return bad(buf, cap, "attribute %lld: '%.*s': invalid scalar data type %d", at, len,
                     nm->ptr, (int)s->dtype);
        if (s->value == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': the scalar value is null", at, len,
                     nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = v;
        if (!xfd_dtype_valid(arr->dtype))
          return bad(buf, cap, "attribute %lld: '%.*s': invalid array data type %d", at, len,
                     nm->ptr, (int)arr->dtype);
        if (arr->size > (size_t)XFD_MAX_ARRAY)
          return bad(buf, cap, "attribute %lld: '%.*s': array size %zu exceeds the limit %lld", at,
                     len, nm->ptr, arr->size, (long long)XFD_MAX_ARRAY);
        if (arr->size > 0 && arr->data == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': the array data is null", at, len, nm->ptr);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = v;
        if (s->len > (size_t)XFD_MAX_STRING)
          return bad(buf, cap, "attribute %lld: '%.*s': string length %zu exceeds the limit %lld",
                     at, len, nm->ptr, s->len, (long long)XFD_MAX_STRING);
        if (s->len > 0 && s->ptr == NULL)
          return bad(buf, cap, "attribute %lld: '%.*s': string is null with length %zu", at, len,
                     nm->ptr, s->len);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        int32_t rc = check_attrs(v, depth + 1, buf, cap);
        if (rc) return rc;
        break;
      }
      default:
        return bad(buf, cap, "attribute %lld: '%.*s': invalid attribute type %d", at, len,
                   nm->ptr, (int)a->types[i]);
    }
  }
  return 0;
}

static const operand_words ARGUMENTS = {"argument", "args", "arguments"};
static const operand_words RESULTS = {"result", "rets", "results"};

int32_t xfd_check_frame(const XLA_FFI_CallFrame* f, const xfd_frame_rules* rules, char* buf,
                        size_t cap) {
  if (rules->whole) {
    if (f == NULL) return bad(buf, cap, "The call frame is null");
    if (f->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)
      return bad(buf, cap, "Unexpected XLA_FFI_CallFrame size: expected %zu, got %zu",
                 (size_t)XLA_FFI_CallFrame_STRUCT_SIZE, f->struct_size);
    if (f->api == NULL) return bad(buf, cap, "The call frame's api is null");
    if (f->api->struct_size < XLA_FFI_Api_STRUCT_SIZE)
      return bad(buf, cap, "Unexpected XLA_FFI_Api size: expected %zu, got %zu",
                 (size_t)XLA_FFI_Api_STRUCT_SIZE, f->api->struct_size);
  }
  if (rules->own) {
    if (f->ctx == NULL) return bad(buf, cap, "The call frame's execution context is null");
    uint64_t tag;
    memcpy(&tag, (const void*)f->ctx, sizeof tag);
    if (tag != rules->ctx_tag)
      return bad(buf, cap, "The call frame's execution context was not created by this runtime");
  }
  if (rules->whole && (uint32_t)f->stage > (uint32_t)XLA_FFI_ExecutionStage_EXECUTE)
    return bad(buf, cap, "Invalid execution stage %d", (int)f->stage);
  int execute = rules->own && f->stage == XLA_FFI_ExecutionStage_EXECUTE;
  if (f->args.struct_size < XLA_FFI_Args_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Args size: expected %zu, got %zu",
               (size_t)XLA_FFI_Args_STRUCT_SIZE, f->args.struct_size);
  int32_t rc = check_buffers(f->args.size, (const int32_t*)f->args.types, f->args.args, execute,
                             &ARGUMENTS, buf, cap);
  if (rc) return rc;
  if (f->rets.struct_size < XLA_FFI_Rets_STRUCT_SIZE)
    return bad(buf, cap, "Unexpected XLA_FFI_Rets size: expected %zu, got %zu",
               (size_t)XLA_FFI_Rets_STRUCT_SIZE, f->rets.struct_size);
  rc = check_buffers(f->rets.size, (const int32_t*)f->rets.types, f->rets.rets, execute, &RESULTS,
                     buf, cap);
  if (rc) return rc;
  return check_attrs(&f->attrs, 0, buf, cap);
}
