import assert from "node:assert/strict";
import { DataType, ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { allDataTypes, byteWidth, dataTypeInfo } from "../src/abi/dtype.ts";
import { loadNpy, NPY_MAX_DIMS, readNpy, saveNpy, writeNpy } from "../src/npy.ts";
import { isInvalidArgument } from "./_assert.ts";

/** A .npy file built by hand: magic, version, length field, header, data. */
function npy(header: string, data: number[] | Uint8Array = [], major = 1, minor = 0): Uint8Array {
  const prefix = major === 1 ? 10 : 12;
  const text = new TextEncoder().encode(header);
  const out = new Uint8Array(prefix + text.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, minor]);
  const dv = new DataView(out.buffer);
  if (major === 1) dv.setUint16(8, text.length, true);
  else dv.setUint32(8, text.length, true);
  out.set(text, prefix);
  out.set(data, prefix + text.length);
  return out;
}

function bytesOf(view: ArrayBufferView): number[] {
  return [...new Uint8Array(view.buffer, view.byteOffset, view.byteLength)];
}

Deno.test("hand-built little-endian files of every NumPy dtype", () => {
  const f = readNpy(
    npy(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n",
      bytesOf(new Float32Array([1, 2.5, -3, 4])),
    ),
  );
  assert.equal(f.dtype, DataType.F32);
  assert.deepEqual(f.shape, [2, 2]);
  assert.equal(f.fortranOrder, false);
  assert.ok(f.data instanceof Float32Array);
  assert.deepEqual([...f.data], [1, 2.5, -3, 4]);

  const cases: [string, DataType, string][] = [
    ["|b1", DataType.PRED, "Uint8Array"],
    ["|i1", DataType.S8, "Int8Array"],
    ["<i2", DataType.S16, "Int16Array"],
    ["<i4", DataType.S32, "Int32Array"],
    ["<i8", DataType.S64, "BigInt64Array"],
    ["|u1", DataType.U8, "Uint8Array"],
    ["<u2", DataType.U16, "Uint16Array"],
    ["<u4", DataType.U32, "Uint32Array"],
    ["<u8", DataType.U64, "BigUint64Array"],
    ["<f2", DataType.F16, "Float16Array"],
    ["<f8", DataType.F64, "Float64Array"],
    ["<c8", DataType.C64, "Float32Array"],
    ["<c16", DataType.C128, "Float64Array"],
    ["?", DataType.PRED, "Uint8Array"],
  ];
  for (const [descr, dt, view] of cases) {
    const width = byteWidth(dt);
    const data = Array.from({ length: 3 * width }, (_, i) => (i * 7) & 0x7f);
    const a = readNpy(npy(`{'descr': '${descr}', 'fortran_order': False, 'shape': (3,), }`, data));
    assert.equal(a.dtype, dt, descr);
    assert.deepEqual(a.shape, [3]);
    assert.equal(a.data.constructor.name, view, descr);
    assert.deepEqual(bytesOf(a.data), data, descr);
  }
});

Deno.test("big-endian data is byte-swapped to native order", () => {
  const i = readNpy(npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", [
    0x00,
    0x00,
    0x01,
    0x02,
    0xff,
    0xff,
    0xff,
    0xfe,
  ]));
  assert.deepEqual([...i.data], [0x0102, -2]);
  const u = readNpy(npy("{'descr': '>u8', 'fortran_order': False, 'shape': (1,), }", [
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
  ]));
  assert.deepEqual([...u.data], [0x0102030405060708n]);
  const h = readNpy(npy("{'descr': '>f2', 'fortran_order': False, 'shape': (), }", [0x3e, 0x00]));
  assert.deepEqual(h.shape, []);
  assert.deepEqual([...h.data], [1.5]);
  // Complex: each of real and imaginary part is swapped on its own.
  const be = new Uint8Array(8);
  new DataView(be.buffer).setFloat32(0, 1.25, false);
  new DataView(be.buffer).setFloat32(4, -2, false);
  const c = readNpy(npy("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", be));
  assert.equal(c.dtype, DataType.C64);
  assert.deepEqual([...c.data], [1.25, -2]);
  const b16 = new Uint8Array(16);
  new DataView(b16.buffer).setFloat64(0, 3.5, false);
  new DataView(b16.buffer).setFloat64(8, 0.5, false);
  const z = readNpy(npy("{'descr': '>c16', 'fortran_order': False, 'shape': (1,), }", b16));
  assert.deepEqual([...z.data], [3.5, 0.5]);
  const one = readNpy(npy("{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }", [1, 255]));
  assert.deepEqual([...one.data], [1, -1]);
});

