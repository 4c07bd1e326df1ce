/**
 * API versions 0.1 to 0.4 on both sides, and the runtime behaviours
 * that follow XLA's own source (ffi_api.cc, ffi_registry.cc,
 * execution_context.cc of the version): per-stage contexts, errors the caller
 * keeps, caught C++ exceptions, and handlers built with XLA's own ffi.h
 * (jaxlib's headers, when jax is installed).
 */
import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import {
  type ApiVersion,
  CallFrameBuilder,
  DataType,
  ErrorCode,
  exceptionGuard,
  ExecutionStage,
  Ffi,
  FfiError,
  HandlerBundle,
  HandlerLibrary,
  Runtime,
  runtimeDebugStats,
  scalar,
} from "../mod.ts";
import { native, nativePath } from "../src/native/lib.ts";
import { findCxxCompiler } from "../build.ts";
import { isFfi } from "./_assert.ts";
import { captureStderr } from "./_stderr.ts";
import { jaxlibHeaders } from "./_jax.ts";
import { openTestHandlers } from "./_runtime_handlers.ts";

const VERSIONS: readonly ApiVersion[] = ["0.1", "0.2", "0.3", "0.4"];
let seq = 0;
const name = (s: string) => `versions.${s}.${Deno.pid}.${seq++}`;

/** Calls slot `slot` of an API table with an args buffer; returns the error pointer. */
function callSlot(api: Deno.PointerObject, slot: number, args: BufferSource): Deno.PointerValue {
  const fn = new Deno.UnsafePointerView(api).getPointer(48 + 8 * slot)!;
  return new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
    parameters: ["buffer"],
    result: "pointer",
  }).call(args);
}

function callVoidSlot(api: Deno.PointerObject, slot: number, args: BufferSource): void {
  const fn = new Deno.UnsafePointerView(api).getPointer(48 + 8 * slot)!;
  new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
    parameters: ["buffer"],
    result: "void",
  }).call(args);
}

function createError(api: Deno.PointerObject, code: ErrorCode, text: string): bigint {
  const msg = new TextEncoder().encode(text + "\0");
  const a = new BigUint64Array(4);
  a[0] = 28n;
  a[2] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(msg)));
  a[3] = BigInt(code);
  return BigInt(Deno.UnsafePointer.value(callSlot(api, 0, a)));
}

function errorText(err: bigint): string {
  const p = Deno.UnsafePointer.create(err)!;
  return Deno.UnsafePointerView.getCString(native().xla_ffi_deno_runtime_error_message(p)!);
}

Deno.test("Error_GetMessage and Error_Destroy with a too-small struct_size still act (XLA logs)", () => {
  const api = Runtime.apiTable("0.3");
  const before = runtimeDebugStats();
  const err = createError(api, ErrorCode.INTERNAL, "small");
  const g = new BigUint64Array(4);
  g[0] = 8n; // < 32
  g[2] = err;
  callVoidSlot(api, 1, g);
  assert.equal(Deno.UnsafePointerView.getCString(Deno.UnsafePointer.create(g[3]!)!), "small");
  const d = new BigUint64Array(3);
  d[0] = 8n; // < 24
  d[2] = err;
  callVoidSlot(api, 2, d);
  const after = runtimeDebugStats();
  // Destroyed, not leaked (the logged size messages are errors made and freed too).
  assert.equal(
    after.errorsCreated - before.errorsCreated,
    after.errorsDestroyed - before.errorsDestroyed,
  );
});

Deno.test("Future_SetError refuses a null or OK error and leaves it to the caller (XLA ffi_api.cc)", () => {
  const api = Runtime.apiTable("0.3");
  const c = new BigUint64Array(3);
  c[0] = 16n;
  assert.equal(callSlot(api, 13, c), null); // Future_Create
  const future = c[2]!;
  for (const code of [ErrorCode.OK, undefined]) {
    const mine = code === undefined ? 0n : createError(api, code, "fine");
    const a = new BigUint64Array(4);
    a[0] = 32n;
    a[2] = future;
    a[3] = mine;
    const err = callSlot(api, 15, a);
    assert.notEqual(err, null);
    assert.equal(errorText(BigInt(Deno.UnsafePointer.value(err))), "Error must not be null or OK");
    native().xla_ffi_deno_runtime_error_destroy(err);
    if (mine !== 0n) {
      assert.equal(errorText(mine), "fine"); // still live: the caller's to destroy
      native().xla_ffi_deno_runtime_error_destroy(Deno.UnsafePointer.create(mine));
    }
  }
  // A real error completes it and is taken over.
  const real = createError(api, ErrorCode.ABORTED, "stop");
  const a = new BigUint64Array(4);
  a[0] = 32n;
  a[2] = future;
  a[3] = real;
  assert.equal(callSlot(api, 15, a), null);
  // No runtime waits on this future: release it as a harness would.
  const lib = Deno.dlopen(nativePath(), {
    xla_ffi_deno_runtime_future_release: { parameters: ["pointer"], result: "i32" },
  });
  try {
    assert.equal(
      lib.symbols.xla_ffi_deno_runtime_future_release(Deno.UnsafePointer.create(future)),
      0,
    );
  } finally {
    lib.close();
  }
});

