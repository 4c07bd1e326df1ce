/**
 * Isolated handler libraries: handlers (C, and C++ with jaxlib's ffi.h) that
 * crash, hang or write where they must not fail their own call with an
 * FfiError naming them; the caller lives on and the next call works.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, ErrorCode, HandlerLibrary, Runtime, scalar } from "../mod.ts";
import {
  faultHandlersPath,
  ffiHFaultHandlersPath,
  ffiHFaultsSkip,
  hangingLoadPath,
  isFault,
  openDescriptors,
} from "./_fault_handlers.ts";
import { testHandlersPath } from "./_runtime_handlers.ts";
import { CHILD_PERMISSIONS } from "./_child.ts";

const died = (handler: string, signal: string) =>
  isFault(
    ErrorCode.INTERNAL,
    new RegExp(
      `^Handler '${handler}' of the isolated library .*libxrt_fault_handlers\\.so ended its ` +
        `process with ${signal} \\(.*\\); a new process starts at the next call`,
    ),
  );

Deno.test("an isolated handler's fatal signal fails its call; the next call works", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  assert.equal(lib.isolated, true);
  assert.equal(lib.pid, undefined); // started on first use
  const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  rt.callSync(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4, 6]);
  const first = lib.pid;
  assert.ok(first !== undefined && first !== Deno.pid);
  const signals: [string, string][] = [
    ["fault_segv", "SIGSEGV"],
    ["fault_abort", "SIGABRT"],
    ["fault_fpe", "SIGFPE"],
    ["fault_bus", "SIGBUS"],
    ["fault_ill", Deno.build.arch === "x86_64" ? "SIGILL" : "SIG(ILL|TRAP)"],
  ];
  for (const [handler, signal] of signals) {
    assert.throws(() => rt.callSync(lib.handler(handler), frame), died(handler, signal));
    assert.equal(lib.pid, undefined);
    y.fill(0);
    rt.callSync(lib.handler("fault_ok"), frame);
    assert.deepEqual([...y], [2, 4, 6]);
  }
  assert.notEqual(lib.pid, first);
  // The same through call and callOnThreads.
  await assert.rejects(rt.call(lib.handler("fault_segv"), frame), died("fault_segv", "SIGSEGV"));
  y.fill(0);
  await rt.call(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4, 6]);
  await assert.rejects(
    rt.callOnThreads(lib.handler("fault_abort"), frame, { threads: 2 }),
    died("fault_abort", "SIGABRT"),
  );
  assert.deepEqual(
    await rt.callOnThreads(lib.handler("fault_ok"), frame, { threads: 2, iterations: 2 }),
    { ok: 4, failed: 0 },
  );
});

Deno.test("an isolated call past its deadline is killed with DEADLINE_EXCEEDED", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: { timeoutMs: 300 } });
  using rt = new Runtime({ threads: 0 });
  const y = new Float32Array(2);
  using frame = new CallFrameBuilder().arg(new Float32Array([1, 2])).ret(y).build();
  const late = isFault(
    ErrorCode.DEADLINE_EXCEEDED,
    /^Handler 'fault_hang' of the isolated library .* did not return within isolate\.timeoutMs \(300 ms\): its process was killed \(a new one starts at the next call\)$/,
  );
  const t0 = performance.now();
  assert.throws(() => rt.callSync(lib.handler("fault_hang"), frame), late);
  assert.ok(performance.now() - t0 < 5000);
  rt.callSync(lib.handler("fault_slow"), frame); // 50 ms: within the deadline
  await assert.rejects(rt.call(lib.handler("fault_hang"), frame), late);
  await rt.call(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4]);
});

Deno.test("a library that hangs while loading fails within isolate.timeoutMs", () => {
  using lib = HandlerLibrary.open(hangingLoadPath(), { isolate: { timeoutMs: 500 } });
  const t0 = performance.now();
  assert.throws(
    () => lib.handler("fault_ok"),
    isFault(
      ErrorCode.DEADLINE_EXCEEDED,
      /^Loading the isolated handler library .*libxrt_fault_handlers_hang_init\.so in its process did not finish within isolate\.timeoutMs \(500 ms\): its process was killed \(a new one starts at the next call\)$/,
    ),
  );
  const took = performance.now() - t0;
  assert.ok(took >= 500 && took < 5000, `${took} ms`);
  assert.equal(lib.pid, undefined);
});

Deno.test("a process that ended between calls is reported as such; the next call starts a new one", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  const y = new Float32Array(2);
  using frame = new CallFrameBuilder().arg(new Float32Array([1, 2])).ret(y).build();
  const idle = (what: string) =>
    isFault(
      ErrorCode.UNAVAILABLE,
      new RegExp(
        `^The process of the isolated handler library .*libxrt_fault_handlers\\.so ended while ` +
          `idle \\(no call was running\\) with SIGKILL \\(killed\\), so ${what} did ` +
          `not run; a new process starts at the next call$`,
      ),
    );
  const ok = lib.handler("fault_ok"), slow = lib.handler("fault_slow");
  for (const sync of [true, false]) {
    rt.callSync(ok, frame);
    const pid = lib.pid!;
    killAndWait(pid);
    y.fill(0);
    if (sync) assert.throws(() => rt.callSync(slow, frame), idle("handler 'fault_slow'"));
    else await assert.rejects(rt.call(slow, frame), idle("handler 'fault_slow'"));
    assert.equal(lib.pid, undefined);
    rt.callSync(ok, frame);
    assert.deepEqual([...y], [2, 4]);
    assert.notEqual(lib.pid, pid);
  }
  // Looking a handler up asks the process too.
  killAndWait(lib.pid!);
  assert.throws(() => lib.handler("fault_abort"), idle("the lookup of 'fault_abort'"));
  rt.callSync(ok, frame);
});

/** Kills process `pid` (a child of this one) from outside and waits until it has ended (a zombie). */
function killAndWait(pid: number): void {
  Deno.kill(pid, "SIGKILL");
  const t0 = performance.now();
  for (;;) {
    const stat = new TextDecoder().decode(
      new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stdout: "piped", stderr: "null" })
        .outputSync().stdout,
    );
    // The state follows the command name in parentheses: Z once it has ended.
    if (/\) Z /.test(stat) || stat === "") return;
    assert.ok(performance.now() - t0 < 10_000, `process ${pid} did not end: ${stat}`);
  }
}

