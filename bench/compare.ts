/**
 * Side-by-side benchmark: the cost of decoding an XLA FFI call frame in a
 * handler, driven from C the way an XLA runtime calls handlers, for
 *
 *   1. our TypeScript handler path (same thread; foreign threads);
 *   2. a warp-style Python ctypes decoder (bench/python/warp_style.py);
 *   3. a C decoder of the same frame (the floor);
 *   4. a native no-op handler through our runtime vs called directly: from
 *      JS (Runtime.callSync vs a direct Deno FFI call) and in C loops
 *      (Runtime.callOnThreads vs bench_drive);
 *
 * on three frames (standard, small, large). Contenders run interleaved in
 * rounds; the table shows the median and the min–max over the rounds, and
 * the ratios. Every contender's decode is digested (canonical text + FNV-1a,
 * see bench/native/c_decoder.c) and must agree with the C floor's.
 * Writes bench/results.md (keeping what follows its "kept" marker),
 * bench/results.svg and the benchmark section of docs/performance.md
 * (between its bench:compare markers). Exits non-zero only when a
 * contender fails to run or the digests disagree; contenders that are not
 * available here are reported with the reason.
 *
 * `deno task bench:compare [--rounds N] [--target-ms MS] [--threads K] [--no-write]`
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { NativeHandler } from "../src/runtime/handler_library.ts";
import { Runtime } from "../src/runtime/runtime.ts";
import { CallFrameBuilder } from "../src/runtime/call_frame.ts";
import { digestHex, drive, FRAMES, openBenchLibrary } from "./bench_lib.ts";
import { frameDigest, readFrameForDigest } from "./digest.ts";
import { mirrorFrame } from "./runtime_frames.ts";
import { renderLogBarChart } from "./svg_chart.ts";
import { TsHandlers } from "./ts_handlers.ts";

/**
 * How a contender is called: by the C driver on its calling thread (threads
 * 0) or on k foreign threads, or (threads -1) from a JS loop, one FFI call
 * per handler call.
 */
interface Mode {
  key: string;
  label: string;
  threads: number;
}

/** One measurement. */
interface Sample {
  nsPerCall: number;
  /** Digest of the contender's own decode; null for contenders that decode nothing. */
  digest: string | null;
}

/** A contender: `unavailable` is null when it can run, else the reason. */
interface Contender {
  key: string;
  label: string;
  unavailable: string | null;
  /** Modes it runs in (keys of MODES). */
  modes: readonly string[];
  measure(frame: number, mode: Mode, iters: number): Promise<Sample>;
  close?(): Promise<void> | void;
}

const { values: opts } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "7" },
    "target-ms": { type: "string", default: "60" },
    threads: { type: "string", default: "2" },
    "no-write": { type: "boolean", default: false },
  },
});
const ROUNDS = Math.max(1, Number(opts.rounds));
const TARGET_NS = Math.max(1, Number(opts["target-ms"])) * 1e6;
const K = Math.max(1, Number(opts.threads));

/** Modes of the decode contenders (all driven from C). */
const MODES: readonly Mode[] = [
  { key: "same", label: "same thread", threads: 0 },
  { key: "foreign1", label: "1 foreign thread", threads: 1 },
  { key: `foreign${K}`, label: `${K} foreign threads`, threads: K },
];
/** The no-op contenders also run from a JS loop. */
const JS_MODE: Mode = { key: "js", label: "JS loop", threads: -1 };
const ALL_MODES: readonly Mode[] = [JS_MODE, ...MODES];

const lib = openBenchLibrary();
const S = lib.symbols;
const address = (which: number): Deno.PointerObject => {
  const p = S.bench_c_address(which);
  if (p === null) throw new Error(`bench_c_address(${which}) returned NULL`);
  return p;
};
const frameOf = (which: number): Deno.PointerObject => {
  const f = S.bench_frame(which);
  if (f === null) throw new Error(`bench_frame(${which}) returned NULL`);
  return f;
};
// The bench frames carry our runtime's API table and an execution context of it
// (taken from a frame the runtime built): a TS handler reports errors through
// XLA_FFI_Error_Create, and without an API a failed call would reach the
// driver as a success (the handler entry can only print the message).
const ctxFrame = new CallFrameBuilder().build();
S.bench_frame_set_context(Runtime.api, new Deno.UnsafePointerView(ctxFrame.pointer).getPointer(24));

