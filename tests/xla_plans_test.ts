/**
 * The plans of a program by argument signature (src/xla/_prepared.ts): found
 * by element types and shapes compared by value, one plan per signature.
 * Needs no Python: plans are only kept and found here.
 */
import assert from "node:assert/strict";
import { DataType } from "../mod.ts";
import { _normaliseArg } from "../src/runtime/ffi_call.ts";
import { _Plan, _Plans, _signatureHash } from "../src/xla/_prepared.ts";

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
