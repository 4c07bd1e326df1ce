/*
 * handler_future.c: how a TS handler's result reaches the runtime that
 * called it, through that runtime's own API table: errors made with its
 * Error_Create, and futures for handlers that return a Promise. A Promise
 * settles in TS after the call returned; its token (allocated by TS) joins
 * the settled result with the future the calling thread created, whichever
 * comes first.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_internal.h"

#define TOKEN_COUNT 65536

static _Atomic int64_t g_failed_completions;

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */
/* ---------------------------------------------------------------------- */

XLA_FFI_Error* host_make_error(const XLA_FFI_Api* api, int32_t code, const char* msg) {
  if (api == NULL || api->XLA_FFI_Error_Create == NULL) {
    fprintf(stderr, "deno-xla-ffi: cannot report a handler error (no XLA_FFI_Api): %s\n", msg);
    return NULL;
  }
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = (XLA_FFI_Error_Code)code;
  return api->XLA_FFI_Error_Create(&a);
}

static void destroy_error(const XLA_FFI_Api* api, XLA_FFI_Error* err) {
  if (err == NULL || api->XLA_FFI_Error_Destroy == NULL) return;
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->XLA_FFI_Error_Destroy(&d);
}

/* Copies an error's message into buf and destroys the error. */
void host_take_message(const XLA_FFI_Api* api, XLA_FFI_Error* err, char* buf, size_t cap) {
  const char* m = "";
  XLA_FFI_Error_GetMessage_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE;
  g.error = err;
  if (api->XLA_FFI_Error_GetMessage) {
    api->XLA_FFI_Error_GetMessage(&g);
    if (g.message) m = g.message;
  }
  snprintf(buf, cap, "%s", m);
  destroy_error(api, err);
}

void host_report_failure(const char* what, const char* msg) {
  atomic_fetch_add(&g_failed_completions, 1);
  fprintf(stderr, "deno-xla-ffi: %s: %s\n", what, msg);
}

/* ---------------------------------------------------------------------- */
/* Futures: tokens shared by TS (completion) and C (registration)          */
/* ---------------------------------------------------------------------- */

enum { TOKEN_FREE = 0, TOKEN_ALLOCATED, TOKEN_REGISTERED, TOKEN_EARLY, TOKEN_ABANDONED };

typedef struct {
  int32_t state;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  void* waiter; /* a call whose caller may still wait for the result (host_early_settle) */
  int32_t foreign; /* the call came from another thread */
  int32_t code;
  char* msg;
} token_entry;

static pthread_mutex_t g_token_mu = PTHREAD_MUTEX_INITIALIZER;
static token_entry g_tokens[TOKEN_COUNT];
static int32_t g_token_next = 1;

int32_t xla_ffi_deno_handler_token_alloc(void) {
  pthread_mutex_lock(&g_token_mu);
  for (int32_t n = 0; n < TOKEN_COUNT - 1; n++) {
    int32_t t = g_token_next;
    g_token_next = g_token_next + 1 >= TOKEN_COUNT ? 1 : g_token_next + 1;
    if (g_tokens[t].state == TOKEN_FREE) {
      g_tokens[t].state = TOKEN_ALLOCATED;
      pthread_mutex_unlock(&g_token_mu);
      return t;
    }
  }
  pthread_mutex_unlock(&g_token_mu);
  return 0;
}

/* Completes a future; returns 0 or -1 (message in buf). */
int host_complete_future(const XLA_FFI_Api* api, XLA_FFI_Future* fut, int32_t code,
                           const char* msg, char* buf, size_t cap) {
  XLA_FFI_Error* err;
  if (code == 0) {
    if (!api->XLA_FFI_Future_SetAvailable) {
      snprintf(buf, cap, "the runtime has no Future_SetAvailable");
      return -1;
    }
    XLA_FFI_Future_SetAvailable_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
    a.future = fut;
    err = api->XLA_FFI_Future_SetAvailable(&a);
  } else {
    if (!api->XLA_FFI_Future_SetError) {
      snprintf(buf, cap, "the runtime has no Future_SetError");
      return -1;
    }
    XLA_FFI_Error* e = host_make_error(api, code, msg);
    if (e == NULL) {
      snprintf(buf, cap, "Error_Create returned NULL for: %s", msg);
      return -1;
    }
    XLA_FFI_Future_SetError_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
    a.future = fut;
    a.error = e;
    err = api->XLA_FFI_Future_SetError(&a);
    /* A refused error stays ours (the runtime takes it over only on success). */
    if (err != NULL) destroy_error(api, e);
  }
  if (err != NULL) {
    host_take_message(api, err, buf, cap);
    return -1;
  }
  return 0;
}

/* Completes a future with a result, reporting a failure loudly. */
static void complete_or_report(const XLA_FFI_Api* api, XLA_FFI_Future* fut, int32_t code,
                               const char* msg) {
  char buf[MSG_CAP];
  if (host_complete_future(api, fut, code, msg, buf, sizeof buf))
    host_report_failure("Failed to signal XLA_FFI_Future completion", buf);
}

void host_token_register_waiter(int32_t token, const XLA_FFI_Api* api, XLA_FFI_Future* fut,
                                void* waiter, int32_t foreign) {
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  if (e->state == TOKEN_EARLY) {
    int32_t code = e->code;
    char* msg = e->msg;
    e->msg = NULL;
    e->state = TOKEN_FREE;
    pthread_mutex_unlock(&g_token_mu);
    if (waiter == NULL || !host_early_settle(waiter, code, msg ? msg : ""))
      complete_or_report(api, fut, code, msg ? msg : "");
    free(msg);
    return;
  }
  e->state = TOKEN_REGISTERED;
  e->api = api;
  e->future = fut;
  e->waiter = waiter;
  e->foreign = foreign;
  pthread_mutex_unlock(&g_token_mu);
}

