/**
 * TS side of native/tests/handler_harness.c: an independent minimal XLA
 * runtime (its own XLA_FFI_Api and call-frame builder) to call TS handler
 * entry points the way any runtime would.
 *
 * @module
 */
import { buildSharedLibrary } from "../build.ts";
import { DataType, ExecutionStage } from "../src/abi/enums.ts";
import { openLibrary } from "../src/native/lib.ts";

const SYMBOLS = {
  hh_api: { parameters: [], result: "pointer" },
  hh_api_without_futures: { parameters: [], result: "pointer" },
  hh_api_failing_completion: { parameters: [], result: "pointer" },
  hh_live_errors: { parameters: [], result: "i64" },
  hh_live_futures: { parameters: [], result: "i64" },
  hh_ctx_new: { parameters: ["f64", "i32", "i32", "f64"], result: "pointer" },
  hh_ctx_add_user_data: { parameters: ["pointer", "f64", "f64"], result: "i32" },
  hh_ctx_live_allocations: { parameters: ["pointer"], result: "i64" },
  hh_ctx_has_state: { parameters: ["pointer"], result: "i32" },
  hh_ctx_free: { parameters: ["pointer"], result: "void" },
  hh_frame_new: { parameters: [], result: "pointer" },
  hh_buffer: {
    parameters: ["pointer", "i32", "i32", "f64", "i32", "buffer"],
    result: "i32",
  },
  hh_attr_scalar: {
    parameters: ["pointer", "buffer", "i32", "i32", "buffer", "i32"],
    result: "i32",
  },
  hh_attr_array: {
    parameters: ["pointer", "buffer", "i32", "i32", "i32", "buffer", "i32"],
    result: "i32",
  },
  hh_attr_string: { parameters: ["pointer", "buffer", "i32", "buffer", "i32"], result: "i32" },
  hh_dict_begin: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  hh_dict_end: { parameters: ["pointer"], result: "i32" },
  hh_frame_build: { parameters: ["pointer", "pointer", "pointer", "i32"], result: "pointer" },
  hh_frame_set: { parameters: ["pointer", "f64", "i32"], result: "void" },
  hh_frame_free: { parameters: ["pointer"], result: "void" },
  hh_call: { parameters: ["pointer", "pointer"], result: "pointer" },
  hh_frame_future: { parameters: ["pointer"], result: "pointer" },
  hh_error_code: { parameters: ["pointer"], result: "i32" },
  hh_error_message: { parameters: ["pointer"], result: "pointer" },
  hh_error_destroy: { parameters: ["pointer"], result: "void" },
  hh_future_wait: { parameters: ["pointer"], result: "i32", nonblocking: true },
  hh_future_done: { parameters: ["pointer"], result: "i32" },
  hh_future_completions: { parameters: ["pointer"], result: "i32" },
  hh_future_message: { parameters: ["pointer"], result: "pointer" },
  hh_future_free: { parameters: ["pointer"], result: "void" },
  hh_metadata: {
    parameters: ["pointer", "pointer", "i32", "i32", "buffer", "buffer"],
    result: "i32",
  },
  hh_run_xla_like: {
    parameters: ["pointer", "pointer", "i32", "i32", "buffer"],
    result: "i32",
    nonblocking: true,
  },
  hh_run_threads: {
    parameters: ["buffer", "buffer", "i32", "i32", "buffer", "buffer"],
    result: "i32",
    nonblocking: true,
  },
  hh_call_stack_frame: {
    parameters: ["pointer", "pointer", "buffer"],
    result: "i32",
    nonblocking: true,
  },
  hh_current_cpu: { parameters: [], result: "i32" },
  hh_cpu_read_cheap: { parameters: [], result: "i32" },
  hh_runnable_threads: { parameters: [], result: "i32" },
  hh_affinity_restored: { parameters: [], result: "i32" },
  hh_pin_self: { parameters: ["i32"], result: "i32" },
  hh_unpin_self: { parameters: [], result: "i32" },
  hh_run_pinned: {
    parameters: ["pointer", "pointer", "i32", "i32", "i32", "i32"],
    result: "i32",
    nonblocking: true,
  },
  hh_loop: { parameters: ["pointer", "pointer", "i32"], result: "f64" },
  hh_complete_task: { parameters: [], result: "pointer" },
  hh_future_new: { parameters: [], result: "pointer" },
} as const;

