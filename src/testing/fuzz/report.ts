/**
 * Reporting failures: the `cli run` line that reproduces a call, the
 * `.npy` files of a failure's arguments and expected results, and a fuzz
 * report as text (`formatFuzzReport`).
 *
 * @module
 */
import { DataType } from "../../abi/enums.ts";
import { typeName } from "../../spec/type_names.ts";
import type { AttrValue } from "../../spec/grammar.ts";
import { saveNpy } from "../../npy.ts";
import type { FuzzCase, FuzzFailure, FuzzOptions, FuzzReport } from "./types.ts";
import type { _Caller } from "./caller.ts";

/** A word for a POSIX shell: quoted when it holds anything but safe characters. */
export function _shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

// ------------------------------------------------------------------ reproduction

function _attrText(name: string, v: AttrValue, out: string[]): void {
  const num = (x: number | bigint, dtype: DataType) => {
    if (dtype === DataType.PRED) return x ? "true" : "false";
    if (typeof x === "bigint") return x.toString();
    if (Number.isNaN(x)) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (Object.is(x, -0)) return "-0";
    return String(x);
  };
  switch (v.kind) {
    case "string":
      out.push(`${name}=str:${v.value}`);
      break;
    case "scalar":
      out.push(`${name}=${typeName(v.dtype)}:${num(v.value, v.dtype)}`);
      break;
    case "array":
      out.push(
        `${name}=${typeName(v.dtype)}[]:${
          (v.values as (number | bigint)[]).map((x) => num(x, v.dtype)).join(",")
        }`,
      );
      break;
    case "dictionary":
      for (const [k, e] of v.entries) _attrText(`${name}.${k}`, e, out);
      break;
  }
}

/**
 * @internal The `cli run` arguments (after `cli`) that call `handler` of
 * `library` with case `c`, its arguments read from `files`.
 */
export function _runCommand(
  library: string | readonly string[],
  handler: string,
  c: FuzzCase,
  files: readonly string[],
  extra: readonly string[],
): string[] {
  const argv = ["run", ...(typeof library === "string" ? [library] : library), handler];
  for (const f of files) argv.push("--arg", f);
  for (const r of c.results) {
    argv.push(
      "--ret",
      r.shape.length === 0 ? typeName(r.dtype) : `${typeName(r.dtype)}[${r.shape.join(",")}]`,
    );
  }
  const attrs: string[] = [];
  for (const [name, v] of c.attrs.entries) _attrText(name, v, attrs);
  for (const a of attrs) argv.push("--attr", a);
  return [...argv, ...extra];
}

/**
 * Writes each failure's arguments (and a mismatch's expected results) as `.npy` files to `outDir`,
 * and sets its reproducing command.
 */
export function _writeFailures(
  failures: FuzzFailure[],
  options: FuzzOptions,
  caller: _Caller,
): void {
  const dir = options.outDir!;
  Deno.mkdirSync(dir, { recursive: true });
  for (const [n, f] of failures.entries()) {
    const files = f.case.args.map((a, i) => {
      const path = `${dir}/failure-${n + 1}-arg${i}.npy`;
      saveNpy(path, { dtype: a.dtype, shape: a.shape, data: a.data });
      return path;
    });
    const extra = ["--guard"];
    if (f.kind === "hang") extra.push("--timeout", String(options.timeoutMs ?? 1000));
    if (options.instantiate !== undefined) extra.push("--instantiate", options.instantiate);
    for (const t of options.stateTypes ?? []) {
      extra.push("--type", `${t.endsWith("_type_id") ? t.slice(0, -8) : t}=${t}`);
    }
    for (const [i, w] of (f.expected ?? []).slice(0, f.case.results.length).entries()) {
      const spec = f.case.results[i]!;
      const path = `${dir}/failure-${n + 1}-expect${i}.npy`;
      const data = new Uint8Array(w.buffer, w.byteOffset, w.byteLength);
      saveNpy(path, { dtype: spec.dtype, shape: [...spec.shape], data });
      files.push(path);
      extra.push("--expect", path);
    }
    f.files = files;
    const argFiles = files.slice(0, f.case.args.length);
    if (caller.library !== undefined) {
      f.command = _runCommand(caller.library, caller.name!, f.case, argFiles, extra);
    } else if (caller.module !== undefined) {
      // `cli run --python-module` runs it in a child process too: a crash exits 6.
      const { name, from } = caller.module;
      const target = ["--python-module", name];
      if (from.initialize !== undefined) target.push("--initialize", from.initialize);
      if (from.platform !== undefined) target.push("--module-platform", from.platform);
      f.command = _runCommand(target, caller.name!, f.case, argFiles, extra);
    }
  }
}

