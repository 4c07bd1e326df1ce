import assert from "node:assert/strict";
import { buildSharedLibrary } from "../build.ts";
import { ErrorCode } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { parseElfSymbols, readElfSymbols } from "../src/native/elf.ts";

const SOURCE = new URL("../native/tests/elf_symbols.c", import.meta.url);

function build(hashStyle: "gnu" | "sysv" | "both"): string {
  return buildSharedLibrary({
    name: `elf_symbols_${hashStyle}`,
    sources: [SOURCE],
    linkFlags: [`-Wl,--hash-style=${hashStyle}`],
  });
}

/** `nm -D --defined-only` function names and values, or undefined without nm. */
function nmFunctions(path: string): { name: string; value: number }[] | undefined {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("nm", { args: ["-D", "--defined-only", path], stdout: "piped" })
      .outputSync();
  } catch {
    return undefined;
  }
  assert.ok(out.success, "nm failed");
  const rows: { name: string; value: number }[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^([0-9a-f]+) ([TWi]) (\S+)$/.exec(line.trim());
    if (!m) continue;
    rows.push({ name: m[3]!.replace(/@.*$/, ""), value: parseInt(m[1]!, 16) });
  }
  return rows;
}

function sorted(rows: { name: string; value: number }[]): string[] {
  return rows.map((r) => `${r.name} ${r.value.toString(16)}`).sort();
}

function isElfError(e: unknown): boolean {
  return e instanceof FfiError && e.code === ErrorCode.INVALID_ARGUMENT;
}

/** A copy with the section headers removed from the ELF header. */
function stripSections(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  const dv = new DataView(copy.buffer);
  dv.setBigUint64(40, 0n, true); // e_shoff
  dv.setUint16(60, 0, true); // e_shnum
  dv.setUint16(62, 0, true); // e_shstrndx
  return copy;
}

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("exported functions of a built library: kinds, binding, visibility", () => {
  const table = readElfSymbols(build("both"));
  assert.equal(table.source, "sections");
  assert.equal(table.fileType, 3);
  assert.equal(table.machineName, Deno.build.arch === "aarch64" ? "aarch64" : "x86_64");
  const byName = new Map(table.symbols.map((s) => [s.name, s]));
  assert.deepEqual(byName.get("elf_global_function")?.binding, "global");
  assert.deepEqual(byName.get("elf_weak_function")?.binding, "weak");
  assert.equal(byName.get("elf_protected_function")?.visibility, "protected");
  assert.equal(byName.get("elf_global_function")?.visibility, "default");
  assert.equal(byName.get("elf_global_function")?.type, "func");
  assert.ok((byName.get("elf_calls_import")?.size ?? 0) > 0);
  for (
    const absent of ["elf_hidden_function", "elf_static_function", "elf_global_variable", "puts"]
  ) {
    assert.ok(!byName.has(absent), `${absent} must not be listed`);
  }
});

Deno.test("symbols agree with nm -D --defined-only", (t) => {
  const paths = [build("both"), build("gnu"), build("sysv")];
  for (const libc of ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]) {
    try {
      if (Deno.statSync(libc).isFile) paths.push(libc);
    } catch { /* not on this machine */ }
  }
  for (const path of paths) {
    const expected = nmFunctions(path);
    if (expected === undefined) {
      t.step({ name: "nm is not installed", ignore: true, fn: () => {} });
      return;
    }
    const ours = readElfSymbols(path).symbols;
    assert.deepEqual(sorted(ours), sorted(expected), path);
  }
});

Deno.test("stripped section headers: the dynamic segment gives the same symbols", () => {
  for (const style of ["gnu", "sysv", "both"] as const) {
    const bytes = Deno.readFileSync(build(style));
    const full = parseElfSymbols(bytes);
    const stripped = parseElfSymbols(stripSections(bytes), "stripped.so");
    assert.equal(stripped.source, "dynamic", style);
    assert.deepEqual(stripped.symbols, full.symbols, style);
  }
});

