/**
 * Opens the CUDA driver API lazily, initialises it once, and checks every
 * `CUresult`. Nothing here runs at import time, so the module loads on
 * machines without CUDA; there, every CUDA entry throws an {@link FfiError}
 * with code UNAVAILABLE and the loader's message.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { _loaderMessage, FfiError } from "../errors.ts";
import { _setDeviceMemoryCheck } from "../handler/_device_memory.ts";
import { CUDA_SYMBOLS, type CudaSymbols } from "./symbols.ts";

/** The driver's symbols; a symbol the driver lacks is `null`. */
export type CudaDriver = Deno.DynamicLibrary<CudaSymbols>["symbols"];

/** The driver library opened by default. */
export const CUDA_DRIVER_LIBRARY = "libcuda.so.1";

let library: Deno.DynamicLibrary<CudaSymbols> | undefined;
let libraryPath = "";
/** Every driver library opened, by path: kept open for the process's life. */
const openedLibraries = new Map<string, Deno.DynamicLibrary<CudaSymbols>>();
let loadError: FfiError | undefined;
let initError: FfiError | undefined;
let initialized = false;
let pathOverride: string | undefined;
/** Bumped when {@link _useDriverLibrary} switches libraries: cached symbols are stale. */
export let _driverGeneration = 0;

/**
 * Scratch memory for out-parameters, allocated once (256 bytes, so it lives
 * outside the JS heap and never moves). Only synchronous driver calls on the
 * JS thread use it, and each reads its result before the next call.
 */
const scratchBuffer = new ArrayBuffer(256);
/** 64-bit view of the scratch (handles, device pointers, sizes). */
export const _out64: BigUint64Array<ArrayBuffer> = new BigUint64Array(scratchBuffer, 0, 16);
/** 32-bit view of the scratch (ints, CUdevice). */
export const _out32: Int32Array<ArrayBuffer> = new Int32Array(scratchBuffer, 128, 8);
/** Float view of the scratch (event times). */
export const _outF32: Float32Array<ArrayBuffer> = new Float32Array(scratchBuffer, 160, 8);
/** Second 64-bit slot region (for calls with two out-parameters). */
export const _out64b: BigUint64Array<ArrayBuffer> = new BigUint64Array(scratchBuffer, 192, 8);

function driverPath(): string {
  if (pathOverride !== undefined) return pathOverride;
  try {
    return Deno.env.get("XLA_FFI_DENO_CUDA") || CUDA_DRIVER_LIBRARY;
  } catch {
    return CUDA_DRIVER_LIBRARY;
  }
}

function open(): Deno.DynamicLibrary<CudaSymbols> {
  if (library) return library;
  if (loadError) throw loadError;
  const path = driverPath();
  const known = openedLibraries.get(path);
  if (known) {
    libraryPath = path;
    return library = known;
  }
  try {
    library = Deno.dlopen(path, CUDA_SYMBOLS);
    openedLibraries.set(path, library);
    libraryPath = path;
    return library;
  } catch (e) {
    const msg = _loaderMessage(e);
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      // Not cached: the same process may be granted the permission later.
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `Opening the CUDA driver ${path} needs --allow-ffi (${msg})`,
        { cause: e },
      );
    }
    loadError = new FfiError(
      ErrorCode.UNAVAILABLE,
      `CUDA is not available: cannot load the CUDA driver ${path}: ${msg}`,
      { cause: e },
    );
    throw loadError;
  }
}

/**
 * The driver's symbols, opened and initialised (`cuInit(0)`) on first use.
 * Throws FfiError UNAVAILABLE (with the loader's or the driver's message)
 * when CUDA cannot be used.
 */
export function _driver(): CudaDriver {
  if (initialized) return library!.symbols;
  const lib = open();
  if (initialized) return lib.symbols;
  if (initError) throw initError;
  const init = lib.symbols.cuInit;
  if (!init) {
    initError = new FfiError(
      ErrorCode.UNAVAILABLE,
      `CUDA is not available: ${driverPath()} has no cuInit (not a CUDA driver library)`,
    );
    throw initError;
  }
  const rc = init(0);
  if (rc !== 0) {
    initError = _cudaError(rc, "cuInit");
    throw initError;
  }
  initialized = true;
  if (lib.symbols.cuPointerGetAttribute) _setDeviceMemoryCheck(deviceMemoryReason);
  return lib.symbols;
}

const MEMORY_TYPE = 2; // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
const MEMORYTYPE_DEVICE = 2; // CU_MEMORYTYPE_DEVICE
const IS_MANAGED = 8; // CU_POINTER_ATTRIBUTE_IS_MANAGED

/**
 * "CUDA device memory" when `address` is device memory the host cannot
 * read (managed memory can be read), else undefined. Never throws.
 */
function deviceMemoryReason(address: number): string | undefined {
  const fn = initialized ? library?.symbols.cuPointerGetAttribute : undefined;
  if (!fn) return undefined;
  const p = BigInt(address);
  _out32[0] = 0;
  if (fn(_out32, MEMORY_TYPE, p) !== 0 || _out32[0] !== MEMORYTYPE_DEVICE) return undefined;
  _out32[0] = 0;
  if (fn(_out32, IS_MANAGED, p) === 0 && (_out32[0]! & 0xff) !== 0) return undefined;
  return "CUDA device memory";
}

/**
 * The path the driver library was opened with (it loads and initialises the
 * driver first, so it throws as {@link _driver} does). Native code that
 * needs driver functions opens the same library by this path.
 */
export function _driverLibraryPath(): string {
  _driver();
  return libraryPath;
}

/**
 * The driver symbol `name`, or an FfiError UNAVAILABLE when the installed
 * driver lacks it.
 */
