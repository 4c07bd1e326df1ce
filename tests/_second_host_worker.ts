/**
 * A Worker that tries to host TS handlers while the main thread does: posts
 * the error it gets (or "no error").
 *
 * @module
 */
import { Ffi } from "../src/handler/mod.ts";

try {
  Ffi.bind().to(() => {});
  self.postMessage("no error");
} catch (e) {
  self.postMessage(String(e));
}
