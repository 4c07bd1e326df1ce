/**
 * A Worker that tries to host TS handlers while the main thread does: posts
 * the error it gets (or "no error").
 *
 * @module
 */
import { Ffi } from "../src/handler/mod.ts";

const post = (message: string) =>
  (self as unknown as { postMessage(message: string): void }).postMessage(message);

try {
  Ffi.bind().to(() => {});
  post("no error");
} catch (e) {
  post(String(e));
}
