/**
 * Output of the command line: arrays printed readably (numpy-like, with the
 * middle elided for big arrays), timing summaries, a progress line for long
 * runs, and the JSON report.
 *
 * @module
 */
import { DataType, ErrorCode, type ExecutionStage, stageName } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import type { Platform } from "./args.ts";
import { typeFacts, typeName } from "../spec/type_names.ts";

/** An array to print: element type, shape and row-major values. */
export interface ArrayData {
  /** Element type. */
  dtype: DataType;
  /** Dimensions (row-major). */
  dims: readonly number[];
  /**
   * One value per element (two per complex element, interleaved re, im):
   * numbers (f16/bf16 already decoded), bigints for 64-bit integers, 0/1 or
   * booleans for pred. Typed arrays work as they are.
   */
  values: ArrayLike<number | bigint | boolean>;
}

/** Options of {@link formatArray}. */
export interface FormatOptions {
  /** Elide when the array has more elements than this (default 1000, as numpy). */
  threshold?: number;
  /** Elements shown at each end of an elided axis (default 3). */
  edgeItems?: number;
  /** Wrap rows at this many characters (default 80). */
  lineWidth?: number;
}

/** Rounds to the nearest bfloat16 (ties to even), as a number. */
function _bf16round(v: number): number {
  const f = new Float32Array([v]);
  const u = new Uint32Array(f.buffer);
  const bits = u[0]!;
  if ((bits & 0x7f800000) !== 0x7f800000) {
    u[0] = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  }
  return f[0]!;
}

const _f16round = (Math as unknown as { f16round?: (v: number) => number }).f16round;

function _shortest(v: number, round: (x: number) => number): string {
  const target = round(v);
  for (let p = 1; p <= 17; p++) {
    const n = Number(v.toPrecision(p));
    if (round(n) === target) return String(n);
  }
  return String(v);
}

function _floatText(v: number, dtype: DataType): string {
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  let s: string;
  switch (dtype) {
    case DataType.F32:
    case DataType.C64:
      s = _shortest(v, Math.fround);
      break;
    case DataType.F16:
      s = _f16round ? _shortest(v, _f16round) : String(v);
      break;
    case DataType.BF16:
      s = _shortest(v, _bf16round);
      break;
    default:
      s = String(v);
  }
  if (Object.is(v, -0)) s = "-0";
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/**
 * One element as text: integers in decimal, pred as `true`/`false`, floats
 * in the shortest form that reads back to the same value of their type
 * (`0.1` for a float32 0.1, `1.0`, `nan`, `inf`), complex as `1.0+2.0j`.
 *
 * @param dtype the element type
 * @param value the value; for complex, the real part
 * @param imag for complex, the imaginary part
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { formatElement } from "./format.ts";
 * console.log(formatElement(DataType.F32, Math.fround(0.1))); // "0.1"
 * console.log(formatElement(DataType.C64, 1, -2)); // "1.0-2.0j"
 * ```
 */
export function formatElement(
  dtype: DataType,
  value: number | bigint | boolean,
  imag?: number | bigint | boolean,
): string {
  const kind = typeFacts(dtype)?.kind;
  if (kind === "pred") return value ? "true" : "false";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "boolean") value = value ? 1 : 0;
  if (kind === "int") return String(value);
  if (kind === "complex") {
    const im = _floatText(Number(imag ?? 0), dtype);
    return `${_floatText(value, dtype)}${im.startsWith("-") ? "" : "+"}${im}j`;
  }
  return _floatText(value, dtype);
}

/**
 * `f32[2,3]`: the element type and shape.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { formatShape } from "./format.ts";
 * console.log(formatShape(DataType.S32, [4])); // "s32[4]"
 * ```
 */
export function formatShape(dtype: DataType, dims: readonly number[]): string {
  return `${typeName(dtype)}[${dims.join(",")}]`;
}