Deno.test("isolated calls carry attributes, context and errors across", async () => {
  using lib = HandlerLibrary.open(testHandlersPath(), { isolate: true });
  using local = HandlerLibrary.open(testHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
  using scale = new CallFrameBuilder().arg(x).ret(y).attr("factor", scalar(DataType.F32, 1.5))
    .build();
  rt.callSync(lib.handler("test_scale"), scale);
  assert.deepEqual([...y], [1.5, 3, 4.5]);
  // Every attribute kind, nested, as the handler sees it in-process.
  const text = (h: HandlerLibrary) => {
    const out = new Uint8Array(512);
    using f = new CallFrameBuilder().ret(out)
      .attr("i", 7).attr("f", 2.5).attr("s", "str").attr("a", new Int32Array([1, 2]))
      .attr("d", { inner: scalar(DataType.F32, 1), b: true }).build();
    rt.callSync(h.handler("test_attrs"), f);
    return new TextDecoder().decode(out.subarray(0, out.indexOf(0)));
  };
  assert.equal(text(lib), text(local));
  // The handler's own error, code and message.
  using err = new CallFrameBuilder().attr("code", 5).attr("message", "no such thing").build();
  assert.throws(
    () => rt.callSync(lib.handler("test_return_error"), err),
    isFault(ErrorCode.NOT_FOUND, /^no such thing$/),
  );
  // Context: the run id.
  const id = new BigInt64Array(1);
  using run = new CallFrameBuilder().ret(id).build();
  rt.callSync(lib.handler("test_run_id"), run, { runId: 42 });
  assert.equal(id[0], 42n);
  // An asynchronous handler: call waits for its future in the child; callSync refuses.
  const a = new Float32Array([1, 2]), b = new Float32Array(2);
  using asyncFrame = new CallFrameBuilder().arg(a).ret(b).attr("delay_ms", 5).build();
  await rt.call(lib.handler("test_async"), asyncFrame);
  assert.deepEqual([...b], [2, 3]); // y = x + 1
  assert.throws(
    () => rt.callSync(lib.handler("test_async"), asyncFrame),
    isFault(ErrorCode.FAILED_PRECONDITION, /pending XLA_FFI_Future/),
  );
});

Deno.test("guarded frames of isolated handlers fault where the write happens", () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  // 16 bytes end at the inaccessible page: the write past the end faults at once.
  const y = new Float32Array(4);
  using page = new CallFrameBuilder({ guard: true }).ret(y).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_past_end"), page),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 \(the result has 16 bytes; found by the inaccessible page after it, in the isolated process\)$/,
    ),
  );
  // 12 bytes leave 4 bytes of alignment slack before the page: a canary there.
  const y3 = new Float32Array(3);
  using slack = new CallFrameBuilder({ guard: true }).ret(y3).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_past_end"), slack),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 12 \(the result has 12 bytes; found by a canary after the call\)$/,
    ),
  );
  assert.deepEqual([...y3], [7, 7, 7]);
  // Arguments are read-only pages in the child.
  const a = new Float32Array([4, 5, 6]);
  using arg = new CallFrameBuilder({ guard: true }).arg(new Float32Array(3)).arg(a)
    .ret(new Float32Array(3)).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_arg_write"), arg),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_arg_write' wrote into argument 1 at byte offset 4 \(arguments are read-only; found by its read-only page, in the isolated process\)$/,
    ),
  );
  assert.deepEqual([...a], [4, 5, 6]); // the caller's argument is untouched
  // A guarded frame of a handler that behaves.
  const x = new Float32Array([1, 2, 3]), out = new Float32Array(3);
  using ok = new CallFrameBuilder({ guard: true }).arg(x).ret(out).build();
  rt.callSync(lib.handler("fault_ok"), ok);
  assert.deepEqual([...out], [2, 4, 6]);
});

