/**
 * What `FfiBuffer.typed()` costs for a buffer at an address it has not seen
 * lately (a call of a jitted program in a loop gets its output at one of the
 * last 4096 addresses nine times in ten, and `typed()` then reuses its view):
 * the view as made now (an offset from one pointer made once) against the
 * baseline it replaced (a pointer object from a BigInt per view), the parts
 * (the pointer alone, the external ArrayBuffer alone), and a view kept for
 * an address seen before. 65536 addresses in turn (more than `typed()`
 * keeps), 32 bytes each (8 f32); the kept view: 16 addresses in turn.
 *
 * Run: deno bench --allow-ffi bench/typed_view_bench.ts
 *
 * @module
 */
import { DataType } from "../src/abi/enums.ts";
import { FfiBuffer } from "../src/handler/buffer.ts";

const memory = new Uint8Array(65536 * 64);
const base = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(memory)));
const addr = (i: number) => base + (i & 65535) * 64;
const one = Deno.UnsafePointer.create(1n)!;
let sink: unknown;
let i = 0;

Deno.bench("fresh view: FfiBuffer.typed() (offset from one pointer)", {
  group: "view",
}, () => {
  sink = new FfiBuffer(DataType.F32, addr(i++), [8]).typed();
});

Deno.bench("fresh view: pointer from a BigInt, then getArrayBuffer", {
  group: "view",
  baseline: true,
}, () => {
  const p = Deno.UnsafePointer.create(BigInt(addr(i++)));
  sink = new Float32Array(Deno.UnsafePointerView.getArrayBuffer(p!, 32));
});

Deno.bench("kept view: FfiBuffer.typed() at an address seen before", {
  group: "view",
}, () => {
  sink = new FfiBuffer(DataType.F32, base + (i++ & 15) * 64, [8]).typed();
});

Deno.bench("part: pointer object from a BigInt", { group: "parts" }, () => {
  sink = Deno.UnsafePointer.create(BigInt(addr(i++)));
});

Deno.bench("part: external ArrayBuffer at an offset", { group: "parts" }, () => {
  sink = Deno.UnsafePointerView.getArrayBuffer(one, 32, addr(i++) - 1);
});

Deno.bench("part: Float32Array over an existing ArrayBuffer", { group: "parts" }, () => {
  sink = new Float32Array(memory.buffer, (i++ & 65535) * 64, 8);
});

globalThis.addEventListener("unload", () => void sink);
