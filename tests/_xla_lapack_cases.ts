/**
 * jaxlib's LAPACK handlers (`jaxlib.cpu._lapack`) called as jax lowers
 * them: batched operands in column-major layouts (`inputLayouts`/
 * `outputLayouts`), jax's `input_output_aliases` and its `uplo`/`mode`/
 * `side`/… attributes, across F32/F64/C64/C128, checked with
 * `assertAllClose` against numpy and scipy in the same Python. One body per
 * routine runs on either host: the embedded runtime (`rt`, Python only
 * hosts the module) or real XLA (`xla.ffiCall`). Run in a child by
 * tests/xla_lapack_test.ts: `_xla_lapack_cases.ts runtime|xla`.
 */
import assert from "node:assert/strict";
import { DataType, type FfiHost, Runtime, scalar } from "../mod.ts";
import { assertAllClose, assertArrayEqual } from "../src/testing/mod.ts";
import { type ModuleHandlers, Xla } from "../src/xla/mod.ts";
import { runCaseFromArgs } from "./_xla_env.ts";

/** A LAPACK prefix, its array type and the real type of its eigen/singular values. */
interface Precision {
  p: "s" | "d" | "c" | "z";
  dtype: DataType;
  real: DataType;
  np: string;
  /** Tolerance of reconstructions (products of factors against the input). */
  tol: number;
}

const PRECISIONS: Precision[] = [
  { p: "s", dtype: DataType.F32, real: DataType.F32, np: "float32", tol: 1e-4 },
  { p: "d", dtype: DataType.F64, real: DataType.F64, np: "float64", tol: 1e-11 },
  { p: "c", dtype: DataType.C64, real: DataType.F32, np: "complex64", tol: 1e-4 },
  { p: "z", dtype: DataType.C128, real: DataType.F64, np: "complex128", tol: 1e-11 },
];

/** Batch 2 of n×n (and m×n for the rectangular routines). */
const B = 2, N = 3, M = 4;
/** jax's layout of a batched matrix: column-major within each matrix, batch outermost. */
const COL = [0, 2, 1];
/** A LAPACK character attribute, as jax passes it (`np.uint8(ord(c))`). */
const ch = (c: string) => scalar(DataType.U8, c.charCodeAt(0));

/** Python helpers the checks share: inputs from a seed, arrays to and from flat JSON lists. */
const PYTHON_HELPERS = `
import scipy.linalg
def make(shape, dtype, seed, kind="general"):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    x = x.astype(dtype)
    if kind == "spd":  # Hermitian positive definite
        x = (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    if kind == "lower":  # well-conditioned lower triangle, garbage above it (never read)
        x = x + 4 * np.eye(shape[-1], dtype=dtype)
    return x
def flat(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return np.stack([x.real, x.imag], -1).ravel().tolist()
    return x.ravel().tolist()
def unflat(v, shape, dtype):
    a = np.asarray(v, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        a = a.reshape(-1, 2)
        a = a[:, 0] + 1j * a[:, 1]
    return a.reshape(shape).astype(dtype)
`;

interface Bench {
  host: FfiHost;
  xla: Xla;
  lapack: ModuleHandlers;
}

/** A Python expression's JSON value. */
async function py<T>(b: Bench, source: string): Promise<T> {
  return await b.xla.runPython(source) as T;
}

/** The data of a flat list in the precision's typed array. */
function typed(pr: Precision, v: number[], real = false): Float32Array | Float64Array {
  const dt = real ? pr.real : pr.dtype;
  return dt === DataType.F32 || dt === DataType.C64 ? new Float32Array(v) : new Float64Array(v);
}

/** A result's values as a JSON list for Python. */
function json(data: ArrayLike<number | bigint>): string {
  return JSON.stringify(Array.from(data, Number));
}

/** The array a result is in Python: `unflat(<json>, shape, dtype)`. */
function toPy(data: ArrayLike<number | bigint>, shape: number[], np: string): string {
  return `unflat(${json(data)}, ${JSON.stringify(shape)}, "${np}")`;
}

