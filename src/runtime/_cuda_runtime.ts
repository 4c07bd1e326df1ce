/**
 * The CUDA side of a runtime: the device's primary context it retains, the
 * stream its handlers get from `Stream_Get`, and the copies to and from
 * device buffers it makes in that stream's order. Private to the runtime.
 *
 * @module
 */
import { type DataType, ErrorCode } from "../abi/enums.ts";
import { type DataTypedArray, dataTypeOf, viewAs } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";
import { Context } from "../cuda/context.ts";
import { _driverLibraryPath } from "../cuda/driver.ts";
import { DeviceMemory } from "../cuda/memory.ts";
import { Stream } from "../cuda/stream.ts";
import { _check, _cString } from "./_native_error.ts";
import { _bufferBytes, DeviceBuffer } from "./device_buffer.ts";
import { _checkDataSize } from "./_buffer_size.ts";
import type { RuntimeOptions } from "./runtime.ts";

/** What a CUDA runtime holds: the retained primary context and its stream. */
export interface _CudaParts {
  context: Context;
  stream: Stream;
  /** Whether close() closes the stream (owned, or a wrapper made here). */
  closeStream: boolean;
}

function deviceOrdinal(device: number | undefined): number {
  const d = device ?? 0;
  if (!Number.isInteger(d) || d < 0 || d > 2147483647) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid device ordinal ${d}`);
  }
  return d;
}

/** Retains the context, sets up the stream and attaches both to a CUDA runtime. */
export function _attachCuda(ptr: Deno.PointerObject, options: RuntimeOptions): _CudaParts {
  const device = deviceOrdinal(options.device);
  const context = Context.primary(device); // UNAVAILABLE without a driver
  let stream: Stream | undefined;
  let closeStream = false;
  try {
    const s = options.stream;
    if (s === undefined) {
      stream = Stream.create();
      closeStream = true;
    } else if (s instanceof Stream) {
      stream = s;
    } else {
      stream = Stream.wrap(s);
      closeStream = true;
    }
    const handle = stream.handle;
    if (handle === null) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "A CUDA runtime needs a stream: the legacy default stream (0) cannot be handed to handlers",
      );
    }
    const sym = native();
    sym.xla_ffi_deno_runtime_set_stream(ptr, handle);
    _check(
      sym.xla_ffi_deno_runtime_set_cuda(
        ptr,
        _cString(_driverLibraryPath()),
        context.handle,
        device,
      ),
    );
    return { context, stream, closeStream };
  } catch (e) {
    if (closeStream) stream?.close();
    context.close();
    throw e;
  }
}

/** Destroys an owned stream and releases the primary context. */
export function _releaseCuda(c: _CudaParts): void {
  try {
    if (c.closeStream) {
      c.context.setCurrent();
      c.stream.close();
    }
  } finally {
    c.context.close();
  }
}

/**
 * A device buffer of `dtype` and `dims` in the current context, zeroed in
 * `stream`'s order (`Runtime.deviceBuffer`).
 */
export function _deviceBuffer(
  stream: Stream,
  dtype: DataType,
  dims: readonly number[],
): DeviceBuffer {
  const bytes = _bufferBytes(dtype, dims, "Runtime.deviceBuffer");
  const mem = DeviceMemory.alloc(Math.max(bytes, 1));
  try {
    mem.fill(0, stream);
    stream.synchronize();
  } catch (e) {
    mem.close();
    throw e;
  }
  return DeviceBuffer._owning(mem, dtype, dims);
}

/**
 * A new device buffer holding a copy of `data`, made in `stream`'s order
 * (`Runtime.deviceArg`): dims default `[length]`, dtype the array's own.
 */
export function _deviceArg(
  stream: Stream,
  data: ArrayBufferView,
  dims?: readonly number[],
  dtype?: DataType,
): DeviceBuffer {
  if (!ArrayBuffer.isView(data)) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Runtime.deviceArg: expected a typed array");
  }
  const dt = dtype ?? dataTypeOf(data);
  const d = dims ?? [data.byteLength / _bufferBytes(dt, [], "Runtime.deviceArg")];
  const bytes = _checkDataSize(dt, d, data.byteLength, "array", "Runtime.deviceArg");
  const mem = DeviceMemory.alloc(Math.max(bytes, 1));
  try {
    if (bytes > 0) mem.copyFromHostAsync(data, stream);
    stream.synchronize();
  } catch (e) {
    mem.close();
    throw e;
  }
  return DeviceBuffer._owning(mem, dt, d);
}

/** `buffer` copied into `out` or a new typed array once `stream` is done (`Runtime.toHost`). */
export function _toHost<T extends ArrayBufferView = DataTypedArray>(
  stream: Stream,
  buffer: DeviceBuffer,
  out?: T,
): T {
  if (!(buffer instanceof DeviceBuffer)) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, "Runtime.toHost: expected a DeviceBuffer");
  }
  if (out !== undefined && out.byteLength !== buffer.bytes) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `Runtime.toHost: the output has ${out.byteLength} bytes, the buffer ${buffer.bytes}`,
    );
  }
  const dst = out ?? viewAs(buffer.dtype, new Uint8Array(buffer.bytes)) as unknown as T;
  if (buffer.bytes > 0) buffer.memory.copyToHostAsync(dst, stream);
  stream.synchronize();
  return dst;
}
