/**
 * The handler fuzzer as it meets handlers that validate their inputs:
 * attribute hints that pin a value, give a set of choices or a range, or
 * leave the value free (`--attr NAME=TYPE:VALUE|{…}|[LO,HI]|*`); LAPACK-style
 * option characters drawn for u8 attributes. TS handlers, fuzzed in this
 * process (no compiler, no jax needed).
 */
import assert from "node:assert/strict";
import { DataType, Ffi, FfiError } from "../mod.ts";
import { formatFuzzReport, fuzzHandler } from "../src/testing/mod.ts";

const D = DataType;

Deno.test("fuzzer attrs: choices are drawn, characters allowed, no run refused", async () => {
  const seen = new Set<number>();
  using potrf = Ffi.bind().arg(D.F32).ret(D.F32).attr("uplo", "u8").to((x, y, uplo) => {
    seen.add(uplo);
    if (uplo !== 76 && uplo !== 85) throw new FfiError(3, `parameter 1 illegal: ${uplo}`);
    y.typed().set(x.typed());
  });
  const report = await fuzzHandler(potrf, {
    runs: 60,
    seed: 1,
    results: ["like:0"],
    attrs: ["uplo=u8:{'L','U'}"],
  });
  assert.deepEqual(report.failures, [], formatFuzzReport(report));
  assert.equal(report.rejected, 0);
  assert.deepEqual([...seen].sort(), [76, 85]);
  // Numbers work as well as characters.
  seen.clear();
  const numeric = await fuzzHandler(potrf, { runs: 30, attrs: ["uplo=u8:{76,85}"] });
  assert.equal(numeric.rejected, 0);
  assert.deepEqual([...seen].sort(), [76, 85]);
});

Deno.test("fuzzer attrs: a u8 attribute without a hint often gets an option character", async () => {
  const seen = new Set<number>();
  using h = Ffi.bind().arg(D.F32).ret(D.F32).attr("jobz", "u8").to((_x, _y, jobz) => {
    seen.add(jobz);
  });
  await fuzzHandler(h, { runs: 60, seed: 1 });
  assert.ok(seen.has("N".charCodeAt(0)) || seen.has("V".charCodeAt(0)), [...seen].join(","));
});

Deno.test("fuzzer attrs: a value pins, a range bounds, '*' leaves the value free", async () => {
  const alphas: number[] = [] as number[];
  using scale = Ffi.bind().arg(D.F32).ret(D.F32).attr("alpha", "f32").to((x, y, alpha) => {
    alphas.push(alpha);
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
  });
  await fuzzHandler(scale, { runs: 30, attrs: ["alpha=f32:2.5"] });
  assert.ok(alphas.length > 0 && alphas.every((a) => a === 2.5 as number), alphas.join(","));
  alphas.length = 0;
  await fuzzHandler(scale, { runs: 60, attrs: ["alpha=f32:[0.1,10]"] });
  assert.ok(alphas.every((a) => a >= Math.fround(0.1) && a <= 10), alphas.join(","));
  const ends = [10, Math.fround(0.1)];
  assert.ok(ends.every((e) => alphas.includes(e)), alphas.join(","));
  assert.ok(new Set(alphas).size > 5);
  alphas.length = 0;
  await fuzzHandler(scale, { runs: 60, attrs: ["alpha=f32:*"] });
  assert.ok(alphas.some((a) => Number.isNaN(a) || a < 0 || a > 10), alphas.join(","));
  // An integer range: its ends and what is between.
  const ks: bigint[] = [];
  using pick = Ffi.bind().arg(D.F32).ret(D.F32).attr("k", "i64").to((_x, _y, k) => {
    ks.push(BigInt(k));
  });
  await fuzzHandler(pick, { runs: 60, attrs: ["k=s64:[-3,4]"] });
  assert.ok(ks.every((k) => k >= -3n && k <= 4n), ks.join(","));
  assert.ok(ks.includes(-3n) && ks.includes(4n));
});

Deno.test("fuzzer attrs: a failure inside a domain shrinks inside it", async () => {
  let calls = 0;
  using h = Ffi.bind().arg(D.F32, 1).ret(D.F32, 1).attr("mode", "i32").to((_x, y, mode) => {
    const ys = y.typed();
    if (ys.length > 0) ys[0] = mode === 7 ? calls++ : 0;
  });
  const report = await fuzzHandler(h, { runs: 80, attrs: ["mode=s32:{5,7,9}"] });
  assert.equal(report.failures.length, 1, formatFuzzReport(report));
  assert.equal(report.failures[0]!.kind, "nondeterministic");
  const mode = report.failures[0]!.case.attrs.entries.get("mode") as { value: number };
  assert.equal(mode.value, 7);
});