Deno.test("Fortran-order data becomes C order and is flagged", () => {
  // [[1, 2, 3], [4, 5, 6]] stored column by column.
  const a = readNpy(
    npy(
      "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
      bytesOf(new Int16Array([1, 4, 2, 5, 3, 6])),
    ),
  );
  assert.equal(a.fortranOrder, true);
  assert.deepEqual([...a.data], [1, 2, 3, 4, 5, 6]);
  // 3-D: element (i, j, k) = 100i + 10j + k; Fortran offset i + 2j + 6k.
  const shape = [2, 3, 4];
  const fortran = new Float64Array(24);
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 3; j++) {
      for (let k = 0; k < 4; k++) fortran[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    }
  }
  const b = readNpy(
    npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }", bytesOf(fortran)),
  );
  const c: number[] = [];
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) c.push(100 * i + 10 * j + k);
  }
  assert.deepEqual(b.shape, shape);
  assert.deepEqual([...b.data], c);
  // Complex keeps (real, imaginary) pairs together; big-endian and Fortran at once.
  const be = new Uint8Array(32);
  const dv = new DataView(be.buffer);
  [1, -1, 3, -3, 2, -2, 4, -4].forEach((v, n) => dv.setFloat32(4 * n, v, false));
  const z = readNpy(npy("{'descr': '>c8', 'fortran_order': True, 'shape': (2, 2), }", be));
  assert.deepEqual([...z.data], [1, -1, 2, -2, 3, -3, 4, -4]);
  // 1-D and empty Fortran arrays need no reordering.
  const e = readNpy(npy("{'descr': '<u4', 'fortran_order': True, 'shape': (0, 5), }"));
  assert.equal(e.data.length, 0);
  assert.equal(e.fortranOrder, true);
  // 64-bit integers keep every bit.
  const big = readNpy(
    npy(
      "{'descr': '<u8', 'fortran_order': True, 'shape': (2, 2), }",
      bytesOf(new BigUint64Array([1n, 2n ** 64n - 1n, 2n ** 63n, 7n])),
    ),
  );
  assert.deepEqual([...big.data], [1n, 2n ** 63n, 2n ** 64n - 1n, 7n]);
});

Deno.test("0-d, empty, format 2.0 and 3.0 headers, Python 2 style shapes", () => {
  const s = readNpy(
    npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", bytesOf(new Float64Array([7]))),
  );
  assert.deepEqual(s.shape, []);
  assert.deepEqual([...s.data], [7]);
  const e = readNpy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }"));
  assert.deepEqual(e.shape, [3, 0]);
  assert.equal(e.data.length, 0);
  const v2 = readNpy(
    npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", [5, 0, 0, 0], 2, 0),
  );
  assert.deepEqual([...v2.data], [5]);
  const v3 = readNpy(
    npy('{"descr": "<i4", "fortran_order": False, "shape": (1,), }', [6, 0, 0, 0], 3, 0),
  );
  assert.deepEqual([...v3.data], [6]);
  const py2 = readNpy(
    npy(
      "{'descr': '<u1', 'fortran_order': False, 'shape': (2L, 1L)}",
      [8, 9],
    ),
  );
  assert.deepEqual(py2.shape, [2, 1]);
  // Trailing bytes after the data are ignored, as np.load does.
  const extra = readNpy(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", [1, 2]));
  assert.deepEqual([...extra.data], [1]);
});

