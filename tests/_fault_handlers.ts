/**
 * The fault test handlers: native/tests/fault_handlers.c (C, the project's
 * xla_ffi.h), and native/tests/fault_handlers_ffi.cc (C++ against jaxlib's
 * ffi.h, when jax and a C++ compiler are there).
 *
 * @module
 */
import assert from "node:assert/strict";
import { buildSharedLibrary, findCxxCompiler } from "../build.ts";
import { ErrorCode, FfiError } from "../mod.ts";
import { jaxlibHeaders } from "./_jax.ts";

/** Path of the C fault handlers, built with `extraFlags` (e.g. `-fsanitize=address`). */
export function faultHandlersPath(extraFlags: string[] = []): string {
  return buildSharedLibrary({
    name: extraFlags.length > 0 ? "xrt_fault_handlers_asan" : "xrt_fault_handlers",
    sources: ["native/tests/fault_handlers.c", "native/tests/test_handler_util.h"],
    extraFlags,
  });
}

/** Path of the C fault handlers built so that loading the library never ends (its initialiser hangs). */
export function hangingLoadPath(): string {
  return buildSharedLibrary({
    name: "xrt_fault_handlers_hang_init",
    sources: ["native/tests/fault_handlers.c", "native/tests/test_handler_util.h"],
    extraFlags: ["-DFAULT_HANG_IN_CONSTRUCTOR"],
  });
}

/**
 * The descriptors open in this process, counted and listed by this process
 * (fault_open_descriptors): nothing else starts or ends while it counts.
 * `list` has one `fd -> target` line each.
 */
export function openDescriptors(): { count: number; list: string[] } {
  const lib = Deno.dlopen(faultHandlersPath(), {
    fault_open_descriptors: { parameters: ["buffer", "i32"], result: "i32" },
  });
  try {
    const buf = new Uint8Array(1 << 16);
    const n = lib.symbols.fault_open_descriptors(buf, buf.length);
    assert.ok(n > 0, "cannot list /proc/self/fd");
    const text = new TextDecoder().decode(buf.subarray(0, buf.indexOf(0)));
    return { count: n, list: text.split("\n").filter(Boolean) };
  } finally {
    lib.close();
  }
}

/** Why the ffi.h fault handlers cannot be built here, or undefined when they can. */
export function ffiHFaultsSkip(): string | undefined {
  const jax = jaxlibHeaders();
  if (jax.reason) return jax.reason;
  if (findCxxCompiler() === undefined) return "no C++ compiler";
  return undefined;
}

/** Path of the C++ fault handlers built against jaxlib's ffi.h. */
export function ffiHFaultHandlersPath(): string {
  return buildSharedLibrary({
    name: "xrt_ffi_h_fault_handlers",
    sources: ["native/tests/fault_handlers_ffi.cc"],
    cxx: true,
    // XLA's header does not build warning-free; it is not this project's code.
    baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
    includeDirs: [jaxlibHeaders().includeDir!],
  });
}

/** A validator: an FfiError with `code` whose message matches `pattern`. */
export function isFault(code: ErrorCode, pattern: RegExp): (e: unknown) => true {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, String(e));
    assert.equal(e.codeName, ErrorCode[code], e.message);
    assert.match(e.message, pattern);
    return true;
  };
}
