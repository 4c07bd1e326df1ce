/**
 * CallFrameBuilder and CallFrame: `XLA_FFI_CallFrame`s owned by the embedded
 * runtime, laid out in one native allocation by one C call.
 *
 * @module
 */
import { AttrType, DataType, ErrorCode } from "../abi/enums.ts";
import { _describeValue, FfiError } from "../errors.ts";
import { _register, _unregister } from "../_resources.ts";
import { native } from "../native/lib.ts";
import {
  _ATTR_LIMITS,
  type _AttrEntry,
  _attrWidth,
  _isDictionary,
  _makeEntry,
  _sameTyped,
  type AttrDictionary,
  type AttrInput,
} from "./attributes.ts";
import { DeviceMemory } from "../cuda/memory.ts";
import { _bufferBytes, DeviceBuffer } from "./device_buffer.ts";
import {
  _checkDataSize,
  _checkShape,
  _checkView,
  _isDetached,
  _lostData,
  _pinnedBytes,
  _viewBytes,
} from "./_buffer_size.ts";
import { dataTypeOf } from "../abi/dtype.ts";
import { type _ImplicitAttr, _implicitAttrs } from "./_hints.ts";
import type { ArrayInput } from "./ffi_call.ts";
import { _FrameGuard, type _GuardOperand } from "./_guard.ts";
import { _FRAME_LIMITS } from "../abi/_facts.generated.ts";

/** Typed arrays usable as buffer arguments and results. */
export type BufferData = ArrayBufferView;

/** A native address: a pointer object, or its numeric value. */
export type Address = Deno.PointerValue | number | bigint;

/**
 * Device memory usable as a buffer: a {@link DeviceBuffer} (data type and
 * dims included) or a {@link DeviceMemory} (give dims and data type).
 */
export type DeviceData = DeviceBuffer | DeviceMemory;

/** Where a buffer's data lives: 1 host typed array, 2 device memory, 0 unknown/none. */
function placementOf(data: unknown): number {
  if (ArrayBuffer.isView(data)) return _viewBytes(data) > 0 ? 1 : 0;
  if (data instanceof DeviceBuffer || data instanceof DeviceMemory) return 2;
  return 0;
}

/** @internal Eight arrays (or null) a nonblocking call keeps alive (CallFrame._hold). */
export type HeldViews = [
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
  BufferSource | null,
];

/** Whether a call's hold can keep `v`'s memory alive (see CallFrame._hold). */
function holdable(v: ArrayBufferView): boolean {
  const b = v.buffer;
  return b instanceof ArrayBuffer && !b.resizable && !b.detached && b.byteLength > 0;
}

/** The most arguments, or results, of a frame (`XFD_MAX_OPERANDS`, native/abi_facts.h). */
const MAX_OPERANDS = _FRAME_LIMITS.maxOperands;

/** INVALID_ARGUMENT when a frame has more than `max` of `what`. */
function atMost(n: number, max: number, what: string): void {
  if (n > max) bad(`A call frame may have at most ${max} ${what}, this one has ${n}`);
}

/** The data type a typed array holds (`Float32Array` → F32), or undefined. */
function inferredType(data: ArrayBufferView): DataType | undefined {
  try {
    return dataTypeOf(data);
  } catch {
    return undefined;
  }
}

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

const baseAddress = new WeakMap<ArrayBufferLike, number>();

/** The native address of a typed array's first byte (cached per ArrayBuffer). */
export function _addressOf(view: ArrayBufferView): number {
  return addressIn(view.buffer, view);
}

/** {@link _addressOf} of `view`, whose `buffer` the caller read already (`buf`). */
function addressIn(buf: ArrayBufferLike, view: ArrayBufferView): number {
  let base = baseAddress.get(buf);
  if (base === undefined) {
    const p = buf instanceof ArrayBuffer
      ? Deno.UnsafePointer.of(buf)
      : Deno.UnsafePointer.of(new Uint8Array(buf));
    base = p === null ? 0 : Number(Deno.UnsafePointer.value(p));
    baseAddress.set(buf, base);
  }
  return base + view.byteOffset;
}

/** A value as an error message shows it: strings quoted, bigints with `n`. */
function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}…` : v);
  if (typeof v === "bigint") return `${v}n`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor?.name ?? "typed array"}`;
  if (Array.isArray(v)) return "an array";
  if (typeof v === "function") return "a function";
  if (v !== null && typeof v === "object") return `an object (${_describeValue(v).slice(0, 64)})`;
  return String(v);
}

/** The largest address a frame takes: the largest integer a JS number holds exactly. */
const MAX_ADDRESS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The numeric value of a native address given as an {@link Address}: null
 * (0), a pointer object, a bigint or a number that is a safe integer ≥ 0.
 * FfiError INVALID_ARGUMENT naming `what` and the value for anything else.
 */
function addressValue(a: unknown, what: string): number {
  if (a === null) return 0;
  if (typeof a === "number") {
    if (!Number.isSafeInteger(a) || a < 0) {
      bad(`${what}: invalid buffer address ${a} (an address is a safe integer >= 0)`);
    }
    return a;
  }
  if (typeof a === "bigint") {
    if (a < 0n || a > MAX_ADDRESS) {
      bad(`${what}: invalid buffer address ${a}n (an address is in [0, 2^53))`);
    }
    return Number(a);
  }
  if (typeof a === "object") {
    let v: bigint | number | undefined;
    try {
      v = Deno.UnsafePointer.value(a as Deno.PointerObject); // throws for any non-pointer object
    } catch { /* below */ }
    if (v !== undefined) return addressValue(BigInt(v), what);
  }
  bad(
    `${what}: expected an address (a pointer, a bigint or a safe integer >= 0), got ${shown(a)}`,
  );
}

/**
 * Checks data for operand `what` as setArg/setRet take it: a typed array
 * whose ArrayBuffer is neither detached nor resizable ({@link _checkView}),
 * device memory, or an address ({@link addressValue}). FfiError
 * INVALID_ARGUMENT naming `what` otherwise.
 */
