import assert from "node:assert/strict";
import { DataType } from "../src/abi/enums.ts";
import {
  allDataTypes,
  bitsToFloat,
  bitWidth,
  byteWidth,
  dataTypeInfo,
  dataTypeName,
  dataTypeOf,
  decodeFloats,
  encodeFloats,
  floatToBits,
  isComplex,
  isFloat,
  isInteger,
  isSignedInteger,
  numberToSubByte,
  subByteToNumber,
  typedArrayFor,
  viewAs,
} from "../src/abi/dtype.ts";
import { isInvalidArgument } from "./_assert.ts";

// ffi.h ByteWidth (spec §3.1), written out by hand.
const BYTE_WIDTH: Record<string, number> = {
  INVALID: 0,
  PRED: 1,
  S8: 1,
  S16: 2,
  S32: 4,
  S64: 8,
  U8: 1,
  U16: 2,
  U32: 4,
  U64: 8,
  F16: 2,
  F32: 4,
  F64: 8,
  C64: 8,
  BF16: 2,
  TOKEN: 0,
  C128: 16,
  F8E5M2: 1,
  F8E4M3FN: 1,
  S4: 1,
  U4: 1,
  F8E4M3B11FNUZ: 1,
  F8E5M2FNUZ: 1,
  F8E4M3FNUZ: 1,
  S2: 1,
  U2: 1,
  F8E4M3: 1,
  F8E3M4: 1,
  S1: 1,
  U1: 1,
  F4E2M1FN: 1,
  F8E8M0FNU: 1,
};

Deno.test("every DataType has a name, ByteWidth as ffi.h, a bit width and a kind", () => {
  const values = Object.values(DataType).filter((v) => typeof v === "number") as number[];
  assert.equal(values.length, 32);
  assert.deepEqual(allDataTypes(), [...values].sort((a, b) => a - b));
  for (const dt of values) {
    const name = DataType[dt] as string;
    assert.equal(dataTypeName(dt), name);
    assert.equal(byteWidth(dt), BYTE_WIDTH[name], name);
    const bits = bitWidth(dt);
    if (byteWidth(dt) > 0 && name !== "PRED") {
      assert.ok(bits <= byteWidth(dt) * 8 && bits > 0, name);
    }
  }
  assert.equal(bitWidth(DataType.S4), 4);
  assert.equal(bitWidth(DataType.U1), 1);
  assert.equal(bitWidth(DataType.S2), 2);
  assert.equal(bitWidth(DataType.F4E2M1FN), 4);
  assert.equal(bitWidth(DataType.F8E8M0FNU), 8);
  assert.equal(bitWidth(DataType.C128), 128);
  assert.equal(bitWidth(DataType.TOKEN), 0);
  assert.equal(dataTypeName(13), "unknown data type 13");
  assert.throws(() => byteWidth(14), isInvalidArgument);
  assert.throws(() => dataTypeInfo(99), /Unknown data type 99/);
});

Deno.test("kinds: float, integer, signed, complex", () => {
  const floats = [
    "F16",
    "F32",
    "F64",
    "BF16",
    "F8E5M2",
    "F8E4M3FN",
    "F8E4M3B11FNUZ",
    "F8E5M2FNUZ",
    "F8E4M3FNUZ",
    "F8E4M3",
    "F8E3M4",
    "F4E2M1FN",
    "F8E8M0FNU",
  ];
  for (const dt of allDataTypes()) {
    const name = DataType[dt] as string;
    assert.equal(isFloat(dt), floats.includes(name), name);
    assert.equal(isInteger(dt), /^[SU]\d+$/.test(name), name);
    assert.equal(isSignedInteger(dt), /^S\d+$/.test(name), name);
    assert.equal(isComplex(dt), /^C\d+$/.test(name), name);
  }
});

