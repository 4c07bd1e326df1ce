import assert from "node:assert/strict";
import {
  array,
  ArrayAttr,
  CallFrameBuilder,
  DataType,
  ErrorCode,
  FfiError,
  Runtime,
  scalar,
} from "../mod.ts";
import { AttrType } from "../src/abi/mod.ts";
import { openTestHandlers } from "./_runtime_handlers.ts";

/** Runs test_attrs on a builder's attributes and returns its description. */
function describe(build: (b: CallFrameBuilder) => CallFrameBuilder): string {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 0 });
  const out = new Uint8Array(4096);
  using f = build(new CallFrameBuilder().ret(out)).build();
  rt.callSync(lib.handler("test_attrs"), f);
  return new TextDecoder().decode(out.subarray(0, out.indexOf(0)));
}

Deno.test("scalar attributes of every XLA attribute dtype", () => {
  const s = describe((b) =>
    b.attr("b_true", true)
      .attr("i8", -128, DataType.S8)
      .attr("i16", -32768, DataType.S16)
      .attr("i32", -2147483648, DataType.S32)
      .attr("i64", -(2n ** 63n))
      .attr("u8", 255, DataType.U8)
      .attr("u16", 65535, DataType.U16)
      .attr("u32", 4294967295, DataType.U32)
      .attr("u64", 2n ** 64n - 1n, DataType.U64)
      .attr("f32", scalar(DataType.F32, 0.5))
      .attr("f64", 0.1)
      .attr("n64", 9007199254740991, DataType.S64)
  );
  assert.equal(
    s,
    "b_true=scalar:1:1;f32=scalar:11:0.5;f64=scalar:12:0.10000000000000001;" +
      "i16=scalar:3:-32768;i32=scalar:4:-2147483648;i64=scalar:5:-9223372036854775808;" +
      "i8=scalar:2:-128;n64=scalar:5:9007199254740991;u16=scalar:7:65535;" +
      "u32=scalar:8:4294967295;u64=scalar:9:18446744073709551615;u8=scalar:6:255;",
  );
});

Deno.test("array attributes of every numeric type, strings, nested sorted dictionaries", () => {
  const s = describe((b) =>
    b.attr("a_s8", new Int8Array([-1, 2]))
      .attr("a_s16", new Int16Array([-3]))
      .attr("a_s32", new Int32Array([4, 5]))
      .attr("a_s64", new BigInt64Array([-(2n ** 63n)]))
      .attr("a_u8", new Uint8Array([255]))
      .attr("a_u16", new Uint16Array([65535]))
      .attr("a_u32", new Uint32Array([7]))
      .attr("a_u64", new BigUint64Array([2n ** 64n - 1n]))
      .attr("a_f32", new Float32Array([1.5, -2]))
      .attr("a_f64", [0.25, 3.5])
      .attr("axes", array(DataType.S64, [0, 2, 3]))
      .attr("empty", array(DataType.S32, []))
      .attr("mode", "reflect")
      .attr("utf8", "größe")
      .attr("dict", { z: 1, a: { y: "deep", b: false }, m: new Int32Array([1]) })
  );
  assert.equal(
    s,
    "a_f32=array:11:[1.5,-2];a_f64=array:12:[0.25,3.5];a_s16=array:3:[-3];" +
      "a_s32=array:4:[4,5];a_s64=array:5:[-9223372036854775808];a_s8=array:2:[-1,2];" +
      "a_u16=array:7:[65535];a_u32=array:8:[7];a_u64=array:9:[18446744073709551615];" +
      "a_u8=array:6:[255];axes=array:5:[0,2,3];" +
      "dict=dict:{a=dict:{b=scalar:1:0;y=string:deep;};m=array:4:[1];z=scalar:5:1;};" +
      "empty=array:4:[];mode=string:reflect;utf8=string:größe;",
  );
});

Deno.test("names sort byte-wise (as std::string), not by UTF-16", () => {
  const s = describe((b) => b.attr("é", 1).attr("z", 2).attr("Z", 3).attr("", 4).attr("aa", 5));
  assert.equal(s, "=scalar:5:4;Z=scalar:5:3;aa=scalar:5:5;z=scalar:5:2;é=scalar:5:1;");
});

function isInvalid(re: RegExp) {
  return (e: unknown) =>
    e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT && re.test(e.message);
}

Deno.test("bad attributes and buffers are clear INVALID_ARGUMENT errors", () => {
  const b = new CallFrameBuilder().attr("x", 1);
  assert.throws(() => b.attr("x", 2), isInvalid(/Duplicate attribute name 'x'/));
  assert.throws(
    () => new CallFrameBuilder().attr("d", new Map([["k", 1]]) as never).attr("d", 1),
    isInvalid(/Duplicate attribute name 'd'/),
  );
  assert.throws(() => scalar(DataType.S8, 128), isInvalid(/out of range for S8/));
  assert.throws(() => scalar(DataType.U32, -1), isInvalid(/out of range for U32/));
  assert.throws(() => scalar(DataType.S32, 1.5), isInvalid(/expects an integer/));
  assert.throws(() => scalar(DataType.S64, 2 ** 60), isInvalid(/not a safe integer/));
  assert.throws(() => scalar(DataType.U64, 2n ** 64n), isInvalid(/out of range for U64/));
  assert.throws(() => scalar(DataType.C64, 1), isInvalid(/Unsupported attribute data type C64/));
  assert.throws(() => array(DataType.PRED, [1]), isInvalid(/PRED/));
  assert.throws(
    () => new CallFrameBuilder().attr("x", null as never),
    isInvalid(/unsupported attribute value/),
  );
  assert.throws(
    () => new CallFrameBuilder().arg(new Float32Array(4), [3]),
    isInvalid(/argument 0: f32\[3\] needs 12 bytes but the array has 16/),
  );
  assert.throws(() => new CallFrameBuilder().arg(new Float32Array(4), [-1]), isInvalid(/invalid/));
  using f = new CallFrameBuilder().arg(new Float32Array(1)).build();
  assert.throws(() => f.setArg(1, new Float32Array(1)), isInvalid(/out of range/));
});

