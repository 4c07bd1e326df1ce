/**
 * The real-XLA test cases, one per child process (`tests/xla_*_test.ts` run
 * `deno run … tests/_xla_cases.ts <case>`): a crash inside XLA or Python
 * then fails one test instead of the runner. Each case hosts jax through
 * `@deno-xla/ffi/xla` (`$XLA_FFI_DENO_PYTHON`), asserts, closes what it opened and
 * prints `ok <case>` last.
 *
 * @module
 */
import assert from "node:assert/strict";
import { rejectsWith as rejects } from "./_assert.ts";
import {
  ArrayAttr,
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  HandlerBundle,
  handlerHostStats,
  HandlerLibrary,
  runtimeDebugStats,
  scalar,
} from "../mod.ts";
import { readNpy, writeNpy } from "../src/npy.ts";
import { PythonError, Xla, type XlaArray, type XlaOptions } from "../src/xla/mod.ts";
import { buildDemoLibrary } from "../examples/build_native.ts";
import { thrownValues } from "./_thrown_values.ts";
import { runCaseFromArgs } from "./_xla_env.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

const F32 = DataType.F32;
const spec = (dtype: DataType, shape: number[]) => ({ dtype, shape });

async function open(options: XlaOptions = {}): Promise<Xla> {
  return await Xla.open(options);
}

/** y = 2 * x (F32 of any rank). */
function doubler() {
  return Ffi.bind().arg(F32).ret(F32).to((x, y) => {
    const xs = x.typed(), ys = y.typed();
    for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
  });
}

