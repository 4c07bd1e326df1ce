/*
 * runtime_registry.c: the embedded runtime's handler registry and type
 * registry, one of each per API version (as separate XLA builds have), with
 * the registration rules and messages of XLA's ffi_api.cc / ffi_registry.cc /
 * type_registry.cc of that version; plus the metadata query (spec §5.2).
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* ------------------------------------------------------------------------ */
/* Platform names                                                            */
/* ------------------------------------------------------------------------ */

/*
 * XLA's PlatformUtil::CanonicalPlatformName: the name lower-cased, with the
 * aliases "cpu" -> "host" and "gpu" -> "cuda" (the GPU platform of a CUDA
 * build). Any other name is kept (lower-cased): registration never fails on
 * a platform name. Writes at most cap - 1 bytes and a NUL; returns the length.
 */
size_t xrt_canonical_platform(const char* p, size_t n, char* out, size_t cap) {
  size_t k = n < cap - 1 ? n : cap - 1;
  for (size_t i = 0; i < k; i++) {
    char c = p[i];
    out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  out[k] = '\0';
  if (k == 3 && memcmp(out, "cpu", 3) == 0) return (size_t)snprintf(out, cap, "host");
  if (k == 3 && memcmp(out, "gpu", 3) == 0) return (size_t)snprintf(out, cap, "cuda");
  return k;
}

/* A name's ByteSpan: not null with a length, at most XFD_MAX_NAME bytes. */
XLA_FFI_Error* xrt_check_name(const XLA_FFI_ByteSpan* s, const char* what) {
  if (s->len > XFD_MAX_NAME)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "The %s is %zu bytes long: the limit is %d", what, s->len,
                         XFD_MAX_NAME);
  if (!s->ptr && s->len > 0)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "The %s is null with length %zu", what, s->len);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Metadata (spec §5.2)                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Queries a handler's metadata into a 48-byte Metadata (0.2+ handlers write
 * state_type_id at 40 even though STRUCT_SIZE is 36). The query frame carries
 * no api under 0.1 (as XLA 0.1 sent it) and the version's table from 0.2 on
 * (XLA ffi_api.cc PrepareMetadataCallFrame passes GetXlaFfiApi()).
 */
XLA_FFI_Error* xrt_query_metadata(const xrt_abi* v, XLA_FFI_Handler* h,
                                  XLA_FFI_Metadata_V0_2* md) {
  memset(md, 0, sizeof *md);
  /* A released TS entry point cannot answer (the query may have no api to
   * make an error with): say so instead of reporting API version 0.0. */
  int32_t released = xla_ffi_deno_handler_released_slot((void*)h);
  if (released >= 0)
    return xrt_error_new(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "TS handler entry point %d was released", (int)released);
  md->struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  md->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = (XLA_FFI_Metadata*)md;
  XLA_FFI_CallFrame cf;
  memset(&cf, 0, sizeof cf);
  cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  cf.extension_start = &ext.extension_base;
  cf.api = v->minor >= 2 ? v->api : NULL;
  cf.stage = XLA_FFI_ExecutionStage_EXECUTE;
  cf.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  cf.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  cf.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  /* XLA ffi_api.cc GetMetadata: "Fetching XLA FFI metadata failed: %s" */
  XLA_FFI_Error* err = xrt_invoke(h, &cf, "Fetching XLA FFI metadata failed");
  if (err && xla_ffi_deno_runtime_error_code(err) == XLA_FFI_Error_Code_OK) {
    xrt_error_free(err);
    err = NULL;
  }
  return err;
}

/* ------------------------------------------------------------------------ */
/* Handler registry (process-wide per version, like XLA's static registry)   */
/* ------------------------------------------------------------------------ */

typedef struct reg_entry {
  char* name;
  size_t name_len;
  char* platform; /* canonical */
  size_t platform_len;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
  int32_t major, minor; /* the execute handler's API version */
  int64_t state_type_id;
  struct reg_entry* next;
} reg_entry;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static reg_entry* reg_head[XRT_ABI_COUNT];

