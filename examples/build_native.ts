/**
 * Building your own XLA FFI handler library from C with build.ts's
 * `buildSharedLibrary`: compiled once, cached by the hash of the sources,
 * compiler and flags (`-std=c11 -O2 -Wall -Wextra -Werror -fPIC -pthread`),
 * with `native/` (our `xla_ffi.h`) on the include path.
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
import { buildSharedLibrary } from "../build.ts";

/** Builds (or finds in the cache) examples/native/demo_handlers.c; returns the .so path. */
export function buildDemoLibrary(): string {
  return buildSharedLibrary({
    name: "demo_handlers",
    sources: [new URL("./native/demo_handlers.c", import.meta.url)],
  });
}

if (import.meta.main) {
  const path = buildDemoLibrary();
  console.log(`built ${path}`);
  console.log(`${Deno.statSync(path).size} bytes; rebuilt only when the sources or flags change`);
}