Deno.test("void dtypes (ml_dtypes' bfloat16, float8, int4) need voidAs", () => {
  const file = npy("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", [
    0x80,
    0x3f,
    0x00,
    0xc0,
  ]);
  assert.throws(() => readNpy(file), /'<V2'.*pass voidAs/);
  const bf = readNpy(file, { voidAs: DataType.BF16 });
  assert.equal(bf.dtype, DataType.BF16);
  assert.ok(bf.data instanceof Uint16Array);
  assert.deepEqual([...bf.data], [0x3f80, 0xc000]);
  assert.throws(() => readNpy(file, { voidAs: DataType.F8E4M3FN }), /as F8E4M3FN/);
  assert.throws(() => readNpy(file, { voidAs: DataType.S16 }), isInvalidArgument);
  const f8 = readNpy(npy("{'descr': '|V1', 'fortran_order': False, 'shape': (1,), }", [0x38]), {
    voidAs: DataType.F8E4M3FN,
  });
  assert.equal(f8.dtype, DataType.F8E4M3FN);
  // Big-endian void of 2 bytes swaps like any 2-byte value.
  const bebf = readNpy(
    npy("{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }", [0x3f, 0x80]),
    {
      voidAs: DataType.BF16,
    },
  );
  assert.deepEqual([...bebf.data], [0x3f80]);
});

Deno.test("write then read every data type, shape and the NumPy header layout", () => {
  for (const dt of allDataTypes()) {
    const info = dataTypeInfo(dt);
    if (info.typedArray === null) {
      assert.throws(
        () => writeNpy({ dtype: dt, shape: [1], data: new Uint8Array(0) }),
        /it has no data/,
      );
      continue;
    }
    for (const shape of [[], [0], [3], [2, 3], [2, 0, 4], [1, 2, 1, 2]]) {
      const count = shape.reduce((a, b) => a * b, 1);
      const bytes = new Uint8Array(count * info.byteWidth).map((_, i) => (i * 37 + dt) & 0x7f);
      const data = new info.typedArray(bytes.buffer);
      const file = writeNpy({ dtype: dt, shape, data });
      const headerEnd = file.length - bytes.length;
      assert.equal(headerEnd % 64, 0, `${info.name} header is 64-byte aligned`);
      assert.equal(file[headerEnd - 1], 0x0a);
      assert.equal(file[6], 1);
      const back = readNpy(file, { voidAs: dt });
      assert.equal(back.dtype, dt);
      assert.deepEqual(back.shape, shape);
      assert.equal(back.fortranOrder, false);
      assert.equal(back.data.constructor, info.typedArray);
      assert.deepEqual(bytesOf(back.data), [...bytes], `${info.name} ${shape}`);
    }
  }
  const header = new TextDecoder().decode(
    writeNpy({ dtype: DataType.BF16, shape: [2], data: new Uint16Array(2) }).subarray(10, 128),
  );
  assert.match(header, /^\{'descr': '<V2', 'fortran_order': False, 'shape': \(2,\), \}/);
  // NumPy's most dimensions (NPY_MAXDIMS of NumPy 2.x) round-trip; one more is refused.
  const widest = new Array(NPY_MAX_DIMS).fill(1);
  widest[0] = 2;
  const w = writeNpy({ dtype: DataType.U8, shape: widest, data: new Uint8Array([7, 9]) });
  assert.deepEqual(readNpy(w).shape, widest);
  assert.throws(
    () => writeNpy({ dtype: DataType.U8, shape: [...widest, 1], data: new Uint8Array(2) }),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      /65 dimensions: NumPy allows at most 64/.test(e.message),
  );
});

