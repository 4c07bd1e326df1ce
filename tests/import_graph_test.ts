/**
 * Imports run downward (docs/architecture.md, "Rooms"). This test reads the
 * static relative imports and re-exports of every TS file of the module
 * (each entry of deno.json and every file under src/) and fails on:
 *
 * - a file that belongs to no room (a new folder is placed on purpose);
 * - an import from a lower room to a higher one;
 * - a circle of value imports between files.
 *
 * Type-only imports (`import type`, `export type`, or every name marked
 * `type`) are erased before the module runs, so they count for the rooms
 * but not for circles. The house's older arrows are gone, and the lists of
 * those allowed to remain (below) are empty; an entry that no longer holds
 * fails too, so the lists only shrink.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/**
 * The rooms, lowest first. A file belongs to the first room with a prefix
 * of its path; it may import files of its own room and of the rooms below.
 */
const ROOMS: readonly { name: string; paths: readonly string[] }[] = [
  // The ABI as data (enums, layouts, readers, writers) and the one error class.
  { name: "abi", paths: ["src/abi/", "src/errors.ts"] },
  // Small helpers every room may use: resources, name suggestions, futures, .npy files.
  {
    name: "shared",
    paths: ["src/_closest.ts", "src/_resources.ts", "src/future.ts", "src/npy.ts"],
  },
  // The grammar of array specs, values, attributes and type names (CLI and fuzzer).
  { name: "spec", paths: ["src/spec/"] },
  // Our C library: its symbol table, compiling (or installing) and opening it, the ELF reader.
  { name: "native", paths: ["src/native/"] },
  // TS handlers: what any XLA calls.
  { name: "handler", paths: ["src/handler/"] },
  // The CUDA driver API.
  { name: "cuda", paths: ["src/cuda/"] },
  // The embedded runtime, our stand-in for XLA.
  { name: "runtime", paths: ["src/runtime/"] },
  // Real XLA: jax hosted in the process.
  { name: "xla", paths: ["src/xla/"] },
  // Building users' handler libraries and the example kernels; the generated files.
  { name: "build", paths: ["src/build/"] },
  // ./testing: assertions, leak checks, the handler fuzzer.
  { name: "testing", paths: ["src/testing/"] },
  // The command line's work.
  { name: "cli", paths: ["src/cli/"] },
  // The entries: named re-exports and the command line's main.
  { name: "entries", paths: ["mod.ts", "cli.ts"] },
];

/** Imports from a lower room to a higher one that remain, `from -> to`, with the reason. */
const ALLOWED_UPWARD: Readonly<Record<string, string>> = {};

/** Value imports that close a circle and remain, `from -> to`, with the reason. */
const ALLOWED_CIRCLE: Readonly<Record<string, string>> = {};

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** `import … from "…"`, `export … from "…"` and `import "…"` at a statement's start (deno fmt puts them at column 0). */
const STATEMENT = new RegExp(
  String.raw`^(import|export)(\s+type)?\s*` +
    String.raw`(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)` +
    String.raw`\s*from\s*"([^"]+)"|^import\s*"([^"]+)"`,
  "gm",
);

/** The relative imports of one file's source (specifiers as written, and whether only types). */
function importsOf(source: string): { specifier: string; typeOnly: boolean }[] {
  const out: { specifier: string; typeOnly: boolean }[] = [];
  for (const m of source.matchAll(STATEMENT)) {
    const specifier = m[4] ?? m[5]!;
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) continue;
    let typeOnly = m[2] !== undefined;
    const clause = m[3];
    if (!typeOnly && clause?.startsWith("{")) {
      const names = clause.slice(1, -1).split(",").map((n) => n.trim()).filter((n) => n !== "");
      typeOnly = names.length > 0 && names.every((n) => n.startsWith("type "));
    }
    out.push({ specifier, typeOnly });
  }
  return out;
}

function relative(url: URL): string {
  return decodeURIComponent(url.pathname.slice(ROOT.pathname.length));
}

function* walk(dir: URL): Generator<URL> {
  for (const e of Deno.readDirSync(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* walk(url);
    else if (e.isFile && e.name.endsWith(".ts")) yield url;
  }
}

/** Every file of the module (entries first, then src/) and its relative imports. */
function readGraph(): { files: string[]; entries: string[]; edges: Edge[] } {
  const config = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))) as {
    exports: Record<string, string>;
  };
  const entries = Object.values(config.exports).map((p) => relative(new URL(p, ROOT)));
  const files = new Set<string>();
  const edges: Edge[] = [];
  const todo = [...entries, ...[...walk(new URL("src/", ROOT))].map(relative).sort()];
  while (todo.length > 0) {
    const file = todo.shift()!;
    if (files.has(file)) continue;
    files.add(file);
    const url = new URL(file, ROOT);
    for (const { specifier, typeOnly } of importsOf(Deno.readTextFileSync(url))) {
      if (!specifier.endsWith(".ts")) continue; // JSON and other data
      const to = relative(new URL(specifier, url));
      edges.push({ from: file, to, typeOnly });
      todo.push(to);
    }
  }
  return { files: [...files], entries, edges };
}

function roomOf(file: string): number {
  return ROOMS.findIndex((r) =>
    r.paths.some((p) => p.endsWith("/") ? file.startsWith(p) : file === p)
  );
}

const graph = readGraph();