Deno.test("TypedArray views of every data type", () => {
  const expected: Record<string, string | null> = {
    INVALID: null,
    TOKEN: null,
    PRED: "Uint8Array",
    S8: "Int8Array",
    S16: "Int16Array",
    S32: "Int32Array",
    S64: "BigInt64Array",
    U8: "Uint8Array",
    U16: "Uint16Array",
    U32: "Uint32Array",
    U64: "BigUint64Array",
    F16: "Float16Array",
    F32: "Float32Array",
    F64: "Float64Array",
    C64: "Float32Array",
    C128: "Float64Array",
    BF16: "Uint16Array",
  };
  for (const dt of allDataTypes()) {
    const name = DataType[dt] as string;
    const want = name in expected ? expected[name] : "Uint8Array";
    assert.equal(typedArrayFor(dt)?.name ?? null, want, name);
    const info = dataTypeInfo(dt);
    if (info.typedArray !== null) {
      // ByteWidth = lanes × element size of the view.
      assert.equal(info.lanes * info.typedArray.BYTES_PER_ELEMENT, info.byteWidth, name);
    }
  }
  assert.equal(dataTypeOf(new Float32Array(1)), DataType.F32);
  assert.equal(dataTypeOf(new Float16Array(1)), DataType.F16);
  assert.equal(dataTypeOf(new Float64Array(1)), DataType.F64);
  assert.equal(dataTypeOf(new Int8Array(1)), DataType.S8);
  assert.equal(dataTypeOf(new Int16Array(1)), DataType.S16);
  assert.equal(dataTypeOf(new Int32Array(1)), DataType.S32);
  assert.equal(dataTypeOf(new BigInt64Array(1)), DataType.S64);
  assert.equal(dataTypeOf(new Uint8Array(1)), DataType.U8);
  assert.equal(dataTypeOf(new Uint8ClampedArray(1)), DataType.U8);
  assert.equal(dataTypeOf(new Uint16Array(1)), DataType.U16);
  assert.equal(dataTypeOf(new Uint32Array(1)), DataType.U32);
  assert.equal(dataTypeOf(new BigUint64Array(1)), DataType.U64);
  assert.throws(() => dataTypeOf(new DataView(new ArrayBuffer(4))), /No data type for a DataView/);
});

Deno.test("viewAs views bytes without copying and checks size and alignment", () => {
  const f = new Float64Array([1, 2, 3, 4]);
  const bytes = new Uint8Array(f.buffer);
  const c = viewAs(DataType.C128, bytes);
  assert.ok(c instanceof Float64Array);
  assert.equal(c.length, 4);
  c[3] = 9;
  assert.equal(f[3], 9);
  const s = viewAs(DataType.S16, f.buffer);
  assert.ok(s instanceof Int16Array);
  assert.equal(s.length, 16);
  assert.ok(viewAs(DataType.U64, bytes) instanceof BigUint64Array);
  assert.ok(viewAs(DataType.S4, bytes.subarray(3)) instanceof Uint8Array);
  assert.throws(() => viewAs(DataType.F32, bytes.subarray(2, 10)), /not aligned to 4 bytes/);
  assert.throws(() => viewAs(DataType.F32, bytes.subarray(0, 6)), /not a whole number of F32/);
  assert.throws(() => viewAs(DataType.C64, bytes.subarray(0, 12)), isInvalidArgument);
  assert.throws(() => viewAs(DataType.TOKEN, bytes), /TOKEN has no elements/);
});