let lib: Deno.DynamicLibrary<typeof SYMBOLS> | undefined;

/** The harness library (built once, kept open). */
export function harness(): Deno.DynamicLibrary<typeof SYMBOLS>["symbols"] {
  if (!lib) {
    const path = buildSharedLibrary({
      name: "handler_harness",
      sources: ["native/tests/handler_harness.c"],
    });
    lib = openLibrary(path, SYMBOLS);
  }
  return lib.symbols;
}

const enc = new TextEncoder();

/** An attribute value for {@link frame}. */
export type TestAttr =
  | { scalar: DataType; value: number | boolean | bigint }
  | { array: DataType; values: (number | bigint)[] }
  | { string: string }
  | { dict: Record<string, TestAttr> };

/** A buffer operand for {@link frame}. */
export interface TestBuffer {
  dtype: DataType;
  dims: number[];
  data?: ArrayBufferView;
}

/** Address of a typed array's memory as a number. */
export function addressOf(view: ArrayBufferView | undefined): number {
  if (view === undefined || view.byteLength === 0) return 0;
  return Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(view)));
}

function bytesOf(dtype: DataType, values: (number | bigint | boolean)[]): Uint8Array {
  switch (dtype) {
    case DataType.PRED:
      return new Uint8Array(values.map((v) => (v ? 1 : 0)));
    case DataType.S8:
      return new Uint8Array(new Int8Array(values.map(Number)).buffer);
    case DataType.S16:
      return new Uint8Array(new Int16Array(values.map(Number)).buffer);
    case DataType.S32:
      return new Uint8Array(new Int32Array(values.map(Number)).buffer);
    case DataType.S64:
      return new Uint8Array(new BigInt64Array(values.map((v) => BigInt(v))).buffer);
    case DataType.U8:
      return new Uint8Array(values.map(Number));
    case DataType.U16:
      return new Uint8Array(new Uint16Array(values.map(Number)).buffer);
    case DataType.U32:
      return new Uint8Array(new Uint32Array(values.map(Number)).buffer);
    case DataType.U64:
      return new Uint8Array(new BigUint64Array(values.map((v) => BigInt(v))).buffer);
    case DataType.F32:
      return new Uint8Array(new Float32Array(values.map(Number)).buffer);
    case DataType.F64:
      return new Uint8Array(new Float64Array(values.map(Number)).buffer);
    default:
      throw new TypeError(`no test encoding for dtype ${dtype}`);
  }
}

function addAttrs(b: Deno.PointerValue, attrs: Record<string, TestAttr>): void {
  const h = harness();
  for (const [name, a] of Object.entries(attrs)) {
    const n = enc.encode(name);
    let rc: number;
    if ("scalar" in a) {
      const bytes = bytesOf(a.scalar, [a.value]);
      rc = h.hh_attr_scalar(b, n, n.length, a.scalar, bytes, bytes.length);
    } else if ("array" in a) {
      const bytes = a.values.length ? bytesOf(a.array, a.values) : new Uint8Array(1);
      rc = h.hh_attr_array(
        b,
        n,
        n.length,
        a.array,
        a.values.length,
        bytes,
        a.values.length ? bytes.length : 0,
      );
    } else if ("string" in a) {
      const s = enc.encode(a.string);
      rc = h.hh_attr_string(b, n, n.length, s.length ? s : new Uint8Array(1), s.length);
    } else {
      rc = h.hh_dict_begin(b, n, n.length);
      addAttrs(b, a.dict);
      if (rc === 0) rc = h.hh_dict_end(b);
    }
    if (rc !== 0) throw new Error(`harness: cannot add attribute ${name}`);
  }
}

/** Options of {@link frame}. */
export interface FrameSpec {
  args?: TestBuffer[];
  rets?: TestBuffer[];
  attrs?: Record<string, TestAttr>;
  stage?: ExecutionStage;
  /** The API table; default the harness API; null to pass NULL. */
  api?: Deno.PointerValue;
  ctx?: Deno.PointerValue;
}

