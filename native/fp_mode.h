/*
 * fp_mode.h: the thread's floating-point mode (x86-64 MXCSR, aarch64 FPCR),
 * entered and left around handler calls. Two modes matter:
 * - XLA's: denormals flushed to zero and read as zero, rounding to nearest.
 *   XLA's CPU client sets it around every execute (xla/pjrt/cpu/cpu_client.cc:
 *   tsl::port::ScopedFlushDenormal and ScopedSetRound(FE_TONEAREST) in
 *   execute_thunks) and for the life of its pool threads
 *   (xla/tsl/platform/threadpool.cc, EigenEnvironment::CreateThread), so a
 *   native handler computes in it; the embedded runtime does the same.
 * - JavaScript's: IEEE 754, denormals kept, rounding to nearest; a TS
 *   handler's entry point runs it whatever mode its caller had.
 * Entering returns the mode to restore; a mode already in force is not
 * written again (a write of the control register costs about 10 ns).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_FP_MODE_H_
#define DENO_XLA_FFI_FP_MODE_H_

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
typedef unsigned int xfd_fp_mode;
/* FTZ (bit 15) and DAZ (bit 6); rounding control (bits 13-14). */
#define XFD_FP_FLUSH 0x8040u
#define XFD_FP_FLUSH_ALL XFD_FP_FLUSH
#define XFD_FP_ROUND 0x6000u
static inline xfd_fp_mode xfd_fp_get(void) { return _mm_getcsr(); }
static inline void xfd_fp_set(xfd_fp_mode m) { _mm_setcsr(m); }
#elif defined(__aarch64__)
typedef uint64_t xfd_fp_mode;
/* FZ (bit 24), what XLA sets; with FZ16 (bit 19), what JavaScript clears; RMode (bits 22-23). */
#define XFD_FP_FLUSH (1ull << 24)
#define XFD_FP_FLUSH_ALL ((1ull << 24) | (1ull << 19))
#define XFD_FP_ROUND (3ull << 22)
static inline xfd_fp_mode xfd_fp_get(void) {
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
static inline void xfd_fp_set(xfd_fp_mode m) { __asm__ __volatile__("msr fpcr, %0" : : "r"(m)); }
#else
typedef int xfd_fp_mode;
#define XFD_FP_FLUSH 0
#define XFD_FP_FLUSH_ALL 0
#define XFD_FP_ROUND 0
static inline xfd_fp_mode xfd_fp_get(void) { return 0; }
static inline void xfd_fp_set(xfd_fp_mode m) { (void)m; }
#endif

/* Enters the mode whose flush bits are `flush` (XFD_FP_FLUSH or 0), rounding to nearest. */
static inline xfd_fp_mode xfd_fp_enter(xfd_fp_mode flush) {
  xfd_fp_mode m = xfd_fp_get();
  xfd_fp_mode want = (m & ~(xfd_fp_mode)(XFD_FP_FLUSH_ALL | XFD_FP_ROUND)) | flush;
  if (want != m) xfd_fp_set(want);
  return m;
}

/* XLA's mode (for native handlers). */
static inline xfd_fp_mode xfd_fp_enter_xla(void) { return xfd_fp_enter(XFD_FP_FLUSH); }

/* JavaScript's mode (for TS handlers). */
static inline xfd_fp_mode xfd_fp_enter_js(void) { return xfd_fp_enter(0); }

/* Restores the mode an enter returned. */
static inline void xfd_fp_leave(xfd_fp_mode m) {
  if (xfd_fp_get() != m) xfd_fp_set(m);
}

#endif /* DENO_XLA_FFI_FP_MODE_H_ */
