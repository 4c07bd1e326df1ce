/**
 * The shared flat buffer that the C entry points flatten call frames into
 * (layout in native/handler_flatten.c, header indices in native/abi_facts.h), one typed-array view of it per
 * element type, and a scratch area where private copies of records are
 * decoded. Allocated once, on first use; nothing here allocates per call.
 *
 * Positions in the flat buffer are int32 indices (byte offset / 4); a slot
 * is 8 bytes, so a record at int32 index `i` has its f64 fields at `i / 2`.
 *
 * @module
 */
import { _FLAT_HEADER } from "../abi/_facts.generated.ts";

/** Size of the flat buffer and of the scratch area, in 8-byte slots (256 KiB). */
export const FLAT_SLOTS = 1 << 15;

/** int32 indices of the result area TS writes: status code, message length, token. */
export const H_CODE = _FLAT_HEADER.code, H_MSG_LEN = _FLAT_HEADER.msgLen;
export const H_TOKEN = _FLAT_HEADER.token;
/** int32 index of the stage in the flat header (after the result area). */
export const H_STAGE = _FLAT_HEADER.stage;
/** f64 indices of the frame's api and execution context addresses. */
export const H_API = _FLAT_HEADER.api / 2, H_CTX = _FLAT_HEADER.ctx / 2;
/** Counts, and where the result records, the attribute records, and their end are. */
export const H_NARGS = _FLAT_HEADER.nargs, H_RETS_AT = _FLAT_HEADER.retsAt;
export const H_NRETS = _FLAT_HEADER.nrets, H_ATTRS_AT = _FLAT_HEADER.attrsAt;
export const H_NATTRS = _FLAT_HEADER.nattrs, H_ATTRS_END = _FLAT_HEADER.attrsEnd;
/** Where the record index starts: one int32 position per argument, result and attribute. */
export const H_INDEX = _FLAT_HEADER.index;

/** The flat buffer (the C side writes it, TS reads it). */
export let flatBuffer: ArrayBuffer;
/** Views of {@link flatBuffer}. */
export let flatDv: DataView;
export let flatI32: Int32Array;
export let flatF32: Float32Array;
export let flatF64: Float64Array;
/** The flat buffer as the C side receives it (`buffer` FFI argument). */
export let flatI64: BigInt64Array;

/** Allocates the flat buffer and its views (once). */
export function initFlat(): void {
  if (flatBuffer !== undefined) return;
  flatBuffer = new ArrayBuffer(FLAT_SLOTS * 8);
  flatDv = new DataView(flatBuffer);
  flatI32 = new Int32Array(flatBuffer);
  flatF32 = new Float32Array(flatBuffer);
  flatF64 = new Float64Array(flatBuffer);
  flatI64 = new BigInt64Array(flatBuffer);
}

let scratch: ArrayBuffer | undefined;
let scratchDv: DataView;
let scratchI32: Int32Array;

/**
 * Copies `n` int32 words of `words` from index `from` into the scratch area
 * and returns a DataView of it (byte 0 = the first word copied). The view is
 * valid until the next call; decoding never runs user code in between.
 */
export function toScratch(words: readonly number[], from: number, n: number): DataView {
  if (scratch === undefined) {
    scratch = new ArrayBuffer(FLAT_SLOTS * 8);
    scratchDv = new DataView(scratch);
    scratchI32 = new Int32Array(scratch);
  }
  const s = scratchI32;
  for (let i = 0; i < n; i++) s[i] = words[from + i]!;
  return scratchDv;
}

/** A private copy of `n` int32 words of a DataView from byte offset `o` (8-aligned). */
export function copyWords(dv: DataView, o: number, n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = dv.getInt32(o + 4 * i, true);
  return out;
}

/** A private copy of flat buffer int32 words [from, to). */
export function copyFlatWords(from: number, to: number): number[] {
  const n = to - from;
  const out = new Array<number>(n);
  const w = flatI32;
  for (let i = 0; i < n; i++) out[i] = w[from + i]!;
  return out;
}

/** Whether flat buffer words [from, from + words.length) equal `words`. */
export function sameFlatWords(words: readonly number[], from: number): boolean {
  const w = flatI32;
  for (let i = 0; i < words.length; i++) if (w[from + i] !== words[i]) return false;
  return true;
}
