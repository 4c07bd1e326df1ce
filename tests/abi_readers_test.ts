import assert from "node:assert/strict";
import { AttrType, DataType, ErrorCode, ExecutionStage } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { API_SLOTS_V0_1, API_SLOTS_V0_5, LAYOUTS } from "../src/abi/layout.ts";
import {
  type AttrEntry,
  READ_LIMITS,
  readApi,
  readArgs,
  readArray,
  readAttrs,
  readBuffer,
  readByteSpan,
  readCallFrame,
  readErrorCreateArgs,
  readExtensionBase,
  readMetadata,
  readMetadataExtension,
  readRets,
  readScalar,
  readStateSetArgsV0_3,
  readStruct,
} from "../src/abi/readers.ts";
import { cstr, fixture } from "./_abi_fixture.ts";
import { flatFields, pattern } from "./_abi_fixture_fields.ts";

const addr = (p: Deno.PointerValue): bigint => BigInt(Deno.UnsafePointer.value(p));

function invalid(re: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof FfiError, `not an FfiError: ${e}`);
    assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
    assert.match(e.message, re);
    return true;
  };
}

const EXPECTED_ATTRS: AttrEntry[] = [
  {
    name: "arr_f32",
    type: AttrType.ARRAY,
    dtype: DataType.F32,
    value: new Float32Array([1.5, -2.25]),
  },
  {
    name: "arr_f64",
    type: AttrType.ARRAY,
    dtype: DataType.F64,
    value: new Float64Array([1e-300, 2.5]),
  },
  {
    name: "arr_s16",
    type: AttrType.ARRAY,
    dtype: DataType.S16,
    value: new Int16Array([-300, 400]),
  },
  {
    name: "arr_s32",
    type: AttrType.ARRAY,
    dtype: DataType.S32,
    value: new Int32Array([-70000, 1, 2, 3]),
  },
  {
    name: "arr_s64",
    type: AttrType.ARRAY,
    dtype: DataType.S64,
    value: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]),
  },
  { name: "arr_s8", type: AttrType.ARRAY, dtype: DataType.S8, value: new Int8Array([-1, 2, -3]) },
  {
    name: "arr_u16",
    type: AttrType.ARRAY,
    dtype: DataType.U16,
    value: new Uint16Array([65535, 1]),
  },
  { name: "arr_u32", type: AttrType.ARRAY, dtype: DataType.U32, value: new Uint32Array([4e9]) },
  {
    name: "arr_u64",
    type: AttrType.ARRAY,
    dtype: DataType.U64,
    value: new BigUint64Array([2n ** 64n - 1n, 1n]),
  },
  { name: "arr_u8", type: AttrType.ARRAY, dtype: DataType.U8, value: new Uint8Array([0, 255]) },
  { name: "arr_zero", type: AttrType.ARRAY, dtype: DataType.S32, value: new Int32Array(0) },
  {
    name: "dict",
    type: AttrType.DICTIONARY,
    value: [
      {
        name: "inner",
        type: AttrType.DICTIONARY,
        value: [
          { name: "deep", type: AttrType.SCALAR, dtype: DataType.S32, value: 7 },
          { name: "label", type: AttrType.STRING, value: "deep" },
        ],
      },
      { name: "x", type: AttrType.SCALAR, dtype: DataType.F32, value: 0.5 },
    ],
  },
  { name: "name", type: AttrType.STRING, value: "fixture" },
  { name: "s_f32", type: AttrType.SCALAR, dtype: DataType.F32, value: 3.5 },
  { name: "s_f64", type: AttrType.SCALAR, dtype: DataType.F64, value: -1e300 },
  { name: "s_pred", type: AttrType.SCALAR, dtype: DataType.PRED, value: true },
  { name: "s_s16", type: AttrType.SCALAR, dtype: DataType.S16, value: -32768 },
  { name: "s_s32", type: AttrType.SCALAR, dtype: DataType.S32, value: -2147483648 },
  { name: "s_s64", type: AttrType.SCALAR, dtype: DataType.S64, value: -(2n ** 63n) },
  { name: "s_s8", type: AttrType.SCALAR, dtype: DataType.S8, value: -128 },
  { name: "s_u16", type: AttrType.SCALAR, dtype: DataType.U16, value: 65535 },
  { name: "s_u32", type: AttrType.SCALAR, dtype: DataType.U32, value: 4294967295 },
  { name: "s_u64", type: AttrType.SCALAR, dtype: DataType.U64, value: 2n ** 64n - 1n },
  { name: "s_u8", type: AttrType.SCALAR, dtype: DataType.U8, value: 255 },
];

