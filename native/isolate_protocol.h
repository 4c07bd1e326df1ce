/*
 * isolate_protocol.h: what the parent (isolate.c, in the main library) and
 * the child process of an isolated handler library (isolate_child.c) share.
 *
 * One call at a time. The parent writes a request into the first page of a
 * shared memory mapping (a memfd both map), with the frame description and
 * the operands' data after it, and sends one byte on a socket; the child
 * builds the call frame over the shared operands, calls the handler, writes
 * its reply into the same page and sends one byte back. A child that dies
 * closes its end of the socket: the parent sees end of file and reaps it.
 *
 * Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
 */
#ifndef DENO_XLA_FFI_ISOLATE_PROTOCOL_H_
#define DENO_XLA_FFI_ISOLATE_PROTOCOL_H_

#include <stdint.h>

/* The child's file descriptors: the socket and the shared memory. */
#define XISO_FD_SOCKET 3
#define XISO_FD_MEMORY 4

/* Requests. */
enum {
  XISO_OP_CALL_SYNC = 1, /* xrt_call_sync: handlers that finish synchronously */
  XISO_OP_CALL = 2,      /* xrt_call_run: waits for the handler's future */
  XISO_OP_THREADS = 3,   /* xrt_call_threads */
  XISO_OP_RESOLVE = 4,   /* whether `symbol` exists */
  XISO_OP_METADATA = 5,  /* xrt_metadata: the handler's API version, traits, state type id */
};

/* Reply statuses. */
enum {
  XISO_OK = 0,
  XISO_ERROR = 1, /* code and message */
  XISO_FAULT = 2, /* a guarded operand was written where it must not be (then the child dies) */
};

/* Fault kinds (XISO_FAULT): the operand written next to (or into); the
 * offset from its first byte tells before it (negative), into it or past it. */
enum { XISO_FAULT_RESULT = 1, XISO_FAULT_ARGUMENT = 2 };

/* One operand of a guarded call: where it lies in the mapping. */
typedef struct xiso_operand {
  uint64_t offset;
  uint64_t size;
  uint32_t kind; /* 0 argument, 1 result */
  uint32_t index;
} xiso_operand;

#define XISO_MESSAGE_CAP 2048

/* The first page of the mapping. Offsets are from the mapping's start. */
typedef struct xiso_header {
  /* Request (parent -> child). */
  uint32_t op;
  int32_t minor; /* API version 0.minor */
  int32_t stage;
  int32_t device_ordinal;
  int64_t run_id;
  int32_t threads;
  int32_t guard; /* 1: operands laid out for guards (see isolate_child.c) */
  int64_t iterations;
  uint64_t map_size; /* the mapping's size for this request */
  uint64_t ops_offset;
  uint32_t n_ops;
  uint32_t reserved;
  uint64_t desc_offset;
  uint64_t desc_length;
  char symbol[256];
  /* Reply (child -> parent). */
  int32_t status;
  int32_t code;
  int64_t ok;
  int64_t failed;
  int32_t fault_kind;
  int32_t fault_index;
  int64_t fault_offset;
  char message[XISO_MESSAGE_CAP];
  int64_t metadata[4]; /* XISO_OP_METADATA: major, minor, traits, state type id */
} xiso_header;

#define XISO_HEADER_BYTES 4096

#endif /* DENO_XLA_FFI_ISOLATE_PROTOCOL_H_ */
