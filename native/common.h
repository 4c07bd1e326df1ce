/*
 * common.h: the call-frame check and small utilities shared by every part of the native
 * library: the TS handler host (handler*.c), the embedded runtime
 * (runtime*.c) and the Python host (python_host.c). It depends on nothing
 * but the ABI header, so that each part can be read and built on its own
 * terms. Not part of the public ABI.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_COMMON_H_
#define DENO_XLA_FFI_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#include "xla_ffi.h"
#include "xla_ffi_dtype.h"

/* Internal functions and data shared between the library's own C files:
 * bound at link time, never exported (no PLT or GOT indirection). */
#define XFD_INTERNAL __attribute__((visibility("hidden")))

/* The limits of the call-frame checks (XFD_MAX_OPERANDS, XFD_MAX_RANK,
 * XFD_MAX_ATTRS, XFD_MAX_DEPTH, XFD_MAX_NAME, XFD_MAX_STRING, XFD_MAX_ARRAY)
 * are abi_facts.h's, included by xla_ffi.h. */
#define XFD_MAX_WARNINGS 16        /* stderr warnings per process */

/* A warning on stderr (a newline is added); after XFD_MAX_WARNINGS of them
 * in a process, one note that further warnings are suppressed. */
XFD_INTERNAL void xfd_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether dtype is a data type of the ABI (TOKEN excluded). */
static inline int xfd_dtype_valid(int64_t dtype) { return xla_ffi_dtype_has_values(dtype); }
/* Whether the n bytes at s are valid UTF-8. */
XFD_INTERNAL int xfd_utf8_valid(const unsigned char* s, size_t n);
/* What a frame check knows of the frame's runtime (xfd_check_frame). */
typedef struct {
  /* Also check the frame pointer, the frame's size, its api table and its
   * stage (a frame that nothing has looked at yet, as checkCallFrame's). */
  int whole;
  /* The frame's api is a table of the runtime whose contexts start with
   * ctx_tag: the context must be one of them, and in the execute stage a
   * buffer with elements must have data. Other runtimes' contexts are
   * opaque, and their buffers may be empty views. */
  int own;
  uint64_t ctx_tag;
} xfd_frame_rules;
/* The structural check of a call frame (struct sizes, null pointers, counts,
 * ranks, data types, attribute names sorted, unique and UTF-8, the limits
 * above), shared by the embedded runtime and the TS handler host. Returns 0,
 * or an XLA error code with a message naming the first problem in buf. */
XFD_INTERNAL int32_t xfd_check_frame(const XLA_FFI_CallFrame* f, const xfd_frame_rules* rules,
                                     char* buf, size_t cap);
/* Starts a detached thread running fn(arg) and pins the library holding fn
 * first, so that the thread never outlives the code it runs (Deno closes
 * libraries at exit). 1 when the thread started, else 0. */
XFD_INTERNAL int xfd_thread_start_detached(void* (*fn)(void*), void* arg);

#endif /* DENO_XLA_FFI_COMMON_H_ */