Deno.test("a rank above NumPy's NPY_MAXDIMS is refused before any work", () => {
  assert.equal(NPY_MAX_DIMS, 64);
  const shapeOf = (rank: number, first: number) =>
    `(${[first, ...new Array(rank - 1).fill(1)].join(", ")},)`;
  const file = (rank: number, first: number, major = 1) =>
    npy(
      `{'descr': '|u1', 'fortran_order': True, 'shape': ${shapeOf(rank, first)}, }`,
      new Uint8Array(first),
      major,
    );
  // 64 dimensions read (Fortran order, size-1 dimensions everywhere but the first).
  const ok = readNpy(file(64, 3));
  assert.equal(ok.shape.length, 64);
  assert.equal(ok.fortranOrder, true);
  assert.equal(ok.data.length, 3);
  assert.throws(
    () => readNpy(file(65, 3)),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT &&
      /\.npy shape has 65 dimensions; NumPy allows at most 64/.test(e.message),
  );
  // A small file with a huge rank: refused quickly (reading once took time quadratic in
  // the file's size, seconds for a few hundred KiB).
  const big = file(60000, 60000, 2);
  assert.ok(big.length < 300_000);
  const t0 = performance.now();
  assert.throws(() => readNpy(big), /60000 dimensions/);
  const ms = performance.now() - t0;
  assert.ok(ms < 1000, `a ${big.length}-byte header took ${ms.toFixed(0)} ms`);
});

Deno.test("Fortran-order reading is linear in the element count, whatever the shape", () => {
  // Size-1 dimensions are skipped by the index carry: a long first dimension with 63
  // size-1 dimensions after it costs what a vector does.
  const n = 1 << 20;
  const shape = [n, ...new Array(NPY_MAX_DIMS - 2).fill(1), 1];
  const data = new Uint8Array(n).map((_, i) => i & 0xff);
  const header = `{'descr': '|u1', 'fortran_order': True, 'shape': (${shape.join(", ")}), }`;
  const t0 = performance.now();
  const a = readNpy(npy(header, data));
  const ms = performance.now() - t0;
  assert.deepEqual(a.shape, shape);
  assert.deepEqual(a.data.subarray(0, 4), new Uint8Array([0, 1, 2, 3]));
  assert.ok(ms < 2000, `${n} elements took ${ms.toFixed(0)} ms`);
  // Size-1 dimensions between real ones keep the transposition right.
  const f = new Int16Array([1, 4, 2, 5, 3, 6]); // Fortran order of [[1, 2, 3], [4, 5, 6]]
  const b = readNpy(
    npy("{'descr': '<i2', 'fortran_order': True, 'shape': (1, 2, 1, 3, 1), }", bytesOf(f)),
  );
  assert.deepEqual([...b.data], [1, 2, 3, 4, 5, 6]);
});

