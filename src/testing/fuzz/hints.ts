/**
 * The user's hints to the fuzzer, read: an argument's dtype and rank from a
 * `cli run`-style spec, and the attribute hints (`NAME=TYPE:VALUE` pinned,
 * `{…}` choices and `[LO,HI]` ranges to draw from, `*` the type only).
 *
 * @module
 */
import { DataType, ErrorCode } from "../../abi/enums.ts";
import { FfiError } from "../../errors.ts";
import { lookupTypeName } from "../../spec/type_names.ts";
import {
  addAttr,
  type AttrDictionary as CliAttrs,
  parseArgSpec,
  parseRetSpec,
} from "../../spec/grammar.ts";
import { loadNpy } from "../../npy.ts";
import type { BufferSignature } from "./types.ts";

/** A hint's dtype and rank: `f32[4,3]`, `f32[2]=1,2`, `x.npy`. */
export function _argHint(text: string, i: number): BufferSignature {
  const where = `argument hint ${i}`;
  if (/\.npy$/i.test(text)) {
    const a = loadNpy(text);
    return { dtype: a.dtype, rank: a.shape.length };
  }
  if (text.includes("=")) {
    const spec = parseArgSpec(text, where);
    if (spec.kind === "inline") return { dtype: spec.dtype, rank: spec.dims.length };
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: '${text}' is not a buffer`);
  }
  const spec = parseRetSpec(text, where);
  if (spec.kind !== "buffer") {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `${where}: '${text}' is not a buffer spec (dtype[d0,d1,...])`,
    );
  }
  return { dtype: spec.dtype, rank: spec.dims.length };
}

/**
 * The values a scalar attribute is drawn from: `choices` (`u8:{76,85}`,
 * `u8:{'L','U'}`), or a closed range (`f32:[0.1,10]`).
 */
export interface _Domain {
  dtype: DataType;
  choices?: (number | bigint)[];
  range?: [number | bigint, number | bigint];
}

/** The attribute hints: values sent as given, domains to draw from, names left free. */
export interface _AttrHints {
  /** Each hinted attribute with one value of its type (the pinned value, a domain's first). */
  attrs: CliAttrs;
  /** Scalars drawn from a set of values or a range. */
  domains: Map<string, _Domain>;
  /** Scalars and arrays whose type only was given (`NAME=TYPE:*`): values are varied. */
  free: Set<string>;
}

const DOMAIN_HINT = /^([^=]+)=([A-Za-z][A-Za-z0-9]*)(\[\])?:(\{.*\}|\[.*\]|\*)$/s;

/** Characters in a choice list (`'L'`) as their code. */
function _choiceItems(text: string, where: string): string {
  return text.split(",").map((s) => {
    const t = s.trim();
    const ch = /^'(.)'$/su.exec(t);
    if (ch === null) return t;
    const code = ch[1]!.codePointAt(0)!;
    if (code > 255) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: '${ch[1]}' is not one byte`);
    }
    return String(code);
  }).join(",");
}

/**
 * Reads the fuzzer's attribute hints: `NAME=TYPE:VALUE` (sent as given),
 * `NAME=TYPE:{V1,V2,…}` (drawn from these values; `'L'` is a character's
 * code), `NAME=TYPE:[LO,HI]` (drawn from the range, its ends included),
 * `NAME=TYPE:*` or `NAME=TYPE[]:*` (the type only; values are varied).
 */
export function _hintAttrs(hints: readonly string[] | undefined): _AttrHints {
  const attrs: CliAttrs = { kind: "dictionary", entries: new Map() };
  const domains = new Map<string, _Domain>();
  const free = new Set<string>();
  for (const h of hints ?? []) {
    const m = DOMAIN_HINT.exec(h);
    if (m === null) {
      addAttr(attrs, h);
      continue;
    }
    const [, name, type, brackets, body] = m;
    const where = `--attr ${name}`;
    if (body === "*") {
      const dtype = lookupTypeName(type!);
      const zero = dtype === DataType.PRED ? "true" : "0";
      addAttr(attrs, `${name}=${type}${brackets ?? ""}:${brackets ? "" : zero}`);
      free.add(name!);
      continue;
    }
    if (brackets) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${where}: choices and ranges are for scalars ('${h}')`,
      );
    }
    if (name!.includes(".")) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${where}: choices and ranges are for top-level attributes ('${h}')`,
      );
    }
    const inner = body!.slice(1, -1);
    const probe: CliAttrs = { kind: "dictionary", entries: new Map() };
    addAttr(probe, `${name}=${type}[]:${_choiceItems(inner, where)}`);
    const parsed = probe.entries.get(name!) as { dtype: DataType; values: (number | bigint)[] };
    const values = Array.from(parsed.values);
    const dtype = parsed.dtype;
    if (body!.startsWith("{")) {
      if (values.length === 0) {
        throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${where}: no choices in '${h}'`);
      }
      domains.set(name!, { dtype, choices: values });
    } else {
      if (values.length !== 2 || !(values[0]! <= values[1]!)) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `${where}: a range is [LO,HI] with LO <= HI, got '${h}'`,
        );
      }
      domains.set(name!, { dtype, range: [values[0]!, values[1]!] });
    }
    attrs.entries.set(name!, { kind: "scalar", dtype, value: values[0]! });
  }
  return { attrs, domains, free };
}

/** Whether a scalar value is inside a domain. */
export function _inDomain(d: _Domain, v: number | bigint): boolean {
  if (d.choices) return d.choices.some((c) => c === v || Object.is(c, v));
  const [lo, hi] = d.range!;
  return v >= lo && v <= hi;
}
