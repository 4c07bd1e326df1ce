/**
 * Attributes of every kind a call frame carries: typed scalars (bool → PRED,
 * integers of each width, f32, f64), typed arrays, strings and nested
 * dictionaries. `demo_describe_attrs` writes what it received into a U8
 * buffer; the runtime sorts names byte-wise (nested ones too), as XLA does.
 *
 * Run: deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env examples/attributes.ts
 *
 * @module
 */
import { array, CallFrameBuilder, DataType, HandlerLibrary, Runtime, scalar } from "../mod.ts";
import { buildDemoLibrary } from "./build_native.ts";

using lib = HandlerLibrary.open(buildDemoLibrary());
using rt = new Runtime({ platform: "Host", threads: 0 });

const text = new Uint8Array(1024);
using frame = new CallFrameBuilder()
  .ret(text)
  .attr("flag", true) // PRED
  .attr("count", 3) // an integer number: S64
  .attr("ratio", 0.25) // a fractional number: F64
  .attr("alpha", scalar(DataType.F32, 2.5))
  .attr("small", scalar(DataType.S8, -7))
  .attr("mask", scalar(DataType.U32, 0xffff0000))
  .attr("big", 2n ** 62n) // bigint: S64
  .attr("axes", array(DataType.S64, [0, 2]))
  .attr("weights", new Float32Array([0.5, 1.5])) // F32 array
  .attr("bytes", new Uint8Array([1, 2, 255]))
  .attr("mode", "reflect")
  .attr("config", { scale: scalar(DataType.F32, 2), name: "inner", nested: { depth: 2 } })
  .build();
rt.callSync(lib.handler("demo_describe_attrs"), frame);
console.log(new TextDecoder().decode(text.subarray(0, text.indexOf(0))).trimEnd());