Deno.test("malformed files fail with clear INVALID_ARGUMENT errors", () => {
  const body = (h: string, data: number[] = []) => () => readNpy(npy(h, data));
  assert.throws(() => readNpy(new Uint8Array([1, 2, 3])), /Not a .npy file/);
  assert.throws(
    () => readNpy(new TextEncoder().encode("PK\x03\x04 not numpy at all")),
    isInvalidArgument,
  );
  assert.throws(
    () => readNpy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", [], 4, 0)),
    /format version 4.0/,
  );
  const truncated = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }").subarray(
    0,
    30,
  );
  assert.throws(() => readNpy(truncated), /Truncated .npy header/);
  assert.throws(
    body("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)"),
    /Malformed .npy header/,
  );
  assert.throws(body("{'descr': '<f4', 'shape': (1,), }"), /exactly the keys/);
  assert.throws(
    body("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
    /exactly the keys/,
  );
  assert.throws(body("['descr', '<f4']"), /exactly the keys/);
  assert.throws(body("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"), /not a bool/);
  assert.throws(body("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), /shape/);
  assert.throws(body("{'descr': '<f4', 'fortran_order': False, 'shape': 3, }"), /shape 3/);
  assert.throws(body("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }"), /'<U5'/);
  assert.throws(body("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"), /'\|O'/);
  assert.throws(body("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }"), /'<f16'/);
  assert.throws(
    body("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
    /structured/,
  );
  assert.throws(
    body("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", [0, 0, 0, 0]),
    /Truncated .npy data: shape \(2, 3\) of '<f4' needs 24 bytes, the file has 4/,
  );
  assert.throws(
    body("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }"),
    isInvalidArgument,
  );
  assert.throws(body("{'descr': 'abc"), /unterminated string/);
  assert.throws(
    body("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk"),
    /after the header/,
  );
  assert.throws(body("[".repeat(100)), /too deep/);
  // Writing.
  assert.throws(
    () => writeNpy({ dtype: DataType.F32, shape: [3], data: new Float32Array(2) }),
    /Data of 8 bytes does not fit shape \[3\] of F32 \(12 bytes\)/,
  );
  assert.throws(
    () => writeNpy({ dtype: DataType.F32, shape: [-1], data: new Float32Array(0) }),
    /Invalid shape/,
  );
  assert.throws(
    () => writeNpy({ dtype: 99 as DataType, shape: [], data: new Uint8Array(1) }),
    /Unknown data type 99/,
  );
});

Deno.test("saveNpy / loadNpy on files", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/a.npy`;
    saveNpy(path, { dtype: DataType.C64, shape: [2], data: new Float32Array([1, 2, 3, 4]) });
    const a = loadNpy(path);
    assert.equal(a.dtype, DataType.C64);
    assert.deepEqual([...a.data], [1, 2, 3, 4]);
    assert.throws(
      () => loadNpy(`${dir}/missing.npy`),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.NOT_FOUND && /missing\.npy/.test(e.message),
    );
    Deno.writeFileSync(
      `${dir}/bad.npy`,
      new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 9, 0, 0, 0]),
    );
    assert.throws(() => loadNpy(`${dir}/bad.npy`), /bad\.npy: Unsupported .npy format version 9.0/);
    assert.throws(
      () =>
        saveNpy(`${dir}/no/such/dir/x.npy`, {
          dtype: DataType.U8,
          shape: [],
          data: new Uint8Array(1),
        }),
      /Cannot write/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// Against NumPy, when python3 has it.

const NUMPY_SCRIPT = `
import sys, json, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(3)
cases = []
def add(name, a, version=None, fortran_expected=None):
    path = out + "/" + name + ".npy"
    if version is None:
        np.save(path, a)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
    le = a.dtype.newbyteorder("<") if a.dtype.byteorder in "<>=" else a.dtype
    np.ascontiguousarray(a).astype(le).tofile(out + "/" + name + ".expect")
    cases.append({"name": name, "descr": a.dtype.str, "shape": list(a.shape),
                  "fortran": bool(a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous)})
kinds = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]
for k in kinds:
    for order in "<>":
        dt = np.dtype(order + k) if k not in ("?", "i1", "u1") else np.dtype(k)
        if k == "?":
            a = rng.integers(0, 2, (2, 3, 4)).astype(dt)
        elif k[0] in "iu":
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, (2, 3, 4), dtype=dt.newbyteorder("=")).astype(dt)
        elif k[0] == "c":
            a = (rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))).astype(dt)
        else:
            a = (rng.standard_normal((2, 3, 4)) * 100).astype(dt)
        tag = k.replace("?", "b") + ("be" if order == ">" else "le")
        add(tag + "_c", a)
        add(tag + "_f", np.asfortranarray(a))
add("scalar", np.array(3.25, dtype="<f8"))
add("empty", np.zeros((0, 3), dtype="<f4"))
add("empty_f", np.asfortranarray(np.zeros((2, 0, 3), dtype=">i4")))
add("v2", np.arange(6, dtype="<i4").reshape(2, 3), version=(2, 0))
add("v3", np.arange(6, dtype=">f8").reshape(3, 2).T, version=(3, 0))
add("special", np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324], dtype=">f8"))
json.dump(cases, open(out + "/cases.json", "w"))
# Reference files for writeNpy: C order, little-endian.
for name, a in [("w_f4", np.arange(12, dtype="<f4").reshape(3, 4)), ("w_scalar", np.array(7, dtype="<i8")),
                ("w_empty", np.zeros((0,), dtype="<c16")), ("w_bool", np.array([True, False, True])),
                ("w_big", np.zeros((1234567, 0, 2), dtype="|u1"))]:
    np.save(out + "/" + name + ".npy", a)