Deno.test("sub-byte integers: low bits, sign extension, wrapping", () => {
  assert.equal(subByteToNumber(DataType.S4, 0x0f), -1);
  assert.equal(subByteToNumber(DataType.S4, 0xf7), 7);
  assert.equal(subByteToNumber(DataType.S4, 0x08), -8);
  assert.equal(subByteToNumber(DataType.U4, 0xff), 15);
  assert.equal(subByteToNumber(DataType.S2, 0x02), -2);
  assert.equal(subByteToNumber(DataType.U2, 0x06), 2);
  assert.equal(subByteToNumber(DataType.S1, 0x01), -1);
  assert.equal(subByteToNumber(DataType.U1, 0x03), 1);
  assert.equal(subByteToNumber(DataType.S8, 0x80), -128);
  for (const dt of [DataType.S1, DataType.S2, DataType.S4, DataType.U1, DataType.U2, DataType.U4]) {
    const bits = bitWidth(dt);
    const lo = isSignedInteger(dt) ? -(1 << (bits - 1)) : 0;
    for (let v = lo; v < lo + (1 << bits); v++) {
      const byte = numberToSubByte(dt, v);
      assert.ok(byte >= 0 && byte < 1 << bits);
      assert.equal(subByteToNumber(dt, byte), v);
    }
  }
  assert.equal(numberToSubByte(DataType.S4, 9), 9); // wraps: reads back as -7
  assert.equal(subByteToNumber(DataType.S4, numberToSubByte(DataType.S4, 9)), -7);
  assert.throws(() => numberToSubByte(DataType.F32, 1), /F32 is not a one-byte integer type/);
  assert.throws(() => subByteToNumber(DataType.S16, 1), isInvalidArgument);
});

// ---------------------------------------------------------------------------
// Small floats.

interface Fmt {
  dt: DataType;
  e: number;
  m: number;
  bias: number;
  kind: "ieee" | "fn" | "fnuz" | "sat" | "e8m0";
}

const FORMATS: Fmt[] = [
  { dt: DataType.F8E5M2, e: 5, m: 2, bias: 15, kind: "ieee" },
  { dt: DataType.F8E4M3, e: 4, m: 3, bias: 7, kind: "ieee" },
  { dt: DataType.F8E3M4, e: 3, m: 4, bias: 3, kind: "ieee" },
  { dt: DataType.F8E4M3FN, e: 4, m: 3, bias: 7, kind: "fn" },
  { dt: DataType.F8E4M3B11FNUZ, e: 4, m: 3, bias: 11, kind: "fnuz" },
  { dt: DataType.F8E5M2FNUZ, e: 5, m: 2, bias: 16, kind: "fnuz" },
  { dt: DataType.F8E4M3FNUZ, e: 4, m: 3, bias: 8, kind: "fnuz" },
  { dt: DataType.F4E2M1FN, e: 2, m: 1, bias: 1, kind: "sat" },
  { dt: DataType.F8E8M0FNU, e: 8, m: 0, bias: 127, kind: "e8m0" },
];

/** Reference decoder straight from the format definitions (Math.pow, no bit tricks). */
function refDecode(f: Fmt, bits: number): number {
  if (f.kind === "e8m0") return bits === 255 ? NaN : Math.pow(2, bits - 127);
  const width = 1 + f.e + f.m;
  const s = Math.floor(bits / Math.pow(2, width - 1));
  const rest = bits % Math.pow(2, width - 1);
  const exp = Math.floor(rest / Math.pow(2, f.m));
  const man = rest % Math.pow(2, f.m);
  const allOnes = Math.pow(2, f.e) - 1;
  if (f.kind === "fnuz" && s === 1 && rest === 0) return NaN;
  if (f.kind === "ieee" && exp === allOnes) return man === 0 ? (s ? -Infinity : Infinity) : NaN;
  if (f.kind === "fn" && exp === allOnes && man === Math.pow(2, f.m) - 1) return NaN;
  const mag = exp === 0
    ? man / Math.pow(2, f.m) * Math.pow(2, 1 - f.bias)
    : (1 + man / Math.pow(2, f.m)) * Math.pow(2, exp - f.bias);
  return s ? -mag : mag;
}

function patterns(f: Fmt): number {
  return f.kind === "sat" ? 16 : 256;
}

function sameFloat(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
}