function checkOperandData(data: unknown, what: string): void {
  if (ArrayBuffer.isView(data)) {
    _checkView(data, what);
    return;
  }
  if (data instanceof DeviceBuffer || data instanceof DeviceMemory) return;
  if (data === null || typeof data === "number" || typeof data === "bigint") {
    addressValue(data, what);
    return;
  }
  if (typeof data === "object") {
    let pointer = false;
    try {
      Deno.UnsafePointer.value(data as Deno.PointerObject);
      pointer = true;
    } catch { /* below */ }
    if (pointer) {
      addressValue(data, what);
      return;
    }
  }
  bad(
    `${what}: expected a typed array, device memory or an address (a pointer, a bigint or a ` +
      `safe integer >= 0), got ${shown(data)}`,
  );
}

/** An operand's native address; its data was checked ({@link checkOperandData}). */
function toAddress(a: Address | BufferData | DeviceData): number {
  if (a instanceof DeviceBuffer || a instanceof DeviceMemory) return deviceAddress(a.ptr);
  if (ArrayBuffer.isView(a)) return _addressOf(a);
  return addressValue(a, "buffer");
}

function deviceAddress(p: bigint): number {
  if (p > BigInt(Number.MAX_SAFE_INTEGER)) bad(`Device address ${p} is beyond 2^53`);
  return Number(p);
}

function deviceEntry(
  data: DeviceData,
  dims: readonly number[] | undefined,
  dtype: DataType | undefined,
  what: string,
): BufferEntry {
  if (data instanceof DeviceBuffer) {
    const d = dims ?? data.dims;
    const dt = dtype ?? data.dtype;
    _checkDataSize(dt, d, data.memory.bytes, "device buffer", what);
    return { dtype: dt, dims: [...d], address: deviceAddress(data.ptr), keep: data };
  }
  if (dims === undefined || dtype === undefined) {
    bad(`${what}: device memory has no data type or dims; pass both (or use a DeviceBuffer)`);
  }
  _checkDataSize(dtype, dims, data.bytes, "device memory", what);
  return { dtype, dims: [...dims], address: deviceAddress(data.ptr), keep: data };
}

/** @internal A buffer operand as the builder described it. */
export interface BufferEntry {
  dtype: DataType;
  dims: readonly number[];
  address: number;
  keep: unknown;
}

function bufferEntry(
  data: BufferData | DeviceData | ArrayInput,
  dims: readonly number[] | undefined,
  dtype: DataType | undefined,
  what: string,
): BufferEntry {
  if (data instanceof DeviceBuffer || data instanceof DeviceMemory) {
    return deviceEntry(data, dims, dtype, what);
  }
  if (data !== null && typeof data === "object" && !ArrayBuffer.isView(data)) {
    // { data, shape, dtype } or an NpyArray: dims and dtype given to arg()/ret() win.
    const input = data as ArrayInput;
    if (!ArrayBuffer.isView(input.data)) bad(`${what}: expected a typed array or device memory`);
    return bufferEntry(input.data, dims ?? input.shape, dtype ?? input.dtype, what);
  }
  if (!ArrayBuffer.isView(data)) bad(`${what}: expected a typed array or device memory`);
  _checkView(data, what);
  const dt = dtype ?? inferredType(data);
  if (dt === undefined) {
    bad(`${what}: cannot infer the data type of ${data.constructor.name}; pass one`);
  }
  if (dims === undefined) {
    const width = _checkShape(dt, [], what); // ByteWidth; an unknown type or a token fails here
    dims = [data.byteLength / width];
  }
  _checkDataSize(
    dt,
    dims,
    data.byteLength,
    "array",
    what,
    dtype === undefined ? (c) => `pass its type, DataType.${c}` : undefined,
  );
  return { dtype: dt, dims: [...dims], address: _addressOf(data), keep: data };
}

const TOKEN: BufferEntry = { dtype: DataType.TOKEN, dims: [], address: 0, keep: null };

// One reused description buffer for every build.
let scratch = new ArrayBuffer(4096);
let u8 = new Uint8Array(scratch);
let dv = new DataView(scratch);

function ensure(n: number): void {
  if (scratch.byteLength >= n) return;
  let size = scratch.byteLength;
  while (size < n) size *= 2;
  scratch = new ArrayBuffer(size);
  u8 = new Uint8Array(scratch);
  dv = new DataView(scratch);
}

function writeText(off: number, s: string, bytes: Uint8Array | null): number {
  if (bytes) {
    u8.set(bytes, off);
    return off + ((bytes.length + 7) & ~7);
  }
  for (let i = 0; i < s.length; i++) u8[off + i] = s.charCodeAt(i);
  return off + ((s.length + 7) & ~7);
}

function writeScalar(off: number, dt: DataType, v: number | bigint): void {
  switch (dt) {
    case DataType.PRED:
    case DataType.U8:
      dv.setUint8(off, Number(v));
      break;
    case DataType.S8:
      dv.setInt8(off, Number(v));
      break;
    case DataType.S16:
      dv.setInt16(off, Number(v), true);
      break;
    case DataType.U16:
      dv.setUint16(off, Number(v), true);
      break;
    case DataType.S32:
      dv.setInt32(off, Number(v), true);
      break;
    case DataType.U32:
      dv.setUint32(off, Number(v), true);
      break;
    case DataType.S64:
      dv.setBigInt64(off, BigInt(v), true);
      break;
    case DataType.U64:
      dv.setBigUint64(off, BigInt(v), true);
      break;
    case DataType.F32:
      dv.setFloat32(off, Number(v), true);
      break;
    case DataType.F64:
      dv.setFloat64(off, Number(v), true);
      break;
  }
}

