/**
 * Finding, building and opening the module's native library.
 *
 * @module
 */
import { nativeLibraryPath } from "../../build.ts";
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { type NativeSymbols, SYMBOLS } from "./symbols.ts";

/** The opened native library's symbols. */
export type Native = Deno.DynamicLibrary<NativeSymbols>["symbols"];

let opened: Deno.DynamicLibrary<NativeSymbols> | undefined;

/**
 * Opens any shared library with a symbol table, turning Deno's errors into
 * {@link FfiError}s that name the path, the loader's message, or the missing
 * permission.
 */
export function openLibrary<S extends Deno.ForeignLibraryInterface>(
  path: string,
  symbols: S,
): Deno.DynamicLibrary<S> {
  try {
    return Deno.dlopen(path, symbols);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Opening the native library ${path} needs --allow-ffi (${(e as Error).message})`,
        { cause: e },
      );
    }
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `Cannot load the native library ${path}: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

/**
 * The module's native library, built on first use when needed and kept open
 * for the life of the process.
 */
export function native(): Native {
  if (!opened) opened = openLibrary(nativeLibraryPath(), SYMBOLS);
  return opened.symbols;
}

/** Path of the library {@link native} opened (or would open). */
export function nativePath(): string {
  return nativeLibraryPath();
}
