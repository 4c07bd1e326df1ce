/*
 * A stand-in for the CUDA driver library, for testing the TypeScript CUDA
 * bindings on machines without a GPU. It implements the driver API subset
 * the bindings use with host memory: "device" pointers are host addresses,
 * copies are memcpy, and launching the kernels of examples/kernels/saxpy.cu
 * runs them on the host, reading the arguments through kernelParams exactly
 * as the driver does. So the tests check the bindings' marshalling (argument
 * blocks, out-parameters, strides, offsets) and error plumbing for real.
 *
 * Stream-ordered allocations are modelled: memory from cuMemAllocAsync is
 * "pending" until the host has waited for its stream (cuStreamSynchronize of
 * that stream, or cuCtxSynchronize); a synchronous copy or memset touching
 * pending memory, or an asynchronous one on another stream, fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS, where a GPU would race.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef void *Handle;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  NOT_READY = 600,
  ILLEGAL_ADDRESS = 700,
};

#define STANDIN_MAX_ALLOC ((size_t)1 << 32)

static int primary_refs;
static _Thread_local Handle current_ctx;
static char ctx_token;

struct named { int code; const char *name; const char *text; };
static const struct named errors[] = {
  {OK, "CUDA_SUCCESS", "no error"},
  {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
  {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
  {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
  {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
  {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
  {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
  {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
  {NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
  {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
};

static const struct named *find_error(CUresult r) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
    if (errors[i].code == r) return &errors[i];
  }
  return NULL;
}

CUresult cuGetErrorName(CUresult r, const char **out) {
  const struct named *e = find_error(r);
  if (!e) { *out = NULL; return INVALID_VALUE; }
  *out = e->name;
  return OK;
}

CUresult cuGetErrorString(CUresult r, const char **out) {
  const struct named *e = find_error(r);
  if (!e) { *out = NULL; return INVALID_VALUE; }
  *out = e->text;
  return OK;
}

CUresult cuInit(unsigned int flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (ordinal != 0) return INVALID_DEVICE;
  *d = 0;
  return OK;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  if (len <= 0) return INVALID_VALUE;
  strncpy(name, "Stand-in CUDA device", (size_t)len - 1);
  name[len - 1] = 0;
  return OK;
}

/* Whether the device reports memory pools (attribute 115); tests switch it. */
static int memory_pools = 1;
void standin_set_memory_pools(int on) { memory_pools = on; }

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  switch (attr) {
    case 1: *v = 1024; return OK;   /* max threads per block */
    case 16: *v = 132; return OK;   /* multiprocessors */
    case 75: *v = 9; return OK;     /* compute capability major */
    case 76: *v = 0; return OK;     /* minor */
    case 115: *v = memory_pools; return OK; /* memory pools supported */
    default: return INVALID_VALUE;
  }
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  *bytes = STANDIN_MAX_ALLOC;
  return OK;
}

CUresult cuDevicePrimaryCtxRetain(Handle *ctx, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  primary_refs++;
  *ctx = &ctx_token;
  return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  if (primary_refs <= 0) return INVALID_CONTEXT;
  if (--primary_refs == 0 && current_ctx == &ctx_token) current_ctx = NULL;
  return OK;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active) {
  if (d != 0) return INVALID_DEVICE;
  *flags = 0;
  *active = primary_refs > 0;
  return OK;
}

CUresult cuCtxSetCurrent(Handle ctx) {
  if (ctx != NULL && (ctx != &ctx_token || primary_refs == 0)) return INVALID_CONTEXT;
  current_ctx = ctx;
  return OK;
}

CUresult cuCtxGetCurrent(Handle *ctx) { *ctx = current_ctx; return OK; }
static void settle_pending(Handle stream, int all);
CUresult cuCtxSynchronize(void) {
  if (!current_ctx) return INVALID_CONTEXT;
  settle_pending(NULL, 1);
  return OK;
}

/* Number of live allocations, so tests can see frees happen (atomic: the
 * embedded runtime allocates from several threads). */
static _Atomic long live_allocations;
long standin_live_allocations(void) { return live_allocations; }
int standin_primary_refs(void) { return primary_refs; }

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  if (!current_ctx) return INVALID_CONTEXT;
  *free_bytes = STANDIN_MAX_ALLOC / 2;
  *total = STANDIN_MAX_ALLOC;
  return OK;
}

