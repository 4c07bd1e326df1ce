/**
 * Reads `native/abi_facts.h` (the X-macro tables and `#define` scalars C
 * includes) and writes the TypeScript module generated from it,
 * `src/abi/_facts.generated.ts`. `deno task embed` runs it; `deno task embed
 * --check` and `tests/native_build_test.ts` check the generated file is
 * current.
 *
 * @module
 */

/** One row of `XFD_DATA_TYPES`. */
export interface DataTypeFact {
  name: string;
  value: number;
  byteWidth: number;
  bitWidth: number;
  kind: "invalid" | "pred" | "signed" | "unsigned" | "float" | "complex" | "token";
  numpy: string;
  module: "numpy" | "ml_dtypes" | "none";
}

/** One row of `XFD_FLOAT_FORMATS`. */
export interface FloatFormatFact {
  name: string;
  ebits: number;
  mbits: number;
  bias: number;
  specials: "ieee" | "fn" | "fnuz" | "sat" | "e8m0";
  max: number;
  nonFinite: boolean;
}

/** Everything `native/abi_facts.h` says. */
export interface AbiFacts {
  dataTypes: DataTypeFact[];
  floatFormats: FloatFormatFact[];
  attrKinds: { name: string; value: number }[];
  /** `XFD_MAX_*`, by the name after `XFD_`. */
  limits: Record<string, number>;
  /** `XFD_FLAT_*`, by the name after `XFD_FLAT_`. */
  flat: Record<string, number>;
}

const KINDS = ["INVALID", "PRED", "SIGNED", "UNSIGNED", "FLOAT", "COMPLEX", "TOKEN"];
const MODULES = ["NUMPY", "ML_DTYPES", "NONE"];
const SPECIALS = ["IEEE", "FN", "FNUZ", "SAT", "E8M0"];

function fail(what: string): never {
  throw new Error(`native/abi_facts.h: ${what}`);
}

/** The argument lists of the `X(...)` lines of `#define XFD_<table>(X)`. */
function table(text: string, name: string, arity: number): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`#define XFD_${name}(X)`));
  if (start < 0) fail(`no table XFD_${name}`);
  const rows: string[][] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^\s*X\((.*)\)\s*(\\?)\s*$/.exec(line);
    if (m === null) fail(`XFD_${name}: line ${i + 1} is not an X(...) entry: ${line}`);
    const args = m[1]!.split(",").map((a) => a.trim());
    if (args.length !== arity) fail(`XFD_${name}: line ${i + 1} has ${args.length} fields`);
    rows.push(args);
    if (m[2] === "") break;
  }
  return rows;
}

function int(s: string, where: string): number {
  const m = /^(\d+)(ll)?$/.exec(s);
  if (m === null) fail(`${where}: '${s}' is not an integer`);
  return Number(m[1]);
}

function num(s: string, where: string): number {
  if (!/^\d+(\.\d+)?(e\d+)?$/.test(s)) fail(`${where}: '${s}' is not a number`);
  return Number(s);
}

function str(s: string, where: string): string {
  const m = /^"([^"\\]*)"$/.exec(s);
  if (m === null) fail(`${where}: ${s} is not a string`);
  return m[1]!;
}

function oneOf(s: string, allowed: string[], where: string): string {
  if (!allowed.includes(s)) fail(`${where}: '${s}' is not one of ${allowed.join(", ")}`);
  return s.toLowerCase();
}

function ident(s: string, where: string): string {
  if (!/^[A-Z][A-Z0-9_]*$/.test(s)) fail(`${where}: '${s}' is not an upper-case name`);
  return s;
}