function _checkValues(array: ArrayData): { count: number; per: number } {
  const per = typeFacts(array.dtype)?.kind === "complex" ? 2 : 1;
  const count = array.dims.reduce((a, b) => a * b, 1);
  if (array.values.length !== count * per) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${formatShape(array.dtype, array.dims)} needs ${
        count * per
      } values, got ${array.values.length}`,
    );
  }
  return { count, per };
}

/**
 * The values of an array as numpy prints them: nested brackets per axis,
 * columns padded to one width, rows wrapped at the line width, and, for
 * arrays with more than `threshold` elements, only the first and last
 * `edgeItems` of each axis with `...` between.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { formatArray } from "./format.ts";
 * console.log(formatArray({ dtype: DataType.S32, dims: [2, 3], values: [1, 2, 3, 4, 5, 60] }));
 * // [[ 1,  2,  3],
 * //  [ 4,  5, 60]]
 * console.log(formatArray({ dtype: DataType.S32, dims: [2000], values: new Int32Array(2000) }));
 * // [0, 0, 0, ..., 0, 0, 0]
 * ```
 */
export function formatArray(array: ArrayData, options?: FormatOptions): string {
  options ??= {};
  const { count, per } = _checkValues(array);
  const dims = array.dims;
  const threshold = options.threshold ?? 1000;
  const edge = Math.max(1, options.edgeItems ?? 3);
  const lineWidth = options.lineWidth ?? 80;
  const v = array.values;
  const element = (i: number) =>
    per === 2
      ? formatElement(array.dtype, v[2 * i]!, v[2 * i + 1]!)
      : formatElement(array.dtype, v[i]!);
  if (dims.length === 0) return element(0);
  if (count === 0) return "[]";
  const summarize = count > threshold;
  const strides = dims.map((_, i) => dims.slice(i + 1).reduce((a, b) => a * b, 1));
  const shown = (n: number): number[] => {
    if (!summarize || n <= 2 * edge) return Array.from({ length: n }, (_, i) => i);
    const head = Array.from({ length: edge }, (_, i) => i);
    const tail = Array.from({ length: edge }, (_, i) => n - edge + i);
    return [...head, -1, ...tail];
  };
  // First pass: the texts of the shown elements, for one column width.
  const texts = new Map<number, string>();
  const collect = (axis: number, offset: number): void => {
    for (const i of shown(dims[axis]!)) {
      if (i < 0) continue;
      const at = offset + i * strides[axis]!;
      if (axis === dims.length - 1) texts.set(at, element(at));
      else collect(axis + 1, at);
    }
  };
  collect(0, 0);
  let width = 0;
  for (const t of texts.values()) width = Math.max(width, t.length);
  const build = (axis: number, offset: number, indent: number): string => {
    const idx = shown(dims[axis]!);
    if (axis === dims.length - 1) {
      let out = "[";
      let col = indent + 1;
      idx.forEach((i, k) => {
        const item = i < 0 ? "..." : texts.get(offset + i * strides[axis]!)!.padStart(width);
        const piece = k < idx.length - 1 ? `${item},` : item;
        if (k > 0 && col + 1 + piece.length > lineWidth) {
          out += `\n${" ".repeat(indent + 1)}`;
          col = indent + 1;
        } else if (k > 0) {
          out += " ";
          col += 1;
        }
        out += piece;
        col += piece.length;
      });
      return `${out}]`;
    }
    const sep = `,${"\n".repeat(dims.length - axis - 1)}${" ".repeat(indent + 1)}`;
    const blocks = idx.map((i) =>
      i < 0 ? "..." : build(axis + 1, offset + i * strides[axis]!, indent + 1)
    );
    return `[${blocks.join(sep)}]`;
  };
  return build(0, 0, 0);
}

// ---------------------------------------------------------------- timing

/** Median, minimum, maximum and mean of call times. */
export interface TimingSummary {
  /** Number of calls timed. */
  calls: number;
  /** Median, in milliseconds. */
  medianMs: number;
  /** Fastest call, in milliseconds. */
  minMs: number;
  /** Slowest call, in milliseconds. */
  maxMs: number;
  /** Mean, in milliseconds. */
  meanMs: number;
}

/**
 * Summarizes call times given in milliseconds. Throws {@link FfiError}
 * (INVALID_ARGUMENT) for no samples or a negative or non-finite one.
 *
 * @example
 * ```ts
 * import { summarizeTimings } from "./format.ts";
 * console.log(summarizeTimings([3, 1, 2, 10]).medianMs); // 2.5
 * ```
 */
export function summarizeTimings(samplesMs: ArrayLike<number>): TimingSummary {
  if (samplesMs.length === 0) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, "no call times to summarize");
  }
  const sorted = Float64Array.from(samplesMs).sort();
  let sum = 0;
  for (const s of sorted) {
    if (!Number.isFinite(s) || s < 0) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `invalid call time ${s} ms`);
    }
    sum += s;
  }
  const n = sorted.length;
  const mid = n >> 1;
  return {
    calls: n,
    medianMs: n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2,
    minMs: sorted[0]!,
    maxMs: sorted[n - 1]!,
    meanMs: sum / n,
  };
}

