/**
 * The plans of a program by argument signature (src/xla/_prepared.ts): found
 * by element types and shapes compared by value, one plan per signature;
 * and those of Xla.ffiCall, by name, arguments and options compared by value.
 * Needs no Python: plans are only kept and found here.
 */
import assert from "node:assert/strict";
import { array, DataType, scalar } from "../mod.ts";
import { _attrBytes } from "../src/runtime/attributes.ts";
import { _normaliseArg } from "../src/runtime/ffi_call.ts";
import { _encodeAttrs } from "../src/xla/_codec.ts";
import {
  _FfiPlans,
  type _FfiSignature,
  _Plan,
  _Plans,
  _signatureHash,
} from "../src/xla/_prepared.ts";

const arg = (data: ArrayLike<number>, shape: number[], dtype = DataType.F32) =>
  _normaliseArg({ data: new Float32Array(data), shape, dtype }, "argument");

Deno.test("plans: found by element types and shapes, by value; one per signature", () => {
  const plans = new _Plans();
  const a = [arg([1, 2, 3, 4], [2, 2])];
  assert.equal(plans.find(a), undefined);
  const p = plans.add(new _Plan(1, 10, a), a);
  // Other arrays of the same signature, shapes in new arrays: the same plan.
  assert.equal(plans.find([arg([5, 6, 7, 8], [2, 2])]), p);
  // Another shape, rank, element type or count of arguments: none.
  assert.equal(plans.find([arg([1, 2, 3, 4], [4, 1])]), undefined);
  assert.equal(plans.find([arg([1, 2, 3, 4], [4])]), undefined);
  assert.equal(plans.find([_normaliseArg(new Int32Array(4), "argument")]), undefined);
  assert.equal(plans.find([...a, ...a]), undefined);
  const q = plans.add(new _Plan(1, 11, [arg([1, 2, 3, 4], [4])]), [arg([1, 2, 3, 4], [4])]);
  assert.notEqual(q, p);
  assert.equal(plans.find([arg([0, 0, 0, 0], [4])]), q);
  assert.equal(plans.find(a), p);
  // A plan made meanwhile for a kept signature (two async first calls): the kept one wins.
  assert.equal(plans.add(new _Plan(1, 12, a), a), p);
});

Deno.test("plans: signatures of one hash stay apart", () => {
  // Two 2-d shapes of one hash, found by a search over small shapes.
  const seen = new Map<number, number[]>();
  let pair: [number[], number[]] | undefined;
  for (let x = 0; x < 64 && pair === undefined; x++) {
    for (let y = 0; y < 64 && pair === undefined; y++) {
      const shape = [x, y];
      const h = _signatureHash([{ dtype: DataType.F32, shape, bytes: new Uint8Array(0) }]);
      const other = seen.get(h);
      if (other !== undefined) pair = [other, shape];
      else seen.set(h, shape);
    }
  }
  assert.ok(pair !== undefined, "two 2-d shapes of one hash");
  const [s, t] = pair!;
  const mk = (shape: number[]) => [{ dtype: DataType.F32, shape, bytes: new Uint8Array(0) }];
  const plans = new _Plans();
  const p = plans.add(new _Plan(1, 1, mk(s)), mk(s));
  assert.equal(plans.find(mk(t)), undefined);
  const q = plans.add(new _Plan(1, 2, mk(t)), mk(t));
  assert.equal(plans.find(mk([...s])), p);
  assert.equal(plans.find(mk([...t])), q);
});

/** An ffiCall signature as Xla.ffiCall normalises one. */
const ffiSig = (over: Partial<_FfiSignature> = {}): _FfiSignature => ({
  name: "t.copy",
  results: [{ dtype: DataType.F32, shape: [2, 2] }],
  attrs: _encodeAttrs({ scale: new Float32Array([2]), mode: "fast" }),
  vmapMethod: null,
  hasSideEffect: false,
  aliases: [],
  layouts: null,
  ...over,
});

