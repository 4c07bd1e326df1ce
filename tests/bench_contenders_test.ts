import assert from "node:assert/strict";
import { DataType } from "../src/abi/enums.ts";
import { Ffi } from "../src/handler/binding.ts";
import { NativeHandler } from "../src/runtime/handler_library.ts";
import { Runtime } from "../src/runtime/runtime.ts";
import { drive, FRAMES, openBenchLibrary } from "../bench/bench_lib.ts";
import { frameDigest, readFrameForDigest } from "../bench/digest.ts";
import { mirrorFrame } from "../bench/runtime_frames.ts";
import { asJsNumbers, TsHandlers } from "../bench/ts_handlers.ts";

Deno.test("the bench's TS handlers decode every frame to the C floor's values", async () => {
  using lib = openBenchLibrary();
  lib.symbols.bench_frame_set_api(Runtime.api);
  using ts = new TsHandlers();
  try {
    for (const f of FRAMES) {
      const frame = lib.symbols.bench_frame(f.id)!;
      const { frame: want, lossy } = asJsNumbers(readFrameForDigest(frame));
      // Only the large frame's u64 attributes are beyond 2^53.
      assert.deepEqual(
        lossy,
        f.id === 2 ? ["k07_u64", "k15_u64", "k23_u64", "k31_u64"] : [],
        f.name,
      );
      for (const threads of [0, 1, 2]) {
        ts.reset(f.id);
        assert.throws(() => ts.digest(f.id), /no decode/);
        assert.ok(await drive(lib, ts.pointer(f.id), f.id, 3, threads) > 0);
        assert.equal(ts.digest(f.id), frameDigest(want), `${f.name}, ${threads} threads`);
      }
    }
  } finally {
    lib.symbols.bench_frame_set_api(null);
  }
});

Deno.test("with the API in the bench frames, a failing TS handler is a failed call", async () => {
  using lib = openBenchLibrary();
  lib.symbols.bench_frame_set_api(Runtime.api);
  // The small frame's argument is F32: an F64 binding fails to decode.
  using wrong = Ffi.bind().arg(DataType.F64).to(() => {});
  try {
    await assert.rejects(() => drive(lib, wrong.pointer, 1, 2, 0), /2 of 2 calls failed/);
    await assert.rejects(() => drive(lib, wrong.pointer, 1, 2, 1), /2 of 2 calls failed/);
  } finally {
    lib.symbols.bench_frame_set_api(null);
  }
});

Deno.test("runtime mirrors of the bench frames hold the same operands; the no-op registers", () => {
  using lib = openBenchLibrary();
  using rt = new Runtime({ threads: 1 });
  rt.register(
    "bench_noop_test",
    new NativeHandler(lib.symbols.bench_c_address(1)!, "bench_noop_handler"),
  );
  const noop = rt.lookup("bench_noop_test").bundle.execute!;
  for (const f of FRAMES) {
    const frame = lib.symbols.bench_frame(f.id)!;
    using m = mirrorFrame(frame);
    assert.equal(
      frameDigest(readFrameForDigest(m.pointer)),
      frameDigest(readFrameForDigest(frame)),
      f.name,
    );
    rt.callSync(noop, m);
  }
});
