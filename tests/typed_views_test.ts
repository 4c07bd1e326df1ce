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