/* The live allocations' ranges, so cuPointerGetAttribute can tell "device"
 * memory from host memory as the driver does (a list under a mutex: the
 * embedded runtime allocates from several threads). */
struct range {
  CUdeviceptr base;
  size_t bytes;
  int pending;           /* from cuMemAllocAsync, its stream not yet waited for */
  Handle stream;         /* that stream */
  struct range *next;
};
static struct range *ranges;
static pthread_mutex_t ranges_mu = PTHREAD_MUTEX_INITIALIZER;

/* The host waited for `stream` (or for everything): its allocations are usable. */
static void settle_pending(Handle stream, int all) {
  pthread_mutex_lock(&ranges_mu);
  for (struct range *r = ranges; r; r = r->next) {
    if (r->pending && (all || r->stream == stream)) r->pending = 0;
  }
  pthread_mutex_unlock(&ranges_mu);
}

/* May [p, p+n) be used now, synchronously (sync) or in `stream`'s order?
 * ILLEGAL_ADDRESS when it touches memory still pending on another stream. */
static CUresult check_use(CUdeviceptr p, size_t n, int sync, Handle stream) {
  CUresult rc = OK;
  pthread_mutex_lock(&ranges_mu);
  for (const struct range *r = ranges; r; r = r->next) {
    if (r->pending && p < r->base + r->bytes && r->base < p + (n ? n : 1) &&
        (sync || r->stream != stream)) {
      rc = ILLEGAL_ADDRESS;
      break;
    }
  }
  pthread_mutex_unlock(&ranges_mu);
  return rc;
}

/* An allocation; `pending` for stream-ordered ones (on `stream`). */
static CUresult alloc_range(CUdeviceptr *p, size_t bytes, int pending, Handle stream) {
  if (!current_ctx) return INVALID_CONTEXT;
  if (bytes == 0) return INVALID_VALUE;
  if (bytes > STANDIN_MAX_ALLOC) return OUT_OF_MEMORY;
  void *m = malloc(bytes);
  struct range *r = malloc(sizeof *r);
  if (!m || !r) {
    free(m);
    free(r);
    return OUT_OF_MEMORY;
  }
  r->base = (CUdeviceptr)(uintptr_t)m;
  r->bytes = bytes;
  r->pending = pending;
  r->stream = stream;
  pthread_mutex_lock(&ranges_mu);
  r->next = ranges;
  ranges = r;
  pthread_mutex_unlock(&ranges_mu);
  live_allocations++;
  *p = (CUdeviceptr)(uintptr_t)m;
  return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) { return alloc_range(p, bytes, 0, NULL); }

CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!current_ctx) return INVALID_CONTEXT;
  if (p == 0) return OK;
  pthread_mutex_lock(&ranges_mu);
  struct range **at = &ranges;
  while (*at && (*at)->base != p) at = &(*at)->next;
  struct range *r = *at;
  if (r) *at = r->next;
  pthread_mutex_unlock(&ranges_mu);
  if (!r) return INVALID_VALUE;
  free(r);
  free((void *)(uintptr_t)p);
  live_allocations--;
  return OK;
}

/* Memory type (2) and managed flag (8) of an address: device memory for
 * addresses inside a live allocation; anything else is unregistered host
 * memory, for which the driver answers CUDA_ERROR_INVALID_VALUE. */
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) {
  pthread_mutex_lock(&ranges_mu);
  const struct range *r = ranges;
  while (r && !(p >= r->base && p - r->base < r->bytes)) r = r->next;
  pthread_mutex_unlock(&ranges_mu);
  if (!r) return INVALID_VALUE;
  if (attribute == 2) { *(unsigned *)data = 2; return OK; } /* CU_MEMORYTYPE_DEVICE */
  if (attribute == 8) { *(unsigned *)data = 0; return OK; } /* not managed */
  return INVALID_VALUE;
}

/* Stream-ordered allocation: counts calls and keeps the last stream used,
 * so tests can see which stream the embedded runtime allocates on. */
static _Atomic long async_allocs, async_frees;
static _Atomic(Handle) last_async_stream;
long standin_async_allocs(void) { return async_allocs; }
long standin_async_frees(void) { return async_frees; }
int standin_last_async_stream_is(Handle s) { return last_async_stream == s; }

