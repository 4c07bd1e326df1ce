/**
 * A user's script: creates a runtime and prints its platform (or, with
 * `catch`, catches the error and goes on). Run with various permission flags
 * by `tests/permissions_test.ts`.
 *
 * @module
 */
import { type FfiError, Runtime } from "../mod.ts";

if (Deno.args[0] === "catch") {
  try {
    new Runtime().close();
  } catch (e) {
    console.log(`caught ${(e as FfiError).codeName}`);
  }
  await new Promise((r) => setTimeout(r, 10));
  console.log("went on");
} else {
  using rt = new Runtime();
  console.log(rt.platform);
}
