/**
 * Kernel launches: typed scalar arguments, the reused argument block
 * (`void** kernelParams`), launch configuration and {@link launch}.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _check, _driverGeneration, _sym } from "./driver.ts";
import { DeviceMemory } from "./memory.ts";
import { _streamHandle, type StreamLike } from "./stream.ts";

/** Kernel parameter types: C scalars and pointers (`T*` is `"pointer"`). */
export type ScalarType =
  | "i8"
  | "u8"
  | "i16"
  | "u16"
  | "i32"
  | "u32"
  | "i64"
  | "u64"
  | "f32"
  | "f64"
  | "pointer";

/**
 * A kernel argument with an explicit C type, made by {@link f32}, {@link i32}
 * and friends.
 *
 * @example
 * ```ts
 * import { Scalar } from "@deno-xla/ffi/cuda";
 * const a = new Scalar("f32", 2.5);
 * console.log(a.type, a.value); // f32 2.5
 * ```
 */
export class Scalar {
  /** The C type. */
  readonly type: ScalarType;
  /** The value (bigint for 64-bit integers and pointers, or a number). */
  readonly value: number | bigint;

  /** A value of C type `type`. */
  constructor(type: ScalarType, value: number | bigint) {
    this.type = type;
    this.value = value;
  }
}

/**
 * A `float` kernel argument.
 *
 * @example
 * ```ts
 * import { f32 } from "@deno-xla/ffi/cuda";
 * console.log(f32(1.5).type); // "f32"
 * ```
 */
export function f32(value: number): Scalar {
  return new Scalar("f32", value);
}

/**
 * A `double` kernel argument.
 *
 * @example
 * ```ts
 * import { f64 } from "@deno-xla/ffi/cuda";
 * console.log(f64(Math.PI).value);
 * ```
 */
export function f64(value: number): Scalar {
  return new Scalar("f64", value);
}

/**
 * An `int` (32-bit) kernel argument.
 *
 * @example
 * ```ts
 * import { i32 } from "@deno-xla/ffi/cuda";
 * console.log(i32(-3).value); // -3
 * ```
 */
export function i32(value: number): Scalar {
  return new Scalar("i32", value);
}

/**
 * An `unsigned int` kernel argument.
 *
 * @example
 * ```ts
 * import { u32 } from "@deno-xla/ffi/cuda";
 * console.log(u32(7).type); // "u32"
 * ```
 */
export function u32(value: number): Scalar {
  return new Scalar("u32", value);
}

/**
 * A `long long` (64-bit) kernel argument.
 *
 * @example
 * ```ts
 * import { i64 } from "@deno-xla/ffi/cuda";
 * console.log(i64(-1n).value); // -1n
 * ```
 */
export function i64(value: number | bigint): Scalar {
  return new Scalar("i64", value);
}

/**
 * An `unsigned long long` / `size_t` kernel argument.
 *
 * @example
 * ```ts
 * import { u64 } from "@deno-xla/ffi/cuda";
 * console.log(u64(1n << 40n).value);
 * ```
 */
export function u64(value: number | bigint): Scalar {
  return new Scalar("u64", value);
}

/**
 * A pointer kernel argument from a device address.
 *
 * @example
 * ```ts
 * import { ptr } from "@deno-xla/ffi/cuda";
 * console.log(ptr(0x7f0000000000n).type); // "pointer"
 * ```
 */
export function ptr(address: bigint | number): Scalar {
  return new Scalar("pointer", address);
}

/**
 * Anything that names device memory by its address: a handler's `FfiBuffer`
 * (`data`, a number), a runtime `DeviceBuffer` or {@link DeviceMemory}
 * (`ptr`, a bigint). Passed to a kernel, it becomes that address.
 */
export type DeviceAddressLike =
  | { readonly data: number | bigint }
  | { readonly ptr: bigint };

/**
 * A kernel argument: a typed {@link Scalar}; {@link DeviceMemory}, a
 * handler's `FfiBuffer` or any {@link DeviceAddressLike} (its device
 * address); a bigint (a 64-bit value or address); a pointer object or
 * `null`; a number or boolean (converted by the kernel's signature).
 */
export type KernelArg =
  | Scalar
  | DeviceMemory
  | DeviceAddressLike
  | bigint
  | number
  | boolean
  | Deno.PointerObject
  | null;

/** One, two or three dimensions; missing ones are 1. */
export type Dim3 = number | readonly [number, number?, number?];