Deno.test("guarded isolated calls in a row keep their guard; other frames' calls have none", () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  const ok = lib.handler("fault_ok");
  const x = new Float32Array(4), y = new Float32Array(4);
  using guarded = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
  // Operands of 16 KiB: they lie where the guarded frame's protected pages were.
  const bx = new Float32Array(4096).fill(1), by = new Float32Array(4096);
  using plain = new CallFrameBuilder().arg(bx).ret(by).build();
  for (let round = 0; round < 2; round++) {
    for (let i = 1; i <= 3; i++) {
      x.fill(i);
      rt.callSync(ok, guarded);
      assert.deepEqual([...y], [2 * i, 2 * i, 2 * i, 2 * i]);
    }
    by.fill(0);
    rt.callSync(ok, plain);
    assert.ok(by.every((v) => v === 2));
    rt.callSync(ok, guarded);
    // A frame whose description alone spans those pages (the child patches it in place).
    const wide = new CallFrameBuilder().arg(x).ret(y);
    for (let i = 0; i < 1000; i++) wide.attr(`k${i}`, i);
    using described = wide.build();
    x.fill(5);
    rt.callSync(ok, described);
    assert.deepEqual([...y], [10, 10, 10, 10]);
    rt.callSync(ok, guarded);
    rt.callSync(ok, guarded);
    // The third guarded call in a row still faults at the page after the result.
    assert.throws(
      () => rt.callSync(lib.handler("fault_past_end"), guarded),
      isFault(
        ErrorCode.DATA_LOSS,
        /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 \(the result has 16 bytes; found by the inaccessible page after it, in the isolated process\)$/,
      ),
    );
    assert.equal(lib.pid, undefined); // the next round starts a new process
  }
});

