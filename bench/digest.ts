/**
 * The benchmark's canonical digest in TypeScript: the canonical text of a
 * decoded call frame and its 64-bit FNV-1a hash, byte for byte as the C floor
 * (bench/native/c_decoder.c) and the Python contender compute it. A TS
 * contender maps its own decode to {@link DigestFrame} and digests that.
 *
 * Also a slow reference reader ({@link readFrameForDigest}) that walks a
 * frame with `UnsafePointerView`, for cross-checks only (never timed).
 *
 * @module
 */

/** A decoded buffer: dtype, dims and its first bytes (at least min(4, size in bytes)). */
export interface DigestBuffer {
  dtype: number;
  dims: readonly number[];
  head: Uint8Array;
}

/** A decoded attribute. */
export type DigestAttr =
  | { name: string; kind: "scalar"; dtype: number; bytes: Uint8Array }
  | { name: string; kind: "array"; dtype: number; size: number; bytes: Uint8Array }
  | { name: string; kind: "string"; bytes: Uint8Array }
  | { name: string; kind: "dict"; entries: readonly DigestAttr[] };

/** A decoded call frame. */
export interface DigestFrame {
  stage: number;
  args: readonly DigestBuffer[];
  rets: readonly DigestBuffer[];
  attrs: readonly DigestAttr[];
}

const DTYPE_SIZE: Record<number, number> = {
  1: 1,
  2: 1,
  6: 1,
  3: 2,
  7: 2,
  10: 2,
  16: 2,
  4: 4,
  8: 4,
  11: 4,
  5: 8,
  9: 8,
  12: 8,
  15: 8,
  18: 16,
};

