/*
 * runtime_library.c: loading users' handler libraries and resolving handler
 * symbols by name at run time (dlopen/dlsym), with the loader's messages.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * Each thread's last loader error, in a buffer of its own on the heap
 * (freed when the thread ends) rather than in thread-local storage: this
 * library has an initial-exec thread-local (crash.c), so every load of it
 * takes its whole thread-local block from the loader's small static TLS
 * reserve, which a 1 KiB buffer there used up after a few loads on aarch64
 * ("cannot allocate memory in static TLS block" for the next `deno test`
 * file).
 */
#define ERROR_CAP 1024
static pthread_key_t g_error_key;
static int g_error_key_made;
static pthread_once_t g_error_once = PTHREAD_ONCE_INIT;

static void make_error_key(void) { g_error_key_made = pthread_key_create(&g_error_key, free) == 0; }

/* The key goes with the library (its buffers are then only freed by their threads' ends). */
__attribute__((destructor)) static void drop_error_key(void) {
  if (g_error_key_made) pthread_key_delete(g_error_key);
}

static char* error_buffer(void) {
  pthread_once(&g_error_once, make_error_key);
  if (!g_error_key_made) return NULL;
  char* b = pthread_getspecific(g_error_key);
  if (b == NULL && (b = malloc(ERROR_CAP)) != NULL) {
    b[0] = 0;
    if (pthread_setspecific(g_error_key, b) != 0) {
      free(b);
      return NULL;
    }
  }
  return b;
}

static void keep_error(void) {
  const char* e = dlerror();
  char* b = error_buffer();
  if (b != NULL) snprintf(b, ERROR_CAP, "%s", e ? e : "unknown loader error");
}

/** Opens a shared library (RTLD_NOW | RTLD_LOCAL); NULL on failure. */
void* xla_ffi_deno_runtime_dlopen(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) keep_error();
  return h;
}

/** Resolves a symbol; NULL when missing. */
void* xla_ffi_deno_runtime_dlsym(void* handle, const char* name) {
  dlerror();
  void* p = dlsym(handle, name);
  if (!p) keep_error();
  return p;
}

/* runtime_pool.c (hidden, as runtime_internal.h declares it). */
__attribute__((visibility("hidden"))) int32_t xrt_defer_dlclose(void* handle);

/**
 * Closes a library; 0 on success. While a closed runtime's busy pool is still
 * being joined (its tasks may run the library's code), the dlclose happens
 * once that is over.
 */
int32_t xla_ffi_deno_runtime_dlclose(void* handle) {
  if (xrt_defer_dlclose(handle)) return 0;
  int r = dlclose(handle);
  if (r) keep_error();
  return r;
}

/** The calling thread's last loader error. */
const char* xla_ffi_deno_runtime_dlerror(void) {
  const char* b = g_error_key_made ? pthread_getspecific(g_error_key) : NULL;
  return b != NULL ? b : "";
}

/**
 * Writes the file name of the loaded object that contains addr into buf;
 * returns 0 when no loaded object contains it (e.g. its library was unloaded).
 */
int32_t xla_ffi_deno_runtime_dladdr(const void* addr, char* buf, int32_t cap) {
  Dl_info info;
  if (!addr || !buf || cap <= 0 || !dladdr(addr, &info) || !info.dli_fname) return 0;
  snprintf(buf, (size_t)cap, "%s", info.dli_fname);
  return 1;
}

/**
 * Writes what the code at addr is into buf: "<file>@<load address>:<symbol>",
 * the symbol only when addr is exactly where that exported symbol starts.
 * Returns 0 when no loaded object contains addr. A library that was unloaded
 * and loaded again, or another build of it at the same path, covers an old
 * handler address with the same function only if all three parts match (the
 * loader may map the file at another place, e.g. under ASan, and addr then
 * falls on other code or data of it).
 */
int32_t xla_ffi_deno_runtime_code_identity(const void* addr, char* buf, int32_t cap) {
  Dl_info info;
  if (!addr || !buf || cap <= 0 || !dladdr(addr, &info) || !info.dli_fname) return 0;
  const char* sym = info.dli_saddr == addr && info.dli_sname ? info.dli_sname : "";
  snprintf(buf, (size_t)cap, "%s@%p:%s", info.dli_fname, info.dli_fbase, sym);
  return 1;
}
