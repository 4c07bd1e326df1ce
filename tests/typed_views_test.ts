/**
 * `FfiBuffer.typed()` reuses the view it made for an address seen before
 * (XLA hands a handler the same few buffers call after call), but only for
 * the same bytes seen as the same type.
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, Ffi, Runtime } from "../mod.ts";

Deno.test("typed(): the same address, type and size give the same view; anything else a new one", () => {
  using rt = new Runtime({ threads: 0 });
  const seen: ArrayBufferView[] = [];
  using keep = Ffi.bind().arg().to((x) => {
    seen.push(x.typed());
  });
  const bytes = new Uint8Array(16);
  const call = (data: ArrayBufferView, dims: number[], dtype: DataType) => {
    using frame = new CallFrameBuilder().arg(data, dims, dtype).build();
    rt.callSync(keep, frame);
    return seen[seen.length - 1]!;
  };
  // Other dims each time, so that each call decodes a new buffer (an unchanged one is reused).
  call(bytes, [4], DataType.F32); // an address seen once: its view is not kept
  const f32 = call(bytes, [2, 2], DataType.F32); // seen again: kept from now on
  assert.ok(f32 instanceof Float32Array && f32.length === 4);
  assert.equal(call(bytes, [1, 4], DataType.F32), f32); // kept: dims are not the view's
  assert.equal(call(bytes, [4, 1], DataType.F32), f32);
  const s32 = call(bytes, [4], DataType.S32); // another type
  assert.ok(s32 instanceof Int32Array && s32.length === 4);
  const f64 = call(bytes, [2], DataType.F64);
  assert.ok(f64 instanceof Float64Array && f64.length === 2);
  const f32Short = call(bytes.subarray(0, 8), [2], DataType.F32); // fewer bytes, same address
  assert.equal(f32Short.byteLength, 8);
  assert.notEqual(f32Short, f32);
  // Writes through a kept view reach the memory the frame points at.
  using fill = Ffi.bind().ret(DataType.F32).to((y) => void y.typed().fill(7));
  const out = new Float32Array(4);
  for (let i = 0; i < 2; i++) {
    out.fill(0);
    using frame = new CallFrameBuilder().ret(out).build();
    rt.callSync(fill, frame);
    assert.deepEqual([...out], [7, 7, 7, 7]);
  }
});

Deno.test("typed(): a loop's hundreds of output addresses in turn keep their views", () => {
  // A jitted call in a loop from a Python worker gets its output at one of about 600 addresses,
  // each back a few hundred calls later: each address's view is made twice at most.
  using rt = new Runtime({ threads: 0 });
  let last: ArrayBufferView | undefined;
  using keep = Ffi.bind().ret(DataType.F32).to((y) => {
    last = y.typed();
  });
  const ADDRESSES = 600, STRIDE = 0x6c0; // the stride of that loop's outputs
  const memory = new Uint8Array(ADDRESSES * STRIDE);
  const pass = () =>
    Array.from({ length: ADDRESSES }, (_, i) => {
      using frame = new CallFrameBuilder().ret(
        new Float32Array(memory.buffer, i * STRIDE, 8),
      ).build();
      rt.callSync(keep, frame);
      return last!;
    });
  pass();
  const second = pass(), third = pass();
  const same = second.filter((v, i) => v === third[i]).length;
  assert.ok(same >= 0.9 * ADDRESSES, `${same} of ${ADDRESSES} views kept`);
  // A view of more than 64 KiB is made anew each time.
  using big = Ffi.bind().ret(DataType.U8).to((y) => {
    last = y.typed();
  });
  const large = new Uint8Array((64 << 10) + 1);
  // Other dims each time, so that each call decodes a new buffer (an unchanged one is reused).
  const views = [[large.length], [1, large.length], [large.length, 1]].map((dims) => {
    using frame = new CallFrameBuilder().ret(large, dims, DataType.U8).build();
    rt.callSync(big, frame);
    return last!;
  });
  assert.equal(views[2]!.byteLength, large.byteLength);
  assert.notEqual(views[2], views[1]);
});

Deno.test("typed(): a view a handler detached is made anew, in later calls of the same buffer too", () => {
  using rt = new Runtime({ threads: 0 });
  let calls = 0;
  // Each call writes 2x into y through its view; the first call then detaches that view's
  // buffer (ArrayBuffer.prototype.transfer moves the memory to a new ArrayBuffer).
  using h = Ffi.bind().arg(DataType.F32).ret(DataType.F32).to((x, y) => {
    const a = x.typed(), b = y.typed();
    for (let i = 0; i < b.length; i++) b[i] = 2 * a[i]!;
    if (calls++ === 0) (b.buffer as ArrayBuffer).transfer();
  });
  const x = new Float32Array([1, 2, 3, 4]);
  const y = new Float32Array(4);
  // One frame, called again and again: the same buffers, the decoder's reused FfiBuffers.
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  for (let k = 1; k <= 3; k++) {
    y.fill(0);
    x.set([k, k + 1, k + 2, k + 3]);
    rt.callSync(h, frame);
    assert.deepEqual([...y], [2 * k, 2 * k + 2, 2 * k + 4, 2 * k + 6], `call ${k}`);
  }
  assert.equal(calls, 3);
});
