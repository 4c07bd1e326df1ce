/*
 * common.c: the utilities of common.h, shared by the TS handler host, the
 * embedded runtime and the Python host.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

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

int xfd_dtype_valid(int64_t dt) {
  return (dt >= XLA_FFI_DataType_PRED && dt <= XLA_FFI_DataType_F8E8M0FNU && dt != 13 &&
          dt != 14);
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
