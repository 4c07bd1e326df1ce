/*
 * runtime_handlers.c: C test handlers for the embedded runtime, written
 * against the project's own xla_ffi.h. Each answers the metadata query the
 * way ffi.h does, then exercises one part of the XLA_FFI_Api.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#include "xla_ffi_versions.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static XLA_FFI_Error* metadata(XLA_FFI_CallFrame* cf, int major, int minor, uint32_t traits) {
  XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)cf->extension_start;
  ext->metadata->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  ext->metadata->api_version.extension_start = NULL;
  ext->metadata->api_version.major_version = major;
  ext->metadata->api_version.minor_version = minor;
  ext->metadata->traits = traits;
  return NULL;
}

#define METADATA(cf, traits)                                                     \
  do {                                                                           \
    if ((cf)->extension_start &&                                                 \
        (cf)->extension_start->type == XLA_FFI_Extension_Metadata)               \
      return metadata((cf), XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR, (traits));     \
  } while (0)

static XLA_FFI_Error* make_error(const XLA_FFI_Api* api, XLA_FFI_Error_Code code,
                                 const char* msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
  return api->XLA_FFI_Error_Create(&a);
}

static void destroy_error(const XLA_FFI_Api* api, XLA_FFI_Error* e) {
  XLA_FFI_Error_Destroy_Args a = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->XLA_FFI_Error_Destroy(&a);
}

/* Index of the attribute named `name` in a dictionary (binary search). */
static int64_t find_attr(const XLA_FFI_Attrs* attrs, const char* name) {
  size_t n = strlen(name);
  int64_t lo = 0, hi = attrs->size - 1;
  while (lo <= hi) {
    int64_t mid = (lo + hi) / 2;
    const XLA_FFI_ByteSpan* s = attrs->names[mid];
    size_t m = s->len < n ? s->len : n;
    int c = memcmp(s->ptr, name, m);
    if (c == 0) c = (s->len > n) - (s->len < n);
    if (c == 0) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

static int64_t attr_i64(const XLA_FFI_CallFrame* cf, const char* name, int64_t dflt) {
  int64_t i = find_attr(&cf->attrs, name);
  if (i < 0 || cf->attrs.types[i] != XLA_FFI_AttrType_SCALAR) return dflt;
  const XLA_FFI_Scalar* s = cf->attrs.attrs[i];
  switch (s->dtype) {
    case XLA_FFI_DataType_S32: return *(int32_t*)s->value;
    case XLA_FFI_DataType_S64: return *(int64_t*)s->value;
    default: return dflt;
  }
}

static size_t elements(const XLA_FFI_Buffer* b) {
  size_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= (size_t)b->dims[i];
  return n;
}

static XLA_FFI_Buffer* arg(XLA_FFI_CallFrame* cf, int i) { return cf->args.args[i]; }
static XLA_FFI_Buffer* ret(XLA_FFI_CallFrame* cf, int i) { return cf->rets.rets[i]; }

/* ------------------------------------------------------------------------ */
/* Basic handlers                                                            */
/* ------------------------------------------------------------------------ */

/** Does nothing (benchmarks). */
XLA_FFI_Error* test_noop(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  return NULL;
}

/** Copies every F32 arg i into ret i. */
XLA_FFI_Error* test_echo(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  if (cf->args.size != cf->rets.size)
    return make_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "echo: args != rets");
  for (int64_t i = 0; i < cf->args.size; i++)
    memcpy(ret(cf, (int)i)->data, arg(cf, (int)i)->data, elements(arg(cf, (int)i)) * 4);
  return NULL;
}

/** ret0 = arg0 * attr "factor" (f32), F32 buffers. */
XLA_FFI_Error* test_scale(XLA_FFI_CallFrame* cf) {
  METADATA(cf, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
  int64_t i = find_attr(&cf->attrs, "factor");
  if (i < 0 || cf->attrs.types[i] != XLA_FFI_AttrType_SCALAR)
    return make_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "missing attribute factor");
  const XLA_FFI_Scalar* s = cf->attrs.attrs[i];
  if (s->dtype != XLA_FFI_DataType_F32)
    return make_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "factor must be f32");
  float f = *(float*)s->value;
  const float* x = arg(cf, 0)->data;
  float* y = ret(cf, 0)->data;
  size_t n = elements(arg(cf, 0));
  for (size_t k = 0; k < n; k++) y[k] = x[k] * f;
  return NULL;
}