Deno.test("readCallFrame reads every field of the fixture frame", () => {
  const fx = fixture();
  const frame = readCallFrame(fx.abi_fixture_frame());
  assert.equal(frame.struct_size, 168);
  assert.equal(frame.extension_start, null);
  assert.equal(addr(frame.api), addr(fx.abi_fixture_api(0)));
  assert.equal(addr(frame.ctx), 0xc0ffeen);
  assert.equal(frame.stage, ExecutionStage.EXECUTE);
  assert.equal(addr(frame.future), 0xf00dn);

  const shapes = frame.args.map((a) => [a.type, DataType[a.dtype], a.rank, a.dims, a.token]);
  assert.deepEqual(shapes, [
    [1, "F32", 2, [2, 3], false],
    [1, "S64", 0, [], false],
    [1, "U8", 3, [1, 2, 3], false],
    [1, "BF16", 1, [4], false],
    [1, "C64", 1, [2], false],
    [1, "PRED", 1, [5], false],
    [1, "F8E4M3FN", 2, [2, 2], false],
    [1, "TOKEN", 0, [], true],
  ]);
  for (const a of frame.args) {
    assert.equal(a.struct_size, 48);
    assert.equal(a.extension_start, null);
    assert.equal(a.data === null, a.token);
  }
  // The data pointers point at the fixture's data.
  const f32 = new Float32Array(6);
  new Deno.UnsafePointerView(frame.args[0]!.data!).copyInto(new Uint8Array(f32.buffer));
  assert.deepEqual([...f32], [0.5, 1, 1.5, 2, 2.5, 3]);
  assert.equal(new Deno.UnsafePointerView(frame.args[1]!.data!).getBigInt64(), -5n);
  assert.equal(new Deno.UnsafePointerView(frame.args[3]!.data!).getUint16(2), 0x4000);

  assert.deepEqual(
    frame.rets.map((r) => [r.type, DataType[r.dtype], r.rank, r.dims, r.token, r.data === null]),
    [[1, "F32", 1, [6], false, false], [1, "TOKEN", 0, [], true, true]],
  );
  assert.equal(frame.attrs.length, fx.abi_fixture_attr_count());
  assert.deepEqual(frame.attrs, EXPECTED_ATTRS);
  // Names come sorted in the fixture, as XLA sorts them.
  const names = frame.attrs.map((a) => a.name);
  assert.deepEqual(names, [...names].sort());
});

Deno.test("readArgs, readRets and readAttrs read the embedded structs alone", () => {
  const p = fixture().abi_fixture_frame()!;
  const at = (off: number) => Deno.UnsafePointer.offset(p, off);
  assert.deepEqual(readArgs(at(40)), readCallFrame(p).args);
  assert.deepEqual(readRets(at(80)), readCallFrame(p).rets);
  assert.deepEqual(readAttrs(at(120)), EXPECTED_ATTRS);
});

Deno.test("readApi reads the version and every slot the struct_size covers", () => {
  const fx = fixture();
  const v1 = readApi(fx.abi_fixture_api(0));
  assert.equal(v1.struct_size, 192);
  assert.deepEqual(
    [v1.api_version.struct_size, v1.api_version.major_version, v1.api_version.minor_version],
    [24, 0, 1],
  );
  assert.equal(addr(v1.internal_api), 0x1234n);
  assert.deepEqual(Object.keys(v1.functions), [...API_SLOTS_V0_1]);
  API_SLOTS_V0_1.forEach((s, i) => assert.equal(addr(v1.functions[s]!), BigInt(0x1000 + 16 * i)));
  const v5 = readApi(fx.abi_fixture_api(1));
  assert.equal(v5.struct_size, 200);
  assert.equal(v5.api_version.minor_version, 5);
  assert.deepEqual(Object.keys(v5.functions), [...API_SLOTS_V0_5]);
  assert.equal(addr(v5.functions.XLA_FFI_Error_GetCode!), BigInt(0x1000 + 16 * 18));
  fx.abi_fixture_api(0);
});