/**
 * A duration in the unit that suits it (ns, µs, ms, s), with three
 * significant digits.
 *
 * @example
 * ```ts
 * import { formatDuration } from "./format.ts";
 * console.log(formatDuration(0.0123)); // "12.3 µs"
 * console.log(formatDuration(1500)); // "1.50 s"
 * ```
 */
export function formatDuration(ms: number): string {
  const [value, unit] = ms < 1e-3
    ? [ms * 1e6, "ns"]
    : ms < 1
    ? [ms * 1e3, "µs"]
    : ms < 1000
    ? [ms, "ms"]
    : [ms / 1000, "s"];
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
  // Rounding may reach the next unit (999.96 µs → "1000 µs"); keep it simple and exact.
  return `${value.toFixed(digits)} ${unit}`;
}

/**
 * `100 calls: median 1.23 ms, min 1.10 ms, max 2.00 ms, mean 1.30 ms`.
 *
 * @example
 * ```ts
 * import { formatTiming, summarizeTimings } from "./format.ts";
 * console.log(formatTiming(summarizeTimings([1, 2, 3])));
 * // "3 calls: median 2.00 ms, min 1.00 ms, max 3.00 ms, mean 2.00 ms"
 * ```
 */
export function formatTiming(t: TimingSummary): string {
  return `${t.calls} call${t.calls === 1 ? "" : "s"}: median ${formatDuration(t.medianMs)}, ` +
    `min ${formatDuration(t.minMs)}, max ${formatDuration(t.maxMs)}, ` +
    `mean ${formatDuration(t.meanMs)}`;
}

// ---------------------------------------------------------------- progress

/** Where a progress line goes: `Deno.stderr` fits. */
export interface ProgressSink {
  /** Writes bytes, returning how many were written. */
  writeSync(p: Uint8Array): number;
  /** Whether the sink is a terminal. */
  isTerminal(): boolean;
}

/** Options of {@link ProgressLine}. */
export interface ProgressOptions {
  /** What is counted (default `calls`). */
  label?: string;
  /** Where to write (default `Deno.stderr`). */
  sink?: ProgressSink;
  /** Clock in milliseconds (default `performance.now`). */
  now?: () => number;
  /** On a terminal: redraw at most this often (default 100 ms). */
  terminalIntervalMs?: number;
  /** Not a terminal: one plain line at most this often, the first after this long (default 10 s). */
  plainIntervalMs?: number;
}

/**
 * A progress line for long runs. On a terminal it redraws one line in place
 * (`\r… \x1b[K`) at most every 100 ms and erases it when finished. When the
 * sink is not a terminal (a pipe, a file, CI logs), it writes a plain line
 * (`calls 500/1000 (50%), 10.0 s elapsed`) only every 10 s, so short runs
 * write nothing and logs do not fill with carriage returns. Errors writing
 * (a closed pipe) stop the progress output silently.
 *
 * @example
 * ```ts
 * import { ProgressLine } from "./format.ts";
 * using progress = new ProgressLine(1000);
 * for (let i = 1; i <= 1000; i++) progress.update(i);
 * ```
 */
export class ProgressLine implements Disposable {
  readonly #total: number;
  readonly #label: string;
  readonly #sink: ProgressSink;
  readonly #now: () => number;
  readonly #terminal: boolean;
  readonly #interval: number;
  readonly #start: number;
  readonly #encoder = new TextEncoder();
  #last: number;
  #drawn = false;
  #closed = false;