`;

/** The Python of the NumPy checks: CI's jax venv (with numpy and ml_dtypes) or python3. */
const PYTHON = Deno.env.get("XLA_FFI_DENO_PYTHON") || "python3";

function hasNumpy(): boolean {
  try {
    return new Deno.Command(PYTHON, {
      args: ["-c", "import numpy"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

const haveNumpy = hasNumpy();
if (!haveNumpy) console.log("npy_test: python3 with numpy not found; NumPy file tests skipped");

Deno.test({
  name: "files written by NumPy: every dtype, both byte orders, C and Fortran, versions 1-3",
  ignore: !haveNumpy,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      const r = new Deno.Command(PYTHON, { args: ["-c", NUMPY_SCRIPT, dir] }).outputSync();
      assert.ok(r.success, new TextDecoder().decode(r.stderr));
      const cases = JSON.parse(Deno.readTextFileSync(`${dir}/cases.json`)) as {
        name: string;
        descr: string;
        shape: number[];
        fortran: boolean;
      }[];
      assert.ok(cases.length >= 60);
      let fortranSeen = 0;
      let bigSeen = 0;
      for (const c of cases) {
        const a = loadNpy(`${dir}/${c.name}.npy`);
        const expect = Deno.readFileSync(`${dir}/${c.name}.expect`);
        assert.deepEqual(a.shape, c.shape, c.name);
        assert.equal(a.fortranOrder, c.fortran, c.name);
        assert.deepEqual(bytesOf(a.data), [...expect], `${c.name} (${c.descr})`);
        if (c.fortran) fortranSeen++;
        if (c.descr.startsWith(">")) bigSeen++;
      }
      assert.ok(
        fortranSeen >= 28 && bigSeen >= 20,
        `${fortranSeen} Fortran, ${bigSeen} big-endian`,
      );
      // writeNpy produces NumPy's bytes exactly.
      const mine: [string, Parameters<typeof writeNpy>[0]][] = [
        ["w_f4", {
          dtype: DataType.F32,
          shape: [3, 4],
          data: new Float32Array(12).map((_, i) => i),
        }],
        ["w_scalar", { dtype: DataType.S64, shape: [], data: new BigInt64Array([7n]) }],
        ["w_empty", { dtype: DataType.C128, shape: [0], data: new Float64Array(0) }],
        ["w_bool", { dtype: DataType.PRED, shape: [3], data: new Uint8Array([1, 0, 1]) }],
        ["w_big", { dtype: DataType.U8, shape: [1234567, 0, 2], data: new Uint8Array(0) }],
      ];
      for (const [name, array] of mine) {
        assert.deepEqual([...writeNpy(array)], [...Deno.readFileSync(`${dir}/${name}.npy`)], name);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

const haveMlDtypes = haveNumpy && new Deno.Command(PYTHON, {
  args: ["-c", "import ml_dtypes"],
  stdout: "null",
  stderr: "null",
}).outputSync().success;
if (!haveMlDtypes) console.log("npy_test: python3 without ml_dtypes; ml_dtypes file test skipped");

Deno.test({
  name: "ml_dtypes arrays saved by NumPy read back with voidAs, and ours load in NumPy" +
    (haveMlDtypes ? "" : ` (ignored: ${PYTHON} has no numpy and ml_dtypes)`),
  ignore: !haveMlDtypes,
  fn() {
    const dir = Deno.makeTempDirSync();
    try {
      const script = `
import sys, numpy as np, ml_dtypes as m
d = sys.argv[1]
np.save(d + "/bf16.npy", np.array([[1.5, -2.0], [3.0, 0.1]], dtype=m.bfloat16))
np.save(d + "/e4m3.npy", np.array([448.0, -0.5], dtype=m.float8_e4m3fn))
np.save(d + "/i4.npy", np.array([-1, 7, -8], dtype=m.int4))
`;
      const r = new Deno.Command(PYTHON, { args: ["-c", script, dir] }).outputSync();
      assert.ok(r.success, new TextDecoder().decode(r.stderr));
      const bf = loadNpy(`${dir}/bf16.npy`, { voidAs: DataType.BF16 });
      assert.deepEqual(bf.shape, [2, 2]);
      assert.deepEqual([...bf.data], [0x3fc0, 0xc000, 0x4040, 0x3dcd]);
      const f8 = loadNpy(`${dir}/e4m3.npy`, { voidAs: DataType.F8E4M3FN });
      assert.deepEqual([...f8.data], [0x7e, 0xb0]);
      const i4 = loadNpy(`${dir}/i4.npy`, { voidAs: DataType.S4 });
      assert.deepEqual([...i4.data], [0x0f, 0x07, 0x08]);
      saveNpy(`${dir}/ours.npy`, {
        dtype: DataType.BF16,
        shape: [3],
        data: new Uint16Array([0x3f80, 0xc000, 0x7f80]),
      });
      const check = `