// ---- contender 3: the C floor --------------------------------------------
const cFloor: Contender = {
  key: "c",
  label: "C floor",
  unavailable: null,
  modes: MODES.map((m) => m.key),
  async measure(frame, mode, iters) {
    S.bench_c_take_digest();
    const ns = await drive(lib, address(0), frame, iters, mode.threads, address(2));
    const d = S.bench_c_take_digest();
    if (d === 0n) throw new Error("the C floor recorded no digest (decode failed)");
    return { nsPerCall: ns, digest: digestHex(d) };
  },
};

// ---- contender 2: warp-style Python ctypes ---------------------------------
function pythonContender(libPath: string): Contender {
  const script = fileURLToPath(new URL("python/warp_style.py", import.meta.url));
  let child: Deno.ChildProcess | undefined;
  let writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  let lines: AsyncIterator<string> | undefined;
  let unavailable: string | null = null;
  let numpy = "";
  try {
    const probe = new Deno.Command("python3", {
      args: [
        "-c",
        "import ctypes, sys\ntry:\n import numpy; n = ', numpy ' + numpy.__version__\n" +
        "except ImportError:\n n = ', no numpy'\nprint(sys.version.split()[0] + n)",
      ],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!probe.success) unavailable = "python3 with ctypes did not start";
    else numpy = new TextDecoder().decode(probe.stdout).trim();
  } catch (e) {
    unavailable = `python3 is not available (${(e as Error).message})`;
  }
  async function* splitLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        yield buf.slice(0, i);
        buf = buf.slice(i + 1);
      }
    }
  }
  return {
    key: "python",
    label: "warp-style Python ctypes",
    unavailable,
    modes: MODES.map((m) => m.key),
    get version() {
      return numpy;
    },
    async measure(frame, mode, iters) {
      const threads = mode.threads;
      if (!child) {
        child = new Deno.Command("python3", {
          args: [script, "--lib", libPath, "--serve"],
          stdin: "piped",
          stdout: "piped",
          stderr: "inherit",
        }).spawn();
        writer = child.stdin.getWriter();
        lines = splitLines(child.stdout);
      }
      await writer!.write(
        new TextEncoder().encode(JSON.stringify({ frame, threads, iters }) + "\n"),
      );
      const next = await lines!.next();
      if (next.done) throw new Error("the Python contender exited");
      const r = JSON.parse(next.value);
      if (r.error) throw new Error(`Python contender: ${r.error}`);
      if (r.errors !== 0) throw new Error(`Python handler failed ${r.errors} times: ${r.failure}`);
      return { nsPerCall: r.ns_per_call, digest: r.digest };
    },
    async close() {
      if (child) {
        await writer!.close();
        await child.status;
      }
    },
  } as Contender;
}

// ---- contender 1: our TS handler path ---------------------------------------
// One TS handler per frame (bench/ts_handlers.ts) bound to every operand of
// the frame; driven from C like the others. Same thread: the driver runs on
// the JS thread and the handler's entry calls JS inline. Foreign threads: the
// driver runs off the JS thread (nonblocking) and the entry queues each call
// for the JS thread. The digest is computed from the handler's last decode
// after the timed loop.
const ts = new TsHandlers();
const tsHandler: Contender = {
  key: "ts",
  label: "ours: TS handler",
  unavailable: null,
  modes: MODES.map((m) => m.key),
  async measure(frame, mode, iters) {
    ts.reset(frame);
    const ns = await drive(lib, ts.pointer(frame), frame, iters, mode.threads);
    return { nsPerCall: ns, digest: ts.digest(frame) };
  },
  close() {
    ts.close();
  },
};

