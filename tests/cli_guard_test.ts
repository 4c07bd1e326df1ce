/**
 * `cli run --guard`: a handler's write past a result's end or into an
 * argument is reported with the operand and the byte offset (exit code 1).
 */
import assert from "node:assert/strict";
import { ExitCode, parseCommandLine } from "../src/cli/args.ts";
import { embeddedRuntime } from "../src/cli/embedded.ts";
import { captureCli } from "./_cli_capture.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

function cli(argv: string[]) {
  return captureCli(argv, { runtime: embeddedRuntime({ probe: { timeoutMs: 10000 } }) });
}

Deno.test("cli run --guard reports a write one element past the result", async () => {
  // (Without --guard the write lands past a native allocation of the command
  // line's process: heap corruption, which AddressSanitizer reports in the sanitized run.)
  const r = await cli(["run", faultHandlersPath(), "fault_past_end", "--ret", "f32[4]", "--guard"]);
  assert.equal(r.code, ExitCode.HANDLER_ERROR, r.out + r.err);
  assert.equal(
    r.err,
    "error: handler 'fault_past_end' failed (DATA_LOSS): Handler 'fault_past_end' wrote past " +
      "the end of result 0 at byte offset 16 (the result has 16 bytes; found by a canary after " +
      "the call)\n",
  );
});

Deno.test("cli run --guard reports a write into an argument", async () => {
  const r = await cli([
    "run",
    faultHandlersPath(),
    "fault_arg_write",
    "--arg",
    "f32[2]=1",
    "--arg",
    "f32[2]=1",
    "--ret",
    "f32[2]",
    "--guard",
    "--json",
  ]);
  assert.equal(r.code, ExitCode.HANDLER_ERROR, r.out + r.err);
  const json = JSON.parse(r.out);
  assert.deepEqual(json.error, {
    code: "DATA_LOSS",
    message: "Handler 'fault_arg_write' wrote into argument 1 at byte offset 6 (arguments are " +
      "read-only; found by a copy compared after the call)",
  });
});

Deno.test("--guard is a flag, given once", () => {
  const run = parseCommandLine(["run", "./l.so", "h", "--guard"]);
  assert.equal(run.command === "run" && run.guard, true);
  assert.throws(
    () => parseCommandLine(["run", "./l.so", "h", "--guard=1"]),
    /--guard takes no value/,
  );
  assert.throws(
    () => parseCommandLine(["run", "./l.so", "h", "--guard", "--guard"]),
    /--guard is given more than once/,
  );
});
