/**
 * Element-type names on the command line: XLA's lower-case spellings (`f32`,
 * `s32`, `pred`, `bf16`, `c64`, …) plus the common aliases `i8`…`i64` and
 * `bool`, and the facts the option parser needs to check literal values.
 * Widths, kinds and names come from `src/abi/dtype.ts`, float limits from
 * `native/abi_facts.h`; only the aliases live here.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { allDataTypes, type DataTypeInfo, dataTypeInfo } from "../abi/dtype.ts";
import { _FLOAT_FORMAT_FACTS } from "../abi/_facts.generated.ts";

/** How literal values of an element type are written and checked. */
export interface TypeFacts {
  /** The XLA spelling, e.g. `f32`, `s64`, `pred`. */
  name: string;
  /** `int`, `float`, `complex`, `pred` or `token`. */
  kind: "int" | "float" | "complex" | "pred" | "token";
  /** Bits per element (per component for complex). */
  bits: number;
  /** Integers: smallest value. */
  min?: bigint;
  /** Integers: largest value; floats: largest finite magnitude. */
  max?: bigint | number;
  /** Floats: whether infinities and NaN exist. */
  nonFinite?: boolean;
}

/**
 * Float facts the command line checks literals against (native/abi_facts.h's
 * float formats): the largest finite magnitude, and whether ±Inf/NaN exist.
 */
const FLOAT_LIMITS: ReadonlyMap<DataType, { max: number; nonFinite: boolean }> = new Map(
  _FLOAT_FORMAT_FACTS.map((f) => [
    DataType[f.name as keyof typeof DataType],
    { max: f.max, nonFinite: f.nonFinite },
  ]),
);

/** The command line's facts of one type, from `dtype.ts`'s (names are its, lower-cased). */
function _facts(info: DataTypeInfo): TypeFacts {
  const name = info.name.toLowerCase();
  const bits = info.bitWidth;
  switch (info.kind) {
    case "signed": {
      const b = BigInt(bits);
      return { name, kind: "int", bits, min: -(1n << (b - 1n)), max: (1n << (b - 1n)) - 1n };
    }
    case "unsigned":
      return { name, kind: "int", bits, min: 0n, max: (1n << BigInt(bits)) - 1n };
    case "float": {
      const limits = FLOAT_LIMITS.get(info.dataType)!;
      return { name, kind: "float", bits, max: limits.max, nonFinite: limits.nonFinite };
    }
    case "complex": {
      const part = FLOAT_LIMITS.get(bits === 64 ? DataType.F32 : DataType.F64)!;
      return { name, kind: "complex", bits: bits / 2, max: part.max };
    }
    case "pred":
      return { name, kind: "pred", bits };
    default:
      return { name, kind: "token", bits: 0 };
  }
}

const FACTS = new Map<DataType, TypeFacts>(
  allDataTypes()
    .filter((t) => t !== DataType.INVALID)
    .map((t) => [t, _facts(dataTypeInfo(t))]),
);

const BY_NAME = new Map<string, DataType>();
for (const [type, facts] of FACTS) BY_NAME.set(facts.name, type);
for (const bits of [8, 16, 32, 64]) BY_NAME.set(`i${bits}`, BY_NAME.get(`s${bits}`)!);
BY_NAME.set("bool", DataType.PRED);

/** Every accepted element-type name, for help texts and errors. */
export const TYPE_NAMES: readonly string[] = [...BY_NAME.keys()];

/**
 * The element type a name stands for (case-insensitive), or `undefined`.
 *
 * @example
 * ```ts
 * import { lookupTypeName } from "./type_names.ts";
 * console.log(lookupTypeName("i32") === lookupTypeName("s32")); // true
 * ```
 */
export function lookupTypeName(name: string): DataType | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/**
 * The element type a name stands for; throws {@link FfiError}
 * (INVALID_ARGUMENT) listing the accepted names when it is unknown.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { parseTypeName } from "./type_names.ts";
 * console.log(parseTypeName("bf16") === DataType.BF16); // true
 * ```
 */
export function parseTypeName(name: string): DataType {
  const type = lookupTypeName(name);
  if (type === undefined) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `unknown element type '${name}' (one of ${TYPE_NAMES.join(", ")})`,
    );
  }
  return type;
}

/**
 * XLA's lower-case spelling of an element type (`f32`, `pred`, …).
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { typeName } from "./type_names.ts";
 * console.log(typeName(DataType.S32)); // "s32"
 * ```
 */
export function typeName(type: DataType): string {
  return FACTS.get(type)?.name ?? `type${type}`;
}

/**
 * The literal-value facts of an element type, or `undefined` for INVALID.
 *
 * @example
 * ```ts
 * import { DataType } from "@deno-xla/ffi";
 * import { typeFacts } from "./type_names.ts";
 * console.log(typeFacts(DataType.U8)?.max); // 255n
 * ```
 */
export function typeFacts(type: DataType): TypeFacts | undefined {
  return FACTS.get(type);
}
