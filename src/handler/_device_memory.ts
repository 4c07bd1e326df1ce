/**
 * A hook through which the CUDA bindings tell buffers which addresses are
 * device memory, so `FfiBuffer.typed()` refuses them with a clear error
 * instead of reading device memory from the host. Set when the CUDA driver
 * is initialised; without CUDA it stays unset and costs nothing.
 *
 * @module
 */

/** Why the host cannot read `address` (e.g. it is CUDA device memory), or undefined. */
export type DeviceMemoryCheck = (address: number) => string | undefined;

/** The installed check (undefined until CUDA is initialised). */
export let _deviceMemoryCheck: DeviceMemoryCheck | undefined;

/** Installs (or with undefined removes) the check. */
export function _setDeviceMemoryCheck(check: DeviceMemoryCheck | undefined): void {
  _deviceMemoryCheck = check;
}