/**
 * How to launch a kernel: grid and block dimensions, dynamic shared memory
 * in bytes (default 0), and the stream (default: the legacy default stream):
 * a `Stream`, or a raw `CUstream` such as the number a TS handler's
 * `.ctx("stream")` receives.
 */
export interface LaunchConfig {
  /** Blocks in the grid. */
  grid: Dim3;
  /** Threads in a block. */
  block: Dim3;
  /** Dynamic shared memory per block, bytes. */
  sharedMem?: number;
  /** The stream to queue the launch on. */
  stream?: StreamLike;
}

const SLOT = 8;
const U32_MAX = 4294967295;

function invalid(message: string): FfiError {
  return new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

function intIn(v: number, lo: number, hi: number, i: number, type: string): number {
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw invalid(`Kernel argument ${i} (${type}) is out of range: ${v}`);
  }
  return v;
}

/**
 * The argument block of a kernel: one 8-byte slot per argument in memory
 * outside the JS heap, and the `void*[]` pointing at the slots. Built once
 * and grown when a launch has more arguments; each launch only writes the
 * values.
 */
export class _ArgPack {
  #signature: readonly ScalarType[] | undefined;
  #capacity = 0;
  #store = new ArrayBuffer(0);
  #view = new DataView(this.#store);
  /** The `void** kernelParams` array. */
  params: BigUint64Array<ArrayBuffer> = new BigUint64Array(0);
  /** Its address, passed to `cuLaunchKernel`. */
  paramsPointer: Deno.PointerValue = null;

  constructor(signature?: readonly ScalarType[]) {
    this.#signature = signature;
    this.#grow(Math.max(16, signature?.length ?? 0));
  }

  #grow(n: number): void {
    const bytes = Math.max(256, n * SLOT);
    this.#store = new ArrayBuffer(bytes);
    this.#view = new DataView(this.#store);
    this.params = new BigUint64Array(new ArrayBuffer(bytes), 0, n);
    const base = Deno.UnsafePointer.value(Deno.UnsafePointer.of(this.#store));
    for (let i = 0; i < n; i++) this.params[i] = base + BigInt(i * SLOT);
    this.paramsPointer = Deno.UnsafePointer.of(this.params);
    this.#capacity = n;
  }

  /** Writes `args` into the slots; throws INVALID_ARGUMENT on a bad argument. */
  pack(args: readonly KernelArg[]): void {
    const sig = this.#signature;
    const n = args.length;
    if (sig && sig.length !== n) {
      throw invalid(`Kernel takes ${sig.length} arguments (${sig.join(", ")}), got ${n}`);
    }
    if (n > this.#capacity) this.#grow(n);
    const view = this.#view;
    for (let i = 0; i < n; i++) {
      const a = args[i];
      const off = i * SLOT;
      const declared = sig ? sig[i]! : undefined;
      if (a instanceof DeviceMemory) {
        if (declared && declared !== "pointer" && declared !== "u64" && declared !== "i64") {
          throw invalid(`Kernel argument ${i} is device memory but the kernel takes ${declared}`);
        }
        view.setBigUint64(off, a.ptr, true);
      } else if (a instanceof Scalar) {
        this.#write(view, off, a.type, a.value, i);
      } else if (typeof a === "number") {
        if (!declared) {
          throw invalid(
            `Kernel argument ${i} is an untyped number (${a}): give the kernel a signature ` +
              `or pass f32(), i32(), … values`,
          );
        }
        this.#write(view, off, declared, a, i);
      } else if (typeof a === "bigint") {
        this.#write(view, off, declared ?? "u64", a, i);
      } else if (typeof a === "boolean") {
        this.#write(view, off, declared ?? "u8", a ? 1 : 0, i);
      } else if (a === null) {
        view.setBigUint64(off, 0n, true);
      } else if (typeof a === "object") {
        view.setBigUint64(off, addressOf(a, i, declared), true);
      } else {
        throw invalid(`Kernel argument ${i} has an unsupported type ${typeof a}`);
      }
    }
  }

  #write(view: DataView, off: number, type: ScalarType, v: number | bigint, i: number): void {
    if (typeof v === "bigint") {
      switch (type) {
        case "i64":
          if (v < -(1n << 63n) || v >= 1n << 63n) {
            throw invalid(`Kernel argument ${i} (i64) is out of range: ${v}`);
          }
          view.setBigInt64(off, v, true);
          return;
        case "u64":
        case "pointer":
          if (v < 0n || v >= 1n << 64n) {
            throw invalid(`Kernel argument ${i} (${type}) is out of range: ${v}`);
          }
          view.setBigUint64(off, v, true);
          return;
        default:
          v = Number(v);
      }
    }
    switch (type) {
      case "f32":
        view.setFloat32(off, v, true);
        return;
      case "f64":
        view.setFloat64(off, v, true);
        return;
      case "i32":
        view.setInt32(off, intIn(v, -2147483648, 2147483647, i, type), true);
        return;
      case "u32":
        view.setUint32(off, intIn(v, 0, U32_MAX, i, type), true);
        return;
      case "i8":
        view.setInt8(off, intIn(v, -128, 127, i, type));
        return;
      case "u8":
        view.setUint8(off, intIn(v, 0, 255, i, type));
        return;
      case "i16":
        view.setInt16(off, intIn(v, -32768, 32767, i, type), true);
        return;
      case "u16":
        view.setUint16(off, intIn(v, 0, 65535, i, type), true);
        return;
      case "i64":
        view.setBigInt64(
          off,
          BigInt(intIn(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, i, type)),
          true,
        );
        return;
      case "u64":
      case "pointer":
        view.setBigUint64(off, BigInt(intIn(v, 0, Number.MAX_SAFE_INTEGER, i, type)), true);
        return;
      default:
        throw invalid(`Kernel argument ${i} has an unknown type ${type as string}`);
    }
  }
}

/**
 * The device address of an object argument: `data` (a handler's FfiBuffer),
 * `ptr` (DeviceBuffer and the like), or a pointer object.
 */
function addressOf(a: object, i: number, declared: ScalarType | undefined): bigint {
  if (declared && declared !== "pointer" && declared !== "u64" && declared !== "i64") {
    throw invalid(`Kernel argument ${i} is an address but the kernel takes ${declared}`);
  }
  if (Object.getPrototypeOf(a) === null) {
    // Pointer objects have no prototype.
    return Deno.UnsafePointer.value(a as Deno.PointerObject);
  }
  const o = a as { data?: unknown; ptr?: unknown };
  const v = o.data !== undefined ? o.data : o.ptr;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "bigint" && v >= 0n && v < 1n << 64n) return v;
  throw invalid(
    `Kernel argument ${i} is an object without a device address: pass a Scalar, ` +
      `DeviceMemory, a buffer (data or ptr), a pointer, a bigint or a number`,
  );
}

