/**
 * CUDA modules (PTX, cubin or fatbin images) and their kernels.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _check, _closedError, _cudaError, _handle, _out32, _out64, _sym } from "./driver.ts";
import { _ArgPack, _launch, type KernelArg, type LaunchConfig, type ScalarType } from "./launch.ts";

/** `CU_JIT_ERROR_LOG_BUFFER`, `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`. */
const JIT_ERROR_LOG_BUFFER = 5;
const JIT_ERROR_LOG_BUFFER_SIZE = 6;
const LOG_BYTES = 16384;

function isBinaryImage(b: Uint8Array): boolean {
  // ELF (cubin) or fatbin (magic 0xBA55ED50, little-endian).
  if (b.length >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) {
    return true;
  }
  return b.length >= 4 && b[0] === 0x50 && b[1] === 0xed && b[2] === 0x55 && b[3] === 0xba;
}

/**
 * A loaded CUDA module (`CUmodule`): PTX text (JIT-compiled by the driver
 * for the current device), a cubin or a fatbin. `close()` unloads it; its
 * kernels then refuse to launch.
 *
 * @example
 * ```ts ignore
 * import { init, Module } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * using mod = Module.load(Deno.readTextFileSync("examples/kernels/saxpy.ptx"));
 * const saxpy = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
 * ```
 */
export class Module {
  #handle: Deno.PointerValue;
  #closed = false;

  private constructor(handle: Deno.PointerValue) {
    this.#handle = handle;
  }

