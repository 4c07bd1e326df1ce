/**
 * The side-by-side benchmark's TS contender: TS handlers (our binding DSL,
 * `Ffi.bind()`) that decode every operand of the three bench frames, and the
 * digest of what they decoded (bench/digest.ts).
 *
 * Each frame gets a handler bound to exactly its operands, as a real handler
 * is written for its custom call: the execution stage, every buffer argument
 * and result with its dtype and rank, and every attribute by name and kind
 * (dictionaries are bound as `"dict"` and every entry is then read with
 * `Dictionary.get(name, kind)`, nested dictionaries included). The handler
 * keeps its last decode; {@link TsHandlers.digest} maps that to a
 * `DigestFrame` after the timed loop.
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { type Binding, Ffi, type Handler } from "../src/handler/binding.ts";
import type { AttrKind, Dictionary } from "../src/handler/_attrs.ts";
import type { FfiBuffer } from "../src/handler/buffer.ts";
import { type DigestAttr, type DigestBuffer, type DigestFrame, frameDigest } from "./digest.ts";

/** One bound attribute: name, kind, and for dictionaries their entries. */
interface AttrBind {
  name: string;
  kind: AttrKind;
  entries?: readonly AttrBind[];
}

/** The operands a handler binds. */
interface FrameBind {
  args: readonly [DataType, number][];
  rets: readonly [DataType, number][];
  /** In the frame's (sorted) order. */
  attrs: readonly AttrBind[];
}

const F32 = DataType.F32;

/** The standard frame (bench/native/frames.c build_standard). */
const STANDARD: FrameBind = {
  args: [[F32, 2], [F32, 1], [F32, 3], [F32, 4]],
  rets: [[F32, 2]],
  attrs: [
    { name: "alpha", kind: "f32" },
    { name: "axes", kind: "i64[]" },
    { name: "mode", kind: "string" },
    { name: "n", kind: "i32" },
  ],
};

/** The small frame (build_small). */
const SMALL: FrameBind = { args: [[F32, 1]], rets: [], attrs: [] };

const LARGE_DTYPES = [
  DataType.F32,
  DataType.F64,
  DataType.S32,
  DataType.S64,
  DataType.U8,
  DataType.F16,
  DataType.S8,
  DataType.U32,
];

/** The large frame (build_large, large_buffer, large_dict). */
function largeBind(): FrameBind {
  const buffer = (i: number): [DataType, number] => [LARGE_DTYPES[i % 8]!, i % 5];
  const attrs: AttrBind[] = [];
  for (let i = 0; i < 32; i++) {
    const k = `k${String(i).padStart(2, "0")}`;
    switch (i % 8) {
      case 0:
        attrs.push({ name: `${k}_s32`, kind: "i32" });
        break;
      case 1:
        attrs.push({ name: `${k}_f32`, kind: "f32" });
        break;
      case 2:
        attrs.push({ name: `${k}_f64`, kind: "f64" });
        break;
      case 3:
        attrs.push({ name: `${k}_str`, kind: "string" });
        break;
      case 4:
        attrs.push({ name: `${k}_s64s`, kind: "i64[]" });
        break;
      case 5:
        attrs.push({ name: `${k}_f32s`, kind: "f32[]" });
        break;
      case 6: {
        const entries: AttrBind[] = [
          { name: "coeffs", kind: "f64[]" },
          { name: "count", kind: "i32" },
          { name: "label", kind: "string" },
        ];
        if (i % 16 === 6) {
          entries.push({
            name: "options",
            kind: "dict",
            entries: [{ name: "enabled", kind: "bool" }, { name: "seed", kind: "i64" }],
          });
        }
        attrs.push({ name: `${k}_dict`, kind: "dict", entries });
        break;
      }
      default:
        attrs.push({ name: `${k}_u64`, kind: "u64n" }); // full 64-bit range: bigint
    }
  }
  return {
    args: Array.from({ length: 64 }, (_, i) => buffer(i)),
    rets: Array.from({ length: 4 }, (_, i) => buffer(64 + i)),
    attrs,
  };
}

/** What a dictionary decodes to: its entries' values, in order (nested dicts as arrays). */
type DictValues = unknown[];

/** Reads every entry of `d` (as bound in `entries`) into `out`. */
function decodeDict(d: Dictionary, entries: readonly AttrBind[], out: DictValues): void {
  for (let j = 0; j < entries.length; j++) {
    const e = entries[j]!;
    if (e.entries !== undefined) {
      decodeDict(d.get(e.name, "dict") as Dictionary, e.entries, out[j] as DictValues);
    } else {
      out[j] = d.get(e.name, e.kind);
    }
  }
}

function emptyValues(entries: readonly AttrBind[]): DictValues {
  return entries.map((e) => e.entries === undefined ? undefined : emptyValues(e.entries));
}

const KIND_DTYPE: Partial<Record<AttrKind, DataType>> = {
  bool: DataType.PRED,
  i32: DataType.S32,
  i64: DataType.S64,
  u64: DataType.U64,
  i64n: DataType.S64,
  u64n: DataType.U64,
  f32: DataType.F32,
  f64: DataType.F64,
};