Deno.test("fuzzer attrs: bad domains are FfiErrors naming the attribute", async () => {
  using h = Ffi.bind().arg(D.F32).ret(D.F32).attr("k", "i32").to(() => {});
  for (
    const [hint, re] of [
      ["k=s32:{}", /--attr k: no choices/],
      ["k=s32:[4,1]", /--attr k: a range is \[LO,HI\]/],
      ["k=s32:[1,2,3]", /--attr k: a range is \[LO,HI\]/],
      ["k=s32:{'\u4e2d'}", /not one byte/],
      ["k=s32[]:{1}", /choices and ranges are for scalars/],
      ["k=s32:{1,x}", /--attr k/],
    ] as const
  ) {
    await assert.rejects(
      fuzzHandler(h, { runs: 1, attrs: [hint] }),
      (e) => e instanceof FfiError && re.test(e.message),
      hint,
    );
  }
});

Deno.test("fuzzer args: argValues keeps indices in range and indptr sorted; valid skips calls", async () => {
  let garbage = 0;
  let outOfRange = 0;
  // y[i] = x[indices[i]]; an index out of range reads garbage (a different value each call).
  using gather = Ffi.bind().arg(D.F32, 1).arg(D.S32, 1).ret(D.F32, 1).to((x, idx, y) => {
    const xs = x.typed(), is = idx.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) {
      const k = is[i]!;
      if (k < 0 || k >= xs.length) outOfRange++;
      ys[i] = k >= 0 && k < xs.length ? xs[k]! : garbage++;
    }
  });
  const results = ["f32[$1.0]"];
  const loose = await fuzzHandler(gather, { runs: 100, seed: 1, results });
  assert.ok(loose.failures.some((f) => f.kind === "nondeterministic"), formatFuzzReport(loose));
  outOfRange = 0;
  const kept = await fuzzHandler(gather, {
    runs: 200,
    seed: 1,
    results,
    argValues: [undefined, { indexInto: [0, 0] }],
    // An empty x has no index to give.
    valid: (args) => args[0]!.shape[0]! > 0 || args[1]!.shape[0] === 0,
  });
  assert.deepEqual(kept.failures, [], formatFuzzReport(kept));
  assert.equal(outOfRange, 0);
  assert.ok((kept.skipped ?? 0) > 0);
  // Sorted within a range, and what valid gets: typed arrays, plain attributes.
  const seen: number[][] = [];
  using csr = Ffi.bind().arg(D.S64, 1).ret(D.S64, 1).attr("n", "i32").to((p, _y) => {
    seen.push(Array.from(p.typed(), Number));
  });
  let validCalls = 0;
  await fuzzHandler(csr, {
    runs: 60,
    seed: 1,
    attrs: ["n=s32:[1,5]"],
    argValues: [{ min: 0, max: 9, sorted: true }],
    valid: (args, attrs) => {
      validCalls++;
      assert.ok(args[0]!.data instanceof BigInt64Array);
      assert.equal(typeof attrs.n, "number");
      return true;
    },
  });
  assert.ok(validCalls > 0 && seen.length > 0);
  for (const p of seen) {
    assert.ok(p.every((v, i) => v >= 0 && v <= 9 && (i === 0 || p[i - 1]! <= v)), p.join(","));
  }
  // Offsets into a dimension: CSR row pointers from 0 to the number of values, ascending.
  const rows: { nnz: number; indptr: number[] }[] = [];
  using offsets = Ffi.bind().arg(D.F32, 1).arg(D.S32, 1).ret(D.F32, 1).to((v, p, _y) => {
    rows.push({ nnz: v.elementCount, indptr: Array.from(p.typed()) });
  });
  await fuzzHandler(offsets, {
    runs: 60,
    seed: 1,
    results: ["like:0"],
    argValues: [undefined, { offsetsInto: [0, 0] }],
  });
  assert.ok(rows.some((r) => r.indptr.length > 1 && r.nnz > 0), JSON.stringify(rows));
  for (const { nnz, indptr } of rows) {
    const what = `${nnz}: ${indptr.join(",")}`;
    assert.ok(indptr.every((v, i) => v >= 0 && v <= nnz && (i === 0 || indptr[i - 1]! <= v)), what);
    if (indptr.length > 1) assert.ok(indptr[0] === 0 && indptr.at(-1) === nnz, what);
  }
});