  /**
   * Loads an image into the current context (`cuModuleLoadDataEx`): PTX as
   * a string or bytes, or cubin/fatbin bytes. A JIT failure's log is part of
   * the error message.
   *
   * @example
   * ```ts ignore
   * import { init, Module } from "@deno-xla/ffi/cuda";
   * using _ctx = init();
   * using mod = Module.load(Deno.readFileSync("kernels.cubin"));
   * ```
   */
  static load(image: string | Uint8Array): Module {
    const load = _sym("cuModuleLoadDataEx");
    let bytes: Uint8Array;
    if (typeof image === "string") {
      bytes = new TextEncoder().encode(image + "\0");
    } else if (image instanceof Uint8Array) {
      bytes = image;
      if (!isBinaryImage(image) && image[image.length - 1] !== 0) {
        bytes = new Uint8Array(image.length + 1);
        bytes.set(image);
      }
    } else {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "A module image must be PTX text (string) or a Uint8Array (PTX, cubin or fatbin)",
      );
    }
    if (bytes.length <= 1) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "A module image must not be empty");
    }
    const log = new Uint8Array(LOG_BYTES);
    const options = new Int32Array([JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE]);
    const values = new BigUint64Array([
      Deno.UnsafePointer.value(Deno.UnsafePointer.of(log)),
      BigInt(LOG_BYTES),
    ]);
    const rc = load(_out64, bytes, 2, options, values);
    if (rc !== 0) {
      const err = _cudaError(rc, "cuModuleLoadDataEx");
      const end = log.indexOf(0);
      const text = new TextDecoder().decode(log.subarray(0, end < 0 ? log.length : end)).trim();
      throw new FfiError(err.code, text ? `${err.message}:\n${text}` : err.message);
    }
    return new Module(_handle(_out64[0]!));
  }

  /** The `CUmodule` handle; FfiError FAILED_PRECONDITION after close. */
  get handle(): Deno.PointerValue {
    if (this.#closed) throw _closedError("Module");
    return this.#handle;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * A kernel of the module by its (`extern "C"`) name
   * (`cuModuleGetFunction`). With `signature`, plain numbers passed to
   * {@link Kernel.launch} are converted to those types; without it, pass
   * typed scalars ({@link f32} …), DeviceMemory, bigints or pointers.
   * FfiError NOT_FOUND when the module has no such kernel.
   *
   * @example
   * ```ts ignore
   * import { Module } from "@deno-xla/ffi/cuda";
   * declare const mod: Module;
   * const k = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
   * ```
   */
  kernel(name: string, signature?: readonly ScalarType[]): Kernel {
    const fn = _sym("cuModuleGetFunction");
    const rc = fn(_out64, this.handle, new TextEncoder().encode(name + "\0"));
    if (rc !== 0) {
      const e = _cudaError(rc, `cuModuleGetFunction "${name}"`);
      throw rc === 500 ? new FfiError(ErrorCode.NOT_FOUND, e.message) : e;
    }
    return new Kernel(this, name, _handle(_out64[0]!), signature);
  }

  /** Unloads the module (`cuModuleUnload`). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    _check(_sym("cuModuleUnload")(this.#handle), "cuModuleUnload");
  }

  /** Same as {@link Module.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

let packOf: (k: Kernel) => _ArgPack;

/**
 * A kernel (`CUfunction`) of a {@link Module}. Valid while its module is
 * open. Each kernel keeps one argument block, reused by every launch.
 *
 * @example
 * ```ts ignore
 * import { DeviceMemory, Module } from "@deno-xla/ffi/cuda";
 * declare const mod: Module, x: DeviceMemory, y: DeviceMemory;
 * const saxpy = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
 * saxpy.launch({ grid: 4, block: 256 }, 2.0, x, y, 1024);
 * ```
 */
export class Kernel {
  /** The module the kernel belongs to. */
  readonly module: Module;
  /** The kernel's name. */
  readonly name: string;
  /** Parameter types given to {@link Module.kernel}, if any. */
  readonly signature: readonly ScalarType[] | undefined;
  #handle: Deno.PointerValue;
  #args: _ArgPack;

  static {
    packOf = (k) => k.#args;
  }

  /** Made by {@link Module.kernel}. */
  constructor(
    module: Module,
    name: string,
    handle: Deno.PointerValue,
    signature?: readonly ScalarType[],
  ) {
    this.module = module;
    this.name = name;
    this.#handle = handle;
    this.signature = signature ? [...signature] : undefined;
    this.#args = new _ArgPack(this.signature);
  }

  /** The `CUfunction` handle; FfiError FAILED_PRECONDITION once the module is closed. */
  get handle(): Deno.PointerValue {
    if (this.module.closed) throw _closedError(`Module of kernel ${this.name}`);
    return this.#handle;
  }

  /** An integer attribute (`CU_FUNC_ATTRIBUTE_*`; 0 is max threads per block). */
  attribute(attribute: number): number {
    _check(_sym("cuFuncGetAttribute")(_out32, attribute, this.handle), "cuFuncGetAttribute");
    return _out32[0]!;
  }

  /**
   * Launches the kernel (`cuLaunchKernel`) with `config` and `args`; the
   * same as `launch(this, config, ...args)`.
   */
  launch(config: LaunchConfig, ...args: KernelArg[]): void {
    _launch(this.handle, this.#args, config, args);
  }

  /**
   * Launches the kernel with the arguments in an array: no per-call
   * allocation when the caller reuses the array (and the config).
   *
   * @example
   * ```ts ignore
   * import { DeviceMemory, Kernel } from "@deno-xla/ffi/cuda";
   * declare const saxpy: Kernel, x: DeviceMemory, y: DeviceMemory;
   * const config = { grid: 4, block: 256 };
   * const args = [2, x, y, 1024];
   * for (let i = 0; i < 10; i++) {
   *   args[0] = i;
   *   saxpy.launchArgs(config, args);
   * }
   * ```
   */
  launchArgs(config: LaunchConfig, args: readonly KernelArg[]): void {
    _launch(this.handle, this.#args, config, args);
  }
}

/**
 * Launches `kernel` (`cuLaunchKernel`) with `config` and `args`. The launch
 * is queued on the stream: synchronise it (or copy back synchronously) to
 * see the results. Launch errors carry the CUDA error name and text.
 *
 * @example
 * ```ts ignore
 * import { DeviceMemory, init, launch, Module } from "@deno-xla/ffi/cuda";
 * using _ctx = init();
 * using mod = Module.load(Deno.readTextFileSync("examples/kernels/saxpy.ptx"));
 * const saxpy = mod.kernel("saxpy", ["f32", "pointer", "pointer", "i32"]);
 * const n = 1024;
 * using x = DeviceMemory.alloc(n * 4);
 * using y = DeviceMemory.alloc(n * 4);
 * x.fill32(0x3f800000); // 1.0f
 * y.fill32(0x40000000); // 2.0f
 * launch(saxpy, { grid: Math.ceil(n / 256), block: 256 }, 3, x, y, n);
 * const out = new Float32Array(n);
 * y.copyToHost(out); // every element is 3 * 1 + 2 = 5
 * ```
 *
 * @example In a TS handler: the stream from the context and the buffers as they come.
 * ```ts ignore
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * import { type Kernel, launch } from "@deno-xla/ffi/cuda";
 * declare const saxpy: Kernel; // (f32 a, f32* x, f32* y, i32 n)
 * using h = Ffi.bind().arg(DataType.F32, 1).ret(DataType.F32, 1).attr("alpha", "f32")
 *   .ctx("stream")
 *   .to((x, y, alpha, stream) => {
 *     const n = y.elementCount;
 *     launch(saxpy, { grid: Math.ceil(n / 256), block: 256, stream }, alpha, x, y, n);
 *   });
 * ```
 */
export function launch(kernel: Kernel, config: LaunchConfig, ...args: KernelArg[]): void {
  _launch(kernel.handle, packOf(kernel), config, args);
}
