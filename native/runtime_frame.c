/*
 * runtime_frame.c: lays out a whole XLA_FFI_CallFrame (args, rets, sorted
 * attributes, execution context) in one allocation from a compact description
 * the TypeScript CallFrameBuilder writes into a reused byte buffer.
 *
 * Description (little-endian, every item 8-byte aligned):
 *   u32 nargs, u32 nrets; then nargs + nrets buffers:
 *     u32 dtype, u32 rank, f64 data address, i64 dims[rank]
 *   then the top-level attribute dictionary:
 *     dict  := u32 count, u32 0, entry[count]
 *     entry := u32 attr type, u32 name length, name bytes (padded), payload
 *     SCALAR: u32 dtype, u32 0, 8 value bytes (native width, low bytes first)
 *     ARRAY:  u32 dtype, u32 count, count*width bytes (padded)
 *     STRING: u32 length, u32 0, bytes (padded)
 *     DICTIONARY: dict
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"
#include "xla_ffi_dtype.h"

typedef struct {
  const uint8_t* p;
  const uint8_t* end;
  char* a;
  char* aend;
  int failed;
} builder;

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static void* bump(builder* b, size_t n) {
  n = pad8(n);
  if ((size_t)(b->aend - b->a) < n) {
    b->failed = 1;
    return NULL;
  }
  void* r = b->a;
  b->a += n;
  return r;
}

static const uint8_t* take(builder* b, size_t n) {
  n = pad8(n);
  if ((size_t)(b->end - b->p) < n) {
    b->failed = 1;
    return NULL;
  }
  const uint8_t* r = b->p;
  b->p += n;
  return r;
}

static uint32_t u32_at(const uint8_t* p, int i) {
  uint32_t v;
  memcpy(&v, p + 4 * i, 4);
  return v;
}

/* Attribute scalars and arrays hold whole-byte elements: not INVALID, TOKEN
 * or the packed sub-byte types. */
static int attr_dtype_ok(uint32_t dt) {
  return xla_ffi_dtype_width(dt) != 0 && !xla_ffi_dtype_is_sub_byte(dt);
}

static int span_less(const XLA_FFI_ByteSpan* x, const XLA_FFI_ByteSpan* y) {
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->ptr, y->ptr, n);
  return c < 0 || (c == 0 && x->len < y->len);
}

static int build_buffer(builder* b, XLA_FFI_Buffer* buf) {
  const uint8_t* h = take(b, 16);
  if (!h) return 0;
  uint32_t rank = u32_at(h, 1);
  uint32_t dtype = u32_at(h, 0);
  if (rank > XFD_MAX_RANK || (!xfd_dtype_valid(dtype) && dtype != XLA_FFI_DataType_TOKEN))
    return b->failed = 1, 0;
  double addr;
  memcpy(&addr, h + 8, 8);
  const uint8_t* dims = take(b, 8 * (size_t)rank);
  if (!dims) return 0;
  int64_t* d = rank ? bump(b, 8 * (size_t)rank) : NULL;
  if (rank && !d) return 0;
  if (rank) memcpy(d, dims, 8 * (size_t)rank);
  int64_t elements = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (d[i] < 0 || (d[i] != 0 && elements > INT64_MAX / d[i])) return b->failed = 1, 0;
    elements *= d[i];
  }
  buf->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  buf->extension_start = NULL;
  buf->dtype = (XLA_FFI_DataType)u32_at(h, 0);
  buf->data = (void*)(uintptr_t)addr;
  buf->rank = rank;
  buf->dims = d;
  return 1;
}