Deno.test("non-ELF, 32-bit, big-endian and missing files: clear errors", () => {
  const cases: [Uint8Array, RegExp][] = [
    [new TextEncoder().encode("#!/bin/sh\necho hi\n"), /x\.so: not an ELF file/],
    [new Uint8Array(0), /x\.so: not an ELF file/],
    [new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1]), /x\.so: truncated ELF file \(6 bytes\)/],
    [
      new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1, ...new Array(60).fill(0)]),
      /32-bit ELF files are not supported/,
    ],
    [
      new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 2, 1, ...new Array(60).fill(0)]),
      /big-endian ELF files are not supported/,
    ],
    [
      new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, ...new Array(20).fill(0)]),
      /truncated ELF file: 27 bytes, the ELF64 header needs 64/,
    ],
  ];
  for (const [bytes, re] of cases) {
    assert.throws(() => parseElfSymbols(bytes, "x.so"), (e: unknown) => {
      assert.ok(isElfError(e), String(e));
      assert.match((e as Error).message, re);
      return true;
    });
  }
  assert.throws(
    () => readElfSymbols("/nonexistent/libnope.so"),
    (e: unknown) =>
      e instanceof FfiError && e.code === ErrorCode.NOT_FOUND &&
      /\/nonexistent\/libnope\.so: no such file/.test(e.message),
  );
  const dir = Deno.makeTempDirSync();
  try {
    assert.throws(
      () => readElfSymbols(dir),
      (e: unknown) => isElfError(e) && /not a regular file/.test((e as Error).message),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a truncated file gives an FfiError naming the fault, at every cut", () => {
  const bytes = Deno.readFileSync(build("both"));
  for (const strip of [false, true]) {
    const data = strip ? stripSections(bytes) : bytes;
    const cuts = new Set<number>();
    for (let n = 0; n < 200; n++) cuts.add(n);
    for (let n = 200; n < data.length; n += 61) cuts.add(n);
    for (const n of cuts) {
      try {
        parseElfSymbols(data.subarray(0, n), "cut.so");
      } catch (e) {
        assert.ok(isElfError(e), `cut at ${n}: ${e}`);
        assert.match((e as Error).message, /^cut\.so: /);
      }
    }
    // Cutting into the section headers (at the end) is always noticed.
    if (!strip) assert.throws(() => parseElfSymbols(data.subarray(0, data.length - 1), "c.so"));
  }
});

Deno.test("flipped bytes never give anything but an FfiError", () => {
  const bytes = Deno.readFileSync(build("both"));
  const full = parseElfSymbols(bytes);
  const next = prng(20261202);
  let failures = 0;
  for (const data of [bytes, stripSections(bytes)]) {
    for (let round = 0; round < 1500; round++) {
      const copy = data.slice();
      const flips = 1 + Math.floor(next() * 6);
      for (let k = 0; k < flips; k++) {
        // Half the flips hit the ELF header and program headers, where they matter most.
        const limit = next() < 0.5 ? 64 + 56 * 12 : copy.length;
        copy[Math.floor(next() * limit)]! ^= 1 << Math.floor(next() * 8);
      }
      if (next() < 0.2) {
        // A large value in a random 8-byte field.
        const at = Math.floor(next() * (copy.length - 8));
        new DataView(copy.buffer).setUint32(at, Math.floor(next() * 0xffffffff), true);
      }
      try {
        const got = parseElfSymbols(copy, "flipped.so");
        assert.ok(Array.isArray(got.symbols));
      } catch (e) {
        failures++;
        assert.ok(isElfError(e), `round ${round}: ${e}`);
      }
    }
  }
  assert.ok(failures > 0, "some corruptions must be noticed");
  assert.ok(full.symbols.length >= 4);
});

Deno.test("the machine is read from the header (an aarch64 header is named so)", () => {
  const bytes = Deno.readFileSync(build("both")).slice();
  new DataView(bytes.buffer).setUint16(18, 183, true); // e_machine = EM_AARCH64
  const table = parseElfSymbols(bytes, "arm.so");
  assert.equal(table.machine, 183);
  assert.equal(table.machineName, "aarch64");
  assert.ok(table.symbols.some((s) => s.name === "elf_global_function"));
});
