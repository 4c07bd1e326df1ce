/*
 * ts_caller.c: a native handler that calls another handler (given by
 * address in the i64 attribute "target") on a thread of its own and waits
 * for it, as a native handler that fans work out to its own threads does.
 * Used to test that such a wait never deadlocks the JS thread.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../xla_ffi.h"

typedef struct {
  XLA_FFI_Handler* target;
  XLA_FFI_CallFrame frame;
  XLA_FFI_Error* error;
} call_arg;

static void* call_main(void* p) {
  call_arg* a = p;
  a->error = a->target(&a->frame);
  return NULL;
}

static XLA_FFI_Error* fail(const XLA_FFI_Api* api, const char* msg) {
  XLA_FFI_Error_Create_Args e;
  memset(&e, 0, sizeof e);
  e.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  e.message = msg;
  e.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return api->XLA_FFI_Error_Create(&e);
}

XLA_FFI_Error* tsc_call_on_thread(XLA_FFI_CallFrame* cf) {
  if (cf->extension_start != NULL) { /* metadata query: ABI 0.1, no traits */
    XLA_FFI_Metadata_Extension* ext = (XLA_FFI_Metadata_Extension*)cf->extension_start;
    ext->metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    ext->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    ext->metadata->traits = 0;
    return NULL;
  }
  if (cf->attrs.size != 1 || cf->attrs.types[0] != XLA_FFI_AttrType_SCALAR)
    return fail(cf->api, "tsc_call_on_thread takes one scalar attribute: target");
  XLA_FFI_Scalar* s = (XLA_FFI_Scalar*)cf->attrs.attrs[0];
  call_arg a;
  memset(&a, 0, sizeof a);
  a.target = (XLA_FFI_Handler*)(uintptr_t)*(int64_t*)s->value;
  a.frame = *cf;
  a.frame.attrs.size = 0; /* the target gets no operands */
  a.frame.future = NULL;
  pthread_t t;
  if (pthread_create(&t, NULL, call_main, &a) != 0) return fail(cf->api, "pthread_create failed");
  pthread_join(t, NULL);
  return a.error;
}