/** Parses the text of `native/abi_facts.h`; throws naming the line that is off. */
export function parseAbiFacts(text: string): AbiFacts {
  const dataTypes = table(text, "DATA_TYPES", 7).map((r): DataTypeFact => {
    const w = `XFD_DATA_TYPES ${r[0]}`;
    return {
      name: ident(r[0]!, w),
      value: int(r[1]!, w),
      byteWidth: int(r[2]!, w),
      bitWidth: int(r[3]!, w),
      kind: oneOf(r[4]!, KINDS, w) as DataTypeFact["kind"],
      numpy: str(r[5]!, w),
      module: oneOf(r[6]!, MODULES, w) as DataTypeFact["module"],
    };
  });
  const floatFormats = table(text, "FLOAT_FORMATS", 7).map((r): FloatFormatFact => {
    const w = `XFD_FLOAT_FORMATS ${r[0]}`;
    if (!dataTypes.some((d) => d.name === r[0] && d.kind === "float")) {
      fail(`${w}: no FLOAT data type of that name`);
    }
    return {
      name: r[0]!,
      ebits: int(r[1]!, w),
      mbits: int(r[2]!, w),
      bias: int(r[3]!, w),
      specials: oneOf(r[4]!, SPECIALS, w) as FloatFormatFact["specials"],
      max: num(r[5]!, w),
      nonFinite: int(r[6]!, w) !== 0,
    };
  });
  const attrKinds = table(text, "ATTR_KINDS", 2).map((r) => ({
    name: ident(r[0]!, "XFD_ATTR_KINDS"),
    value: int(r[1]!, "XFD_ATTR_KINDS"),
  }));
  const limits: Record<string, number> = {};
  const flat: Record<string, number> = {};
  for (const m of text.matchAll(/^#define XFD_(MAX_[A-Z_]+|FLAT_[A-Z_]+) (\S+)/gm)) {
    const value = int(m[2]!, `XFD_${m[1]}`);
    if (m[1]!.startsWith("MAX_")) limits[m[1]!] = value;
    else flat[m[1]!.slice(5)] = value;
  }
  for (const list of [dataTypes, attrKinds]) {
    const seen = new Set<number>();
    for (const { name, value } of list) {
      if (seen.has(value)) fail(`${name}: value ${value} is used twice`);
      seen.add(value);
    }
  }
  return { dataTypes, floatFormats, attrKinds, limits, flat };
}

function camel(name: string): string {
  return name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function constants(name: string, doc: string, entries: Record<string, number>): string[] {
  return [
    `/** ${doc} */`,
    `export const ${name} = {`,
    ...Object.entries(entries).map(([k, v]) => `  ${camel(k)}: ${v},`),
    "} as const;",
    "",
  ];
}

/** The text of `src/abi/_facts.generated.ts` for the facts of `text`. */
export function abiFactsModule(text: string): string {
  const f = parseAbiFacts(text);
  const row = (d: DataTypeFact) =>
    `  { name: "${d.name}", value: ${d.value}, byteWidth: ${d.byteWidth}, ` +
    `bitWidth: ${d.bitWidth}, kind: "${d.kind}", numpy: "${d.numpy}", module: "${d.module}" },`;
  const fmt = (x: FloatFormatFact) =>
    `  { name: "${x.name}", ebits: ${x.ebits}, mbits: ${x.mbits}, bias: ${x.bias}, ` +
    `specials: "${x.specials}", max: ${x.max}, nonFinite: ${x.nonFinite} },`;
  return [
    "// Generated by `deno task embed` from native/abi_facts.h: do not edit.",
    "// tests/native_build_test.ts and `deno task embed --check` keep it current.",
    "",
    "/**",
    " * Element types of buffers and attributes (`XLA_FFI_DataType`, the values of",
    " * `xla::PrimitiveType`). 13 (TUPLE) and 14 (OPAQUE) are not part of the FFI.",
    " *",
    " * @example",
    " * ```ts",
    ' * import { DataType } from "@deno-xla/ffi";',
    " * console.log(DataType.F32); // 11",
    " * ```",
    " */",
    "export enum DataType {",
    ...f.dataTypes.map((d) => `  ${d.name} = ${d.value},`),
    "}",
    "",
    "/**",
    " * Kinds of call-frame attributes (`XLA_FFI_AttrType`).",
    " *",
    " * @example",
    " * ```ts",
    ' * import { AttrType } from "@deno-xla/ffi/abi";',
    ' * console.log(AttrType[AttrType.SCALAR]); // "SCALAR"',
    " * ```",
    " */",
    "export enum AttrType {",
    ...f.attrKinds.map((k) => `  ${k.name} = ${k.value},`),
    "}",
    "",
    "/** @internal One data type's facts: widths, kind, and its NumPy type and module. */",
    "export interface _DataTypeFact {",
    "  readonly name: string;",
    "  readonly value: DataType;",
    "  readonly byteWidth: number;",
    "  readonly bitWidth: number;",
    '  readonly kind: "invalid" | "pred" | "signed" | "unsigned" | "float" | "complex" | "token";',
    "  readonly numpy: string;",
    '  readonly module: "numpy" | "ml_dtypes" | "none";',
    "}",
    "",
    "/** @internal Every data type's facts, in the order of native/abi_facts.h. */",
    "export const _DATA_TYPE_FACTS: readonly _DataTypeFact[] = [",
    ...f.dataTypes.map(row),
    "];",
    "",
    "/** @internal A float format: exponent and mantissa bits, bias, specials, largest finite. */",
    "export interface _FloatFormatFact {",
    "  readonly name: string;",
    "  readonly ebits: number;",
    "  readonly mbits: number;",
    "  readonly bias: number;",
    '  readonly specials: "ieee" | "fn" | "fnuz" | "sat" | "e8m0";',
    "  readonly max: number;",
    "  readonly nonFinite: boolean;",
    "}",
    "",
    "/** @internal The float formats of the FLOAT data types. */",
    "export const _FLOAT_FORMAT_FACTS: readonly _FloatFormatFact[] = [",
    ...f.floatFormats.map(fmt),
    "];",
    "",
    ...constants(
      "_FRAME_LIMITS",
      "@internal The limits of the call-frame checks (`XFD_MAX_*`).",
      Object.fromEntries(Object.entries(f.limits).map(([k, v]) => [k, v])),
    ),
    ...constants(
      "_FLAT_HEADER",
      "@internal int32 indices of the TS handler flat buffer's header (`XFD_FLAT_*`).",
      f.flat,
    ),
  ].join("\n");
}
