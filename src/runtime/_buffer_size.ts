/**
 * The size of a buffer operand, and the one check that data entering a call
 * frame (the builder, `setArg`/`setRet`/`updateBuffers`, `ffiCall`) holds
 * it. Private to the runtime.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { type DataTypeInfo, dataTypeInfo } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import { _FRAME_LIMITS } from "../abi/_facts.generated.ts";

/** The most dimensions a buffer may have (`XFD_MAX_RANK`, native/abi_facts.h). */
export const _MAX_RANK = _FRAME_LIMITS.maxRank;

/**
 * The largest byte size of a buffer: the largest integer a JS number holds
 * exactly, which is also the most bytes a V8 ArrayBuffer can view.
 */
export const _MAX_BUFFER_BYTES = Number.MAX_SAFE_INTEGER;

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** `f32[2,3]`: a buffer's data type and dims as errors show them. */
export function _shapeText(info: DataTypeInfo, dims: readonly number[]): string {
  return `${info.name.toLowerCase()}[${dims.join(",")}]`;
}

/**
 * Checks `dims` (an array of at most {@link _MAX_RANK} non-negative safe
 * integers) for operand `what`.
 */
export function _checkDims(dims: readonly number[], what: string): void {
  if (!Array.isArray(dims)) {
    bad(`${what}: dims must be an array of dimensions, got ${String(dims)}`);
  }
  if (dims.length > _MAX_RANK) {
    bad(`${what}: rank ${dims.length} is more than the ${_MAX_RANK} dimensions a buffer may have`);
  }
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i]!;
    if (!Number.isSafeInteger(d) || d < 0) bad(`${what}: invalid dimension ${String(d)} at ${i}`);
  }
}

/**
 * Bytes a buffer of `dtype` and `dims` covers; FfiError INVALID_ARGUMENT
 * naming `what` for an unknown data type, TOKEN/INVALID, bad dims, or a size
 * beyond {@link _MAX_BUFFER_BYTES}.
 *
 * The size is what a handler may touch: `ffi.h`'s `AnyBuffer::size_bytes()`,
 * `ByteWidth(dtype) × element count` (xla/ffi/api/ffi.h; `ByteWidth` is 1 for
 * PRED, the 8-bit types and the sub-byte types S1/S2/S4/U1/U2/U4/F4E2M1FN,
 * as `xla::primitive_util::ByteWidth` in xla/primitive_util.h). That is also
 * XLA's own `ShapeUtil::ByteSizeOfElements` (xla/shape_util.cc) for a layout
 * without `element_size_in_bits`. Inside a compiled XLA program the CPU and
 * GPU compilers give sub-byte arrays such a layout (the SubByteNormalization
 * pass sets `element_size_in_bits` to the type's bit width) and
 * `ByteSizeOfElements` then packs them: `ceil(elements × bits / 8)` bytes.
 * A frame here holds one element per byte (see src/abi/dtype.ts), so that a
 * handler reading `size_bytes()` bytes, as `ffi.h` tells it it may, stays
 * inside the data: a packed size would leave it reading past the end.
 *
 * The size limit does not depend on the order of the dims: the product of
 * the nonzero dims must fit, so `[0, 2^40, 2^40]` fails as `[2^40, 2^40, 0]`
 * does.
 */
export function _bufferBytes(dtype: DataType, dims: readonly number[], what: string): number {
  const info = infoOf(dtype, what);
  if (info.byteWidth === 0) bad(`${what}: data type ${info.name} has no elements`);
  _checkDims(dims, what);
  let n = info.byteWidth;
  let zero = false;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i]!;
    if (d === 0) {
      zero = true;
      continue;
    }
    n *= d; // all factors are >= 1: the product only grows, whatever the order
    if (n > _MAX_BUFFER_BYTES) {
      bad(
        `${what}: ${_shapeText(info, dims)} is too large (more than ${_MAX_BUFFER_BYTES} bytes)`,
      );
    }
  }
  return zero ? 0 : n;
}

/** {@link _checkDims} for a token (no data type width), {@link _bufferBytes} for the rest. */
export function _checkShape(dtype: DataType, dims: readonly number[], what: string): number {
  if (infoOf(dtype, what).kind === "token") {
    _checkDims(dims, what);
    return 0;
  }
  return _bufferBytes(dtype, dims, what);
}

/**
 * The one size check of data entering a call frame: a typed array must hold
 * exactly the buffer's bytes, device memory at least that many. Returns the
 * buffer's size; FfiError INVALID_ARGUMENT naming `what` otherwise. `fix`,
 * given where the data type was inferred from the typed array, words how to
 * give a complex type: a `Float32Array` (`Float64Array`) of twice the
 * elements is most likely complex data given without its C64 (C128) type.
 */
