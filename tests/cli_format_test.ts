import assert from "node:assert/strict";
import { DataType, ErrorCode, ExecutionStage } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import {
  formatArray,
  formatDuration,
  formatElement,
  formatRunJson,
  formatShape,
  formatTiming,
  ProgressLine,
  type ProgressSink,
  summarizeTimings,
} from "../src/cli/format.ts";

Deno.test("elements: shortest round-trip text per type", () => {
  assert.equal(formatElement(DataType.F32, Math.fround(0.1)), "0.1");
  assert.equal(formatElement(DataType.F64, Math.fround(0.1)), "0.10000000149011612");
  assert.equal(formatElement(DataType.F32, 1), "1.0");
  assert.equal(formatElement(DataType.F32, -0), "-0.0");
  assert.equal(formatElement(DataType.F32, 1e30), "1e+30");
  assert.equal(formatElement(DataType.F32, NaN), "nan");
  assert.equal(formatElement(DataType.F64, -Infinity), "-inf");
  assert.equal(formatElement(DataType.F16, 0.0999755859375), "0.1"); // f16(0.1)
  assert.equal(formatElement(DataType.BF16, 0.10009765625), "0.1"); // bf16(0.1)
  assert.equal(formatElement(DataType.BF16, 3.140625), "3.14"); // bf16(pi)
  assert.equal(formatElement(DataType.S32, -7), "-7");
  assert.equal(formatElement(DataType.S64, 2n ** 63n - 1n), "9223372036854775807");
  assert.equal(formatElement(DataType.PRED, 1), "true");
  assert.equal(formatElement(DataType.PRED, false), "false");
  assert.equal(formatElement(DataType.C64, 1.5, -2), "1.5-2.0j");
  assert.equal(formatElement(DataType.C128, 0, 3), "0.0+3.0j");
  assert.equal(formatShape(DataType.BF16, [2, 3]), "bf16[2,3]");
  assert.equal(formatShape(DataType.F32, []), "f32[]");
});

Deno.test("arrays: scalars, rows, nested brackets, padding", () => {
  assert.equal(formatArray({ dtype: DataType.F32, dims: [], values: [2.5] }), "2.5");
  assert.equal(
    formatArray({ dtype: DataType.S32, dims: [3], values: [1, -20, 3] }),
    "[  1, -20,   3]",
  );
  assert.equal(
    formatArray({
      dtype: DataType.F32,
      dims: [2, 3],
      values: new Float32Array([1, 2, 3, 4, 5, 6]),
    }),
    "[[1.0, 2.0, 3.0],\n [4.0, 5.0, 6.0]]",
  );
  assert.equal(
    formatArray({ dtype: DataType.S8, dims: [2, 2, 2], values: [1, 2, 3, 4, 5, 6, 7, 8] }),
    "[[[1, 2],\n  [3, 4]],\n\n [[5, 6],\n  [7, 8]]]",
  );
  assert.equal(
    formatArray({ dtype: DataType.PRED, dims: [2], values: new Uint8Array([1, 0]) }),
    "[ true, false]",
  );
  assert.equal(
    formatArray({ dtype: DataType.C64, dims: [2], values: [1, 2, 3, -4] }),
    "[1.0+2.0j, 3.0-4.0j]",
  );
  assert.equal(formatArray({ dtype: DataType.F32, dims: [0], values: [] }), "[]");
  assert.equal(formatArray({ dtype: DataType.F32, dims: [2, 0], values: [] }), "[]");
  assert.equal(
    formatArray({ dtype: DataType.S64, dims: [2], values: new BigInt64Array([1n, -1n]) }),
    "[ 1, -1]",
  );
  assert.throws(
    () => formatArray({ dtype: DataType.F32, dims: [2, 2], values: [1, 2, 3] }),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      /f32\[2,2\] needs 4 values, got 3/.test(e.message),
  );
});