function writeDict(off: number, entries: readonly _AttrEntry[]): number {
  dv.setUint32(off, entries.length, true);
  dv.setUint32(off + 4, 0, true);
  off += 8;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    dv.setUint32(off, e.type, true);
    dv.setUint32(off + 4, e.nameLen, true);
    off = writeText(off + 8, e.name, e.nameBytes);
    switch (e.type) {
      case AttrType.SCALAR:
        dv.setUint32(off, e.dtype, true);
        dv.setUint32(off + 4, 0, true);
        dv.setFloat64(off + 8, 0, true);
        writeScalar(off + 8, e.dtype, e.value);
        off += 16;
        break;
      case AttrType.ARRAY: {
        const vs = e.values!;
        const w = _attrWidth(e.dtype);
        dv.setUint32(off, e.dtype, true);
        dv.setUint32(off + 4, vs.length, true);
        off += 8;
        if (_sameTyped(vs, e.dtype)) {
          // Bytes as they are: an element read into a JS number would quiet a signalling NaN.
          // (A view with no bytes left, its buffer detached, has no elements to copy.)
          if (vs.byteLength > 0) {
            u8.set(new Uint8Array(vs.buffer, vs.byteOffset, vs.byteLength), off);
          }
        } else {
          for (let k = 0; k < vs.length; k++) writeScalar(off + k * w, e.dtype, vs[k]!);
        }
        off += (vs.length * w + 7) & ~7;
        break;
      }
      case AttrType.STRING:
        dv.setUint32(off, e.strLen, true);
        dv.setUint32(off + 4, 0, true);
        off = writeText(off + 8, e.str, e.strBytes);
        break;
      case AttrType.DICTIONARY:
        off = writeDict(off, e.dict!);
        break;
    }
  }
  return off;
}

function writeBuffer(off: number, b: BufferEntry): number {
  dv.setUint32(off, b.dtype, true);
  dv.setUint32(off + 4, b.dims.length, true);
  dv.setFloat64(off + 8, b.address, true);
  off += 16;
  for (let i = 0; i < b.dims.length; i++) {
    const d = b.dims[i]!; // a non-negative safe integer (checked when added)
    dv.setUint32(off, d >>> 0, true);
    dv.setUint32(off + 4, Math.floor(d / 4294967296), true);
    off += 8;
  }
  return off;
}

/**
 * Options of {@link CallFrameBuilder}.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder, type CallFrameBuilderOptions } from "@deno-xla/ffi";
 * const options: CallFrameBuilderOptions = { guard: true };
 * using frame = new CallFrameBuilder(options).ret(new Float32Array(2)).build();
 * console.log(frame.guarded); // true
 * ```
 */
export interface CallFrameBuilderOptions {
  /**
   * Guard the frame's buffers (host memory only): every argument and result
   * lives in guard memory of its own during the call, between canary bytes
   * before and after it, and each argument is compared with the caller's
   * data after every call, so that a handler writing before an operand's
   * start, past its end or into an argument fails with an FfiError
   * DATA_LOSS naming the handler, the operand and the byte offset from the
   * operand's first byte (negative before it). Data is copied in before the
   * call and results back after it. An argument that is the same memory as
   * a result (an input-output alias) shares that result's guard memory: the
   * handler sees one address and may update it in place. In an isolated
   * library's process the guard is an inaccessible page before and after
   * each operand and read-only arguments: the write faults where it
   * happens. See docs/faults.md.
   */
  guard?: boolean;
}

/**
 * Builds call frames for the embedded runtime, as XLA's `CallFrameBuilder`:
 * buffer and token arguments and results, and attributes (sorted by name at
 * build time, recursively, byte-wise as XLA does).
 *
 * @example
 * ```ts
 * import { CallFrameBuilder, DataType, scalar } from "@deno-xla/ffi";
 * const x = new Float32Array([1, 2, 3, 4]);
 * const y = new Float32Array(4);
 * using frame = new CallFrameBuilder()
 *   .arg(x, [2, 2])
 *   .ret(y, [2, 2])
 *   .attr("alpha", scalar(DataType.F32, 0.5))
 *   .attr("mode", "reflect")
 *   .build();
 * console.log(frame.numArgs, frame.numRets); // 1 1
 * ```
 */
export class CallFrameBuilder {
  #args: BufferEntry[] = [];
  #rets: BufferEntry[] = [];
  #attrs: _AttrEntry[] = [];
  #size = 16;
  #guard: boolean;

  /**
   * A builder; `{ guard: true }` guards the frames it builds
   * ({@link CallFrameBuilderOptions.guard}).
   *
   * @example
   * ```ts
   * import { CallFrameBuilder } from "@deno-xla/ffi";
   * using frame = new CallFrameBuilder({ guard: true })
   *   .arg(new Float32Array(4))
   *   .ret(new Float32Array(4))
   *   .build();
   * console.log(frame.guarded); // true
   * ```
   */
  constructor(options?: CallFrameBuilderOptions) {
    this.#guard = options?.guard === true;
  }

  /**
   * Adds a buffer argument backed by a typed array (dims default: `[length]`),
   * by an array with its shape (`{ data, shape, dtype }`, an `NpyArray`), or
   * by device memory: a {@link DeviceBuffer} (its dtype and dims) or a
   * {@link DeviceMemory} with `dims` and `dtype`.
   *
   * @example
   * ```ts
   * import { CallFrameBuilder, DataType } from "@deno-xla/ffi";
   * using frame = new CallFrameBuilder()
   *   .arg(new Float32Array([1, 2, 3, 4]), [2, 2])
   *   .arg({ data: new Float32Array([1, 0, 0, 1]), shape: [2], dtype: DataType.C64 }) // 1+0i, 0+1i
   *   .build();
   * console.log(frame.numArgs); // 2
   * ```
   */
  arg(
    data: BufferData | DeviceData | ArrayInput,
    dims?: readonly number[],
    dtype?: DataType,
  ): this {
    const b = bufferEntry(data, dims, dtype, `argument ${this.#args.length}`);
    this.#args.push(b);
    this.#size += 16 + 8 * b.dims.length;
    return this;
  }