import sys, numpy as np, ml_dtypes as m
a = np.load(sys.argv[1] + "/ours.npy").view(m.bfloat16).astype(np.float64).tolist()
assert a == [1.0, -2.0, float("inf")], a
`;
      const c = new Deno.Command(PYTHON, { args: ["-c", check, dir] }).outputSync();
      assert.ok(c.success, new TextDecoder().decode(c.stderr));
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test("every entry point refuses values of the wrong kind with INVALID_ARGUMENT", () => {
  const invalid = (re: RegExp) => (e: unknown) => {
    assert.ok(e instanceof FfiError, `expected FfiError, got ${e}`);
    assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
    assert.match(e.message, re);
    return true;
  };
  const good = writeNpy({ dtype: DataType.F32, shape: [2], data: new Float32Array(2) });
  for (const [bytes, shown] of [[null, "null"], [undefined, "undefined"], [[1, 2], "an array"]]) {
    assert.throws(
      () => readNpy(bytes as never),
      invalid(new RegExp(`^readNpy: bytes must be a Uint8Array, got ${shown}$`)),
    );
  }
  assert.throws(() => readNpy(good.buffer as never), invalid(/got an ArrayBuffer$/));
  const gone = good.slice();
  gone.buffer.transfer();
  assert.throws(() => readNpy(gone), invalid(/^readNpy: the bytes' ArrayBuffer is detached/));
  assert.throws(() => readNpy(good, 5 as never), invalid(/^readNpy: options must be an object/));
  assert.throws(
    () => readNpy(good, { voidAs: 99 as DataType }),
    invalid(/^readNpy: voidAs 99 is not a data type$/),
  );
  assert.deepEqual([...readNpy(good, null as never).data], [0, 0]);
  assert.deepEqual(readNpy(good, { voidAs: DataType.BF16 }).shape, [2]);

  for (const a of [null, undefined, 5, "x"]) {
    assert.throws(() => writeNpy(a as never), invalid(/^writeNpy: expected an array/));
  }
  for (const shape of [5, undefined, "12"]) {
    assert.throws(
      () => writeNpy({ dtype: DataType.U8, shape: shape as never, data: new Uint8Array(2) }),
      invalid(/^writeNpy: shape must be an array of dimensions/),
    );
  }
  assert.throws(
    () =>
      writeNpy({ dtype: DataType.F32, shape: [Symbol("x")] as never, data: new Float32Array(1) }),
    invalid(/^Invalid shape \[Symbol\(x\)\]: dimensions must be integers ≥ 0$/),
  );
  const detached = new Float32Array(0);
  detached.buffer.transfer();
  assert.throws(
    () => writeNpy({ dtype: DataType.F32, shape: [0], data: detached }),
    invalid(/^writeNpy: the data's ArrayBuffer is detached/),
  );
  const dv = new DataView(new ArrayBuffer(0));
  dv.buffer.transfer();
  assert.throws(
    () => writeNpy({ dtype: DataType.F32, shape: [0], data: dv }),
    invalid(/^writeNpy: the data's ArrayBuffer is detached/),
  );

  // A path that is not one is refused, not turned into a file named "null".
  for (const path of [null, undefined, 5, {}]) {
    assert.throws(
      () => loadNpy(path as never),
      invalid(/^loadNpy: the path must be a string or a URL, got /),
    );
    assert.throws(
      () => saveNpy(path as never, { dtype: DataType.F32, shape: [1], data: new Float32Array(1) }),
      invalid(/^saveNpy: the path must be a string or a URL, got /),
    );
  }
});