static char* dup_bytes(const char* p, size_t n) {
  char* s = malloc(n + 1);
  if (!s) abort();
  if (n) memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* XLA ffi_registry.h AbslStringify(XLA_FFI_Metadata):
 * "{api_version: %d.%d, traits: [%s], state: %v}" (state "unknown" for 0). */
static void format_metadata(char* buf, size_t cap, int32_t major, int32_t minor,
                            XLA_FFI_Handler_Traits traits, int64_t state) {
  char st[32];
  if (state == 0)
    snprintf(st, sizeof st, "unknown");
  else
    snprintf(st, sizeof st, "%lld", (long long)state);
  snprintf(buf, cap, "{api_version: %d.%d, traits: [%s], state: %s}", (int)major, (int)minor,
           (traits & XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE) ? "cmd_buffer_compatible"
                                                                        : "",
           st);
}

XLA_FFI_Error* xrt_registry_register(const xrt_abi* v, const XLA_FFI_Handler_Register_Args* args) {
  XLA_FFI_Error* bad = xrt_check_name(&args->name, "handler name");
  if (!bad) bad = xrt_check_name(&args->platform, "platform name");
  if (bad) return bad;
  const char* name = args->name.ptr ? args->name.ptr : "";
  int nl = (int)args->name.len;
  const char* plat = args->platform.ptr ? args->platform.ptr : "";
  int pl = (int)args->platform.len;
  char canon[XFD_MAX_NAME + 8];
  size_t cl = xrt_canonical_platform(plat, (size_t)pl, canon, sizeof canon);
  /* XLA ffi_registry.cc RegisterHandler:
   * "FFI handler for %s on a platform %s must provide an execute implementation" */
  if (args->bundle.execute == NULL)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "FFI handler for %.*s on a platform %.*s must provide an execute "
                         "implementation",
                         nl, name, pl, plat);
  XLA_FFI_Metadata_V0_2 md;
  XLA_FFI_Error* err = xrt_query_metadata(v, args->bundle.execute, &md);
  if (err) return err;
  int32_t major = md.api_version.major_version, minor = md.api_version.minor_version;
  if (v->minor == 1) {
    /* XLA 0.1 ffi_api.cc: the handler's version must equal the framework's:
     * "FFI handler registration for %s on platform %s (canonical %s) failed
     * because the handler's API version (%d.%d) is incompatible with the
     * framework's API version (%d.%d)" */
    if (major != 0 || minor != 1)
      return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "FFI handler registration for %.*s on platform %.*s (canonical %s) "
                           "failed because the handler's API version (%d.%d) is incompatible "
                           "with the framework's API version (%d.%d)",
                           nl, name, pl, plat, canon, (int)major, (int)minor, 0, 1);
  } else if (major != 0 || minor < 1 || minor > v->minor) {
    /* XLA ffi_registry.cc (0.2+): accepted range [0.1, framework version]:
     * "XLA FFI handler registration for %s on platform %s (canonical %s)
     * failed because the handler's API version (%d.%d) is incompatible with
     * the framework's API version (%d.%d). Minimum supported API version is
     * (%d.%d)." */
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "XLA FFI handler registration for %.*s on platform %.*s (canonical %s) "
                         "failed because the handler's API version (%d.%d) is incompatible "
                         "with the framework's API version (%d.%d). Minimum supported API "
                         "version is (%d.%d).",
                         nl, name, pl, plat, canon, (int)major, (int)minor, 0, (int)v->minor, 0,
                         1);
  }
  XLA_FFI_Handler_Traits traits = args->traits | md.traits;
  int64_t state_type_id = 0;
  if (v->minor >= 2 && args->bundle.instantiate) {
    /* 0.2+: the state type id comes from the instantiate handler's metadata. */
    XLA_FFI_Metadata_V0_2 mi;
    err = xrt_query_metadata(v, args->bundle.instantiate, &mi);
    if (err) return err;
    state_type_id = mi.state_type_id.type_id;
  }
  pthread_mutex_lock(&reg_mu);
  for (reg_entry* e = reg_head[v->index]; e; e = e->next) {
    if (e->platform_len != cl || memcmp(e->platform, canon, cl) || e->name_len != (size_t)nl ||
        memcmp(e->name, name, (size_t)nl))
      continue;
    /* The same handler registered twice (a library linked twice) is fine. */
    int same_bundle = e->bundle.prepare == args->bundle.prepare &&
                      e->bundle.initialize == args->bundle.initialize &&
                      e->bundle.execute == args->bundle.execute &&
                      (v->minor == 1 || e->bundle.instantiate == args->bundle.instantiate);
    if (v->minor == 1) {
      /* XLA 0.1 ffi_api.cc: "... with different traits" / "... with
       * different bundle addresses" (prepare, initialize, execute). */
      const char* what = e->traits != traits ? "traits" : !same_bundle ? "bundle addresses" : NULL;
      pthread_mutex_unlock(&reg_mu);
      if (!what) return NULL;
      return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "Duplicate FFI handler registration for %.*s on platform %.*s "
                           "(canonical %s) with different %s",
                           nl, name, pl, plat, canon, what);
    }
    if (e->major != major || e->minor != minor || e->traits != traits ||
        e->state_type_id != state_type_id) {
      char had[160], now[160];
      format_metadata(had, sizeof had, e->major, e->minor, e->traits, e->state_type_id);
      format_metadata(now, sizeof now, major, minor, traits, state_type_id);
      pthread_mutex_unlock(&reg_mu);
      /* XLA ffi_registry.cc: "Duplicate FFI handler registration for %s on
       * platform %s (canonical %s) with different metadata: %v vs %v" */
      return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "Duplicate FFI handler registration for %.*s on platform %.*s "
                           "(canonical %s) with different metadata: %s vs %s",
                           nl, name, pl, plat, canon, had, now);
    }
    pthread_mutex_unlock(&reg_mu);
    if (same_bundle) return NULL;
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "Duplicate FFI handler registration for %.*s on platform %.*s "
                         "(canonical %s) with different bundle addresses",
                         nl, name, pl, plat, canon);
  }
  reg_entry* e = calloc(1, sizeof *e);
  if (!e) abort();
  e->name = dup_bytes(name, (size_t)nl);
  e->name_len = (size_t)nl;
  e->platform = dup_bytes(canon, cl);
  e->platform_len = cl;
  e->bundle = args->bundle;
  e->traits = traits;
  e->major = major;
  e->minor = minor;
  e->state_type_id = state_type_id;
  e->next = reg_head[v->index];
  reg_head[v->index] = e;
  pthread_mutex_unlock(&reg_mu);
  return NULL;
}