Deno.test("the instantiate stage gets only the execution state, as XLA builds its context", () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 2 });
  const id = new BigInt64Array(1);
  const ord = new Int32Array(1);
  using f = new CallFrameBuilder().ret(id).build();
  using g = new CallFrameBuilder().ret(ord).build();
  const inst = { stage: ExecutionStage.INSTANTIATE, runId: 42, deviceOrdinal: 3 };
  rt.callSync(lib.handler("test_run_id"), f, inst);
  assert.equal(id[0], -1n);
  rt.callSync(lib.handler("test_device_ordinal"), g, inst);
  assert.equal(ord[0], -1);
  using p = new CallFrameBuilder().ret(new BigInt64Array(1)).build();
  assert.throws(
    () => rt.callSync(lib.handler("test_thread_pool"), p, { stage: ExecutionStage.INSTANTIATE }),
    isFfi(ErrorCode.UNIMPLEMENTED, "XLA FFI CPU context is not available"),
  );
  // Other stages have the CPU context, run id and device ordinal.
  rt.callSync(lib.handler("test_run_id"), f, { ...inst, stage: ExecutionStage.PREPARE });
  assert.equal(id[0], 42n);
  rt.callSync(lib.handler("test_device_ordinal"), g, { ...inst, stage: ExecutionStage.EXECUTE });
  assert.equal(ord[0], 3);
});

Deno.test("user data: null pointers and type ids given twice are refused (XLA execution_context.cc)", () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 0 });
  using f = new CallFrameBuilder().ret(new BigInt64Array(1)).attr("type_id", 5, DataType.S64)
    .build();
  const data = new BigInt64Array([1n]);
  assert.throws(
    () => rt.callSync(lib.handler("test_user_data"), f, { userData: [[5, null]] }),
    isFfi(ErrorCode.INVALID_ARGUMENT, "User data must be not null"),
  );
  assert.throws(
    () =>
      rt.callSync(lib.handler("test_user_data"), f, {
        userData: [[5, Deno.UnsafePointer.of(data)], [5n, Deno.UnsafePointer.of(data)]],
      }),
    isFfi(ErrorCode.ALREADY_EXISTS, "User data with type id 5 already exists in execution context"),
  );
});

for (const apiVersion of VERSIONS) {
  Deno.test(`TS handlers keep a state instantiate → execute under a ${apiVersion} runtime`, async () => {
    using rt = new Runtime({ threads: 1, apiVersion });
    // The handlers report the runtime's version (a runtime refuses newer ones);
    // their State calls follow the runtime's version whatever they report.
    using bundle = new HandlerBundle({
      instantiate: Ffi.bindInstantiate().attr("start", "i64").to((start) => ({ n: start }), {
        apiVersion,
      }),
      execute: Ffi.bind().state<{ n: number }>().ret(DataType.S64).to((s, out) => {
        s.n += 1;
        out.typed()[0] = BigInt(s.n);
      }, { apiVersion }),
    });
    rt.register(name("ts_state"), bundle);
    const out = new BigInt64Array(1);
    using init = new CallFrameBuilder().attr("start", scalar(DataType.S64, 40)).build();
    using f = new CallFrameBuilder().ret(out).build();
    await using inst = await rt.instantiate(bundle, init);
    rt.callSync(bundle, f, { instance: inst });
    await rt.call(bundle, f, { instance: inst });
    assert.equal(out[0], 42n);
    assert.ok(inst.stateTypeId !== undefined && inst.stateTypeId > 0);
    if (apiVersion === "0.1" || apiVersion === "0.2") {
      // Before 0.3 only the instantiate stage holds a state.
      using prep = Ffi.bindPrepare().to(() => ({}));
      assert.throws(
        () => rt.callSync(prep, f, { instance: inst, stage: ExecutionStage.PREPARE }),
        isFfi(
          ErrorCode.INTERNAL,
          /only instantiate handlers can set a state before XLA FFI API 0\.3/,
        ),
      );
    }
  });
}