/** Bytes per element of an XLA data type; 0 when unknown. */
export function dtypeSize(dtype: number): number {
  return DTYPE_SIZE[dtype] ?? 0;
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function bufferLine(b: DigestBuffer): string {
  const bytes = b.dims.reduce((a, d) => a * d, 1) * dtypeSize(b.dtype);
  const dims = b.dims.length ? b.dims.join("x") : "-";
  return `buf ${b.dtype} ${b.dims.length} ${dims} ${hex(b.head.subarray(0, Math.min(4, bytes)))}\n`;
}

function attrLines(attrs: readonly DigestAttr[], out: string[]): void {
  for (const a of attrs) {
    switch (a.kind) {
      case "scalar":
        out.push(`${a.name} scalar ${a.dtype} ${hex(a.bytes)}\n`);
        break;
      case "array":
        out.push(`${a.name} array ${a.dtype} ${a.size} ${hex(a.bytes)}\n`);
        break;
      case "string":
        out.push(`${a.name} string ${hex(a.bytes)}\n`);
        break;
      case "dict":
        out.push(`${a.name} dict ${a.entries.length}\n`);
        attrLines(a.entries, out);
        break;
    }
  }
}

/**
 * The canonical text of a decoded frame.
 *
 * @example
 * ```ts
 * import { canonicalText } from "./digest.ts";
 * const text = canonicalText({ stage: 3, args: [], rets: [], attrs: [] });
 * console.assert(text === "stage 3\nargs 0\nrets 0\nattrs 0\n");
 * ```
 */
export function canonicalText(f: DigestFrame): string {
  const out = [`stage ${f.stage}\n`, `args ${f.args.length}\n`, ...f.args.map(bufferLine)];
  out.push(`rets ${f.rets.length}\n`, ...f.rets.map(bufferLine), `attrs ${f.attrs.length}\n`);
  attrLines(f.attrs, out);
  return out.join("");
}

/**
 * 64-bit FNV-1a of a string's UTF-8 bytes, as 16 lowercase hex digits.
 *
 * @example
 * ```ts
 * import { fnv1a64Hex } from "./digest.ts";
 * console.assert(fnv1a64Hex("") === "cbf29ce484222325");
 * ```
 */
export function fnv1a64Hex(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

/** The digest of a decoded frame. */
export function frameDigest(f: DigestFrame): string {
  return fnv1a64Hex(canonicalText(f));
}

// ---- reference reader (slow; cross-checks only) ----------------------------

const V = Deno.UnsafePointerView;

function ptrAt(p: Deno.PointerObject, offset: number): Deno.PointerObject {
  const q = new V(p).getPointer(offset);
  if (q === null) throw new Error(`NULL pointer at offset ${offset}`);
  return q;
}

function bytesAt(p: Deno.PointerValue, n: number): Uint8Array {
  if (n === 0) return new Uint8Array(0);
  if (p === null) throw new Error("NULL data");
  return new Uint8Array(V.getArrayBuffer(p, n).slice(0));
}

function readBuffer(p: Deno.PointerObject): DigestBuffer {
  const dtype = new V(p).getInt32(16);
  const rank = Number(new V(p).getBigInt64(32));
  const dims: number[] = [];
  if (rank > 0) {
    const d = ptrAt(p, 40);
    for (let i = 0; i < rank; i++) dims.push(Number(new V(d).getBigInt64(i * 8)));
  }
  const bytes = dims.reduce((a, x) => a * x, 1) * dtypeSize(dtype);
  return { dtype, dims, head: bytesAt(new V(p).getPointer(24), Math.min(4, bytes)) };
}

function readSpan(p: Deno.PointerObject): Uint8Array {
  return bytesAt(new V(p).getPointer(0), Number(new V(p).getBigUint64(8)));
}

function readAttrs(p: Deno.PointerObject): DigestAttr[] {
  const size = Number(new V(p).getBigInt64(16));
  const out: DigestAttr[] = [];
  if (size === 0) return out;
  const types = ptrAt(p, 24), names = ptrAt(p, 32), values = ptrAt(p, 40);
  for (let i = 0; i < size; i++) {
    const name = new TextDecoder().decode(readSpan(ptrAt(names, i * 8)));
    const v = ptrAt(values, i * 8);
    switch (new V(types).getInt32(i * 4)) {
      case 1: {
        const dtype = new V(v).getInt32(0);
        const n = Number(new V(v).getBigUint64(8));
        out.push({
          name,
          kind: "array",
          dtype,
          size: n,
          bytes: bytesAt(new V(v).getPointer(16), n * dtypeSize(dtype)),
        });
        break;
      }
      case 2:
        out.push({ name, kind: "dict", entries: readAttrs(v) });
        break;
      case 3: {
        const dtype = new V(v).getInt32(0);
        out.push({
          name,
          kind: "scalar",
          dtype,
          bytes: bytesAt(new V(v).getPointer(8), dtypeSize(dtype)),
        });
        break;
      }
      case 4:
        out.push({ name, kind: "string", bytes: readSpan(v) });
        break;
      default:
        throw new Error(`attribute ${name}: unknown type`);
    }
  }
  return out;
}

/**
 * Reads a whole `XLA_FFI_CallFrame` (x86-64 layout) with `UnsafePointerView`
 * into a {@link DigestFrame}. Slow (one FFI read per field): for checks only.
 *
 * @example
 * ```ts ignore
 * import { frameDigest, readFrameForDigest } from "./digest.ts";
 * console.log(frameDigest(readFrameForDigest(framePointer)));
 * ```
 */
export function readFrameForDigest(frame: Deno.PointerObject): DigestFrame {
  const list = (base: number) => {
    const n = Number(new V(frame).getBigInt64(base + 16));
    const ptrs = n > 0 ? ptrAt(frame, base + 32) : null;
    return Array.from({ length: n }, (_, i) => readBuffer(ptrAt(ptrs!, i * 8)));
  };
  return {
    stage: new V(frame).getInt32(32),
    args: list(40),
    rets: list(80),
    attrs: readAttrs(Deno.UnsafePointer.offset(frame, 120)!),
  };
}
