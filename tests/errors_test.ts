/**
 * Errors of TS handlers: the value a handler throws or rejects with reaches
 * the caller as the FfiError's cause (its stack shows the handler's line),
 * codes map as XLA maps a C++ handler's exception (checked against a handler
 * built with XLA's ffi.h), FfiError accepts only XLA's codes, and a fuzzer of
 * thrown and resolved values (every kind of JavaScript value, sync and async,
 * on the JS thread and on runtime threads) never ends the process or leaves a
 * call unsettled.
 */
import assert from "node:assert/strict";
import { buildSharedLibrary, findCxxCompiler } from "../build.ts";
import {
  CallFrameBuilder,
  DataType,
  ErrorCode,
  Ffi,
  FfiError,
  FfiPromise,
  Future,
  HandlerLibrary,
  Runtime,
  toFfiError,
} from "../mod.ts";
import { isFfi, THROWN_CASES } from "./_assert.ts";
import { jaxlibHeaders } from "./_jax.ts";
import { thrownValues } from "./_thrown_values.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";

/** The line of this file a stack mentions, e.g. "errors_test.ts:42". */
function lineOf(stack: string | undefined): string | undefined {
  return /errors_test\.ts:\d+/.exec(stack ?? "")?.[0];
}

Deno.test("origin: a thrown value is the caller's cause, its stack shows the handler's line", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  const seen: { thrown?: TypeError } = {};
  using h = Ffi.bind().to(() => {
    try {
      const o = undefined as unknown as { x: number };
      return o.x; // the bug: a TypeError on this line
    } catch (e) {
      seen.thrown = e as TypeError;
      throw e;
    }
  });
  const want = "XLA FFI call failed: Cannot read properties of undefined (reading 'x')";
  for (const run of [() => rt.callSync(h, f), () => rt.call(h, f)]) {
    seen.thrown = undefined;
    let got: unknown;
    try {
      await run();
    } catch (e) {
      got = e;
    }
    assert.ok(got instanceof FfiError, `expected an FfiError, got ${got}`);
    assert.equal(got.codeName, "UNKNOWN");
    assert.equal(got.message, want);
    const thrown = seen.thrown as TypeError | undefined;
    assert.ok(thrown instanceof TypeError);
    assert.equal(got.cause, thrown, "the thrown value is the cause");
    // What Deno prints for the error names the handler's own line.
    const handlerLine = lineOf(thrown.stack);
    assert.ok(handlerLine !== undefined, thrown.stack);
    assert.ok(Deno.inspect(got).includes(handlerLine), Deno.inspect(got));
  }
  // From runtime threads: the first error carries it too.
  const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 2 });
  assert.equal(r.failed, 4);
  assert.equal(r.firstError?.message, want);
  assert.ok(r.firstError?.cause instanceof TypeError);
});

Deno.test("origin: a cause is its own call's, never an earlier call's with the same message", async () => {
  using rt = new Runtime({ threads: 2 });
  using f = new CallFrameBuilder().build();
  using local = HandlerLibrary.open(testHandlersPath());
  const thrown: Error[] = [];
  using ts = Ffi.bind().to(() => {
    const e = new Error("Ooops!");
    thrown.push(e);
    throw e;
  });
  const text = "XLA FFI call failed: Ooops!";
  // Ten failures; the first error's cause is one of them, the rest are this call's too.
  const r = await rt.callOnThreads(ts, f, { threads: 2, iterations: 5 });
  assert.equal(r.failed, 10);
  assert.equal(r.firstError?.message, text);
  assert.ok(thrown.includes(r.firstError?.cause as Error));
  // A C handler failing with the very same message, after that call: no TS handler's cause.
  using same = new CallFrameBuilder().attr("code", 2).attr("message", text).build();
  for (
    const call of [
      () => rt.callSync(local.handler("test_return_error"), same),
      () => rt.call(local.handler("test_return_error"), same),
    ]
  ) {
    let got: unknown;
    try {
      await call();
    } catch (e) {
      got = e;
    }
    assert.ok(got instanceof FfiError);
    assert.equal(got.message, text);
    assert.equal(got.cause, undefined, `cause: ${(got.cause as Error | undefined)?.stack}`);
  }
  const threads = await rt.callOnThreads(local.handler("test_return_error"), same, { threads: 2 });
  assert.equal(threads.firstError?.message, text);
  assert.equal(threads.firstError?.cause, undefined);
  // A C++ exception with that text (XLA's words around what()): no cause either.
  if (findCxxCompiler() !== undefined) {
    using cxx = HandlerLibrary.open(buildSharedLibrary({
      name: "xrt_cxx_handlers",
      sources: ["native/tests/cxx_handlers.cc"],
      cxx: true,
    }));
    await rt.callOnThreads(ts, f, { threads: 2, iterations: 5 });
    assert.throws(() => rt.callSync(cxx.handler("cxx_throws"), f), (e: unknown) => {
      isFfi(ErrorCode.UNKNOWN, text)(e);
      assert.equal((e as Error).cause, undefined);
      return true;
    });
  }
  // And a TS handler's own failure still has its cause.
  thrown.length = 0;
  assert.throws(() => rt.callSync(ts, f), (e: unknown) => {
    assert.equal((e as Error).cause, thrown[0]);
    return true;
  });
});