Deno.test("isolated libraries report misuse with clear errors", async () => {
  using rt = new Runtime({ threads: 0 });
  using missing = HandlerLibrary.open("/nonexistent/libnothing.so", { isolate: true });
  assert.throws(
    () => missing.handler("x"),
    isFault(
      ErrorCode.UNAVAILABLE,
      /^Cannot load the handler library \/nonexistent\/libnothing\.so: /,
    ),
  );
  assert.throws(
    () => HandlerLibrary.open(faultHandlersPath(), { isolate: { timeoutMs: -1 } }),
    isFault(ErrorCode.INVALID_ARGUMENT, /^isolate\.timeoutMs must be a positive integer/),
  );
  const lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  try {
    assert.throws(
      () => lib.handler("no_such_handler"),
      isFault(ErrorCode.NOT_FOUND, /^Symbol 'no_such_handler' not found in handler library /),
    );
    assert.throws(
      () => lib.typeId("x"),
      isFault(ErrorCode.FAILED_PRECONDITION, /not available for the isolated handler library/),
    );
    using frame = new CallFrameBuilder().arg(new Float32Array(1)).ret(new Float32Array(1)).build();
    assert.throws(
      () =>
        rt.callSync(lib.handler("fault_ok"), frame, {
          userData: [[1, Deno.UnsafePointer.of(new Uint8Array(8))]],
        }),
      isFault(ErrorCode.UNIMPLEMENTED, /an isolated handler cannot use them/),
    );
    // One call at a time: a synchronous call during an asynchronous one is refused, not a deadlock.
    const pending = rt.call(lib.handler("fault_slow"), frame);
    assert.throws(
      () => rt.callSync(lib.handler("fault_ok"), frame),
      isFault(ErrorCode.FAILED_PRECONDITION, /is serving another call; await it first/),
    );
    await pending;
  } finally {
    lib.close();
  }
  assert.throws(
    () => lib.handler("fault_ok"),
    isFault(ErrorCode.FAILED_PRECONDITION, /is closed$/),
  );
});

const skip = ffiHFaultsSkip();
Deno.test({
  name: "ffi.h handlers crash and overflow in their own process" + (skip ? ` (${skip})` : ""),
  ignore: skip !== undefined,
  fn: () => {
    using lib = HandlerLibrary.open(ffiHFaultHandlersPath(), { isolate: true });
    using rt = new Runtime({ threads: 0 });
    const x = new Float32Array([1, 2]), y = new Float32Array(2);
    using frame = new CallFrameBuilder().arg(x).ret(y).build();
    assert.throws(
      () => rt.callSync(lib.handler("ffih_fault_segv"), frame),
      isFault(
        ErrorCode.INTERNAL,
        /^Handler 'ffih_fault_segv' of the isolated library .* ended its process with SIGSEGV/,
      ),
    );
    rt.callSync(lib.handler("ffih_fault_ok"), frame);
    assert.deepEqual([...y], [2, 4]);
    // ffi.h decodes our frame in the child, with its own messages.
    using wrong = new CallFrameBuilder().ret(y).build();
    assert.throws(
      () => rt.callSync(lib.handler("ffih_fault_ok"), wrong),
      isFault(ErrorCode.INVALID_ARGUMENT, /Wrong number of arguments/),
    );
    const y4 = new Float32Array(4);
    using guarded = new CallFrameBuilder({ guard: true }).arg(x).ret(y4).build();
    assert.throws(
      () => rt.callSync(lib.handler("ffih_fault_past_end"), guarded),
      isFault(
        ErrorCode.DATA_LOSS,
        /^Handler 'ffih_fault_past_end' wrote past the end of result 0 at byte offset 16 .*inaccessible page/,
      ),
    );
  },
});

