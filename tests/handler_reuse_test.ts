/**
 * The reuse rule of the TS handler decoder (src/handler/_fast.ts): a value
 * handed to a handler never changes afterwards; immutable values are handed
 * again only to a call whose frame holds the same bytes for that operand;
 * arrays are fresh every call. And the compiled decoder, the same with reuse
 * off, and the plan decoder (bindings with context operands) agree on every
 * value.
 */
import assert from "node:assert/strict";
import { DataType } from "../src/abi/enums.ts";
import { _setReuse } from "../src/handler/host.ts";
import { Dictionary, Ffi, type FfiBuffer } from "../src/handler/mod.ts";
import { addressOf, call, frame, type FrameSpec } from "./_handler_harness.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const D = DataType;

const spec = (data: Float32Array, mode = "reflect"): FrameSpec => ({
  args: [{ dtype: D.F32, dims: [2, 3], data }],
  attrs: {
    axes: { array: D.S64, values: [0, 2, 3] },
    mode: { string: mode },
    big: { scalar: D.U64, value: 2n ** 63n + 5n },
    opts: { dict: { k: { scalar: D.S32, value: 7 }, s: { string: "text" } } },
  },
});

type Got = [FfiBuffer, bigint, Dictionary, number[], string];

function binding(got: Got[]) {
  return Ffi.bind().arg(D.F32, 2).attr("axes", "i64[]").attr("big", "u64n")
    .attr("mode", "string").attr("opts", "dict")
    .to((b, axes, big, mode, opts) => void got.push([b, big, opts, axes, mode]));
}

/** A test given a fresh {@link binding}'s handler and what its calls got. */
function reuseTest(name: string, fn: (h: Deno.PointerObject, got: Got[]) => Promise<void>) {
  Deno.test({
    name,
    ...opts,
    fn: async () => {
      const got: Got[] = [];
      using h = binding(got);
      await fn(h.pointer, got);
    },
  });
}

reuseTest(
  "reuse: the same bytes give the same immutable values; arrays are fresh",
  async (h, got) => {
    const data = new Float32Array(6);
    using f = frame(spec(data));
    for (let i = 0; i < 3; i++) assert.equal(await call(h, f), null);
    const [a, b, c] = got as [Got, Got, Got];
    assert.equal(b[0], a[0], "FfiBuffer handed again");
    assert.equal(c[0], a[0]);
    assert.equal(b[2], a[2], "Dictionary handed again");
    assert.equal(b[1], a[1]);
    assert.equal(b[4], a[4]);
    assert.notEqual(b[3], a[3], "arrays are fresh every call");
    assert.deepEqual(b[3], a[3]);
    // Handed out twice: frozen, so no call can change what another kept.
    assert.ok(Object.isFrozen(a[0]));
    assert.ok(Object.isFrozen(a[0].dims));
    assert.throws(() => {
      (a[0] as { data: number }).data = 1;
    }, TypeError);
    assert.throws(() => (a[0].dims as number[]).push(1), TypeError);
    assert.deepEqual(a[0].dims, [2, 3]);
    assert.equal(a[2].get("k", "i32"), 7);
    assert.equal(a[2].get("s"), "text");
  },
);

reuseTest(
  "reuse: a frame that differs, or a value a handler changed, gives a new object",
  async (h, got) => {
    const d1 = new Float32Array(6), d2 = new Float32Array(6);
    using f1 = frame(spec(d1));
    using f2 = frame(spec(d2, "wrap"));
    assert.equal(await call(h, f1), null);
    assert.equal(await call(h, f2), null);
    const [a, b] = got as [Got, Got];
    assert.notEqual(b[0], a[0]);
    assert.notEqual(a[0].data, b[0].data);
    assert.equal(a[4], "reflect");
    assert.equal(b[4], "wrap");
    assert.equal(b[2], a[2], "the dictionary's bytes are the same");
    // A buffer handed out once and written to by its handler is not handed again.
    const once = got.length;
    (got[once - 1]![0] as { data: number }).data = 42;
    assert.equal(await call(h, f2), null);
    assert.notEqual(got[once]![0], got[once - 1]![0]);
    assert.equal(got[once - 1]![0].data, 42, "the kept object is left as the handler made it");
    assert.equal(got[once]![0].data, addressOf(d2));
  },
);

reuseTest(
  "reuse off and the plan decoder: the same values as the compiled decoder",
  async (h, got) => {
    const data = new Float32Array(6);
    using f = frame(spec(data));
    assert.equal(await call(h, f), null);
    _setReuse(false);
    try {
      assert.equal(await call(h, f), null);
      assert.equal(await call(h, f), null);
    } finally {
      _setReuse(true);
    }
    const [a, b, c] = got as [Got, Got, Got];
    assert.notEqual(c[0], b[0], "reuse off: every value fresh");
    for (const g of [b, c]) {
      assert.equal(g[0].data, a[0].data);
      assert.deepEqual(g[0].dims, a[0].dims);
      assert.equal(g[1], 2n ** 63n + 5n);
      assert.deepEqual(g[2].toObject(), a[2].toObject());
      assert.deepEqual(g[3], [0, 2, 3]);
      assert.equal(g[4], "reflect");
    }
    // The plan decoder (a binding with a context operand, which the compiled
    // one leaves to it) gives the same values.
    const full: unknown[][] = [];
    using h2 = Ffi.bind().arg(D.F32, 2).attr("axes", "i64[]").attr("big", "u64n")
      .attr("mode", "string").attr("opts", "dict").ctx("threadPool")
      .to((...p) => void full.push(p));
    using f2 = frame(spec(data));
    assert.equal(await call(h2.pointer, f2), null);
    const p = full[0]!;
    assert.equal((p[0] as FfiBuffer).data, a[0].data);
    assert.deepEqual((p[0] as FfiBuffer).dims, [2, 3]);
    assert.deepEqual(p[1], [0, 2, 3]);
    assert.equal(p[2], 2n ** 63n + 5n);
    assert.equal(p[3], "reflect");
    assert.ok(p[4] instanceof Dictionary);
    assert.deepEqual((p[4] as Dictionary).toObject(), a[2].toObject());
  },
);