// ---- contender 4: native no-op, direct and through our runtime --------------
// The same C function (bench_noop_handler) both ways. From JS: a loop of
// direct Deno FFI calls of it vs a loop of Runtime.callSync with it
// (registered with the runtime and looked up once, as XLA resolves a custom
// call's handler at compile time) on a reused runtime frame. In C: bench_drive
// loops vs Runtime.callOnThreads' C loops (k runtime threads, `iters` calls
// each; wall time / iters, so thread start-up is included, amortised).
// Runtime frames mirror the bench frames (same buffers and attributes).
const noopLib = Deno.dlopen(lib.path, {
  bench_noop_handler: { parameters: ["pointer"], result: "pointer" },
});
const runtime = new Runtime({ threads: 1 });
runtime.register("bench_noop", new NativeHandler(address(1), "bench_noop_handler"));
const noopRef = runtime.lookup("bench_noop").bundle.execute!;
const rtFrames = FRAMES.map((f) => mirrorFrame(frameOf(f.id)));

/** ns per call of `iters` calls of `call` in a JS loop; throws when a call fails. */
function jsLoop(iters: number, call: () => boolean): number {
  let failures = 0;
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) if (!call()) failures++;
  const ns = (performance.now() - t0) * 1e6 / iters;
  if (failures > 0) throw new Error(`${failures} of ${iters} calls failed`);
  return ns;
}

const noopDirect: Contender = {
  key: "noop_direct",
  label: "C no-op, direct call",
  unavailable: null,
  modes: ALL_MODES.map((m) => m.key),
  async measure(frame, mode, iters) {
    if (mode.threads < 0) {
      const fn = noopLib.symbols.bench_noop_handler, fp = frameOf(frame);
      return { nsPerCall: jsLoop(iters, () => fn(fp) === null), digest: null };
    }
    return { nsPerCall: await drive(lib, address(1), frame, iters, mode.threads), digest: null };
  },
};
const noopRuntime: Contender = {
  key: "noop_runtime",
  label: "C no-op, through our runtime",
  unavailable: null,
  modes: ALL_MODES.filter((m) => m.threads !== 0).map((m) => m.key),
  async measure(frame, mode, iters) {
    const rf = rtFrames[frame]!;
    if (mode.threads < 0) {
      return {
        nsPerCall: jsLoop(iters, () => {
          runtime.callSync(noopRef, rf);
          return true;
        }),
        digest: null,
      };
    }
    const t0 = performance.now();
    const r = await runtime.callOnThreads(noopRef, rf, {
      threads: mode.threads,
      iterations: iters,
    });
    const ns = (performance.now() - t0) * 1e6 / iters;
    if (r.failed > 0) throw new Error(`${r.failed} calls failed: ${r.firstError?.message}`);
    return { nsPerCall: ns, digest: null };
  },
  close() {
    for (const f of rtFrames) f.close();
    runtime.close();
    noopLib.close();
  },
};

// ---- running ------------------------------------------------------------------
const libPath = lib.path;
const python = pythonContender(libPath);
const contenders: Contender[] = [tsHandler, python, cFloor, noopDirect, noopRuntime];
const running = contenders.filter((c) => c.unavailable === null);
for (const c of contenders) {
  if (c.unavailable) console.log(`skip ${c.label}: ${c.unavailable}`);
}

type Key = string; // `${contender}/${frame}/${mode}`
const keyOf = (c: string, f: number, m: string): Key => `${c}/${f}/${m}`;
const iters = new Map<Key, number>();
const samples = new Map<Key, number[]>();
const digests = new Map<Key, Set<string>>();
let failed = false;

async function measureOnce(c: Contender, f: number, m: Mode, n: number): Promise<Sample | null> {
  try {
    return await c.measure(f, m, n);
  } catch (e) {
    console.error(`FAIL ${c.label}, ${FRAMES[f]!.name}, ${m.label}: ${(e as Error).message}`);
    failed = true;
    return null;
  }
}

// Calibration: pick iterations so one measurement takes about TARGET_NS.
for (const c of running) {
  for (const f of FRAMES) {
    for (const m of ALL_MODES.filter((m) => c.modes.includes(m.key))) {
      let n = 16;
      let s = await measureOnce(c, f.id, m, n);
      while (s && s.nsPerCall * n < TARGET_NS / 8 && n < 1 << 26) {
        n *= 4;
        s = await measureOnce(c, f.id, m, n);
      }
      if (!s) continue;
      iters.set(keyOf(c.key, f.id, m.key), Math.max(16, Math.round(TARGET_NS / s.nsPerCall)));
    }
  }
}