/* Appends a description of a dictionary to out (used by test_attrs). */
static void describe(const XLA_FFI_Attrs* a, char* out, size_t cap) {
  size_t len = strlen(out);
  for (int64_t i = 0; i < a->size; i++) {
    const XLA_FFI_ByteSpan* nm = a->names[i];
    len += (size_t)snprintf(out + len, cap - len, "%.*s=", (int)nm->len, nm->ptr);
    if (len >= cap) return;
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = a->attrs[i];
        const void* v = s->value;
        char buf[64];
        switch (s->dtype) {
          case XLA_FFI_DataType_PRED: snprintf(buf, sizeof buf, "%d", *(const uint8_t*)v); break;
          case XLA_FFI_DataType_S8: snprintf(buf, sizeof buf, "%d", *(const int8_t*)v); break;
          case XLA_FFI_DataType_S16: snprintf(buf, sizeof buf, "%d", *(const int16_t*)v); break;
          case XLA_FFI_DataType_S32: snprintf(buf, sizeof buf, "%d", *(const int32_t*)v); break;
          case XLA_FFI_DataType_S64:
            snprintf(buf, sizeof buf, "%lld", (long long)*(const int64_t*)v);
            break;
          case XLA_FFI_DataType_U8: snprintf(buf, sizeof buf, "%u", *(const uint8_t*)v); break;
          case XLA_FFI_DataType_U16: snprintf(buf, sizeof buf, "%u", *(const uint16_t*)v); break;
          case XLA_FFI_DataType_U32: snprintf(buf, sizeof buf, "%u", *(const uint32_t*)v); break;
          case XLA_FFI_DataType_U64:
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)*(const uint64_t*)v);
            break;
          case XLA_FFI_DataType_F32: snprintf(buf, sizeof buf, "%g", *(const float*)v); break;
          case XLA_FFI_DataType_F64: snprintf(buf, sizeof buf, "%.17g", *(const double*)v); break;
          default: snprintf(buf, sizeof buf, "?"); break;
        }
        len += (size_t)snprintf(out + len, cap - len, "scalar:%d:%s;", s->dtype, buf);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = a->attrs[i];
        len += (size_t)snprintf(out + len, cap - len, "array:%d:[", arr->dtype);
        for (size_t k = 0; k < arr->size && len < cap; k++) {
          const char* sep = k ? "," : "";
          switch (arr->dtype) {
            case XLA_FFI_DataType_S8:
              len += (size_t)snprintf(out + len, cap - len, "%s%d", sep, ((int8_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_S16:
              len += (size_t)snprintf(out + len, cap - len, "%s%d", sep, ((int16_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_S32:
              len += (size_t)snprintf(out + len, cap - len, "%s%d", sep, ((int32_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_S64:
              len += (size_t)snprintf(out + len, cap - len, "%s%lld", sep,
                                      (long long)((int64_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_U8:
              len += (size_t)snprintf(out + len, cap - len, "%s%u", sep, ((uint8_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_U16:
              len +=
                  (size_t)snprintf(out + len, cap - len, "%s%u", sep, ((uint16_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_U32:
              len +=
                  (size_t)snprintf(out + len, cap - len, "%s%u", sep, ((uint32_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_U64:
              len += (size_t)snprintf(out + len, cap - len, "%s%llu", sep,
                                      (unsigned long long)((uint64_t*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_F32:
              len += (size_t)snprintf(out + len, cap - len, "%s%g", sep, ((float*)arr->data)[k]);
              break;
            case XLA_FFI_DataType_F64:
              len += (size_t)snprintf(out + len, cap - len, "%s%g", sep, ((double*)arr->data)[k]);
              break;
            default:
              len += (size_t)snprintf(out + len, cap - len, "%s?", sep);
          }
        }
        if (len < cap) len += (size_t)snprintf(out + len, cap - len, "];");
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = a->attrs[i];
        len += (size_t)snprintf(out + len, cap - len, "string:%.*s;", (int)s->len, s->ptr);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY: {
        len += (size_t)snprintf(out + len, cap - len, "dict:{");
        if (len >= cap) return;
        describe(a->attrs[i], out, cap);
        len = strlen(out);
        if (len < cap) len += (size_t)snprintf(out + len, cap - len, "};");
        break;
      }
      default:
        len += (size_t)snprintf(out + len, cap - len, "unknown;");
    }
    if (len >= cap) return;
  }
}

/** Writes a text description of every attribute into ret0 (U8, NUL-ended, the rest zero). */
XLA_FFI_Error* test_attrs(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Buffer* out = ret(cf, 0);
  size_t cap = elements(out);
  if (cap == 0) return make_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "empty result");
  char* s = out->data;
  s[0] = '\0';
  describe(&cf->attrs, s, cap);
  /* Every byte of the result is written (XLA does not zero a result's memory). */
  size_t used = strnlen(s, cap);
  memset(s + used, 0, cap - used);
  return NULL;
}

/**
 * Writes the bytes of every top-level scalar and array attribute, in the
 * frame's (sorted) order, into ret0 (U8); fails if ret0 is too small. A NaN's
 * payload and sign, a signalling NaN: what the frame holds, bit for bit.
 */
XLA_FFI_Error* test_attr_bytes(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Buffer* out = ret(cf, 0);
  size_t cap = elements(out), len = 0;
  unsigned char* dst = out->data;
  for (int64_t i = 0; i < cf->attrs.size; i++) {
    const void* src = NULL;
    size_t n = 0;
    if (cf->attrs.types[i] == XLA_FFI_AttrType_SCALAR) {
      const XLA_FFI_Scalar* s = cf->attrs.attrs[i];
      src = s->value;
      n = xla_ffi_dtype_width(s->dtype);
    } else if (cf->attrs.types[i] == XLA_FFI_AttrType_ARRAY) {
      const XLA_FFI_Array* a = cf->attrs.attrs[i];
      src = a->data;
      n = a->size * xla_ffi_dtype_width(a->dtype);
    }
    if (len + n > cap)
      return make_error(cf->api, XLA_FFI_Error_Code_OUT_OF_RANGE, "attr_bytes: result too small");
    if (n > 0) memcpy(dst + len, src, n);
    len += n;
  }
  memset(dst + len, 0, cap - len);
  return NULL;
}

/** Returns Error_Create(attr code, attr message). */
XLA_FFI_Error* test_return_error(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  int64_t code = attr_i64(cf, "code", XLA_FFI_Error_Code_INTERNAL);
  const char* msg = "Test error";
  char buf[256];
  int64_t i = find_attr(&cf->attrs, "message");
  if (i >= 0 && cf->attrs.types[i] == XLA_FFI_AttrType_STRING) {
    const XLA_FFI_ByteSpan* s = cf->attrs.attrs[i];
    snprintf(buf, sizeof buf, "%.*s", (int)s->len, s->ptr);
    msg = buf;
  }
  return make_error(cf->api, (XLA_FFI_Error_Code)code, msg);
}

/** Writes the run id into ret0 (S64). */
XLA_FFI_Error* test_run_id(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_RunId_Get_Args a = {XLA_FFI_RunId_Get_Args_STRUCT_SIZE, NULL, cf->ctx, 0};
  XLA_FFI_Error* e = cf->api->XLA_FFI_RunId_Get(&a);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = a.run_id;
  return NULL;
}

/** Writes the device ordinal into ret0 (S32), with the seed's oversize struct_size. */
XLA_FFI_Error* test_device_ordinal(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_DeviceOrdinal_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE; /* 40 > 36 */
  a.ctx = cf->ctx;
  XLA_FFI_Error* e = cf->api->XLA_FFI_DeviceOrdinal_Get(&a);
  if (e) return e;
  *(int32_t*)ret(cf, 0)->data = a.device_ordinal;
  return NULL;
}

/** Reads user data of type id attr "type_id" (an int64_t*) into ret0 (S64). */
XLA_FFI_Error* test_user_data(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_TypeId id = {attr_i64(cf, "type_id", 0)};
  XLA_FFI_ExecutionContext_Get_Args a = {XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, NULL,
                                         cf->ctx, &id, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_ExecutionContext_Get(&a);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = *(int64_t*)a.data;
  return NULL;
}

/** Returns the Stream_Get result; on success writes the stream into ret0 (S64). */
XLA_FFI_Error* test_stream(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Stream_Get_Args a = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, cf->ctx, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Stream_Get(&a);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = (int64_t)(intptr_t)a.stream;
  return NULL;
}

/** DeviceMemory_Allocate(attr size, attr alignment); on success frees it. */
XLA_FFI_Error* test_device_memory(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  if (attr_i64(cf, "free", 0)) {
    XLA_FFI_DeviceMemory_Free_Args f = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, cf->ctx,
                                        16, NULL};
    return cf->api->XLA_FFI_DeviceMemory_Free(&f);
  }
  XLA_FFI_DeviceMemory_Allocate_Args a = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, (size_t)attr_i64(cf, "size", 16),
                                          (size_t)attr_i64(cf, "alignment", 16), NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_DeviceMemory_Allocate(&a);
  if (e) return e;
  XLA_FFI_DeviceMemory_Free_Args f = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, cf->ctx,
                                      a.size, a.data};
  return cf->api->XLA_FFI_DeviceMemory_Free(&f);
}

/** Error_GetMessage round trip: returns INTERNAL with the message read back + "!". */
XLA_FFI_Error* test_get_message(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  char text[32] = "copied";
  XLA_FFI_Error* e = make_error(cf->api, XLA_FFI_Error_Code_ABORTED, text);
  strcpy(text, "changed"); /* the error must hold its own copy */
  XLA_FFI_Error_GetMessage_Args g = {XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, NULL, e, NULL};
  cf->api->XLA_FFI_Error_GetMessage(&g);
  char buf[64];
  snprintf(buf, sizeof buf, "%s!", g.message);
  destroy_error(cf->api, e);
  /* An OK-code error returned by a handler counts as success: test that too. */
  if (attr_i64(cf, "ok", 0)) return make_error(cf->api, XLA_FFI_Error_Code_OK, "fine");
  return make_error(cf->api, XLA_FFI_Error_Code_INTERNAL, buf);
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */
/* ------------------------------------------------------------------------ */

static _Atomic int64_t g_deleted;

/** How many states test_stateful's deleter has deleted. */
int64_t test_deleted_count(void) { return atomic_load(&g_deleted); }

static void delete_state(void* p) {
  free(p);
  atomic_fetch_add(&g_deleted, 1);
}

/* The TypeInfo of test_stateful's states (API 0.2+ take the deleter from
 * the type registry): register the type id with it, as
 * `rt.registerType(name, id, { typeInfo: lib.typeInfo("test_state_type_info") })`. */
static const XLA_FFI_TypeInfo_V0_2 g_state_type_info = {XLA_FFI_TypeInfo_V0_2_STRUCT_SIZE, NULL,
                                                        delete_state};
const XLA_FFI_TypeInfo_V0_2* test_state_type_info(void) { return &g_state_type_info; }

/**
 * Instantiate (and, under API 0.3, prepare and initialize):
 * State_Set(type id attr "type_id", int64 attr "value") for its own stage.
 * Execute: State_Get(type id attr "get_type_id" or "type_id", the stage of
 * attr "state_stage", default instantiate) → ret0 (S64). Attr "set_twice"
 * makes the setter set the state twice (error expected). The State layouts
 * are the calling runtime's version's (xla_ffi_versions.h).
 */
XLA_FFI_Error* test_stateful(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_TypeId id = {attr_i64(cf, "type_id", 0)};
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) {
    int64_t* s = malloc(sizeof *s);
    *s = attr_i64(cf, "value", 0);
    XLA_FFI_Error* e = xla_ffi_state_set(cf->api, cf->ctx, cf->stage, &id, s, delete_state);
    if (e) {
      free(s);
      return e;
    }
    if (attr_i64(cf, "set_twice", 0)) {
      int64_t* s2 = malloc(sizeof *s2);
      e = xla_ffi_state_set(cf->api, cf->ctx, cf->stage, &id, s2, delete_state);
      if (e) free(s2);
      return e;
    }
    return NULL;
  }
  XLA_FFI_TypeId gid = {attr_i64(cf, "get_type_id", id.type_id)};
  XLA_FFI_ExecutionStage stage = (XLA_FFI_ExecutionStage)attr_i64(
      cf, "state_stage", XLA_FFI_ExecutionStage_INSTANTIATE);
  void* state = NULL;
  XLA_FFI_Error* e = xla_ffi_state_get(cf->api, cf->ctx, stage, &gid, &state);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = *(int64_t*)state;
  return NULL;
}

/*
 * A state type the way ffi.h declares one: its id lives in the library
 * (`XLA_FFI_TypeId T::id`, 0 until a runtime registers it) and the library
 * exports its storage and TypeInfo (XLA_FFI_DECLARE_TYPE_ID_SYMBOL /
 * _TYPE_INFO_SYMBOL). The host registers them before calling the handlers:
 * `rt.registerType(name, lib.typeId("test_typed_state_type_id"), { typeInfo:
 * lib.typeInfo("test_typed_state_type_info") })`.
 */
static XLA_FFI_TypeId g_typed_state_id = {0};
XLA_FFI_TypeId* test_typed_state_type_id(void) { return &g_typed_state_id; }
const XLA_FFI_TypeInfo_V0_2* test_typed_state_type_info(void) { return &g_state_type_info; }

/** Instantiate: state = attr "value"; execute: ret0 (S64) = state. Fails
 * (where ffi.h would abort) while the type id is not registered. */
XLA_FFI_Error* test_typed_state(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  if (g_typed_state_id.type_id == 0)
    return make_error(cf->api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                      "test_typed_state: the state type is not registered");
  if (cf->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    int64_t* s = malloc(sizeof *s);
    *s = attr_i64(cf, "value", 0);
    XLA_FFI_Error* e = xla_ffi_state_set(cf->api, cf->ctx, cf->stage, &g_typed_state_id, s,
                                         delete_state);
    if (e) free(s);
    return e;
  }
  void* state = NULL;
  XLA_FFI_Error* e = xla_ffi_state_get(cf->api, cf->ctx, XLA_FFI_ExecutionStage_INSTANTIATE,
                                       &g_typed_state_id, &state);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = *(int64_t*)state;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Futures and the thread pool                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  float* out;
  const float* in;
  size_t n;
  int fail;
  int64_t delay_ms;
} async_job;

static void async_task(void* p) {
  async_job* j = p;
  if (j->delay_ms > 0) {
    struct timespec ts = {(time_t)(j->delay_ms / 1000), (long)(j->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  for (size_t k = 0; k < j->n; k++) j->out[k] = j->in[k] + 1.0f;
  XLA_FFI_Error* e;
  if (j->fail) {
    XLA_FFI_Future_SetError_Args a = {XLA_FFI_Future_SetError_Args_STRUCT_SIZE, NULL, j->future,
                                      make_error(j->api, XLA_FFI_Error_Code_INTERNAL,
                                                 "Async test error")};
    e = j->api->XLA_FFI_Future_SetError(&a);
  } else {
    XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                          j->future};
    e = j->api->XLA_FFI_Future_SetAvailable(&a);
  }
  if (e) {
    fprintf(stderr, "Failed to signal XLA_FFI_Future completion\n");
    abort();
  }
  free(j);
}

/**
 * Async: ret0 = arg0 + 1 computed on the thread pool, completing a future.
 * Attrs: "fail" (SetError instead), "inline" (complete before returning),
 * "delay_ms" (the task sleeps first).
 */
XLA_FFI_Error* test_async(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  async_job* j = malloc(sizeof *j);
  *j = (async_job){cf->api, fc.future, ret(cf, 0)->data, arg(cf, 0)->data,
                   elements(arg(cf, 0)), (int)attr_i64(cf, "fail", 0),
                   attr_i64(cf, "delay_ms", 0)};
  cf->future = fc.future;
  if (attr_i64(cf, "inline", 0)) {
    async_task(j);
    return NULL;
  }
  XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                        cf->ctx, async_task, j};
  e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
  if (e) async_task(j); /* as ffi.h: run inline when scheduling fails */
  destroy_error(cf->api, e);
  return NULL;
}

typedef struct {
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  _Atomic int64_t remaining;
  _Atomic int failed;
  int64_t fail_at;
  _Atomic int64_t* counter;
} countdown;

typedef struct {
  countdown* cd;
  int64_t index;
} countdown_task_arg;

static void countdown_task(void* p) {
  countdown_task_arg* t = p;
  countdown* cd = t->cd;
  if (t->index == cd->fail_at) atomic_store(&cd->failed, 1);
  atomic_fetch_add(cd->counter, 1);
  free(t);
  if (atomic_fetch_sub(&cd->remaining, 1) == 1) {
    XLA_FFI_Error* e;
    if (atomic_load(&cd->failed)) {
      XLA_FFI_Future_SetError_Args a = {
          XLA_FFI_Future_SetError_Args_STRUCT_SIZE, NULL, cd->future,
          make_error(cd->api, XLA_FFI_Error_Code_INTERNAL, "Count down task failed")};
      e = cd->api->XLA_FFI_Future_SetError(&a);
    } else {
      XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                            cd->future};
      e = cd->api->XLA_FFI_Future_SetAvailable(&a);
    }
    if (e) abort();
    free(cd);
  }
}

/**
 * Count-down: attr "n" tasks on the pool (attr "fail_at" = index of a failing
 * task, -1 none); the last completes the future. ret0 (S64) counts tasks run.
 */
XLA_FFI_Error* test_countdown(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  int64_t n = attr_i64(cf, "n", 1);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  countdown* cd = calloc(1, sizeof *cd);
  cd->api = cf->api;
  cd->future = fc.future;
  atomic_store(&cd->remaining, n);
  cd->fail_at = attr_i64(cf, "fail_at", -1);
  cd->counter = (_Atomic int64_t*)ret(cf, 0)->data;
  cf->future = fc.future;
  for (int64_t i = 0; i < n; i++) {
    countdown_task_arg* t = malloc(sizeof *t);
    t->cd = cd;
    t->index = i;
    XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, countdown_task, t};
    e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
    if (e) {
      destroy_error(cf->api, e);
      countdown_task(t);
    }
  }
  return NULL;
}

/**
 * Future races: completes the future from the pool while the handler is
 * returning (attr "fail" completes with an error).
 */
XLA_FFI_Error* test_future_race(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  async_job* j = malloc(sizeof *j);
  *j = (async_job){cf->api, fc.future, NULL, NULL, 0, (int)attr_i64(cf, "fail", 0), 0};
  cf->future = fc.future;
  XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                        cf->ctx, async_task, j};
  e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
  if (e) {
    destroy_error(cf->api, e);
    async_task(j);
  }
  return NULL;
}

/**
 * Future misuse: attr "mode" 0 = complete twice (returns the second error),
 * 1 = SetError(NULL), 2 = SetError(OK error). The future is then completed
 * properly so the runtime can release it.
 */
XLA_FFI_Error* test_future_misuse(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  int64_t mode = attr_i64(cf, "mode", 0);
  XLA_FFI_Future_SetAvailable_Args ok = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                         fc.future};
  if (mode == 0) {
    e = cf->api->XLA_FFI_Future_SetAvailable(&ok);
    if (e) return e;
    e = cf->api->XLA_FFI_Future_SetAvailable(&ok);
  } else {
    XLA_FFI_Future_SetError_Args a = {XLA_FFI_Future_SetError_Args_STRUCT_SIZE, NULL, fc.future,
                                      mode == 1 ? NULL
                                                : make_error(cf->api, XLA_FFI_Error_Code_OK, "")};
    e = cf->api->XLA_FFI_Future_SetError(&a);
    XLA_FFI_Error* e2 = cf->api->XLA_FFI_Future_SetAvailable(&ok);
    if (e2) destroy_error(cf->api, e2);
  }
  cf->future = fc.future; /* error + future: the runtime must still free it */
  return e;
}

/** ret0 (S64) = the id of the thread that runs the handler (gettid: the process id on the main thread). */
XLA_FFI_Error* test_thread_id(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  *(int64_t*)ret(cf, 0)->data = (int64_t)syscall(SYS_gettid);
  return NULL;
}

/** ret0 (S64) = ThreadPool_NumThreads; ret1 (S64) = sum of 1..n from n pool tasks. */
typedef struct {
  _Atomic int64_t* sum;
  _Atomic int64_t* left;
  int64_t v;
} sum_task_arg;

static void sum_task(void* p) {
  sum_task_arg* t = p;
  atomic_fetch_add(t->sum, t->v);
  atomic_fetch_sub(t->left, 1);
  free(t);
}

XLA_FFI_Error* test_thread_pool(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  int64_t nt = -1;
  XLA_FFI_ThreadPool_NumThreads_Args a = {XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, &nt};
  XLA_FFI_Error* e = cf->api->XLA_FFI_ThreadPool_NumThreads(&a);
  if (e) return e;
  *(int64_t*)ret(cf, 0)->data = nt;
  int64_t n = attr_i64(cf, "n", 10);
  _Atomic int64_t sum = 0, left = n;
  for (int64_t i = 1; i <= n; i++) {
    sum_task_arg* t = malloc(sizeof *t);
    *t = (sum_task_arg){&sum, &left, i};
    XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                          cf->ctx, sum_task, t};
    e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
    if (e) {
      free(t);
      return e;
    }
  }
  while (atomic_load(&left) > 0) sched_yield();
  *(int64_t*)ret(cf, 1)->data = atomic_load(&sum);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Metadata variants and registration                                        */
/* ------------------------------------------------------------------------ */

/** Reports API version 0.2 (incompatible with a 0.1 runtime). */
XLA_FFI_Error* test_version_02(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)cf->extension_start;
    /* A 0.2 handler also writes state_type_id at offset 40 (48-byte Metadata). */
    ((XLA_FFI_Metadata_V0_2*)ext->metadata)->state_type_id.type_id = 7;
    return metadata(cf, 0, 2, 0);
  }
  return NULL;
}

/** Registers test_echo as "test.static_echo" on platform "Host" via the API. */
XLA_FFI_Error* test_register_static(const XLA_FFI_Api* api, const char* platform) {
  XLA_FFI_Handler_Register_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  a.name = (XLA_FFI_ByteSpan){"test.static_echo", strlen("test.static_echo")};
  a.platform = (XLA_FFI_ByteSpan){platform, strlen(platform)};
  a.bundle.execute = test_echo;
  return api->XLA_FFI_Handler_Register(&a);
}

/* ------------------------------------------------------------------------ */
/* Stress: one handler mixing synchronous, asynchronous and failing calls    */
/* ------------------------------------------------------------------------ */

static _Atomic int64_t g_mixed[5]; /* calls, sync, async started, async done, errors */

/** Reads (and with reset != 0 zeroes) test_mixed's counters into out[5]. */
void test_mixed_counts(int64_t* out, int32_t reset) {
  for (int i = 0; i < 5; i++) out[i] = reset ? atomic_exchange(&g_mixed[i], 0) : atomic_load(&g_mixed[i]);
}

static void mixed_task(void* p) {
  XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL, NULL};
  const XLA_FFI_Api* api = ((const XLA_FFI_Api**)p)[0];
  a.future = ((XLA_FFI_Future**)p)[1];
  free(p);
  atomic_fetch_add(&g_mixed[3], 1);
  if (api->XLA_FFI_Future_SetAvailable(&a)) abort();
}

/**
 * Call k (a process-wide count) is synchronous when k % 3 == 0, completes a
 * future from the pool when k % 3 == 1 (inline when the pool refuses), and
 * returns an error when k % 3 == 2.
 */
XLA_FFI_Error* test_mixed(XLA_FFI_CallFrame* cf) {
  METADATA(cf, 0);
  int64_t k = atomic_fetch_add(&g_mixed[0], 1);
  switch (k % 3) {
    case 0:
      atomic_fetch_add(&g_mixed[1], 1);
      return NULL;
    case 1: {
      XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
      XLA_FFI_Error* e = cf->api->XLA_FFI_Future_Create(&fc);
      if (e) return e;
      void** job = malloc(2 * sizeof(void*));
      job[0] = (void*)cf->api;
      job[1] = fc.future;
      atomic_fetch_add(&g_mixed[2], 1);
      cf->future = fc.future;
      XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                            cf->ctx, mixed_task, job};
      e = cf->api->XLA_FFI_ThreadPool_Schedule(&s);
      if (e) {
        destroy_error(cf->api, e);
        mixed_task(job);
      }
      return NULL;
    }
    default:
      atomic_fetch_add(&g_mixed[4], 1);
      return make_error(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "mixed: error call");
  }
}

/* ------------------------------------------------------------------------ */
/* API 0.4: a handler built against 0.4 reads error codes back               */
/* ------------------------------------------------------------------------ */

/*
 * Reports API 0.4 (jaxlib 0.11's headers) and reads back, with
 * XLA_FFI_Error_GetCode, the code of an error it made (Error_Create
 * NOT_FOUND) and of one the runtime made (Stream_Get on the host:
 * UNIMPLEMENTED). Returns an error with the runtime-made error's code and a
 * message naming both codes read; a table without the slot (< 0.4) reads
 * UNKNOWN for both.
 */
XLA_FFI_Error* v04_get_code(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata)
    return metadata(cf, 0, 4, 0);
  const XLA_FFI_Api* api = cf->api;
  XLA_FFI_Error* made = make_error(api, XLA_FFI_Error_Code_NOT_FOUND, "made here");
  XLA_FFI_Error_Code made_code = xla_ffi_error_get_code(api, made);
  destroy_error(api, made);
  XLA_FFI_Stream_Get_Args s;
  memset(&s, 0, sizeof s);
  s.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  s.ctx = cf->ctx;
  XLA_FFI_Error* runtime_made = api->XLA_FFI_Stream_Get(&s);
  XLA_FFI_Error_Code runtime_code = xla_ffi_error_get_code(api, runtime_made);
  if (runtime_made) destroy_error(api, runtime_made);
  char msg[128];
  snprintf(msg, sizeof msg, "read back: created %d, runtime-made %d", (int)made_code,
           (int)runtime_code);
  return make_error(api, runtime_code == XLA_FFI_Error_Code_OK ? XLA_FFI_Error_Code_INTERNAL
                                                                : runtime_code,
                    msg);
}

/*
 * Reports API 0.4 and calls the handler whose address is the `inner` (s64)
 * attribute with its own call frame (a TS handler, say), then reads the code
 * of the error it returned with XLA_FFI_Error_GetCode. Returns an error with
 * that code and "inner error: code N: <its message>".
 */
XLA_FFI_Error* v04_inner_code(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata)
    return metadata(cf, 0, 4, 0);
  const XLA_FFI_Api* api = cf->api;
  XLA_FFI_Handler* inner = (XLA_FFI_Handler*)(intptr_t)attr_i64(cf, "inner", 0);
  if (!inner) return make_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "no inner handler");
  XLA_FFI_Error* e = inner(cf);
  if (!e) return make_error(api, XLA_FFI_Error_Code_INTERNAL, "the inner handler succeeded");
  XLA_FFI_Error_Code code = xla_ffi_error_get_code(api, e);
  XLA_FFI_Error_GetMessage_Args m = {XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, NULL, e, NULL};
  api->XLA_FFI_Error_GetMessage(&m);
  char msg[256];
  snprintf(msg, sizeof msg, "inner error: code %d: %s", (int)code, m.message ? m.message : "");
  destroy_error(api, e);
  return make_error(api, code, msg);
}
