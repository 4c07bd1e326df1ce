/**
 * Runs every example as a subprocess with the permissions its header names,
 * and checks what it prints, so the examples cannot rot.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const PERMISSIONS = ["--allow-ffi", "--allow-read", "--allow-write", "--allow-run", "--allow-env"];

async function runExample(name: string): Promise<string> {
  const url = new URL(`../examples/${name}`, import.meta.url);
  const header = Deno.readTextFileSync(url);
  const run = header.match(/^ \* Run: (deno run [^\n]*)$/m)?.[1];
  assert.ok(run, `examples/${name} names its command line in a 'Run:' header line`);
  const flags = run.split(" ").filter((a) => a.startsWith("--allow-"));
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, fileURLToPath(url)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(r.stdout);
  assert.equal(r.code, 0, `examples/${name}:\n${out}\n${new TextDecoder().decode(r.stderr)}`);
  for (const f of flags) assert.ok(PERMISSIONS.includes(f), f);
  return out;
}

Deno.test("examples/build_native.ts builds the C library", async () => {
  assert.match(await runExample("build_native.ts"), /^built .*libdemo_handlers\.so\n\d+ bytes/);
});

Deno.test("examples/saxpy.ts: a TS handler registered in the runtime, called three ways", async () => {
  const out = await runExample("saxpy.ts");
  assert.match(out, /example\.saxpy: API 0\.4, traits 0/);
  assert.match(out, /y = 2 \* x \+ y = \[ 12, 24, 36, 48 \]/);
  assert.match(out, /again with Runtime.call: \[ 14, 28, 42, 56 \]/);
  assert.match(
    out,
    /4 runtime threads x 250 calls: 1000 ok, 0 failed; y = \[ 2014, 4028, 6042, 8056 \]/,
  );
  assert.match(
    out,
    /expected error \(an S32 argument where the binding wants F32\): FfiError \[INVALID_ARGUMENT\]: \[execute\] Failed to decode all FFI handler operands/,
  );
  assert.match(out, /Wrong buffer dtype: expected F32 but got S32/);
});

Deno.test("examples/c_handlers.ts: metadata, results, a handler error", async () => {
  const out = await runExample("c_handlers.ts");
  assert.match(out, /demo_saxpy: API 0\.1, traits 1/);
  assert.match(out, /2 \* x \+ y = \[ 12, 24, 36, 48, 60, 72 \]/);
  assert.match(out, /2 \* x' \+ y = \[ 10, 20, 30, 40, 50, 62 \]/);
  assert.match(
    out,
    /expected error \(a frame without the second argument\): FfiError \[INVALID_ARGUMENT\]: saxpy: 2 args, 1 result/,
  );
});

Deno.test("examples/async_handler.ts: concurrent calls completing through futures", async () => {
  const out = await runExample("async_handler.ts");
  assert.match(out, /sum\(1\.\.1000\) = 500500\nsum\(1\.\.4000\) = 8002000/);
});

Deno.test("examples/stateful_handler.ts: separate state per instance", async () => {
  const out = await runExample("stateful_handler.ts");
  assert.match(out, /call 3: instance a = 103, instance b = 3/);
  assert.match(
    out,
    /expected error \(called without an instance\): FfiError \[FAILED_PRECONDITION\]/,
  );
});

Deno.test("examples/attributes.ts: every kind arrives, sorted", async () => {
  const out = await runExample("attributes.ts");
  assert.equal(
    out,
    [
      "alpha: f32 2.5",
      "axes: s64[] [0, 2]",
      "big: s64 4611686018427387904",
      "bytes: u8[] [1, 2, 255]",
      "config: dictionary",
      '  name: string "inner"',
      "  nested: dictionary",
      "    depth: s64 2",
      "  scale: f32 2",
      "count: s64 3",
      "flag: pred true",
      "mask: u32 4294901760",
      'mode: string "reflect"',
      "ratio: f64 0.25",
      "small: s8 -7",
      "weights: f32[] [0.5, 1.5]",
      "",
    ].join("\n"),
  );
});

Deno.test("examples/cli_demo.ts: inspect and run through the command line", async () => {
  const out = await runExample("cli_demo.ts");
  assert.match(out, /demo_counter_instantiate\s+0\.1\s+-\n/);
  assert.match(out, /\[\[12\.5, 15\.0, 17\.5\],\n \[20\.0, 22\.5, 25\.0\]\]\n\(exit code 0\)/);
  assert.match(out, /timing: 100 calls: median /);
  assert.match(out, /written to <tmp>\/y\.npy/);
  assert.match(out, /"values":\[42\]/);
  assert.match(
    out,
    /# expected to fail: demo_saxpy needs two arguments\n\$ cli run libdemo_handlers\.so demo_saxpy .*\nerror: handler 'demo_saxpy' failed \(INVALID_ARGUMENT\): saxpy: 2 args, 1 result\n\(exit code 1, as expected\)/,
  );
  assert.match(out, /\[\[ 2\.5, {2}5\.0\],\n \[ 7\.5, 10\.0\]\]\n\(exit code 0\)/);
  assert.match(out, /result 0: s64\[\]\n44\ntiming: 3 calls: /);
});

Deno.test("examples/demo.ts (deno task demo): every error it prints is announced as expected", async () => {
  const out = await runExample("demo.ts");
  const lines = out.split("\n");
  for (const [i, line] of lines.entries()) {
    if (!/^error:|\berror\b.*FfiError/.test(line) || /^expected error \(/.test(line)) continue;
    // The command line's own "error:" lines follow a "# expected to fail" note.
    const note = lines.slice(Math.max(0, i - 3), i).some((l) => l.startsWith("# expected to fail"));
    assert.ok(note, `unannounced error line ${i + 1}: ${line}`);
  }
  assert.doesNotMatch(out, /Could not open library: Could not open library/);
});