Deno.test("TS handlers under 0.3: prepare and initialize set states of their own", async () => {
  using rt = new Runtime({ threads: 1 });
  const seen: string[] = [];
  using bundle = new HandlerBundle({
    instantiate: Ffi.bindInstantiate().to(() => "instantiated"),
    prepare: Ffi.bindPrepare().to(() => "prepared"),
    initialize: Ffi.bindInitialize().state<string>(ExecutionStage.PREPARE).to((p) =>
      `${p}+initialized`
    ),
    execute: Ffi.bind()
      .state<string>()
      .state<string>(ExecutionStage.PREPARE)
      .state<string>(ExecutionStage.INITIALIZE)
      .to((a, b, c) => void seen.push(a, b, c)),
  });
  using f = new CallFrameBuilder().build();
  await using inst = await rt.instantiate(bundle, f);
  rt.callSync(bundle, f, { instance: inst, stage: ExecutionStage.PREPARE });
  rt.callSync(bundle, f, { instance: inst, stage: ExecutionStage.INITIALIZE });
  rt.callSync(bundle, f, { instance: inst });
  assert.deepEqual(seen, ["instantiated", "prepared", "prepared+initialized"]);
  assert.throws(() => Ffi.bind().state(ExecutionStage.EXECUTE), TypeError);
});

Deno.test("a handler's reported version picks ffi.h's rules of that version", () => {
  using rt = new Runtime({ threads: 0 });
  for (const v of VERSIONS) {
    using h = Ffi.bind().to(() => {}, { apiVersion: v });
    assert.deepEqual(rt.metadata(h).apiVersion, { major: 0, minor: Number(v.slice(2)) });
  }
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => Ffi.bind().to(() => {}, { apiVersion: "0.9" as any }),
    isFfi(ErrorCode.INVALID_ARGUMENT, /unsupported XLA FFI API version '0\.9'/),
  );
});

// ---- 0.4: Error_GetCode ------------------------------------------------------

Deno.test("0.4: Error_GetCode reads the code of an API-made error, OK for null, and logs a small struct", async () => {
  const api = Runtime.apiTable("0.4");
  const err = createError(api, ErrorCode.RESOURCE_EXHAUSTED, "full");
  const a = new BigUint64Array(4);
  a[0] = 28n;
  a[2] = err;
  callVoidSlot(api, 18, a);
  assert.equal(Number(a[3]! & 0xffffffffn), ErrorCode.RESOURCE_EXHAUSTED);
  // A null error is success; a too-small struct is logged and nothing written (XLA).
  a[2] = 0n;
  a[3] = 99n;
  callVoidSlot(api, 18, a);
  assert.equal(Number(a[3]! & 0xffffffffn), ErrorCode.OK);
  a[0] = 8n;
  a[2] = err;
  a[3] = 99n;
  const { text } = await captureStderr(() => callVoidSlot(api, 18, a));
  assert.equal(a[3], 99n);
  assert.match(
    text,
    /Unexpected XLA_FFI_Error_GetCode size: expected 28, got 8\. Check installed software versions\. The framework XLA FFI API version is 0\.4\./,
  );
  native().xla_ffi_deno_runtime_error_destroy(Deno.UnsafePointer.create(err));
});

Deno.test("0.4: a C handler built against 0.4 reads back the codes of its own and the runtime's errors", () => {
  using lib = openTestHandlers();
  const h = lib.handler("v04_get_code");
  using rt = new Runtime({ threads: 0 });
  assert.equal(rt.apiVersion, "0.4");
  assert.deepEqual(rt.metadata(h).apiVersion, { major: 0, minor: 4 });
  const n = name("v04");
  rt.register(n, h);
  using f = new CallFrameBuilder().build();
  assert.throws(
    () => rt.callSync(n, f),
    isFfi(ErrorCode.UNIMPLEMENTED, "read back: created 5, runtime-made 12"),
  );
  // A 0.3 runtime refuses it with XLA's message; one without the slot could not read codes.
  using rt3 = new Runtime({ threads: 0, apiVersion: "0.3" });
  assert.throws(
    () => rt3.register(n, h),
    isFfi(
      ErrorCode.INVALID_ARGUMENT,
      `XLA FFI handler registration for ${n} on platform Host (canonical host) failed because ` +
        "the handler's API version (0.4) is incompatible with the framework's API version " +
        "(0.3). Minimum supported API version is (0.1).",
    ),
  );
  assert.throws(
    () => rt3.callSync(h, f),
    isFfi(ErrorCode.UNKNOWN, "read back: created 2, runtime-made 2"),
  );
});