/* Looks a registration up: out = 4 bundle pointers, traits, state type id. */
XLA_FFI_Error* xrt_registry_lookup(const xrt_abi* v, const XLA_FFI_ByteSpan* ns,
                                   const XLA_FFI_ByteSpan* ps, uint64_t* out) {
  XLA_FFI_Error* bad = xrt_check_name(ns, "handler name");
  if (!bad) bad = xrt_check_name(ps, "platform name");
  if (!bad && !out) bad = xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "out is null");
  if (bad) return bad;
  const char* name = ns->ptr ? ns->ptr : "";
  const char* platform = ps->ptr ? ps->ptr : "";
  int nl = (int)ns->len, pl = (int)ps->len;
  char canon[XFD_MAX_NAME + 8];
  size_t cl = xrt_canonical_platform(platform, ps->len, canon, sizeof canon);
  pthread_mutex_lock(&reg_mu);
  for (reg_entry* e = reg_head[v->index]; e; e = e->next) {
    if (e->platform_len == cl && memcmp(e->platform, canon, cl) == 0 &&
        e->name_len == (size_t)nl && memcmp(e->name, name, (size_t)nl) == 0) {
      out[0] = (uint64_t)(uintptr_t)e->bundle.instantiate;
      out[1] = (uint64_t)(uintptr_t)e->bundle.prepare;
      out[2] = (uint64_t)(uintptr_t)e->bundle.initialize;
      out[3] = (uint64_t)(uintptr_t)e->bundle.execute;
      out[4] = e->traits;
      out[5] = (uint64_t)e->state_type_id;
      pthread_mutex_unlock(&reg_mu);
      return NULL;
    }
  }
  pthread_mutex_unlock(&reg_mu);
  /* XLA ffi_registry.cc FindHandler:
   * "No FFI handler registered for %s on a platform %s (canonical %s)" */
  return xrt_error_new(XLA_FFI_Error_Code_NOT_FOUND,
                       "No FFI handler registered for %.*s on a platform %.*s (canonical %s)", nl,
                       name, pl, platform, canon);
}

/*
 * The names registered on `platform` (canonicalised), '\n'-separated, into
 * buf (cap bytes, NUL-terminated, truncated at a whole name). Returns how many
 * names there are.
 */
