/**
 * Hints added to errors at the point of a common mistake: an attribute given
 * as a plain JS number (S64 or F64) to a handler that wants another type.
 *
 * @module
 */
import { DataType } from "../abi/enums.ts";
import { _withHint, type FfiError } from "../errors.ts";
import type { _AttrEntry } from "./attributes.ts";

/** An attribute whose data type came from a plain number or number[]. */
export interface _ImplicitAttr {
  /** Dotted path (`cfg.scale` for a nested dictionary's entry). */
  name: string;
  kind: "scalar" | "array";
  dtype: DataType;
  /** The JS value as written. */
  text: string;
}

/** The implicitly typed attributes of a dictionary, recursively. */
export function _implicitAttrs(entries: readonly _AttrEntry[], prefix = ""): _ImplicitAttr[] {
  const out: _ImplicitAttr[] = [];
  for (const e of entries) {
    if (e.dict) out.push(..._implicitAttrs(e.dict, `${prefix}${e.name}.`));
    else if (e.implicit !== undefined) {
      out.push({
        name: prefix + e.name,
        kind: e.values === null ? "scalar" : "array",
        dtype: e.dtype,
        text: e.implicit,
      });
    }
  }
  return out;
}

/** An object key as written in TS source. */
function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

const WRONG = /Wrong (scalar|array) data type: expected (\w+) but got (\w+)/;

/**
 * `error` with a hint (its `hint`, the message staying XLA's) when it says a
 * scalar or array attribute has the wrong data type and the frame holds
 * attributes of the type it got that were given as plain JS numbers; else
 * `error` as it was. The fix reads as a
 * `CallFrameBuilder.attr` call (`"builder"`) or as an entry of `ffiCall`'s
 * `attrs` (`"attrs"`, the same words on both hosts).
 */
export function _withAttrHint<E extends FfiError>(
  error: E,
  implicit: readonly _ImplicitAttr[],
  style: "builder" | "attrs" = "builder",
): E {
  if (implicit.length === 0) return error;
  const m = WRONG.exec(error.message);
  if (m === null) return error;
  const [, kind, expected, got] = m as unknown as [string, "scalar" | "array", string, string];
  if (!(expected in DataType)) return error;
  const hits = implicit.filter((a) => a.kind === kind && DataType[a.dtype] === got);
  if (hits.length === 0) return error;
  const a = hits[0]!;
  const fix = kind === "scalar"
    ? `scalar(DataType.${expected}, ${a.text})`
    : `array(DataType.${expected}, ${a.text})`;
  const names = hits.map((h) => `'${h.name}'`).join(", ");
  const many = hits.length > 1;
  const hint = `attribute${many ? "s" : ""} ${names} ${many ? "are" : "is"} ${got} ` +
    `because ${many ? "they were" : "it was"} given as a plain JS ` +
    (kind === "scalar"
      ? "number (an integer makes S64, any other number F64)"
      : "number[] (S64 or F64 elements)") +
    `: give the type the handler expects, ` +
    (a.name.includes(".")
      ? fix
      : style === "attrs"
      ? `attrs: { ${key(a.name)}: ${fix} }`
      : `.attr("${a.name}", ${fix})`);
  return _withHint(error, hint);
}
