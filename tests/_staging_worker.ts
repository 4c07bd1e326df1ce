/**
 * A Worker that hosts a TS handler once the main thread has none open, and
 * posts what the handler's staged result gave its caller (or the error),
 * after closing everything it opened (the main thread hosts again after it).
 *
 * @module
 */
import { CallFrameBuilder, DataType, Ffi, Runtime } from "../mod.ts";

const post = (message: string) =>
  (self as unknown as { postMessage(message: string): void }).postMessage(message);

function run(): string {
  using rt = new Runtime({ threads: 0 });
  using h = Ffi.bind().ret(DataType.S32, 1).to((y) => {
    y.typed()[0] = 7;
  });
  const out = new Int32Array(2);
  using f = new CallFrameBuilder().ret(out, [2]).build();
  rt.callSync(h, f);
  return JSON.stringify([...out]);
}

let message: string;
try {
  message = run();
} catch (e) {
  message = String(e);
}
post(message);
