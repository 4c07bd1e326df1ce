/**
 * Guarded frames in the caller's process: canaries after results and copies
 * of arguments catch handlers (C, and C++ with jaxlib's ffi.h) that write
 * past a result's end or into an argument; writes before an operand's start and
 * far past its end; aliased arguments and results, in-process and isolated.
 */
import assert from "node:assert/strict";
import { CallFrameBuilder, DataType, ErrorCode, HandlerLibrary, Runtime } from "../mod.ts";
import {
  faultHandlersPath,
  ffiHFaultHandlersPath,
  ffiHFaultsSkip,
  isFault,
} from "./_fault_handlers.ts";
import { childContext, runDeno } from "./_child.ts";

Deno.test("a guarded frame reports a write one element past a result's end", () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 0 });
  // Unguarded, the write lands in whatever follows the result: here our own array.
  const backing = new Float32Array(5);
  using plain = new CallFrameBuilder().ret(backing.subarray(0, 4)).build();
  rt.callSync(lib.handler("fault_past_end"), plain);
  assert.deepEqual([...backing], [7, 7, 7, 7, 7]);
  // Guarded, it is an error naming the handler, the operand and the byte offset.
  const y = new Float32Array(4);
  using frame = new CallFrameBuilder({ guard: true }).ret(y).build();
  assert.equal(frame.guarded, true);
  assert.throws(
    () => rt.callSync(lib.handler("fault_past_end"), frame),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 \(the result has 16 bytes; found by a canary after the call\)$/,
    ),
  );
  assert.deepEqual([...y], [7, 7, 7, 7]); // what it wrote within bounds still arrives
});

Deno.test("a guarded frame reports a write into an argument, with its byte offset", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2, 3]), a = new Float32Array([4, 5, 6]), y = new Float32Array(3);
  using frame = new CallFrameBuilder({ guard: true }).arg(x).arg(a).ret(y).build();
  // 5 -> 9 as F32 changes bytes 2 and 3 of element 1: the first changed byte is 6.
  const pattern =
    /^Handler 'fault_arg_write' wrote into argument 1 at byte offset 6 \(arguments are read-only; found by a copy compared after the call\)$/;
  assert.throws(
    () => rt.callSync(lib.handler("fault_arg_write"), frame),
    isFault(ErrorCode.DATA_LOSS, pattern),
  );
  a.set([4, 5, 6]);
  await assert.rejects(
    rt.call(lib.handler("fault_arg_write"), frame),
    isFault(ErrorCode.DATA_LOSS, pattern),
  );
  a.set([4, 5, 6]);
  await assert.rejects(
    rt.callOnThreads(lib.handler("fault_arg_write"), frame, { threads: 2 }),
    isFault(ErrorCode.DATA_LOSS, pattern),
  );
});

Deno.test("a guarded frame of a handler that behaves gives the same results as a plain one", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2, 3]), y = new Float32Array(3);
  using frame = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
  rt.callSync(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4, 6]);
  // New data for the next call: the guard copies it in and out.
  const x2 = new Float32Array([5, 6, 7]), y2 = new Float32Array(3);
  frame.updateBuffers([x2], [y2]);
  await rt.call(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y2], [10, 12, 14]);
  assert.deepEqual([...y], [2, 4, 6]);
  const r = await rt.callOnThreads(lib.handler("fault_ok"), frame, { threads: 2, iterations: 3 });
  assert.deepEqual(r, { ok: 6, failed: 0 });
  assert.throws(
    () => frame.setRet(0, new Float32Array(4)),
    isFault(
      ErrorCode.INVALID_ARGUMENT,
      /^result 0: a guarded frame's buffer keeps its size \(12 bytes\), got 16$/,
    ),
  );
});

const skip = ffiHFaultsSkip();
Deno.test({
  name: "a guarded frame catches an ffi.h handler's off-by-one write" + (skip ? ` (${skip})` : ""),
  ignore: skip !== undefined,
  fn: () => {
    using lib = HandlerLibrary.open(ffiHFaultHandlersPath());
    using rt = new Runtime({ threads: 0 });
    const x = new Float32Array([3, 1]), y = new Float32Array(2);
    using ok = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
    rt.callSync(lib.handler("ffih_fault_ok"), ok);
    assert.deepEqual([...y], [6, 2]);
    assert.throws(
      () => rt.callSync(lib.handler("ffih_fault_past_end"), ok),
      isFault(
        ErrorCode.DATA_LOSS,
        /^Handler 'ffih_fault_past_end' wrote past the end of result 0 at byte offset 8 /,
      ),
    );
  },
});

