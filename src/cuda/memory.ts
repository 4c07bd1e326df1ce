/**
 * Device memory: allocation (synchronous and stream-ordered), copies
 * host↔device and device↔device, memset.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _check, _closedError, _out64, _sym } from "./driver.ts";
import { _streamHandle, type StreamLike } from "./stream.ts";

/** Host memory a copy reads or writes: any typed array, DataView or ArrayBuffer. */
export type HostBuffer = ArrayBufferView | ArrayBuffer;

function byteSize(bytes: number, what: string): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${what} must be a non-negative integer byte count, got ${bytes}`,
    );
  }
  return bytes;
}

/**
 * A device allocation (`CUdeviceptr` + size). `close()` frees it
 * (`cuMemFree`); {@link DeviceMemory.freeAsync} frees it in stream order.
 * Methods with a `stream` are asynchronous: the host memory they read or
 * write must stay alive and untouched until the stream is synchronised.
 *
 * @example
 * ```ts ignore
 * import { DeviceMemory, init } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * using mem = DeviceMemory.alloc(16);
 * mem.copyFromHost(new Float32Array([1, 2, 3, 4]));
 * const back = new Float32Array(4);
 * mem.copyToHost(back);
 * ```
 */
export class DeviceMemory {
  /** Size in bytes. */
  readonly bytes: number;
  #ptr: bigint;
  #closed = false;

  private constructor(ptr: bigint, bytes: number) {
    this.#ptr = ptr;
    this.bytes = bytes;
  }

  /**
   * Allocates `bytes` bytes in the current context (`cuMemAlloc`).
   *
   * @example
   * ```ts ignore
   * import { DeviceMemory, init } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using mem = DeviceMemory.alloc(1 << 20);
   * ```
   */
  static alloc(bytes: number): DeviceMemory {
    const alloc = _sym("cuMemAlloc_v2");
    byteSize(bytes, "Allocation size");
    _check(alloc(_out64, BigInt(bytes)), "cuMemAlloc_v2");
    return new DeviceMemory(_out64[0]!, bytes);
  }

  /**
   * Allocates in stream order from the device's memory pool
   * (`cuMemAllocAsync`): usable by work queued on `stream` after this call.
   *
   * @example
   * ```ts ignore
   * import { DeviceMemory, init, Stream } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using stream = Stream.create();
   * const mem = DeviceMemory.allocAsync(4096, stream);
   * mem.freeAsync(stream);
   * stream.synchronize();
   * ```
   */
  static allocAsync(bytes: number, stream?: StreamLike): DeviceMemory {
    const alloc = _sym("cuMemAllocAsync");
    byteSize(bytes, "Allocation size");
    _check(alloc(_out64, BigInt(bytes), _streamHandle(stream)), "cuMemAllocAsync");
    return new DeviceMemory(_out64[0]!, bytes);
  }

  /**
   * Wraps memory owned elsewhere (e.g. an XLA buffer's data pointer) as a
   * view; closing it frees nothing.
   *
   * @example
   * ```ts ignore
   * import { DeviceMemory } from "@deno-xla/ffi/cuda";
   * declare const data: bigint; // device address of an XLA buffer
   * const view = DeviceMemory.wrap(data, 1024);
   * ```
   */
  static wrap(ptr: bigint | number, bytes: number): DeviceMemory {
    _sym("cuMemcpyDtoH_v2"); // CUDA must be usable.
    byteSize(bytes, "Size");
    const p = BigInt(ptr);
    if (p < 0n || p >= 1n << 64n) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid device address ${ptr}`);
    }
    const mem = new DeviceMemory(p, bytes);
    mem.#owned = false;
    return mem;
  }

  #owned = true;

  /** The device address; FfiError FAILED_PRECONDITION after close. */
  get ptr(): bigint {
    if (this.#closed) throw _closedError("DeviceMemory");
    return this.#ptr;
  }

  /** Whether closing frees the memory (false for {@link DeviceMemory.wrap}). */
  get owned(): boolean {
    return this.#owned;
  }

  /** Whether `close()` or `freeAsync()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  #range(offset: number, bytes: number, what: string): bigint {
    const p = this.ptr;
    byteSize(offset, "Offset");
    if (offset + bytes > this.bytes) {
      throw new FfiError(
        ErrorCode.OUT_OF_RANGE,
        `${what} of ${bytes} bytes at offset ${offset} exceeds the allocation of ${this.bytes} bytes`,
      );
    }
    return offset === 0 ? p : p + BigInt(offset);
  }

  /** Copies `src` to the device at byte `offset` (`cuMemcpyHtoD`). */
  copyFromHost(src: HostBuffer, offset = 0): void {
    const fn = _sym("cuMemcpyHtoD_v2");
    const dst = this.#range(offset, src.byteLength, "Copy");
    _check(fn(dst, src, BigInt(src.byteLength)), "cuMemcpyHtoD_v2");
  }

  /** Queues a copy of `src` to the device on `stream` (`cuMemcpyHtoDAsync`). */
  copyFromHostAsync(src: HostBuffer, stream: StreamLike, offset = 0): void {
    const fn = _sym("cuMemcpyHtoDAsync_v2");
    const dst = this.#range(offset, src.byteLength, "Copy");
    _check(
      fn(dst, src, BigInt(src.byteLength), _streamHandle(stream)),
      "cuMemcpyHtoDAsync_v2",
    );
  }

  /** Copies device bytes at `offset` into `dst` (`cuMemcpyDtoH`), `dst.byteLength` bytes. */
  copyToHost(dst: HostBuffer, offset = 0): void {
    const fn = _sym("cuMemcpyDtoH_v2");
    const src = this.#range(offset, dst.byteLength, "Copy");
    _check(fn(dst, src, BigInt(dst.byteLength)), "cuMemcpyDtoH_v2");
  }

  /** Queues a copy into `dst` on `stream` (`cuMemcpyDtoHAsync`). */
  copyToHostAsync(dst: HostBuffer, stream: StreamLike, offset = 0): void {
    const fn = _sym("cuMemcpyDtoHAsync_v2");
    const src = this.#range(offset, dst.byteLength, "Copy");
    _check(
      fn(dst, src, BigInt(dst.byteLength), _streamHandle(stream)),
      "cuMemcpyDtoHAsync_v2",
    );
  }

  /**
   * Copies `bytes` (default: all of `src`) from another allocation
   * (`cuMemcpyDtoD`).
   */
  copyFromDevice(src: DeviceMemory, bytes: number = src.bytes): void {
    const fn = _sym("cuMemcpyDtoD_v2");
    const d = this.#range(0, bytes, "Copy");
    const s = src.#range(0, bytes, "Copy");
    _check(fn(d, s, BigInt(bytes)), "cuMemcpyDtoD_v2");
  }

  /** Queues a device-to-device copy on `stream` (`cuMemcpyDtoDAsync`). */
  copyFromDeviceAsync(src: DeviceMemory, stream: StreamLike, bytes: number = src.bytes): void {
    const fn = _sym("cuMemcpyDtoDAsync_v2");
    const d = this.#range(0, bytes, "Copy");
    const s = src.#range(0, bytes, "Copy");
    _check(fn(d, s, BigInt(bytes), _streamHandle(stream)), "cuMemcpyDtoDAsync_v2");
  }

  /**
   * Sets every byte to `value` (`cuMemsetD8`); with a stream, queued on it
   * (`cuMemsetD8Async`).
   */
  fill(value: number, stream?: StreamLike): void {
    const p = this.ptr;
    if (!Number.isInteger(value) || value < 0 || value > 255) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Byte value must be 0..255, got ${value}`);
    }
    const n = BigInt(this.bytes);
    if (stream === undefined) {
      _check(_sym("cuMemsetD8_v2")(p, value, n), "cuMemsetD8_v2");
    } else {
      _check(_sym("cuMemsetD8Async")(p, value, n, _streamHandle(stream)), "cuMemsetD8Async");
    }
  }

  /**
   * Sets every 32-bit word to `value` (`cuMemsetD32`, e.g. a float's bits);
   * the size must be a multiple of 4. With a stream, queued on it.
   */
  fill32(value: number, stream?: StreamLike): void {
    const p = this.ptr;
    if (!Number.isInteger(value) || value < -(2 ** 31) || value > 2 ** 32 - 1) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `Word value must be a 32-bit integer, got ${value}`,
      );
    }
    if (this.bytes % 4 !== 0) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `fill32 needs a size that is a multiple of 4, got ${this.bytes}`,
      );
    }
    const n = BigInt(this.bytes / 4);
    const v = value >>> 0;
    if (stream === undefined) {
      _check(_sym("cuMemsetD32_v2")(p, v, n), "cuMemsetD32_v2");
    } else {
      _check(_sym("cuMemsetD32Async")(p, v, n, _streamHandle(stream)), "cuMemsetD32Async");
    }
  }

  /** Frees the memory in stream order (`cuMemFreeAsync`) and closes this object. */
  freeAsync(stream?: StreamLike): void {
    const fn = _sym("cuMemFreeAsync");
    const p = this.ptr;
    const h = _streamHandle(stream);
    this.#closed = true;
    if (this.#owned) _check(fn(p, h), "cuMemFreeAsync");
  }

  /** Frees the memory (`cuMemFree`; nothing for a wrapped view). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#owned) _check(_sym("cuMemFree_v2")(this.#ptr), "cuMemFree_v2");
  }

  /** Same as {@link DeviceMemory.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