export function _checkDataSize(
  dtype: DataType,
  dims: readonly number[],
  have: number,
  holder: "array" | "device buffer" | "device memory",
  what: string,
  fix?: (complex: "C64" | "C128") => string,
): number {
  const need = _bufferBytes(dtype, dims, what);
  if (holder === "array" ? have !== need : have < need) {
    const info = dataTypeInfo(dtype);
    let hint = "";
    if (fix !== undefined && need > 0 && have === 2 * need) {
      const complex = dtype === DataType.F32 ? "C64" : dtype === DataType.F64 ? "C128" : undefined;
      if (complex !== undefined) {
        hint = ` (a ${dtype === DataType.F32 ? "Float32Array" : "Float64Array"} of twice the ` +
          `elements: complex data? ${fix(complex)})`;
      }
    }
    bad(
      `${what}: ${_shapeText(info, dims)} needs ${need} bytes but the ${holder} has ${have}${hint}`,
    );
  }
  return need;
}

/**
 * The bytes a typed array or DataView holds now: 0 when its ArrayBuffer is
 * detached or a resizable one shrank below the view (where a DataView's
 * `byteLength` throws a TypeError). Allocates nothing.
 */
export function _viewBytes(view: ArrayBufferView): number {
  try {
    return view.byteLength;
  } catch {
    return 0; // a DataView over a detached or shrunk buffer
  }
}

/**
 * Whether a view cannot be read: its ArrayBuffer is detached, or it is a
 * DataView that a shrunk resizable buffer no longer covers (its getters throw).
 */
export function _isUnreadable(view: ArrayBufferView): boolean {
  if (_isDetached(view)) return true;
  try {
    return view.byteOffset < 0;
  } catch {
    return true;
  }
}

/** Whether a view's ArrayBuffer is detached (transferred); a SharedArrayBuffer never is. */
export function _isDetached(view: ArrayBufferView): boolean {
  return (view.buffer as ArrayBuffer).detached === true;
}

/**
 * Whether a view lies on a resizable ArrayBuffer (`new ArrayBuffer(n, {
 * maxByteLength })`). V8 shrinks one in place and gives its pages back to
 * the system, so keeping the buffer alive does not keep its bytes: a call
 * in flight that reads or writes them faults. A growable SharedArrayBuffer
 * is not one: it only grows, in place, and is never detached.
 */
export function _isResizable(view: ArrayBufferView): boolean {
  return (view.buffer as ArrayBuffer).resizable === true;
}

/**
 * The check of a typed array or DataView entering a call frame as operand
 * `what` (the builder's `arg`/`ret`, `setArg`/`setRet`, `updateBuffers`):
 * FfiError INVALID_ARGUMENT when its ArrayBuffer is detached, when it is a
 * DataView a shrunk buffer no longer covers, or when its ArrayBuffer is
 * resizable ({@link _isResizable}): a frame's operand must keep its bytes
 * for every call, whatever JS code does while one is in flight. A frame's
 * results are written where the caller's array is, so a resizable one is
 * refused rather than copied; `ffiCall`, whose arguments are inputs only,
 * reads such an argument from a copy instead ({@link _pinnedBytes}).
 */
export function _checkView(view: ArrayBufferView, what: string): void {
  if (_isUnreadable(view)) {
    const name = view.constructor?.name ?? "typed array";
    bad(
      _isDetached(view)
        ? `${what}: the ${name}'s ArrayBuffer is detached (transferred); pass data that holds ` +
          `its bytes`
        : `${what}: the ${name} is out of bounds of its resizable ArrayBuffer, which shrank`,
    );
  }
  if (_isResizable(view)) {
    const name = view.constructor?.name ?? "typed array";
    bad(
      `${what}: the ${name}'s ArrayBuffer is resizable and may shrink while a call uses it; ` +
        `pass a copy on a fixed-length ArrayBuffer (${
          view instanceof DataView ? "a DataView of buffer.slice()" : "slice()"
        })`,
    );
  }
}

/**
 * The bytes of `ffiCall` argument `data` as its call reads them: a view of
 * the caller's memory, or a copy when that lies on a resizable ArrayBuffer
 * ({@link _isResizable}), which JS code could shrink under a call in
 * flight. An argument is input only, so the copy is all the call needs;
 * a length-tracking view is copied at its length now.
 */
export function _pinnedBytes(data: ArrayBufferView): Uint8Array {
  const bytes = data instanceof Uint8Array
    ? data
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return _isResizable(data) ? bytes.slice() : bytes;
}

/**
 * Why a typed array or DataView that entered a call frame no longer holds
 * its `need` bytes (its ArrayBuffer detached, or shrunk), for operand `what`.
 */
export function _lostData(view: ArrayBufferView, need: number, what: string): FfiError {
  return new FfiError(
    ErrorCode.INVALID_ARGUMENT,
    _isDetached(view)
      ? `${what}: its ArrayBuffer was detached (transferred) after it entered the call frame; ` +
        `pass the data again (setArg/setRet) before calling`
      : `${what}: its data shrank to ${_viewBytes(view)} bytes after it entered the call ` +
        `frame, which needs ${need}`,
  );
}

function infoOf(dtype: DataType, what: string): DataTypeInfo {
  try {
    return dataTypeInfo(dtype);
  } catch {
    return bad(`${what}: unknown data type ${String(dtype)}`);
  }
}
