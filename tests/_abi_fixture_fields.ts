/**
 * The flattened field list of every struct in LAYOUTS (embedded structs
 * expanded to `outer.inner`), the field-pattern values both sides use, and
 * the generator of `native/tests/abi_fixture_fields.h` (the same list as C
 * X-macros). Regenerate with `deno run --allow-read --allow-write tests/_abi_fixture_fields.ts`;
 * tests/abi_writers_test.ts fails when the committed header is stale.
 */
import { fileURLToPath } from "node:url";
import { type FieldType, LAYOUTS, type StructLayout } from "../src/abi/layout.ts";

/** Kinds the C side knows how to fill and check. */
/**
 * SS struct_size, U64 size_t, I64 int64, I32 int32, U32 uint32, EN enum, PTR
 * pointer; SP/SL the ptr/len of an embedded ByteSpan (the pointer points into
 * the C fixture's text so a reader can follow it).
 */
export type Kind = "SS" | "U64" | "I64" | "I32" | "U32" | "EN" | "PTR" | "SP" | "SL";

/** One flattened field. */
export interface FlatField {
  /** C member designator (`args.size`). */
  path: string;
  /** Offset from the outer struct start. */
  offset: number;
  kind: Kind;
}

const NESTED: Partial<Record<FieldType, string>> = {
  XLA_FFI_Api_Version: "XLA_FFI_Api_Version",
  XLA_FFI_ByteSpan: "XLA_FFI_ByteSpan",
  XLA_FFI_TypeId: "XLA_FFI_TypeId",
  XLA_FFI_Args: "XLA_FFI_Args",
  XLA_FFI_Rets: "XLA_FFI_Rets",
  XLA_FFI_Attrs: "XLA_FFI_Attrs",
  XLA_FFI_Handler_Bundle: "XLA_FFI_Handler_Bundle",
  XLA_FFI_Extension_Base: "XLA_FFI_Extension_Base",
};

function kindOf(name: string, type: FieldType): Kind {
  if (name === "struct_size") return "SS";
  switch (type) {
    case "size_t":
      return "U64";
    case "int64":
      return "I64";
    case "int32":
      return "I32";
    case "uint32":
      return "U32";
    case "enum":
      return "EN";
    default:
      return "PTR";
  }
}

/** Every leaf field of a layout, in declaration order. */
export function flatFields(layout: StructLayout, prefix = "", base = 0): FlatField[] {
  const out: FlatField[] = [];
  for (const [name, f] of Object.entries(layout.fields)) {
    const nested = NESTED[f.type];
    if (nested === "XLA_FFI_ByteSpan") {
      out.push({ path: `${prefix}${name}.ptr`, offset: base + f.offset, kind: "SP" });
      out.push({ path: `${prefix}${name}.len`, offset: base + f.offset + 8, kind: "SL" });
    } else if (nested) {
      out.push(...flatFields(LAYOUTS[nested]!, `${prefix}${name}.`, base + f.offset));
    } else out.push({ path: prefix + name, offset: base + f.offset, kind: kindOf(name, f.type) });
  }
  return out;
}

/** The pattern value of a field (the C macros compute the same). */
export function pattern(f: FlatField, textAddress: bigint): bigint {
  const o = BigInt(f.offset);
  switch (f.kind) {
    case "SP":
      return textAddress + o % 16n;
    case "SL":
      return o % 5n + 3n;
    case "SS":
      return 1000n + o;
    case "U64":
    case "PTR":
      return 0xa000000000000011n | (o << 8n);
    case "I64":
      return -(o * 1000003n + 7n);
    case "I32":
      return -(o * 1000n + 7n);
    case "U32":
      return 0x80000000n + o;
    case "EN":
      return 100n + o;
  }
}

/** The C header text. */
export function headerText(): string {
  const lines = [
    "/* Generated from src/abi/layout.ts by tests/_abi_fixture_fields.ts: do not edit. */",
    "/* X(struct, member designator, kind) for every leaf field of every struct. */",
    "#define ABI_FIXTURE_STRUCTS(S) \\",
  ];
  const names = Object.keys(LAYOUTS);
  names.forEach((n, i) => lines.push(`  S(${n})${i < names.length - 1 ? " \\" : ""}`));
  lines.push("");
  for (const [name, layout] of Object.entries(LAYOUTS)) {
    const fields = flatFields(layout);
    lines.push(`#define ABI_FIXTURE_FIELDS_${name}(X) \\`);
    fields.forEach((f, i) =>
      lines.push(`  X(${name}, ${f.path}, ${f.kind})${i < fields.length - 1 ? " \\" : ""}`)
    );
    lines.push("");
  }
  return lines.join("\n");
}

export const HEADER_PATH = new URL("../native/tests/abi_fixture_fields.h", import.meta.url);

if (import.meta.main) {
  Deno.writeTextFileSync(HEADER_PATH, headerText());
  console.log(fileURLToPath(HEADER_PATH));
}
