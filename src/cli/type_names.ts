/**
 * Element-type names on the command line: XLA's lower-case spellings (`f32`,
 * `s32`, `pred`, `bf16`, `c64`, …) plus the common aliases `i8`…`i64` and
 * `bool`, and the facts the option parser needs to check literal values.
 *
 * @module
 */
import { DataType, ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";

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

function _int(name: string, bits: number, signed: boolean): TypeFacts {
  const b = BigInt(bits);
  return signed
    ? { name, kind: "int", bits, min: -(1n << (b - 1n)), max: (1n << (b - 1n)) - 1n }
    : { name, kind: "int", bits, min: 0n, max: (1n << b) - 1n };
}

function _float(name: string, bits: number, max: number, nonFinite = true): TypeFacts {
  return { name, kind: "float", bits, max, nonFinite };
}

const FACTS = new Map<DataType, TypeFacts>([
  [DataType.PRED, { name: "pred", kind: "pred", bits: 8 }],
  [DataType.S1, _int("s1", 1, true)],
  [DataType.S2, _int("s2", 2, true)],
  [DataType.S4, _int("s4", 4, true)],
  [DataType.S8, _int("s8", 8, true)],
  [DataType.S16, _int("s16", 16, true)],
  [DataType.S32, _int("s32", 32, true)],
  [DataType.S64, _int("s64", 64, true)],
  [DataType.U1, _int("u1", 1, false)],
  [DataType.U2, _int("u2", 2, false)],
  [DataType.U4, _int("u4", 4, false)],
  [DataType.U8, _int("u8", 8, false)],
  [DataType.U16, _int("u16", 16, false)],
  [DataType.U32, _int("u32", 32, false)],
  [DataType.U64, _int("u64", 64, false)],
  [DataType.F16, _float("f16", 16, 65504)],
  [DataType.BF16, _float("bf16", 16, 3.3895313892515355e38)],
  [DataType.F32, _float("f32", 32, 3.4028234663852886e38)],
  [DataType.F64, _float("f64", 64, Number.MAX_VALUE)],
  [DataType.F8E5M2, _float("f8e5m2", 8, 57344)],
  [DataType.F8E4M3FN, _float("f8e4m3fn", 8, 448, false)],
  [DataType.F8E4M3B11FNUZ, _float("f8e4m3b11fnuz", 8, 30, false)],
  [DataType.F8E5M2FNUZ, _float("f8e5m2fnuz", 8, 57344, false)],
  [DataType.F8E4M3FNUZ, _float("f8e4m3fnuz", 8, 240, false)],
  [DataType.F8E4M3, _float("f8e4m3", 8, 240)],
  [DataType.F8E3M4, _float("f8e3m4", 8, 15.5)],
  [DataType.F4E2M1FN, _float("f4e2m1fn", 4, 6, false)],
  [DataType.F8E8M0FNU, _float("f8e8m0fnu", 8, 1.7014118346046923e38, false)],
  [DataType.C64, { name: "c64", kind: "complex", bits: 32, max: 3.4028234663852886e38 }],
  [DataType.C128, { name: "c128", kind: "complex", bits: 64, max: Number.MAX_VALUE }],
  [DataType.TOKEN, { name: "token", kind: "token", bits: 0 }],
]);

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
 * import { lookupTypeName } from "@deno-xla/ffi/cli";
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
 * import { parseTypeName } from "@deno-xla/ffi/cli";
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
 * import { typeName } from "@deno-xla/ffi/cli";
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
 * import { typeFacts } from "@deno-xla/ffi/cli";
 * console.log(typeFacts(DataType.U8)?.max); // 255n
 * ```
 */
export function typeFacts(type: DataType): TypeFacts | undefined {
  return FACTS.get(type);
}