Deno.test("readMetadataExtension and readMetadata follow the reported version", () => {
  const fx = fixture();
  for (const minor of [1, 2]) {
    const ext = readMetadataExtension(fx.abi_fixture_metadata_extension(minor));
    assert.deepEqual(ext.extension_base, { struct_size: 32, type: 1, next: null });
    assert.equal(readExtensionBase(fx.abi_fixture_metadata_extension(minor)).type, 1);
    const m = readMetadata(ext.metadata);
    assert.equal(m.struct_size, 36);
    assert.deepEqual(m.api_version, {
      struct_size: 24,
      extension_start: null,
      major_version: 0,
      minor_version: minor,
    });
    assert.equal(m.traits, 1);
    assert.equal(m.state_type_id, minor >= 2 ? 77n : null);
  }
});

Deno.test("readStruct reads every field of every struct as C filled it", () => {
  const fx = fixture();
  const text = addr(fx.abi_fixture_text_ptr());
  const textStr = new Deno.UnsafePointerView(fx.abi_fixture_text_ptr()!).getCString();
  for (const [name, layout] of Object.entries(LAYOUTS)) {
    const mem = new Uint8Array(layout.sizeof);
    assert.equal(fx.abi_fixture_fill(cstr(name), mem), layout.sizeof, name);
    const value = readStruct(layout, Deno.UnsafePointer.of(mem)) as Record<string, unknown>;
    for (const f of flatFields(layout)) {
      const parts = f.path.split(".");
      let node: unknown = value;
      for (const part of parts) {
        if (typeof node !== "object" || node === null) break;
        node = (node as Record<string, unknown>)[part];
      }
      const where = `${name}.${f.path}`;
      if (f.kind === "SP" || f.kind === "SL") {
        // ByteSpans read as strings: the span points into the fixture text.
        let span: unknown = value;
        for (const part of parts.slice(0, -1)) span = (span as Record<string, unknown>)[part];
        const spanOff = f.kind === "SP" ? f.offset : f.offset - 8;
        const len = (spanOff + 8) % 5 + 3;
        assert.equal(span, textStr.slice(spanOff % 16, spanOff % 16 + len), where);
        continue;
      }
      const got = f.kind === "PTR" ? addr(node as Deno.PointerValue) : BigInt(node as number);
      assert.equal(got, pattern(f, text), where);
    }
  }
});