export function _sym<K extends keyof CudaDriver>(name: K): NonNullable<CudaDriver[K]> {
  const fn = _driver()[name];
  if (fn === null || fn === undefined) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `The CUDA driver ${driverPath()} has no ${String(name)} (driver too old?)`,
    );
  }
  return fn as NonNullable<CudaDriver[K]>;
}

/**
 * Whether the CUDA driver loads and initialises and at least one device is
 * present. Never throws.
 *
 * @example
 * ```ts
 * import { cudaAvailable, cudaUnavailableReason } from "@deno-xla/ffi/cuda";
 * if (!cudaAvailable()) console.log("no CUDA:", cudaUnavailableReason());
 * ```
 */
export function cudaAvailable(): boolean {
  return cudaUnavailableReason() === undefined;
}

/**
 * Why CUDA cannot be used here (the loader's or the driver's message), or
 * `undefined` when it can. Never throws.
 *
 * @example
 * ```ts
 * import { cudaUnavailableReason } from "@deno-xla/ffi/cuda";
 * console.log(cudaUnavailableReason() ?? "CUDA is available");
 * ```
 */
export function cudaUnavailableReason(): string | undefined {
  try {
    const cu = _driver();
    const count = cu.cuDeviceGetCount;
    if (!count) return "the CUDA driver has no cuDeviceGetCount";
    const rc = count(_out32);
    if (rc !== 0) return _cudaError(rc, "cuDeviceGetCount").message;
    if (_out32[0] === 0) return "the CUDA driver reports no device";
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Maps a `CUresult` to an XLA FFI error code: out of memory and out of
 * launch resources → RESOURCE_EXHAUSTED; no driver, no device, not
 * initialised, stub library, old driver → UNAVAILABLE; invalid value,
 * device, handle or context → INVALID_ARGUMENT; not found → NOT_FOUND;
 * not supported → UNIMPLEMENTED; anything else INTERNAL.
 *
 * @example
 * ```ts
 * import { cudaErrorCode } from "@deno-xla/ffi/cuda";
 * import { ErrorCode } from "@deno-xla/ffi";
 * console.log(cudaErrorCode(2) === ErrorCode.RESOURCE_EXHAUSTED); // true
 * ```
 */
export function cudaErrorCode(result: number): ErrorCode {
  switch (result) {
    case 0:
      return ErrorCode.OK;
    case 2: // OUT_OF_MEMORY
    case 701: // LAUNCH_OUT_OF_RESOURCES
      return ErrorCode.RESOURCE_EXHAUSTED;
    case 3: // NOT_INITIALIZED
    case 4: // DEINITIALIZED
    case 34: // STUB_LIBRARY
    case 35: // INSUFFICIENT_DRIVER
    case 46: // DEVICE_UNAVAILABLE
    case 100: // NO_DEVICE
    case 803: // SYSTEM_DRIVER_MISMATCH
    case 804: // COMPAT_NOT_SUPPORTED_ON_DEVICE
      return ErrorCode.UNAVAILABLE;
    case 1: // INVALID_VALUE
    case 101: // INVALID_DEVICE
    case 201: // INVALID_CONTEXT
    case 400: // INVALID_HANDLE
      return ErrorCode.INVALID_ARGUMENT;
    case 500: // NOT_FOUND
      return ErrorCode.NOT_FOUND;
    case 801: // NOT_SUPPORTED
      return ErrorCode.UNIMPLEMENTED;
    case 800: // NOT_PERMITTED
      return ErrorCode.PERMISSION_DENIED;
    default:
      return ErrorCode.INTERNAL;
  }
}

function errorText(
  fn: ((r: number, out: BufferSource) => number) | null | undefined,
  result: number,
): string | undefined {
  if (!fn) return undefined;
  if (fn(result, _out64) !== 0) return undefined;
  const addr = _out64[0]!;
  if (addr === 0n) return undefined;
  return Deno.UnsafePointerView.getCString(Deno.UnsafePointer.create(addr)!);
}

/**
 * The FfiError for a failed driver call: `NAME: description (function)`,
 * e.g. `CUDA_ERROR_INVALID_VALUE: invalid argument (cuMemAlloc_v2)`, with
 * the code of {@link cudaErrorCode}.
 */
export function _cudaError(result: number, fn: string): FfiError {
  const syms = library?.symbols;
  const name = errorText(syms?.cuGetErrorName, result) ?? `CUDA_ERROR_${result}`;
  const text = errorText(syms?.cuGetErrorString, result) ?? "unknown CUDA error";
  let hint = "";
  if (result === 222) {
    hint = "; the PTX needs a newer driver: rebuild it with the toolkit matching the driver";
  }
  return new FfiError(cudaErrorCode(result), `${name}: ${text} (${fn})${hint}`);
}

/** Throws the FfiError of {@link _cudaError} unless `result` is 0. */
export function _check(result: number, fn: string): void {
  if (result !== 0) throw _cudaError(result, fn);
}

/** An opaque handle from a 64-bit out-slot (null for 0). */
export function _handle(value: bigint): Deno.PointerValue {
  return Deno.UnsafePointer.create(value);
}

/**
 * Opens the driver from another path (undefined: the default) on next use,
 * forgetting any earlier load. Used by tests (a stand-in driver library);
 * not for normal use. The earlier library stays loaded: unloading a driver
 * that has started threads is not safe.
 */
export function _useDriverLibrary(path: string | undefined): void {
  _driverGeneration++;
  library = undefined;
  loadError = undefined;
  initError = undefined;
  initialized = false;
  pathOverride = path;
}

/** The FfiError for using a closed resource: FAILED_PRECONDITION. */
export function _closedError(what: string): FfiError {
  return new FfiError(ErrorCode.FAILED_PRECONDITION, `${what} is closed`);
}