/** The bytes of a JS number as an element of `dtype` (little-endian, as the frames hold them). */
function elementBytes(dtype: DataType, v: unknown): Uint8Array {
  const dv = new DataView(new ArrayBuffer(8));
  switch (dtype) {
    case DataType.PRED:
      return new Uint8Array([v ? 1 : 0]);
    case DataType.S32:
      dv.setInt32(0, v as number, true);
      return new Uint8Array(dv.buffer, 0, 4);
    case DataType.S64:
      dv.setBigInt64(0, BigInt(v as number | bigint), true);
      return new Uint8Array(dv.buffer, 0, 8);
    case DataType.U64:
      dv.setBigUint64(0, BigInt(v as number | bigint), true);
      return new Uint8Array(dv.buffer, 0, 8);
    case DataType.F32:
      dv.setFloat32(0, v as number, true);
      return new Uint8Array(dv.buffer, 0, 4);
    case DataType.F64:
      dv.setFloat64(0, v as number, true);
      return new Uint8Array(dv.buffer, 0, 8);
    default:
      throw new Error(`no byte encoding for dtype ${dtype}`);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function digestAttr(a: AttrBind, v: unknown): DigestAttr {
  if (a.entries !== undefined) {
    const values = v as DictValues;
    return {
      name: a.name,
      kind: "dict",
      entries: a.entries.map((e, j) => digestAttr(e, values[j])),
    };
  }
  if (a.kind === "string") {
    return { name: a.name, kind: "string", bytes: new TextEncoder().encode(v as string) };
  }
  if (a.kind.endsWith("[]")) {
    const dtype = KIND_DTYPE[a.kind.slice(0, -2) as AttrKind]!;
    const xs = v as number[];
    return {
      name: a.name,
      kind: "array",
      dtype,
      size: xs.length,
      bytes: concat(xs.map((x) => elementBytes(dtype, x))),
    };
  }
  const dtype = KIND_DTYPE[a.kind];
  if (dtype === undefined) throw new Error(`attribute kind ${a.kind} is not digested`);
  return { name: a.name, kind: "scalar", dtype, bytes: elementBytes(dtype, v) };
}

/** A decoded buffer with the first bytes of its data (read now, outside any timing). */
function digestBuffer(b: FfiBuffer): DigestBuffer {
  const n = Math.min(4, b.byteSize);
  const p = b.pointer;
  const head = n === 0 || p === null
    ? new Uint8Array(0)
    : new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(p, n).slice(0));
  return { dtype: b.dtype, dims: [...b.dims], head };
}

/** The TS handler of one frame and its last decode. */
class FrameHandler {
  readonly handler: Handler;
  readonly #bind: FrameBind;
  /** Parameters of the last call: stage, args, rets, attrs (dicts as Dictionary). */
  #last: unknown[] | undefined;
  /** Decoded dictionary entries of the last call, per attribute (undefined for non-dicts). */
  readonly #dicts: (DictValues | undefined)[];

  constructor(bind: FrameBind) {
    this.#bind = bind;
    this.#dicts = bind.attrs.map((a) =>
      a.entries === undefined ? undefined : emptyValues(a.entries)
    );
    // deno-lint-ignore no-explicit-any
    let b: Binding<any[]> = Ffi.bind().ctx("stage");
    for (const [dtype, rank] of bind.args) b = b.arg(dtype, rank);
    for (const [dtype, rank] of bind.rets) b = b.ret(dtype, rank);
    for (const a of bind.attrs) b = b.attr(a.name, a.kind);
    const first = 1 + bind.args.length + bind.rets.length;
    const attrs = bind.attrs;
    const dicts = this.#dicts;
    this.handler = b.to((...p: unknown[]) => {
      for (let i = 0; i < attrs.length; i++) {
        const e = attrs[i]!.entries;
        if (e !== undefined) decodeDict(p[first + i] as Dictionary, e, dicts[i]!);
      }
      this.#last = p;
    });
  }

  /** Forgets the last decode (so a stale one never passes for a new measurement). */
  reset(): void {
    this.#last = undefined;
  }

  /** The digest of the last decode; throws when there was none. */
  digest(): string {
    const p = this.#last;
    if (p === undefined) throw new Error("the TS handler recorded no decode");
    const nargs = this.#bind.args.length, nrets = this.#bind.rets.length;
    const first = 1 + nargs + nrets;
    const frame: DigestFrame = {
      stage: p[0] as number,
      args: p.slice(1, 1 + nargs).map((b) => digestBuffer(b as FfiBuffer)),
      rets: p.slice(1 + nargs, first).map((b) => digestBuffer(b as FfiBuffer)),
      attrs: this.#bind.attrs.map((a, i) =>
        digestAttr(a, a.entries === undefined ? p[first + i] : this.#dicts[i])
      ),
    };
    return frameDigest(frame);
  }
}

/**
 * TS handlers for the bench frames (ids as in bench_lib.ts FRAMES: 0
 * standard, 1 small, 2 large). Close them when done.
 *
 * @example
 * ```ts ignore
 * using ts = new TsHandlers();
 * await drive(lib, ts.pointer(0), 0, 1000, 0);
 * console.log(ts.digest(0));
 * ```
 */
export class TsHandlers {
  readonly #frames: FrameHandler[];

  /** Binds one handler per frame. */
  constructor() {
    this.#frames = [];
    try {
      for (const bind of [STANDARD, SMALL, largeBind()]) this.#frames.push(new FrameHandler(bind));
    } catch (e) {
      this.close();
      throw e;
    }
  }

  #of(frame: number): FrameHandler {
    const h = this.#frames[frame];
    if (h === undefined) throw new RangeError(`no TS handler for bench frame ${frame}`);
    return h;
  }

  /** The `XLA_FFI_Handler*` of frame `frame`'s handler. */
  pointer(frame: number): Deno.PointerObject {
    return this.#of(frame).handler.pointer;
  }

  /** Forgets frame `frame`'s last decode. */
  reset(frame: number): void {
    this.#of(frame).reset();
  }

  /** Digest of the last decode of frame `frame`'s handler (computed now). */
  digest(frame: number): string {
    return this.#of(frame).digest();
  }

  /** Closes every handler. */
  close(): void {
    for (const f of this.#frames) f.handler.close();
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