Deno.test("the import parser reads what the module writes", () => {
  const found = importsOf(
    [
      'import { a, type B } from "./a.ts";',
      'import type { C } from "../c.ts";',
      'import {\n  type D,\n  type E,\n} from "./de.ts";',
      'export { f } from "./f.ts";',
      'export type { G } from "./g.ts";',
      'export * from "./h.ts";',
      'import * as i from "./i.ts";',
      'import j, { k } from "./jk.ts";',
      'import "./side.ts";',
      'import { remote } from "jsr:@std/assert";',
      ' * import { inDoc } from "./doc.ts";',
      "export is a word at a line's start in a usage text;",
      'const s = `\nimport x from "./in_template.ts"`;', // column 0 inside a template: read, harmlessly
    ].join("\n"),
  );
  assert.deepEqual(found, [
    { specifier: "./a.ts", typeOnly: false },
    { specifier: "../c.ts", typeOnly: true },
    { specifier: "./de.ts", typeOnly: true },
    { specifier: "./f.ts", typeOnly: false },
    { specifier: "./g.ts", typeOnly: true },
    { specifier: "./h.ts", typeOnly: false },
    { specifier: "./i.ts", typeOnly: false },
    { specifier: "./jk.ts", typeOnly: false },
    { specifier: "./side.ts", typeOnly: false },
    { specifier: "./in_template.ts", typeOnly: false },
  ]);
});

Deno.test("every file of the module belongs to a room, and imports only the module's files", () => {
  const lost = graph.files.filter((f) => roomOf(f) < 0);
  assert.deepEqual(
    lost,
    [],
    `no room: ${lost.join(", ")}; place each new folder or file in ROOMS and docs/architecture.md`,
  );
  const outside = graph.edges.filter((e) => !e.to.startsWith("src/") && roomOf(e.to) < 0);
  const out = outside.map((e) => `${e.from} -> ${e.to}`);
  assert.deepEqual(out, [], `imports of files outside the module: ${out.join(", ")}`);
  const counts = ROOMS.map((r, i) =>
    `${r.name} ${graph.files.filter((f) => roomOf(f) === i).length}`
  );
  console.log(`rooms, lowest first (files): ${counts.join(", ")}`);
});

Deno.test("imports run downward: no room imports a room above it", () => {
  const upward = new Map<string, Edge>();
  for (const e of graph.edges) {
    if (roomOf(e.from) < roomOf(e.to)) upward.set(`${e.from} -> ${e.to}`, e);
  }
  const fresh = [...upward.keys()].filter((k) => !(k in ALLOWED_UPWARD)).map((k) =>
    `${k} (${ROOMS[roomOf(upward.get(k)!.from)]!.name} imports ${
      ROOMS[roomOf(upward.get(k)!.to)]!.name
    })`
  );
  assert.deepEqual(
    fresh,
    [],
    `upward: ${fresh.join(", ")}; move what both need into the lower room instead`,
  );
  const stale = Object.keys(ALLOWED_UPWARD).filter((k) => !upward.has(k));
  assert.deepEqual(stale, [], `gone, remove them from ALLOWED_UPWARD: ${stale.join(", ")}`);
});

/** A circle through `edges` (files in order, the first repeated last), or undefined. */
function findCircle(edges: readonly Edge[]): string[] | undefined {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const state = new Map<string, 1 | 2>(); // 1: on the path, 2: done
  const path: string[] = [];
  const visit = (f: string): string[] | undefined => {
    state.set(f, 1);
    path.push(f);
    for (const t of next.get(f) ?? []) {
      if (state.get(t) === 1) return [...path.slice(path.indexOf(t)), t];
      if (state.get(t) === undefined) {
        const found = visit(t);
        if (found) return found;
      }
    }
    path.pop();
    state.set(f, 2);
    return undefined;
  };
  for (const f of [...next.keys()].sort()) {
    if (state.get(f) !== undefined) continue;
    const found = visit(f);
    if (found) return found;
  }
  return undefined;
}

Deno.test("the checks catch an upward import and a circle", () => {
  // An arrow from the native room up to the build room, as the loader once was.
  assert.ok(roomOf("src/native/lib.ts") < roomOf("src/build/mod.ts"));
  const edge = (from: string, to: string): Edge => ({ from, to, typeOnly: false });
  const chain = [edge("a.ts", "b.ts"), edge("b.ts", "c.ts")];
  assert.equal(findCircle(chain), undefined);
  assert.deepEqual(findCircle([...chain, edge("c.ts", "a.ts")]), ["a.ts", "b.ts", "c.ts", "a.ts"]);
  // Type-only edges are left out before the search, as below.
  const typeBack = { ...edge("c.ts", "a.ts"), typeOnly: true };
  assert.equal(findCircle([...chain, typeBack].filter((e) => !e.typeOnly)), undefined);
});

Deno.test("no circle of value imports between files", () => {
  const values = graph.edges.filter((e) => !e.typeOnly);
  const key = (e: Edge) => `${e.from} -> ${e.to}`;
  const kept = values.filter((e) => !(key(e) in ALLOWED_CIRCLE));
  const circle = findCircle(kept);
  assert.equal(
    circle,
    undefined,
    `a circle: ${circle?.join(" -> ")}; move what the files share into one below them, ` +
      "or pass it down",
  );
  // Each allowed edge still closes a circle; one that does not is gone or harmless now.
  const stale = Object.keys(ALLOWED_CIRCLE).filter((k) => {
    const edge = values.find((e) => key(e) === k);
    return edge === undefined || findCircle([...kept, edge]) === undefined;
  });
  assert.deepEqual(
    stale,
    [],
    `no longer closing a circle, remove them from ALLOWED_CIRCLE: ${stale.join(", ")}`,
  );
});