Deno.test("origin: a rejected value is the cause; an FfiError thrown keeps code and message", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  const mine = new FfiError(ErrorCode.NOT_FOUND, "no such row");
  using rejects = Ffi.bind().to(async () => {
    await null;
    throw mine;
  });
  await assert.rejects(rt.call(rejects, f), (e: unknown) => {
    isFfi(ErrorCode.NOT_FOUND, "no such row")(e);
    assert.equal((e as Error).cause, mine);
    return true;
  });
  const reason = { why: "a plain object" };
  using rejectsObject = Ffi.bind().to(() => Promise.reject(reason));
  await assert.rejects(rt.call(rejectsObject, f), (e: unknown) => {
    isFfi(ErrorCode.UNKNOWN, "XLA FFI call failed: [object Object]")(e);
    assert.equal((e as Error).cause, reason);
    return true;
  });
  // A decode failure stays INVALID_ARGUMENT with ffi.h's message, and has no cause.
  using wantsArg = Ffi.bind().arg(DataType.F32).to(() => {});
  assert.throws(() => rt.callSync(wantsArg, f), (e: unknown) => {
    isFfi(ErrorCode.INVALID_ARGUMENT, /Wrong number of arguments: expected 1 but got 0/)(e);
    assert.equal((e as Error).cause, undefined);
    return true;
  });
});

Deno.test("codes: TypeError, RangeError, Error and non-Errors are UNKNOWN 'XLA FFI call failed: …'", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  for (const [thrown, code, message] of THROWN_CASES) {
    using h = Ffi.bind().to(() => {
      throw thrown;
    });
    assert.throws(() => rt.callSync(h, f), isFfi(code, message));
    using late = Ffi.bind().to(() => Future.failed(thrown));
    await assert.rejects(rt.call(late, f), isFfi(code, message));
  }
  // The module's own API errors keep their rule: TypeError is INVALID_ARGUMENT there.
  assert.equal(toFfiError(new TypeError("x")).code, ErrorCode.INVALID_ARGUMENT);
});

const cxx = findCxxCompiler();
const jax = jaxlibHeaders();

Deno.test({
  name: "codes: a TS handler's Error reads as a C++ ffi.h handler's exception" +
    (jax.reason ? ` (ignored: ${jax.reason})` : cxx === undefined ? " (ignored: no C++)" : ""),
  ignore: jax.includeDir === undefined || cxx === undefined,
  fn: () => {
    const path = buildSharedLibrary({
      name: "xrt_ffi_h_handlers",
      sources: ["native/tests/xla_ffi_h_handlers.cc"],
      cxx: true,
      // XLA's header does not build warning-free; it is not this project's code.
      baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
      includeDirs: [jax.includeDir!],
    });
    using lib = HandlerLibrary.open(path);
    using rt = new Runtime({ threads: 0, apiVersion: "0.3" });
    using f = new CallFrameBuilder().build();
    using ts = Ffi.bind().to(() => {
      throw new Error("Ooops!"); // what ffih_throws throws as std::runtime_error
    });
    const seen = (fn: () => void) => {
      try {
        fn();
      } catch (e) {
        return { code: (e as FfiError).code, message: (e as FfiError).message };
      }
      assert.fail("expected an error");
    };
    assert.deepEqual(
      seen(() => rt.callSync(ts, f)),
      seen(() => rt.callSync(lib.handler("ffih_throws"), f)),
    );
  },
});

