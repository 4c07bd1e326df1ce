/**
 * Building your own XLA FFI handler library from C with
 * `@deno-xla/ffi/build`'s `buildHandlerLibrary`: sources relative to your
 * folder (`root`, default the working directory), the module's C header
 * `xla_ffi.h` on the include path (or jaxlib's `ffi.h` with
 * `ffiHeaders: "jaxlib"`), compiled once and cached by content.
 *
 * Without Deno, the same library builds with a plain compiler:
 *
 *   cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I native \
 *      examples/native/demo_handlers.c -o libdemo_handlers.so
 *
 * Run: deno run --allow-read --allow-write --allow-run --allow-env examples/build_native.ts
 *
 * @module
 */
import { buildHandlerLibrary } from "../src/build/mod.ts";

/** Builds (or finds in the cache) examples/native/demo_handlers.c; returns the .so path. */
export function buildDemoLibrary(): string {
  return buildHandlerLibrary({
    name: "demo_handlers",
    sources: ["native/demo_handlers.c"],
    root: new URL("./", import.meta.url), // this folder, wherever the script is started
  });
}

if (import.meta.main) {
  const path = buildDemoLibrary();
  console.log(`built ${path}`);
  console.log(`${Deno.statSync(path).size} bytes; rebuilt only when the sources or flags change`);
}
