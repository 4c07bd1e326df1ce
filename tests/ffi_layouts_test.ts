/**
 * The relayout behind ffiCall's `inputLayouts`/`outputLayouts` on the
 * embedded runtime, against a plain reference: every permutation up to rank
 * 4, element widths 1 to 16 bytes, unaligned views; and the check's
 * default path. The layouts on both hosts are tests/_host_cases.ts `layouts`.
 */
import assert from "node:assert/strict";
import { DataType, ErrorCode, Ffi, FfiError, HandlerBundle, Runtime } from "../mod.ts";
import {
  _argsInLayout,
  _checkLayouts,
  _relayout,
  _resultsFromLayout,
} from "../src/runtime/_layout.ts";

/** All permutations of 0..n-1. */
function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  const out: number[][] = [];
  for (const p of permutations(n - 1)) {
    for (let i = 0; i <= p.length; i++) out.push([...p.slice(0, i), n - 1, ...p.slice(i)]);
  }
  return out;
}

/** The element at row-major index `i` of `shape`, for the layout's memory order (reference). */
function referenceLayout(
  src: Uint8Array,
  shape: readonly number[],
  width: number,
  layout: readonly number[],
): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  const out = new Uint8Array(count * width);
  const strides = shape.map((_, k) => shape.slice(k + 1).reduce((a, b) => a * b, 1));
  const dims = layout.map((k) => shape[k]!);
  for (let p = 0; p < count; p++) {
    // p's index in the layout's dims (major to minor), then its row-major offset.
    let rest = p, logical = 0;
    for (let k = dims.length - 1; k >= 0; k--) {
      const i = rest % dims[k]!;
      rest = Math.floor(rest / dims[k]!);
      logical += i * strides[layout[k]!]!;
    }
    out.set(src.subarray(logical * width, (logical + 1) * width), p * width);
  }
  return out;
}

Deno.test("relayout: every permutation to rank 4, widths 1-16, unaligned views, both ways", () => {
  const shapes = [[5], [2, 3], [3, 1, 4], [2, 3, 1, 2], [2, 0, 3]];
  for (const shape of shapes) {
    const count = shape.reduce((a, b) => a * b, 1);
    for (const width of [1, 2, 4, 8, 16]) {
      for (const offset of [0, 1, 2, 4]) {
        const backing = new Uint8Array(count * width + 8);
        for (let i = 0; i < backing.length; i++) backing[i] = (i * 37 + 11) & 255;
        const src = backing.subarray(offset, offset + count * width);
        for (const layout of permutations(shape.length)) {
          const what = `shape [${shape}] width ${width} offset ${offset} layout [${layout}]`;
          const out = new Uint8Array(count * width + offset).subarray(offset);
          _relayout(src, out, shape, width, layout, true);
          assert.deepEqual(out, referenceLayout(src, shape, width, layout), what);
          const back = new Uint8Array(count * width + 3).subarray(3);
          _relayout(out, back, shape, width, layout, false);
          assert.deepEqual(back, src, what);
        }
      }
    }
  }
});

Deno.test("relayout: NaN payloads and signed zeros move bit for bit", () => {
  const bits = new Uint32Array([0x7fa00001, 0x80000000, 0xffc00123, 0x00000001, 0x7f800000, 3]);
  const src = new Uint8Array(bits.buffer);
  const out = new Uint8Array(src.length);
  _relayout(src, out, [2, 3], 4, [1, 0], true);
  assert.deepEqual(
    [...new Uint32Array(out.buffer)],
    [0x7fa00001, 0x00000001, 0x80000000, 0x7f800000, 0xffc00123, 3],
  );
});

Deno.test("layouts: the default path is untouched; row-major layouts are no layouts", () => {
  const args = [{ dtype: DataType.F32, shape: [2, 3], bytes: new Uint8Array(24) }];
  const specs = [{ dtype: DataType.F32, shape: [2, 3] }];
  assert.equal(_checkLayouts(undefined, undefined, args, specs, []), null);
  assert.equal(_checkLayouts([[0, 1]], [null], args, specs, [[0, 0]]), null);
  // A scalar's only layout is [].
  assert.equal(_checkLayouts([[]], undefined, [{ shape: [] }], [], []), null);
  // Nothing copied for a row-major operand next to a column-major one.
  const two = [...args, { dtype: DataType.F32, shape: [3, 2], bytes: new Uint8Array(24) }];
  const mixed = _checkLayouts([null, [1, 0]], [[0, 1]], two, specs, [])!;
  assert.deepEqual(mixed, { inputs: [null, [1, 0]], outputs: [null] });
  const moved = _argsInLayout(two, mixed);
  assert.equal(moved[0], two[0]);
  assert.notEqual(moved[1]!.bytes, two[1]!.bytes);
  const outs = [new Float32Array(6)];
  assert.equal(_resultsFromLayout(outs, specs, mixed)[0], outs[0]);
});

Deno.test("Runtime.ffiCall layouts: S8 and C128 operands, bundles keep one instance per layout", async () => {
  using rt = new Runtime({ threads: 0 });
  using copy = Ffi.bind().arg(DataType.S8).ret(DataType.S8).to((a, b) => {
    b.typed().set(a.typed());
  });
  const [s8] = await rt.ffiCall(copy, {
    args: [{ data: new Int8Array([1, -2, 3, -4, 5, -6]), shape: [3, 2] }],
    results: [{ dtype: DataType.S8, shape: [6] }],
    inputLayouts: [[1, 0]],
  });
  assert.deepEqual([...s8!], [1, 3, 5, -2, -4, -6]);
  using copy128 = Ffi.bind().arg(DataType.C128).ret(DataType.C128).to((a, b) => {
    b.typed().set(a.typed());
  });
  const [c] = await rt.ffiCall(copy128, {
    args: [{
      data: new Float64Array([1, -1, 2, -2, 3, -3, 4, -4]),
      shape: [2, 2],
      dtype: DataType.C128,
    }],
    results: [{ dtype: DataType.C128, shape: [2, 2] }],
    outputLayouts: [[1, 0]],
  });
  // Written in memory order (1, 2, 3, 4) as columns: [[1, 3], [2, 4]].
  assert.deepEqual([...c!], [1, -1, 3, -3, 2, -2, 4, -4]);
  // A kept instance per signature, the layouts part of it (XLA: one per call site).
  using bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().to(() => ({ count: 0 })),
    execute: Ffi.bind().arg(DataType.F32).ret(DataType.S64, 0).state<{ count: number }>().to(
      (_x, out, s) => {
        out.typed()[0] = BigInt(++s.count);
      },
    ),
  });
  const count = async (inputLayouts?: number[][]) =>
    (await rt.ffiCall(bundle, {
      args: [{ data: new Float32Array(4), shape: [2, 2] }],
      results: [{ dtype: DataType.S64, shape: [] }],
      inputLayouts,
    }))[0]![0];
  assert.deepEqual(
    [await count(), await count(), await count([[1, 0]]), await count([[0, 1]]), await count()],
    [1n, 2n, 1n, 3n, 4n], // [[0, 1]] is row-major: no layouts,
  );
  await assert.rejects(
    rt.ffiCall(copy, {
      args: [new Int8Array(2)],
      results: [{ dtype: DataType.S8, shape: [2] }],
      outputLayouts: [[0], [0]],
    }),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      e.message === "ffiCall: outputLayouts has 2 layouts but there is 1 result",
  );
});