  /**
   * Starts the clock; nothing is written until the first {@link ProgressLine.update}.
   *
   * @param total the number of steps expected
   * @param options sink, clock and intervals
   */
  constructor(total: number, options?: ProgressOptions) {
    options ??= {};
    this.#total = total;
    this.#label = options.label ?? "calls";
    this.#sink = options.sink ?? Deno.stderr;
    this.#now = options.now ?? (() => performance.now());
    let terminal = false;
    try {
      terminal = this.#sink.isTerminal();
    } catch {
      terminal = false;
    }
    this.#terminal = terminal;
    this.#interval = terminal
      ? (options.terminalIntervalMs ?? 100)
      : (options.plainIntervalMs ?? 10_000);
    this.#start = this.#now();
    this.#last = this.#start;
  }

  /** Whether the line is redrawn in place (the sink is a terminal). */
  get terminal(): boolean {
    return this.#terminal;
  }

  /** Reports `done` steps finished; writes only when the interval has passed. */
  update(done: number): void {
    if (this.#closed) return;
    const now = this.#now();
    if (now - this.#last < this.#interval) return;
    this.#last = now;
    const elapsed = now - this.#start;
    const pct = this.#total > 0 ? Math.floor((100 * done) / this.#total) : 100;
    let text = `${this.#label} ${done}/${this.#total} (${pct}%), ${
      formatDuration(elapsed)
    } elapsed`;
    if (done > 0 && done < this.#total) {
      text += `, ~${formatDuration((elapsed / done) * (this.#total - done))} left`;
    }
    if (this.#terminal) {
      this.#write(`\r${text}\x1b[K`);
      this.#drawn = true;
    } else {
      this.#write(`${text}\n`);
    }
  }

  /** Erases the line on a terminal; no more output after this. */
  close(): void {
    if (this.#closed) return;
    if (this.#terminal && this.#drawn) this.#write("\r\x1b[K");
    this.#closed = true;
  }

  /** Same as {@link ProgressLine.close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  #write(text: string): void {
    let bytes = this.#encoder.encode(text);
    try {
      while (bytes.length > 0) {
        const n = this.#sink.writeSync(bytes);
        if (n <= 0) break;
        bytes = bytes.subarray(n);
      }
    } catch {
      this.#closed = true;
    }
  }
}

// ---------------------------------------------------------------- JSON

/** One result of a run, for the report. */
export type ResultReport =
  | ({ kind: "buffer"; file?: string } & ArrayData)
  | { kind: "token" };

/** How one result compared with its `--expect` reference. */
export interface ExpectReport {
  /** The result's index. */
  index: number;
  /** The reference file. */
  file: string;
  /** Whether every element is within the tolerances. */
  match: boolean;
  /** The mismatch report (numpy's), when it does not match. */
  message?: string;
}

/** Everything a run reports. */
export interface RunReport {
  /** The library or module path. */
  target: string;
  /** The handler's symbol or export name. */
  handler: string;
  /** The stage run. */
  stage: ExecutionStage;
  /** The platform. */
  platform: Platform;
  /** Results in order. */
  results: ResultReport[];
  /** Call times, when the handler ran more than once. */
  timing?: TimingSummary;
  /** The handler's error, when it returned one (`hint`: the module's suggestion, apart from XLA's text). */
  error?: { code: ErrorCode; message: string; hint?: string };
  /** The `--expect` comparisons, when any were asked for. */
  expect?: ExpectReport[];
}

const _rawJSON = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

function _jsonValue(dtype: DataType, v: number | bigint | boolean): unknown {
  if (typeFacts(dtype)?.kind === "pred") return Boolean(v);
  if (typeof v === "bigint") return _rawJSON ? _rawJSON(v.toString()) : v.toString();
  if (typeof v === "boolean") return v ? 1 : 0;
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  return v;
}

/**
 * The JSON text of a run's report (one line). Shape:
 *
 * ```text
 * { "target": "./lib.so", "handler": "scale", "stage": "execute", "platform": "host",
 *   "results": [ { "index": 0, "dtype": "f32", "shape": [2, 3], "values": [1, 2, …] },
 *                { "index": 1, "dtype": "s32", "shape": [4], "file": "y.npy" },
 *                { "index": 2, "dtype": "token" } ],
 *   "timing": { "calls": 100, "medianMs": …, "minMs": …, "maxMs": …, "meanMs": … } | null,
 *   "error": { "code": "INVALID_ARGUMENT", "message": "…" } | null,
 *   "expect": [ { "index": 0, "file": "ref.npy", "match": false, "message": "…" } ] }
 * ```
 *
 * `expect` is there only when `--expect` was given. `values` are flat, row-major (C order); complex elements are `[re, im]` pairs; pred
 * elements `true`/`false`; NaN and infinities the strings `"nan"`, `"inf"`,
 * `"-inf"`; 64-bit integers exact JSON numbers (parse them with a
 * big-integer-aware reader). A result written to a file has `file` and no
 * `values`.
 *
 * @example
 * ```ts
 * import { DataType, ExecutionStage } from "@deno-xla/ffi";
 * import { formatRunJson } from "./format.ts";
 * console.log(formatRunJson({
 *   target: "./lib.so", handler: "h", stage: ExecutionStage.EXECUTE, platform: "host",
 *   results: [{ kind: "buffer", dtype: DataType.S64, dims: [2], values: [1n, 2n ** 60n] }],
 * }));
 * ```
 */
export function formatRunJson(report: RunReport): string {
  const results = report.results.map((r, index) => {
    if (r.kind === "token") return { index, dtype: "token" };
    const out: Record<string, unknown> = {
      index,
      dtype: typeName(r.dtype),
      shape: [...r.dims],
    };
    if (r.file !== undefined) {
      out.file = r.file;
      return out;
    }
    const { count, per } = _checkValues(r);
    const values: unknown[] = new Array(count);
    for (let i = 0; i < count; i++) {
      values[i] = per === 2
        ? [_jsonValue(r.dtype, r.values[2 * i]!), _jsonValue(r.dtype, r.values[2 * i + 1]!)]
        : _jsonValue(r.dtype, r.values[i]!);
    }
    out.values = values;
    return out;
  });
  return JSON.stringify({
    target: report.target,
    handler: report.handler,
    stage: stageName(report.stage),
    platform: report.platform,
    results,
    timing: report.timing ?? null,
    error: report.error
      ? {
        code: ErrorCode[report.error.code] ?? String(report.error.code),
        message: report.error.message,
        ...(report.error.hint !== undefined ? { hint: report.error.hint } : {}),
      }
      : null,
    ...(report.expect ? { expect: report.expect } : {}),
  });
}

/** A run as the command line parsed it: what its report names. */
export interface ReportedRun {
  /** The library or module. */
  target: { path: string };
  /** The handler's symbol or export name. */
  handler: string;
  /** The stage run. */
  stage: ExecutionStage;
  /** The platform. */
  platform: Platform;
}

/**
 * The report line (with its newline) of `run` and what came of it: the
 * {@link formatRunJson} every way of running prints (in process, or in the
 * child process that reports a crash or a timeout as an error with no
 * results).
 *
 * @example
 * ```ts
 * import { ErrorCode, ExecutionStage } from "@deno-xla/ffi";
 * import { runReportLine } from "./format.ts";
 * const run = {
 *   target: { path: "./lib.so" }, handler: "h", stage: ExecutionStage.EXECUTE, platform: "host",
 * } as const;
 * console.log(runReportLine(run, { error: { code: ErrorCode.ABORTED, message: "crashed" } }));
 * ```
 */
export function runReportLine(
  run: ReportedRun,
  outcome: Partial<Pick<RunReport, "results" | "timing" | "error" | "expect">>,
): string {
  return formatRunJson({
    target: run.target.path,
    handler: run.handler,
    stage: run.stage,
    platform: run.platform,
    results: outcome.results ?? [],
    timing: outcome.timing,
    error: outcome.error,
    expect: outcome.expect,
  }) + "\n";
}