static int build_dict(builder* b, XLA_FFI_Attrs* out, int depth) {
  if (depth > 64) return b->failed = 1, 0;
  const uint8_t* h = take(b, 8);
  if (!h) return 0;
  uint32_t n = u32_at(h, 0);
  if (n > XFD_MAX_ATTRS) return b->failed = 1, 0;
  out->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  out->extension_start = NULL;
  out->size = n;
  out->types = n ? bump(b, sizeof(XLA_FFI_AttrType) * n) : NULL;
  out->names = n ? bump(b, sizeof(XLA_FFI_ByteSpan*) * n) : NULL;
  out->attrs = n ? bump(b, sizeof(void*) * n) : NULL;
  if (b->failed) return 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t* eh = take(b, 8);
    if (!eh) return 0;
    uint32_t type = u32_at(eh, 0), nlen = u32_at(eh, 1);
    if (nlen > XFD_MAX_NAME) return b->failed = 1, 0;
    const uint8_t* nb = take(b, nlen);
    XLA_FFI_ByteSpan* name = bump(b, sizeof *name);
    char* ncopy = bump(b, (size_t)nlen + 1);
    if (!nb || !name || !ncopy) return 0;
    if (!xfd_utf8_valid(nb, nlen)) return b->failed = 1, 0;
    memcpy(ncopy, nb, nlen);
    ncopy[nlen] = '\0';
    name->ptr = ncopy;
    name->len = nlen;
    out->types[i] = (XLA_FFI_AttrType)type;
    out->names[i] = name;
    switch (type) {
      case XLA_FFI_AttrType_SCALAR: {
        const uint8_t* p = take(b, 16);
        XLA_FFI_Scalar* s = bump(b, sizeof *s);
        void* v = bump(b, 8);
        if (!p || !s || !v) return 0;
        s->dtype = (XLA_FFI_DataType)u32_at(p, 0);
        if (!attr_dtype_ok(s->dtype)) return b->failed = 1, 0;
        memcpy(v, p + 8, 8);
        s->value = v;
        out->attrs[i] = s;
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const uint8_t* p = take(b, 8);
        if (!p) return 0;
        uint32_t dt = u32_at(p, 0), count = u32_at(p, 1);
        if (!attr_dtype_ok(dt)) return b->failed = 1, 0;
        size_t bytes = xla_ffi_dtype_width(dt) * count;
        const uint8_t* data = take(b, bytes);
        XLA_FFI_Array* arr = bump(b, sizeof *arr);
        void* copy = bump(b, bytes ? bytes : 8);
        if (!data || !arr || !copy) return 0;
        memcpy(copy, data, bytes);
        arr->dtype = (XLA_FFI_DataType)dt;
        arr->size = count;
        arr->data = copy;
        out->attrs[i] = arr;
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const uint8_t* p = take(b, 8);
        if (!p) return 0;
        uint32_t len = u32_at(p, 0);
        const uint8_t* data = take(b, len);
        XLA_FFI_ByteSpan* s = bump(b, sizeof *s);
        char* copy = bump(b, (size_t)len + 1);
        if (!data || !s || !copy) return 0;
        memcpy(copy, data, len);
        copy[len] = '\0';
        s->ptr = copy;
        s->len = len;
        out->attrs[i] = s;
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        XLA_FFI_Attrs* d = bump(b, sizeof *d);
        if (!d || !build_dict(b, d, depth + 1)) return 0;
        out->attrs[i] = d;
        break;
      }
      default:
        b->failed = 1;
        return 0;
    }
  }
  /* Sorted by name, byte-wise, as XLA's builder does (insertion sort: small). */
  for (uint32_t i = 1; i < n; i++) {
    XLA_FFI_AttrType t = out->types[i];
    XLA_FFI_ByteSpan* nm = out->names[i];
    void* v = out->attrs[i];
    uint32_t j = i;
    while (j > 0 && span_less(nm, out->names[j - 1])) {
      out->types[j] = out->types[j - 1];
      out->names[j] = out->names[j - 1];
      out->attrs[j] = out->attrs[j - 1];
      j--;
    }
    out->types[j] = t;
    out->names[j] = nm;
    out->attrs[j] = v;
  }
  /* Names are unique (a dictionary maps each name to one value). */
  for (uint32_t i = 1; i < n; i++)
    if (!span_less(out->names[i - 1], out->names[i])) return b->failed = 1, 0;
  return 1;
}

/**
 * Builds a call frame (stage EXECUTE, run id and device ordinal -1) from a
 * description; NULL if the description is malformed.
 */
