/**
 * Reclaiming forgotten objects, and tracking open ones for tests.
 *
 * Every object of this module that owns native memory or a native slot
 * (call frames, TS handlers, runtimes, handler libraries, XLA programs and
 * hosts) registers here when it is made. One FinalizationRegistry frees what an
 * object owned once the object is collected without `close()`: the held
 * value is a free function and its argument (the native pointer, the slot),
 * which never reference the object itself. `close()` unregisters the object
 * before it frees anything, so the two paths never both free.
 *
 * Tracking (off by default; `src/testing/leaks.ts` turns it on) records each
 * open object's kind and where it was made; only then is a creation stack
 * captured, so normal use pays one small held object per resource.
 *
 * @module
 */

/** One tracked resource: what it is and where it was made. */
export interface _ResourceRecord {
  /** `CallFrame`, `Handler`, `Runtime`, `HandlerLibrary`, `XlaProgram`, `Xla`. */
  readonly kind: string;
  /** The first stack frame outside this module, e.g. `file:///x_test.ts:12:7`. */
  readonly where: string;
  /** The creation stack. */
  readonly stack: string;
  /** True once the object was collected without close() (its native part was reclaimed). */
  collected: boolean;
}

interface Held {
  free: (arg: never) => void;
  arg: unknown;
  record: _ResourceRecord | undefined;
}

const registry = new FinalizationRegistry<Held>((held) => {
  if (held.record !== undefined) held.record.collected = true;
  try {
    held.free(held.arg as never);
  } catch (e) {
    reclaimFailures++;
    console.error("deno-xla-ffi: reclaiming a collected object failed:", e);
  }
});

let reclaimFailures = 0;
let trackingDepth = 0;
const records = new WeakMap<object, _ResourceRecord>();
const open = new Set<_ResourceRecord>();
/** This module's own source folder: frames inside it are not "where it was made". */
const SRC = new URL("./", import.meta.url).href;

/**
 * @internal Registers a new resource: `free(arg)` reclaims its native part
 * if it is collected without close(). `arg` must not reference `obj`.
 */
export function _register<A>(obj: object, kind: string, free: (arg: A) => void, arg: A): void {
  let record: _ResourceRecord | undefined;
  if (trackingDepth > 0) {
    const stack = new Error().stack ?? "";
    record = { kind, where: whereMade(stack), stack, collected: false };
    records.set(obj, record);
    open.add(record);
  }
  registry.register(obj, { free: free as (arg: never) => void, arg, record }, obj);
}

/**
 * @internal The resource is being closed: its free function will not run.
 * Call it right before the explicit free, after the checks that may refuse.
 */
export function _unregister(obj: object): void {
  registry.unregister(obj);
  const record = records.get(obj);
  if (record !== undefined) {
    open.delete(record);
    records.delete(obj);
  }
}

function whereMade(stack: string): string {
  for (const line of stack.split("\n").slice(1)) {
    const at = line.trim();
    if (at.includes(SRC) || at.includes("ext:")) continue;
    return at.replace(/^at /, "");
  }
  return "an unknown place";
}

/** @internal Starts (+1) or stops (-1) tracking; nested uses count. */
export function _tracking(delta: 1 | -1): void {
  trackingDepth = Math.max(0, trackingDepth + delta);
  if (trackingDepth === 0) open.clear();
}

/** @internal The tracked resources not closed yet (collected ones included). */
export function _openResources(): _ResourceRecord[] {
  return [...open];
}

/** @internal Forgets these records (a leak already reported). */
export function _forget(list: readonly _ResourceRecord[]): void {
  for (const r of list) open.delete(r);
}

/** @internal How many reclaims threw (each reported on stderr). */
export function _reclaimFailures(): number {
  return reclaimFailures;
}