Deno.test('sanitize: "address" runs the child with ASan: its report heads the error', () => {
  const path = faultHandlersPath(["-fsanitize=address", "-fno-omit-frame-pointer"]);
  using lib = HandlerLibrary.open(path, { isolate: { sanitize: "address" } });
  using rt = new Runtime({ threads: 0 });
  const x = new Float32Array([1, 2]), y = new Float32Array(2);
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  rt.callSync(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4]);
  assert.throws(
    () => rt.callSync(lib.handler("fault_heap_overflow"), frame),
    isFault(
      ErrorCode.INTERNAL,
      /^Handler 'fault_heap_overflow' of the isolated library .* ended its process with SIGABRT \(aborted\); a new process starts at the next call\n.*ERROR: AddressSanitizer: heap-buffer-overflow/,
    ),
  );
  // A fatal signal: ASan reports it and then aborts; the error names the signal it reported.
  assert.throws(
    () => rt.callSync(lib.handler("fault_segv"), frame),
    isFault(
      ErrorCode.INTERNAL,
      /^Handler 'fault_segv' of the isolated library .* ended its process with SIGSEGV \(segmentation fault; reported by AddressSanitizer, which then ended the process with SIGABRT\); a new process starts at the next call\n==\d+==ERROR: AddressSanitizer: SEGV on unknown address .*\n.*WRITE memory access/,
    ),
  );
  rt.callSync(lib.handler("fault_ok"), frame);
});

Deno.test("under deno test, an isolated crash fails its own test and the others run", async () => {
  faultHandlersPath(); // built here, not in the child
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--no-check", ...CHILD_PERMISSIONS, "tests/_isolated_crash_suite.ts"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, text); // a failed test, not a signal (139)
  assert.match(text, /a handler that segfaults \.\.\. FAILED/);
  assert.match(text, /the next test \.\.\. ok/);
  assert.match(
    text,
    /FfiError: Handler 'fault_segv' of the isolated library .* ended its process with SIGSEGV \(segmentation fault\)/,
  );
  assert.match(text, /FAILED \| 2 passed \| 1 failed/);
});

Deno.test("isolated calls see a frame's operands as they are at each call", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  const ok = lib.handler("fault_ok");
  const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
  using frame = new CallFrameBuilder().arg(x).ret(y).build();
  rt.callSync(ok, frame);
  assert.deepEqual([...y], [2, 4, 6]);
  // The same arrays, new contents.
  x.set([4, 5, 6]);
  rt.callSync(ok, frame);
  assert.deepEqual([...y], [8, 10, 12]);
  // New arrays: the call reads and writes those, not the old ones.
  const x2 = new Float32Array([7, 8, 9]), y2 = new Float32Array(3);
  frame.setArg(0, x2);
  frame.setRet(0, y2);
  y.fill(0);
  await rt.call(ok, frame);
  assert.deepEqual([...y2], [14, 16, 18]);
  assert.deepEqual([...y], [0, 0, 0]);
  // An argument that is the result's memory: one place, read then written.
  frame.setArg(0, y2);
  rt.callSync(ok, frame);
  assert.deepEqual([...y2], [28, 32, 36]);
  // A view into a larger buffer, then back to the first arrays.
  const big = new Float32Array([0, 1, 2, 3, 0]);
  frame.setArg(0, big.subarray(1, 4));
  frame.setRet(0, y);
  rt.callSync(ok, frame);
  assert.deepEqual([...y], [2, 4, 6]);
  frame.setArg(0, x);
  rt.callSync(ok, frame);
  assert.deepEqual([...y], [8, 10, 12]);
});