Deno.test("8- and 4-bit floats: every pattern decodes as the format defines and round-trips", () => {
  for (const f of FORMATS) {
    const name = DataType[f.dt] as string;
    for (let b = 0; b < patterns(f); b++) {
      const v = bitsToFloat(f.dt, b);
      assert.ok(sameFloat(v, refDecode(f, b)), `${name} 0x${b.toString(16)}: ${v}`);
      const back = floatToBits(f.dt, v);
      if (Number.isNaN(v)) {
        assert.ok(Number.isNaN(bitsToFloat(f.dt, back)), `${name} NaN 0x${b.toString(16)}`);
      } else {
        assert.equal(back, b, `${name} 0x${b.toString(16)} = ${v} re-encodes`);
      }
    }
  }
});

Deno.test("8- and 4-bit floats: midpoints round to even, near-midpoints to nearest", () => {
  for (const f of FORMATS) {
    const name = DataType[f.dt] as string;
    const finite: [number, number][] = [];
    for (let b = 0; b < patterns(f); b++) {
      const v = bitsToFloat(f.dt, b);
      if (Number.isFinite(v) && !Object.is(v, -0) && v >= 0) finite.push([v, b]);
    }
    finite.sort((x, y) => x[0] - y[0]);
    for (let i = 0; i + 1 < finite.length; i++) {
      const [lo, loBits] = finite[i] as [number, number];
      const [hi, hiBits] = finite[i + 1] as [number, number];
      const mid = (lo + hi) / 2;
      const tiny = (hi - lo) * 2 ** -20;
      // ml_dtypes' E8M0 sends all of (2^-127, 2^-126) up to 2^-126.
      const below = f.kind === "e8m0" && loBits === 0 ? hiBits : loBits;
      assert.equal(floatToBits(f.dt, mid - tiny), below, `${name} below ${mid}`);
      assert.equal(floatToBits(f.dt, mid + tiny), hiBits, `${name} above ${mid}`);
      // Ties go to the even pattern; E8M0 (whose midpoint is 1.5 × lo) rounds ties up.
      const tie = f.kind === "e8m0" ? hiBits : (loBits & 1) === 0 ? loBits : hiBits;
      assert.equal(hiBits, loBits + 1, `${name} neighbours are consecutive patterns`);
      assert.equal(floatToBits(f.dt, mid), tie, `${name} tie ${mid}`);
      // Negative side mirrors, except for the unsigned E8M0.
      if (f.kind !== "e8m0") {
        const signBit = 1 << (f.e + f.m);
        const negTie = floatToBits(f.dt, -mid);
        const expected = tie === 0 && f.kind === "fnuz" ? 0 : tie | signBit;
        assert.equal(negTie, expected, `${name} tie -${mid}`);
      }
    }
  }
});