  /** Adds a buffer argument at a native (host or device) address. */
  argPointer(data: Address, dtype: DataType, dims: readonly number[]): this {
    const what = `argument ${this.#args.length}`;
    const address = addressValue(data, what);
    _checkShape(dtype, dims, what);
    this.#args.push({ dtype, dims: [...dims], address, keep: null });
    this.#size += 16 + 8 * dims.length;
    return this;
  }

  /** Adds a token argument (dtype TOKEN, no data, rank 0). */
  tokenArg(): this {
    this.#args.push(TOKEN);
    this.#size += 16;
    return this;
  }

  /**
   * Adds a buffer result backed by a typed array, an array with its shape or
   * device memory (as {@link arg}). Dims default to `[length]`: a rank-0
   * result needs `[]` (`ret(out, [])`, or `{ data: out, shape: [] }`).
   */
  ret(
    data: BufferData | DeviceData | ArrayInput,
    dims?: readonly number[],
    dtype?: DataType,
  ): this {
    const b = bufferEntry(data, dims, dtype, `result ${this.#rets.length}`);
    this.#rets.push(b);
    this.#size += 16 + 8 * b.dims.length;
    return this;
  }

  /** Adds a buffer result at a native (host or device) address. */
  retPointer(data: Address, dtype: DataType, dims: readonly number[]): this {
    const what = `result ${this.#rets.length}`;
    const address = addressValue(data, what);
    _checkShape(dtype, dims, what);
    this.#rets.push({ dtype, dims: [...dims], address, keep: null });
    this.#size += 16 + 8 * dims.length;
    return this;
  }

  /** Adds a token result. */
  tokenRet(): this {
    this.#rets.push(TOKEN);
    this.#size += 16;
    return this;
  }

  /**
   * Adds an attribute; a duplicate name is an error. A plain JS number
   * becomes an S64 scalar when it is an integer and an F64 one otherwise
   * (`number[]` likewise), a boolean PRED, a bigint S64. A handler that binds
   * another type (e.g. `f32`) rejects those ("Wrong scalar data type: expected
   * F32 but got S64"): give the type with {@link scalar} / {@link array}
   * (`attr("alpha", scalar(DataType.F32, 2))`), a typed array, or `dtype`
   * (`attr("alpha", 2, DataType.F32)`).
   *
   * @example
   * ```ts
   * import { CallFrameBuilder, DataType, scalar } from "@deno-xla/ffi";
   * using frame = new CallFrameBuilder()
   *   .attr("alpha", scalar(DataType.F32, 2)) // F32, as a handler binding attr("alpha", "f32") wants
   *   .attr("n", 3) // S64
   *   .attr("axes", new Int32Array([0, 2])) // S32 array
   *   .build();
   * ```
   */
  attr(name: string, value: AttrInput, dtype?: DataType): this {
    const attrs = this.#attrs;
    for (let i = 0; i < attrs.length; i++) {
      if (attrs[i]!.name === name) bad(`Duplicate attribute name '${name}'`);
    }
    const e = _makeEntry(name, value, dtype);
    attrs.push(e);
    this.#size += e.size;
    return this;
  }

  /**
   * Adds every entry of a dictionary (a plain object or a `Map`) as an
   * attribute; anything else is an FfiError INVALID_ARGUMENT.
   */
  attrs(dict: AttrDictionary): this {
    if (!_isDictionary(dict)) {
      bad(`attrs must be a dictionary (an object or a Map), got ${shown(dict)}`);
    }
    const entries = dict instanceof Map
      ? [...(dict as ReadonlyMap<string, AttrInput>)]
      : Object.entries(dict as { [k: string]: AttrInput });
    for (const [k, v] of entries) this.attr(k, v);
    return this;
  }