static int valid_stream(Handle s);

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, Handle stream) {
  if (!valid_stream(stream)) return INVALID_HANDLE;
  CUresult r = alloc_range(p, bytes, 1, stream);
  if (r == OK) {
    async_allocs++;
    last_async_stream = stream;
  }
  return r;
}

CUresult cuMemFreeAsync(CUdeviceptr p, Handle stream) {
  if (!valid_stream(stream)) return INVALID_HANDLE;
  CUresult r = cuMemFree_v2(p);
  if (r == OK) {
    async_frees++;
    last_async_stream = stream;
  }
  return r;
}

#define DEV(p) ((void *)(uintptr_t)(p))

/* Copies and memsets: `sync` for the synchronous forms, else in `s`'s order. */
static CUresult htod(CUdeviceptr dst, const void *src, size_t n, int sync, Handle s) {
  if (!current_ctx) return INVALID_CONTEXT;
  CUresult r = check_use(dst, n, sync, s);
  if (r == OK) memcpy(DEV(dst), src, n);
  return r;
}
static CUresult dtoh(void *dst, CUdeviceptr src, size_t n, int sync, Handle s) {
  if (!current_ctx) return INVALID_CONTEXT;
  CUresult r = check_use(src, n, sync, s);
  if (r == OK) memcpy(dst, DEV(src), n);
  return r;
}
static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, int sync, Handle s) {
  if (!current_ctx) return INVALID_CONTEXT;
  CUresult r = check_use(dst, n, sync, s);
  if (r == OK) r = check_use(src, n, sync, s);
  if (r == OK) memmove(DEV(dst), DEV(src), n);
  return r;
}
static CUresult set8(CUdeviceptr dst, unsigned char v, size_t n, int sync, Handle s) {
  if (!current_ctx) return INVALID_CONTEXT;
  CUresult r = check_use(dst, n, sync, s);
  if (r == OK) memset(DEV(dst), v, n);
  return r;
}
static CUresult set32(CUdeviceptr dst, unsigned int v, size_t n, int sync, Handle s) {
  if (!current_ctx) return INVALID_CONTEXT;
  CUresult r = check_use(dst, 4 * n, sync, s);
  if (r != OK) return r;
  uint32_t *w = DEV(dst);
  for (size_t i = 0; i < n; i++) w[i] = v;
  return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  return htod(dst, src, n, 1, NULL);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  return dtoh(dst, src, n, 1, NULL);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return dtod(dst, src, n, 1, NULL);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, Handle s) {
  return htod(dst, src, n, 0, s);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, Handle s) {
  return dtoh(dst, src, n, 0, s);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Handle s) {
  return dtod(dst, src, n, 0, s);
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) {
  return set8(dst, v, n, 1, NULL);
}
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n) {
  return set32(dst, v, n, 1, NULL);
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, Handle s) {
  return set8(dst, v, n, 0, s);
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, Handle s) {
  return set32(dst, v, n, 0, s);
}

struct stream { uint32_t magic; unsigned flags; };
#define STREAM_MAGIC 0x57a3u

CUresult cuStreamCreate(Handle *s, unsigned flags) {
  if (!current_ctx) return INVALID_CONTEXT;
  struct stream *st = malloc(sizeof *st);
  if (!st) return OUT_OF_MEMORY;
  st->magic = STREAM_MAGIC;
  st->flags = flags;
  *s = st;
  return OK;
}
static int valid_stream(Handle s) {
  return s == NULL || ((struct stream *)s)->magic == STREAM_MAGIC;
}
CUresult cuStreamSynchronize(Handle s) {
  if (!valid_stream(s)) return INVALID_HANDLE;
  settle_pending(s, 0);
  return OK;
}
CUresult cuStreamQuery(Handle s) { return valid_stream(s) ? OK : INVALID_HANDLE; }
CUresult cuStreamDestroy_v2(Handle s) {
  if (s == NULL || !valid_stream(s)) return INVALID_HANDLE;
  ((struct stream *)s)->magic = 0;
  free(s);
  return OK;
}

struct event { int recorded; double ms; };

