/**
 * TS handlers for the XLA FFI: the binding DSL, buffers, dictionaries,
 * context values and handler bundles.
 *
 * @module
 */
export { Binding, Ffi, Handler, HandlerBundle } from "./binding.ts";
export type { AttrValueOf, CtxValueOf, FfiBinder, HandlerOptions } from "./binding.ts";
export { FfiBuffer, RemainingBuffers } from "./buffer.ts";
export { Dictionary } from "./_attrs.ts";
export type { AttrKind, AttrValue, BigIntKind, ScalarKind } from "./_attrs.ts";
export { ScratchAllocator, ThreadPool } from "./context.ts";
export { handlerHostStats } from "./host.ts";
export type { CtxKind } from "./host.ts";
export type { AnyTypedArray, TypedArrayOf } from "./_dtype.ts";