function dim(d: Dim3, k: 0 | 1 | 2, what: string): number {
  let v: number | undefined;
  if (typeof d === "number") {
    if (k !== 0) return 1;
    if (d >= 1 && d <= U32_MAX && (d >>> 0) === d) return d;
    v = d;
  } else if (Array.isArray(d)) v = d[k] ?? 1;
  else throw invalid(`${what} must be a number or [x, y?, z?]`);
  if (!Number.isInteger(v) || v < 1 || v > U32_MAX) {
    throw invalid(`${what} dimension ${"xyz"[k]} must be a positive integer, got ${v}`);
  }
  return v;
}

let launchFn: ReturnType<typeof _sym<"cuLaunchKernel">> | undefined;
let launchGeneration = -1;

/** Validates `config`, packs `args` into `pack` and calls `cuLaunchKernel`. */
export function _launch(
  handle: Deno.PointerValue,
  pack: _ArgPack,
  config: LaunchConfig,
  args: readonly KernelArg[],
): void {
  let fn = launchFn;
  if (fn === undefined || launchGeneration !== _driverGeneration) {
    fn = launchFn = _sym("cuLaunchKernel");
    launchGeneration = _driverGeneration;
  }
  const gx = dim(config.grid, 0, "grid");
  const gy = dim(config.grid, 1, "grid");
  const gz = dim(config.grid, 2, "grid");
  const bx = dim(config.block, 0, "block");
  const by = dim(config.block, 1, "block");
  const bz = dim(config.block, 2, "block");
  const shared = config.sharedMem ?? 0;
  if (!Number.isInteger(shared) || shared < 0 || shared > U32_MAX) {
    throw invalid(`sharedMem must be a non-negative integer byte count, got ${shared}`);
  }
  const stream = _streamHandle(config.stream);
  pack.pack(args);
  _check(
    fn(handle, gx, gy, gz, bx, by, bz, shared, stream, pack.paramsPointer, null),
    "cuLaunchKernel",
  );
}
