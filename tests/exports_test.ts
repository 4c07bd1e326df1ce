/**
 * The native library's dynamic symbols all carry the one prefix
 * `xla_ffi_deno_`: an export without it could collide with a symbol of
 * another library loaded in the same process (a handler library, real XLA,
 * CPython). The same holds for the exception guard library and the isolate
 * child program that build.ts makes, and for the names of the TS symbol
 * table.
 */
import assert from "node:assert/strict";
import { guardLibraryPath, isolateChildPath, nativeLibraryPath } from "../build.ts";
import { readElfSymbols } from "../src/cli/elf.ts";
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
