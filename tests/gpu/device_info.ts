/**
 * One line about the CUDA device, driver and NVRTC this machine has, for the
 * block of figures tests/gpu/run.sh prints. Exits 1, printing why, when CUDA
 * is not available.
 *
 * Run: deno run --allow-ffi --allow-read --allow-env tests/gpu/device_info.ts
 *
 * @module
 */
import {
  cudaUnavailableReason,
  Device,
  driverVersion,
  nvrtcAvailable,
  nvrtcVersion,
} from "../../src/cuda/mod.ts";

const reason = cudaUnavailableReason();
if (reason !== undefined) {
  console.log(`CUDA unavailable: ${reason}`);
  Deno.exit(1);
}
const dev = Device.get(0);
const cc = dev.computeCapability;
const v = driverVersion();
const nvrtc = nvrtcAvailable() ? nvrtcVersion() : undefined;
console.log(
  `${dev.name} (compute ${cc.major}.${cc.minor}, ${dev.multiprocessorCount} SMs, ` +
    `${(dev.totalMemory / 2 ** 30).toFixed(0)} GiB), CUDA driver ${Math.floor(v / 1000)}.${
      (v % 1000) / 10
    }, NVRTC ${nvrtc ? `${nvrtc.major}.${nvrtc.minor}` : "none"}, Deno ${Deno.version.deno}`,
);