Deno.test("0.4: Error_GetCode reads the code of a TS handler's error, as a C handler gets it", () => {
  using lib = openTestHandlers();
  using rt = new Runtime({ threads: 0 });
  using ts = Ffi.bind().attr("inner", "i64").to(() => {
    throw new FfiError(ErrorCode.DATA_LOSS, "lost it");
  });
  using f = new CallFrameBuilder()
    .attr("inner", scalar(DataType.S64, BigInt(Deno.UnsafePointer.value(ts.pointer))))
    .build();
  assert.throws(
    () => rt.callSync(lib.handler("v04_inner_code"), f),
    isFfi(ErrorCode.DATA_LOSS, `inner error: code ${ErrorCode.DATA_LOSS}: lost it`),
  );
});

Deno.test("0.4: TS handlers report 0.4 by default, the caller's version where it is older, and a chosen one as chosen", async () => {
  using h = Ffi.bind().ret(DataType.F32).to((out) => {
    out.typed()[0] = 7;
  });
  using pinned = Ffi.bind().to(() => {}, { apiVersion: "0.4" });
  for (const v of ["0.2", "0.3", "0.4"] as const) {
    using rt = new Runtime({ threads: 0, apiVersion: v });
    assert.deepEqual(rt.metadata(h).apiVersion, { major: 0, minor: Number(v.slice(2)) });
    assert.deepEqual(rt.metadata(pinned).apiVersion, { major: 0, minor: 4 });
    const [y] = await rt.ffiCall(h, { results: [{ dtype: DataType.F32, shape: [] }] });
    assert.equal(y![0], 7);
    if (v !== "0.4") {
      assert.throws(
        () => rt.register(name("pinned"), pinned),
        isFfi(ErrorCode.INVALID_ARGUMENT, /handler's API version \(0\.4\) is incompatible/),
      );
    }
  }
  // A 0.1 runtime queries without an api: the bound version stands (it takes 0.1 only).
  using rt1 = new Runtime({ threads: 0, apiVersion: "0.1" });
  assert.deepEqual(rt1.metadata(h).apiVersion, { major: 0, minor: 4 });
});

// ---- C++ exceptions --------------------------------------------------------

const cxx = findCxxCompiler();

Deno.test({
  name: "C++ exceptions of handlers become errors, as XLA catches them" +
    (cxx === undefined ? " (no C++ compiler)" : ""),
  ignore: cxx === undefined,
  fn: async () => {
    assert.equal(exceptionGuard().installed, true, exceptionGuard().reason);
    const path = buildSharedLibrary({
      name: "xrt_cxx_handlers",
      sources: ["native/tests/cxx_handlers.cc"],
      cxx: true,
    });
    using lib = HandlerLibrary.open(path);
    using rt = new Runtime({ threads: 2 });
    using f = new CallFrameBuilder().build();
    const throws = lib.handler("cxx_throws");
    assert.throws(
      () => rt.callSync(throws, f),
      isFfi(ErrorCode.UNKNOWN, "XLA FFI call failed: Ooops!"),
    );
    await assert.rejects(
      rt.call(throws, f),
      isFfi(ErrorCode.UNKNOWN, "XLA FFI call failed: Ooops!"),
    );
    const threads = await rt.callOnThreads(throws, f, { threads: 2, iterations: 5 });
    assert.equal(threads.failed, 10);
    assert.equal(threads.firstError?.message, "XLA FFI call failed: Ooops!");
    assert.throws(
      () => rt.callSync(lib.handler("cxx_throws_other"), f),
      isFfi(
        ErrorCode.UNKNOWN,
        "XLA FFI call failed: an exception that is not a std::exception",
      ),
    );
    assert.throws(
      () => rt.register(name("cxx"), lib.handler("cxx_throws_metadata")),
      isFfi(ErrorCode.UNKNOWN, "Fetching XLA FFI metadata failed: no metadata today"),
    );
    rt.callSync(lib.handler("cxx_fine"), f);
  },
});

// ---- Handlers built with XLA's own ffi.h (jaxlib's headers) -----------------

const jax = jaxlibHeaders();
const jaxNote = jax.reason ? ` (${jax.reason})` : cxx === undefined ? " (no C++ compiler)" : "";

function ffiHLibrary(): HandlerLibrary {
  const path = buildSharedLibrary({
    name: "xrt_ffi_h_handlers",
    sources: ["native/tests/xla_ffi_h_handlers.cc"],
    cxx: true,
    // XLA's header does not build warning-free; it is not this project's code.
    baseFlags: ["-std=c++17", "-O2", "-fPIC", "-pthread", "-w"],
    includeDirs: [jax.includeDir!],
  });
  return HandlerLibrary.open(path);
}

Deno.test({
  name: "handlers built with jaxlib's ffi.h (0.3) run in the embedded 0.3 runtime" + jaxNote,
  ignore: jax.includeDir === undefined || cxx === undefined,
  fn: async () => {
    using lib = ffiHLibrary();
    using rt = new Runtime({ threads: 1 });
    assert.deepEqual(rt.metadata(lib.handler("ffih_scale")).apiVersion, { major: 0, minor: 3 });
    // ffi.h's typed decoding against our frames.
    const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
    using f = new CallFrameBuilder().arg(x).ret(y).attr("alpha", scalar(DataType.F32, 2)).build();
    rt.register(name("scale"), lib.handler("ffih_scale"));
    rt.callSync(lib.handler("ffih_scale"), f);
    assert.deepEqual([...y], [2, 4, 6]);
    // The same arity and decode messages as our TS handlers of 0.3.
    using ts = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32").to(() => {});
    using noArgs = new CallFrameBuilder().ret(y).attr("alpha", scalar(DataType.F32, 2)).build();
    using wrongType = new CallFrameBuilder().arg(new Int32Array(3)).ret(y)
      .attr("alpha", scalar(DataType.F32, 2)).build();
    for (const frame of [noArgs, wrongType]) {
      let want: unknown, got: unknown;
      try {
        rt.callSync(lib.handler("ffih_scale"), frame);
      } catch (e) {
        want = e;
      }
      try {
        rt.callSync(ts, frame);
      } catch (e) {
        got = e;
      }
      assert.ok(want instanceof Error && got instanceof Error);
      assert.equal(got.message, want.message);
    }
    // A thrown exception.
    using empty = new CallFrameBuilder().build();
    assert.throws(
      () => rt.callSync(lib.handler("ffih_throws"), empty),
      isFfi(ErrorCode.UNKNOWN, "XLA FFI call failed: Ooops!"),
    );
    // ffi.h's state: the library's TypeId storage registered in place, its
    // TypeInfo's deleter used by State_Set (0.3 layout, with the stage).
    const id = lib.typeId("ffih_counter_type_id");
    const assigned = rt.registerType(name("Counter"), id, {
      typeInfo: lib.typeInfo("ffih_counter_type_info"),
    });
    assert.equal(id.value, BigInt(assigned));
    const bundle = {
      instantiate: lib.handler("ffih_counter_instantiate"),
      execute: lib.handler("ffih_counter_execute"),
    };
    rt.register(name("counter"), bundle);
    const out = new BigInt64Array(1);
    using cf = new CallFrameBuilder().ret(out, []).build(); // a rank-0 S64 result
    using init = new CallFrameBuilder().attr("start", scalar(DataType.S64, 41)).build();
    const before = runtimeDebugStats();
    {
      await using inst = await rt.instantiate(bundle, init);
      assert.equal(inst.stateTypeId, assigned);
      rt.callSync(bundle, cf, { instance: inst });
      assert.equal(out[0], 42n);
      await rt.call(bundle, cf, { instance: inst });
      assert.equal(out[0], 43n);
    }
    const after = runtimeDebugStats();
    assert.equal(after.statesDeleted - before.statesDeleted, 1); // ffi.h's deleter ran
  },
});

Deno.test({
  name: "a 0.3 ffi.h state handler under a 0.1 runtime gets a clear error, not a crash" + jaxNote,
  ignore: jax.includeDir === undefined || cxx === undefined,
  fn: async () => {
    using lib = ffiHLibrary();
    using rt = new Runtime({ threads: 1, apiVersion: "0.1" });
    // XLA 0.1 would not register it (its version is 0.3)...
    assert.throws(
      () => rt.register(name("counter01"), lib.handler("ffih_counter_execute")),
      isFfi(ErrorCode.INVALID_ARGUMENT, /handler's API version \(0\.3\) is incompatible/),
    );
    // ...and called directly, its 0.3 State_Set arguments do not fit the 0.1 layout.
    const id = lib.typeId("ffih_counter_type_id");
    if (id.value === 0n) rt.registerType(name("Counter01"), id);
    using init = new CallFrameBuilder().attr("start", scalar(DataType.S64, 1)).build();
    await assert.rejects(
      rt.instantiate(lib.handler("ffih_counter_instantiate"), init),
      isFfi(ErrorCode.INVALID_ARGUMENT, /laid out for another XLA FFI API version/),
    );
  },
});