Deno.test("frame layout: one arena; buffers, tokens and attrs as XLA lays them out", () => {
  const x = new Float32Array(24);
  const y = new Int32Array(6);
  using f = new CallFrameBuilder()
    .arg(x, [2, 3, 4])
    .tokenArg()
    .argPointer(0x1000, DataType.F16, [5])
    .ret(y, [6])
    .tokenRet()
    .attr("mode", "r")
    .build();
  const v = new Deno.UnsafePointerView(f.pointer);
  assert.equal(v.getBigUint64(0), 168n); // struct_size
  assert.notEqual(v.getPointer(16), null); // api
  assert.notEqual(v.getPointer(24), null); // ctx
  assert.equal(v.getInt32(32), 3); // EXECUTE
  assert.equal(v.getBigInt64(56), 3n); // args.size
  const types = new Deno.UnsafePointerView(v.getPointer(64)!);
  assert.deepEqual([types.getInt32(0), types.getInt32(4), types.getInt32(8)], [1, 1, 1]);
  const argv = new Deno.UnsafePointerView(v.getPointer(72)!);
  const b0 = new Deno.UnsafePointerView(argv.getPointer(0)!);
  assert.equal(b0.getBigUint64(0), 48n);
  assert.equal(b0.getInt32(16), DataType.F32);
  assert.equal(
    Deno.UnsafePointer.value(b0.getPointer(24)),
    Deno.UnsafePointer.value(Deno.UnsafePointer.of(x)),
  );
  assert.equal(b0.getBigInt64(32), 3n);
  const dims = new Deno.UnsafePointerView(b0.getPointer(40)!);
  assert.deepEqual([dims.getBigInt64(0), dims.getBigInt64(8), dims.getBigInt64(16)], [2n, 3n, 4n]);
  const tok = new Deno.UnsafePointerView(argv.getPointer(8)!);
  assert.equal(tok.getInt32(16), DataType.TOKEN);
  assert.equal(tok.getPointer(24), null);
  assert.equal(tok.getBigInt64(32), 0n);
  const b2 = new Deno.UnsafePointerView(argv.getPointer(16)!);
  assert.equal(Deno.UnsafePointer.value(b2.getPointer(24)), 0x1000n);
  assert.equal(v.getBigInt64(96), 2n); // rets.size
  assert.equal(v.getBigUint64(120), 48n); // attrs.struct_size
  assert.equal(v.getBigInt64(136), 1n); // attrs.size
  const at = new Deno.UnsafePointerView(v.getPointer(144)!);
  assert.equal(at.getInt32(0), AttrType.STRING);
  assert.equal(v.getPointer(168), null); // future
  // swapping pointers is visible in place
  const x2 = new Float32Array(24);
  f.setArg(0, x2);
  assert.equal(
    Deno.UnsafePointer.value(b0.getPointer(24)),
    Deno.UnsafePointer.value(Deno.UnsafePointer.of(x2)),
  );
  f.setArg(0, 0x2000n);
  assert.equal(Deno.UnsafePointer.value(b0.getPointer(24)), 0x2000n);
});

Deno.test("an array attribute's elements are checked when a frame is laid out: made unchecked or changed since", async () => {
  const invalid = (attr: ArrayAttr, message: string) =>
    assert.throws(
      () => new CallFrameBuilder().attr("a", attr).build(),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT && e.message === message,
    );
  const changed = array(DataType.S64, [1, 2]);
  (changed.values as number[])[0] = 1.5;
  invalid(changed, "attribute 'a': element 0: S64 expects an integer, got 1.5");
  invalid(
    new ArrayAttr(DataType.S32, [1, 2 ** 40]),
    "attribute 'a': element 1: 1099511627776 is out of range for S32",
  );
  invalid(
    new ArrayAttr(DataType.U8, [1, -1]),
    "attribute 'a': element 1: -1 is out of range for U8",
  );
  // The same through ffiCall, whose kept frame compares attributes by value.
  using rt = new Runtime({ threads: 0 });
  using lib = openTestHandlers();
  const attr = array(DataType.S64, [1, 2]);
  const call = () =>
    rt.ffiCall(lib.handler("test_noop"), {
      results: [],
      attrs: { a: attr },
      hasSideEffect: true,
    });
  await call();
  (attr.values as number[])[1] = Number.NaN;
  await assert.rejects(
    call(),
    (e: unknown) =>
      e instanceof FfiError &&
      e.message === "attribute 'a': element 1: S64 expects an integer, got NaN",
  );
  // A typed array of the element type is taken as it is.
  using f = new CallFrameBuilder().attr("a", new ArrayAttr(DataType.S32, new Int32Array([7])))
    .build();
  assert.equal(f.numArgs, 0);
});