Deno.test("ffiCall({ guard: true }) reports a write past a result's end and a write into an argument", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 0 });
  await assert.rejects(
    rt.ffiCall(lib.handler("fault_past_end"), {
      results: [{ dtype: DataType.F32, shape: [4] }],
      guard: true,
    }),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 16 /,
    ),
  );
  const a = new Float32Array([4, 5, 6]);
  await assert.rejects(
    rt.ffiCall(lib.handler("fault_arg_write"), {
      args: [new Float32Array(3), a],
      results: [{ dtype: DataType.F32, shape: [3] }],
      guard: true,
    }),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_arg_write' wrote into argument 1 at byte offset 6 /,
    ),
  );
});

Deno.test("ffiCall({ guard: true }) is guarded after unguarded calls of its signature", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 0 });
  const options = () => ({
    args: [new Float32Array(3), new Float32Array([4, 5, 6])],
    results: [{ dtype: DataType.F32, shape: [3] }],
  });
  // Unguarded, the write lands in the caller's array; the frame of the signature is kept.
  for (let i = 0; i < 2; i++) await rt.ffiCall(lib.handler("fault_arg_write"), options());
  await assert.rejects(
    rt.ffiCall(lib.handler("fault_arg_write"), { ...options(), guard: true }),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_arg_write' wrote into argument 1 at byte offset 6 /,
    ),
  );
});

Deno.test("a guarded frame reports a write just before a result's first byte", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2, 3, 4]), y = new Float32Array(4);
  using frame = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
  const pattern =
    /^Handler 'fault_before_start' wrote before the start of result 0 at byte offset -4, 4 bytes before its first byte \(the result has 16 bytes; found by a canary before it\)$/;
  assert.throws(
    () => rt.callSync(lib.handler("fault_before_start"), frame),
    isFault(ErrorCode.DATA_LOSS, pattern),
  );
  assert.deepEqual([...y], [7, 7, 7, 7]); // what it wrote within bounds still arrives
  await assert.rejects(
    rt.call(lib.handler("fault_before_start"), frame),
    isFault(ErrorCode.DATA_LOSS, pattern),
  );
  // The canaries are whole again after a report: a handler that behaves passes.
  rt.callSync(lib.handler("fault_ok"), frame);
  assert.deepEqual([...y], [2, 4, 6, 8]);
});

Deno.test("a guarded frame names the argument a write before its first byte lands on", () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 0 });
  const x = new Float32Array([1, 2, 3]), a = new Float32Array([4, 5, 6]), y = new Float32Array(3);
  using frame = new CallFrameBuilder({ guard: true }).arg(x).arg(a).ret(y).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_before_arg"), frame),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_before_arg' wrote before the start of argument 1 at byte offset -4, 4 bytes before its first byte \(the argument has 12 bytes; found by a canary before it\)$/,
    ),
  );
  // The handler wrote into guard memory, not next to the caller's arrays.
  assert.deepEqual([...x], [1, 2, 3]);
  assert.deepEqual([...a], [4, 5, 6]);
  assert.deepEqual([...y], [1, 2, 3]);
});

Deno.test("a guarded frame reports a write far past a result's end and the process stays whole", async () => {
  const r = await runDeno(new URL("./_guard_far_child.ts", import.meta.url));
  assert.equal(r.code, 0, childContext("the child", r));
  const message =
    "DATA_LOSS: Handler 'fault_far_past_end' wrote past the end of result 0 at byte offset 1040 " +
    "(the result has 16 bytes; found by a canary after the call)";
  assert.deepEqual(JSON.parse(r.stdout), [message, message, message]);
});

Deno.test("a guarded frame keeps an aliased argument and result one buffer", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2, 3]);
  using frame = new CallFrameBuilder({ guard: true }).arg(x).ret(x).build();
  // The handler checks that both have one address, then updates in place.
  rt.callSync(lib.handler("fault_in_place"), frame);
  assert.deepEqual([...x], [2, 3, 4]);
  await rt.call(lib.handler("fault_in_place"), frame);
  assert.deepEqual([...x], [3, 4, 5]);
  // Writes out of bounds are still caught.
  assert.throws(
    () => rt.callSync(lib.handler("fault_past_end"), frame),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_past_end' wrote past the end of result 0 at byte offset 12 /,
    ),
  );
  // New data that is no longer shared ends the alias: the argument is read-only again.
  const a = new Float32Array([1, 1, 1]), b = new Float32Array(3);
  frame.updateBuffers([a], [b]);
  assert.throws(
    () => rt.callSync(lib.handler("fault_in_place"), frame),
    isFault(ErrorCode.INVALID_ARGUMENT, /different buffers/),
  );
  // And shared again.
  frame.setRet(0, a);
  rt.callSync(lib.handler("fault_in_place"), frame);
  assert.deepEqual([...a], [2, 2, 2]);
  // ffiCall's inputOutputAliases, guarded.
  const [out] = await rt.ffiCall(lib.handler("fault_in_place"), {
    args: [new Float32Array([5, 6])],
    results: [{ dtype: DataType.F32, shape: [2] }],
    inputOutputAliases: { 0: 0 },
    guard: true,
  });
  assert.deepEqual([...(out as Float32Array)], [6, 7]);
});

