import assert from "node:assert/strict";
import { AttrType, DataType, ErrorCode } from "../src/abi/enums.ts";
import { type Dictionary, Ffi } from "../src/handler/mod.ts";
import { call, frame, type TestAttr } from "./_handler_harness.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const D = DataType;

Deno.test({
  name: "every scalar attribute kind decodes (bool, each integer width, f32, f64, pointer)",
  ...opts,
  fn: async () => {
    let got: unknown[] = [];
    using h = Ffi.bind()
      .attr("b", "bool").attr("i8", "i8").attr("i16", "i16").attr("i32", "i32")
      .attr("i64", "i64").attr("u8", "u8").attr("u16", "u16").attr("u32", "u32")
      .attr("u64", "u64").attr("f32", "f32").attr("f64", "f64").attr("ptr", "pointer")
      .to((...v) => {
        got = v;
      });
    using f = frame({
      attrs: {
        b: { scalar: D.PRED, value: true },
        i8: { scalar: D.S8, value: -8 },
        i16: { scalar: D.S16, value: -16 },
        i32: { scalar: D.S32, value: -32 },
        i64: { scalar: D.S64, value: -(2 ** 40) },
        u8: { scalar: D.U8, value: 255 },
        u16: { scalar: D.U16, value: 65535 },
        u32: { scalar: D.U32, value: 4294967295 },
        u64: { scalar: D.U64, value: 2 ** 50 },
        f32: { scalar: D.F32, value: 1.5 },
        f64: { scalar: D.F64, value: Math.PI },
        ptr: { scalar: D.S64, value: 0x7f0012345678 },
      },
    });
    assert.equal(await call(h.pointer, f), null);
    assert.deepEqual(got, [
      true,
      -8,
      -16,
      -32,
      -(2 ** 40),
      255,
      65535,
      4294967295,
      2 ** 50,
      1.5,
      Math.PI,
      0x7f0012345678,
    ]);
  },
});

Deno.test({
  name: "array attributes of each numeric type and strings decode",
  ...opts,
  fn: async () => {
    const kinds = [
      ["i8", D.S8, [-1, 2]],
      ["i16", D.S16, [-300, 4]],
      ["i32", D.S32, [-70000, 5]],
      ["i64", D.S64, [-(2 ** 40), 6]],
      ["u8", D.U8, [200, 7]],
      ["u16", D.U16, [60000, 8]],
      ["u32", D.U32, [4000000000, 9]],
      ["u64", D.U64, [2 ** 45, 10]],
      ["f32", D.F32, [0.5, -2.25]],
      ["f64", D.F64, [Math.E, 1e300]],
    ] as const;
    for (const [kind, dtype, values] of kinds) {
      let got: unknown;
      using h = Ffi.bind().attr("arr", `${kind}[]`).attr("s", "string").to((a, s) => {
        got = [a, s];
      });
      using f = frame({
        attrs: { arr: { array: dtype, values: [...values] }, s: { string: "reflect ü" } },
      });
      assert.equal(await call(h.pointer, f), null, kind);
      assert.deepEqual(got, [[...values], "reflect ü"], kind);
    }
    let empty: unknown;
    using h = Ffi.bind().attr("arr", "i32[]").to((a) => {
      empty = a;
    });
    using f = frame({ attrs: { arr: { array: D.S32, values: [] } } });
    assert.equal(await call(h.pointer, f), null);
    assert.deepEqual(empty, []);
  },
});