function _caseText(c: FuzzCase): string {
  const parts = c.args.map((a) => `${typeName(a.dtype)}[${a.shape.join(",")}]`);
  const attrs: string[] = [];
  for (const [name, v] of c.attrs.entries) _attrText(name, v, attrs);
  return parts.join(" ") + (attrs.length > 0 ? ` ${attrs.join(" ")}` : "");
}

/**
 * A fuzz report as text: one line of totals, then a table with each
 * distinct failure once (its kind, what it names, how many runs had it,
 * the shrunk call), and each failure's message and reproducing command.
 *
 * @example
 * ```ts
 * import { formatFuzzReport } from "@deno-xla/ffi/testing";
 * console.log(formatFuzzReport({
 *   signature: { args: [], results: [], attrs: [], variadicArgs: false, variadicResults: false,
 *     decodes: true, unknown: [], probes: 1 },
 *   runs: 10, rejected: 0, seconds: 0.01, runsPerSecond: 1000, resultsChecked: true,
 *   failures: [], seed: 1,
 * }).split("\n")[0]); // "10 runs in 0.01 s (1000 runs/s), seed 1: no failures"
 * ```
 */
export function formatFuzzReport(report: FuzzReport, commandPrefix = "cli"): string {
  const n = report.failures.length;
  const lines = [
    `${report.runs} runs in ${report.seconds.toFixed(2)} s (${Math.round(report.runsPerSecond)} ` +
    `runs/s), seed ${report.seed}: ${
      n === 0 ? "no failures" : `${n} distinct failure${n === 1 ? "" : "s"}`
    }` +
    (report.rejected > 0 ? ` (${report.rejected} calls refused by the handler)` : ""),
  ];
  if (!report.resultsChecked) {
    lines.push(
      "results: like:0 or a guess (no --ret rule), so writes outside results do not count",
    );
  }
  const out = report.output;
  if (out !== undefined && out.bytes > 0) {
    const head = out.head.split("\n").filter((l) => l.trim() !== "").slice(0, 3);
    lines.push(
      `the handler wrote ${out.lines} line${out.lines === 1 ? "" : "s"} (${out.bytes} bytes) ` +
        `to stdout and stderr, not shown${head.length > 0 ? "; the first:" : ""}`,
    );
    for (const l of head) lines.push(`  ${l.length > 160 ? `${l.slice(0, 160)}…` : l}`);
  }
  if (n === 0) return lines.join("\n") + "\n";
  const rows = report.failures.map((f, i) => [
    String(i + 1),
    f.kind,
    f.detail || "-",
    String(f.count),
    _caseText(f.case),
  ]);
  const head = ["#", "failure", "where", "runs", "shrunk call"];
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const fmt = (r: string[]) =>
    r.map((c, k) => k === r.length - 1 ? c : c.padEnd(widths[k]!)).join("  ");
  lines.push(fmt(head));
  for (const r of rows) lines.push(fmt(r));
  for (const [i, f] of report.failures.entries()) {
    // A mismatch keeps its numpy-style detail (which elements, how far); others their first line.
    const text = f.kind === "mismatch" ? f.message.split("\n") : [f.message.split("\n")[0]!];
    lines.push(`${i + 1}. ${text[0]}`);
    for (const more of text.slice(1)) if (more.trim() !== "") lines.push(`   ${more}`);
    if (f.command) lines.push(`   ${[commandPrefix, ...f.command].map(_shellWord).join(" ")}`);
  }
  return lines.join("\n") + "\n";
}
