/**
 * State types of handler libraries built with XLA's ffi.h, for the command
 * line. An instantiate handler that makes a state (`Ffi::BindInstantiate()`
 * returning `std::unique_ptr<T>`) answers the metadata query only once `T`
 * has a registered id; ffi.h libraries export the id's storage as
 * `XLA_FFI_TypeId* <stem>_type_id(void)` (`XLA_FFI_DECLARE_TYPE_ID_SYMBOL`)
 * and the type's deleter as `const XLA_FFI_TypeInfo* <stem>_type_info(void)`
 * (`XLA_FFI_DECLARE_TYPE_INFO_SYMBOL`). Registering a type writes the
 * runtime's id into that storage, as XLA's `XLA_FFI_Type_Register` does.
 *
 * @module
 */
import type { HandlerLibrary } from "../runtime/handler_library.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** The suffix of ffi.h's type id functions, by convention. */
const ID_SUFFIX = "_type_id";

/** What ffi.h's instantiate handlers answer while their state type has no id. */
export const UNREGISTERED_TYPE = /Types used by FFI handlers must be registered/;

/** One type to register: a name and the library's type id function. */
export interface TypeSpec {
  /** The name the type is registered under. */
  name: string;
  /** The exported `XLA_FFI_TypeId* SYMBOL(void)`. */
  symbol: string;
}

/**
 * The exported functions that are, by name, ffi.h type id functions
 * (`<stem>_type_id`), in the given order.
 *
 * @example
 * ```ts
 * import { typeIdSymbols } from "./state_types.ts";
 * console.log(typeIdSymbols(["my_handler", "counter_type_id"])); // ["counter_type_id"]
 * ```
 */
export function typeIdSymbols(exports: readonly string[]): string[] {
  return exports.filter((s) => s.endsWith(ID_SUFFIX) && s.length > ID_SUFFIX.length);
}

/**
 * The name a type id function's type is registered under when none is
 * given: the symbol without `_type_id`.
 *
 * @example
 * ```ts
 * import { typeNameOf } from "./state_types.ts";
 * console.log(typeNameOf("counter_type_id")); // "counter"
 * ```
 */
export function typeNameOf(symbol: string): string {
  return symbol.endsWith(ID_SUFFIX) ? symbol.slice(0, -ID_SUFFIX.length) : symbol;
}

/**
 * Registers `types` with `rt`: each type id function of `lib` is called and
 * the runtime's id written into the storage it returns; `<stem>_type_info`,
 * when `exports` has it, gives the deleter of the type's states. Returns the
 * id of each symbol.
 *
 * @example
 * ```ts ignore
 * import { HandlerLibrary, Runtime } from "@deno-xla/ffi";
 * import { registerLibraryTypes } from "./state_types.ts";
 * using lib = HandlerLibrary.open("./libmy_stateful.so");
 * using rt = new Runtime();
 * const types = [{ name: "Scaler", symbol: "scaler_type_id" }];
 * const ids = registerLibraryTypes(rt, lib, types, new Set(["scaler_type_id", "scaler_type_info"]));
 * console.log(ids.get("scaler_type_id")); // the id the runtime assigned, also in the library
 * ```
 */
export function registerLibraryTypes(
  rt: Runtime,
  lib: HandlerLibrary,
  types: readonly TypeSpec[],
  exports: ReadonlySet<string>,
): Map<string, number> {
  const ids = new Map<string, number>();
  for (const { name, symbol } of types) {
    const info = symbol.endsWith(ID_SUFFIX) ? `${typeNameOf(symbol)}_type_info` : undefined;
    const typeInfo = info !== undefined && exports.has(info) ? lib.typeInfo(info) : undefined;
    ids.set(symbol, rt.registerType(name, lib.typeId(symbol), { typeInfo }));
  }
  return ids;
}