// Rounds: every contender once per frame and mode, in an order rotated each round.
const plan: [Contender, number, Mode][] = [];
for (const f of FRAMES) {
  for (const m of ALL_MODES) {
    for (const c of running) if (c.modes.includes(m.key)) plan.push([c, f.id, m]);
  }
}
const loadBefore = commandOutput("cat", "/proc/loadavg").split(" ").slice(0, 3).join(" ");
const t0 = performance.now();
for (let r = 0; r < ROUNDS && !failed; r++) {
  for (let i = 0; i < plan.length; i++) {
    const [c, f, m] = plan[(i + r * 3) % plan.length]!;
    const k = keyOf(c.key, f, m.key);
    const n = iters.get(k);
    if (n === undefined) continue;
    const s = await measureOnce(c, f, m, n);
    if (!s) continue;
    (samples.get(k) ?? samples.set(k, []).get(k)!).push(s.nsPerCall);
    if (s.digest !== null) (digests.get(k) ?? digests.set(k, new Set()).get(k)!).add(s.digest);
  }
}
const elapsed = (performance.now() - t0) / 1000;

// Digest agreement: every decoding contender, every mode, must match the C floor's.
const floorDigest = new Map<number, string>();
for (const f of FRAMES) {
  const want = digests.get(keyOf("c", f.id, "same"));
  if (!want || want.size !== 1) {
    console.error(`FAIL C floor digest of ${f.name} missing or unstable`);
    failed = true;
    continue;
  }
  const floor = [...want][0]!;
  floorDigest.set(f.id, floor);
  // An independent TS reading of the frame (UnsafePointerView) must agree too.
  const read = readFrameForDigest(frameOf(f.id));
  const reference = frameDigest(read);
  if (reference !== floor) {
    console.error(`FAIL digest of the TS reference reader on ${f.name}: ${reference}`);
    failed = true;
  }
  // The runtime's mirror of the frame (used by the no-op rows) holds the same operands.
  const mirrored = frameDigest(readFrameForDigest(rtFrames[f.id]!.pointer));
  if (mirrored !== floor) {
    console.error(`FAIL digest of the runtime's copy of ${f.name}: ${mirrored} != ${floor}`);
    failed = true;
  }
  for (const [k, set] of digests) {
    const [c, fi, mode] = k.split("/");
    if (Number(fi) !== f.id) continue;
    if (set.size !== 1 || !set.has(floor)) {
      console.error(
        `FAIL digest of ${c} on ${f.name} (${mode}): ${[...set].join(",")} != ${floor}`,
      );
      failed = true;
    }
  }
}
for (const c of running) await c.close?.();

// ---- statistics and reporting ---------------------------------------------
const SECTION_START = "<!-- bench:compare:start -->";
/** In bench/results.md: what follows this line is not rewritten. */
const KEPT = "<!-- kept: not written by bench:compare -->";
const SECTION_END = "<!-- bench:compare:end -->";

/** Replaces docs/performance.md's text between the bench:compare markers (when present). */
function updateGuide(body: string): void {
  const url = new URL("../docs/performance.md", import.meta.url);
  const text = Deno.readTextFileSync(url);
  const a = text.indexOf(SECTION_START), b = text.indexOf(SECTION_END);
  if (a < 0 || b < a) {
    console.log("docs/performance.md has no bench:compare markers: not updated");
    return;
  }
  Deno.writeTextFileSync(
    url,
    `${text.slice(0, a + SECTION_START.length)}\n${body}\n${text.slice(b)}`,
  );
  // Keep the guide in `deno fmt` shape (tables aligned) so `deno task check` stays clean.
  try {
    new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", fileURLToPath(url)], stderr: "null" })
      .outputSync();
  } catch { /* formatting is cosmetic */ }
}

/** stdout of a command, trimmed; "" when it cannot run. */
function commandOutput(cmd: string, ...args: string[]): string {
  try {
    const out = new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : "";
  } catch {
    return "";
  }
}