Deno.test("crash and restart cycles leak no descriptors; queued async calls all run", async () => {
  // This process's descriptors, counted by itself (native code: Deno reads /proc only with
  // -A). A process listing them from outside would race with its own start: until the
  // spawning thread closes this process's copies of the child's standard streams, the
  // lister sees three more.
  const fds = openDescriptors;
  using rt = new Runtime({ threads: 0 });
  const y = new Float32Array(2);
  using frame = new CallFrameBuilder().arg(new Float32Array([1, 2])).ret(y).build();
  const cycle = async () => {
    using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
    for (let k = 0; k < 5; k++) {
      assert.throws(
        () => rt.callSync(lib.handler("fault_abort"), frame),
        died("fault_abort", "SIGABRT"),
      );
    }
    // Five calls at once: they queue, one at a time, and all complete.
    await Promise.all([0, 1, 2, 3, 4].map(() => rt.call(lib.handler("fault_ok"), frame)));
    assert.deepEqual([...y], [2, 4]);
  };
  await cycle(); // Deno opens some descriptors of its own on first use
  const before = fds();
  for (let i = 0; i < 3; i++) await cycle();
  // Each process holds a socket, a pipe and shared memory: 15 processes would show.
  const after = fds();
  const added = after.list.filter((l) => !before.list.includes(l));
  assert.ok(
    after.count <= before.count,
    `descriptors: ${before.count} before, ${after.count} after; new: ${added.join(", ")}`,
  );
});

Deno.test("an isolated handler registered by name is called in its process by that name", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  const ok = `isolated.ok.${crypto.randomUUID()}`, segv = `isolated.segv.${crypto.randomUUID()}`;
  // Its metadata is queried in its process, as this runtime would query it.
  using local = HandlerLibrary.open(faultHandlersPath());
  assert.deepEqual(rt.metadata(lib.handler("fault_ok")), rt.metadata(local.handler("fault_ok")));
  rt.register(ok, lib.handler("fault_ok"));
  rt.register(segv, { execute: lib.handler("fault_segv") });
  assert.ok(rt.registeredNames().includes(ok));
  const y = new Float32Array(2);
  using frame = new CallFrameBuilder().arg(new Float32Array([3, 4])).ret(y).build();
  rt.callSync(ok, frame);
  assert.deepEqual([...y], [6, 8]);
  assert.throws(() => rt.callSync(segv, frame), died("fault_segv", "SIGSEGV"));
  await assert.rejects(rt.call(segv, frame), died("fault_segv", "SIGSEGV"));
  y.fill(0);
  await rt.call(ok, frame);
  assert.deepEqual([...y], [6, 8]);
  assert.deepEqual(await rt.callOnThreads(ok, frame, { threads: 2 }), { ok: 2, failed: 0 });
  // Another API version has its own registry: the name is not there.
  using rt2 = new Runtime({ threads: 0, apiVersion: "0.2" });
  assert.throws(
    () => rt2.callSync(ok, frame),
    isFault(ErrorCode.NOT_FOUND, /No FFI handler registered/),
  );
});

Deno.test("ffiCall of an isolated handler: results come back; a crash and a guard fault are errors", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  const [y] = await rt.ffiCall(lib.handler("fault_ok"), {
    args: [new Float32Array([1, 2, 3])],
    results: [{ dtype: DataType.F32, shape: [3] }],
  });
  assert.deepEqual([...(y as Float32Array)], [2, 4, 6]);
  await assert.rejects(
    rt.ffiCall(lib.handler("fault_segv"), {
      args: [new Float32Array(3)],
      results: [{ dtype: DataType.F32, shape: [3] }],
    }),
    died("fault_segv", "SIGSEGV"),
  );
  await assert.rejects(
    rt.ffiCall(lib.handler("fault_past_end"), {
      results: [{ dtype: DataType.F32, shape: [4] }],
      guard: true,
    }),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 \(.*in the isolated process\)$/,
    ),
  );
});
