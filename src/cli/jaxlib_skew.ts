/**
 * What `inspect` says about a configured jaxlib: the XLA FFI API version its
 * headers declare (`jaxlib/include/xla/ffi/api/c_api.h`, the version its XLA
 * speaks) and which of the handlers listed it would refuse at registration
 * (those reporting a newer minor of major 0). Read from files, without
 * starting jax.
 *
 * @module
 */
import { probePython } from "../xla/interpreter.ts";

/** A jaxlib found through the configured Python. */
export interface JaxlibApi {
  /** The interpreter that finds it. */
  python: string;
  /** jaxlib's version (`jaxlib/version.py`), or null when unreadable. */
  jaxlib: string | null;
  /** The XLA FFI API version its `c_api.h` declares. */
  ffiApi: { major: number; minor: number };
}

/**
 * The jaxlib that `python` imports and the API version its headers declare,
 * or null when it has none (no jaxlib, or one without headers).
 */
export async function _jaxlibApi(python: string): Promise<JaxlibApi | null> {
  const info = await probePython(python);
  for (const dir of info.sysPath) {
    let text: string;
    try {
      text = await Deno.readTextFile(`${dir}/jaxlib/include/xla/ffi/api/c_api.h`);
    } catch {
      continue;
    }
    const major = /#define XLA_FFI_API_MAJOR (\d+)/.exec(text);
    const minor = /#define XLA_FFI_API_MINOR (\d+)/.exec(text);
    if (!major || !minor) return null;
    let jaxlib: string | null = null;
    try {
      const v = await Deno.readTextFile(`${dir}/jaxlib/version.py`);
      jaxlib = /^_version\s*=\s*"([^"]+)"/m.exec(v)?.[1] ?? null;
    } catch { /* a jaxlib without version.py: unnamed */ }
    return { python, jaxlib, ffiApi: { major: Number(major[1]), minor: Number(minor[1]) } };
  }
  return null;
}

/** Whether an XLA of version `hosted` refuses, at registration, a handler reporting `reported`. */
export function _refuses(
  hosted: { major: number; minor: number },
  reported: { major: number; minor: number },
): boolean {
  return hosted.major === 0 && reported.major === 0 && reported.minor > hosted.minor;
}
