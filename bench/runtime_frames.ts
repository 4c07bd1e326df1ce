/**
 * The bench frames as frames of our embedded runtime: {@link mirrorFrame}
 * reads a bench frame (an `XLA_FFI_CallFrame*` built by
 * bench/native/frames.c) and lays out the same operands with
 * `CallFrameBuilder` — buffers at the same addresses with the same dtypes and
 * dims, attributes with the same names, types and values — so that a call
 * through the runtime hands a handler the same frame contents as the bench
 * driver does. Its digest (bench/digest.ts) equals the original's.
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { type AttrDictionary, type AttrInput, scalar } from "../src/runtime/attributes.ts";
import { type CallFrame, CallFrameBuilder } from "../src/runtime/call_frame.ts";
import { type DigestAttr, readFrameForDigest } from "./digest.ts";

const V = Deno.UnsafePointerView;

/** dtype, dims and data address of each buffer of the frame's args (base 40) or rets (base 80). */
function buffers(frame: Deno.PointerObject, base: number) {
  const n = Number(new V(frame).getBigInt64(base + 16));
  const list = n > 0 ? new V(frame).getPointer(base + 32) : null;
  return Array.from({ length: n }, (_, i) => {
    const b = new V(list!).getPointer(i * 8)!;
    const rank = Number(new V(b).getBigInt64(32));
    const dimsPtr = rank > 0 ? new V(b).getPointer(40)! : null;
    const dims = Array.from({ length: rank }, (_, j) => Number(new V(dimsPtr!).getBigInt64(j * 8)));
    return { dtype: new V(b).getInt32(16) as DataType, data: new V(b).getPointer(24), dims };
  });
}

/** A typed array over a copy of `bytes` with `dtype`'s element type. */
function typedOf(dtype: number, bytes: Uint8Array) {
  const ab = bytes.slice().buffer;
  switch (dtype) {
    case DataType.S8:
      return new Int8Array(ab);
    case DataType.S16:
      return new Int16Array(ab);
    case DataType.S32:
      return new Int32Array(ab);
    case DataType.S64:
      return new BigInt64Array(ab);
    case DataType.U8:
      return new Uint8Array(ab);
    case DataType.U16:
      return new Uint16Array(ab);
    case DataType.U32:
      return new Uint32Array(ab);
    case DataType.U64:
      return new BigUint64Array(ab);
    case DataType.F32:
      return new Float32Array(ab);
    case DataType.F64:
      return new Float64Array(ab);
    default:
      throw new Error(`no attribute element type for dtype ${dtype}`);
  }
}

function attrInput(a: DigestAttr): AttrInput {
  switch (a.kind) {
    case "string":
      return new TextDecoder().decode(a.bytes);
    case "array":
      return typedOf(a.dtype, a.bytes);
    case "scalar":
      return a.dtype === DataType.PRED
        ? scalar(DataType.PRED, a.bytes[0] !== 0)
        : scalar(a.dtype, typedOf(a.dtype, a.bytes)[0]!);
    case "dict":
      return dictOf(a.entries);
  }
}

function dictOf(entries: readonly DigestAttr[]): AttrDictionary {
  return new Map(entries.map((e) => [e.name, attrInput(e)]));
}

/**
 * A runtime frame with the operands of the bench frame at `frame`; the
 * buffers point at the bench frame's data (keep the bench library open while
 * it is used). Close it when done.
 *
 * @example
 * ```ts ignore
 * using f = mirrorFrame(lib.symbols.bench_frame(0)!);
 * rt.callSync(handler, f);
 * ```
 */
export function mirrorFrame(frame: Deno.PointerObject): CallFrame {
  const b = new CallFrameBuilder();
  for (const x of buffers(frame, 40)) b.argPointer(x.data, x.dtype, x.dims);
  for (const x of buffers(frame, 80)) b.retPointer(x.data, x.dtype, x.dims);
  b.attrs(dictOf(readFrameForDigest(frame).attrs));
  return b.build();
}
