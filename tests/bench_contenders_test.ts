import assert from "node:assert/strict";
import { NativeHandler } from "../src/runtime/handler_library.ts";
import { Runtime } from "../src/runtime/runtime.ts";
import { FRAMES, openBenchLibrary } from "../bench/bench_lib.ts";
import { frameDigest, readFrameForDigest } from "../bench/digest.ts";
import { mirrorFrame } from "../bench/runtime_frames.ts";
import { runDeno } from "./_child.ts";

Deno.test("the bench's TS handlers decode every frame to the C floor's values; failures count", async () => {
  // In a child process: see tests/_bench_ts_check.ts.
  const out = await runDeno(new URL("./_bench_ts_check.ts", import.meta.url));
  const text = out.stdout;
  assert.ok(out.code === 0, text + out.stderr);
  const lines = text.trim().split("\n");
  const want = FRAMES.flatMap((f) => [0, 1, 2].map((t) => `digest ${f.name} ${t}`));
  assert.deepEqual(lines, [...want, "failure 0", "failure 1"]);
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