/** A call frame owned by the harness. */
export class TestFrame {
  readonly #builder: Deno.PointerValue;
  readonly pointer: Deno.PointerObject;
  readonly keep: unknown[];
  constructor(builder: Deno.PointerValue, pointer: Deno.PointerObject, keep: unknown[]) {
    this.#builder = builder;
    this.pointer = pointer;
    this.keep = keep;
  }
  close(): void {
    harness().hh_frame_free(this.#builder);
  }
  [Symbol.dispose](): void {
    this.close();
  }
}

/** Builds a call frame with the harness's own builder. */
export function frame(spec: FrameSpec): TestFrame {
  const h = harness();
  const b = h.hh_frame_new();
  const keep: unknown[] = [];
  for (const [which, list] of [[0, spec.args ?? []], [1, spec.rets ?? []]] as const) {
    for (const buf of list) {
      const dims = new Float64Array(Math.max(1, buf.dims.length));
      dims.set(buf.dims);
      keep.push(buf.data);
      h.hh_buffer(b, which, buf.dtype, addressOf(buf.data), buf.dims.length, dims);
    }
  }
  addAttrs(b, spec.attrs ?? {});
  const api = spec.api === undefined ? h.hh_api() : spec.api;
  const p = h.hh_frame_build(b, api, spec.ctx ?? null, spec.stage ?? ExecutionStage.EXECUTE)!;
  return new TestFrame(b, p, keep);
}

/** Result of a synchronous call: null on success, else code and message. */
export interface CallError {
  code: number;
  message: string;
}

function takeError(err: Deno.PointerValue): CallError | null {
  if (err === null) return null;
  const h = harness();
  const out = {
    code: h.hh_error_code(err),
    message: Deno.UnsafePointerView.getCString(h.hh_error_message(err)!),
  };
  h.hh_error_destroy(err);
  return out;
}

/** Calls a handler; an async handler's future is awaited without blocking the JS thread. */
export async function call(
  handler: Deno.PointerValue,
  f: TestFrame,
): Promise<CallError | null> {
  const h = harness();
  const err = h.hh_call(handler, f.pointer);
  if (err !== null) return takeError(err);
  const fut = h.hh_frame_future(f.pointer);
  if (fut === null) return null;
  return await awaitFuture(fut);
}

/** Calls a handler synchronously; returns the error or the pending future. */
export function callSync(
  handler: Deno.PointerValue,
  f: TestFrame,
): { error: CallError | null; future: Deno.PointerValue } {
  const h = harness();
  const err = h.hh_call(handler, f.pointer);
  return { error: takeError(err), future: err === null ? h.hh_frame_future(f.pointer) : null };
}

/** Waits (nonblocking for JS) for a harness future and frees it. */
export async function awaitFuture(fut: Deno.PointerObject): Promise<CallError | null> {
  const h = harness();
  const code = await h.hh_future_wait(fut);
  const result = code === 0
    ? null
    : { code, message: Deno.UnsafePointerView.getCString(h.hh_future_message(fut)!) };
  h.hh_future_free(fut);
  return result;
}

/** The metadata reply of a handler, queried as a 0.1 runtime does (api NULL by default). */
export function metadata(
  handler: Deno.PointerValue,
  api: Deno.PointerValue = null,
  sizes: { extension?: number; metadata?: number } = {},
): { major: number; minor: number; traits: number; code: number; message: string } {
  const out = new Int32Array(4);
  const msg = new Uint8Array(256);
  harness().hh_metadata(handler, api, sizes.extension ?? 0, sizes.metadata ?? 0, out, msg);
  const end = msg.indexOf(0);
  return {
    major: out[0]!,
    minor: out[1]!,
    traits: out[2]!,
    code: out[3]!,
    message: new TextDecoder().decode(msg.subarray(0, end < 0 ? 256 : end)),
  };
}

/** Calls handlers[t] with frames[t] from threads; returns timing and errors. */
export async function runThreads(
  handlers: Deno.PointerValue[],
  frames: TestFrame[],
  calls: number,
): Promise<{ wallNs: number; medianNs: number; p99Ns: number; errors: number; message: string }> {
  const hs = new BigUint64Array(handlers.map((p) => Deno.UnsafePointer.value(p)));
  const fs = new BigUint64Array(frames.map((f) => Deno.UnsafePointer.value(f.pointer)));
  const out = new Float64Array(4);
  const msg = new Uint8Array(256);
  await harness().hh_run_threads(hs, fs, handlers.length, calls, out, msg);
  const end = msg.indexOf(0);
  return {
    wallNs: out[0]!,
    medianNs: out[1]!,
    errors: out[2]!,
    p99Ns: out[3]!,
    message: new TextDecoder().decode(msg.subarray(0, end < 0 ? 256 : end)),
  };
}
