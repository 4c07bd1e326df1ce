/**
 * DeviceBuffer: device memory with a data type and dimensions, the buffer
 * arguments and results of calls on a CUDA runtime.
 *
 * @module
 */
import type { DataType } from "../abi/enums.ts";
import { DeviceMemory } from "../cuda/memory.ts";
import { _bufferBytes, _checkDataSize } from "./_buffer_size.ts";

export { _bufferBytes };

/**
 * A device buffer: {@link DeviceMemory} viewed as an array of `dtype` with
 * `dims`. Pass it to {@link CallFrameBuilder.arg}/{@link CallFrameBuilder.ret}
 * (data type and dims come from the buffer). Buffers made by
 * `Runtime.deviceArg`/`Runtime.deviceBuffer` own their memory (close frees
 * it); {@link DeviceBuffer.wrap} views memory owned elsewhere. A frame keeps
 * the buffer object alive but cannot stop it being closed: close buffers
 * after the frames that use them.
 *
 * @example
 * ```ts ignore
 * import { CallFrameBuilder, Runtime } from "@deno-xla/ffi";
 * using rt = new Runtime({ platform: "CUDA" });
 * using x = rt.deviceArg(new Float32Array([1, 2, 3, 4]), [2, 2]);
 * using y = rt.deviceBuffer(x.dtype, x.dims);
 * using frame = new CallFrameBuilder().arg(x).ret(y).build();
 * ```
 */
export class DeviceBuffer {
  /** The device memory (its `bytes` may exceed {@link DeviceBuffer.bytes}). */
  readonly memory: DeviceMemory;
  /** The element type. */
  readonly dtype: DataType;
  /** The dimensions. */
  readonly dims: readonly number[];
  /** Bytes the shape covers: `ByteWidth(dtype)` × elements. */
  readonly bytes: number;
  #owned: boolean;
  #closeMemory: boolean;

  private constructor(
    memory: DeviceMemory,
    dtype: DataType,
    dims: number[],
    owned: boolean,
    closeMemory: boolean,
  ) {
    this.memory = memory;
    this.dtype = dtype;
    this.dims = Object.freeze(dims);
    this.bytes = _bufferBytes(dtype, dims, "DeviceBuffer");
    this.#owned = owned;
    this.#closeMemory = closeMemory;
  }

  /**
   * Views device memory (a {@link DeviceMemory} or a device address) as a
   * buffer of `dtype` and `dims`; closing the view frees nothing. The memory
   * must hold the shape's bytes (INVALID_ARGUMENT otherwise).
   *
   * @example
   * ```ts ignore
   * import { DataType, DeviceBuffer } from "@deno-xla/ffi";
   * import { DeviceMemory, init } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using mem = DeviceMemory.alloc(64);
   * const buf = DeviceBuffer.wrap(mem, DataType.F32, [4, 4]);
   * ```
   */
  static wrap(
    memory: DeviceMemory | bigint | number,
    dtype: DataType,
    dims: readonly number[],
  ): DeviceBuffer {
    const bytes = _bufferBytes(dtype, dims, "DeviceBuffer");
    const mem = memory instanceof DeviceMemory ? memory : DeviceMemory.wrap(memory, bytes);
    _checkDataSize(dtype, dims, mem.bytes, "device memory", "DeviceBuffer");
    // A wrapper made here for an address is this view's own (closing frees nothing).
    return new DeviceBuffer(mem, dtype, [...dims], false, mem !== memory);
  }

  /** @internal a buffer that owns `memory`. */
  static _owning(memory: DeviceMemory, dtype: DataType, dims: readonly number[]): DeviceBuffer {
    return new DeviceBuffer(memory, dtype, [...dims], true, true);
  }

  /** The device address; FfiError FAILED_PRECONDITION after close. */
  get ptr(): bigint {
    return this.memory.ptr;
  }

  /** Whether closing frees the memory. */
  get owned(): boolean {
    return this.#owned;
  }

  /** Whether the memory is closed. */
  get closed(): boolean {
    return this.memory.closed;
  }

  /** Frees owned memory (`cuMemFree`); a view only forgets it. Idempotent. */
  close(): void {
    if (this.#closeMemory) this.memory.close();
    this.#closeMemory = false;
  }

  /** Same as {@link DeviceBuffer.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