interface Stat {
  median: number;
  min: number;
  max: number;
}
function stat(k: Key): Stat | null {
  const xs = [...(samples.get(k) ?? [])].sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  const median = xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  return { median, min: xs[0]!, max: xs[xs.length - 1]! };
}
function fmtNs(ns: number): string {
  if (ns < 1e3) return `${ns.toPrecision(3)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${(ns / 1e6).toPrecision(3)} ms`;
}
const cell = (s: Stat | null) => s ? `${fmtNs(s.median)} (${fmtNs(s.min)}–${fmtNs(s.max)})` : "n/a";
const ratio = (a: Stat | null, b: Stat | null) => {
  if (!a || !b) return "n/a";
  const r = a.median / b.median;
  return `${r >= 100 ? Math.round(r) : r.toPrecision(3)}×`;
};

const decodeRows: string[] = [
  "| frame | caller | ours: TS handler | warp-style Python | C floor | ours / peer | ours / floor | peer / floor |",
  "|---|---|---:|---:|---:|---:|---:|---:|",
];
const chartGroups: { label: string; values: (number | null)[] }[] = [];
for (const f of FRAMES) {
  for (const m of MODES) {
    const ts = stat(keyOf("ts", f.id, m.key));
    const py = stat(keyOf("python", f.id, m.key));
    const c = stat(keyOf("c", f.id, m.key));
    decodeRows.push(
      `| ${f.name} | ${m.label} | ${cell(ts)} | ${cell(py)} | ${cell(c)} | ${ratio(ts, py)} | ${
        ratio(ts, c)
      } | ${ratio(py, c)} |`,
    );
    const nd = stat(keyOf("noop_direct", f.id, m.key));
    chartGroups.push({
      label: `${f.name}, ${m.label}`,
      values: [ts?.median ?? null, py?.median ?? null, c?.median ?? null, nd?.median ?? null],
    });
  }
}
/** The no-op rows' callers: what each side does per call. */
const NOOP_CALLERS: [Mode, string][] = [
  [JS_MODE, "JS loop: `Runtime.callSync` vs a direct Deno FFI call"],
  [MODES[0]!, "C loop on the calling thread (direct only)"],
  [MODES[1]!, "C loop on 1 thread: `Runtime.callOnThreads` vs `bench_drive`"],
  [MODES[2]!, `C loop on ${K} threads (per thread): \`callOnThreads\` vs \`bench_drive\``],
];
const noopRows: string[] = [
  "| frame | caller | no-op through our runtime | no-op direct call | runtime / direct |",
  "|---|---|---:|---:|---:|",
];
for (const f of FRAMES) {
  for (const [m, label] of NOOP_CALLERS) {
    const rt = stat(keyOf("noop_runtime", f.id, m.key));
    const d = stat(keyOf("noop_direct", f.id, m.key));
    noopRows.push(`| ${f.name} | ${label} | ${cell(rt)} | ${cell(d)} | ${ratio(rt, d)} |`);
  }
}

console.log("\nDecode cost per handler call (median over rounds, min–max in brackets):\n");
console.log(decodeRows.join("\n"));
console.log("\nNative no-op handler call:\n");
console.log(noopRows.join("\n"));
console.log(`\n${ROUNDS} rounds in ${elapsed.toFixed(1)} s; digests:`);
for (const f of FRAMES) console.log(`  ${f.name}: ${floorDigest.get(f.id) ?? "missing"}`);