CUresult cuEventCreate(Handle *e, unsigned flags) {
  (void)flags;
  if (!current_ctx) return INVALID_CONTEXT;
  struct event *ev = calloc(1, sizeof *ev);
  if (!ev) return OUT_OF_MEMORY;
  *e = ev;
  return OK;
}
CUresult cuEventRecord(Handle e, Handle s) {
  if (!valid_stream(s)) return INVALID_HANDLE;
  struct event *ev = e;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ev->recorded = 1;
  ev->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
  return OK;
}
CUresult cuEventSynchronize(Handle e) { (void)e; return OK; }
CUresult cuEventQuery(Handle e) { (void)e; return OK; }
CUresult cuStreamWaitEvent(Handle s, Handle e, unsigned flags) {
  (void)e;
  (void)flags;
  return valid_stream(s) ? OK : INVALID_HANDLE;
}
CUresult cuEventElapsedTime_v2(float *ms, Handle a, Handle b) {
  struct event *x = a, *y = b;
  if (!x->recorded || !y->recorded) return NOT_READY;
  *ms = (float)(y->ms - x->ms);
  return OK;
}
CUresult cuEventDestroy_v2(Handle e) { free(e); return OK; }

/* Modules: PTX text that declares the entries below. */
struct module { int has_saxpy, has_empty; };
static char fn_saxpy, fn_empty;

CUresult cuModuleLoadDataEx(Handle *m, const void *image, unsigned n, int *opts, void **vals) {
  if (!current_ctx) return INVALID_CONTEXT;
  const char *text = image;
  if (strncmp(text, "//", 2) != 0 && strncmp(text, ".version", 8) != 0) {
    for (unsigned i = 0; i < n; i++) {
      if (opts[i] == 5) { /* CU_JIT_ERROR_LOG_BUFFER */
        size_t cap = 0;
        for (unsigned j = 0; j < n; j++) {
          if (opts[j] == 6) cap = (size_t)(uintptr_t)vals[j];
        }
        const char *msg = "ptxas fatal   : stand-in: not PTX text";
        if (cap > strlen(msg)) strcpy(vals[i], msg);
      }
    }
    return INVALID_IMAGE;
  }
  struct module *mod = calloc(1, sizeof *mod);
  if (!mod) return OUT_OF_MEMORY;
  mod->has_saxpy = strstr(text, ".entry saxpy(") != NULL;
  mod->has_empty = strstr(text, ".entry empty(") != NULL;
  *m = mod;
  return OK;
}
CUresult cuModuleLoadData(Handle *m, const void *image) {
  return cuModuleLoadDataEx(m, image, 0, NULL, NULL);
}
CUresult cuModuleUnload(Handle m) { free(m); return OK; }
CUresult cuModuleGetFunction(Handle *f, Handle m, const char *name) {
  struct module *mod = m;
  if (mod->has_saxpy && strcmp(name, "saxpy") == 0) { *f = &fn_saxpy; return OK; }
  if (mod->has_empty && strcmp(name, "empty") == 0) { *f = &fn_empty; return OK; }
  return NOT_FOUND;
}
CUresult cuFuncGetAttribute(int *v, int attr, Handle f) {
  (void)f;
  if (attr != 0) return INVALID_VALUE;
  *v = 1024;
  return OK;
}

/* Last launch, for tests: dimensions, shared memory, stream. */
static unsigned last_launch[8];
static Handle last_stream;
unsigned standin_last_launch(int i) { return i >= 0 && i < 8 ? last_launch[i] : 0; }
int standin_last_stream_is(Handle s) { return last_stream == s; }

CUresult cuLaunchKernel(Handle f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, Handle stream,
                        void **params, void **extra) {
  if (!current_ctx) return INVALID_CONTEXT;
  if (extra != NULL || !valid_stream(stream)) return INVALID_VALUE;
  if (bx * by * bz > 1024 || gx == 0 || bx == 0) return INVALID_VALUE;
  unsigned dims[8] = {gx, gy, gz, bx, by, bz, shared, 1};
  memcpy(last_launch, dims, sizeof dims);
  last_stream = stream;
  if (f == &fn_empty) return OK;
  if (f != &fn_saxpy) return INVALID_HANDLE;
  float a = *(const float *)params[0];
  const float *x = *(const float *const *)params[1];
  float *y = *(float *const *)params[2];
  int n = *(const int *)params[3];
  for (unsigned b = 0; b < gx; b++) {
    for (unsigned t = 0; t < bx; t++) {
      long i = (long)b * bx + t;
      if (i < n) y[i] = a * x[i] + y[i];
    }
  }
  return OK;
}
