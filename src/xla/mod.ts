/**
 * Real XLA calls TS handlers: `@deno-xla/ffi/xla` hosts CPython with jax and
 * jaxlib (CPU) inside the Deno process and runs jitted JAX programs whose
 * custom calls are TS handlers (`Ffi.bind()…to(fn)`) or C handlers from a
 * `HandlerLibrary`.
 *
 * Needs a Python with a shared libpython and jax installed (`pip install
 * jax==0.10.2 jaxlib==0.10.2` in a virtual environment), found through the
 * `python` option, `$XLA_FFI_DENO_PYTHON` or `python3` on `PATH`, and Deno's
 * `--allow-ffi --allow-run --allow-env --allow-read`.
 *
 * @example
 * ```ts ignore
 * import { DataType, Ffi } from "@deno-xla/ffi";
 * import { Xla } from "@deno-xla/ffi/xla";
 *
 * await using xla = await Xla.open();
 * using scale = Ffi.bind().arg(DataType.F32).ret(DataType.F32).attr("alpha", "f32")
 *   .to((x, y, alpha) => {
 *     const xs = x.typed(), ys = y.typed();
 *     for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
 *   });
 * await xla.register("my.scale", scale);
 * await using prog = await xla.jit(`
 * def f(x):
 *     y = ffi.ffi_call("my.scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, alpha=np.float32(2))
 *     return jax.nn.softmax(y)
 * `);
 * const [y] = await prog.run(new Float32Array([1, 2, 3]));
 * console.log(y.data);
 * ```
 *
 * @module
 */
export {
  type FfiCallOptions,
  type FfiCallResults,
  type JitOptions,
  type PythonStats,
  type VmapMethod,
  Xla,
  type XlaOptions,
  XlaProgram,
  type XlaRegisterOptions,
  type XlaRegisterTypeOptions,
  type XlaVersion,
} from "./xla.ts";
export { PythonError } from "./_host.ts";
export {
  type HandlersFromOptions,
  ModuleHandler,
  ModuleHandlers,
  type SkippedTarget,
} from "./modules.ts";
export type { CpuCollectives, DistributedInfo, DistributedOptions } from "./_distributed.ts";
export { findPython, probePython, type PythonInfo } from "./interpreter.ts";
export type { XlaArg, XlaArray, XlaArrayInput, XlaArraySpec } from "./_codec.ts";