xrt_frame* xla_ffi_deno_runtime_frame_build(const uint8_t* desc, int32_t len) {
  if (!desc || len < 8) return NULL;
  size_t cap = sizeof(xrt_frame) + 256 + 8 * (size_t)len;
  char* mem = malloc(cap); /* every byte handed out below is written */
  if (!mem) return NULL;
  xrt_frame* fr = (xrt_frame*)mem;
  memset(fr, 0, sizeof *fr);
  builder b = {desc, desc + len, mem + pad8(sizeof(xrt_frame)), mem + cap, 0};
  const uint8_t* h = take(&b, 8);
  uint32_t nargs = u32_at(h, 0), nrets = u32_at(h, 1);
  if (nargs > XFD_MAX_OPERANDS || nrets > XFD_MAX_OPERANDS) {
    free(mem);
    return NULL;
  }
  fr->args = nargs ? bump(&b, sizeof(XLA_FFI_Buffer) * nargs) : NULL;
  fr->rets = nrets ? bump(&b, sizeof(XLA_FFI_Buffer) * nrets) : NULL;
  XLA_FFI_ArgType* at = nargs ? bump(&b, sizeof(XLA_FFI_ArgType) * nargs) : NULL;
  XLA_FFI_RetType* rt = nrets ? bump(&b, sizeof(XLA_FFI_RetType) * nrets) : NULL;
  void** ap = nargs ? bump(&b, sizeof(void*) * nargs) : NULL;
  void** rp = nrets ? bump(&b, sizeof(void*) * nrets) : NULL;
  for (uint32_t i = 0; i < nargs && !b.failed; i++) {
    build_buffer(&b, &fr->args[i]);
    at[i] = XLA_FFI_ArgType_BUFFER;
    ap[i] = &fr->args[i];
  }
  for (uint32_t i = 0; i < nrets && !b.failed; i++) {
    build_buffer(&b, &fr->rets[i]);
    rt[i] = XLA_FFI_RetType_BUFFER;
    rp[i] = &fr->rets[i];
  }
  if (!b.failed) build_dict(&b, &fr->cf.attrs, 0);
  if (b.failed) {
    free(mem);
    return NULL;
  }
  fr->cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  fr->cf.api = xla_ffi_deno_runtime_newest_api();
  fr->ctx.run_id = -1; /* XLA leaves both unset (-1) unless the caller gives them */
  fr->ctx.device_ordinal = -1;
  fr->cf.ctx = &fr->ctx;
  fr->cf.stage = XLA_FFI_ExecutionStage_EXECUTE;
  fr->cf.args = (XLA_FFI_Args){XLA_FFI_Args_STRUCT_SIZE, NULL, nargs, at, ap};
  fr->cf.rets = (XLA_FFI_Rets){XLA_FFI_Rets_STRUCT_SIZE, NULL, nrets, rt, rp};
  fr->ctx.stage = XLA_FFI_ExecutionStage_EXECUTE;
  fr->ctx.magic = XRT_CTX_MAGIC;
  XRT_COUNT(XRT_STAT_FRAMES_CREATED);
  return fr;
}

/** The XLA_FFI_CallFrame inside a built frame (for inspection). */
XLA_FFI_CallFrame* xla_ffi_deno_runtime_frame_call_frame(xrt_frame* fr) {
  return fr ? &fr->cf : NULL;
}

/** Swaps the data pointer of argument i (ignored when i is out of range). */
void xla_ffi_deno_runtime_frame_set_arg(xrt_frame* fr, int32_t i, double addr) {
  if (!fr || i < 0 || i >= fr->cf.args.size) return;
  fr->args[i].data = (void*)(uintptr_t)addr;
}

/** Swaps the data pointer of result i. */
void xla_ffi_deno_runtime_frame_set_ret(xrt_frame* fr, int32_t i, double addr) {
  if (!fr || i < 0 || i >= fr->cf.rets.size) return;
  fr->rets[i].data = (void*)(uintptr_t)addr;
}

/**
 * Sets the stage, run id, device ordinal, instance and user data (n pairs of
 * type id and pointer, copied) used by the next calls with this frame.
 */
void xla_ffi_deno_runtime_frame_configure(xrt_frame* fr, int32_t stage, int64_t run_id,
                                          int32_t device_ordinal, xrt_instance* instance,
                                          const int64_t* user, int32_t n_user) {
  if (!fr) return;
  fr->cf.stage = (XLA_FFI_ExecutionStage)stage;
  fr->ctx.stage = stage;
  fr->ctx.run_id = run_id;
  fr->ctx.device_ordinal = device_ordinal;
  fr->ctx.instance = instance;
  free(fr->user_store);
  fr->user_store = NULL;
  fr->ctx.user = NULL;
  fr->ctx.n_user = 0;
  if (n_user > 0 && user) {
    fr->user_store = malloc(sizeof(int64_t) * 2 * (size_t)n_user);
    if (!fr->user_store) abort();
    memcpy(fr->user_store, user, sizeof(int64_t) * 2 * (size_t)n_user);
    fr->ctx.user = fr->user_store;
    fr->ctx.n_user = n_user;
  }
}

/** Frees a frame and everything it owns. */
void xla_ffi_deno_runtime_frame_free(xrt_frame* fr) {
  if (!fr) return;
  free(fr->user_store);
  free(fr);
  XRT_COUNT(XRT_STAT_FRAMES_DESTROYED);
}
