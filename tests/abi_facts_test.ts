/**
 * native/abi_facts.h is the one source of the ABI's data types, attribute
 * kinds, frame limits and flat-buffer header: these tests add a data type to
 * a copy of it and check that what C compiles from the copy and what the
 * embed step generates from it agree, and that the shipped tables follow
 * from the shipped facts.
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { buildExecutable } from "../build.ts";
import { abiFactsModule, parseAbiFacts } from "../src/native/_abi_facts.ts";
import { _DATA_TYPE_FACTS, _FLAT_HEADER, _FRAME_LIMITS } from "../src/abi/_facts.generated.ts";
import { allDataTypes, dataTypeInfo } from "../src/abi/dtype.ts";
import { AttrType, DataType } from "../src/abi/enums.ts";

const NATIVE = new URL("../native/", import.meta.url);
const FACTS = Deno.readTextFileSync(new URL("abi_facts.h", NATIVE));

/** A C program that prints, per data type of the facts, what C makes of it. */
const PRINT_C = `#include <stdio.h>
#include "xla_ffi.h"
#include "xla_ffi_dtype.h"
#define ROW(name, value, ...)                                                          \\
  printf("%s %d %zu %d %d %d\\n", #name, (int)XLA_FFI_DataType_##name,                 \\
         xla_ffi_dtype_width(value), xla_ffi_dtype_is_sub_byte(value),                \\
         (int)xla_ffi_dtype_kind(value), xla_ffi_dtype_has_values(value));
#define KIND(name, value) printf("attr %s %d\\n", #name, (int)XLA_FFI_AttrType_##name);
int main(void) {
  XFD_DATA_TYPES(ROW)
  XFD_ATTR_KINDS(KIND)
  printf("limit MAX_RANK %lld\\n", (long long)XFD_MAX_RANK);
  printf("limit MAX_ARRAY %lld\\n", (long long)XFD_MAX_ARRAY);
  printf("flat INDEX %d\\n", XFD_FLAT_INDEX);
  return 0;
}
`;

const KINDS = ["invalid", "pred", "signed", "unsigned", "float", "complex", "token"];

/** What the compiled program prints for facts `text`, with the module generated from it. */
async function compileAndGenerate(text: string) {
  const dir = Deno.makeTempDirSync({ prefix: "abi_facts_" });
  try {
    // The headers that read the facts, beside the copy (quoted includes look there first).
    for (const h of ["xla_ffi.h", "xla_ffi_dtype.h"]) {
      Deno.copyFileSync(new URL(h, NATIVE), `${dir}/${h}`);
    }
    Deno.writeTextFileSync(`${dir}/abi_facts.h`, text);
    Deno.writeTextFileSync(`${dir}/print_facts.c`, PRINT_C);
    const exe = buildExecutable({
      name: "print_facts",
      sources: [pathToFileURL(`${dir}/print_facts.c`)],
      outDir: dir,
    });
    const out = new Deno.Command(exe, { stdout: "piped" }).outputSync();
    assert.equal(out.code, 0);
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    Deno.writeTextFileSync(`${dir}/facts.generated.ts`, abiFactsModule(text));
    const generated = await import(pathToFileURL(`${dir}/facts.generated.ts`).href);
    return { lines, generated };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** C's view and the generated TS tables of the same facts agree, row by row. */
function assertAgree(
  lines: string[],
  generated: typeof import("../src/abi/_facts.generated.ts"),
): void {
  const rows = lines.filter((l) => !/^(attr|limit|flat) /.test(l));
  assert.equal(rows.length, generated._DATA_TYPE_FACTS.length);
  rows.forEach((line, i) => {
    const [name, value, width, subByte, kind, hasValues] = line.split(" ");
    const f = generated._DATA_TYPE_FACTS[i]!;
    assert.equal(f.name, name);
    assert.equal(f.value, Number(value));
    assert.equal(generated.DataType[f.name as "F32"], f.value, name);
    assert.equal(f.byteWidth, Number(width), `${name} byte width`);
    assert.equal(f.bitWidth > 0 && f.bitWidth < 8, subByte === "1", `${name} sub-byte`);
    assert.equal(f.kind, KINDS[Number(kind)], `${name} kind`);
    assert.equal(f.kind !== "invalid" && f.kind !== "token", hasValues === "1", name);
  });
  for (const line of lines.filter((l) => l.startsWith("attr "))) {
    const [, name, value] = line.split(" ");
    assert.equal(generated.AttrType[name as "SCALAR"], Number(value), name);
  }
  assert.ok(lines.includes(`limit MAX_RANK ${generated._FRAME_LIMITS.maxRank}`));
  assert.ok(lines.includes(`limit MAX_ARRAY ${generated._FRAME_LIMITS.maxArray}`));
  assert.ok(lines.includes(`flat INDEX ${generated._FLAT_HEADER.index}`));
}

Deno.test("a data type added to a copy of abi_facts.h reaches C and the generated TS alike", async () => {
  const fake = '  X(F8E8M0FNU, 33, 1, 8, FLOAT, "float8_e8m0fnu", ML_DTYPES) \\\n' +
    '  X(U12FAKE, 99, 2, 12, UNSIGNED, "", NONE)';
  const last = '  X(F8E8M0FNU, 33, 1, 8, FLOAT, "float8_e8m0fnu", ML_DTYPES)';
  assert.ok(FACTS.includes(last));
  const { lines, generated } = await compileAndGenerate(FACTS.replace(last, fake));
  assert.ok(lines.includes("U12FAKE 99 2 0 3 1"), lines.join("\n"));
  assert.equal(generated.DataType.U12FAKE, 99);
  assertAgree(lines, generated);
});

Deno.test("the shipped facts: C and src/abi/_facts.generated.ts agree", async () => {
  const { lines } = await compileAndGenerate(FACTS);
  assertAgree(lines, await import("../src/abi/_facts.generated.ts"));
});

Deno.test("the TS tables follow from the facts", () => {
  const facts = parseAbiFacts(FACTS);
  assert.deepEqual(allDataTypes(), facts.dataTypes.map((d) => d.value).sort((a, b) => a - b));
  for (const d of facts.dataTypes) {
    const info = dataTypeInfo(d.value);
    assert.equal(info.name, d.name);
    assert.equal(info.byteWidth, d.byteWidth);
    assert.equal(info.bitWidth, d.bitWidth);
    assert.equal(info.kind, d.kind);
  }
  assert.equal(DataType.F8E8M0FNU, 33);
  assert.equal(AttrType.STRING, 4);
  assert.equal(_DATA_TYPE_FACTS.length, facts.dataTypes.length);
  assert.equal(_FRAME_LIMITS.maxOperands, facts.limits.MAX_OPERANDS);
  assert.equal(_FLAT_HEADER.index, facts.flat.INDEX);
});

Deno.test("a malformed facts line is an error that names it", () => {
  assert.throws(
    () => parseAbiFacts(FACTS.replace("X(S8, 2, 1, 8, SIGNED,", "X(S8, 2, 1, 8, SIGNEDISH,")),
    /XFD_DATA_TYPES S8: 'SIGNEDISH' is not one of/,
  );
  assert.throws(
    () => parseAbiFacts(FACTS.replace("X(S16, 3,", "X(S16, 2,")),
    /S16: value 2 is used twice/,
  );
});
