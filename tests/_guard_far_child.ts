/**
 * Child script of tests/guard_test.ts: a guarded frame's handler writes far
 * past a result's end, in this process. The guard must report it and leave
 * the process's own memory intact: the script then allocates and frees
 * memory in bulk and exits normally, printing the error's message.
 *
 * @module
 */
import { CallFrameBuilder, FfiError, HandlerLibrary, Runtime } from "../mod.ts";
import { faultHandlersPath } from "./_fault_handlers.ts";

using lib = HandlerLibrary.open(faultHandlersPath());
using rt = new Runtime({ threads: 0 });
const messages: string[] = [];
for (let round = 0; round < 3; round++) {
  const y = new Float32Array(4);
  using frame = new CallFrameBuilder({ guard: true }).ret(y).build();
  try {
    rt.callSync(lib.handler("fault_far_past_end"), frame);
    messages.push("no error");
  } catch (e) {
    messages.push(e instanceof FfiError ? `${e.codeName}: ${e.message}` : String(e));
  }
  // Churn the allocator: corrupted heap metadata shows up here or at exit.
  const keep: Uint8Array[] = [];
  for (let i = 0; i < 2000; i++) keep.push(new Uint8Array(16 + (i % 300)));
  keep.length = 0;
}
console.log(JSON.stringify(messages));
