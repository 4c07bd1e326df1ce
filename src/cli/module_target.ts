/**
 * Handler modules (`run handlers.ts <export>`): each run imports its own
 * instance of the module, so the handlers it makes belong to that run, and
 * closes them when the run ends (an open TS handler holds one of the entry points).
 *
 * @module
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** A module's exports. */
export type ModuleExports = Record<string, unknown>;

const _loaded = new WeakMap<object, ModuleExports>();
let _instances = 0;

/**
 * Imports a new instance of the module at `path` (relative to the working
 * folder) for the run `key`, or returns the one already imported for it.
 *
 * @example
 * ```ts ignore
 * const mod = await _importForRun(run, "./handlers.ts");
 * ```
 */
export async function _importForRun(key: object, path: string): Promise<ModuleExports> {
  const known = _loaded.get(key);
  if (known) return known;
  const url = pathToFileURL(resolve(path)); // a space, `%` or `#` in a name stays literal
  url.searchParams.set("xla-ffi-cli-run", String(++_instances));
  // The user's module, named at run time by an absolute file: URL (so `deno publish` sees
  // nothing it would have to rewrite).
  const mod = await import(`file://${url.pathname}${url.search}`) as ModuleExports;
  _loaded.set(key, mod);
  return mod;
}

/**
 * Gives the run `key` the exports it would import (the handlers of a Python
 * extension module, `run --python-module`): {@link _importForRun} returns
 * them, and the target is not looked for as a file.
 *
 * @example
 * ```ts ignore
 * _provideForRun(run, { lapack_sgetrf_ffi: handler });
 * ```
 */
export function _provideForRun(key: object, exports: ModuleExports): void {
  _loaded.set(key, exports);
  _provided.add(key);
}

/** Whether the run `key`'s exports were given by {@link _provideForRun}. */
export function _isProvided(key: object): boolean {
  return _provided.has(key);
}

const _provided = new WeakSet<object>();

/** True for a TS handler or bundle: has `close()` and an entry point or an execute stage. */
function _closable(v: unknown): v is { close(): void } {
  return typeof v === "object" && v !== null && typeof (v as { close?: unknown }).close ===
      "function" &&
    ("pointer" in v || "execute" in v);
}

/**
 * Closes every handler and handler bundle the module instance of run `key`
 * exports, and forgets the instance. Errors of `close()` are ignored (the
 * run's outcome is already decided).
 *
 * @example
 * ```ts ignore
 * _closeRunModule(run);
 * ```
 */
export function _closeRunModule(key: object): void {
  const mod = _loaded.get(key);
  if (!mod) return;
  _loaded.delete(key);
  _provided.delete(key);
  for (const v of Object.values(mod)) {
    if (!_closable(v)) continue;
    try {
      v.close();
    } catch { /* already closed or not ours to report */ }
  }
}
