/**
 * Guarded handlers under real XLA, one case per child process
 * (`tests/xla_guard_test.ts` runs `deno run … tests/_xla_guard_cases.ts
 * <case>`): the fault test handlers (native/tests/fault_handlers.c)
 * registered with `guard: true` and called from jitted programs, and the
 * same through `Xla.ffiCall(…, { guard: true })`. Each case prints
 * `ok <case>` last.
 *
 * @module
 */
import assert from "node:assert/strict";
import { rejectsWith as rejects } from "./_assert.ts";
import { DataType, ErrorCode, Ffi, HandlerLibrary } from "../mod.ts";
import { Xla } from "../src/xla/mod.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";
import { runCaseFromArgs } from "./_xla_env.ts";

const F32 = DataType.F32;
const spec = (shape: number[]) => ({ dtype: F32, shape });

/** A program calling `target` on its arguments, with one F32 result of `shape`. */
function program(target: string, args: string[], shape: number[]): string {
  return `def f(${args.join(", ")}):\n` +
    `    return ffi.ffi_call("${target}", jax.ShapeDtypeStruct((${shape.join(",")},), ` +
    `jnp.float32))(${args.join(", ")})\n`;
}

const PAST_END =
  /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 \(the result has 16 bytes; found by a canary after the call\)$/;
const BEFORE_START =
  /^Handler 'fault_before_start' wrote before the start of result 0 at byte offset -4, 4 bytes before its first byte \(the result has 16 bytes; found by a canary before it\)$/;
// 5 -> 9 as F32 first differs at byte 2 of element 1.
const ARG_WRITE =
  /^Handler 'fault_arg_write' wrote into argument 1 at byte offset 6 \(arguments are read-only; found by a copy compared after the call\)$/;

