/*
 * The C baseline of the GPU benches: the same measurements as
 * bench/gpu/cuda_bench.ts, calling the CUDA driver API directly (opened with
 * dlopen, so no link-time libcuda is needed). Prints one line per metric:
 *   BENCH <name> <value>
 * Metrics: h2d_gbps, d2h_gbps, d2d_gbps (pageable host memory, synchronous
 * copies, median of the repetitions) and launch_empty_us, launch_saxpy_us
 * (host time per cuLaunchKernel, queued back to back on one stream, then
 * synchronised; median of the repetitions).
 *
 * Build: cc -std=c11 -O2 -DUSE_CUDA_H -I/usr/local/cuda/include driver_bench.c -ldl
 * (without -DUSE_CUDA_H it uses its own declarations of the few entries).
 * Run:   ./driver_bench <saxpy.ptx> [MiB=64] [launches=20000]
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef USE_CUDA_H
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
CUresult cuInit(unsigned int);
CUresult cuGetErrorName(CUresult, const char **);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxSynchronize(void);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleUnload(CUmodule);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
#endif

#define FN(name) static __typeof__(&name) p_##name
FN(cuInit);
FN(cuGetErrorName);
FN(cuDeviceGet);
FN(cuDevicePrimaryCtxRetain);
FN(cuDevicePrimaryCtxRelease_v2);
FN(cuCtxSetCurrent);
FN(cuCtxSynchronize);
FN(cuMemAlloc_v2);
FN(cuMemFree_v2);
FN(cuMemcpyHtoD_v2);
FN(cuMemcpyDtoH_v2);
FN(cuMemcpyDtoD_v2);
FN(cuStreamCreate);
FN(cuStreamSynchronize);
FN(cuStreamDestroy_v2);
FN(cuModuleLoadData);
FN(cuModuleUnload);
FN(cuModuleGetFunction);
FN(cuLaunchKernel);

static void *lib;

static void *sym(const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "the CUDA driver has no %s\n", name);
    exit(2);
  }
  return p;
}

#define LOAD(name) p_##name = (__typeof__(p_##name))sym(#name)

static void check(CUresult r, const char *what) {
  if (r != 0) {
    const char *name = NULL;
    if (p_cuGetErrorName) p_cuGetErrorName(r, &name);
    fprintf(stderr, "%s failed: %s (%d)\n", what, name ? name : "?", (int)r);
    exit(1);
  }
}
#define CK(call) check(call, #call)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  buf[n] = 0;
  fclose(f);
  return buf;
}

enum { REPS = 15, LAUNCH_REPS = 7 };

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s saxpy.ptx [MiB] [launches]\n", argv[0]);
    return 2;
  }
  size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 64) << 20;
  int launches = argc > 3 ? atoi(argv[3]) : 20000;
  /* XLA_FFI_DENO_CUDA names another driver library, as for the bindings. */
  const char *path = getenv("XLA_FFI_DENO_CUDA");
  if (!path || !*path) path = "libcuda.so.1";
  lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    return 2;
  }
  LOAD(cuInit);
  LOAD(cuGetErrorName);
  LOAD(cuDeviceGet);
  LOAD(cuDevicePrimaryCtxRetain);
  LOAD(cuDevicePrimaryCtxRelease_v2);
  LOAD(cuCtxSetCurrent);
  LOAD(cuCtxSynchronize);
  LOAD(cuMemAlloc_v2);
  LOAD(cuMemFree_v2);
  LOAD(cuMemcpyHtoD_v2);
  LOAD(cuMemcpyDtoH_v2);
  LOAD(cuMemcpyDtoD_v2);
  LOAD(cuStreamCreate);
  LOAD(cuStreamSynchronize);
  LOAD(cuStreamDestroy_v2);
  LOAD(cuModuleLoadData);
  LOAD(cuModuleUnload);
  LOAD(cuModuleGetFunction);
  LOAD(cuLaunchKernel);

  CUdevice dev;
  CUcontext ctx;
  CK(p_cuInit(0));
  CK(p_cuDeviceGet(&dev, 0));
  CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(p_cuCtxSetCurrent(ctx));

  unsigned char *host = malloc(bytes);
  if (!host) return 2;
  memset(host, 1, bytes);
  CUdeviceptr a, b;
  CK(p_cuMemAlloc_v2(&a, bytes));
  CK(p_cuMemAlloc_v2(&b, bytes));
  double t[REPS];
  const double gb = (double)bytes / 1e9;

  for (int i = 0; i < 3; i++) CK(p_cuMemcpyHtoD_v2(a, host, bytes));
  for (int i = 0; i < REPS; i++) {
    double t0 = now_s();
    CK(p_cuMemcpyHtoD_v2(a, host, bytes));
    t[i] = now_s() - t0;
  }
  printf("BENCH h2d_gbps %.3f\n", gb / median(t, REPS));

  for (int i = 0; i < 3; i++) CK(p_cuMemcpyDtoH_v2(host, a, bytes));
  for (int i = 0; i < REPS; i++) {
    double t0 = now_s();
    CK(p_cuMemcpyDtoH_v2(host, a, bytes));
    t[i] = now_s() - t0;
  }
  printf("BENCH d2h_gbps %.3f\n", gb / median(t, REPS));

  for (int i = 0; i < 3; i++) CK(p_cuMemcpyDtoD_v2(b, a, bytes));
  CK(p_cuCtxSynchronize());
  for (int i = 0; i < REPS; i++) {
    double t0 = now_s();
    CK(p_cuMemcpyDtoD_v2(b, a, bytes));
    CK(p_cuCtxSynchronize());
    t[i] = now_s() - t0;
  }
  printf("BENCH d2d_gbps %.3f\n", gb / median(t, REPS));

  char *ptx = read_file(argv[1]);
  CUmodule mod;
  CUfunction empty, saxpy;
  CK(p_cuModuleLoadData(&mod, ptx));
  CK(p_cuModuleGetFunction(&empty, mod, "empty"));
  CK(p_cuModuleGetFunction(&saxpy, mod, "saxpy"));
  CUstream stream;
  CK(p_cuStreamCreate(&stream, 1));
  double tl[LAUNCH_REPS];

  for (int i = 0; i < 1000; i++) {
    CK(p_cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
  }
  CK(p_cuStreamSynchronize(stream));
  for (int r = 0; r < LAUNCH_REPS; r++) {
    double t0 = now_s();
    for (int i = 0; i < launches; i++) {
      CK(p_cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
    }
    CK(p_cuStreamSynchronize(stream));
    tl[r] = (now_s() - t0) / launches;
  }
  printf("BENCH launch_empty_us %.3f\n", median(tl, LAUNCH_REPS) * 1e6);

  /* saxpy over 256 floats: the arguments are written per launch, as a caller would. */
  float alpha = 2.0f;
  CUdeviceptr x = a, y = b;
  int n = 256;
  void *params[4] = {&alpha, &x, &y, &n};
  for (int i = 0; i < 1000; i++) {
    CK(p_cuLaunchKernel(saxpy, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL));
  }
  CK(p_cuStreamSynchronize(stream));
  for (int r = 0; r < LAUNCH_REPS; r++) {
    double t0 = now_s();
    for (int i = 0; i < launches; i++) {
      alpha = (float)(i & 7);
      CK(p_cuLaunchKernel(saxpy, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL));
    }
    CK(p_cuStreamSynchronize(stream));
    tl[r] = (now_s() - t0) / launches;
  }
  printf("BENCH launch_saxpy_us %.3f\n", median(tl, LAUNCH_REPS) * 1e6);

  CK(p_cuStreamDestroy_v2(stream));
  CK(p_cuModuleUnload(mod));
  CK(p_cuMemFree_v2(a));
  CK(p_cuMemFree_v2(b));
  CK(p_cuDevicePrimaryCtxRelease_v2(dev));
  free(host);
  free(ptx);
  return 0;
}