Deno.test({
  name: "attributes are matched by sorted name; count and name mismatches use ffi.h messages",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().attr("foo", "i32").to(() => {});
    {
      using f = frame({
        attrs: { foo: { scalar: D.S32, value: 1 }, bar: { scalar: D.S32, value: 2 } },
      });
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message:
          "[execute] Wrong number of attributes: expected 1 but got 2 with name(s): bar, foo",
      });
    }
    {
      using f = frame({ attrs: { not_foo: { scalar: D.S32, value: 1 } } });
      assert.deepEqual(await call(h.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Failed to decode all FFI handler operands (bad operands at: 0)\n" +
          "Diagnostics:\nAttribute name mismatch: not_foo vs foo",
      });
    }
    // No bound attributes in 0.1: any attribute is an arity error, printed
    // without the stage (0.1's ffi.h); decode failures carry it at every version.
    using none = Ffi.bind().to(() => {}, { apiVersion: "0.1" });
    {
      using f = frame({ attrs: { x: { scalar: D.S32, value: 1 } } });
      assert.deepEqual(await call(none.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "Wrong number of attributes: expected 0 but got 1 with name(s): x",
      });
    }
    using named01 = Ffi.bind().attr("foo", "i32").to(() => {}, { apiVersion: "0.1" });
    {
      using f = frame({ attrs: { not_foo: { scalar: D.S32, value: 1 } } });
      assert.deepEqual(await call(named01.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Failed to decode all FFI handler operands (bad operands at: 0)\n" +
          "Diagnostics:\nAttribute name mismatch: not_foo vs foo",
      });
    }
    // 0.3 (the default) ignores attributes when none are bound.
    using none03 = Ffi.bind().to(() => {});
    {
      using f = frame({ attrs: { x: { scalar: D.S32, value: 1 } } });
      assert.equal(await call(none03.pointer, f), null);
    }
    // 0.2+: no bound attributes means extra attributes are ignored, messages carry the stage.
    using v2 = Ffi.bind().arg().to(() => {}, { apiVersion: [0, 2] });
    {
      using f = frame({ attrs: { x: { scalar: D.S32, value: 1 } } });
      assert.deepEqual(await call(v2.pointer, f), {
        code: ErrorCode.INVALID_ARGUMENT,
        message: "[execute] Wrong number of arguments: expected 1 but got 0",
      });
    }
  },
});

Deno.test({
  name: "wrong attribute kinds: scalar dtype, attribute type, pointer, enum values",
  ...opts,
  fn: async () => {
    using h = Ffi.bind().enumAttr("a", "i32", [0, 1, 2] as const).enumAttr("b", "i64", [7])
      .attr("c", "pointer").attr("d", "f32[]").to(() => {});
    using f = frame({
      attrs: {
        a: { scalar: D.U32, value: 1 },
        b: { dict: { x: { scalar: D.S32, value: 1 } } },
        c: { scalar: D.S32, value: 1 },
        d: { array: D.F64, values: [1] },
      },
    });
    assert.deepEqual(await call(h.pointer, f), {
      code: ErrorCode.INVALID_ARGUMENT,
      message:
        "[execute] Failed to decode all FFI handler operands (bad operands at: 0, 1, 2, 3)\n" +
        "Diagnostics:\nWrong scalar data type: expected S32 but got U32" +
        "Wrong attribute type: expected scalar but got dictionary" +
        "Wrong attribute type: expected i64 scalar for passing pointer but got S32" +
        "Wrong array data type: expected F32 but got F64",
    });
    let got: unknown;
    using e = Ffi.bind().enumAttr("a", "i32", [0, 1, 2] as const).to((a) => {
      got = a;
    });
    {
      using ok = frame({ attrs: { a: { scalar: D.S32, value: 2 } } });
      assert.equal(await call(e.pointer, ok), null);
      assert.equal(got, 2);
    }
    {
      using bad = frame({ attrs: { a: { scalar: D.S32, value: 5 } } });
      const r = await call(e.pointer, bad);
      assert.equal(r?.code, ErrorCode.INVALID_ARGUMENT);
      assert.match(r!.message, /bad operands at: 0\)\nDiagnostics:\nWrong enum value: 5/);
    }
  },
});