Deno.test("arrays: big ones keep 3 at each end of every axis", () => {
  const v = Int32Array.from({ length: 2000 }, (_, i) => i);
  assert.equal(
    formatArray({ dtype: DataType.S32, dims: [2000], values: v }),
    "[   0,    1,    2, ..., 1997, 1998, 1999]",
  );
  const m = formatArray({ dtype: DataType.S32, dims: [40, 50], values: v });
  assert.equal(
    m,
    [
      "[[   0,    1,    2, ...,   47,   48,   49],",
      " [  50,   51,   52, ...,   97,   98,   99],",
      " [ 100,  101,  102, ...,  147,  148,  149],",
      " ...,",
      " [1850, 1851, 1852, ..., 1897, 1898, 1899],",
      " [1900, 1901, 1902, ..., 1947, 1948, 1949],",
      " [1950, 1951, 1952, ..., 1997, 1998, 1999]]",
    ].join("\n"),
  );
  // An axis no longer than 2×3 is not elided even in a big array.
  const t = formatArray({ dtype: DataType.S32, dims: [1000, 2], values: v });
  assert.ok(
    t.startsWith("[[   0,    1],\n [   2,    3],\n [   4,    5],\n ...,\n [1994, 1995],"),
  );
  // Thresholds and edge items are options.
  assert.equal(
    formatArray({ dtype: DataType.S32, dims: [10], values: v.subarray(0, 10) }, {
      threshold: 5,
      edgeItems: 1,
    }),
    "[0, ..., 9]",
  );
  // At the threshold nothing is elided.
  const full = formatArray({ dtype: DataType.S32, dims: [1000], values: v.subarray(0, 1000) });
  assert.ok(!full.includes("..."));
  assert.ok(full.startsWith("[  0,   1,"), full.slice(0, 20));
});

Deno.test("arrays: long rows wrap at the line width, aligned under the bracket", () => {
  const v = Float64Array.from({ length: 30 }, (_, i) => i / 4);
  const text = formatArray({ dtype: DataType.F64, dims: [2, 15], values: v }, { lineWidth: 40 });
  for (const line of text.split("\n")) assert.ok(line.length <= 41, line);
  assert.ok(text.startsWith("[[ 0.0, 0.25,  0.5, 0.75,  1.0, 1.25,\n   1.5,"), text);
  assert.match(text, /\],\n \[3\.75,/);
});

Deno.test("timing: median, min, max, mean, units", () => {
  assert.deepEqual(summarizeTimings([5, 1, 3]), {
    calls: 3,
    medianMs: 3,
    minMs: 1,
    maxMs: 5,
    meanMs: 3,
  });
  assert.equal(summarizeTimings([4, 1, 2, 3]).medianMs, 2.5);
  assert.throws(() => summarizeTimings([]), FfiError);
  assert.throws(() => summarizeTimings([1, -1]), /invalid call time -1 ms/);
  assert.throws(() => summarizeTimings([NaN]), FfiError);
  assert.equal(formatDuration(0.000012), "12.0 ns");
  assert.equal(formatDuration(0.5), "500 µs");
  assert.equal(formatDuration(0.00123), "1.23 µs");
  assert.equal(formatDuration(12.34), "12.3 ms");
  assert.equal(formatDuration(2500), "2.50 s");
  assert.equal(
    formatTiming(summarizeTimings([1])),
    "1 call: median 1.00 ms, min 1.00 ms, max 1.00 ms, mean 1.00 ms",
  );
});

class FakeSink implements ProgressSink {
  text = "";
  constructor(readonly tty: boolean, readonly chunk = 1 << 30) {}
  writeSync(p: Uint8Array): number {
    const n = Math.min(this.chunk, p.length);
    this.text += new TextDecoder().decode(p.subarray(0, n));
    return n;
  }
  isTerminal(): boolean {
    return this.tty;
  }
}

Deno.test("progress: redrawn in place on a terminal, throttled, erased at the end", () => {
  let t = 0;
  const sink = new FakeSink(true, 7); // partial writes are completed
  {
    using p = new ProgressLine(100, { sink, now: () => t });
    assert.equal(p.terminal, true);
    p.update(1); // too soon: nothing
    assert.equal(sink.text, "");
    t = 150;
    p.update(10);
    t = 200;
    p.update(20); // 50 ms after the last draw: skipped
    t = 300;
    p.update(50);
  }
  assert.equal(
    sink.text,
    "\rcalls 10/100 (10%), 150 ms elapsed, ~1.35 s left\x1b[K" +
      "\rcalls 50/100 (50%), 300 ms elapsed, ~300 ms left\x1b[K" +
      "\r\x1b[K",
  );
});

