/**
 * Forgotten objects: call frames, TS handlers, runtimes, handler libraries
 * and XLA programs that are never closed are reclaimed when collected (in a
 * child run with --expose-gc), closed ones are never freed twice, a registered
 * handler keeps serving its name, and the leak-check helpers
 * (src/testing/leaks.ts) fail a test that leaves objects open, naming each
 * and where it was made.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { CallFrameBuilder, Ffi, Runtime } from "../mod.ts";
import {
  assertNoOpenResources,
  LeakError,
  trackResources,
  withLeakCheck,
} from "../src/testing/leaks.ts";
import { childContext } from "./_child.ts";
import { XLA_SKIP, xlaName } from "./_xla_env.ts";

/** Runs a child with -A and --expose-gc; returns its last stdout line as JSON. */
async function gcChild(script: string, args: string[] = []): Promise<Record<string, unknown>> {
  // -A: the children read /proc/self/maps (Deno asks for all access there).
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      fileURLToPath(new URL(script, import.meta.url)),
      ...args,
    ],
    stdin: "null",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder();
  const r = { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  const context = childContext(script, r);
  assert.equal(r.code, 0, context);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

Deno.test("reclaim: unclosed frames, handlers, runtimes and libraries are freed when collected", async () => {
  const got = await gcChild("./_reclaim_child.ts", ["2000"]);
  assert.deepEqual(got, {
    framesCreated: 4000,
    framesDestroyed: 4000, // 2000 forgotten + 2000 closed, each freed once
    runtimesCreated: 8,
    runtimesDestroyed: 8,
    liveHandlers: 1, // the one registered by name stays, as its registration does
    forgottenCalls: 1,
    keptMapped: true,
    unmapped: true,
  });
});

Deno.test({
  name: xlaName(
    "reclaim: XLA programs and hosts never closed are released in Python when collected",
  ),
  ignore: XLA_SKIP !== undefined,
  fn: async () => {
    assert.deepEqual(await gcChild("./_reclaim_xla_child.ts"), {
      before: 5,
      after: 0,
      hostsAdded: 1,
      hostsLeft: 0,
    });
  },
});

Deno.test("leak check: a test leaving objects open fails, naming each and where it was made", async () => {
  let frame: { close(): void } | undefined;
  let handler: { close(): void } | undefined;
  const leaky = withLeakCheck(() => {
    frame = new CallFrameBuilder().build(); // line A
    handler = Ffi.bind().to(() => {}); // line B
    using rt = new Runtime({ threads: 0 }); // closed: not reported
    rt.callSync(handler as never, frame as never);
  });
  let error: unknown;
  try {
    await leaky(undefined as never);
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof LeakError, String(error));
  assert.deepEqual(error.resources.map((r) => r.kind), ["CallFrame", "Handler"]);
  for (const r of error.resources) assert.match(r.where, /leaks_test\.ts:\d+:\d+/);
  assert.match(error.message, /^2 objects of @deno-xla\/ffi left open/);
  assert.match(error.message, /CallFrame made at .*leaks_test\.ts:\d+/);
  assert.match(error.message, /Handler made at .*leaks_test\.ts:\d+/);
  frame!.close();
  handler!.close();
  // A body that closes what it opens passes.
  await withLeakCheck(() => {
    using _f = new CallFrameBuilder().build();
    using _h = Ffi.bind().to(() => {});
  })(undefined as never);
});

Deno.test("leak check: trackers see what was made while they ran; nothing is recorded otherwise", () => {
  const before = new CallFrameBuilder().build(); // no tracker: not recorded
  {
    using tracker = trackResources();
    const inside = new Runtime({ threads: 0 });
    assert.deepEqual(tracker.open().map((r) => r.kind), ["Runtime"]);
    assert.throws(() => assertNoOpenResources(), LeakError);
    assert.equal(tracker.open().length, 0); // reported once
    inside.close();
    tracker.assertNoneOpen();
  }
  using tracker = trackResources();
  before.close();
  tracker.assertNoneOpen();
  assertNoOpenResources();
});