const CASES: Record<string, () => Promise<void>> = {
  /** Versions, devices, a second host in the same process, close. */
  async host() {
    const xla = await open();
    assert.match(xla.version.jax, /^\d+\.\d+\.\d+/);
    assert.match(xla.version.jaxlib, /^\d+\.\d+\.\d+/);
    assert.equal(xla.version.ffiApi?.major, 0);
    assert.ok(xla.version.ffiApi!.minor >= 1);
    assert.match(xla.version.python, /^3\.\d+\.\d+$/);
    assert.equal(xla.deviceCount, 1);
    assert.equal(xla.platform, "cpu");
    const t0 = performance.now();
    const second = await open();
    const reopen = performance.now() - t0;
    assert.ok(reopen < 2000, `a second open reuses the interpreter (${reopen} ms)`);
    assert.equal(await second.runPython("result = jnp.arange(4).sum().item()"), 6);
    await second.close();
    await second.close(); // twice is fine
    await rejects(second.runPython("result = 1"), ErrorCode.FAILED_PRECONDITION, /closed/);
    // The first host is unaffected by the second's close.
    assert.equal(await xla.runPython("import sys\nresult = sys.version_info[0]"), 3);
    const prog = await xla.jit("def f(x):\n    return x + 1\n");
    await prog.close();
    await rejects(prog.run(new Float32Array(1)), ErrorCode.FAILED_PRECONDITION, /closed/);
    const prog2 = await xla.jit("def f(x):\n    return x + 1\n");
    await xla.close();
    await rejects(prog2.run(new Float32Array(1)), ErrorCode.FAILED_PRECONDITION, /closed/);
    await rejects(xla.jit("def f(x): return x"), ErrorCode.FAILED_PRECONDITION, /closed/);
    // Python stays initialised: a new host after every host closed.
    const third = await open();
    assert.equal((await third.pythonStats()).programs, 0);
    await third.close();
  },

  /**
   * Python runs only on the host's own worker threads, which never exit: a
   * thread that ran Python (and libraries such as OpenSSL with per-thread
   * state) must not end while the process exits. Deno's own pool threads
   * (which end when idle) only wait for the workers.
   */
  async threads() {
    await using xla = await open();
    const where = `import threading\nt = threading.get_native_id()\n` +
      `result = [t, open(f"/proc/self/task/{t}/comm").read().strip()]`;
    const seen = new Map<number, string>();
    for (let i = 0; i < 8; i++) {
      const [tid, name] = await xla.runPython(where) as [number, string];
      seen.set(tid, name);
    }
    // One at a time: one worker serves them all.
    assert.equal(seen.size, 1, `sequential requests ran on ${seen.size} threads`);
    // Many at once (each holds its worker in time.sleep, GIL released): workers are added.
    const busy = `import time\ntime.sleep(0.05)\n${where}`;
    const all = await Promise.all(Array.from({ length: 6 }, () => xla.runPython(busy))) as [
      number,
      string,
    ][];
    for (const [tid, name] of all) seen.set(tid, name);
    assert.ok(seen.size >= 2 && seen.size <= 7, `${seen.size} worker threads`);
    for (const [tid, name] of seen) {
      assert.equal(name, "deno-xla-python", `Python ran on thread ${tid} named '${name}'`);
    }
    // The workers are kept: the same ones serve later requests.
    const again = new Set<number>();
    for (let i = 0; i < 6; i++) again.add((await xla.runPython(where) as [number, string])[0]);
    for (const tid of again) assert.ok(seen.has(tid), `request on a new thread ${tid}`);
  },

  /** A synchronous TS handler through ffiCall and through a jitted program. */
  async sync() {
    await using xla = await open();
    using h = doubler();
    await xla.register("t.double", h);
    const [y] = await xla.ffiCall("t.double", {
      args: [new Float32Array([1, 2, 3])],
      results: [spec(F32, [3])],
    });
    assert.deepEqual([...(y as Float32Array)], [2, 4, 6]);
    // Ranks 0 to 3, the same handler.
    for (const shape of [[], [5], [2, 3], [2, 2, 2]]) {
      const n = shape.reduce((a, b) => a * b, 1);
      const data = Float32Array.from({ length: n }, (_, i) => i + 0.5);
      const [r] = await xla.ffiCall("t.double", {
        args: [{ data, shape }],
        results: [spec(F32, shape)],
      });
      assert.deepEqual([...(r as Float32Array)], [...data].map((v) => 2 * v));
    }
    await using prog = await xla.jit(
      `def f(x):\n    d = ffi.ffi_call("t.double", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n` +
        `    return jnp.sum(d), d * 3\n`,
    );
    const [sum, d3] = await prog.run({ data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] });
    assert.equal(sum!.data[0], 20);
    assert.deepEqual(sum!.shape, []);
    assert.deepEqual(d3!.shape, [2, 2]);
    assert.deepEqual([...(d3!.data as Float32Array)], [6, 12, 18, 24]);
    assert.equal(handlerHostStats().failedCompletions, 0);
  },

  /** Async TS handlers: `await null`, a timer, and many calls in flight. */
  async async() {
    await using xla = await open();
    using micro = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
      await null;
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! + 1;
    });
    using timer = Ffi.bind().arg(F32).ret(F32).attr("ms", "i64").to(async (x, y, ms) => {
      await new Promise((r) => setTimeout(r, ms));
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! * 10;
    });
    await xla.register("t.micro", micro);
    await xla.register("t.timer", timer);
    const [a] = await xla.ffiCall("t.micro", {
      args: [new Float32Array([1, 2])],
      results: [spec(F32, [2])],
    });
    assert.deepEqual([...(a as Float32Array)], [2, 3]);
    const t0 = performance.now();
    const [b] = await xla.ffiCall("t.timer", {
      args: [new Float32Array([1, 2])],
      results: [spec(F32, [2])],
      attrs: { ms: 30 },
    });
    assert.ok(performance.now() - t0 >= 25, "the timer ran before the result came back");
    assert.deepEqual([...(b as Float32Array)], [10, 20]);
    // Both in one program: XLA waits for each future in turn.
    await using prog = await xla.jit(`
def f(x):
    s = jax.ShapeDtypeStruct(x.shape, x.dtype)
    y = ffi.ffi_call("t.micro", s)(x)
    return ffi.ffi_call("t.timer", s)(y, ms=5)
`);
    const [c] = await prog.run(new Float32Array([1, 2, 3]));
    assert.deepEqual([...(c!.data as Float32Array)], [20, 30, 40]);
    // Many calls in flight at once (each on its own worker thread).
    const all = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        xla.ffiCall(i % 2 ? "t.micro" : "t.timer", {
          args: [new Float32Array([i])],
          results: [spec(F32, [1])],
          attrs: i % 2 ? undefined : { ms: 2 },
        })),
    );
    all.forEach(([r], i) => assert.equal(r![0], i % 2 ? i + 1 : i * 10));
    assert.equal(handlerHostStats().failedCompletions, 0);
  },

  /**
   * Calls of one plan in flight at once, each on its own frame: XLA lets go
   * of the GIL while it runs, so the bridge's arrays over one call's memory
   * must never serve another's. 64 calls of one signature (an async TS
   * handler finishing in a shuffled order, then a jitted program), each
   * with its own data: every result is its own call's.
   */
  async inFlight() {
    await using xla = await open();
    using slow = Ffi.bind().arg(F32).ret(F32).attr("ms", "i64").to(async (x, y, ms) => {
      await new Promise((r) => setTimeout(r, ms));
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! * 10;
    });
    await xla.register("t.slow", slow);
    const n = 64;
    const delay = (i: number) => (i * 7) % 5; // a shuffled finishing order
    for (let round = 0; round < 3; round++) {
      const all = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          xla.ffiCall("t.slow", {
            args: [new Float32Array([i, -i, round])],
            results: [spec(F32, [3])],
            attrs: { ms: delay(i) },
          })),
      );
      all.forEach(([r], i) =>
        assert.deepEqual([...r!], [10 * i, -10 * i, 10 * round], `call ${i}`)
      );
    }
    await using prog = await xla.jit(`
def f(x):
    return ffi.ffi_call("t.slow", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, ms=np.int64(1)) + 1
`);
    for (let round = 0; round < 3; round++) {
      const all = await Promise.all(
        Array.from({ length: n }, (_, i) => prog.run(new Float32Array([i, round]))),
      );
      all.forEach(([r], i) =>
        assert.deepEqual([...r!.data], [10 * i + 1, 10 * round + 1], `run ${i}`)
      );
    }
    assert.equal(handlerHostStats().failedCompletions, 0);
  },

  /** Errors of every kind a handler can raise come back with their code and message. */
  async errors() {
    await using xla = await open();
    const thrown: [unknown, ErrorCode, RegExp][] = [
      [new FfiError(ErrorCode.NOT_FOUND, "no such thing"), ErrorCode.NOT_FOUND, /^no such thing$/],
      [
        new FfiError(ErrorCode.FAILED_PRECONDITION, "not now"),
        ErrorCode.FAILED_PRECONDITION,
        /^not now$/,
      ],
      [new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "full"), ErrorCode.RESOURCE_EXHAUSTED, /^full$/],
      [new FfiError(ErrorCode.ABORTED, "stop"), ErrorCode.ABORTED, /^stop$/],
      // As XLA maps a C++ handler's exception (xla/ffi/ffi_api.cc).
      [new TypeError("bad type"), ErrorCode.UNKNOWN, /^XLA FFI call failed: bad type$/],
      [new RangeError("bad range"), ErrorCode.UNKNOWN, /^XLA FFI call failed: bad range$/],
      [new Error("plain"), ErrorCode.UNKNOWN, /^XLA FFI call failed: plain$/],
      ["a string", ErrorCode.UNKNOWN, /^XLA FFI call failed: a string$/],
    ];
    let which = 0;
    using sync = Ffi.bind().arg(F32).ret(F32).to(() => {
      throw thrown[which]![0];
    });
    using rejecting = Ffi.bind().arg(F32).ret(F32).to(async () => {
      await null;
      throw thrown[which]![0];
    });
    await xla.register("t.throws", sync);
    await xla.register("t.rejects", rejecting);
    const call = (name: string) =>
      xla.ffiCall(name, { args: [new Float32Array(2)], results: [spec(F32, [2])] });
    for (which = 0; which < thrown.length; which++) {
      const [, code, re] = thrown[which]!;
      const e = await rejects(call("t.throws"), code, re);
      assert.ok(e instanceof PythonError);
      assert.equal(e.pythonType, "JaxRuntimeError");
      // The thrown value is the cause, with the handler's own stack.
      assert.equal(e.cause, thrown[which]![0]);
      const late = await rejects(call("t.rejects"), code, re);
      assert.equal(late.cause, thrown[which]![0]);
    }
    // Every kind of value thrown or rejected with: an error with a code, never a crash or hang.
    let make: () => unknown = () => undefined;
    using throwsAny = Ffi.bind().arg(F32).ret(F32).to(() => {
      throw make();
    });
    using rejectsAny = Ffi.bind().arg(F32).ret(F32).to(async () => {
      await null;
      throw make();
    });
    await xla.register("t.throwsAny", throwsAny);
    await xla.register("t.rejectsAny", rejectsAny);
    for (const [what, value] of thrownValues()) {
      make = value;
      for (const name of ["t.throwsAny", "t.rejectsAny"]) {
        try {
          await call(name);
          assert.fail(`${name} ${what}: expected an error`);
        } catch (e) {
          assert.ok(e instanceof FfiError, `${name} ${what}: ${String(e)}`);
          assert.ok(e.code >= 1 && e.code <= 16, `${name} ${what}: code ${e.code}`);
        }
      }
    }
    // A decode failure: ffi.h's message, INVALID_ARGUMENT.
    using wants64 = Ffi.bind().arg(DataType.F64).ret(F32).to(() => {});
    await xla.register("t.wants64", wants64);
    await rejects(
      call("t.wants64"),
      ErrorCode.INVALID_ARGUMENT,
      /Wrong buffer dtype: expected F64 but got F32/,
    );
    // Calls work after the errors.
    using ok = doubler();
    await xla.register("t.ok", ok);
    const [y] = await xla.ffiCall("t.ok", {
      args: [new Float32Array([4])],
      results: [spec(F32, [1])],
    });
    assert.equal(y![0], 8);
    // A closed handler: its registered name reports the release.
    const closed = doubler();
    await xla.register("t.closed", closed);
    closed.close();
    await rejects(call("t.closed"), ErrorCode.FAILED_PRECONDITION, /was released/);
    await rejects(xla.register("t.after", closed), ErrorCode.FAILED_PRECONDITION, /closed/);
    // Registering a name again with another handler: XLA's duplicate check.
    await rejects(
      xla.register("t.ok", sync),
      ErrorCode.INVALID_ARGUMENT,
      /Duplicate FFI handler registration/,
    );
    await xla.register("t.ok", ok); // the same handler again is fine
    // Unknown targets fail at compile time with XLA's message.
    await rejects(
      call("t.nothing"),
      ErrorCode.NOT_FOUND,
      /No FFI handler registered for t\.nothing/,
    );
    assert.equal(handlerHostStats().failedCompletions, 0);
  },

  /** Every attribute kind jax can lower arrives with its type; the two it cannot are refused here. */
  async attrs() {
    await using xla = await open();
    let seen: unknown[] = [];
    using h = Ffi.bind().ret(DataType.U8)
      .attr("b", "bool").attr("cfg", "dict")
      .attr("f32", "f32").attr("f32s", "f32[]").attr("f64", "f64").attr("f64s", "f64[]")
      .attr("i16", "i16").attr("i16s", "i16[]").attr("i32", "i32").attr("i32s", "i32[]")
      .attr("i64", "i64n").attr("i64s", "i64n[]").attr("i8", "i8").attr("i8s", "i8[]")
      .attr("s", "string")
      .attr("u16", "u16").attr("u16s", "u16[]").attr("u32", "u32").attr("u32s", "u32[]")
      .attr("u64", "u64n").attr("u64s", "u64n[]").attr("u8", "u8").attr("u8s", "u8[]")
      .to((_out, ...values) => {
        const cfg = values[1] as { get(n: string, k?: string): unknown; keys(): string[] };
        seen = values.map((v, i) =>
          i === 1
            ? {
              keys: cfg.keys(),
              depth: cfg.get("depth", "i64"),
              w: cfg.get("w", "f32[]"),
              inner: (cfg.get("inner") as typeof cfg).get("name", "string"),
            }
            : v
        );
      });
    await xla.register("t.attrs", h);
    const attrs = {
      b: true,
      cfg: { depth: 2, w: new Float32Array([0.5, 1.5]), inner: { name: "deep" } },
      f32: scalar(DataType.F32, 2.5),
      f32s: new Float32Array([1.5, -2]),
      f64: 0.25,
      f64s: new Float64Array([1e300, -0]),
      i16: scalar(DataType.S16, -300),
      i16s: new Int16Array([-1, 300]),
      i32: scalar(DataType.S32, -70000),
      i32s: new Int32Array([7, -7]),
      i64: -(2n ** 62n),
      i64s: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]),
      i8: scalar(DataType.S8, -7),
      i8s: new Int8Array([-128, 127]),
      s: "reflect ü",
      u16: scalar(DataType.U16, 65535),
      u16s: new Uint16Array([1, 65535]),
      u32: scalar(DataType.U32, 4294967295),
      u32s: new Uint32Array([0, 4294967295]),
      u64: scalar(DataType.U64, 2n ** 63n - 1n),
      u64s: new BigUint64Array([0n, 2n ** 64n - 1n]),
      u8: scalar(DataType.U8, 255),
      u8s: new Uint8Array([0, 255]),
    };
    await xla.ffiCall("t.attrs", { results: [spec(DataType.U8, [1])], attrs });
    assert.deepEqual(seen, [
      true,
      { keys: ["depth", "inner", "w"], depth: 2, w: [0.5, 1.5], inner: "deep" },
      2.5,
      [1.5, -2],
      0.25,
      [1e300, -0],
      -300,
      [-1, 300],
      -70000,
      [7, -7],
      -(2n ** 62n),
      [-(2n ** 63n), 2n ** 63n - 1n],
      -7,
      [-128, 127],
      "reflect ü",
      65535,
      [1, 65535],
      4294967295,
      [0, 4294967295],
      2n ** 63n - 1n,
      [0n, 2n ** 64n - 1n],
      255,
      [0, 255],
    ]);
    // What jax cannot lower is refused before jax sees it, with the reason.
    const one = (a: Record<string, unknown>) =>
      xla.ffiCall("t.attrs", { results: [spec(DataType.U8, [1])], attrs: a as never });
    await rejects(
      one({ big: scalar(DataType.U64, 2n ** 63n) }),
      ErrorCode.INVALID_ARGUMENT,
      /Attribute 'big': jax cannot lower a u64 scalar attribute of 2\^63 or more \(9223372036854775808\)/,
    );
    await rejects(
      one({ mask: [true, false] }),
      ErrorCode.INVALID_ARGUMENT,
      /Attribute 'mask': jax cannot lower a bool \(PRED\) array attribute/,
    );
    await rejects(
      one({ cfg: { mask: [false] } }),
      ErrorCode.INVALID_ARGUMENT,
      /Attribute 'cfg\.mask': jax cannot lower a bool/,
    );
    await rejects(
      one({ m: new ArrayAttr(DataType.PRED, [1]) }),
      ErrorCode.INVALID_ARGUMENT,
      /Attribute 'm': jax cannot lower a bool \(PRED\) array/,
    );
    // An array attribute's elements are checked as on the embedded runtime.
    await rejects(
      one({ a: new ArrayAttr(DataType.S32, [1, 2 ** 40]) }),
      ErrorCode.INVALID_ARGUMENT,
      /attribute 'a': element 1: 1099511627776 is out of range for S32/,
    );
  },

  /** Results and arguments of several dtypes and ranks, NpyArray arguments. */
  async dtypes() {
    await using xla = await open();
    await using prog = await xla.jit(`
def f(a, b, c, d):
    return (a * 2, b.sum(), c[::-1], d.astype(jnp.int8), jnp.float16(1.5) * jnp.ones((2,), jnp.float16),
            jnp.array([True, False, True]), (a > 1).astype(jnp.bfloat16), jnp.complex64(1 + 2j) * jnp.ones(2, jnp.complex64),
            jnp.uint16(7), jnp.arange(6, dtype=jnp.uint64).reshape(1, 2, 3))
`);
    const npy = readNpy(
      writeNpy({
        dtype: DataType.S64,
        shape: [2, 2],
        data: new BigInt64Array([1n, -2n, 2n ** 40n, 4n]),
      }),
    );
    const out = await prog.run(
      { data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [2, 3] },
      npy,
      new Float64Array([0.5, 1.5, 2.5]),
      { data: new Int32Array([1, -1, 300]), shape: [3] },
    );
    const got = out.map((
      a,
    ) => [DataType[a.dtype], a.shape, Array.from(a.data as ArrayLike<number | bigint>)]);
    assert.deepEqual(got, [
      ["F32", [2, 3], [2, 4, 6, 8, 10, 12]],
      ["S64", [], [2n ** 40n + 3n]],
      ["F64", [3], [2.5, 1.5, 0.5]],
      ["S8", [3], [1, -1, 44]],
      ["F16", [2], [1.5, 1.5]],
      ["PRED", [3], [1, 0, 1]],
      ["BF16", [2, 3], [0, 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80]],
      ["C64", [2], [1, 2, 1, 2]],
      ["U16", [], [7]],
      ["U64", [1, 2, 3], [0n, 1n, 2n, 3n, 4n, 5n]],
    ]);
    // Bad arguments are refused before Python.
    await rejects(
      prog.run({ data: new Float32Array(5), shape: [2, 3] }),
      ErrorCode.INVALID_ARGUMENT,
      /f32\[2,3\] needs 24 bytes but the array has 20/,
    );
    // A TS handler writing results of other dtypes and ranks.
    using h = Ffi.bind().ret(DataType.S64, 0).ret(DataType.U16, 3).to((a, b) => {
      a.typed()[0] = -(2n ** 50n);
      b.typed().set([1, 2, 3, 4, 65535, 6, 7, 8]);
    });
    await xla.register("t.two", h);
    const [s, u] = await xla.ffiCall("t.two", {
      results: [spec(DataType.S64, []), spec(DataType.U16, [2, 2, 2])],
    });
    assert.deepEqual([...(s as BigInt64Array)], [-(2n ** 50n)]);
    assert.deepEqual([...(u as Uint16Array)], [1, 2, 3, 4, 65535, 6, 7, 8]);
  },

  /** Whole programs: StableHLO text targeting a TS handler; compile and source errors. */
  async programs() {
    await using xla = await open();
    using h = doubler();
    await xla.register("t.double", h);
    await using hlo = await xla.jit(`
module @m {
  func.func public @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.custom_call @t.double(%x) {api_version = 4 : i32, backend_config = {}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.add %0, %x : tensor<2x2xf32>
    return %1 : tensor<2x2xf32>
  }
}`);
    assert.equal(hlo.format, "stablehlo");
    for (let i = 0; i < 3; i++) {
      const [y] = await hlo.run({ data: new Float32Array([1, 2, 3, i]), shape: [2, 2] });
      assert.deepEqual([...(y!.data as Float32Array)], [3, 6, 9, 3 * i]);
    }
    await rejects(xla.jit("module @m {\n  func.func public @main( {"), ErrorCode.UNKNOWN, /error/);
    await rejects(
      xla.jit(`module @m {
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @t.unknown(%x) {api_version = 4 : i32, backend_config = {}} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`),
      ErrorCode.NOT_FOUND,
      /No FFI handler registered for t\.unknown/,
    );
    // Python sources: syntax, names, several functions, entry, eager compile with specs.
    const e = await rejects(
      xla.jit("def f(x)\n    return x\n"),
      ErrorCode.INVALID_ARGUMENT,
      /SyntaxError/,
    );
    assert.equal((e as PythonError).pythonType, "SyntaxError");
    assert.match((e as PythonError).traceback, /Traceback/);
    await rejects(
      xla.jit("def f(x):\n    return nope(x)\n", { args: [spec(F32, [2])] }),
      ErrorCode.INVALID_ARGUMENT,
      /NameError: name 'nope' is not defined/,
    );
    await rejects(
      xla.jit("def f(x): return x\ndef g(x): return x\n"),
      ErrorCode.INVALID_ARGUMENT,
      /several functions \(f, g\)/,
    );
    await rejects(xla.jit("x = 1\n"), ErrorCode.INVALID_ARGUMENT, /defines no function/);
    await using g = await xla.jit("def f(x): return x\ndef g(x): return x * 3\n", {
      entry: "g",
      args: [spec(F32, [2])],
    });
    assert.deepEqual(g.outputs, [spec(F32, [2])]);
    const [y] = await g.run(new Float32Array([1, 2]));
    assert.deepEqual([...(y!.data as Float32Array)], [3, 6]);
    // Names runPython defined are visible to programs; a program may define them again.
    await xla.runPython("helper = 3\ndef f(x):\n    return x\n");
    await using again = await xla.jit("def f(x):\n    return x * helper\n");
    const [z] = await again.run(new Float32Array([2]));
    assert.equal(z!.data[0], 6);
    // A compiled program refuses arguments of another shape.
    await rejects(
      g.run(new Float32Array([1, 2, 3])),
      ErrorCode.INVALID_ARGUMENT,
      /shape|Argument types/i,
    );
    // A large result that does not fit the first reply buffer comes back whole.
    await using big = await xla.jit(
      "def f(n):\n    return jnp.arange(1 << 20, dtype=jnp.float32) + n\n",
    );
    const [r] = await big.run({ data: new Float32Array([1]), shape: [] });
    assert.equal(r!.data.length, 1 << 20);
    assert.equal(r!.data[(1 << 20) - 1], 1 << 20);
    // So does a runPython result of any size, async or sync (once refused past 64 KiB).
    const text = await xla.runPython("result = ''.join(chr(65 + i % 26) for i in range(300000))");
    assert.equal((text as string).length, 300000);
    assert.equal((text as string).slice(-3), "JKL"); // 299997..299999 % 26 = 9..11
    const rows = xla.runPythonSync("result = [[i, str(i)] for i in range(40000)]") as unknown[][];
    assert.equal(rows.length, 40000);
    assert.deepEqual(rows[39999], [39999, "39999"]);
    assert.equal((await xla.pythonStats()).pending, 0, "nothing kept after the replies were taken");
  },

  /** Python prints a traceback only when the host asks for it. */
  async tracebacks() {
    await using xla = await open({ tracebacks: true });
    await rejects(
      xla.runPython("raise ValueError('shown on stderr')"),
      ErrorCode.INVALID_ARGUMENT,
      /ValueError: shown on stderr/,
    );
  },

  /** No interpreter, or no jax: UNAVAILABLE with what to do. */
  async missing() {
    await rejects(
      Xla.open({ python: "/nonexistent/python3" }),
      ErrorCode.UNAVAILABLE,
      /Cannot run the Python interpreter '\/nonexistent\/python3'/,
    );
    const xla = await open();
    const base = xla.interpreter.home.split(":")[0] + "/bin/python3";
    await xla.close();
    let hasJax = true;
    try {
      const probe = await new Deno.Command(base, { args: ["-c", "import jax"], stderr: "null" })
        .output();
      hasJax = probe.success;
    } catch { /* no base interpreter to try */ }
    if (!hasJax) {
      await rejects(
        Xla.open({ python: base }),
        ErrorCode.UNAVAILABLE,
        /jax is not installed for the Python at .*pip install jax==0\.10\.2 jaxlib==0\.10\.2/,
      );
    }
    console.log(`no-jax interpreter ${hasJax ? "not available" : "checked"}: ${base}`);
  },

  /** The C demo handlers: sync with an attribute, async through XLA's thread pool, attributes. */
  async cHandlers() {
    await using xla = await open();
    const lib = HandlerLibrary.open(buildDemoLibrary());
    await xla.register("demo.saxpy", lib.handler("demo_saxpy"));
    await xla.register("demo.sum_async", lib.handler("demo_sum_async"));
    await xla.register("demo.describe", lib.handler("demo_describe_attrs"));
    const [y] = await xla.ffiCall("demo.saxpy", {
      args: [new Float32Array([1, 2, 3]), new Float32Array([10, 20, 30])],
      results: [spec(F32, [3])],
      attrs: { alpha: scalar(DataType.F32, 2) },
    });
    assert.deepEqual([...(y as Float32Array)], [12, 24, 36]);
    await rejects(
      xla.ffiCall("demo.saxpy", {
        args: [new Float32Array(1), new Float32Array(1)],
        results: [spec(F32, [1])],
      }),
      ErrorCode.INVALID_ARGUMENT,
      /^saxpy: missing attribute alpha$/,
    );
    const xs = Float32Array.from({ length: 4096 }, (_, i) => i % 7);
    const [sum] = await xla.ffiCall("demo.sum_async", { args: [xs], results: [spec(F32, [1])] });
    assert.equal(sum![0], xs.reduce((a, b) => a + b, 0));
    const [text] = await xla.ffiCall("demo.describe", {
      results: [spec(DataType.U8, [256])],
      attrs: { alpha: scalar(DataType.F32, 2.5), axes: [0, 2], mode: "reflect", cfg: { n: 3 } },
    });
    const described = new TextDecoder().decode(text as Uint8Array).replace(/\0+$/, "");
    assert.equal(
      described,
      'alpha: f32 2.5\naxes: s64[] [0, 2]\ncfg: dictionary\n  n: s64 3\nmode: string "reflect"\n',
    );
    // XLA holds the registrations: closing the library keeps its code loaded.
    lib.close();
    const [again] = await xla.ffiCall("demo.saxpy", {
      args: [new Float32Array([1]), new Float32Array([1])],
      results: [spec(F32, [1])],
      attrs: { alpha: scalar(DataType.F32, 3) },
    });
    assert.equal(again![0], 4);
  },

  /**
   * Version skew: a TS handler bound without a version runs on whatever XLA
   * jax hosts; one bound newer than the hosted XLA, and a C handler built for
   * 0.4, are refused before jax sees them, naming both versions.
   */
  async versionSkew() {
    await using xla = await open();
    const hosted = xla.version.ffiApi!;
    const name = `versions.skew.${Deno.pid}`;
    await xla.register(`${name}.default`, doubler());
    const [y] = await xla.ffiCall(`${name}.default`, {
      args: [new Float32Array([1, 2])],
      results: [spec(F32, [2])],
    });
    assert.deepEqual([...(y as Float32Array)], [2, 4]);
    if (hosted.major !== 0 || hosted.minor >= 4) return; // a 0.4 XLA takes them all
    const h = `0.${hosted.minor}`;
    const newer = Ffi.bind().to(() => {}, { apiVersion: "0.4" });
    const why = new RegExp(
      `^Xla\\.register: the handler of ${name}\\.newer reports XLA FFI API 0\\.4, newer than ` +
        `the ${h.replace(".", "\\.")} jaxlib ${xla.version.jaxlib.replaceAll(".", "\\.")} ` +
        `speaks; .*Use jaxlib 0\\.11 or newer \\(XLA FFI API 0\\.4\\)`,
    );
    await rejects(xla.register(`${name}.newer`, newer), ErrorCode.INVALID_ARGUMENT, why);
    newer.close();
    // A C handler built against our 0.4 header (it reads error codes back with Error_GetCode).
    using lib = HandlerLibrary.open(testHandlersPath());
    await rejects(
      xla.register(`${name}.c`, lib.handler("v04_get_code")),
      ErrorCode.INVALID_ARGUMENT,
      new RegExp(
        `^Xla\\.register: the handler of .*\\.c reports XLA FFI API 0\\.4, newer than the ` +
          `${h.replace(".", "\\.")} `,
      ),
    );
  },

  /** 4 CPU devices: XLA calls the TS handler once per device, from its threads, concurrently. */
  async devices() {
    await using xla = await open({ xlaFlags: ["--xla_force_host_platform_device_count=4"] });
    assert.equal(xla.deviceCount, 4);
    assert.match(xla.xlaFlags, /--xla_force_host_platform_device_count=4/);
    await rejects(
      Xla.open({ xlaFlags: ["--xla_force_host_platform_device_count=2"] }),
      ErrorCode.FAILED_PRECONDITION,
      /already imported .*XLA_FLAGS/,
    );
    const ordinals: number[] = [];
    using sync = Ffi.bind().arg(F32).ret(F32).ctx("deviceOrdinal").to((x, y, dev) => {
      ordinals.push(dev);
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! + 100 * dev;
    });
    let inFlight = 0, maxInFlight = 0, arrivedN = 0;
    let release!: () => void;
    const arrived = new Promise<void>((r) => release = r);
    using barrier = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      if (++arrivedN === 4) release();
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([arrived, new Promise((r) => t = setTimeout(r, 10000))]);
      clearTimeout(t);
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = -xs[i]!;
      inFlight--;
    });
    await xla.register("t.sync_dev", sync);
    await xla.register("t.barrier", barrier);
    const src = (target: string) => `
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ("d",))

def f(x):
    x = jax.reshard(x, NamedSharding(mesh, P("d")))
    call = lambda xs: ffi.ffi_call("${target}", jax.ShapeDtypeStruct(xs.shape, xs.dtype))(xs)
    return jax.shard_map(call, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(x)
`;
    const before = handlerHostStats().foreignCalls;
    const x = Float32Array.from({ length: 8 }, (_, i) => i);
    await using p1 = await xla.jit(src("t.sync_dev"));
    const [y1] = await p1.run(x);
    assert.deepEqual([...ordinals].sort(), [0, 1, 2, 3]);
    assert.deepEqual([...(y1!.data as Float32Array)], [0, 1, 102, 103, 204, 205, 306, 307]);
    await using p2 = await xla.jit(src("t.barrier"));
    const [y2] = await p2.run(x);
    assert.equal(maxInFlight, 4, "all four calls were in flight at once");
    assert.deepEqual([...(y2!.data as Float32Array)], [...x].map((v) => -v));
    assert.ok(handlerHostStats().foreignCalls - before >= 8, "the calls came from XLA's threads");
    // pmap too.
    ordinals.length = 0;
    await using p3 = await xla.jit(
      `def f(x):\n    return jax.pmap(lambda xs: ffi.ffi_call("t.sync_dev", jax.ShapeDtypeStruct(xs.shape, xs.dtype))(xs))(x)\n`,
    );
    const [y3] = await p3.run({ data: x, shape: [4, 2] });
    assert.deepEqual([...ordinals].sort(), [0, 1, 2, 3]);
    assert.deepEqual([...(y3!.data as Float32Array)], [0, 1, 102, 103, 204, 205, 306, 307]);
    assert.equal(handlerHostStats().failedCompletions, 0);
  },

  /** 10k calls: counters balanced, no growth of Python's memory or our states. */
  /**
   * The prepared path of run, runSync and ffiCall (src/xla/_prepared.ts): the results of a
   * plan's first call (a results reply) and of later ones (written in place) are the same
   * bytes, for small and large operands, arguments read in place (aligned or not, a view into
   * a larger buffer), results that are arguments, several signatures of one program, calls
   * of one plan in flight at once, and a program closed meanwhile.
   */
  async prepared() {
    await using xla = await open();
    await using prog = await xla.jit(
      "def f(x, y):\n    return x, x * 2 + y, jnp.sum(y, dtype=y.dtype)\n",
    );
    const check = (
      out: XlaArray[],
      x: Float32Array,
      y: Float32Array,
    ) => {
      assert.equal(out.length, 3);
      assert.deepEqual(out.map((o) => [o.dtype, o.dtypeName]), Array(3).fill([F32, "F32"]));
      assert.deepEqual(out[0]!.shape, [x.length]);
      assert.deepEqual([...(out[0]!.data as Float32Array)], [...x]);
      assert.deepEqual(
        [...(out[1]!.data as Float32Array)],
        [...x].map((v, i) => Math.fround(v * 2 + y[i]!)),
      );
      assert.equal(out[2]!.data.length, 1);
    };
    for (const n of [3, 2000, 70000]) {
      const backing = new Float32Array(2 * n + 3).map((_, i) => i % 97 - 40);
      const x = backing.subarray(1, n + 1); // not at the start of its buffer
      const y = backing.slice(n + 2, 2 * n + 2);
      const runs: Float32Array[][] = [];
      for (let i = 0; i < 3; i++) {
        const a = prog.runSync(x, y);
        check(a, x, y);
        const b = await prog.run(x, y);
        check(b, x, y);
        runs.push([...a, ...b].map((r) => new Float32Array(r.data as Float32Array)));
      }
      for (const r of runs) assert.deepEqual(r, runs[0], `the same bytes every call (n = ${n})`);
      const first = runs[0]![0]!;
      first[0] = 12345; // a result is the caller's own array
      assert.notEqual(prog.runSync(x, y)[0]!.data[0], 12345);
    }
    const xs = Array.from({ length: 8 }, (_, i) => new Float32Array(5).fill(i));
    const all = await Promise.all(xs.map((x) => prog.run(x, x)));
    all.forEach((out, i) =>
      assert.deepEqual([...(out[1]!.data as Float32Array)], new Array(5).fill(3 * i))
    );
    using twice = doubler();
    await xla.register("prepared.twice", twice);
    for (const n of [4, 5000]) {
      const x = new Float32Array(n).map((_, i) => i);
      for (let i = 0; i < 3; i++) {
        const [y] = await xla.ffiCall("prepared.twice", { args: [x], results: [spec(F32, [n])] });
        assert.deepEqual([...y!], [...x].map((v) => 2 * v));
      }
    }
    await prog.close();
    assert.throws(() => prog.runSync(new Float32Array(3), new Float32Array(3)), /closed/);
  },

  /**
   * run and ffiCall of a program that calls no TS target start on the JS thread, as a jitted
   * function's call starts in Python (bridge.py, DISPATCH): a cheap program's results come
   * back at once, a longer one's are waited for on a worker; a program calling a TS target,
   * and a call while requests run on the workers, go to a worker as before. Every route gives
   * the results runSync gives. A TS entry point registered behind our back (through jax in
   * runPython) is still safe: a synchronous handler runs inline, an async one fails
   * FAILED_PRECONDITION naming the cause, never hangs.
   */
  async dispatch() {
    await using xla = await open();
    const counts = async () => {
      const s = await xla.pythonStats();
      return [s.dispatched, s.dispatchWaited];
    };
    const x = new Float32Array([1, 2, 3]);
    await using inc = await xla.jit("def f(x):\n    return x + 1\n");
    let [d0, w0] = await counts();
    for (let i = 0; i < 3; i++) assert.deepEqual([...(await inc.run(x))[0]!.data], [2, 3, 4]);
    let [d1, w1] = await counts();
    // The first call plans and learns the results' types on a worker; the next two dispatch.
    assert.equal(d1! - d0!, 2);
    assert.equal(w1! - w0!, 0);
    // Kept requests (the bridge takes what the frame's last call found) read the operands as
    // they are now: changed, shrunk or transferred between calls.
    const rab = new ArrayBuffer(12, { maxByteLength: 12 });
    const v = new Float32Array(rab);
    for (let i = 0; i < 4; i++) {
      v.set([i, 2 * i, -i]);
      assert.deepEqual([...(await inc.run(v))[0]!.data], [i + 1, 2 * i + 1, 1 - i]);
      assert.deepEqual([...inc.runSync(v)[0]!.data], [i + 1, 2 * i + 1, 1 - i]);
    }
    rab.resize(8); // the view tracks its buffer: f32[2] now, a signature of its own
    assert.deepEqual([...(await inc.run(v))[0]!.data], [4, 7]);
    assert.deepEqual([...inc.runSync(v)[0]!.data], [4, 7]);
    assert.deepEqual([...(await inc.run({ data: v, shape: [2] }))[0]!.data], [4, 7]);
    await rejects(inc.run({ data: v, shape: [3] }), ErrorCode.INVALID_ARGUMENT, /argument 0/);
    structuredClone(rab, { transfer: [rab] });
    await rejects(inc.run(v), ErrorCode.INVALID_ARGUMENT, /detached/);
    assert.deepEqual([...(await inc.run(x))[0]!.data], [2, 3, 4], "and go on after");
    // A program XLA runs on its own threads (a 512 x 512 matmul chain): waited for on a worker.
    const n = 512;
    const m = new Float32Array(n * n).map((_, i) => ((i * 7919) % 13) / 13 - 0.5);
    await using mm = await xla.jit("def f(a):\n    return (a @ a) @ a\n");
    const ref = mm.runSync({ data: m, shape: [n, n] })[0]!.data;
    [d0, w0] = await counts();
    for (let i = 0; i < 3; i++) {
      const [r] = await mm.run({ data: m, shape: [n, n] });
      assert.deepEqual(r!.data, ref);
    }
    [d1, w1] = await counts();
    assert.equal(d1! - d0!, 3);
    assert.ok(w1! - w0! >= 1, `a long program's results are waited for (${w1! - w0!} of 3)`);
    // ffiCall of a C target dispatches; of a TS target, never.
    const lib = HandlerLibrary.open(buildDemoLibrary());
    await xla.register("dispatch.saxpy", lib.handler("demo_saxpy"));
    using twice = doubler();
    await xla.register("dispatch.twice", twice);
    const changing = { alpha: scalar(DataType.F32, 0) }; // one options object, changed per call
    [d0, w0] = await counts();
    for (let i = 0; i < 3; i++) {
      const [y] = await xla.ffiCall("dispatch.saxpy", {
        args: [x, x],
        results: [spec(F32, [3])],
        attrs: { alpha: scalar(DataType.F32, 2) },
      });
      assert.deepEqual([...y!], [3, 6, 9]);
      // An attribute changed between calls is encoded again.
      changing.alpha = scalar(DataType.F32, 3 + i);
      const [y2] = await xla.ffiCall("dispatch.saxpy", {
        args: [x, x],
        results: [spec(F32, [3])],
        attrs: changing,
      });
      assert.deepEqual([...y2!], [1, 2, 3].map((e) => (4 + i) * e));
      const [z] = await xla.ffiCall("dispatch.twice", { args: [x], results: [spec(F32, [3])] });
      assert.deepEqual([...z!], [2, 4, 6]);
    }
    await using viaTs = await xla.jit(
      'def f(x):\n    return ffi.ffi_call("dispatch.twice", jax.ShapeDtypeStruct(x.shape, x.dtype))(x) + 1\n',
    );
    for (let i = 0; i < 3; i++) assert.deepEqual([...(await viaTs.run(x))[0]!.data], [3, 5, 7]);
    [d1, w1] = await counts();
    // saxpy's calls with alpha 2 dispatch after the first; each new alpha is a plan of its own.
    assert.equal(d1! - d0!, 2, "saxpy's two later calls dispatched, no call of a TS target");
    // offThread, per call or per registration: to a worker, so the event loop stays free while
    // a native handler XLA would run inline takes long (fault_slow sleeps 50 ms on f32[1]).
    const faults = HandlerLibrary.open(faultHandlersPath());
    await xla.register("dispatch.slow", faults.handler("fault_slow"));
    await xla.register("dispatch.slow_off", faults.handler("fault_slow"), { offThread: true });
    const slow = (name: string, offThread?: boolean) =>
      xla.ffiCall(name, { args: [x], results: [], hasSideEffect: true, offThread });
    const ticksDuring = async (call: () => Promise<unknown>) => {
      let ticks = 0;
      const id = setInterval(() => ticks++, 1);
      try {
        await call();
      } finally {
        clearInterval(id);
      }
      return ticks;
    };
    for (const name of ["dispatch.slow", "dispatch.slow_off"]) await slow(name); // plans made
    [d0] = await counts();
    assert.equal(await ticksDuring(() => slow("dispatch.slow")), 0, "inline: the loop waited");
    [d1] = await counts();
    assert.equal(d1! - d0!, 1);
    assert.ok(await ticksDuring(() => slow("dispatch.slow", true)) > 0, "offThread per call");
    assert.ok(await ticksDuring(() => slow("dispatch.slow_off")) > 0, "offThread registration");
    await using slowProg = await xla.jit(
      'def f(x):\n    return ffi.ffi_call("dispatch.slow_off", (), has_side_effect=True)(x)\n',
    );
    await slowProg.run(x);
    assert.ok(await ticksDuring(() => slowProg.run(x)) > 0, "a program calling it too");
    [d0] = await counts();
    assert.equal(d0! - d1!, 0, "none of those dispatched");
    faults.close();
    // Calls in flight at once: those sent while others run go to a worker; all are right.
    [d0] = await counts();
    const xs = Array.from({ length: 16 }, (_, i) => new Float32Array(3).fill(i));
    const outs = await Promise.all(xs.map((v) => inc.run(v)));
    outs.forEach((o, i) => assert.deepEqual([...o[0]!.data], [i + 1, i + 1, i + 1]));
    [d1] = await counts();
    assert.ok(d1! - d0! >= 1 && d1! - d0! <= 16);
    // A TS entry point registered through jax directly (the bridge cannot know it is one).
    using hiddenSync = doubler();
    using hiddenAsync = Ffi.bind().arg(F32).ret(F32).to(async (a, b) => {
      await null;
      b.typed().set(a.typed());
    });
    const capsule = (h: { pointer: Deno.PointerValue }) =>
      `jax.ffi.pycapsule(ctypes.cast(${Deno.UnsafePointer.value(h.pointer)}, ctypes.c_void_p))`;
    await xla.runPython(
      "import ctypes\n" +
        `jax.ffi.register_ffi_target("dispatch.hidden_sync", ${
          capsule(hiddenSync)
        }, platform="cpu")\n` +
        `jax.ffi.register_ffi_target("dispatch.hidden_async", ${
          capsule(hiddenAsync)
        }, platform="cpu")\n`,
    );
    const calling = (name: string) =>
      `def f(x):\n    return ffi.ffi_call("${name}", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n`;
    await using hs = await xla.jit(calling("dispatch.hidden_sync"));
    for (let i = 0; i < 3; i++) assert.deepEqual([...(await hs.run(x))[0]!.data], [2, 4, 6]);
    await using ha = await xla.jit(calling("dispatch.hidden_async"));
    assert.deepEqual([...(await ha.run(x))[0]!.data], [1, 2, 3]); // the first call: on a worker
    await rejects(
      ha.run(x),
      ErrorCode.FAILED_PRECONDITION,
      /An async TS handler .* \(XlaProgram\.run or Xla\.ffiCall, whose program calls a TS entry point not registered through Xla\.register\).* Run the program with its target registered through Xla\.register, or make the handler synchronous$/,
    );
    lib.close();
  },

  /**
   * The native path (native/python_host.c, kept_run): a call repeating its frame's last
   * request runs without the bridge's Python, and gives what the bridge's path gives: the
   * operands as they are now, an error as the first call's, results jax exports no buffer
   * for (bfloat16) and results of other structures (a dict) finished by the bridge, and
   * nothing kept past clearCache, clearProgram or a program's close.
   */
  async native() {
    await using xla = await open();
    const native = async () => (await xla.pythonStats()).nativeCalls;
    const values = (r: XlaArray[]) => r.map((a) => [...(a.data as Float32Array)]);
    // runSync, run and ffiCall: after the first three calls of a frame, the native path.
    await using pair = await xla.jit("def f(x):\n    return x + 1, x * 2\n");
    const x = new Float32Array(3);
    let n0 = await native();
    for (let i = 0; i < 8; i++) {
      x.set([i, -i, 0.5 * i]);
      const want = [[i + 1, 1 - i, 0.5 * i + 1], [2 * i, -2 * i, i]];
      assert.deepEqual(values(pair.runSync(x)), want);
      assert.deepEqual(values(await pair.run(x)), want);
    }
    let n1 = await native();
    assert.ok(n1 - n0 >= 8, `runSync and run took the native path (${n1 - n0} of 16 calls)`);
    const lib = HandlerLibrary.open(buildDemoLibrary());
    await xla.register("native.saxpy", lib.handler("demo_saxpy"));
    const options = {
      args: [x, x],
      results: [spec(F32, [3])],
      attrs: { alpha: scalar(DataType.F32, 2) },
    };
    n0 = await native();
    for (let i = 0; i < 6; i++) {
      x.set([i, 1, -1]);
      const [y] = await xla.ffiCall("native.saxpy", options);
      assert.deepEqual([...y!], [3 * i, 3, -3]);
    }
    n1 = await native();
    assert.ok(n1 - n0 >= 2, `ffiCall took the native path (${n1 - n0} of 6 calls)`);
    // An error on the native path is the error of the bridge's path: a TS handler that fails
    // on a negative first element, called in a program.
    using picky = Ffi.bind().arg(F32).ret(F32).to((a, b) => {
      if (a.typed()[0]! < 0) throw new FfiError(ErrorCode.OUT_OF_RANGE, "negative");
      b.typed().set(a.typed());
    });
    await xla.register("native.picky", picky);
    const pickySource =
      'def f(x):\n    return ffi.ffi_call("native.picky", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n';
    const failure = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as FfiError).code, (e as Error).message];
      }
      assert.fail("the call did not fail");
    };
    const neg = new Float32Array([-1, 2, 3]);
    await using fresh = await xla.jit(pickySource);
    const first = failure(() => fresh.runSync(neg));
    assert.equal(first[0], ErrorCode.OUT_OF_RANGE);
    await using kept = await xla.jit(pickySource);
    const pos = new Float32Array([1, 2, 3]);
    for (let i = 0; i < 5; i++) assert.deepEqual([...kept.runSync(pos)[0]!.data], [1, 2, 3]);
    n0 = await native();
    pos[0] = -1;
    assert.deepEqual(failure(() => kept.runSync(pos)), first);
    pos[0] = 4;
    assert.deepEqual([...kept.runSync(pos)[0]!.data], [4, 2, 3], "and go on after");
    n1 = await native();
    assert.ok(n1 - n0 >= 1, "the call after the error was native");
    // Results jax exports no buffer for (bfloat16): the bridge writes them, every call.
    await using bf16 = await xla.jit("def f(x):\n    return (x * 3).astype(jnp.bfloat16)\n");
    n0 = await native();
    for (let i = 0; i < 5; i++) {
      x.set([i, 2, 0.5]);
      const [r] = bf16.runSync(x);
      assert.equal(r!.dtype, DataType.BF16);
      // bfloat16 is float32's high half: 3i, 6 and 1.5 are exact.
      const hi = new Uint16Array(r!.data.buffer, r!.data.byteOffset, 3);
      const f = new Float32Array(new Uint32Array([...hi].map((h) => h << 16)).buffer);
      assert.deepEqual([...f], [3 * i, 6, 1.5]);
    }
    // A dict of results: the bridge flattens it (its keys in order), every call.
    await using dict = await xla.jit('def f(x):\n    return {"b": x * 2, "a": x + 1}\n');
    for (let i = 0; i < 5; i++) {
      x.set([i, 0, 1]);
      assert.deepEqual(values(dict.runSync(x)), [[i + 1, 1, 2], [2 * i, 0, 2]]);
    }
    assert.equal(await native(), n0, "neither took the native path");
    // Nothing kept outlives clearCache, clearProgram or close.
    x.set([1, 2, 3]);
    for (let i = 0; i < 4; i++) pair.runSync(x);
    await pair.clearCache();
    assert.deepEqual(values(pair.runSync(x)), [[2, 3, 4], [2, 4, 6]]);
    await xla.clearCache();
    for (let i = 0; i < 4; i++) await xla.ffiCall("native.saxpy", options);
    assert.deepEqual([...(await xla.ffiCall("native.saxpy", options))[0]!], [3, 6, 9]);
    await pair.close();
    assert.throws(() => pair.runSync(x), /closed/);
    lib.close();
  },

  /**
   * runSyncInto: results written into the caller's arrays (small ones copied from the frame,
   * large ones written in place), on the first call of a signature and later ones, in place
   * over an argument; arrays that cannot hold the results refused before the program runs.
   */
  async into() {
    await using xla = await open();
    await using prog = await xla.jit("def f(x):\n    return x + 1, (x * 2).astype(jnp.int32)\n");
    for (const n of [3, 4096]) { // f32[3] staged in the frame; f32[4096] (16 KiB) in place
      const x = new Float32Array(n).map((_, i) => i);
      const y = new Float32Array(n), z = new Int32Array(n);
      for (let call = 0; call < 5; call++) { // the first learns the results' types
        x[0] = call;
        const r = prog.runSyncInto([y, z], x);
        assert.equal(r[0]!.data.buffer, y.buffer, "returned over the caller's arrays");
        assert.equal(r[1]!.data.buffer, z.buffer);
        assert.deepEqual([y[0], y[n - 1], z[0], z[n - 1]], [call + 1, n, 2 * call, 2 * (n - 1)]);
        assert.deepEqual(r.map((a) => a.shape), [[n], [n]]);
      }
      // Bytes (a Uint8Array, a DataView on a SharedArrayBuffer) hold any type.
      const yb = new Uint8Array(4 * n), zb = new DataView(new SharedArrayBuffer(4 * n));
      const [ry, rz] = prog.runSyncInto([yb, zb], x);
      assert.ok(ry!.data instanceof Float32Array && rz!.data instanceof Int32Array);
      assert.equal(ry!.data[1], 2);
      assert.equal(zb.getInt32(4, true), 2);
    }
    // In place: the argument is written after XLA has read it.
    await using inc = await xla.jit("def f(x):\n    return x + 1\n");
    for (const n of [4, 2048]) {
      const x = new Float32Array(n);
      for (let i = 0; i < 6; i++) inc.runSyncInto([x], x);
      assert.deepEqual([x[0], x[n - 1]], [6, 6]);
    }
    // Refused, before the program runs.
    const x = new Float32Array(3);
    const bad = (out: unknown[], re: RegExp) =>
      assert.throws(
        () => prog.runSyncInto(out as ArrayBufferView[], x),
        (e) => e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT && re.test(e.message),
      );
    const y = new Float32Array(3), z = new Int32Array(3);
    bad([y], /^out has 1 array but the program returns 2 results$/);
    bad([y, new Int32Array(4)], /^out 1: s32\[3\] needs 12 bytes but the array has 16$/);
    bad(
      [y, new Float32Array(3)],
      /^out 1: S32 results are written into a Int32Array .*got a Float32Array$/,
    );
    bad([y, [1, 2, 3]], /^out 1: expected a typed array or DataView, got object$/);
    bad([y, new Int32Array(new ArrayBuffer(12, { maxByteLength: 24 }))], /resizable/);
    bad([y, new Uint8Array(13).subarray(1)], /^out 1: starts at byte 1 of its buffer/);
    const gone = new Int32Array(3);
    structuredClone(gone.buffer, { transfer: [gone.buffer] });
    bad([y, gone], /^out 1: its ArrayBuffer is detached \(transferred\)$/);
    assert.throws(() => prog.runSyncInto("y" as never, x), /out must be an array/);
    // A signature's first call checks the arrays against what it learns, after its run.
    assert.throws(
      () => prog.runSyncInto([y, new Int32Array(2)], new Float32Array(2)),
      (e) =>
        e instanceof FfiError &&
        /^out 0: f32\[2\] needs 8 bytes but the array has 12$/.test(e.message),
    );
    assert.deepEqual([...prog.runSyncInto([y, z], x)[0]!.data], [1, 1, 1], "and go on after");
  },

  async repeat() {
    await using xla = await open();
    let calls = 0;
    using sync = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      calls++;
      y.typed()[0] = x.typed()[0]! + 1;
    });
    using async_ = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
      calls++;
      await null;
      y.typed()[0] = x.typed()[0]! + 2;
    });
    using fails = Ffi.bind().arg(F32).ret(F32).to(() => {
      calls++;
      throw new FfiError(ErrorCode.ABORTED, "no");
    });
    await xla.register("r.sync", sync);
    await xla.register("r.async", async_);
    await xla.register("r.fails", fails);
    const x = new Float32Array([1]);
    const one = spec(F32, [1]);
    const round = async (n: number) => {
      let failed = 0;
      for (let i = 0; i < n; i++) {
        const k = i % 10;
        const name = k < 7 ? "r.sync" : k < 9 ? "r.async" : "r.fails";
        try {
          const [y] = await xla.ffiCall(name, { args: [x], results: [one] });
          assert.equal(y![0], k < 7 ? 2 : 3);
        } catch (e) {
          assert.equal((e as FfiError).code, ErrorCode.ABORTED);
          failed++;
        }
      }
      return failed;
    };
    await round(300); // warm-up: compiles, caches
    const host0 = handlerHostStats();
    const rt0 = runtimeDebugStats();
    const py0 = await xla.pythonStats();
    calls = 0;
    const n = Number(Deno.env.get("XLA_REPEAT_CALLS") ?? 10000);
    const failed = await round(n);
    const host1 = handlerHostStats();
    const rt1 = runtimeDebugStats();
    const py1 = await xla.pythonStats();
    assert.equal(calls, n);
    assert.equal(failed, n / 10);
    assert.equal(host1.failedCompletions, host0.failedCompletions);
    assert.equal(host1.liveStates, host0.liveStates);
    assert.equal(host1.liveHandlers, host0.liveHandlers);
    assert.deepEqual(rt1, rt0, "the embedded runtime is not involved");
    assert.equal(py1.ffiCache, py0.ffiCache);
    assert.equal(py1.pending, 0);
    const blocks = py1.allocatedBlocks - py0.allocatedBlocks;
    const objects = py1.gcObjects - py0.gcObjects;
    console.log(
      `${n} calls: Python blocks ${blocks >= 0 ? "+" : ""}${blocks}, gc objects ${
        objects >= 0 ? "+" : ""
      }${objects}`,
    );
    assert.ok(blocks < n / 10, `Python memory grows with the calls: +${blocks} blocks`);
    assert.ok(objects < 200, `Python objects grow with the calls: +${objects}`);
  },

  /**
   * A handler that detaches its result view (its ArrayBuffer transferred) in its first call:
   * every later call's typed() must give a view with the bytes again, wherever XLA put them.
   */
  async detachedViews() {
    await using xla = await open();
    let calls = 0;
    using h = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      const a = x.typed(), b = y.typed();
      for (let i = 0; i < b.length; i++) b[i] = 2 * a[i]!;
      if (calls++ === 0) (b.buffer as ArrayBuffer).transfer();
    });
    await xla.register("d.twice", h);
    for (let k = 1; k <= 50; k++) {
      const [y] = await xla.ffiCall("d.twice", {
        args: [new Float32Array([k, k + 1, k + 2])],
        results: [spec(F32, [3])],
      });
      assert.deepEqual([...y!], [2 * k, 2 * k + 2, 2 * k + 4], `call ${k}`);
    }
    await using p = await xla.jit(
      'def f(x):\n    return ffi.ffi_call("d.twice", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n',
      { args: [spec(F32, [3])] },
    );
    for (let k = 1; k <= 50; k++) {
      const [y] = await p.run(new Float32Array([k, 0, -k]));
      assert.deepEqual([...y!.data], [2 * k, 0, -2 * k], `jitted call ${k}`);
    }
    assert.equal(calls, 100);
  },

  /** A TS handler bundle: instantiate sets state, execute reads it (XLA 0.3 State layout). */
  async stateTs() {
    await using xla = await open();
    using bundle = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().attr("start", "i64").to((start) => ({ count: start })),
      execute: Ffi.bind().ret(DataType.S64, 0).state<{ count: number }>().to((out, s) => {
        out.typed()[0] = BigInt(++s.count);
      }),
    });
    await xla.register("t.counter", bundle);
    await using prog = await xla.jit(
      `def f():\n    return ffi.ffi_call("t.counter", jax.ShapeDtypeStruct((), jnp.int64))(start=np.int64(41))\n`,
    );
    const got: bigint[] = [];
    for (let i = 0; i < 3; i++) got.push((await prog.run())[0]!.data[0] as bigint);
    assert.deepEqual(got, [42n, 43n, 44n]);
  },

  /**
   * A TS handler computes with IEEE denormals on every route: from a worker's
   * thread (`run`, `ffiCall`) and inline on the JS thread (`runSync`), where
   * XLA's execute has set flush-to-zero and denormals-are-zero.
   */
  async tsDenormals() {
    await using xla = await open();
    using halve = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! * 0.5;
    });
    await xla.register("fp.halve", halve);
    // The smallest normal (halved: a denormal), denormals of both signs, a normal.
    const bits = new Uint32Array([0x00800000, 0x00000002, 0x80000004, 0x3f800000]);
    const x = new Float32Array(bits.buffer);
    const ieee = [0x00400000, 0x00000001, 0x80000002, 0x3f000000];
    const got = (y: Float32Array) => [...new Uint32Array(y.buffer, y.byteOffset, y.length)];
    await using prog = await xla.jit(
      `def f(x):\n    return ffi.ffi_call("fp.halve", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n`,
      { args: [spec(F32, [4])] },
    );
    assert.deepEqual(got(prog.runSync(x)[0]!.data as Float32Array), ieee, "runSync");
    assert.deepEqual(got((await prog.run(x))[0]!.data as Float32Array), ieee, "run");
    const [y] = await xla.ffiCall("fp.halve", { args: [x], results: [spec(F32, [4])] });
    assert.deepEqual(got(y as Float32Array), ieee, "ffiCall");
    // The JS thread's own mode is JavaScript's again after the inline call.
    const after = new Float32Array(x);
    for (let i = 0; i < after.length; i++) after[i] = after[i]! * 0.5;
    assert.deepEqual(got(after), ieee);
  },

  /**
   * Synchronous runs (`XlaProgram.runSync`, `Xla.runPythonSync`): Python on
   * the JS thread, so XLA calls a TS handler of a small program inline there
   * (no call from another thread); what needs the free JS thread fails with
   * FAILED_PRECONDITION instead of hanging: a handler's Promise, a program
   * XLA runs on its own threads, asynchronous requests still running.
   */
  async syncRuns() {
    await using xla = await open();
    using dbl = doubler();
    await xla.register("sync.double", dbl);
    let lateRan = 0;
    using late = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
      lateRan++;
      await null;
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
    });
    await xla.register("sync.late", late);
    // Not declared async, but returns a Promise (its synchronous part runs).
    using promising = Ffi.bind().arg(F32).ret(F32).to((_x, y) => {
      y.typed().fill(1);
      return Promise.resolve();
    });
    await xla.register("sync.promising", promising);
    const lib = HandlerLibrary.open(buildDemoLibrary());
    await xla.register("sync.saxpy", lib.handler("demo_saxpy"));
    const call = (target: string, extra = "") =>
      `def f(x):\n    return ffi.ffi_call("${target}", jax.ShapeDtypeStruct(x.shape, x.dtype))(x${extra})\n`;
    const x = new Float32Array([1, -2, 3.5, 4]);

    await using small = await xla.jit(call("sync.double"), { args: [spec(F32, [4])] });
    const where = `import threading\nresult = threading.get_native_id()`;
    const jsThread = xla.runPythonSync(where) as number;
    assert.notEqual(jsThread, await xla.runPython(where), "the worker is another thread");
    const before = handlerHostStats().foreignCalls;
    for (let i = 0; i < 3; i++) {
      const [y] = small.runSync(x);
      assert.deepEqual([...y!.data as Float32Array], [2, -4, 7, 8]);
      assert.deepEqual(y!.shape, [4]);
    }
    assert.equal(handlerHostStats().foreignCalls - before, 0, "called inline on the JS thread");
    assert.deepEqual([...(await small.run(x))[0]!.data as Float32Array], [2, -4, 7, 8]);
    assert.ok(handlerHostStats().foreignCalls - before >= 1, "run(): from a worker's thread");
    // A C handler, and Python's own values and errors.
    await using c = await xla.jit(call("sync.saxpy", ", x, alpha=np.float32(3)"), {
      args: [spec(F32, [4])],
    });
    assert.deepEqual([...c.runSync(x)[0]!.data as Float32Array], [4, -8, 14, 16]);
    assert.equal(xla.runPythonSync("result = int(jnp.arange(5).sum())"), 10);
    assert.throws(
      () => xla.runPythonSync("result = undefined_name"),
      (e) =>
        e instanceof PythonError && e.pythonType === "NameError" &&
        e.codeName === "INVALID_ARGUMENT",
    );

    // An async handler's Promise cannot settle during the run: refused at once.
    await using asyncProg = await xla.jit(call("sync.late"), { args: [spec(F32, [4])] });
    const t0 = performance.now();
    assert.throws(() => asyncProg.runSync(x), (e) => {
      assert.ok(e instanceof FfiError, String(e));
      assert.equal(e.codeName, "FAILED_PRECONDITION", e.message);
      assert.match(e.message, /An async TS handler \(or one that returned a Promise\) cannot be/);
      assert.match(e.message, /Run the program with run\(\)/);
      return true;
    });
    assert.ok(performance.now() - t0 < 400, "refused without waiting for the guard's grace");
    assert.equal(lateRan, 0, "refused before it ran: XLA frees the buffers of a failed call");
    await using promisingProg = await xla.jit(call("sync.promising"), { args: [spec(F32, [4])] });
    for (let i = 0; i < 3; i++) {
      assert.throws(
        () => promisingProg.runSync(x),
        (e) => e instanceof FfiError && e.codeName === "FAILED_PRECONDITION",
      );
      await new Promise((r) => setTimeout(r, 0)); // its Promise settles: the token is dropped
    }
    assert.deepEqual([...(await promisingProg.run(x))[0]!.data as Float32Array], [1, 1, 1, 1]);
    assert.deepEqual([...(await asyncProg.run(x))[0]!.data as Float32Array], [2, -4, 7, 8]);

    // A program XLA runs on its own threads (a long one; it runs a short one inline): the
    // call from there fails after the guard's grace.
    await using big = await xla.jit(
      `def f(x):\n    for i in range(200):\n        x = jnp.sin(x) * 0 + x + 0 * i\n` +
        `    return ffi.ffi_call("sync.double", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n`,
      { args: [spec(F32, [4])] },
    );
    const ones = new Float32Array(4).fill(1);
    const t1 = performance.now();
    assert.throws(() => big.runSync(ones), (e) => {
      assert.ok(e instanceof FfiError, String(e));
      assert.equal(e.codeName, "FAILED_PRECONDITION", e.message);
      assert.match(e.message, /the JS thread runs Python synchronously/);
      assert.match(e.message, /Use run\(\) or runPython\(\)/);
      return true;
    });
    const waited = performance.now() - t1;
    assert.ok(waited >= 450 && waited < 10_000, `failed after ${waited} ms`);
    assert.deepEqual([...(await big.run(ones))[0]!.data as Float32Array], [2, 2, 2, 2]);

    // Not while asynchronous requests run; closed programs and hosts.
    const pending = small.run(x);
    assert.throws(() => small.runSync(x), (e) => {
      assert.ok(e instanceof FfiError && e.codeName === "FAILED_PRECONDITION", String(e));
      assert.match(e.message, /cannot start while 1 asynchronous request of the Python host runs/);
      return true;
    });
    await pending;
    assert.equal(small.runSync(x)[0]!.data[0], 2, "allowed again once it is done");
    const gone = await xla.jit(call("sync.double"), { args: [spec(F32, [4])] });
    await gone.close();
    assert.throws(() => gone.runSync(x), /closed/);
    lib.close();
  },

  /**
   * A TS handler writes the buffer XLA hands it, as a C++ handler does
   * (`untyped_data()`): what it writes through native code (`memset` on
   * `y.pointer`) and through its view both reach XLA, inline (XLA hands a
   * new output address nearly every call) and from a worker's thread.
   */
  async resultsAsWritten() {
    await using xla = await open();
    const libc = Deno.dlopen("libc.so.6", {
      memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
    });
    try {
      using h = Ffi.bind().arg(F32).ret(DataType.U8).to((x, y) => {
        libc.symbols.memset(y.pointer, 1, BigInt(y.byteSize));
        const xs = x.typed(), ys = y.typed();
        for (let i = 0; i < xs.length; i += 2) ys[i] = xs[i]! > 0 ? 9 : 0;
      });
      await xla.register("written.mixed", h);
      await using p = await xla.jit(
        `def f(x):\n    return ffi.ffi_call("written.mixed", jax.ShapeDtypeStruct(x.shape, np.uint8))(x)\n`,
        { args: [spec(F32, [7])] },
      );
      const expect = (x: Float32Array) => [...x].map((v, i) => i % 2 === 0 ? (v > 0 ? 9 : 0) : 1);
      const N = 60;
      for (let k = 0; k < N; k++) {
        const x = Float32Array.from({ length: 7 }, (_, i) => (i + k) % 3 - 1);
        assert.deepEqual([...p.runSync(x)[0]!.data], expect(x), `inline call ${k}`);
      }
      const x = new Float32Array([1, -1, 2, -2, 3, -3, 4]);
      assert.deepEqual([...(await p.run(x))[0]!.data], expect(x), "from a worker's thread");
    } finally {
      libc.close();
    }
  },

  /** The C demo counter: State_Set in instantiate, State_Get in execute. */
  async stateC() {
    await using xla = await open();
    const lib = HandlerLibrary.open(buildDemoLibrary());
    await xla.register("demo.counter", {
      instantiate: lib.handler("demo_counter_instantiate"),
      execute: lib.handler("demo_counter_execute"),
    });
    await using prog = await xla.jit(
      `def f():\n    return ffi.ffi_call("demo.counter", jax.ShapeDtypeStruct((), jnp.int64))(start=np.int64(41))\n`,
    );
    const got: bigint[] = [];
    for (let i = 0; i < 3; i++) got.push((await prog.run())[0]!.data[0] as bigint);
    assert.deepEqual(got, [42n, 43n, 44n]);
  },
  /**
   * Models exported by jax.export in another Python process, loaded with
   * xla.load: a pytree of parameters against jax's own result, a custom call
   * to a TS-registered target against jax's own run of the same function
   * here, symbolic shapes, bad bytes, close.
   */
  async exported() {
    const python = Deno.env.get("XLA_FFI_DENO_PYTHON")!;
    const dir = await Deno.makeTempDir({ prefix: "xla-export-" });
    try {
      const script = `
import sys, numpy as np, jax, jax.numpy as jnp
from jax import export
out = sys.argv[1]
def mlp(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])
rng = np.random.default_rng(7)
p = {"w": rng.standard_normal((3, 2)).astype(np.float32),
     "b": rng.standard_normal(2).astype(np.float32)}
x = rng.standard_normal((4, 3)).astype(np.float32)
open(out + "/mlp.bin", "wb").write(export.export(jax.jit(mlp))(p, x).serialize())
for k, v in {"w": p["w"], "b": p["b"], "x": x, "y": np.asarray(jax.jit(mlp)(p, x))}.items():
    np.save(out + "/" + k + ".npy", v)
def twice(x):
    y = jax.ffi.ffi_call("test.export.twice", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    return jnp.sin(y) + 1, y.sum()
ok = [export.DisabledSafetyCheck.custom_call("test.export.twice")]
exp = export.export(jax.jit(twice), disabled_checks=ok)(jax.ShapeDtypeStruct((5,), jnp.float32))
open(out + "/twice.bin", "wb").write(exp.serialize())
n = jax.ShapeDtypeStruct(export.symbolic_shape("n"), jnp.float32)
open(out + "/poly.bin", "wb").write(export.export(jax.jit(lambda x: x * 2 + 1))(n).serialize())
gpu = export.export(jax.jit(lambda x: x * 2), platforms=["cuda"])(jax.ShapeDtypeStruct((3,), jnp.float32))
open(out + "/cuda.bin", "wb").write(gpu.serialize())
`;
      const r = await new Deno.Command(python, {
        args: ["-c", script, dir],
        env: { JAX_PLATFORMS: "cpu" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(r.success, new TextDecoder().decode(r.stderr));
      const npy = async (name: string) => readNpy(await Deno.readFile(`${dir}/${name}.npy`));
      const [w, b, x, want] = await Promise.all(["w", "b", "x", "y"].map(npy));
      const xla = await open();
      const base = (await xla.pythonStats()).programs;

      // A pytree of parameters: its leaves in jax's order ((params, x), {}: b, w, x).
      const mlp = await xla.load(await Deno.readFile(`${dir}/mlp.bin`));
      assert.equal(mlp.format, "exported");
      assert.deepEqual(mlp.outputs, [{ dtype: F32, shape: [4, 2] }]);
      const ys = mlp.runSync(b!, w!, x!);
      assert.deepEqual(ys[0]!.shape, [4, 2]);
      assert.deepEqual([...ys[0]!.data as Float32Array], [...want!.data as Float32Array]);
      const [ya] = await mlp.run(b!, w!, x!);
      assert.deepEqual(ya!.data, ys[0]!.data);
      // Compiled again after clearCache, on the plans made before.
      await mlp.clearCache();
      assert.deepEqual(mlp.runSync(b!, w!, x!)[0]!.data, ys[0]!.data);
      assert.deepEqual(
        await xla.runPython(
          `result = np.asarray(program(${mlp.id})(*[np.zeros(s, np.float32) for s in ` +
            `((2,), (3, 2), (4, 3))])).tolist()`,
        ),
        [[0, 0], [0, 0], [0, 0], [0, 0]],
      );
      await rejects(mlp.run(x!), ErrorCode.INVALID_ARGUMENT, /input pytree/);

      // A custom call to a target registered from TS: jax's own run of the same function here.
      using d = doubler();
      await xla.register("test.export.twice", d);
      using twice = await xla.load(await Deno.readFile(`${dir}/twice.bin`));
      assert.deepEqual(twice.outputs, [{ dtype: F32, shape: [5] }, { dtype: F32, shape: [] }]);
      const xs = new Float32Array([0.5, -1, 2, 0, 3.25]);
      const jaxs = await xla.runPython(`
def twice(x):
    y = ffi.ffi_call("test.export.twice", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    return jnp.sin(y) + 1, y.sum()
s, t = jax.jit(twice)(np.array(${JSON.stringify([...xs])}, np.float32))
result = [np.asarray(s).tolist(), float(t)]
`) as [number[], number];
      const [s, t] = twice.runSync(xs);
      assert.deepEqual([...s!.data as Float32Array], jaxs[0].map(Math.fround));
      assert.equal((t!.data as Float32Array)[0], Math.fround(jaxs[1]));
      assert.equal((t!.data as Float32Array)[0], 9.5);
      const [s2] = await twice.run(xs);
      assert.deepEqual(s2!.data, s!.data);

      // Symbolic dimensions: compiled at the first run of each shape.
      const poly = await xla.load(await Deno.readFile(`${dir}/poly.bin`));
      assert.equal(poly.outputs, null);
      assert.deepEqual([...poly.runSync(new Float32Array([1, 2]))[0]!.data], [3, 5]);
      assert.deepEqual([...(await poly.run(new Float32Array([0, 1, 4])))[0]!.data], [1, 3, 9]);

      // Bad bytes: INVALID_ARGUMENT with jax's words.
      await rejects(
        xla.load("model" as never),
        ErrorCode.INVALID_ARGUMENT,
        /a Uint8Array\), got string/,
      );
      await rejects(xla.load(new Uint8Array()), ErrorCode.INVALID_ARGUMENT, /empty/);
      await rejects(
        xla.load(new TextEncoder().encode("not a model at all")),
        ErrorCode.INVALID_ARGUMENT,
        /not a model serialized by jax\.export: jax\.export\.deserialize said struct\.error: /,
      );
      // Exported for another platform: jax's own words, at load (it compiles there).
      await rejects(
        xla.load(await Deno.readFile(`${dir}/cuda.bin`)),
        ErrorCode.INVALID_ARGUMENT,
        /exported for platforms '\('cuda',\)' but it is used on '\('cpu',\)'/,
      );
      const cut = await Deno.readFile(`${dir}/mlp.bin`);
      await rejects(xla.load(cut.subarray(0, 50)), ErrorCode.INVALID_ARGUMENT, /deserialize said/);

      assert.equal((await xla.pythonStats()).programs, base + 3);
      await mlp.close();
      await rejects(mlp.run(b!, w!, x!), ErrorCode.FAILED_PRECONDITION, /closed/);
      await poly.close();
      await twice.close();
      assert.equal((await xla.pythonStats()).programs, base);
      await xla.close();
      await rejects(xla.load(cut), ErrorCode.FAILED_PRECONDITION, /closed/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
};

if (import.meta.main) await runCaseFromArgs(CASES);

/** The names of the cases. */
export const CASE_NAMES: readonly string[] = Object.keys(CASES);