Deno.test("ffiCall plans: found by name, arguments and options compared by value", () => {
  const plans = new _FfiPlans();
  const a = [arg([1, 2, 3, 4], [2, 2])];
  assert.equal(plans.find(ffiSig(), a), undefined);
  const p = plans.add(ffiSig(), a, new _Plan(1, 20, a));
  // A new signature object of equal values, new arrays of the same types: the same plan.
  assert.equal(plans.find(ffiSig(), [arg([0, 0, 0, 0], [2, 2])]), p);
  assert.equal(
    plans.find(ffiSig({ attrs: _encodeAttrs({ mode: "fast", scale: new Float32Array([2]) }) }), a),
    p,
  );
  // Any option or the arguments' signature changed: none.
  const differ: Partial<_FfiSignature>[] = [
    { name: "t.other" },
    { results: [{ dtype: DataType.F32, shape: [4] }] },
    { results: [{ dtype: DataType.S32, shape: [2, 2] }] },
    { results: [] },
    { attrs: _encodeAttrs({ scale: new Float32Array([3]), mode: "fast" }) },
    { attrs: _encodeAttrs({ scale: new Float64Array([2]), mode: "fast" }) },
    { attrs: _encodeAttrs({ scale: new Float32Array([2]), mode: "slow" }) },
    { attrs: _encodeAttrs({ scale: new Float32Array([2]) }) },
    { attrs: _encodeAttrs({ scale: new Float32Array([2]), mode: "fast", on: true }) },
    { attrs: _encodeAttrs({ scale: new Float32Array([2]), mode: { x: 1 } }) },
    { vmapMethod: "sequential" },
    { hasSideEffect: true },
    { aliases: [[0, 0]] },
    { layouts: { inputLayouts: [[0, 1]], outputLayouts: [null] } },
  ];
  for (const d of differ) assert.equal(plans.find(ffiSig(d), a), undefined, JSON.stringify(d));
  assert.equal(plans.find(ffiSig(), [arg([1, 2, 3, 4], [4])]), undefined);
  // Layouts compared by value, null entries included.
  const lay = { inputLayouts: [[0, 1]], outputLayouts: [null] };
  const q = plans.add(ffiSig({ layouts: lay }), a, new _Plan(1, 21, a));
  assert.notEqual(q, p);
  const lay2 = { inputLayouts: [[0, 1]], outputLayouts: [null] };
  assert.equal(plans.find(ffiSig({ layouts: lay2 }), a), q);
  assert.equal(
    plans.find(ffiSig({ layouts: { inputLayouts: [[1, 0]], outputLayouts: [null] } }), a),
    undefined,
  );
  assert.equal(plans.find(ffiSig(), a), p);
  // A plan made meanwhile for a kept signature (two async first calls): the kept one wins.
  assert.equal(plans.add(ffiSig(), a, new _Plan(1, 22, a)), p);
});

Deno.test("ffiCall plans: attributes by their bytes, NaN payloads apart", () => {
  const nan = (bits: number) => new Float32Array(new Uint32Array([bits]).buffer);
  const plans = new _FfiPlans();
  const a = [arg([1, 2, 3, 4], [2, 2])];
  const withNan = (bits: number) => ffiSig({ attrs: _encodeAttrs({ scale: nan(bits) }) });
  const p = plans.add(withNan(0x7fc00000), a, new _Plan(1, 30, a));
  assert.equal(plans.find(withNan(0x7fc00000), a), p);
  assert.equal(plans.find(withNan(0x7fc00001), a), undefined);
  assert.equal(plans.find(withNan(0xffc00000), a), undefined);
  const q = plans.add(withNan(0x7fc00001), a, new _Plan(1, 31, a));
  assert.notEqual(q, p);
  assert.equal(plans.find(withNan(0x7fc00001), a), q);
  assert.equal(plans.find(withNan(0x7fc00000), a), p);
  // -0 and 0 are different bytes too.
  const zero = (z: number) => ffiSig({ attrs: _encodeAttrs({ scale: new Float32Array([z]) }) });
  const r = plans.add(zero(0), a, new _Plan(1, 32, a));
  assert.equal(plans.find(zero(-0), a), undefined);
  assert.equal(plans.find(zero(0), a), r);
});

Deno.test("attributes for the bridge: the hex of every numeric value is that of _attrBytes", () => {
  // _encodeAttrs converts small values in scratch memory, reads typed arrays in place and
  // falls back to _attrBytes for large ones: each must give _attrBytes' bytes, whatever the
  // calls before it left in the scratch memory.
  const hexOf = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  const types: [DataType, (i: number) => number | bigint][] = [
    [DataType.S8, (i) => (i * 37) % 256 - 128],
    [DataType.U8, (i) => (i * 91) % 256],
    [DataType.S16, (i) => (i * 7919) % 65536 - 32768],
    [DataType.U16, (i) => (i * 7919) % 65536],
    [DataType.S32, (i) => (i * 2654435761) % 2 ** 31 - 2 ** 30],
    [DataType.U32, (i) => (i * 2654435761) % 2 ** 32],
    [DataType.S64, (i) => BigInt(i) * -1234567890123n],
    [DataType.U64, (i) => BigInt(i) * 1234567890123n],
    [DataType.F32, (i) => [NaN, -0, 1e-45, -3.5e38, i / 7][i % 5]!],
    [DataType.F64, (i) => [NaN, -0, 5e-324, -1.7e308, i / 7][i % 5]!],
  ];
  const nanPayload = new Float32Array(new Uint32Array([0x7fa00001, 0xffc00123]).buffer);
  const detached = new Float32Array(new ArrayBuffer(8));
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  let checked = 0;
  for (const n of [1, 2, 3, 8, 9, 17, 40]) { // 8-byte values: up to 64 bytes in scratch, then not
    for (const [dtype, value] of types) {
      const values = Array.from({ length: n }, (_, i) => value(i + n));
      for (const attr of [n === 1 ? scalar(dtype, values[0]!) : array(dtype, values)]) {
        const [[, got]] = _encodeAttrs({ a: attr }) as unknown as [[string, { x?: string }]];
        const want = hexOf(_attrBytes(dtype, n === 1 ? [values[0]!] : values));
        assert.equal(got.x, want, `${DataType[dtype]} × ${n}`);
        checked++;
      }
    }
  }
  for (const typed of [nanPayload, detached, new Float32Array(20).fill(-0)]) {
    const [[, got]] = _encodeAttrs({ a: typed }) as unknown as [[string, { x?: string }]];
    assert.equal(got.x, hexOf(_attrBytes(DataType.F32, typed)));
    checked++;
  }
  assert.equal(checked, 73);
});
