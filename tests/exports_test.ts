/**
 * The native library's dynamic symbols all carry the one prefix
 * `xla_ffi_deno_`: an export without it could collide with a symbol of
 * another library loaded in the same process (a handler library, real XLA,
 * CPython). The same holds for the exception guard library and the isolate
 * child program that build.ts makes, and for the names of the TS symbol
 * table, whose entries each name their C parameters as the C definition does.
 */
import assert from "node:assert/strict";
import { guardLibraryPath, isolateChildPath, nativeLibraryPath } from "../build.ts";
import { readElfSymbols } from "../src/native/elf.ts";
import { SYMBOLS } from "../src/native/symbols.ts";

const PREFIX = "xla_ffi_deno_";

function unprefixed(names: Iterable<string>): string[] {
  return [...names].filter((n) => !n.startsWith(PREFIX)).sort();
}

Deno.test("every function the native library exports starts with xla_ffi_deno_", () => {
  const table = readElfSymbols(nativeLibraryPath());
  assert.ok(table.symbols.length > 0, "no exported functions found");
  assert.deepEqual(unprefixed(table.symbols.map((s) => s.name)), []);
});

Deno.test("the TS symbol table names only prefixed symbols, each one exported", () => {
  const exported = new Set(readElfSymbols(nativeLibraryPath()).symbols.map((s) => s.name));
  const entries = Object.entries(SYMBOLS) as [string, { name?: string }][];
  assert.deepEqual(unprefixed(entries.map(([key]) => key)), []);
  const missing = entries.map(([key, def]) => def.name ?? key).filter((n) => !exported.has(n));
  assert.deepEqual(missing, []);
});

Deno.test("the guard library and the isolate child export nothing but xla_ffi_deno_ functions", () => {
  const guard = guardLibraryPath(); // undefined without a C++ compiler
  for (const path of [guard, isolateChildPath()]) {
    if (path === undefined) continue;
    assert.deepEqual(unprefixed(readElfSymbols(path).symbols.map((s) => s.name)), [], path);
  }
});

/** `nm -D --defined-only` of a file (data exports too), or why it cannot run. */
function nmDefined(path: string): { names?: string[]; reason?: string } {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("nm", { args: ["-D", "--defined-only", path], stderr: "piped" })
      .outputSync();
  } catch (e) {
    return { reason: `nm cannot run: ${(e as Error).message}` };
  }
  if (!out.success) return { reason: `nm failed: ${new TextDecoder().decode(out.stderr)}` };
  const names = new TextDecoder().decode(out.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/)[2])
    .filter((n): n is string => n !== undefined && n !== "");
  return { names };
}

const nmReason = nmDefined(nativeLibraryPath()).reason;

Deno.test({
  name: "every defined dynamic symbol (data as well as functions) starts with xla_ffi_deno_" +
    (nmReason ? ` (ignored: ${nmReason})` : ""),
  ignore: nmReason !== undefined,
  fn: () => {
    const { names } = nmDefined(nativeLibraryPath());
    assert.ok(names !== undefined && names.length > 0, "nm listed no symbols");
    assert.deepEqual(unprefixed(names), []);
  },
});

/** The names of a C parameter list (`void` or empty: none). */
function splitParameters(list: string): string[] {
  const inner = list.trim();
  if (inner === "void" || inner === "") return [];
  const params: string[] = [];
  let level = 0;
  let cur = "";
  for (const ch of inner) {
    if (ch === "(") level++;
    if (ch === ")") level--;
    if (ch === "," && level === 0) {
      params.push(cur);
      cur = "";
    } else cur += ch;
  }
  params.push(cur);
  return params.map((p) => {
    const fnPointer = /\(\s*\*\s*(\w+)\s*\)/.exec(p);
    if (fnPointer) return fnPointer[1]!;
    return p.replace(/\[[^\]]*\]\s*$/, "").match(/\w+/g)!.at(-1)!;
  });
}

/** The parameter names of the C definition of `name` in native/*.c, or undefined. */
function cParameterNames(name: string): string[] | undefined {
  const dir = new URL("../native/", import.meta.url);
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.name.endsWith(".c")) continue;
    const text = Deno.readTextFileSync(new URL(entry.name, dir));
    for (const at of text.matchAll(new RegExp(`^[A-Za-z_][\\w \\t*]*\\b${name}\\(`, "gm"))) {
      let depth = 1;
      let end = at.index + at[0].length;
      for (; depth > 0; end++) {
        if (text[end] === "(") depth++;
        else if (text[end] === ")") depth--;
      }
      if (!/^\s*\{/.test(text.slice(end))) continue; // a declaration, not the definition
      return splitParameters(text.slice(at.index + at[0].length, end - 1));
    }
  }
  return undefined;
}

Deno.test("each symbol table entry names its C parameters as the C definition does", () => {
  const comments = new Map<string, string[]>();
  const dir = new URL("../src/native/", import.meta.url);
  for (const entry of Deno.readDirSync(dir)) {
    if (!/^symbols_\w+\.ts$/.test(entry.name)) continue;
    const text = Deno.readTextFileSync(new URL(entry.name, dir));
    for (const m of text.matchAll(/\/\*\* \(([^)]*)\) → .+? \*\/\n\s*(\w+): \{/g)) {
      comments.set(m[2]!, m[1] === "" ? [] : m[1]!.split(", "));
    }
  }
  const entries = Object.entries(SYMBOLS) as [
    string,
    { name?: string; parameters: readonly unknown[] },
  ][];
  const wrong: string[] = [];
  for (const [key, def] of entries) {
    const names = comments.get(key);
    const c = cParameterNames(def.name ?? key);
    if (
      names === undefined || c === undefined || names.length !== def.parameters.length ||
      names.join() !== c.join()
    ) {
      wrong.push(`${key}: comment (${names?.join(", ")}), C (${c?.join(", ")})`);
    }
  }
  assert.deepEqual(wrong, []);
});
