/**
 * Checks of the bench's TS handler contender, run as a child process by
 * tests/bench_contenders_test.ts: the TS handler host belongs to one JS
 * thread per process, and `deno test` may run later test modules on other
 * threads, so modules of the suite must not host handlers for this one.
 * Prints one line per check and exits non-zero on the first failure.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DataType } from "../src/abi/enums.ts";
import { Ffi } from "../src/handler/binding.ts";
import { Runtime } from "../src/runtime/runtime.ts";
import { CallFrameBuilder } from "../src/runtime/call_frame.ts";
import { drive, FRAMES, openBenchLibrary } from "../bench/bench_lib.ts";
import { frameDigest, readFrameForDigest } from "../bench/digest.ts";
import { TsHandlers } from "../bench/ts_handlers.ts";

using lib = openBenchLibrary();
using ctxFrame = new CallFrameBuilder().build(); // a context of the embedded runtime
lib.symbols.bench_frame_set_context(
  Runtime.api,
  new Deno.UnsafePointerView(ctxFrame.pointer).getPointer(24),
);
{
  using ts = new TsHandlers();
  for (const f of FRAMES) {
    const frame = lib.symbols.bench_frame(f.id)!;
    // Every value exact, the large frame's u64 attributes beyond 2^53 included (bound as u64n).
    const want = readFrameForDigest(frame);
    for (const threads of [0, 1, 2]) {
      ts.reset(f.id);
      assert.throws(() => ts.digest(f.id), /no decode/);
      assert.ok(await drive(lib, ts.pointer(f.id), f.id, 3, threads) > 0);
      assert.equal(ts.digest(f.id), frameDigest(want), `${f.name}, ${threads} threads`);
      console.log(`digest ${f.name} ${threads}`);
    }
  }
}
{
  // The small frame's argument is F32: an F64 binding fails to decode, and
  // with the API in the frame the failure reaches the driver.
  using wrong = Ffi.bind().arg(DataType.F64).to(() => {});
  for (const threads of [0, 1]) {
    await assert.rejects(() => drive(lib, wrong.pointer, 1, 2, threads), /2 of 2 calls failed/);
    console.log(`failure ${threads}`);
  }
}
lib.symbols.bench_frame_set_context(null, null);