  /** Lays the frame out natively; the result owns that memory. */
  build(): CallFrame {
    atMost(this.#args.length, MAX_OPERANDS, "arguments");
    atMost(this.#rets.length, MAX_OPERANDS, "results");
    atMost(this.#attrs.length, _ATTR_LIMITS.entries, "attributes");
    const guard = this.#guard ? this.#makeGuard() : null;
    // A guarded frame's operands are the guard's shadows (tokens have none).
    const shadowed = (kind: 0 | 1) => (b: BufferEntry, i: number) =>
      b.dtype === DataType.TOKEN ? b : { ...b, address: guard!.guard.address(kind, i) };
    const args = guard === null ? this.#args : this.#args.map(shadowed(0));
    const rets = guard === null ? this.#rets : this.#rets.map(shadowed(1));
    const off = _describe(args, rets, this.#attrs, this.#size);
    const ptr = native().xla_ffi_deno_runtime_frame_build(u8, off);
    if (ptr === null) {
      guard?.guard.close();
      throw new FfiError(ErrorCode.INTERNAL, "Laying out the call frame failed");
    }
    const keepArgs: unknown[] = new Array(this.#args.length);
    for (let i = 0; i < this.#args.length; i++) keepArgs[i] = this.#args[i]!.keep;
    const keepRets: unknown[] = new Array(this.#rets.length);
    for (let i = 0; i < this.#rets.length; i++) keepRets[i] = this.#rets[i]!.keep;
    const frame = new CallFrame(ptr, keepArgs, keepRets, _implicitAttrs(this.#attrs));
    frame._spec = {
      args: this.#args.slice(),
      rets: this.#rets.slice(),
      attrs: this.#attrs.slice(),
    };
    frame._sizes(this.#args, this.#rets);
    if (guard !== null) {
      guard.bind(frame);
      frame._guard = guard.guard;
      frame._relinkGuard();
    }
    return frame;
  }

  /** The guard of a frame about to be built; `bind` gives it the frame whose data it reads. */
  #makeGuard(): { guard: _FrameGuard; bind(frame: CallFrame): void } {
    let target: CallFrame | undefined;
    const operand = (b: BufferEntry, kind: 0 | 1, i: number, what: string): _GuardOperand => {
      if (b.keep instanceof DeviceBuffer || b.keep instanceof DeviceMemory) {
        bad(`${what}: a guarded frame takes host memory, not device memory`);
      }
      const size = b.dtype === DataType.TOKEN ? 0 : _bufferBytes(b.dtype, b.dims, what);
      return {
        size,
        bytes: () => target!._bytesOf(kind, i, size),
        region: () => _regionOf(target!._data(kind, i)),
      };
    };
    const guard = new _FrameGuard(
      this.#args.map((b, i) => operand(b, 0, i, `argument ${i}`)),
      this.#rets.map((b, i) => operand(b, 1, i, `result ${i}`)),
    );
    return { guard, bind: (frame) => target = frame };
  }
}

/**
 * @internal The memory host data is (its ArrayBuffer or native address, and
 * the byte offset in it), to tell an argument that is a result's memory (an
 * input-output alias); null for none or device memory.
 */
export function _regionOf(data: unknown): readonly [unknown, number] | null {
  if (data === null || data === undefined) return null;
  if (ArrayBuffer.isView(data)) {
    // A DataView over a detached or shrunk buffer throws from byteOffset; the
    // call refuses it anyway (CallFrame._checkHost), so where it was matters not.
    let offset = 0;
    try {
      offset = data.byteOffset;
    } catch { /* offset 0 */ }
    return [data.buffer, offset];
  }
  if (data instanceof DeviceBuffer || data instanceof DeviceMemory) return null;
  const a = toAddress(data as Address);
  return a === 0 ? null : [a, 0];
}

/**
 * @internal Writes a frame description (xla_ffi_deno_runtime_frame_build's input) into the
 * shared scratch buffer and returns its length; read it with {@link _scratch}.
 */
export function _describe(
  args: readonly BufferEntry[],
  rets: readonly BufferEntry[],
  attrs: readonly _AttrEntry[],
  size: number,
): number {
  ensure(size);
  dv.setUint32(0, args.length, true);
  dv.setUint32(4, rets.length, true);
  let off = 8;
  for (let i = 0; i < args.length; i++) off = writeBuffer(off, args[i]!);
  for (let i = 0; i < rets.length; i++) off = writeBuffer(off, rets[i]!);
  return writeDict(off, attrs);
}

/** @internal The scratch buffer {@link _describe} wrote into. */
export function _scratch(): Uint8Array {
  return u8;
}

/** @internal The description size of a frame's operands and attributes (an upper bound). */
export function _describedSize(
  args: readonly BufferEntry[],
  rets: readonly BufferEntry[],
  attrs: readonly _AttrEntry[],
): number {
  let n = 16;
  for (const b of args) n += 16 + 8 * b.dims.length;
  for (const b of rets) n += 16 + 8 * b.dims.length;
  for (const a of attrs) n += a.size;
  return n;
}

/** Frees the native frame of a CallFrame collected without close(). */
function freeFrame(ptr: Deno.PointerObject): void {
  native().xla_ffi_deno_runtime_frame_free(ptr);
}

/**
 * A native `XLA_FFI_CallFrame` with everything it points to, in one
 * allocation. Buffer pointers can be swapped for the next call. A frame
 * collected without {@link close} is freed then; its `pointer` is valid only
 * while the frame is reachable and open.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder } from "@deno-xla/ffi";
 * using frame = new CallFrameBuilder().arg(new Float32Array(2)).ret(new Float32Array(2)).build();
 * frame.setArg(0, new Float32Array([5, 6]));
 * ```
 */
export class CallFrame {
  /** @internal native `xrt_frame*` (its first member is the XLA_FFI_CallFrame). */
  _ptr: Deno.PointerObject | null;
  /** @internal whether the frame's context differs from the defaults. */
  _dirty = false;
  /** @internal calls in flight. */
  _inflight = 0;
  /** @internal buffers backed by host typed arrays (non-empty). */
  _hostBuffers = 0;
  /** @internal buffers backed by device memory. */
  _deviceBuffers = 0;
  /** @internal attributes typed from plain JS numbers (for error hints). */
  readonly _implicitAttrs: _ImplicitAttr[];
  /** @internal the canary checks of a guarded frame (null: not guarded). */
  _guard: _FrameGuard | null = null;
  /** @internal the builder's operands and attributes (to describe the frame again elsewhere). */
  _spec: { args: BufferEntry[]; rets: BufferEntry[]; attrs: _AttrEntry[] } | null = null;
  #keepArgs: unknown[];
  #keepRets: unknown[];
  /** The typed array of each argument, then of each result (null: other data). */
  #views: (ArrayBufferView | null)[];
  /** Where each argument's, then result's, data lives as counted ({@link placementOf}). */
  #placed: Uint8Array;
  /**
   * The native address of each argument, then result, as {@link _rebind}
   * last wrote it (null: unknown, as after any other change of an operand).
   */
  #rebound: number[] | null = null;
  /** Bytes each argument's, then result's, data must hold (0: a token or an empty buffer). */
  #need: number[] = [];
  /** Number of arguments. */
  readonly numArgs: number;
  /** Number of results. */
  readonly numRets: number;

  /** @internal use {@link CallFrameBuilder.build}. */
  constructor(
    ptr: Deno.PointerObject,
    keepArgs: unknown[],
    keepRets: unknown[],
    implicitAttrs: _ImplicitAttr[] = [],
  ) {
    this._ptr = ptr;
    this._implicitAttrs = implicitAttrs;
    this.#keepArgs = keepArgs;
    this.#keepRets = keepRets;
    this.numArgs = keepArgs.length;
    this.numRets = keepRets.length;
    this.#placed = new Uint8Array(keepArgs.length + keepRets.length);
    keepArgs.forEach((k, i) => this.#place(i, k));
    keepRets.forEach((k, i) => this.#place(keepArgs.length + i, k));
    this.#views = [...keepArgs, ...keepRets].map((k) => ArrayBuffer.isView(k) ? k : null);
    _register(this, "CallFrame", freeFrame, ptr);
  }

  /** @internal Records the operands' sizes (the builder's, after {@link build}). */
  _sizes(args: readonly BufferEntry[], rets: readonly BufferEntry[]): void {
    const bytes = (b: BufferEntry) =>
      b.dtype === DataType.TOKEN ? 0 : _bufferBytes(b.dtype, b.dims, "");
    this.#need = [...args.map(bytes), ...rets.map(bytes)];
  }

  /**
   * @internal Before a call of a frame with host buffers: FfiError
   * INVALID_ARGUMENT naming the first typed array or DataView that no longer
   * holds its bytes (its ArrayBuffer detached or shrunk since it entered the
   * frame), which the call would otherwise read and write after it was
   * freed. Allocates nothing.
   */
  _checkHost(): void {
    const i = this.#lostAt();
    if (i >= 0) throw _lostData(this.#views[i]!, this.#need[i]!, this.#operand(i));
  }

  /** The first operand whose typed array no longer holds its bytes (detached or shrunk), or -1. */
  #lostAt(): number {
    const views = this.#views, need = this.#need;
    for (let i = 0; i < views.length; i++) {
      const v = views[i]!;
      if (v !== null && _viewBytes(v) < need[i]!) return i;
    }
    return -1;
  }

  /** "argument i" or "result i" of operand `k` (arguments, then results). */
  #operand(k: number): string {
    return k < this.numArgs ? `argument ${k}` : `result ${k - this.numArgs}`;
  }

  /**
   * @internal Keeps the memory of the frame's typed arrays alive while a
   * call of it is in flight, whatever JS code that runs meanwhile does to
   * them (a transfer detaches an array and may free its memory under the
   * call). Deno keeps the buffer arguments of a nonblocking FFI call alive
   * until it returns: with `carried`, the first eight arrays are returned in
   * `views` for the call's own nonblocking call to take; the others (all of
   * them without `carried`) are held by one nonblocking
   * `xla_ffi_deno_gate_hold` per eight, which returns once `release` is
   * called (after the call ended). Arrays over a SharedArrayBuffer (never
   * detached) are not held; none is over a resizable ArrayBuffer (a frame
   * refuses one, {@link _checkView}; a nonblocking call would too).
   */
  _hold(carried: boolean): { views: HeldViews; release: (() => void) | null } {
    const sym = native();
    const first: (ArrayBufferView | null)[] = [];
    const group: (ArrayBufferView | null)[] = [];
    let gate: Deno.PointerObject | null = null;
    const views = this.#views;
    for (let i = 0; i <= views.length; i++) {
      const v = i < views.length ? views[i]! : null;
      if (v !== null && holdable(v)) (carried && first.length < 8 ? first : group).push(v);
      if (group.length === 0 || (group.length < 8 && i < views.length)) continue;
      gate ??= sym.xla_ffi_deno_gate_new();
      if (gate === null) break; // out of memory: the rest is not held, as before
      while (group.length < 8) group.push(null);
      sym.xla_ffi_deno_gate_enter(gate);
      try {
        sym.xla_ffi_deno_gate_hold(gate, ...(group as unknown as HeldViews)).catch(() => {});
      } catch {
        sym.xla_ffi_deno_gate_leave(gate);
      }
      group.length = 0;
    }
    while (first.length < 8) first.push(null);
    const g = gate;
    return {
      views: first as unknown as HeldViews,
      release: g === null ? null : () => sym.xla_ffi_deno_gate_close(g),
    };
  }

  /**
   * @internal After a call in flight ended: INVALID_ARGUMENT naming the
   * first typed array JS code detached or shrank while it ran (its data is
   * lost to the caller; the call's reads and writes went to memory
   * {@link _hold} kept alive), else undefined.
   */
  _lostDuringCall(): FfiError | undefined {
    // No XLA counterpart: XLA's buffers belong to the executable for the whole call (the call
    // frame xla/ffi/call_frame.cc builds points at device memory it keeps alive until the call and
    // its future are done); only this runtime's frames point at JS arrays code may detach.
    const i = this.#lostAt();
    if (i < 0) return undefined;
    const v = this.#views[i]!, what = this.#operand(i);
    return new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      _isDetached(v)
        ? `${what}: its ArrayBuffer was detached (transferred) while the call ran; the call ` +
          `read and wrote its old memory, and its data is lost`
        : `${what}: its data shrank to ${_viewBytes(v)} bytes while the call ran, which needs ` +
          `${this.#need[i]}; its data is lost`,
    );
  }

  /**
   * New data for operand `i` (kind 0: argument, 1: result): a typed array
   * that is not detached, device memory or a valid address
   * ({@link checkOperandData}), host memory of the operand's size in a
   * guarded frame, and holding the frame's bytes for it, as the builder
   * checked ({@link _checkDataSize}). Changes nothing.
   */
  #checkData(kind: 0 | 1, i: number, data: unknown, what: string): void {
    checkOperandData(data, what);
    if (this._guard !== null) {
      this.#guardedData(data, (kind === 0 ? this._guard.args : this._guard.rets)[i]!.size, what);
    }
    const e = this._spec === null ? undefined : (kind === 0 ? this._spec.args : this._spec.rets)[i];
    if (e === undefined || e.dtype === DataType.TOKEN) return;
    if (ArrayBuffer.isView(data)) _checkDataSize(e.dtype, e.dims, _viewBytes(data), "array", what);
    else if (data instanceof DeviceBuffer) {
      _checkDataSize(e.dtype, e.dims, data.memory.bytes, "device buffer", what);
    } else if (data instanceof DeviceMemory) {
      _checkDataSize(e.dtype, e.dims, data.bytes, "device memory", what);
    }
  }

  /** Counts operand `k`'s (arguments, then results) new data in place of its old one. */
  #place(k: number, data: unknown): void {
    const old = this.#placed[k]!;
    if (old === 1) this._hostBuffers--;
    else if (old === 2) this._deviceBuffers--;
    const p = placementOf(data);
    if (p === 1) this._hostBuffers++;
    else if (p === 2) this._deviceBuffers++;
    this.#placed[k] = p;
  }

  /**
   * @internal "argument i"/"result i" of the first buffer in host (`true`) or
   * device memory, for error messages.
   */
  _firstPlaced(host: boolean): string {
    const want = host ? 1 : 2;
    for (let i = 0; i < this.#keepArgs.length; i++) {
      if (placementOf(this.#keepArgs[i]) === want) return `argument ${i}`;
    }
    for (let i = 0; i < this.#keepRets.length; i++) {
      if (placementOf(this.#keepRets[i]) === want) return `result ${i}`;
    }
    return "a buffer";
  }

  /** Whether the frame was built with `{ guard: true }` ({@link CallFrameBuilderOptions.guard}). */
  get guarded(): boolean {
    return this._guard !== null;
  }

  /** @internal The data buffer `i` (kind 0: argument, 1: result) holds now. */
  _data(kind: 0 | 1, i: number): unknown {
    return kind === 0 ? this.#keepArgs[i] : this.#keepRets[i];
  }

  /**
   * @internal The `size` bytes of host buffer `i` (kind 0: argument, 1:
   * result) as they are now, or null for a token or a null address.
   */
  _bytesOf(kind: 0 | 1, i: number, size: number): Uint8Array | null {
    const d = this._data(kind, i);
    if (size === 0 || d === null || d === undefined) return null;
    if (ArrayBuffer.isView(d)) return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
    if (d instanceof DeviceBuffer || d instanceof DeviceMemory) return null;
    const a = toAddress(d as Address);
    if (a === 0) return null;
    const p = Deno.UnsafePointer.create(BigInt(a))!;
    return new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(p, size));
  }

  /** The `XLA_FFI_CallFrame*` (valid until {@link close}). */
  get pointer(): Deno.PointerObject {
    return this._live();
  }

  /** @internal */
  _live(): Deno.PointerObject {
    if (this._ptr === null) {
      throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The call frame is closed");
    }
    return this._ptr;
  }

  #idle(): void {
    if (this._inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The call frame is used by ${this._inflight} call(s) in flight; await them first`,
      );
    }
  }

  /**
   * Points argument `i` (an integer in `[0, numArgs)`) at new data: a typed
   * array, device memory or an {@link Address}. A typed array must hold
   * exactly the argument's bytes and not be detached, device memory at least
   * that many bytes (as the builder checks), an address be null, a pointer,
   * a bigint or a safe integer >= 0: FfiError INVALID_ARGUMENT naming the
   * argument otherwise, and the frame is left as it was.
   */
  setArg(i: number, data: BufferData | DeviceData | Address): void {
    this.#index(i, this.numArgs, "Argument");
    this.#idle();
    this.#checkData(0, i, data, `argument ${i}`);
    this.#apply(0, i, data);
    if (this._guard !== null) this._relinkGuard();
  }

  /** Points result `i` at new data, checked as {@link setArg} checks it. */
  setRet(i: number, data: BufferData | DeviceData | Address): void {
    this.#index(i, this.numRets, "Result");
    this.#idle();
    this.#checkData(1, i, data, `result ${i}`);
    this.#apply(1, i, data);
    if (this._guard !== null) this._relinkGuard();
  }

  /** FfiError INVALID_ARGUMENT unless `i` is an operand index: an integer in [0, n). */
  #index(i: unknown, n: number, what: "Argument" | "Result"): void {
    if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= n) {
      bad(
        `${what} index ${shown(i)} out of range [0, ${n}) (the frame has ${n} ` +
          `${what === "Argument" ? "argument" : "result"}${n === 1 ? "" : "s"})`,
      );
    }
  }

  /** Points operand `i` (kind 0: argument, 1: result) at data checked by {@link #checkData}. */
  #apply(kind: 0 | 1, i: number, data: unknown): void {
    const ptr = this._live();
    this.#rebound = null;
    // A guarded frame's native operand stays the guard's shadow: the data is copied per call.
    if (this._guard === null) {
      const address = toAddress(data as BufferData | DeviceData | Address);
      if (kind === 0) native().xla_ffi_deno_runtime_frame_set_arg(ptr, i, address);
      else native().xla_ffi_deno_runtime_frame_set_ret(ptr, i, address);
    }
    const k = kind === 0 ? i : this.numArgs + i;
    if (kind === 0) this.#keepArgs[i] = data;
    else this.#keepRets[i] = data;
    this.#views[k] = ArrayBuffer.isView(data) ? data : null;
    this.#place(k, data);
  }

  /**
   * @internal A guarded frame's arguments that are now the same memory as a
   * result share that result's shadow (an input-output alias), the others
   * have their own.
   */
  _relinkGuard(): void {
    const ptr = this._live();
    this.#rebound = null;
    this._guard?.relink((i, address) =>
      native().xla_ffi_deno_runtime_frame_set_arg(ptr, i, address)
    );
  }

  /** A guarded frame's new data: host memory of the operand's size. */
  #guardedData(data: unknown, size: number, what: string): void {
    if (data instanceof DeviceBuffer || data instanceof DeviceMemory) {
      bad(`${what}: a guarded frame takes host memory, not device memory`);
    }
    if (ArrayBuffer.isView(data) && _viewBytes(data) !== size) {
      bad(
        `${what}: a guarded frame's buffer keeps its size (${size} bytes), got ${_viewBytes(data)}`,
      );
    }
  }

  /**
   * @internal A frame `ffiCall` keeps per signature: points every operand at
   * new host arrays. The caller checked them (each holds its operand's bytes
   * and is readable) and that the frame is not guarded and idle. An argument
   * on a resizable ArrayBuffer is pointed at a copy of its bytes, as
   * `ffiCall`'s checks of its arguments copy it ({@link _pinnedBytes}); the
   * results are `ffiCall`'s own arrays, never resizable. `reuse`:
   * the handler about to be called cannot write the frame's own fields (a TS
   * handler reads a copy), so an operand already at its address need not be
   * written again; a native handler could have overwritten a buffer's data
   * pointer, so for one every address is written, as XLA writes them for
   * each execution (xla/ffi/call_frame.h: `CallFrame::UpdateWithBuffers` and
   * `CopyWithBuffers` keep a custom call's frame across executions and set
   * every argument's and result's data pointer each time).
   */
  _rebind(
    args: readonly ArrayBufferView[],
    rets: readonly ArrayBufferView[],
    reuse: boolean,
  ): void {
    const ptr = this._live();
    const sym = native();
    const n = this.numArgs;
    // A loop passes the same arrays again: an operand already at its address is not written.
    const at = reuse ? this.#rebound ??= new Array<number>(n + this.numRets).fill(-1) : null;
    if (at === null) this.#rebound = null;
    // Every operand is rebound, each to a host array of its bytes: placed in host memory when it
    // has any (what #place would count, without its tests).
    const keepArgs = this.#keepArgs, keepRets = this.#keepRets, views = this.#views;
    const placed = this.#placed, need = this.#need;
    let host = 0;
    for (let i = 0; i < args.length; i++) {
      // An argument on a resizable ArrayBuffer, which JS code could shrink under a call in flight,
      // is read from a copy (ffiCall's arguments are inputs only); one property read for the rest.
      let a = args[i]!;
      let buf = a.buffer; // read once: a typed array's buffer getter is most of an address's cost
      if ((buf as ArrayBuffer).resizable === true) {
        a = _pinnedBytes(a);
        buf = a.buffer;
      }
      const address = addressIn(buf, a);
      if (at === null || at[i] !== address) {
        sym.xla_ffi_deno_runtime_frame_set_arg(ptr, i, address);
        if (at !== null) at[i] = address;
      }
      keepArgs[i] = a;
      views[i] = a;
      const p = need[i]! > 0 ? 1 : 0;
      placed[i] = p;
      host += p;
    }
    for (let i = 0; i < rets.length; i++) {
      const r = rets[i]!;
      const address = _addressOf(r);
      if (at === null || at[n + i] !== address) {
        sym.xla_ffi_deno_runtime_frame_set_ret(ptr, i, address);
        if (at !== null) at[n + i] = address;
      }
      keepRets[i] = r;
      views[n + i] = r;
      const p = need[n + i]! > 0 ? 1 : 0;
      placed[n + i] = p;
      host += p;
    }
    this._hostBuffers = host;
    this._deviceBuffers = 0;
  }

  /**
   * @internal After a call of a kept frame: lets go of the caller's arrays
   * (the native operands keep stale addresses until the next
   * {@link _rebind}, and no call is made before it).
   */
  _release(): void {
    // Every operand's data is null now: nothing is placed in host or device memory. Loops, not
    // fill: a frame has a few operands, and each fill is a call into the runtime (about 17 ns).
    const keepArgs = this.#keepArgs, keepRets = this.#keepRets, views = this.#views;
    const placed = this.#placed;
    for (let i = 0; i < keepArgs.length; i++) keepArgs[i] = null;
    for (let i = 0; i < keepRets.length; i++) keepRets[i] = null;
    for (let i = 0; i < views.length; i++) {
      views[i] = null;
      placed[i] = 0;
    }
    this._hostBuffers = 0;
    this._deviceBuffers = 0;
  }

  /**
   * Swaps all buffer pointers at once (XLA's `UpdateWithBuffers`): `args`
   * and `rets` are arrays of one new buffer per argument and per result.
   * Each new buffer is checked as {@link setArg} checks it before any is
   * swapped: a bad one (or a list that is not an array of the frame's
   * length) is an FfiError INVALID_ARGUMENT and leaves the frame as it was.
   */
  updateBuffers(
    args: readonly (BufferData | DeviceData | Address)[],
    rets: readonly (BufferData | DeviceData | Address)[],
  ): void {
    if (!Array.isArray(args)) {
      bad(`updateBuffers: the arguments must be an array of buffers, got ${shown(args)}`);
    }
    if (!Array.isArray(rets)) {
      bad(`updateBuffers: the results must be an array of buffers, got ${shown(rets)}`);
    }
    if (args.length !== this.numArgs) {
      bad(`Invalid number of updated arguments: ${args.length} vs ${this.numArgs}`);
    }
    if (rets.length !== this.numRets) {
      bad(`Invalid number of updated results: ${rets.length} vs ${this.numRets}`);
    }
    this.#idle();
    // Every buffer is checked before any is swapped: a bad one changes nothing.
    for (let i = 0; i < args.length; i++) this.#checkData(0, i, args[i], `argument ${i}`);
    for (let i = 0; i < rets.length; i++) this.#checkData(1, i, rets[i], `result ${i}`);
    this._live();
    for (let i = 0; i < args.length; i++) this.#apply(0, i, args[i]);
    for (let i = 0; i < rets.length; i++) this.#apply(1, i, rets[i]);
    if (this._guard !== null) this._relinkGuard();
  }

  /** Frees the native frame. Fails while a call using it is in flight. */
  close(): void {
    if (this._ptr === null) return;
    if (this._inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The call frame is used by ${this._inflight} call(s) in flight; await them before close()`,
      );
    }
    _unregister(this);
    native().xla_ffi_deno_runtime_frame_free(this._ptr);
    this._ptr = null;
    this._guard?.close();
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