Deno.test("8- and 4-bit floats: specials, overflow, underflow and signed zero per format", () => {
  const T = (dt: DataType, x: number) => floatToBits(dt, x);
  // F8E5M2 (IEEE-like): Inf, overflow to Inf, quiet NaN keeps sign.
  assert.equal(T(DataType.F8E5M2, Infinity), 0x7c);
  assert.equal(T(DataType.F8E5M2, -Infinity), 0xfc);
  assert.equal(T(DataType.F8E5M2, 57344), 0x7b);
  assert.equal(T(DataType.F8E5M2, 61440), 0x7c); // tie above max rounds to even = Inf
  assert.equal(T(DataType.F8E5M2, 61439), 0x7b);
  assert.equal(T(DataType.F8E5M2, NaN), 0x7e);
  assert.equal(T(DataType.F8E5M2, -0), 0x80);
  assert.equal(T(DataType.F8E5M2, 2 ** -16), 0x01);
  assert.equal(T(DataType.F8E5M2, 2 ** -17), 0x00); // tie to even zero
  assert.equal(T(DataType.F8E5M2, -(2 ** -17) * 1.0001), 0x81);
  // F8E4M3 / F8E3M4 (IEEE-like).
  assert.equal(T(DataType.F8E4M3, 240), 0x77);
  assert.equal(T(DataType.F8E4M3, 1e6), 0x78);
  assert.equal(T(DataType.F8E4M3, NaN), 0x7c);
  assert.equal(T(DataType.F8E3M4, 15.5), 0x6f);
  assert.equal(T(DataType.F8E3M4, 16), 0x70);
  assert.equal(T(DataType.F8E3M4, NaN), 0x78);
  assert.equal(T(DataType.F8E3M4, 2 ** -6), 0x01);
  // F8E4M3FN: no Inf; overflow and Inf become NaN with the sign.
  assert.equal(T(DataType.F8E4M3FN, 448), 0x7e);
  assert.equal(T(DataType.F8E4M3FN, 464), 0x7e); // tie to even stays finite
  assert.equal(T(DataType.F8E4M3FN, 465), 0x7f);
  assert.equal(T(DataType.F8E4M3FN, Infinity), 0x7f);
  assert.equal(T(DataType.F8E4M3FN, -Infinity), 0xff);
  assert.equal(T(DataType.F8E4M3FN, -1e9), 0xff);
  assert.equal(T(DataType.F8E4M3FN, NaN), 0x7f);
  assert.equal(T(DataType.F8E4M3FN, -0), 0x80);
  assert.equal(T(DataType.F8E4M3FN, 2 ** -9), 0x01);
  assert.ok(Number.isNaN(bitsToFloat(DataType.F8E4M3FN, 0xff)));
  assert.equal(bitsToFloat(DataType.F8E4M3FN, 0x78), 256);
  // FNUZ: one NaN at 0x80, no -0.
  for (
    const [dt, max] of [[DataType.F8E4M3B11FNUZ, 30], [DataType.F8E5M2FNUZ, 57344], [
      DataType.F8E4M3FNUZ,
      240,
    ]] as const
  ) {
    assert.equal(bitsToFloat(dt, 0x7f), max);
    assert.equal(bitsToFloat(dt, 0xff), -max);
    assert.ok(Number.isNaN(bitsToFloat(dt, 0x80)));
    assert.equal(T(dt, -0), 0x00);
    assert.equal(T(dt, -1e-30), 0x00);
    assert.equal(T(dt, Infinity), 0x80);
    assert.equal(T(dt, -Infinity), 0x80);
    assert.equal(T(dt, NaN), 0x80);
    assert.equal(T(dt, max * 2), 0x80);
  }
  assert.equal(bitsToFloat(DataType.F8E4M3B11FNUZ, 0x01), 2 ** -13);
  assert.equal(bitsToFloat(DataType.F8E5M2FNUZ, 0x01), 2 ** -17);
  assert.equal(bitsToFloat(DataType.F8E4M3FNUZ, 0x08), 2 ** -7);
  // F4E2M1FN: 0, .5, 1, 1.5, 2, 3, 4, 6; saturates; NaN → ∓0 (ml_dtypes).
  assert.deepEqual(
    Array.from({ length: 16 }, (_, b) => bitsToFloat(DataType.F4E2M1FN, b)),
    [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6],
  );
  assert.equal(bitsToFloat(DataType.F4E2M1FN, 0xf3), 1.5); // high bits of the byte ignored
  assert.equal(T(DataType.F4E2M1FN, 7), 0x7);
  assert.equal(T(DataType.F4E2M1FN, 1e300), 0x7);
  assert.equal(T(DataType.F4E2M1FN, Infinity), 0x7);
  assert.equal(T(DataType.F4E2M1FN, -Infinity), 0xf);
  assert.equal(T(DataType.F4E2M1FN, 5), 0x6);
  assert.equal(T(DataType.F4E2M1FN, 0.25), 0x0);
  assert.equal(T(DataType.F4E2M1FN, 0.75), 0x2);
  assert.equal(T(DataType.F4E2M1FN, NaN), 0x8);
  assert.equal(T(DataType.F4E2M1FN, -0.1), 0x8);
  // F8E8M0FNU: powers of two, no sign, no zero; ties up; tiny clamps to 2^-127.
  assert.equal(bitsToFloat(DataType.F8E8M0FNU, 127), 1);
  assert.equal(bitsToFloat(DataType.F8E8M0FNU, 0), 2 ** -127);
  assert.equal(bitsToFloat(DataType.F8E8M0FNU, 254), 2 ** 127);
  assert.ok(Number.isNaN(bitsToFloat(DataType.F8E8M0FNU, 255)));
  assert.equal(T(DataType.F8E8M0FNU, 1.5), 128);
  assert.equal(T(DataType.F8E8M0FNU, 3), 129);
  assert.equal(T(DataType.F8E8M0FNU, 1.4999999), 127);
  assert.equal(T(DataType.F8E8M0FNU, 1e-300), 0);
  assert.equal(T(DataType.F8E8M0FNU, 2 ** -127), 0);
  assert.equal(T(DataType.F8E8M0FNU, 2 ** -127 * 1.001), 1); // ml_dtypes: (2^-127, 2^-126) → 2^-126
  assert.equal(T(DataType.F8E8M0FNU, 2 ** -126 * 1.499), 1);
  assert.equal(T(DataType.F8E8M0FNU, 2 ** -126 * 1.5), 2);
  assert.equal(T(DataType.F8E8M0FNU, 5e-324), 0);
  assert.equal(T(DataType.F8E8M0FNU, 2 ** 127 * 1.5), 255);
  assert.equal(T(DataType.F8E8M0FNU, 2 ** 127 * 1.49), 254);
  for (const x of [0, -0, -1, -1e-300, NaN, Infinity, -Infinity]) {
    assert.equal(T(DataType.F8E8M0FNU, x), 255, String(x));
  }
  assert.throws(() => floatToBits(DataType.F32, 1), /F32 is not a 16-, 8- or 4-bit float type/);
  assert.throws(() => bitsToFloat(DataType.S4, 1), isInvalidArgument);
});