const ROUTINES: Record<string, (b: Bench, pr: Precision, seed: number) => Promise<void>> = {
  /** LU with partial pivoting: the factors and pivots scipy's lu_factor gives, P·L·U = A. */
  async getrf(b, pr, seed) {
    const a = await py<number[]>(b, `result = flat(make((${B}, ${N}, ${N}), "${pr.np}", ${seed}))`);
    const [lu, ipiv, info] = await b.host.ffiCall(b.lapack.handler(`lapack_${pr.p}getrf_ffi`), {
      args: [{ data: typed(pr, a), shape: [B, N, N], dtype: pr.dtype }],
      results: [
        { dtype: pr.dtype, shape: [B, N, N] },
        { dtype: DataType.S32, shape: [B, N] },
        { dtype: DataType.S32, shape: [B] },
      ],
      inputLayouts: [COL],
      outputLayouts: [COL, null, null],
      inputOutputAliases: { 0: 0 },
    });
    assertArrayEqual(info, [0, 0]);
    const ref = await py<[number[], number[], number[]]>(
      b,
      `a = make((${B}, ${N}, ${N}), "${pr.np}", ${seed})
lus = [scipy.linalg.lu_factor(m) for m in a]
lu = ${toPy(lu, [B, N, N], pr.np)}
ipiv = np.asarray(${json(ipiv)}).reshape(${B}, ${N}) - 1
plu = []
for m, piv in zip(lu, ipiv):
    p = np.arange(${N})
    for i, j in enumerate(piv): p[[i, j]] = p[[j, i]]
    l = np.tril(m, -1) + np.eye(${N}); u = np.triu(m)
    plu.append((l @ u)[np.argsort(p)])
result = [flat([x[0] for x in lus]), flat([x[1] + 1 for x in lus]), flat(plu)]`,
    );
    assertAllClose(lu, typed(pr, ref[0]), { rtol: pr.tol, atol: pr.tol }, `${pr.p}getrf LU`);
    assertArrayEqual(ipiv, ref[1], `${pr.p}getrf pivots`);
    assertAllClose(typed(pr, ref[2]), typed(pr, a), { rtol: pr.tol, atol: pr.tol }, "P·L·U = A");
  },

  /** QR: the Householder form (R above the diagonal, reflectors below, τ) scipy's qr(raw) gives. */
  async geqrf(b, pr, seed) {
    const a = await py<number[]>(b, `result = flat(make((${B}, ${M}, ${N}), "${pr.np}", ${seed}))`);
    const [qr, tau] = await b.host.ffiCall(b.lapack.handler(`lapack_${pr.p}geqrf_ffi`), {
      args: [{ data: typed(pr, a), shape: [B, M, N], dtype: pr.dtype }],
      results: [{ dtype: pr.dtype, shape: [B, M, N] }, { dtype: pr.dtype, shape: [B, N] }],
      inputLayouts: [COL],
      outputLayouts: [COL, null],
      inputOutputAliases: { 0: 0 },
    });
    const ref = await py<[number[], number[]]>(
      b,
      `a = make((${B}, ${M}, ${N}), "${pr.np}", ${seed})
raw = [scipy.linalg.qr(m, mode="raw")[0] for m in a]
result = [flat([h for h, t in raw]), flat([t for h, t in raw])]`,
    );
    assertAllClose(qr, typed(pr, ref[0]), { rtol: pr.tol, atol: pr.tol }, `${pr.p}geqrf R\\V`);
    assertAllClose(tau, typed(pr, ref[1]), { rtol: pr.tol, atol: pr.tol }, `${pr.p}geqrf τ`);
  },

  /** Cholesky (uplo 'L'): numpy's factor in the lower triangle, the input's untouched above it. */
  async potrf(b, pr, seed) {
    const shape = `(${B}, ${N}, ${N})`;
    const a = await py<number[]>(b, `result = flat(make(${shape}, "${pr.np}", ${seed}, "spd"))`);
    const [l, info] = await b.host.ffiCall(b.lapack.handler(`lapack_${pr.p}potrf_ffi`), {
      args: [{ data: typed(pr, a), shape: [B, N, N], dtype: pr.dtype }],
      results: [{ dtype: pr.dtype, shape: [B, N, N] }, { dtype: DataType.S32, shape: [B] }],
      attrs: { uplo: ch("L") },
      inputLayouts: [COL],
      outputLayouts: [COL, null],
      inputOutputAliases: { 0: 0 },
    });
    assertArrayEqual(info, [0, 0]);
    const ref = await py<number[]>(
      b,
      `a = make(${shape}, "${pr.np}", ${seed}, "spd")
result = flat(np.linalg.cholesky(a) + np.triu(a, 1))`,
    );
    assertAllClose(l, typed(pr, ref), { rtol: pr.tol, atol: pr.tol }, `${pr.p}potrf`);
  },

  /** Symmetric/Hermitian eigendecomposition (mode 'V', uplo 'L'): numpy's eigenvalues, V·diag(w)·Vᴴ = A. */
  async syevd(b, pr, seed) {
    const name = pr.p === "c" || pr.p === "z" ? `${pr.p}heevd` : `${pr.p}syevd`;
    const shape = `(${B}, ${N}, ${N})`;
    const a = await py<number[]>(b, `result = flat(make(${shape}, "${pr.np}", ${seed}, "spd"))`);
    const [v, w, info] = await b.host.ffiCall(b.lapack.handler(`lapack_${name}_ffi`), {
      args: [{ data: typed(pr, a), shape: [B, N, N], dtype: pr.dtype }],
      results: [
        { dtype: pr.dtype, shape: [B, N, N] },
        { dtype: pr.real, shape: [B, N] },
        { dtype: DataType.S32, shape: [B] },
      ],
      attrs: { mode: ch("V"), uplo: ch("L") },
      inputLayouts: [COL],
      outputLayouts: [COL, null, null],
      inputOutputAliases: { 0: 0 },
    });
    assertArrayEqual(info, [0, 0]);
    const ref = await py<[number[], number[]]>(
      b,
      `a = make(${shape}, "${pr.np}", ${seed}, "spd")
v = ${toPy(v, [B, N, N], pr.np)}
w = np.asarray(${json(w)}).reshape(${B}, ${N})
back = v @ (w[:, :, None] * np.conj(np.swapaxes(v, -1, -2)))
result = [flat(np.linalg.eigvalsh(a)), flat(back)]`,
    );
    assertAllClose(w, typed(pr, ref[0], true), { rtol: pr.tol, atol: pr.tol }, `${name} w`);
    assertAllClose(typed(pr, ref[1]), typed(pr, a), { rtol: pr.tol, atol: pr.tol }, "V·w·Vᴴ = A");
  },

  /** SVD by divide and conquer (mode 'S'): numpy's singular values, U·diag(s)·Vᴴ = A. */
  async gesdd(b, pr, seed) {
    const shape = `(${B}, ${M}, ${N})`;
    const a = await py<number[]>(b, `result = flat(make(${shape}, "${pr.np}", ${seed}))`);
    const [, s, u, vt, info] = await b.host.ffiCall(b.lapack.handler(`lapack_${pr.p}gesdd_ffi`), {
      args: [{ data: typed(pr, a), shape: [B, M, N], dtype: pr.dtype }],
      results: [
        { dtype: pr.dtype, shape: [B, M, N] },
        { dtype: pr.real, shape: [B, N] },
        { dtype: pr.dtype, shape: [B, M, N] },
        { dtype: pr.dtype, shape: [B, N, N] },
        { dtype: DataType.S32, shape: [B] },
      ],
      attrs: { mode: ch("S") },
      inputLayouts: [COL],
      outputLayouts: [COL, null, COL, COL, null],
      inputOutputAliases: { 0: 0 },
    });
    assertArrayEqual(info, [0, 0]);
    const ref = await py<[number[], number[]]>(
      b,
      `a = make(${shape}, "${pr.np}", ${seed})
u = ${toPy(u, [B, M, N], pr.np)}
vt = ${toPy(vt, [B, N, N], pr.np)}
s = np.asarray(${json(s)}).reshape(${B}, ${N})
result = [flat(np.linalg.svd(a, compute_uv=False)), flat(u @ (s[:, :, None] * vt))]`,
    );
    assertAllClose(s, typed(pr, ref[0], true), { rtol: pr.tol, atol: pr.tol }, `${pr.p}gesdd s`);
    assertAllClose(typed(pr, ref[1]), typed(pr, a), { rtol: pr.tol, atol: pr.tol }, "U·s·Vᴴ = A");
  },

  /** Triangular solve (side 'L', uplo 'L', no transpose, non-unit): numpy's solve with tril(A). */
  async trsm(b, pr, seed) {
    const inputs = await py<[number[], number[]]>(
      b,
      `result = [flat(make((${B}, ${N}, ${N}), "${pr.np}", ${seed}, "lower")),
          flat(make((${B}, ${N}, ${M}), "${pr.np}", ${seed + 1}))]`,
    );
    const [x] = await b.host.ffiCall(b.lapack.handler(`lapack_${pr.p}trsm_ffi`), {
      args: [
        { data: typed(pr, inputs[0]), shape: [B, N, N], dtype: pr.dtype },
        { data: typed(pr, inputs[1]), shape: [B, N, M], dtype: pr.dtype },
      ],
      results: [{ dtype: pr.dtype, shape: [B, N, M] }],
      attrs: { side: ch("L"), uplo: ch("L"), trans_x: ch("N"), diag: ch("N") },
      inputLayouts: [COL, COL],
      outputLayouts: [COL],
      inputOutputAliases: { 1: 0 },
    });
    const ref = await py<number[]>(
      b,
      `a = make((${B}, ${N}, ${N}), "${pr.np}", ${seed}, "lower")
y = make((${B}, ${N}, ${M}), "${pr.np}", ${seed + 1})
result = flat(np.linalg.solve(np.tril(a), y))`,
    );
    assertAllClose(x, typed(pr, ref), { rtol: pr.tol, atol: pr.tol }, `${pr.p}trsm`);
  },
};

/** Every routine in every precision on one host. */
async function all(hostKind: "runtime" | "xla"): Promise<void> {
  await using xla = await Xla.open();
  await xla.runPython(PYTHON_HELPERS);
  const lapack = await xla.handlersFrom("jaxlib.cpu._lapack", { initialize: "initialize" });
  using rt = new Runtime();
  const host: FfiHost = hostKind === "runtime" ? rt : xla;
  let seed = 1;
  const done: string[] = [];
  for (const [routine, run] of Object.entries(ROUTINES)) {
    for (const pr of PRECISIONS) {
      await run({ host, xla, lapack }, pr, seed++);
      done.push(routine === "syevd" && pr.real !== pr.dtype ? `${pr.p}heevd` : pr.p + routine);
    }
  }
  assert.equal(done.length, 24);
  console.log(`${hostKind}: ${done.join(" ")}`);
}

const CASES: Record<string, () => Promise<void>> = {
  runtime: () => all("runtime"),
  xla: () => all("xla"),
};

if (import.meta.main) await runCaseFromArgs(CASES);
