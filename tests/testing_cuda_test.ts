/**
 * `Runtime.ffiCall` on a CUDA runtime, against the stand-in driver
 * (native/tests/cuda_standin.c, device memory = host memory): arguments are
 * copied to device buffers, results allocated there and copied back, an
 * aliased result is its argument's device copy, layouts apply to the device
 * copies, and every device buffer the call made is freed.
 */
import assert from "node:assert/strict";
import { standinDriver } from "./_cuda_standin.ts";
import { DataType, Ffi, Runtime } from "../mod.ts";
import { _useDriverLibrary } from "../src/cuda/driver.ts";
import { cudaAvailable, DeviceMemory, init, Stream } from "../src/cuda/mod.ts";
import { assertArrayEqual, like } from "../src/testing/mod.ts";

const standinBuild = standinDriver();
const standinPath = standinBuild.path;
const reason = standinBuild.reason && `no stand-in CUDA driver: ${standinBuild.reason}`;
const standin = standinPath
  ? Deno.dlopen(standinPath, { standin_live_allocations: { parameters: [], result: "i64" } })
    .symbols
  : undefined;
if (standinPath) {
  // Open the driver once outside any test, so no test sees a new resource.
  _useDriverLibrary(standinPath);
  assert.ok(cudaAvailable());
  init(0).close();
  _useDriverLibrary(undefined);
}

Deno.test({
  name:
    "Runtime.ffiCall on CUDA: device copies in and out, aliasing, layouts, nothing left allocated" +
    (reason ? ` (ignored: ${reason})` : ""),
  ignore: reason !== undefined,
  fn: async () => {
    _useDriverLibrary(standinPath);
    try {
      using rt = new Runtime({ platform: "CUDA" });
      // out = x, copied device to device on the runtime's stream; aliased, there is nothing to
      // copy. The handler only sees device addresses.
      let same = false;
      using copy = Ffi.bind().arg(DataType.F32).ret(DataType.F32).ctx("stream").to(
        (x, out, stream) => {
          same = x.data === out.data;
          using s = Stream.wrap(stream);
          if (!same) {
            DeviceMemory.wrap(out.data, out.byteSize)
              .copyFromDeviceAsync(DeviceMemory.wrap(x.data, x.byteSize), s);
          }
        },
      );
      const before = standin!.standin_live_allocations();
      const x = { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] };
      const [y] = await rt.ffiCall(copy, { args: [x], results: [like(x)] });
      assert.equal(same, false);
      assertArrayEqual({ data: y!, shape: [2, 3] }, [[1, 2, 3], [4, 5, 6]]);
      const [z] = await rt.ffiCall(copy, {
        args: [x],
        results: [like(x)],
        inputOutputAliases: { 0: 0 },
      });
      assert.equal(same, true, "an aliased result is its argument's device buffer");
      assertArrayEqual(z!, [1, 2, 3, 4, 5, 6]);
      // Layouts: the device copy of an argument is in its layout; a result comes back row-major.
      const [stored] = await rt.ffiCall(copy, {
        args: [x],
        results: [{ dtype: DataType.F32, shape: [6] }],
        inputLayouts: [[1, 0]],
      });
      assertArrayEqual(stored!, [1, 4, 2, 5, 3, 6]);
      const [back] = await rt.ffiCall(copy, {
        args: [x],
        results: [like(x)],
        inputOutputAliases: { 0: 0 },
        inputLayouts: [[1, 0]],
        outputLayouts: [[1, 0]],
      });
      assertArrayEqual(back!, [1, 2, 3, 4, 5, 6]);
      assert.equal(standin!.standin_live_allocations(), before, "every device buffer was freed");
    } finally {
      _useDriverLibrary(undefined);
    }
  },
});