// ---------------------------------------------------------------------------
// F16 and BF16.

function* randomDoubles(count: number, seed: number): Generator<number> {
  let s = seed >>> 0;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
  const f64 = new Float64Array(1);
  const u32 = new Uint32Array(f64.buffer);
  for (let i = 0; i < count; i++) {
    // Exponents concentrated around the small formats' ranges, random mantissas.
    const exp = 1023 + (next() % 300) - 150;
    u32[1] = ((next() & 1) << 31) | (exp << 20) | (next() & 0xfffff);
    u32[0] = next();
    yield f64[0] as number;
  }
}

Deno.test("F16: all 65536 patterns and 200k random values agree with Float16Array", () => {
  const h = new Float16Array(1);
  const hb = new Uint16Array(h.buffer);
  for (let b = 0; b < 65536; b++) {
    hb[0] = b;
    const v = h[0] as number;
    assert.ok(sameFloat(bitsToFloat(DataType.F16, b), v), `0x${b.toString(16)}`);
    if (!Number.isNaN(v)) assert.equal(floatToBits(DataType.F16, v), b);
  }
  for (const x of randomDoubles(200_000, 12345)) {
    h[0] = x;
    if (floatToBits(DataType.F16, x) !== hb[0]) {
      assert.fail(`F16 of ${x}: ${floatToBits(DataType.F16, x)} vs ${hb[0]}`);
    }
    assert.equal(bitsToFloat(DataType.F16, floatToBits(DataType.F16, x)), Math.f16round(x));
  }
  assert.equal(floatToBits(DataType.F16, 65520), 0x7c00); // tie above max → Inf
  assert.equal(floatToBits(DataType.F16, 65519), 0x7bff);
  assert.equal(floatToBits(DataType.F16, NaN), 0x7e00);
  assert.equal(floatToBits(DataType.F16, 2 ** -25), 0); // tie to even zero
  assert.equal(floatToBits(DataType.F16, 2 ** -24), 1);
});