int32_t xrt_registry_names(const xrt_abi* v, const char* platform, size_t platform_len,
                           char* buf, int32_t cap) {
  char canon[XFD_MAX_NAME + 8];
  size_t cl = xrt_canonical_platform(platform ? platform : "", platform_len, canon, sizeof canon);
  int32_t n = 0;
  size_t used = 0;
  if (buf && cap > 0) buf[0] = '\0';
  pthread_mutex_lock(&reg_mu);
  for (reg_entry* e = reg_head[v->index]; e; e = e->next) {
    if (e->platform_len != cl || memcmp(e->platform, canon, cl)) continue;
    n++;
    if (buf && used + e->name_len + 2 <= (size_t)cap) {
      memcpy(buf + used, e->name, e->name_len);
      used += e->name_len;
      buf[used++] = '\n';
      buf[used] = '\0';
    }
  }
  pthread_mutex_unlock(&reg_mu);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Type registry (XLA type_registry.cc; TypeIdRegistry in 0.1)               */
/* ------------------------------------------------------------------------ */

typedef struct type_entry {
  char* name;
  size_t len;
  int64_t id;
  void (*deleter)(void*);
  struct type_entry* next;
} type_entry;

static pthread_mutex_t type_mu = PTHREAD_MUTEX_INITIALIZER;
static type_entry* type_head[XRT_ABI_COUNT];
static int64_t type_next[XRT_ABI_COUNT] = {1, 1, 1, 1};

static int type_id_used(int32_t index, int64_t id) {
  for (type_entry* t = type_head[index]; t; t = t->next)
    if (t->id == id) return 1;
  return 0;
}

/*
 * Registers `name` with *type_id (0: assign the next unused id and write it
 * back) and the deleter its TypeInfo carries (0.2+; NULL in 0.1).
 */
XLA_FFI_Error* xrt_type_register(const xrt_abi* v, const XLA_FFI_ByteSpan* ns,
                                 XLA_FFI_TypeId* type_id, void (*deleter)(void*)) {
  if (!type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT, "type_id must not be null");
  XLA_FFI_Error* bad = xrt_check_name(ns, "type name");
  if (bad) return bad;
  const char* name = ns->ptr ? ns->ptr : "";
  size_t len = ns->len;
  pthread_mutex_lock(&type_mu);
  type_entry* found = NULL;
  for (type_entry* t = type_head[v->index]; t; t = t->next)
    if (t->len == len && memcmp(t->name, name, len) == 0) found = t;
  int64_t want = type_id->type_id;
  if (found) {
    int64_t have = found->id;
    pthread_mutex_unlock(&type_mu);
    /* XLA type_registry.cc AssignExternalTypeId:
     * "Type name %s already registered with type id %d" */
    if (want == 0)
      return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                           "Type name %.*s already registered with type id %lld", (int)len, name,
                           (long long)have);
    /* XLA type_registry.cc RegisterExternalTypeId (its text ends in ")"):
     * "Type name %s already registered with type id %d vs %d)" */
    if (want != have)
      return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                           "Type name %.*s already registered with type id %lld vs %lld)",
                           (int)len, name, (long long)have, (long long)want);
    return NULL; /* the same registration again: kept as it was */
  }
  if (want == 0) {
    while (type_id_used(v->index, type_next[v->index])) type_next[v->index]++;
    want = type_next[v->index]++;
  }
  type_entry* t = calloc(1, sizeof *t);
  if (!t) abort();
  t->name = dup_bytes(name, len);
  t->len = len;
  t->id = want;
  t->deleter = deleter;
  t->next = type_head[v->index];
  type_head[v->index] = t;
  pthread_mutex_unlock(&type_mu);
  type_id->type_id = want;
  return NULL;
}

/* The deleter a registered type id carries (0.2+ State_Set). */
XLA_FFI_Error* xrt_type_deleter(const xrt_abi* v, int64_t id, void (**deleter)(void*)) {
  pthread_mutex_lock(&type_mu);
  for (type_entry* t = type_head[v->index]; t; t = t->next) {
    if (t->id == id) {
      *deleter = t->deleter;
      pthread_mutex_unlock(&type_mu);
      return NULL;
    }
  }
  pthread_mutex_unlock(&type_mu);
  /* XLA type_registry.cc GetTypeInfo:
   * "Type id %d is not registered with a static registry" */
  return xrt_error_new(XLA_FFI_Error_Code_INTERNAL,
                       "Type id %lld is not registered with a static registry", (long long)id);
}

/* ------------------------------------------------------------------------ */
/* Entry points for TypeScript: registration, lookup, types, metadata        */
/* ------------------------------------------------------------------------ */