Deno.test("progress: plain lines every 10 s when not a terminal, nothing for short runs", () => {
  let t = 0;
  const quiet = new FakeSink(false);
  const short = new ProgressLine(1000, { sink: quiet, now: () => t });
  for (let i = 1; i <= 1000; i++) {
    t = i * 5; // 5 s in all
    short.update(i);
  }
  short.close();
  assert.equal(quiet.text, "");
  t = 0;
  const sink = new FakeSink(false);
  const long = new ProgressLine(4, { sink, now: () => t, label: "runs" });
  for (let i = 1; i <= 4; i++) {
    t = i * 6000;
    long.update(i);
  }
  long.close();
  assert.equal(
    sink.text,
    "runs 2/4 (50%), 12.0 s elapsed, ~12.0 s left\nruns 4/4 (100%), 24.0 s elapsed\n",
  );
  assert.ok(!sink.text.includes("\r"));
});

Deno.test("progress: a failing sink stops output without throwing", () => {
  let t = 0;
  let calls = 0;
  const sink: ProgressSink = {
    writeSync() {
      calls++;
      throw new Deno.errors.BrokenPipe("closed");
    },
    isTerminal: () => true,
  };
  const p = new ProgressLine(10, { sink, now: () => t });
  t = 1000;
  p.update(1);
  t = 2000;
  p.update(2);
  p.close();
  assert.equal(calls, 1);
});

Deno.test("JSON report: shape, special values, 64-bit integers, files, errors", () => {
  const text = formatRunJson({
    target: "./lib.so",
    handler: "h",
    stage: ExecutionStage.EXECUTE,
    platform: "host",
    results: [
      {
        kind: "buffer",
        dtype: DataType.F32,
        dims: [2, 2],
        values: [1.5, NaN, Infinity, -Infinity],
      },
      { kind: "buffer", dtype: DataType.S64, dims: [2], values: [2n ** 62n + 1n, -1n] },
      { kind: "buffer", dtype: DataType.PRED, dims: [2], values: new Uint8Array([1, 0]) },
      { kind: "buffer", dtype: DataType.C64, dims: [1], values: [1, -2] },
      { kind: "buffer", dtype: DataType.S32, dims: [3], values: [], file: "y.npy" },
      { kind: "token" },
    ],
    timing: summarizeTimings([1, 2, 3]),
  });
  assert.ok(!text.includes("\n"));
  assert.ok(text.includes('"values":[4611686018427387905,-1]'), text);
  const obj = JSON.parse(text);
  assert.equal(obj.stage, "execute");
  assert.equal(obj.platform, "host");
  assert.deepEqual(obj.results[0], {
    index: 0,
    dtype: "f32",
    shape: [2, 2],
    values: [1.5, "nan", "inf", "-inf"],
  });
  assert.deepEqual(obj.results[2].values, [true, false]);
  assert.deepEqual(obj.results[3].values, [[1, -2]]);
  assert.deepEqual(obj.results[4], { index: 4, dtype: "s32", shape: [3], file: "y.npy" });
  assert.deepEqual(obj.results[5], { index: 5, dtype: "token" });
  assert.deepEqual(obj.timing, { calls: 3, medianMs: 2, minMs: 1, maxMs: 3, meanMs: 2 });
  assert.equal(obj.error, null);
  const failed = JSON.parse(formatRunJson({
    target: "m.ts",
    handler: "h",
    stage: ExecutionStage.PREPARE,
    platform: "cuda",
    results: [],
    error: { code: ErrorCode.INVALID_ARGUMENT, message: "Wrong number of arguments" },
  }));
  assert.deepEqual(failed.error, {
    code: "INVALID_ARGUMENT",
    message: "Wrong number of arguments",
  });
  assert.equal(failed.timing, null);
  assert.equal(failed.stage, "prepare");
});
