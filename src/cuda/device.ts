/**
 * CUDA devices: count, name, compute capability, memory.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _check, _driver, _driverLibraryPath, _out32, _out64, _out64b, _sym } from "./driver.ts";

/** Devices (by driver library and ordinal) whose primary context the process keeps. */
const resident = new Set<string>();

/**
 * Retains `device`'s primary context once for the rest of the process (as
 * the CUDA runtime and XLA do), so that releasing every `Context` and
 * `Runtime` never brings its count to zero: destroying a primary context
 * frees everything in it and the next retain builds it again, which takes
 * long on a large GPU. Later calls for the same device do nothing.
 */
export function _retainResident(device: Device): void {
  const key = `${_driverLibraryPath()}\0${device.ordinal}`;
  if (resident.has(key)) return;
  _check(_sym("cuDevicePrimaryCtxRetain")(_out64, device.handle), "cuDevicePrimaryCtxRetain");
  resident.add(key);
}

/** `CU_DEVICE_ATTRIBUTE_*` values used by {@link Device}. */
export const DeviceAttribute = {
  MAX_THREADS_PER_BLOCK: 1,
  MAX_SHARED_MEMORY_PER_BLOCK: 8,
  WARP_SIZE: 10,
  CLOCK_RATE: 13,
  MULTIPROCESSOR_COUNT: 16,
  COMPUTE_CAPABILITY_MAJOR: 75,
  COMPUTE_CAPABILITY_MINOR: 76,
  MEMORY_POOLS_SUPPORTED: 115,
} as const;

/**
 * The CUDA driver's version as the driver reports it, e.g. `12040` for 12.4.
 *
 * @example
 * ```ts ignore
 * import { driverVersion } from "@deno-xla/ffi/cuda";
 * console.log(driverVersion()); // e.g. 12040
 * ```
 */
export function driverVersion(): number {
  _check(_sym("cuDriverGetVersion")(_out32), "cuDriverGetVersion");
  return _out32[0]!;
}

/**
 * The number of CUDA devices; 0 when the driver loads but finds none.
 * Throws FfiError UNAVAILABLE when the driver cannot be loaded.
 *
 * @example
 * ```ts ignore
 * import { deviceCount } from "@deno-xla/ffi/cuda";
 * console.log(deviceCount());
 * ```
 */
export function deviceCount(): number {
  let cu;
  try {
    cu = _driver();
  } catch (e) {
    // A driver without devices fails cuInit with CUDA_ERROR_NO_DEVICE.
    if (e instanceof FfiError && e.message.startsWith("CUDA_ERROR_NO_DEVICE")) return 0;
    throw e;
  }
  if (!cu.cuDeviceGetCount) _sym("cuDeviceGetCount");
  _check(cu.cuDeviceGetCount!(_out32), "cuDeviceGetCount");
  return _out32[0]!;
}

/**
 * A CUDA device (`CUdevice`), by ordinal. Devices own nothing, so there is
 * nothing to close.
 *
 * @example
 * ```ts ignore
 * import { Device } from "@deno-xla/ffi/cuda";
 * const dev = Device.get(0);
 * console.log(dev.name, dev.computeCapability, dev.totalMemory);
 * ```
 */
export class Device {
  /** The device ordinal (0-based). */
  readonly ordinal: number;
  /** The driver's `CUdevice` handle. */
  readonly handle: number;

  private constructor(ordinal: number, handle: number) {
    this.ordinal = ordinal;
    this.handle = handle;
  }

  /**
   * The device with this ordinal; FfiError INVALID_ARGUMENT when there is
   * no such device.
   *
   * @example
   * ```ts ignore
   * import { Device } from "@deno-xla/ffi/cuda";
   * console.log(Device.get(0).name);
   * ```
   */
  static get(ordinal = 0): Device {
    const cuDeviceGet = _sym("cuDeviceGet");
    if (!Number.isInteger(ordinal) || ordinal < 0) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `Device ordinal must be a non-negative integer, got ${ordinal}`,
      );
    }
    _check(cuDeviceGet(_out32, ordinal), "cuDeviceGet");
    return new Device(ordinal, _out32[0]!);
  }

  /**
   * Every device, in ordinal order.
   *
   * @example
   * ```ts ignore
   * import { Device } from "@deno-xla/ffi/cuda";
   * for (const d of Device.all()) console.log(d.ordinal, d.name);
   * ```
   */
  static all(): Device[] {
    const n = deviceCount();
    const out: Device[] = [];
    for (let i = 0; i < n; i++) out.push(Device.get(i));
    return out;
  }

  /** The device's name, e.g. `"NVIDIA H200"`. */
  get name(): string {
    const buf = new Uint8Array(256);
    _check(_sym("cuDeviceGetName")(buf, buf.length, this.handle), "cuDeviceGetName");
    const end = buf.indexOf(0);
    return new TextDecoder().decode(buf.subarray(0, end < 0 ? buf.length : end));
  }

  /** An integer attribute (`CU_DEVICE_ATTRIBUTE_*`, see {@link DeviceAttribute}). */
  attribute(attribute: number): number {
    _check(
      _sym("cuDeviceGetAttribute")(_out32, attribute, this.handle),
      "cuDeviceGetAttribute",
    );
    return _out32[0]!;
  }

  /** Compute capability, e.g. `{ major: 9, minor: 0 }` on Hopper. */
  get computeCapability(): { major: number; minor: number } {
    return {
      major: this.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR),
      minor: this.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MINOR),
    };
  }

  /** Number of streaming multiprocessors. */
  get multiprocessorCount(): number {
    return this.attribute(DeviceAttribute.MULTIPROCESSOR_COUNT);
  }

  /** Total device memory in bytes. */
  get totalMemory(): number {
    _check(_sym("cuDeviceTotalMem_v2")(_out64, this.handle), "cuDeviceTotalMem_v2");
    return Number(_out64[0]!);
  }

  /**
   * Free and total memory in bytes, measured in the device's primary
   * context (retained for the query, the caller's current context restored).
   */
  memoryInfo(): { free: number; total: number } {
    const cu = _driver();
    _retainResident(this);
    _check(_sym("cuCtxGetCurrent")(_out64), "cuCtxGetCurrent");
    const previous = Deno.UnsafePointer.create(_out64[0]!);
    _check(_sym("cuDevicePrimaryCtxRetain")(_out64, this.handle), "cuDevicePrimaryCtxRetain");
    const ctx = Deno.UnsafePointer.create(_out64[0]!);
    try {
      _check(cu.cuCtxSetCurrent!(ctx), "cuCtxSetCurrent");
      _check(_sym("cuMemGetInfo_v2")(_out64, _out64b), "cuMemGetInfo_v2");
      return { free: Number(_out64[0]!), total: Number(_out64b[0]!) };
    } finally {
      cu.cuCtxSetCurrent!(previous);
      cu.cuDevicePrimaryCtxRelease_v2?.(this.handle);
    }
  }
}