if (!opts["no-write"] && !failed) {
  const cpu = commandOutput("lscpu").match(/Model name:\s*(.+)/)?.[1]?.trim() ?? "unknown CPU";
  const system = commandOutput("uname", "-srm") || Deno.build.os;
  const loadAfter = commandOutput("cat", "/proc/loadavg").split(" ").slice(0, 3).join(" ");
  const load = loadBefore ? ` (load average ${loadBefore} before, ${loadAfter} after)` : "";
  const machine = `${cpu}, ${navigator.hardwareConcurrency} logical cores, ${system}${load}`;
  const versions = `Deno ${Deno.version.deno}, Python ${
    (python as Contender & { version: string }).version || "n/a"
  }`;
  const date = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const skipped = contenders.filter((c) => c.unavailable).map((c) =>
    `- ${c.label}: ${c.unavailable}`
  );
  const md = [
    "# Side-by-side: decoding an XLA FFI call frame in a handler",
    "",
    `Date: ${date}. Machine: ${machine}. ${versions}.`,
    "",
    `Command: \`deno task bench:compare${
      Deno.args.length ? " " + Deno.args.join(" ") : ""
    }\` (${ROUNDS} rounds, ~${TARGET_NS / 1e6} ms per measurement, k = ${K}; ${
      elapsed.toFixed(0)
    } s).`,
    "",
    "Every handler is called from C by `bench_drive` (bench/native/driver.c), on the calling",
    "thread or on foreign pthreads, as an XLA runtime calls it; per-call latency (with k",
    "threads: the mean of each thread's latency). Each cell: median over the rounds, min–max",
    "in brackets; contenders run interleaved, so load from other processes hits all of them.",
    "Ours: one TS handler per frame (bench/ts_handlers.ts, `Ffi.bind()` with every buffer,",
    "its dtype and rank, the stage, and every attribute by name and kind; dictionary entries",
    "read with `Dictionary.get`), called through its C entry point: inline on the JS thread,",
    "or queued from foreign threads to the JS thread. The peer: bench/python/warp_style.py.",
    "The C floor: bench/native/c_decoder.c. The no-op rows call the same C function",
    "(`bench_noop_handler`) directly and through our embedded runtime (registered, looked up",
    "once, frames of the runtime that mirror the bench frames); with threads, the runtime",
    "side is the wall time of `Runtime.callOnThreads` / calls per thread (thread start",
    "included, amortised).",
    "Frames:",
    ...FRAMES.map((f) => `- ${f.name}: ${f.what}`),
    "",
    "![chart](results.svg)",
    "",
    ...decodeRows,
    "",
    ...noopRows,
    "",
    "Every contender's decode digests to the same value per frame (checked each run):",
    ...FRAMES.map((f) => `- ${f.name}: \`${floorDigest.get(f.id)}\``),
    "",
    ...(skipped.length ? ["Not measured in this run:", ...skipped, ""] : []),
  ].join("\n");
  const svg = renderLogBarChart({
    title: "Handler call + frame decode, per call (median; lower is better)",
    unit: "ns per call",
    series: [tsHandler.label, python.label, cFloor.label, noopDirect.label],
    groups: chartGroups,
    formatTick: (v) =>
      v < 1e3 ? `${v} ns` : v < 1e6 ? `${v / 1e3} µs` : v < 1e9 ? `${v / 1e6} ms` : `${v / 1e9} s`,
    formatValue: fmtNs,
  });
  // Notes written by hand after the KEPT marker (how the TS handler path got its
  // figures, the real-XLA rows of bench/real_xla.ts) stay as they are.
  const resultsUrl = new URL("results.md", import.meta.url);
  let kept = "";
  try {
    const old = Deno.readTextFileSync(resultsUrl);
    const at = old.indexOf(KEPT);
    if (at >= 0) kept = "\n" + old.slice(at);
  } catch { /* no earlier results */ }
  Deno.writeTextFileSync(resultsUrl, md + kept);
  updateGuide(
    [
      `${date}; ${machine}; ${versions}.`,
      `Command: \`deno task bench:compare${
        Deno.args.length ? " " + Deno.args.join(" ") : ""
      }\`. Details and the frames: [bench/results.md](../bench/results.md).`,
      "",
      "![Per-call cost of a handler call with a full frame decode, log scale](../bench/results.svg)",
      "",
      ...decodeRows,
      "",
      ...noopRows,
      ...(skipped.length ? ["", "Not measured in this run:", ...skipped] : []),
    ].join("\n"),
  );
  Deno.writeTextFileSync(new URL("results.svg", import.meta.url), svg);
  console.log(
    "wrote bench/results.md, bench/results.svg and docs/performance.md's benchmark section",
  );
}
S.bench_frame_set_context(null, null);
ctxFrame.close();
lib.close();
if (failed) Deno.exit(1);
