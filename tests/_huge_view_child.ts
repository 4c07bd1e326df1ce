/**
 * Asks `FfiBuffer.typed()` for views larger than a V8 ArrayBuffer holds, in a
 * process of its own (a missed check aborts the process, not one test).
 * Prints one `code message` line per buffer, then `done`.
 *
 * @module
 */
import { DataType, ErrorCode, FfiBuffer, FfiError } from "../mod.ts";

const cases: [DataType, number[]][] = [
  [DataType.F32, [2 ** 52]],
  [DataType.F32, [2 ** 51]], // 2^53 bytes: one past the largest ArrayBuffer
  [DataType.C128, [2 ** 20, 2 ** 20, 2 ** 20]],
];
for (const [dtype, dims] of cases) {
  try {
    new FfiBuffer(dtype, 4096, dims).typed();
    console.log("no error");
  } catch (e) {
    console.log(e instanceof FfiError ? `${ErrorCode[e.code]} ${e.message}` : `other ${e}`);
  }
}
console.log("done");
