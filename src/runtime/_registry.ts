/**
 * A runtime's handler and type registries, as the native side keeps them
 * (per API version): registering a bundle, looking a name up, listing the
 * names, the metadata query, registering a type. Private to the runtime.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _withHint, FfiError } from "../errors.ts";
import { _describeRegistered, native } from "../native/lib.ts";
import { _pin } from "../handler/host.ts";
import { _check, _takeError, _utf8 } from "./_native_error.ts";
import {
  _checkHandler,
  type HandlerRef,
  type HandlerStages,
  NativeHandler,
  TypeIdRef,
} from "./handler_library.ts";
import type { HandlerMetadata, RegisterTypeOptions } from "./runtime.ts";

/**
 * Registers a bundle under `name` for `platform` through the native
 * `XLA_FFI_Handler_Register` (XLA's checks and messages), and pins the TS
 * entry points it names.
 */
export function _registerBundle(
  rt: Deno.PointerObject,
  name: string,
  bundle: HandlerStages,
  platform: string,
  traits: number,
): void {
  const b = new BigUint64Array(4);
  const ptrs = [bundle.instantiate, bundle.prepare, bundle.initialize, bundle.execute];
  for (let i = 0; i < 4; i++) {
    const h = ptrs[i];
    if (h) _checkHandler(h.pointer, h.name);
    b[i] = h ? Deno.UnsafePointer.value(h.pointer) : 0n;
  }
  const n = _utf8(name);
  const p = _utf8(platform);
  try {
    _check(
      native().xla_ffi_deno_runtime_register(
        rt,
        n,
        BigInt(n.length),
        p,
        BigInt(p.length),
        b,
        traits,
      ),
    );
  } catch (e) {
    throw _withTypeRemedy(e, (bundle.instantiate ?? bundle.execute)?.name);
  }
  // A registration lasts as long as the process: a TS entry point it names
  // is never reused for another handler (after close() it reports an error).
  for (let i = 0; i < 4; i++) if (ptrs[i]) _pin(ptrs[i]!.pointer);
  // A crash in a handler called by this name names it (an isolated handler
  // runs in its own process, behind a stub shared by all of them).
  for (const h of ptrs) {
    if (h && (h as NativeHandler)._isolated === undefined) _describeRegistered(h.pointer, name);
  }
}

/**
 * The bundle, traits and state type id registered under `name` for
 * `platform`; the native error (NOT_FOUND with XLA's message) is thrown as
 * `notFound` makes it. `out` is the caller's reused 6-slot buffer.
 */
export function _lookup(
  rt: Deno.PointerObject,
  name: string,
  platform: string,
  out: BigUint64Array,
  notFound: (error: FfiError) => FfiError,
): { bundle: HandlerStages; traits: number; stateTypeId: number } {
  const n = _utf8(name);
  const p = _utf8(platform);
  const err = native().xla_ffi_deno_runtime_lookup(
    rt,
    n,
    BigInt(n.length),
    p,
    BigInt(p.length),
    out,
  );
  if (err !== null) throw notFound(_takeError(err));
  const h = (i: number) => {
    const v = out[i]!;
    return v === 0n ? null : new NativeHandler(Deno.UnsafePointer.create(v)!, name);
  };
  return {
    bundle: { instantiate: h(0), prepare: h(1), initialize: h(2), execute: h(3)! },
    traits: Number(out[4]),
    stateTypeId: Number(BigInt.asIntN(64, out[5]!)),
  };
}

/** The names registered for `platform`, in registration order. */
export function _registeredNames(rt: Deno.PointerObject, platform: string): string[] {
  const p = _utf8(platform);
  const sym = native();
  let cap = 4096;
  for (;;) {
    const buf = new Uint8Array(cap);
    const n = sym.xla_ffi_deno_runtime_registered_names(rt, p, BigInt(p.length), buf, cap);
    const end = buf.indexOf(0);
    const text = new TextDecoder().decode(buf.subarray(0, end < 0 ? cap : end));
    const names = text.length === 0 ? [] : text.slice(0, -1).split("\n");
    if (names.length >= n || cap >= 1 << 26) return names;
    cap *= 8;
  }
}

/** A handler's metadata, queried as the runtime does at registration. */
export function _metadata(rt: Deno.PointerObject, handler: HandlerRef): HandlerMetadata {
  _checkHandler(handler.pointer, handler.name);
  const out = new BigInt64Array(4);
  try {
    _check(native().xla_ffi_deno_runtime_metadata(rt, handler.pointer, out));
  } catch (e) {
    throw _withTypeRemedy(e, handler.name);
  }
  return {
    apiVersion: { major: Number(out[0]), minor: Number(out[1]) },
    traits: Number(out[2]),
    stateTypeId: Number(out[3]),
  };
}

/** What ffi.h's instantiate handlers answer while their state type has no id. */
const _UNREGISTERED_TYPE = /Types used by FFI handlers must be registered/;

/**
 * @internal `e` with the remedy added when it is ffi.h's answer of an
 * instantiate handler whose state type is not registered yet: the type must
 * be registered (`Runtime.registerType`) with the library's type id storage
 * (`HandlerLibrary.typeId`) before the handler is asked or registered, as XLA
 * requires.
 */
export function _withTypeRemedy(e: unknown, handler: string | undefined): unknown {
  if (!(e instanceof FfiError) || !_UNREGISTERED_TYPE.test(e.message)) return e;
  return _withHint(e, _typeRemedy(handler));
}

/**
 * @internal The hint for an instantiate handler whose state type has no id
 * yet, the same on both hosts.
 */
export function _typeRemedy(handler: string | undefined): string {
  return `${
    handler === undefined ? "the handler" : `'${handler}'`
  } makes a state whose type has no id yet: register the type ` +
    `first, rt.registerType(name, lib.typeId("<T>_type_id"), { typeInfo: ` +
    `lib.typeInfo("<T>_type_info") }), with the XLA_FFI_TypeId* function the library ` +
    `exports for it; the command line's run does it with --type NAME=SYMBOL`;
}

/**
 * Registers a type name (with the deleter of `options.typeInfo`) and returns
 * its id: assigned (0), given (a number), or written into a library's
 * `XLA_FFI_TypeId` storage (a {@link TypeIdRef}).
 */
export function _registerType(
  rt: Deno.PointerObject,
  name: string,
  id: number | bigint | TypeIdRef,
  options: RegisterTypeOptions,
): number {
  const n = _utf8(name);
  let deleter: Deno.PointerValue = null;
  if (options.typeInfo !== undefined) {
    if (options.typeInfo === null) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "registerType: typeInfo is null");
    }
    // XLA_FFI_TypeInfo {struct_size, extension_start, deleter}: the deleter at 16.
    deleter = new Deno.UnsafePointerView(options.typeInfo).getPointer(16);
  }
  if (id instanceof TypeIdRef) {
    _check(
      native().xla_ffi_deno_runtime_register_type(rt, n, BigInt(n.length), id.pointer, deleter),
    );
    return Number(id.value);
  }
  const io = new BigInt64Array([BigInt(id)]);
  _check(
    native().xla_ffi_deno_runtime_register_type(
      rt,
      n,
      BigInt(n.length),
      Deno.UnsafePointer.of(io),
      deleter,
    ),
  );
  return Number(io[0]);
}