Deno.test("FfiError: XLA's codes and their names only; anything else is a TypeError", () => {
  assert.equal(new FfiError(ErrorCode.ABORTED, "m").code, ErrorCode.ABORTED);
  // deno-lint-ignore no-explicit-any
  assert.equal(new FfiError("INTERNAL" as any, "m").code, ErrorCode.INTERNAL);
  assert.equal(new FfiError("UNAUTHENTICATED", "m").codeName, "UNAUTHENTICATED");
  for (const bad of [NaN, undefined, null, 0, 17, -1, 2.5, "OK", "internal", "toString", {}, 3n]) {
    assert.throws(
      // deno-lint-ignore no-explicit-any
      () => new FfiError(bad as any, "m"),
      (e: unknown) => e instanceof TypeError && /invalid error code/.test(e.message),
      `code ${String(bad)}`,
    );
  }
  assert.throws(() => new FfiPromise().setError(null), isFfi(ErrorCode.INVALID_ARGUMENT));
});

Deno.test("forged codes: an FfiError whose code is not XLA's fails the call (sync and async)", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  for (const forged of [NaN, undefined, null, "INTERNAL", 0, 99, 1.5]) {
    const e = new FfiError(ErrorCode.INTERNAL, "forged");
    Object.defineProperty(e, "code", { value: forged });
    using sync = Ffi.bind().to(() => {
      throw e;
    });
    using rejects = Ffi.bind().to(async () => {
      await null;
      throw e;
    });
    assert.throws(() => rt.callSync(sync, f), isFfi(ErrorCode.UNKNOWN, "forged"));
    await assert.rejects(rt.call(rejects, f), isFfi(ErrorCode.UNKNOWN, "forged"));
    const r = await rt.callOnThreads(rejects, f, { threads: 2, iterations: 2 });
    assert.equal(r.failed, 4, `code ${String(forged)}`);
  }
});

Deno.test("null prototype: an async handler throwing Object.create(null) fails the call", async () => {
  using rt = new Runtime({ threads: 1 });
  using f = new CallFrameBuilder().build();
  const bare = Object.create(null);
  using h = Ffi.bind().to(async () => {
    await null;
    throw bare;
  });
  await assert.rejects(rt.call(h, f), (e: unknown) => {
    isFfi(ErrorCode.UNKNOWN, "XLA FFI call failed: [object Object]")(e);
    assert.equal((e as Error).cause, bare);
    return true;
  });
});

Deno.test("fuzz: every kind of thrown or rejected value, sync and async, JS and runtime threads", async () => {
  using rt = new Runtime({ threads: 2 });
  using f = new CallFrameBuilder().build();
  let current: () => unknown = () => {};
  using sync = Ffi.bind().to(() => current());
  using asyncH = Ffi.bind().to(async () => {
    await null;
    return current();
  });
  const ways: [string, (v: () => unknown) => () => unknown][] = [
    ["throw", (v) => () => {
      throw v();
    }],
    ["reject", (v) => () => Promise.reject(v())],
    ["failed Future", (v) => () => Future.failed(v())],
    ["thenable rejecting twice", (v) => () => ({
      then(_ok: unknown, fail: (e: unknown) => void) {
        fail(v());
        fail(v());
      },
    })],
    ["thenable whose then throws", (v) => () => ({
      then() {
        throw v();
      },
    })],
    ["thenable that resolves, then throws", (v) => () => ({
      then(ok: () => void) {
        ok();
        throw v();
      },
    })],
  ];
  let calls = 0;
  for (const [name, make] of thrownValues()) {
    for (const [way, wrap] of ways) {
      current = wrap(make);
      const what = `${way} ${name}`;
      const resolves = way === "thenable that resolves, then throws";
      const check = (e: unknown) => {
        assert.ok(e instanceof FfiError, `${what}: ${String(e)}`);
        assert.ok(e.code >= 1 && e.code <= 16, `${what}: code ${e.code}`);
        assert.equal(typeof e.message, "string");
        return true;
      };
      if (way === "throw") {
        assert.throws(() => rt.callSync(sync, f), check, what);
      }
      for (const h of [sync, asyncH]) {
        if (resolves) await rt.call(h, f);
        else await assert.rejects(rt.call(h, f), check, what);
        const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 2 });
        assert.equal(resolves ? r.ok : r.failed, 4, what);
        if (!resolves) check(r.firstError);
        calls += 6;
      }
      if (way === "throw") {
        // Resolved with the value: success or an error, never a crash or a hang.
        current = make;
        for (const h of [sync, asyncH]) {
          await rt.call(h, f).catch(check);
          const r = await rt.callOnThreads(h, f, { threads: 2, iterations: 2 });
          assert.equal(r.ok + r.failed, 4, what);
        }
      }
    }
  }
  assert.ok(calls > 500);
});