Deno.test("BF16: decode is the top half of F32; encode rounds F32 bits to nearest even", () => {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let b = 0; b < 65536; b++) {
    u[0] = b << 16;
    assert.ok(sameFloat(bitsToFloat(DataType.BF16, b), f[0] as number), `0x${b.toString(16)}`);
    if (!Number.isNaN(f[0] as number)) assert.equal(floatToBits(DataType.BF16, f[0] as number), b);
  }
  let s = 987654321;
  for (let i = 0; i < 200_000; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    u[0] = s;
    const x = f[0] as number;
    if (Number.isNaN(x)) continue;
    const bits = u[0] as number;
    const want = ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
    const got = floatToBits(DataType.BF16, x);
    if (got !== want) assert.fail(`BF16 of ${x} (0x${bits.toString(16)}): ${got} vs ${want}`);
  }
  assert.equal(floatToBits(DataType.BF16, NaN), 0x7fc0);
  assert.equal(floatToBits(DataType.BF16, -Infinity), 0xff80);
  assert.equal(floatToBits(DataType.BF16, 1 + 2 ** -8), 0x3f80); // tie to even
  assert.equal(floatToBits(DataType.BF16, 1 + 3 * 2 ** -8), 0x3f82); // tie to even, upwards
  // Rounded once from the double (a float32 detour would round 1 + 2^-8 + 2^-40 down).
  assert.equal(floatToBits(DataType.BF16, 1 + 2 ** -8 + 2 ** -40), 0x3f81);
});

Deno.test("bulk encodeFloats / decodeFloats", () => {
  const raw = encodeFloats(DataType.F8E4M3FN, [1, -2, 448, 1000]);
  assert.ok(raw instanceof Uint8Array);
  assert.deepEqual([...raw], [0x38, 0xc0, 0x7e, 0x7f]);
  const back = decodeFloats(DataType.F8E4M3FN, raw);
  assert.deepEqual([...back].slice(0, 3), [1, -2, 448]);
  assert.ok(Number.isNaN(back[3] as number));
  const h = encodeFloats(DataType.F16, new Float32Array([0.1, 65504]));
  assert.ok(h instanceof Uint16Array);
  assert.deepEqual([...decodeFloats(DataType.F16, h, new Float32Array(2))], [
    Math.f16round(0.1),
    65504,
  ]);
  assert.throws(() => decodeFloats(DataType.F16, h, new Float64Array(1)), /holds 1 values/);
  assert.throws(() => encodeFloats(DataType.BF16, [1, 2], new Uint16Array(1)), isInvalidArgument);
});

// ---------------------------------------------------------------------------
// Cross-check against ml_dtypes when Python has it.

const ML_DTYPES_SCRIPT = `
import sys, numpy as np, ml_dtypes as m
out = sys.argv[1]
names = ["float8_e5m2", "float8_e4m3", "float8_e3m4", "float8_e4m3fn", "float8_e4m3b11fnuz",
         "float8_e5m2fnuz", "float8_e4m3fnuz", "float4_e2m1fn", "float8_e8m0fnu", "bfloat16"]
vals = [np.float32(v) for v in (0.0, -0.0, np.inf, -np.inf, np.nan)]
for n in names[:-1]:
    t = getattr(m, n)
    w = 16 if n == "float4_e2m1fn" else 256
    dec = np.arange(w, dtype=np.uint8).view(t).astype(np.float32)
    fin = np.unique(np.abs(dec[np.isfinite(dec)]))
    mids = ((fin[1:].astype(np.float64) + fin[:-1]) / 2).astype(np.float32)
    for a in (fin, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(0)),
              fin * np.float32(4), fin / np.float32(4)):
        vals.extend(a.tolist()); vals.extend((-a).tolist())
rng = np.random.default_rng(7)
bits = rng.integers(0, 2**32, 100000, dtype=np.uint64).astype(np.uint32)
r = bits.view(np.float32)
r = r[~np.isnan(r)]
vals.extend(r.tolist())
x = np.array(vals, dtype=np.float32)
x.tofile(out + "/in.f32")
for n in names:
    t = getattr(m, n)
    y = x.astype(t)
    (y.view(np.uint16) if n == "bfloat16" else y.view(np.uint8)).tofile(out + "/" + n + ".bits")
    w = 65536 if n == "bfloat16" else 16 if n == "float4_e2m1fn" else 256
    (np.arange(w, dtype=np.uint16 if n == "bfloat16" else np.uint8).view(t)
        .astype(np.float64).tofile(out + "/" + n + ".dec"))
`;

