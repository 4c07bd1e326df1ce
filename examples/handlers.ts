/**
 * TS handlers for the command line: a module whose exports are handlers
 * (`Ffi.bind()…to(fn)`) or handler bundles. `cli run examples/handlers.ts
 * <export>` imports it, calls the export in the embedded runtime, and closes
 * the module's handlers afterwards.
 *
 * ```sh
 * deno task cli run examples/handlers.ts scale --arg f32[2,2]=1,2,3,4 --ret f32[2,2] \
 *   --attr alpha=f32:2.5
 * deno task cli run examples/handlers.ts counter --attr start=i64:41 --ret s64 --repeat 3
 * deno task cli run examples/handlers.ts describe --attr mode=reflect --attr axes=i64[]:0,2 \
 *   --attr cfg.on=bool:true --ret u8[128]
 * deno task cli run examples/handlers.ts mean --arg x.npy --ret f64 --out mean.npy
 * ```
 *
 * @module
 */
import { DataType, Dictionary, Ffi, FfiError, HandlerBundle } from "../mod.ts";

/** y = alpha * x (f32, any shape; x and y have the same number of elements). */
export const scale = Ffi.bind()
  .arg(DataType.F32)
  .ret(DataType.F32)
  .attr("alpha", "f32")
  .to((x, y, alpha) => {
    const xs = x.typed(), ys = y.typed();
    if (xs.length !== ys.length) {
      throw new FfiError(
        "INVALID_ARGUMENT",
        `scale: x has ${xs.length} elements but y has ${ys.length}`,
      );
    }
    for (let i = 0; i < ys.length; i++) ys[i] = alpha * xs[i]!;
  });

/**
 * The mean of an f64 array, computed asynchronously (an `async` handler:
 * the runtime waits for its promise).
 */
export const mean = Ffi.bind()
  .arg(DataType.F64)
  .ret(DataType.F64, 0)
  .to(async (x, out) => {
    await Promise.resolve();
    const xs = x.typed();
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[i]!;
    out.typed()[0] = xs.length === 0 ? NaN : s / xs.length;
  });

/**
 * A stateful counter: the instantiate stage keeps `start` (attribute, i64)
 * as state; every execute call adds one and writes the count. With the CLI
 * the instantiate stage runs once before the calls.
 */
export const counter = new HandlerBundle({
  instantiate: Ffi.bindInstantiate()
    .attr("start", "i64")
    .to((start) => ({ count: start })),
  // Every stage gets the call site's attributes, as in XLA: bind `start` here too.
  execute: Ffi.bind()
    .ret(DataType.S64, 0)
    .attr("start", "i64")
    .state<{ count: number }>()
    .to((out, _start, state) => {
      state.count++;
      out.typed()[0] = BigInt(state.count);
    }),
});

function _describe(d: Dictionary, indent: string): string {
  let text = "";
  for (const name of d.keys()) {
    const v: unknown = d.get(name);
    if (v instanceof Dictionary) {
      text += `${indent}${name}:\n${_describe(v, indent + "  ")}`;
    } else if (typeof v === "string") {
      text += `${indent}${name}: ${JSON.stringify(v)}\n`;
    } else if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      text += `${indent}${name}: [${
        [...v as ArrayLike<unknown> & Iterable<unknown>].join(", ")
      }]\n`;
    } else {
      text += `${indent}${name}: ${String(v)}\n`;
    }
  }
  return text;
}

/** Writes the attributes it gets, one per line, as UTF-8 text into a u8 result. */
export const describe = Ffi.bind()
  .ret(DataType.U8, 1)
  .attrs()
  .to((out, attrs) => {
    const bytes = new TextEncoder().encode(_describe(attrs, ""));
    const o = out.typed();
    if (bytes.length > o.length) {
      throw new RangeError(`describe: ${bytes.length} bytes do not fit in u8[${o.length}]`);
    }
    o.fill(0);
    o.set(bytes);
  });