Deno.test("readers reject broken frames with INVALID_ARGUMENT and XLA-shaped messages", () => {
  const fx = fixture();
  const cases: [number, RegExp][] = [
    [
      1,
      /^Unexpected XLA_FFI_CallFrame size: expected 168 got 120\. Check installed software versions\.$/,
    ],
    [2, /^Unexpected XLA_FFI_ExecutionStage value 7 in XLA_FFI_CallFrame$/],
    [3, /^Unexpected size in XLA_FFI_Args: expected 0\.\.65536 got -1$/],
    [4, /^Unexpected size in XLA_FFI_Args: expected 0\.\.65536 got 1099511627776$/],
    [5, /^Unexpected XLA_FFI_ArgType value 9 in XLA_FFI_Args entry 1$/],
    [6, /^Unexpected XLA_FFI_Buffer rank: expected 0\.\.1024 got -2$/],
    [7, /^Unexpected XLA_FFI_Buffer rank: expected 0\.\.1024 got 1099511627776$/],
    [8, /^Unexpected XLA_FFI_DataType value 14 in XLA_FFI_Buffer$/],
    [
      9,
      /^Unexpected XLA_FFI_Buffer size: expected at least 48 got 16\. Check installed software versions\.$/,
    ],
    [10, /^Unexpected null XLA_FFI_Args types pointer$/],
    [11, /^Unexpected XLA_FFI_AttrType value 9 in XLA_FFI_Attrs attribute 0$/],
    [12, /^Unexpected XLA_FFI_DataType value 99 in XLA_FFI_Scalar$/],
    [13, /^Unexpected array size in XLA_FFI_Array: expected 0\.\.16777216 got 1099511627776$/],
    [
      14,
      /^Unexpected XLA_FFI_Attrs size: expected at least 48 got 8\. Check installed software versions\.$/,
    ],
    [
      15,
      /^Unexpected string length in XLA_FFI_ByteSpan: expected 0\.\.16777216 got 1099511627776$/,
    ],
    [16, /^Unexpected size in XLA_FFI_Rets: expected 0\.\.65536 got -3$/],
    [17, /^Unexpected null XLA_FFI_Attrs names pointer$/],
    [18, /^Unexpected null XLA_FFI_Buffer pointer$/],
    [19, /^Unexpected null XLA_FFI_Buffer dims pointer$/],
  ];
  for (const [kind, re] of cases) {
    const p = fx.abi_fixture_broken_frame(kind);
    assert.notEqual(p, null, `kind ${kind}`);
    assert.throws(() => readCallFrame(p), invalid(re), `kind ${kind}`);
  }
  assert.equal(fx.abi_fixture_broken_frame(99), null);
  // The broken copy with nothing broken still reads (kind 0 is not a case: null).
  assert.doesNotThrow(() => readCallFrame(fx.abi_fixture_frame()));
});

Deno.test("readers reject null pointers and short structs", () => {
  const readers: [string, (p: Deno.PointerValue) => unknown][] = [
    ["XLA_FFI_CallFrame", readCallFrame],
    ["XLA_FFI_Buffer", readBuffer],
    ["XLA_FFI_Args", readArgs],
    ["XLA_FFI_Rets", readRets],
    ["XLA_FFI_Attrs", readAttrs],
    ["XLA_FFI_Scalar", readScalar],
    ["XLA_FFI_Array", readArray],
    ["XLA_FFI_ByteSpan", readByteSpan],
    ["XLA_FFI_Api", readApi],
    ["XLA_FFI_Metadata", readMetadata],
    ["XLA_FFI_Metadata_Extension", readMetadataExtension],
    ["XLA_FFI_Error_Create_Args", readErrorCreateArgs],
    ["XLA_FFI_State_Set_Args_V0_3", readStateSetArgsV0_3],
  ];
  for (const [name, read] of readers) {
    assert.throws(() => read(null), invalid(new RegExp(`^Unexpected null ${name} pointer$`)));
  }
  const mem = new BigUint64Array(32);
  mem[0] = 27n;
  const p = Deno.UnsafePointer.of(mem);
  assert.throws(
    () => readErrorCreateArgs(p),
    invalid(/^Unexpected XLA_FFI_Error_Create_Args size: expected at least 28 got 27\./),
  );
  assert.throws(
    () => readApi(p),
    invalid(/^Unexpected XLA_FFI_Api size: expected at least 56 got 27\./),
  );
  mem[0] = 48n;
  mem[3] = 9n; // stage 9
  assert.throws(
    () => readStateSetArgsV0_3(p),
    invalid(/^Unexpected XLA_FFI_ExecutionStage value 9 in XLA_FFI_State_Set_Args_V0_3$/),
  );
});

