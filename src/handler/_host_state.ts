/**
 * What the handler host shares with the decoder (`_decode.ts`) and the
 * context helpers (`context.ts`) it calls during a handler's call: the
 * native symbols, the aux area a context helper leaves its value or message
 * in, and the TS states held for the runtime. `host.ts` starts it once, when
 * it starts; the decoder and the helpers run only inside a call the host
 * dispatched, so they always find it started. Living below all three, it
 * keeps them from importing `host.ts`, which imports them.
 *
 * @module
 */
import type { Native } from "../native/lib.ts";

let lib: Native | undefined;
let auxDv: DataView;
let aux: ArrayBuffer;

/** @internal TS states held for the runtime, by the key the execution context keeps. */
export const _states = new Map<number, unknown>();

/** @internal records the started host's symbols and aux area (host.ts's init, once). */
export function _startHostState(l: Native, auxArea: ArrayBuffer): void {
  aux = auxArea;
  auxDv = new DataView(auxArea);
  lib = l;
}

/** @internal the native symbols of the started handler host (inside a call). */
export function _hostLib(): Native {
  return lib!;
}

/** @internal the value a context helper left in the aux area. */
export function _auxValue(): number {
  return auxDv.getFloat64(0, true);
}

/** @internal the message a failed context helper left in the aux area. */
export function _auxMessage(): string {
  const n = auxDv.getInt32(8, true);
  return new TextDecoder().decode(new Uint8Array(aux, 16, n));
}