Deno.test("isolated guarded frames catch writes before an operand, far past it, and keep aliases", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath(), { isolate: true });
  using rt = new Runtime({ threads: 0 });
  // 16 bytes at the end of their page leave canaries before them.
  const y = new Float32Array(4);
  using small = new CallFrameBuilder({ guard: true }).ret(y).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_before_start"), small),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_before_start' wrote before the start of result 0 at byte offset -4, 4 bytes before its first byte \(the result has 16 bytes; found by a canary before it\)$/,
    ),
  );
  assert.deepEqual([...y], [7, 7, 7, 7]);
  // A result of whole pages (64 KiB: 4 KiB and 64 KiB pages alike) starts right after an
  // inaccessible page.
  using whole = new CallFrameBuilder({ guard: true }).ret(new Float32Array(16384)).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_before_start"), whole),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_before_start' wrote before the start of result 0 at byte offset -4, 4 bytes before its first byte \(the result has 65536 bytes; found by the inaccessible page before it, in the isolated process\)$/,
    ),
  );
  // Before argument 1: its own inaccessible page, not argument 0's.
  const a = new Float32Array([4, 5, 6]);
  using arg = new CallFrameBuilder({ guard: true }).arg(new Float32Array(3)).arg(a)
    .ret(new Float32Array(3)).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_before_arg"), arg),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_before_arg' wrote before the start of argument 1 at byte offset -4, 4 bytes before its first byte \(the argument has 12 bytes; found by the inaccessible page before it, in the isolated process\)$/,
    ),
  );
  assert.deepEqual([...a], [4, 5, 6]);
  // 1 KiB past the end: the inaccessible page after the result.
  using far = new CallFrameBuilder({ guard: true }).ret(new Float32Array(4)).build();
  assert.throws(
    () => rt.callSync(lib.handler("fault_far_past_end"), far),
    isFault(
      ErrorCode.DATA_LOSS,
      /^Handler 'fault_far_past_end' wrote past the end of result 0 at byte offset 1040 \(the result has 16 bytes; found by the inaccessible page after it, in the isolated process\)$/,
    ),
  );
  // An aliased argument and result share one guarded buffer in the child too.
  const x = new Float32Array([1, 2, 3]);
  using alias = new CallFrameBuilder({ guard: true }).arg(x).ret(x).build();
  rt.callSync(lib.handler("fault_in_place"), alias);
  assert.deepEqual([...x], [2, 3, 4]);
  await rt.call(lib.handler("fault_in_place"), alias);
  assert.deepEqual([...x], [3, 4, 5]);
  assert.throws(
    () => rt.callSync(lib.handler("fault_far_past_end"), alias),
    isFault(ErrorCode.DATA_LOSS, /wrote past the end of result 0 at byte offset 1036 /),
  );
  const [out] = await rt.ffiCall(lib.handler("fault_in_place"), {
    args: [new Float32Array([5, 6])],
    results: [{ dtype: DataType.F32, shape: [2] }],
    inputOutputAliases: { 0: 0 },
    guard: true,
  });
  assert.deepEqual([...(out as Float32Array)], [6, 7]);
  // Unguarded, an alias is one place in the shared memory too.
  using plain = new CallFrameBuilder().arg(x).ret(x).build();
  rt.callSync(lib.handler("fault_in_place"), plain);
  assert.deepEqual([...x], [4, 5, 6]);
});

Deno.test("a closed guarded frame's calls fail cleanly: its guard memory is gone", async () => {
  using lib = HandlerLibrary.open(faultHandlersPath());
  using rt = new Runtime({ threads: 1 });
  const x = new Float32Array([1, 2]), y = new Float32Array(2);
  const frame = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
  rt.callSync(lib.handler("fault_ok"), frame);
  frame.close();
  const closed = isFault(ErrorCode.FAILED_PRECONDITION, /closed/);
  assert.throws(() => rt.callSync(lib.handler("fault_ok"), frame), closed);
  await assert.rejects(rt.call(lib.handler("fault_ok"), frame), closed);
  // Many frames, each with guard memory of its own, opened and closed.
  for (let i = 0; i < 2000; i++) {
    using f = new CallFrameBuilder({ guard: true }).arg(x).ret(y).build();
    rt.callSync(lib.handler("fault_ok"), f);
  }
  assert.deepEqual([...y], [2, 4]);
});