const CASES: Record<string, () => Promise<void>> = {
  /** Guarded registrations called from jitted programs. */
  async register() {
    await using xla = await Xla.open();
    using lib = HandlerLibrary.open(faultHandlersPath());
    for (
      const h of [
        "fault_ok",
        "fault_past_end",
        "fault_before_start",
        "fault_far_past_end",
        "fault_arg_write",
        "fault_past_end_and_fail",
        "fault_async_ok",
        "fault_async_past_end",
      ]
    ) {
      await xla.register(`guard.${h}`, lib.handler(h), { guard: true });
    }
    const x = new Float32Array([1, 2, 3, 4]);

    // A clean handler: the result XLA returns is the handler's.
    await using ok = await xla.jit(program("guard.fault_ok", ["x"], [4]));
    assert.deepEqual([...(await ok.run(x))[0]!.data], [2, 4, 6, 8]);

    await using past = await xla.jit(program("guard.fault_past_end", ["x"], [4]));
    await rejects(past.run(x), ErrorCode.DATA_LOSS, PAST_END);

    await using before = await xla.jit(program("guard.fault_before_start", ["x"], [4]));
    await rejects(before.run(x), ErrorCode.DATA_LOSS, BEFORE_START);

    // 1 KiB past the end: still inside the page of canaries after the result.
    await using far = await xla.jit(program("guard.fault_far_past_end", ["x"], [4]));
    await rejects(
      far.run(x),
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_far_past_end' wrote past the end of result 0 at byte offset 1040 \(the result has 16 bytes; found by a canary after the call\)$/,
    );

    await using argw = await xla.jit(program("guard.fault_arg_write", ["x", "a"], [3]));
    await rejects(
      argw.run(new Float32Array([1, 2, 3]), new Float32Array([4, 5, 6])),
      ErrorCode.DATA_LOSS,
      ARG_WRITE,
    );

    // The guard's finding comes before the handler's own error.
    await using both = await xla.jit(program("guard.fault_past_end_and_fail", ["x"], [4]));
    await rejects(
      both.run(x),
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end_and_fail' wrote past the end of result 0 at byte offset 16 /,
    );

    // An asynchronous handler is waited for: its results, and its late faults.
    await using asyncOk = await xla.jit(program("guard.fault_async_ok", ["x"], [4]));
    assert.deepEqual([...(await asyncOk.run(x))[0]!.data], [2, 4, 6, 8]);
    await using asyncPast = await xla.jit(program("guard.fault_async_past_end", ["x"], [4]));
    await rejects(
      asyncPast.run(x),
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_async_past_end' wrote past the end of result 0 at byte offset 16 /,
    );

    // Zero-sized operands: nothing to copy, canaries still checked.
    await using empty = await xla.jit(program("guard.fault_ok", ["x"], [0]));
    assert.equal((await empty.run(new Float32Array(0)))[0]!.data.length, 0);

    // A fault fails that call only: the program runs again.
    assert.deepEqual([...(await ok.run(x))[0]!.data], [2, 4, 6, 8]);
    await rejects(
      xla.register("guard.gpu", lib.handler("fault_ok"), { guard: true, platform: "CUDA" }),
      ErrorCode.UNIMPLEMENTED,
      /guard needs host buffers/,
    );
  },

  /** Xla.ffiCall with guard: true, by handler and by name. */
  async ffiCall() {
    await using xla = await Xla.open();
    using lib = HandlerLibrary.open(faultHandlersPath());
    const x = new Float32Array([1, 2, 3, 4]);
    const plain = await xla.ffiCall(lib.handler("fault_ok"), { args: [x], results: [spec([4])] });
    const guarded = await xla.ffiCall(lib.handler("fault_ok"), {
      args: [x],
      results: [spec([4])],
      guard: true,
    });
    assert.deepEqual([...guarded[0]!], [...plain[0]!]);
    assert.deepEqual([...guarded[0]!], [2, 4, 6, 8]);

    await rejects(
      xla.ffiCall(lib.handler("fault_past_end"), { results: [spec([4])], guard: true }),
      ErrorCode.DATA_LOSS,
      PAST_END,
    );
    await rejects(
      xla.ffiCall(lib.handler("fault_before_start"), { results: [spec([4])], guard: true }),
      ErrorCode.DATA_LOSS,
      BEFORE_START,
    );
    await rejects(
      xla.ffiCall(lib.handler("fault_arg_write"), {
        args: [new Float32Array([1, 2, 3]), new Float32Array([4, 5, 6])],
        results: [spec([3])],
        guard: true,
      }),
      ErrorCode.DATA_LOSS,
      ARG_WRITE,
    );

    // A name registered without the guard: called through a guarded twin.
    await xla.register("plain.past_end", lib.handler("fault_past_end"));
    await rejects(
      xla.ffiCall("plain.past_end", { results: [spec([4])], guard: true }),
      ErrorCode.DATA_LOSS,
      PAST_END,
    );
    // A name this module did not register: no handler to guard.
    await rejects(
      xla.ffiCall("no.such.target", { results: [spec([4])], guard: true }),
      ErrorCode.INVALID_ARGUMENT,
      /guard needs the handler of 'no\.such\.target'/,
    );
    // Aliased: the result starts as the argument's bytes; the handler
    // writes only its result, so the guard is silent.
    const aliased = await xla.ffiCall(lib.handler("fault_ok"), {
      args: [x],
      results: [spec([4])],
      inputOutputAliases: { 0: 0 },
      guard: true,
    });
    assert.deepEqual([...aliased[0]!], [2, 4, 6, 8]);
  },

  /** Guarded calls from XLA's threads: 4 devices under shard_map, sync and async, repeated. */
  async devices() {
    await using xla = await Xla.open({ xlaFlags: ["--xla_force_host_platform_device_count=4"] });
    assert.equal(xla.deviceCount, 4);
    using lib = HandlerLibrary.open(faultHandlersPath());
    for (const h of ["fault_ok", "fault_async_ok", "fault_past_end"]) {
      await xla.register(`dev.${h}`, lib.handler(h), { guard: true });
    }
    const src = (target: string) => `
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ("d",))

def f(x):
    x = jax.reshard(x, NamedSharding(mesh, P("d")))
    call = lambda xs: ffi.ffi_call("${target}", jax.ShapeDtypeStruct(xs.shape, xs.dtype))(xs)
    return jax.shard_map(call, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(x)
`;
    const x = Float32Array.from({ length: 16 }, (_, i) => i);
    const twice = [...x].map((v) => 2 * v);
    await using ok = await xla.jit(src("dev.fault_ok"));
    await using late = await xla.jit(src("dev.fault_async_ok"));
    for (let i = 0; i < 50; i++) {
      assert.deepEqual([...(await ok.run(x))[0]!.data], twice);
    }
    // Four futures in flight at once, each waited for on its own XLA thread.
    for (let i = 0; i < 5; i++) {
      assert.deepEqual([...(await late.run(x))[0]!.data], twice);
    }
    await using past = await xla.jit(src("dev.fault_past_end"));
    await rejects(
      past.run(x),
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 /,
    );
  },

  /** TS handlers behind the guard: a write into an argument; an async one waited for. */
  async tsHandlers() {
    await using xla = await Xla.open();
    using writes = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
      xs[2] = 0; // into its argument
    });
    await xla.register("ts.writes", writes, { guard: true });
    await rejects(
      xla.ffiCall("ts.writes", { args: [new Float32Array([1, 2, 3])], results: [spec([3])] }),
      ErrorCode.DATA_LOSS,
      /^Handler '.+' wrote into argument 0 at byte offset 10 \(arguments are read-only; /,
    );
    using later = Ffi.bind().arg(F32).ret(F32).to(async (x, y) => {
      await new Promise((r) => setTimeout(r, 10));
      const xs = x.typed(), ys = y.typed();
      for (let i = 0; i < ys.length; i++) ys[i] = xs[i]! + 1;
    });
    const [y] = await xla.ffiCall(later, {
      args: [new Float32Array([1, 2, 3])],
      results: [spec([3])],
      guard: true,
    });
    assert.deepEqual([...y!], [2, 3, 4]);
  },

  /**
   * A guarded TS handler called inline by XLA run on the JS thread
   * (`runSync`): it writes the guard's shadow of its result, so a write past
   * its end or before its start through its address is found by the canaries.
   */
  async tsInline() {
    await using xla = await Xla.open();
    const libc = Deno.dlopen("libc.so.6", {
      memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
    });
    try {
      // Each write in the first call of its own registration: no call before it to compare with.
      const program1 = async (name: string, at: number) => {
        using h = Ffi.bind().arg(F32).ret(F32).to((x, y) => {
          const xs = x.typed(), ys = y.typed();
          for (let i = 0; i < ys.length; i++) ys[i] = 2 * xs[i]!;
          if (at !== 0) libc.symbols.memset(Deno.UnsafePointer.offset(y.pointer!, at), 7, 4n);
        });
        await xla.register(name, h, { guard: true });
        const p = await xla.jit(program(name, ["x"], [4]), { args: [spec([4])] });
        try {
          return p.runSync(new Float32Array([1, 2, 3, 4]))[0]!.data;
        } finally {
          await p.close();
        }
      };
      assert.deepEqual([...await program1("ts.inline.ok", 0)], [2, 4, 6, 8]);
      const dataLoss = (re: RegExp) => (e: unknown) =>
        (e as { code?: number }).code === ErrorCode.DATA_LOSS && re.test((e as Error).message);
      await assert.rejects(
        program1("ts.inline.past", 16),
        dataLoss(/wrote past the end of result 0 at byte offset 16 /),
      );
      await assert.rejects(
        program1("ts.inline.before", -4),
        dataLoss(/wrote before the start of result 0 at byte offset -4/),
      );
    } finally {
      libc.close();
    }
  },

  /**
   * XLA keeps sub-byte arrays packed (u4: two values a byte, the first in the
   * low bits; u2: four): the guard shadows the bytes XLA has, ceil(n × bits
   * / 8), not ffi.h's size_bytes(). A handler writing one byte per element
   * writes past the end of XLA's result, found by the canary; one writing
   * the packed bytes gives XLA its values.
   */
  async subByte() {
    await using xla = await Xla.open();
    const x = { data: new Uint8Array([1, 2, 3, 4, 5]), shape: [5], dtype: DataType.U4 };
    const results = [{ dtype: DataType.U4, shape: [5] }];
    using perElement = Ffi.bind().arg().ret().to((_x, y) => {
      (y.typed() as Uint8Array).set([5, 4, 3, 2, 1]);
    });
    await assert.rejects(
      xla.ffiCall(perElement, { args: [x], results, guard: true }),
      (e: unknown) =>
        (e as { code?: number }).code === ErrorCode.DATA_LOSS &&
        /wrote past the end of result 0 at byte offset 3 \(the result has 3 bytes; found by a canary after the call\)$/
          .test((e as Error).message),
    );
    // The packed bytes of the argument, read as XLA has them, copied into the result.
    let packed: number[] = [];
    using copies = Ffi.bind().arg().ret().to((a, y) => {
      const src = new Uint8Array(
        (a.typed() as Uint8Array).buffer,
        (a.typed() as Uint8Array).byteOffset,
        3,
      );
      packed = [...src];
      new Uint8Array((y.typed() as Uint8Array).buffer, (y.typed() as Uint8Array).byteOffset, 3)
        .set(src);
    });
    const [y] = await xla.ffiCall(copies, { args: [x], results, guard: true });
    assert.deepEqual(packed, [0x21, 0x43, 0x05]);
    assert.deepEqual([...y!], [1, 2, 3, 4, 5]);
    // u2: four values a byte.
    const [z] = await xla.ffiCall(copies, {
      args: [{
        data: new Uint8Array([1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0, 1]),
        shape: [12],
        dtype: DataType.U2,
      }],
      results: [{ dtype: DataType.U2, shape: [12] }],
      guard: true,
    });
    assert.deepEqual(packed, [0b00_11_10_01, 0b11_11_10_01, 0b01_00_01_10]);
    assert.deepEqual([...z!], [1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0, 1]);
  },
};

if (import.meta.main) await runCaseFromArgs(CASES);
