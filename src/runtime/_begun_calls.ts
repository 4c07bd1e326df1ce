/**
 * Calls of TS handlers that `Runtime.call` begins on the JS thread, which
 * hosts them: which entry points are TS handlers, and the wait for a begun
 * call's future (the runtime notifies per call snapshot). Private to the
 * runtime.
 *
 * @module
 */
import { _callback, native } from "../native/lib.ts";

/** Whether an address is a TS handler entry point (fixed per address). */
const tsEntry = new Map<number | bigint, boolean>();
/** The same by pointer object: a handler's pointer is one object, its address read once. */
const tsEntryOf = new WeakMap<Deno.PointerObject, boolean>();
/** The pointer last asked about, and its answer (a pointer object is a few bytes to keep). */
let lastEntry: Deno.PointerObject | null = null;
let lastIsTs = false;

/** Whether `fn` is a TS handler's entry point (asked once per address). */
export function _isTsEntry(fn: Deno.PointerObject): boolean {
  // A loop's calls ask about one handler again and again: the last answer without a lookup.
  if (fn === lastEntry) return lastIsTs;
  let v = tsEntryOf.get(fn);
  if (v !== undefined) {
    lastEntry = fn;
    lastIsTs = v;
    return v;
  }
  const a = Deno.UnsafePointer.value(fn);
  v = tsEntry.get(a);
  if (v === undefined) {
    v = native().xla_ffi_deno_handler_slot_of(fn) >= 0;
    tsEntry.set(a, v);
  }
  tsEntryOf.set(fn, v);
  return v;
}

/** Calls of `call` waiting for their future, by snapshot address. */
const waiting = new Map<number | bigint, () => void>();
let notifyCb:
  | Deno.UnsafeCallback<{ readonly parameters: ["pointer"]; readonly result: "void" }>
  | undefined;

/**
 * Makes the native runtime's completion callback ready. Call it before
 * beginning a call (xla_ffi_deno_runtime_call in a begin mode): a
 * future that another thread completes between the begin and
 * {@link _awaitBegun} finds the callback set and queues its notification,
 * which then finds the call registered (the event loop runs it later); set
 * only in `_awaitBegun`, the notification of a process's first pending call
 * could come before it and be lost, and that call never settle.
 */
export function _readyForBegun(): void {
  if (notifyCb !== undefined) return;
  notifyCb = _callback(
    { parameters: ["pointer"], result: "void" } as const,
    (handle) => {
      const k = Deno.UnsafePointer.value(handle);
      const resolve = waiting.get(k);
      if (resolve === undefined) return;
      waiting.delete(k);
      if (waiting.size === 0) notifyCb!.unref();
      resolve();
    },
  );
  notifyCb.unref();
  native().xla_ffi_deno_runtime_set_notify(notifyCb.pointer);
}

/**
 * Waits for the future of a call xla_ffi_deno_runtime_call began
 * (after {@link _readyForBegun}).
 */
export function _awaitBegun(snap: Deno.PointerObject): Promise<void> {
  _readyForBegun();
  return new Promise<void>((resolve) => {
    if (waiting.size === 0) notifyCb!.ref();
    waiting.set(Deno.UnsafePointer.value(snap), resolve);
  });
}
