/** Builds and opens the C test handlers of native/tests/runtime_handlers.c. */
import { buildSharedLibrary } from "../build.ts";
import { HandlerLibrary } from "../src/runtime/handler_library.ts";

let path: string | undefined;

/** Path of the built test handler library. */
export function testHandlersPath(): string {
  path ??= buildSharedLibrary({
    name: "xrt_test_handlers",
    sources: ["native/tests/runtime_handlers.c"],
  });
  return path;
}

/** Opens the test handler library (the caller closes it). */
export function openTestHandlers(): HandlerLibrary {
  return HandlerLibrary.open(testHandlersPath());
}
