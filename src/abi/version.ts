/**
 * The XLA FFI API versions this module speaks, on both sides: a handler
 * reports one of them in its metadata, and the embedded runtime speaks one of
 * them. Version facts (State/Type layouts, registration rules, messages) are
 * selected by these values in one place per side.
 *
 * @module
 */
import { ErrorCode } from "./enums.ts";
import { FfiError } from "../errors.ts";

/**
 * An XLA FFI API version (major 0): `"0.1"` is the seed ABI (State_Set with
 * a deleter, TypeId_Register); `"0.2"` registers types with a TypeInfo that
 * carries the deleter (Type_Register) and adds `state_type_id` to the
 * metadata; `"0.3"` adds the stage to State_Set/State_Get (a state per
 * instantiate, prepare and initialize stage); `"0.4"` appends
 * `XLA_FFI_Error_GetCode` to the API table. jaxlib 0.10 speaks 0.3,
 * jaxlib 0.11 speaks 0.4.
 *
 * @example
 * ```ts
 * import { type ApiVersion, Runtime } from "@deno-xla/ffi";
 * const v: ApiVersion = "0.2";
 * using rt = new Runtime({ apiVersion: v, threads: 0 });
 * console.log(rt.apiVersion); // "0.2"
 * ```
 */
export type ApiVersion = "0.1" | "0.2" | "0.3" | "0.4";

/**
 * The versions this module speaks, oldest first; the last is the default of
 * handlers and of the embedded runtime.
 *
 * @example
 * ```ts
 * import { API_VERSIONS } from "@deno-xla/ffi";
 * console.log(API_VERSIONS.at(-1)); // "0.4"
 * ```
 */
export const API_VERSIONS: readonly ApiVersion[] = ["0.1", "0.2", "0.3", "0.4"];

/** @internal the newest version, the default of both sides. */
export const NEWEST_API_VERSION: ApiVersion = "0.4";

/**
 * @internal The jaxlib release line that first speaks each version (for
 * messages about a hosted XLA that refuses a newer handler).
 */
export const _JAXLIB_OF_VERSION: Readonly<Record<ApiVersion, string>> = {
  "0.1": "0.6",
  "0.2": "0.9",
  "0.3": "0.10",
  "0.4": "0.11",
};

/** @internal `"0.x"` → minor x, after checking it is spoken. */
export function _apiMinor(version: string, what: string): number {
  if (!(API_VERSIONS as readonly string[]).includes(version)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: unsupported XLA FFI API version '${version}' (supported: ${
        API_VERSIONS.join(", ")
      })`,
    );
  }
  return Number(version.slice(2));
}
