/**
 * Runs the TS-handler CUDA scenarios through `rt.call` (the handler called
 * from a runtime thread, served by the JS thread) as well as `callSync`, on
 * the driver XLA_FFI_DENO_CUDA names (the stand-in's hooks are checked when
 * XLA_FFI_DENO_CUDA_STANDIN=1). Prints "rt.call scenarios passed".
 *
 * It runs in its own process (tests/cuda_handler_test.ts starts it): the
 * JS thread that served foreign-thread handler calls stays the process's
 * handler host, which a later test module on another thread cannot take over.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env tests/_cuda_handler_calls.ts
 */
import { failedLaunchScenario, saxpyScenario, STANDIN_HOOKS } from "./_cuda_handler_scenarios.ts";

const driver = Deno.env.get("XLA_FFI_DENO_CUDA");
const probe = Deno.env.get("XLA_FFI_DENO_CUDA_STANDIN") === "1" && driver
  ? Deno.dlopen(driver, STANDIN_HOOKS).symbols
  : undefined;
await saxpyScenario(probe, true);
await failedLaunchScenario(true);
console.log("rt.call scenarios passed");
