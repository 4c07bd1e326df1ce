/**
 * A user's script: creates a runtime and prints its platform (or, with
 * `catch`, catches the error and goes on). Run with various permission flags
 * by `tests/permissions_test.ts`; `child-permissions FILE` prints the flags a
 * child process of the command line gets, `isolate LIB` starts an isolated
 * library's process.
 *
 * @module
 */
import { type FfiError, HandlerLibrary, Runtime } from "../mod.ts";
import { _childPermissions } from "../src/cli/probe.ts";

if (Deno.args[0] === "child-permissions") {
  // The flags a child process of the command line would get, with --out file Deno.args[1].
  console.log(JSON.stringify(_childPermissions({ write: [Deno.args[1]!] })));
} else if (Deno.args[0] === "isolate") {
  // Starts the process of isolated library Deno.args[1] (by looking a handler up).
  using lib = HandlerLibrary.open(Deno.args[1]!, { isolate: true });
  try {
    lib.handler("fault_ok");
    console.log("started");
  } catch (e) {
    console.log(`${(e as FfiError).codeName}: ${(e as FfiError).message}`);
  }
} else if (Deno.args[0] === "catch") {
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