/** Registers a bundle (4 pointers as u64) through the runtime's Handler_Register. */
XLA_FFI_Error* xla_ffi_deno_runtime_register(xrt_runtime* rt, const char* name, int64_t name_len,
                                             const char* platform, int64_t platform_len,
                                             const uint64_t* bundle, uint32_t traits) {
  if (!rt || !bundle)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_register: runtime and bundle must not be null");
  XLA_FFI_Handler_Register_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  a.name.ptr = name;
  a.name.len = (size_t)name_len;
  a.platform.ptr = platform;
  a.platform.len = (size_t)platform_len;
  a.bundle.instantiate = (XLA_FFI_Handler*)(uintptr_t)bundle[0];
  a.bundle.prepare = (XLA_FFI_Handler*)(uintptr_t)bundle[1];
  a.bundle.initialize = (XLA_FFI_Handler*)(uintptr_t)bundle[2];
  a.bundle.execute = (XLA_FFI_Handler*)(uintptr_t)bundle[3];
  a.traits = traits;
  return rt->abi->api->XLA_FFI_Handler_Register(&a);
}

/** Looks a registration up in the runtime's registry: out = 4 bundle
 * pointers, the traits and the state type id (6 values). */
XLA_FFI_Error* xla_ffi_deno_runtime_lookup(xrt_runtime* rt, const char* name, int64_t name_len,
                                           const char* platform, int64_t platform_len,
                                           uint64_t* out) {
  if (!rt)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_lookup: runtime is null");
  XLA_FFI_ByteSpan ns = {name, (size_t)name_len}, ps = {platform, (size_t)platform_len};
  return xrt_registry_lookup(rt->abi, &ns, &ps, out);
}

/** The names registered on `platform` in the runtime's registry ('\n'-
 * separated into buf); returns their count. */
int32_t xla_ffi_deno_runtime_registered_names(xrt_runtime* rt, const char* platform,
                                              int64_t platform_len, char* buf, int32_t cap) {
  if (!rt) return 0;
  return xrt_registry_names(rt->abi, platform, (size_t)platform_len, buf, cap);
}

/**
 * Registers a type name through the runtime's TypeId_Register (0.1) or
 * Type_Register (0.2+, with a TypeInfo whose deleter is `deleter`); the id
 * is read from and written to *type_id (0: assign one).
 */
XLA_FFI_Error* xla_ffi_deno_runtime_register_type(xrt_runtime* rt, const char* name, int64_t len,
                                                  XLA_FFI_TypeId* type_id, void* deleter) {
  if (!rt || !type_id)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_register_type: runtime and type_id must not be "
                         "null");
  if (rt->abi->minor == 1) {
    XLA_FFI_TypeId_Register_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_TypeId_Register_Args_STRUCT_SIZE;
    a.name.ptr = name;
    a.name.len = (size_t)len;
    a.type_id = type_id;
    return rt->abi->api->XLA_FFI_TypeId_Register(&a);
  }
  XLA_FFI_TypeInfo_V0_2 info = {XLA_FFI_TypeInfo_V0_2_STRUCT_SIZE, NULL,
                                (void (*)(void*))deleter};
  XLA_FFI_Type_Register_Args_V0_2 a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Type_Register_Args_V0_2_STRUCT_SIZE;
  a.name.ptr = name;
  a.name.len = (size_t)len;
  a.type_id = type_id;
  a.type_info = &info;
  return ((const XLA_FFI_Api_V0_2*)rt->abi->api)->XLA_FFI_Type_Register(&a);
}

/** Queries a handler's metadata as the runtime does at registration:
 * out = [major, minor, traits, state_type_id]. */
XLA_FFI_Error* xla_ffi_deno_runtime_metadata(xrt_runtime* rt, XLA_FFI_Handler* h, int64_t* out) {
  if (!rt || !h || !out)
    return xrt_error_new(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "xla_ffi_deno_runtime_metadata: runtime, handler and out must not be "
                         "null");
  XLA_FFI_Metadata_V0_2 md;
  XLA_FFI_Error* e = xrt_query_metadata(rt->abi, h, &md);
  if (e) return e;
  out[0] = md.api_version.major_version;
  out[1] = md.api_version.minor_version;
  out[2] = md.traits;
  out[3] = md.state_type_id.type_id;
  return NULL;
}