/** The Python the ml_dtypes cross-checks use: CI's jax venv (it has ml_dtypes) or python3. */
const PYTHON = Deno.env.get("XLA_FFI_DENO_PYTHON") || "python3";

function hasPython(module: string): boolean {
  try {
    const r = new Deno.Command(PYTHON, {
      args: ["-c", `import ${module}`],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return r.success;
  } catch {
    return false;
  }
}

const haveMlDtypes = hasPython("numpy, ml_dtypes");
if (!haveMlDtypes) {
  console.log(
    `dtype_test: ${PYTHON} with numpy and ml_dtypes not found; ml_dtypes cross-check skipped`,
  );
}

const ML_NOTE = haveMlDtypes ? "" : ` (ignored: ${PYTHON} has no numpy and ml_dtypes)`;

Deno.test({
  name: "small floats agree with ml_dtypes on every pattern and ~110k float32 inputs" + ML_NOTE,
  ignore: !haveMlDtypes,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      const r = new Deno.Command(PYTHON, { args: ["-c", ML_DTYPES_SCRIPT, dir] }).outputSync();
      assert.ok(r.success, new TextDecoder().decode(r.stderr));
      const x = new Float32Array(Deno.readFileSync(`${dir}/in.f32`).slice().buffer);
      const map: [string, DataType][] = [
        ["float8_e5m2", DataType.F8E5M2],
        ["float8_e4m3", DataType.F8E4M3],
        ["float8_e3m4", DataType.F8E3M4],
        ["float8_e4m3fn", DataType.F8E4M3FN],
        ["float8_e4m3b11fnuz", DataType.F8E4M3B11FNUZ],
        ["float8_e5m2fnuz", DataType.F8E5M2FNUZ],
        ["float8_e4m3fnuz", DataType.F8E4M3FNUZ],
        ["float4_e2m1fn", DataType.F4E2M1FN],
        ["float8_e8m0fnu", DataType.F8E8M0FNU],
        ["bfloat16", DataType.BF16],
      ];
      for (const [n, dt] of map) {
        const bytes = Deno.readFileSync(`${dir}/${n}.bits`).slice();
        const want = dt === DataType.BF16 ? new Uint16Array(bytes.buffer) : bytes;
        const got = encodeFloats(dt, x);
        let bad = 0;
        let first = "";
        for (let i = 0; i < x.length; i++) {
          if (got[i] !== want[i]) {
            if (bad++ === 0) first = `${x[i]} → ${got[i]} but ml_dtypes ${want[i]}`;
          }
        }
        assert.equal(bad, 0, `${n}: ${bad} of ${x.length} differ, first ${first}`);
        const dec = new Float64Array(Deno.readFileSync(`${dir}/${n}.dec`).slice().buffer);
        for (let b = 0; b < dec.length; b++) {
          assert.ok(
            sameFloat(bitsToFloat(dt, b), dec[b] as number),
            `${n} decode 0x${b.toString(16)}`,
          );
        }
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
