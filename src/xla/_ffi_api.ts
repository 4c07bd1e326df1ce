/**
 * The XLA FFI API versions a hosted jaxlib may declare (its
 * `xla/ffi/api/c_api.h`), and what `Xla.open` does with one it does not
 * know. TS and C handlers report their own version (at most 0.4) in their
 * metadata, and XLA accepts a handler of an older minor version of its
 * major: so a jaxlib declaring a newer minor of major 0 still runs them (the
 * handlers keep to the layouts of their version), while a new major version
 * may have moved anything, and is refused before any handler is registered.
 * A handler newer than the hosted XLA (a 0.4 handler, jaxlib 0.10's 0.3) is
 * refused by `Xla.register` before jax sees it, naming both versions.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _JAXLIB_OF_VERSION, API_VERSIONS, type ApiVersion } from "../abi/version.ts";
import { FfiError } from "../errors.ts";

/** What the module does with a jaxlib declaring a version. */
export type _FfiApiSupport = "spoken" | "newer-minor" | "unknown";

/** Where a declared version stands: one of ours, a newer minor of major 0, or unknown. */
export function _ffiApiSupport(major: number, minor: number): _FfiApiSupport {
  if (major === 0 && (API_VERSIONS as readonly string[]).includes(`0.${minor}`)) return "spoken";
  const newest = Number(API_VERSIONS.at(-1)!.slice(2));
  if (major === 0 && Number.isSafeInteger(minor) && minor > newest) return "newer-minor";
  return "unknown";
}

/**
 * Throws FfiError UNIMPLEMENTED when jaxlib declares an XLA FFI API version
 * the module cannot serve (another major version, or a malformed one). A
 * jaxlib that ships no headers (null) is accepted: its handlers' metadata
 * check still applies when a handler is registered.
 */
export function _checkFfiApi(api: readonly [number | null, number | null], jaxlib: string): void {
  const [major, minor] = api;
  if (major === null || minor === null) return;
  if (_ffiApiSupport(major, minor) !== "unknown") return;
  throw new FfiError(
    ErrorCode.UNIMPLEMENTED,
    `jaxlib ${jaxlib} declares XLA FFI API ${major}.${minor}, which this module does not speak ` +
      `(it speaks ${API_VERSIONS.join(", ")}, and accepts newer 0.x minor versions, whose ` +
      `changes XLA keeps compatible with handlers of an older minor): use a jaxlib of XLA FFI ` +
      `API 0.x, e.g. jaxlib 0.10.2 (0.3), or a newer @deno-xla/ffi`,
  );
}

/**
 * Throws FfiError INVALID_ARGUMENT when a handler reports a version newer
 * than the hosted XLA's (of major 0), which that XLA would refuse at
 * registration: the message names both versions, the jaxlib release that
 * speaks the handler's, and how to bind a TS handler for this one.
 */
export function _checkHandlerVersion(
  name: string,
  reported: { major: number; minor: number },
  hosted: { major: number; minor: number },
  jaxlib: string,
): void {
  if (reported.major !== 0 || hosted.major !== 0 || reported.minor <= hosted.minor) return;
  const r = `0.${reported.minor}`, h = `0.${hosted.minor}`;
  const release = _JAXLIB_OF_VERSION[r as ApiVersion];
  throw new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    `Xla.register: the handler of ${name} reports XLA FFI API ${r}, newer than the ${h} ` +
      `jaxlib ${jaxlib} speaks; its XLA refuses it at registration ("the handler's API ` +
      `version (${r}) is incompatible with the framework's API version (${h})"). Use ` +
      (release ? `jaxlib ${release} or newer (XLA FFI API ${r})` : `a jaxlib of XLA FFI API ${r}`) +
      `, or build the handler for ${h} (a TS handler: bind it without apiVersion, or with ` +
      `{ apiVersion: "${h}" })`,
  );
}
