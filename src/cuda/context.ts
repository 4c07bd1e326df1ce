/**
 * The primary context of a device: retained on open, released on close.
 * The one reference of each device's primary context that the process keeps
 * (so the context is never torn down and built again between uses) is taken
 * by `_retainResident` in device.ts, which device queries use too.
 *
 * @module
 */
import { _retainResident, Device } from "./device.ts";
import { _check, _closedError, _out64, _out64b, _sym } from "./driver.ts";

/**
 * A device's primary context (the one the CUDA runtime and XLA use),
 * retained by {@link Context.primary} and released by `close()`.
 * Driver calls act on the context current on the calling thread, so call
 * {@link Context.setCurrent} (done by `primary` and {@link init}) first.
 *
 * The first `primary` call for a device also retains its primary context
 * once for the rest of the process, as the CUDA runtime does: closing the
 * last `Context` (or CUDA `Runtime`) then leaves the context alive, so a
 * later one reuses it instead of building it again. Memory, streams and
 * modules are still freed by their own `close()`.
 *
 * @example
 * ```ts ignore
 * import { Context } from "@deno-xla/ffi/cuda";
 * using ctx = Context.primary(0); // retained and made current
 * console.log(ctx.memoryInfo());
 * ```
 */
export class Context {
  /** The device the context belongs to. */
  readonly device: Device;
  #handle: Deno.PointerValue;
  #closed = false;

  private constructor(device: Device, handle: Deno.PointerValue) {
    this.device = device;
    this.#handle = handle;
  }

  /**
   * Retains the primary context of a device (a {@link Device} or an ordinal)
   * and makes it current on this thread unless `setCurrent` is false.
   *
   * @example
   * ```ts ignore
   * import { Context } from "@deno-xla/ffi/cuda";
   * const ctx = Context.primary(0);
   * ctx.close();
   * ```
   */
  static primary(device: Device | number = 0, options: { setCurrent?: boolean } = {}): Context {
    const retain = _sym("cuDevicePrimaryCtxRetain");
    const dev = typeof device === "number" ? Device.get(device) : device;
    _retainResident(dev);
    _check(retain(_out64, dev.handle), "cuDevicePrimaryCtxRetain");
    const ctx = new Context(dev, Deno.UnsafePointer.create(_out64[0]!));
    if (options.setCurrent ?? true) {
      try {
        ctx.setCurrent();
      } catch (e) {
        ctx.close();
        throw e;
      }
    }
    return ctx;
  }

  /** The `CUcontext` handle; FfiError FAILED_PRECONDITION after close. */
  get handle(): Deno.PointerValue {
    if (this.#closed) throw _closedError("Context");
    return this.#handle;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Makes this context current on the calling thread (`cuCtxSetCurrent`). */
  setCurrent(): void {
    _check(_sym("cuCtxSetCurrent")(this.handle), "cuCtxSetCurrent");
  }

  /** Waits for all work in the context (`cuCtxSynchronize`); makes it current first. */
  synchronize(): void {
    this.setCurrent();
    _check(_sym("cuCtxSynchronize")(), "cuCtxSynchronize");
  }

  /** Free and total device memory in bytes (`cuMemGetInfo`); makes it current first. */
  memoryInfo(): { free: number; total: number } {
    this.setCurrent();
    _check(_sym("cuMemGetInfo_v2")(_out64, _out64b), "cuMemGetInfo_v2");
    return { free: Number(_out64[0]!), total: Number(_out64b[0]!) };
  }

  /**
   * Releases this reference of the primary context (the process keeps its
   * own, see {@link Context}). Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    _check(
      _sym("cuDevicePrimaryCtxRelease_v2")(this.device.handle),
      "cuDevicePrimaryCtxRelease_v2",
    );
  }

  /** Same as {@link Context.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Retains device `ordinal`'s primary context and makes it current: the usual
 * first call of a CUDA program. Close the context when done.
 *
 * @example
 * ```ts ignore
 * import { init } from "@deno-xla/ffi/cuda";
 * using ctx = init();
 * console.log(ctx.device.name);
 * ```
 */
export function init(ordinal = 0): Context {
  return Context.primary(ordinal);
}
