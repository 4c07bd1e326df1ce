/*
 * crash_wrap_check.cc: checks, as real XLA would exercise it, that the
 * wrapper Xla.register gives XLA for a C handler (xla_ffi_deno_crash_wrap,
 * native/crash.c) sets the thread's crash slot during the call and puts it
 * back after it, also when the handler throws a C++ exception that the
 * caller catches (as XLA does). Usage: crash_wrap_check <libxla_ffi_deno.so>;
 * prints one line per check and exits 0 when all pass.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <dlfcn.h>

#include <cstdio>
#include <stdexcept>

using Handler = void* (*)(void*);
static void* (*running)(void);
static void* seen;

extern "C" void* throws_handler(void*) {
  seen = running();
  throw std::runtime_error("thrown by the handler");
}

extern "C" void* returns_handler(void*) {
  seen = running();
  return nullptr;
}

static int check(const char* what, bool ok) {
  std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == nullptr) {
    std::printf("FAILED dlopen: %s\n", dlerror());
    return 2;
  }
  auto wrap = reinterpret_cast<void* (*)(void*)>(dlsym(lib, "xla_ffi_deno_crash_wrap"));
  running = reinterpret_cast<void* (*)(void)>(dlsym(lib, "xla_ffi_deno_crash_running"));
  if (wrap == nullptr || running == nullptr) return 2;
  int failed = 0;
  auto r = reinterpret_cast<Handler>(wrap(reinterpret_cast<void*>(returns_handler)));
  failed += check("a handler gets a wrapper", reinterpret_cast<void*>(r) != reinterpret_cast<void*>(returns_handler));
  r(nullptr);
  failed += check("the slot names the handler during the call", seen == reinterpret_cast<void*>(returns_handler));
  failed += check("the slot is empty after the call", running() == nullptr);
  auto t = reinterpret_cast<Handler>(wrap(reinterpret_cast<void*>(throws_handler)));
  bool caught = false;
  try {
    t(nullptr);
  } catch (const std::runtime_error&) {
    caught = true;
  }
  failed += check("the exception reaches the caller", caught);
  failed += check("the slot names the throwing handler during its call", seen == reinterpret_cast<void*>(throws_handler));
  failed += check("the slot is empty after the exception", running() == nullptr);
  failed += check("the same handler gets the same wrapper",
                  wrap(reinterpret_cast<void*>(throws_handler)) == reinterpret_cast<void*>(t));
  return failed == 0 ? 0 : 1;
}