Deno.test("scalar and array readers type every dtype; limits are documented values", () => {
  const mem = new Uint8Array(64);
  const dv = new DataView(mem.buffer);
  const value = new Uint8Array(16);
  const vdv = new DataView(value.buffer);
  const p = Deno.UnsafePointer.of(mem);
  dv.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(value))), true);
  const scalar = (dtype: DataType) => {
    dv.setUint32(0, dtype, true);
    return readScalar(p).value;
  };
  vdv.setUint16(0, 0x3e00, true); // 1.5 as F16
  assert.equal(scalar(DataType.F16), 1.5);
  vdv.setUint16(0, 0x3fc0, true); // 1.5 as BF16
  assert.equal(scalar(DataType.BF16), 1.5);
  vdv.setFloat32(0, 2, true);
  vdv.setFloat32(4, -3, true);
  assert.deepEqual(scalar(DataType.C64), [2, -3]);
  vdv.setFloat64(0, 4, true);
  vdv.setFloat64(8, -5, true);
  assert.deepEqual(scalar(DataType.C128), [4, -5]);
  value[0] = 0x38;
  assert.deepEqual(scalar(DataType.F8E4M3FN), new Uint8Array([0x38]));
  assert.throws(() => scalar(DataType.TOKEN), invalid(/XLA_FFI_DataType TOKEN in XLA_FFI_Scalar/));
  dv.setBigUint64(8, 0n, true);
  assert.throws(
    () => scalar(DataType.S32),
    invalid(/^Unexpected null XLA_FFI_Scalar value pointer$/),
  );

  // Arrays: C128 as interleaved Float64Array, BF16 raw bits, F16 as Float16Array.
  vdv.setFloat64(0, 4, true);
  dv.setUint32(0, DataType.C128, true);
  dv.setBigUint64(8, 1n, true);
  dv.setBigUint64(16, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(value))), true);
  assert.deepEqual(readArray(p).value, new Float64Array([4, -5]));
  dv.setUint32(0, DataType.BF16, true);
  vdv.setUint16(0, 0x3fc0, true);
  assert.deepEqual(readArray(p).value, new Uint16Array([0x3fc0]));
  dv.setUint32(0, DataType.F16, true);
  vdv.setUint16(0, 0x3e00, true);
  assert.deepEqual([...readArray(p).value as Float16Array], [1.5]);
  dv.setBigUint64(16, 0n, true);
  assert.throws(() => readArray(p), invalid(/^Unexpected null data with size 1 in XLA_FFI_Array$/));

  assert.deepEqual({ ...READ_LIMITS }, {
    maxRank: 1024,
    maxCount: 65536,
    maxArrayElements: 16777216,
    maxStringBytes: 16777216,
    maxDepth: 64,
  });
});

Deno.test("dictionaries nested past the depth limit are rejected", () => {
  // A dictionary whose only entry is itself.
  const attrs = new BigUint64Array(6);
  const types = new Uint32Array([AttrType.DICTIONARY]);
  const nameText = new TextEncoder().encode("self");
  const span = new BigUint64Array([
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(nameText))),
    4n,
  ]);
  const names = new BigUint64Array([BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(span)))]);
  const self = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(attrs)));
  const values = new BigUint64Array([self]);
  attrs.set([
    48n,
    0n,
    1n,
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(types))),
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(names))),
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(values))),
  ]);
  assert.throws(
    () => readAttrs(Deno.UnsafePointer.of(attrs)),
    invalid(/^Unexpected dictionary nesting deeper than 64 levels$/),
  );
});

Deno.test("a metadata-query frame (zero-size lists, 176-byte struct_size) reads", async () => {
  const { writeCallFrame, writeMetadata, writeMetadataExtension } = await import(
    "../src/abi/writers.ts"
  );
  const mem = new Uint8Array(176 + 32 + 48);
  const base = addr(Deno.UnsafePointer.of(mem));
  writeMetadata(mem, 208, { state_type_id: 0n });
  writeMetadataExtension(mem, 176, { metadata: base + 208n });
  writeCallFrame(mem, 0, { struct_size: 176, extension_start: base + 176n, stage: 3 });
  const frame = readCallFrame(Deno.UnsafePointer.of(mem));
  assert.equal(frame.struct_size, 176);
  assert.deepEqual([frame.api, frame.ctx, frame.args, frame.rets, frame.attrs], [
    null,
    null,
    [],
    [],
    [],
  ]);
  const ext = readMetadataExtension(frame.extension_start);
  assert.equal(addr(ext.metadata), base + 208n);
  assert.equal(readMetadata(ext.metadata).struct_size, 36);
});