Deno.test({
  name: "dictionaries: whole attribute set and nested dictionary attributes decode lazily",
  ...opts,
  fn: async () => {
    let all: Dictionary | undefined;
    let nested: Dictionary | undefined;
    using h = Ffi.bind().attrs().to((d) => {
      all = d;
      nested = d.get("dict", "dict") as Dictionary;
    });
    const attrs: Record<string, TestAttr> = {
      i32: { scalar: D.S32, value: 42 },
      f32: { scalar: D.F32, value: 42.5 },
      str: { string: "foo" },
      arr: { array: D.S64, values: [1, 2, 3] },
      dict: { dict: { z: { scalar: D.PRED, value: false }, a: { string: "inner" } } },
    };
    using f = frame({ attrs });
    assert.equal(await call(h.pointer, f), null);
    // Decoded after the call returned: the dictionary holds its own copy.
    assert.deepEqual(all!.keys(), ["arr", "dict", "f32", "i32", "str"]);
    assert.equal(all!.size, 5);
    assert.equal(all!.get("i32", "i32"), 42);
    assert.equal(all!.get("f32"), 42.5);
    assert.deepEqual(all!.get("arr", "i64[]"), [1, 2, 3]);
    assert.equal(all!.typeOf("str"), AttrType.STRING);
    assert.ok(all!.has("str") && !all!.has("nope"));
    assert.deepEqual(nested!.toObject(), { a: "inner", z: false });
    assert.throws(
      () => all!.get("i32", "u32"),
      (e: unknown) =>
        (e as { code: number }).code === ErrorCode.INTERNAL &&
        (e as Error).message === "Wrong scalar data type: expected U32 but got S32",
    );
    assert.throws(
      () => all!.get("missing"),
      (e: unknown) => (e as { code: number }).code === ErrorCode.NOT_FOUND,
    );
  },
});

Deno.test({
  name: "optional attributes: undefined when absent, found by name, counts and unknown names",
  ...opts,
  fn: async () => {
    let got: unknown[] = [];
    // Bound out of sorted order, optional ones between required ones.
    using h = Ffi.bind()
      .attr("m", "i32").optionalAttr("z", "f32").optionalAttr("a", "string")
      .attr("b", "bool")
      .to((...v) => {
        got = v;
      });
    const m = { scalar: D.S32, value: 7 } as const;
    const b = { scalar: D.PRED, value: true } as const;
    const cases: [Record<string, TestAttr>, unknown[]][] = [
      [{ m, b }, [7, undefined, undefined, true]],
      [{ m, b, z: { scalar: D.F32, value: 2.5 } }, [7, 2.5, undefined, true]],
      [{ m, b, a: { string: "on" } }, [7, undefined, "on", true]],
      [{ m, b, a: { string: "on" }, z: { scalar: D.F32, value: 2.5 } }, [7, 2.5, "on", true]],
    ];
    for (const [attrs, want] of cases) {
      using f = frame({ attrs });
      got = [];
      assert.equal(await call(h.pointer, f), null, JSON.stringify(Object.keys(attrs)));
      assert.deepEqual(got, want);
    }
    const fails: [Record<string, TestAttr>, string][] = [
      [
        { m },
        "[execute] Wrong number of attributes: expected 2 to 4 (2 optional) but got 1 with name(s): m",
      ],
      [
        { m, b, z: { scalar: D.F32, value: 1 }, a: { string: "" }, c: { string: "" } },
        "[execute] Wrong number of attributes: expected 2 to 4 (2 optional) but got 5 with name(s): " +
        "a, b, c, m, z",
      ],
      [
        { m, b, x: { string: "" } },
        "[execute] Unexpected attribute(s) with name(s): x (bound: a?, b, m, z?)",
      ],
      [
        { m, a: { string: "" }, z: { scalar: D.F32, value: 1 } },
        "[execute] Failed to decode all FFI handler operands (bad operands at: 3)\nDiagnostics:\n" +
        "Missing attribute: b is not optional",
      ],
      [
        { m, b, z: { scalar: D.F64, value: 1 } },
        "[execute] Failed to decode all FFI handler operands (bad operands at: 1)\nDiagnostics:\n" +
        "Wrong scalar data type: expected F32 but got F64",
      ],
    ];
    for (const [attrs, message] of fails) {
      using f = frame({ attrs });
      assert.deepEqual(await call(h.pointer, f), { code: ErrorCode.INVALID_ARGUMENT, message });
    }
    // Only optional attributes: an empty frame decodes (0.1 checks the count too).
    using only = Ffi.bind().optionalAttr("k", "i64").to((k) => {
      got = [k];
    });
    {
      using f = frame({});
      assert.equal(await call(only.pointer, f), null);
      assert.deepEqual(got, [undefined]);
    }
    assert.throws(() => Ffi.bind().attrs().optionalAttr("k", "i64"), /Attr cannot be mixed/);
  },
});