/* Called on the calling thread once the future exists. */
void host_token_register(int32_t token, const XLA_FFI_Api* api, XLA_FFI_Future* fut) {
  host_token_register_waiter(token, api, fut, NULL, 0);
}

static void token_abandon(int32_t token) {
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  if (e->state == TOKEN_EARLY) {
    free(e->msg);
    e->msg = NULL;
    e->state = TOKEN_FREE;
  } else {
    e->state = TOKEN_ABANDONED;
  }
  pthread_mutex_unlock(&g_token_mu);
}

/*
 * Called by TS when a handler's Promise settled. Returns 0 completed, 1 kept
 * until the calling thread registers the future, 2 dropped (future creation
 * had failed and was reported to the caller), 3 the result of a call from
 * another thread: handed to its caller, which was still waiting for it (the
 * settled-early path), or its future completed; -1 unknown token, -2 the
 * completion failed (message in aux).
 */
int32_t xla_ffi_deno_handler_complete(int32_t token, int32_t code, const uint8_t* msg,
                                      int32_t len) {
  if (token <= 0 || token >= TOKEN_COUNT) return -1;
  char* text = malloc((size_t)len + 1);
  if (text == NULL) return -2;
  if (len > 0) memcpy(text, msg, (size_t)len);
  text[len] = 0;
  pthread_mutex_lock(&g_token_mu);
  token_entry* e = &g_tokens[token];
  switch (e->state) {
    case TOKEN_ALLOCATED:
      e->state = TOKEN_EARLY;
      e->code = code;
      e->msg = text;
      pthread_mutex_unlock(&g_token_mu);
      return 1;
    case TOKEN_ABANDONED:
      e->state = TOKEN_FREE;
      pthread_mutex_unlock(&g_token_mu);
      free(text);
      return 2;
    case TOKEN_REGISTERED: {
      const XLA_FFI_Api* api = e->api;
      XLA_FFI_Future* fut = e->future;
      void* waiter = e->waiter;
      int32_t foreign = e->foreign;
      e->waiter = NULL;
      e->foreign = 0;
      e->state = TOKEN_FREE;
      pthread_mutex_unlock(&g_token_mu);
      if (waiter != NULL && host_early_settle(waiter, code, text)) {
        free(text);
        return 3;
      }
      char buf[MSG_CAP];
      int rc = host_complete_future(api, fut, code, text, buf, sizeof buf);
      free(text);
      if (rc) {
        host_report_failure("Failed to signal XLA_FFI_Future completion", buf);
        if (g_aux) {
          int32_t n = (int32_t)strnlen(buf, MSG_CAP - AUX_MSG_OFFSET - 1);
          memcpy(g_aux + AUX_MSG_OFFSET, buf, (size_t)n);
          ((int32_t*)g_aux)[2] = n;
        }
        return -2;
      }
      return foreign ? 3 : 0;
    }
    default:
      pthread_mutex_unlock(&g_token_mu);
      free(text);
      return -1;
  }
}

int64_t xla_ffi_deno_handler_failed_completions(void) {
  return atomic_load(&g_failed_completions);
}

/* ---------------------------------------------------------------------- */
/* Finishing a call                                                        */
/* ---------------------------------------------------------------------- */

XLA_FFI_Error* host_pending_future(XLA_FFI_CallFrame* f, int32_t token, void* waiter) {
  const XLA_FFI_Api* api = f->api;
  if (api == NULL || api->XLA_FFI_Future_Create == NULL) {
    token_abandon(token);
    return host_make_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                           "The runtime does not support futures (no Future_Create)");
  }
  XLA_FFI_Future_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  XLA_FFI_Error* err = api->XLA_FFI_Future_Create(&a);
  if (err != NULL) {
    token_abandon(token);
    return err;
  }
  f->future = a.future;
  if (waiter != NULL) host_token_register_waiter(token, api, a.future, waiter, 1);
  else host_token_register(token, api, a.future);
  return NULL;
}

XLA_FFI_Error* host_refuse_pending(XLA_FFI_CallFrame* f, int32_t token) {
  if (token > 0) token_abandon(token);
  xla_ffi_deno_inline_caller who = host_inline_caller();
  char msg[1024];
  snprintf(msg, sizeof msg,
           "An async TS handler (or one that returned a Promise) cannot be called by XLA on the "
           "JS thread during a synchronous run (%s): its Promise cannot settle before that run "
           "returns, and XLA would wait for it on this thread. Run the program with %s, or make "
           "the handler synchronous",
           who.sync_runs, who.free_runs);
  return host_make_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, msg);
}

XLA_FFI_Error* host_finish(XLA_FFI_CallFrame* f, int32_t status, int32_t code, const char* msg,
                             int32_t token) {
  const XLA_FFI_Api* api = f->api;
  switch (status) {
    case 0:
      return NULL;
    case 1:
      return host_make_error(api, code, msg);
    case 2:
      return host_pending_future(f, token, NULL);
    default:
      return host_make_error(api, XLA_FFI_Error_Code_INTERNAL,
                        "TS handler dispatch failed (no handler host)");
  }
}
