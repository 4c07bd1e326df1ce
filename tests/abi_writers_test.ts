import assert from "node:assert/strict";
import { AttrType, DataType, ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { API_V0_5, CALL_FRAME, LAYOUTS, type StructLayout } from "../src/abi/layout.ts";
import {
  type ArrayValue,
  type AttrEntry,
  type BufferValue,
  readApi,
  readCallFrame,
  readMetadata,
  readMetadataExtension,
  readStruct,
  type ScalarValue,
} from "../src/abi/readers.ts";
import {
  type StructInput,
  writeApi,
  writeArgs,
  writeArray,
  writeAttrs,
  writeBuffer,
  writeByteSpan,
  writeCallFrame,
  writeMetadata,
  writeMetadataExtension,
  writeRets,
  writeScalar,
  writeStruct,
} from "../src/abi/writers.ts";
import { cstr, fixture } from "./_abi_fixture.ts";
import { flatFields, HEADER_PATH, headerText, pattern } from "./_abi_fixture_fields.ts";

const addr = (p: Deno.PointerValue): bigint => BigInt(Deno.UnsafePointer.value(p));

/** The nested writer input that sets every leaf field of `layout` to its pattern. */
function patternInput(
  layout: StructLayout,
  text: bigint,
  tweak?: string,
): StructInput<StructLayout> {
  const input: Record<string, unknown> = {};
  for (const f of flatFields(layout)) {
    const parts = f.path.split(".");
    let node = input;
    for (const part of parts.slice(0, -1)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
    let v = pattern(f, text);
    if (f.path === tweak) v += 1n;
    const small = f.kind === "SS" || f.kind === "I32" || f.kind === "U32" || f.kind === "EN";
    node[parts[parts.length - 1]!] = small ? Number(v) : v;
  }
  return input as StructInput<StructLayout>;
}

Deno.test("writeStruct lays out every field of every struct as C reads it", () => {
  const fx = fixture();
  const text = addr(fx.abi_fixture_text_ptr());
  for (const [name, layout] of Object.entries(LAYOUTS)) {
    const mem = new Uint8Array(layout.sizeof + 16);
    const end = writeStruct(layout, mem, 8, patternInput(layout, text));
    assert.equal(end, 8 + layout.sizeof);
    const p = Deno.UnsafePointer.offset(Deno.UnsafePointer.of(mem)!, 8);
    assert.equal(fx.abi_fixture_check(cstr(name), p), 0, name);
    // A wrong value in any one field is caught, and C names that field.
    const fields = flatFields(layout);
    fields.forEach((f, i) => {
      writeStruct(layout, mem, 8, patternInput(layout, text, f.path));
      assert.equal(fx.abi_fixture_check(cstr(name), p), i + 1, `${name}.${f.path}`);
    });
  }
});

Deno.test("writers zero padding and unset fields, and default struct_size", () => {
  for (const [name, layout] of Object.entries(LAYOUTS)) {
    const mem = new Uint8Array(layout.sizeof).fill(0xff);
    writeStruct(layout, mem, 0, {});
    const dv = new DataView(mem.buffer);
    const ss = layout.fields["struct_size"];
    for (let i = 0; i < layout.sizeof; i++) {
      if (ss && i === 0) continue;
      // Embedded structs get their own struct_size default.
      const nested = Object.values(layout.fields).find((f) =>
        f.offset === i && f.type in LAYOUTS && LAYOUTS[f.type]!.fields["struct_size"]
      );
      if (nested) {
        assert.equal(dv.getBigUint64(i, true), BigInt(LAYOUTS[nested.type]!.structSize!), name);
        i += 7;
        continue;
      }
      assert.equal(mem[i], 0, `${name} byte ${i}`);
    }
    if (ss) assert.equal(dv.getBigUint64(0, true), BigInt(layout.structSize!), name);
  }
});

Deno.test("writers refuse a target too small and bad integers", () => {
  assert.throws(
    () => writeCallFrame(new Uint8Array(200), 40, {}),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      e.message === "Cannot write XLA_FFI_CallFrame (176 bytes) at offset 40 of a 200-byte target",
  );
  assert.throws(() => writeBuffer(new ArrayBuffer(48), -8, {}), FfiError);
  assert.throws(
    () => writeBuffer(new ArrayBuffer(48), 0, { rank: 1.5 }),
    /Expected an integer for XLA_FFI_Buffer.rank but got 1.5/,
  );
  // DataView and ArrayBuffer targets, with their own offsets.
  const ab = new ArrayBuffer(64);
  writeBuffer(new DataView(ab, 16), 0, { rank: 3 });
  assert.equal(new DataView(ab).getBigInt64(16 + 32, true), 3n);
  writeBuffer(ab, 8, { rank: -1 });
  assert.equal(new DataView(ab).getBigInt64(8 + 32, true), -1n);
});

Deno.test("metadata, extension and API writers round-trip through the readers", () => {
  const meta = new Uint8Array(48);
  writeMetadata(meta, 0, {
    api_version: { major_version: 0, minor_version: 2 },
    traits: 1,
    state_type_id: 99n,
  });
  const mp = Deno.UnsafePointer.of(meta);
  assert.deepEqual(readMetadata(mp), {
    struct_size: 36,
    api_version: { struct_size: 24, extension_start: null, major_version: 0, minor_version: 2 },
    traits: 1,
    state_type_id: 99n,
  });
  const ext = new Uint8Array(32);
  writeMetadataExtension(ext, 0, { metadata: mp });
  const e = readMetadataExtension(Deno.UnsafePointer.of(ext));
  assert.deepEqual(e.extension_base, { struct_size: 32, type: 1, next: null });
  assert.equal(addr(e.metadata), addr(mp));

  const api = new Uint8Array(200);
  writeApi(api, 0, {
    api_version: { major_version: 0, minor_version: 5 },
    functions: { XLA_FFI_Error_Create: 0x10n, XLA_FFI_Error_GetCode: 0x20n },
  }, API_V0_5);
  const a = readApi(Deno.UnsafePointer.of(api));
  assert.equal(a.struct_size, 200);
  assert.equal(a.api_version.minor_version, 5);
  assert.equal(addr(a.functions.XLA_FFI_Error_Create!), 0x10n);
  assert.equal(addr(a.functions.XLA_FFI_Error_GetCode!), 0x20n);
  assert.equal(a.functions.XLA_FFI_Stream_Get, null);
  assert.throws(
    () => writeApi(api, 0, { functions: { XLA_FFI_Error_GetCode: 0x20n } as never }),
    /Unknown XLA_FFI_Api function slot: XLA_FFI_Error_GetCode$/,
  );
});

// ---------------------------------------------------------------------------
// A whole call frame, rebuilt by the writers from what the readers saw
// ---------------------------------------------------------------------------

class Arena {
  readonly mem = new Uint8Array(1 << 16);
  readonly dv = new DataView(this.mem.buffer);
  readonly base = addr(Deno.UnsafePointer.of(this.mem));
  used = 0;
  /** Reserves `n` bytes (8-aligned); returns [offset, address]. */
  alloc(n: number): [number, bigint] {
    const off = this.used;
    this.used += Math.ceil(Math.max(n, 1) / 8) * 8;
    assert.ok(this.used <= this.mem.length);
    return [off, this.base + BigInt(off)];
  }
  bytes(b: Uint8Array): bigint {
    const [off, a] = this.alloc(b.length);
    this.mem.set(b, off);
    return a;
  }
  u32s(values: number[]): bigint {
    const [off, a] = this.alloc(values.length * 4);
    values.forEach((v, i) => this.dv.setUint32(off + 4 * i, v, true));
    return a;
  }
  u64s(values: bigint[]): bigint {
    const [off, a] = this.alloc(values.length * 8);
    values.forEach((v, i) => this.dv.setBigUint64(off + 8 * i, BigInt.asUintN(64, v), true));
    return a;
  }
}

function scalarBytes(dtype: DataType, value: ScalarValue): Uint8Array {
  const b = new Uint8Array(8);
  const dv = new DataView(b.buffer);
  switch (dtype) {
    case DataType.PRED:
      b[0] = value ? 1 : 0;
      return b.subarray(0, 1);
    case DataType.S8:
      dv.setInt8(0, value as number);
      return b.subarray(0, 1);
    case DataType.U8:
      dv.setUint8(0, value as number);
      return b.subarray(0, 1);
    case DataType.S16:
      dv.setInt16(0, value as number, true);
      return b.subarray(0, 2);
    case DataType.U16:
      dv.setUint16(0, value as number, true);
      return b.subarray(0, 2);
    case DataType.S32:
      dv.setInt32(0, value as number, true);
      return b.subarray(0, 4);
    case DataType.U32:
      dv.setUint32(0, value as number, true);
      return b.subarray(0, 4);
    case DataType.F32:
      dv.setFloat32(0, value as number, true);
      return b.subarray(0, 4);
    case DataType.S64:
      dv.setBigInt64(0, value as bigint, true);
      return b;
    case DataType.U64:
      dv.setBigUint64(0, value as bigint, true);
      return b;
    case DataType.F64:
      dv.setFloat64(0, value as number, true);
      return b;
  }
  throw new Error(`fixture has no ${DataType[dtype]} scalar`);
}

function span(arena: Arena, s: string): bigint {
  const text = arena.bytes(new TextEncoder().encode(s));
  const [off, a] = arena.alloc(16);
  writeByteSpan(arena.mem, off, { ptr: text, len: new TextEncoder().encode(s).length });
  return a;
}

/** Lays out the arrays of an attribute list; returns the Attrs fields. */
function attrsInput(arena: Arena, entries: AttrEntry[]) {
  const values: bigint[] = [];
  for (const e of entries) {
    switch (e.type) {
      case AttrType.SCALAR: {
        const [off, a] = arena.alloc(16);
        writeScalar(arena.mem, off, {
          dtype: e.dtype,
          value: arena.bytes(scalarBytes(e.dtype, e.value)),
        });
        values.push(a);
        break;
      }
      case AttrType.ARRAY: {
        const v = e.value as ArrayValue;
        const data = v.length
          ? arena.bytes(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
          : 0n;
        const [off, a] = arena.alloc(24);
        writeArray(arena.mem, off, { dtype: e.dtype, size: v.length, data });
        values.push(a);
        break;
      }
      case AttrType.STRING:
        values.push(span(arena, e.value));
        break;
      case AttrType.DICTIONARY: {
        const [off, a] = arena.alloc(48);
        writeAttrs(arena.mem, off, attrsInput(arena, e.value));
        values.push(a);
        break;
      }
    }
  }
  return {
    size: entries.length,
    types: arena.u32s(entries.map((e) => e.type)),
    names: arena.u64s(entries.map((e) => span(arena, e.name))),
    attrs: arena.u64s(values),
  };
}

function buffersInput(arena: Arena, list: (BufferValue & { type: number })[]) {
  const ptrs = list.map((b) => {
    const dims = b.rank ? arena.u64s(b.dims.map(BigInt)) : 0n;
    const [off, a] = arena.alloc(48);
    writeBuffer(arena.mem, off, { dtype: b.dtype, data: b.data, rank: b.rank, dims });
    return a;
  });
  return { size: list.length, types: arena.u32s(list.map((b) => b.type)), ptrs: arena.u64s(ptrs) };
}

function rebuild(frame: ReturnType<typeof readCallFrame>): [Arena, Deno.PointerValue] {
  const arena = new Arena();
  const args = buffersInput(arena, frame.args);
  const rets = buffersInput(arena, frame.rets);
  const attrs = attrsInput(arena, frame.attrs);
  const [off, a] = arena.alloc(CALL_FRAME.sizeof);
  writeCallFrame(arena.mem, off, {
    api: frame.api,
    ctx: frame.ctx,
    stage: frame.stage,
    args: { size: args.size, types: args.types, args: args.ptrs },
    rets: { size: rets.size, types: rets.types, rets: rets.ptrs },
    attrs,
    future: frame.future,
  });
  return [arena, Deno.UnsafePointer.create(a)];
}

Deno.test("a call frame written in TS is the fixture frame as C sees it", () => {
  const fx = fixture();
  const frame = readCallFrame(fx.abi_fixture_frame());
  const [arena, p] = rebuild(frame);
  assert.equal(fx.abi_fixture_check_frame(p), 0);
  // The readers see the TS frame exactly as the C one.
  assert.deepEqual(readCallFrame(p), frame);
  void arena;

  // Every kind of difference is caught by C.
  const mutate = (change: (f: ReturnType<typeof readCallFrame>) => void) => {
    const copy = readCallFrame(fx.abi_fixture_frame());
    change(copy);
    const [keep, q] = rebuild(copy);
    const line = fx.abi_fixture_check_frame(q);
    void keep;
    return line;
  };
  assert.notEqual(mutate((f) => f.args[0]!.dims[1] = 4), 0);
  assert.notEqual(mutate((f) => f.args[6]!.dtype = DataType.F8E5M2), 0);
  assert.notEqual(mutate((f) => f.rets.pop()), 0);
  assert.notEqual(mutate((f) => f.stage = 1), 0);
  assert.notEqual(
    mutate((f) => {
      const dict = f.attrs.find((a) => a.name === "dict")!.value as AttrEntry[];
      const inner = dict[0]!.value as AttrEntry[];
      inner[0]!.value = 8;
    }),
    0,
  );
  assert.notEqual(
    mutate((f) => (f.attrs.find((a) => a.name === "arr_s64")!.value as BigInt64Array)[1] = 0n),
    0,
  );
  assert.notEqual(mutate((f) => f.attrs.find((a) => a.name === "name")!.value = "fixturE"), 0);
});

Deno.test("writeArgs and writeRets lay out standalone lists", () => {
  const mem = new Uint8Array(80);
  writeArgs(mem, 0, { size: 2, types: 0x10n, args: 0x20n });
  writeRets(mem, 40, { size: 1, types: 0x30n, rets: 0x40n });
  const args = readStruct(LAYOUTS.XLA_FFI_Args!, Deno.UnsafePointer.of(mem)) as Record<
    string,
    unknown
  >;
  assert.equal(args.struct_size, 40);
  assert.equal(args.size, 2n);
  assert.equal(new DataView(mem.buffer).getBigUint64(40 + 32, true), 0x40n);
});

Deno.test("the committed field list matches the layout tables", () => {
  assert.equal(
    Deno.readTextFileSync(HEADER_PATH),
    headerText(),
    "native/tests/abi_fixture_fields.h is stale: run deno run --allow-read --allow-write tests/_abi_fixture_fields.ts",
  );
});
