/**
 * Operand layouts of `ffiCall` (`inputLayouts`/`outputLayouts`, jax's
 * `input_layouts`/`output_layouts`): their one check, shared by both hosts,
 * and the relayout the embedded runtime does so that a handler sees the
 * bytes XLA would hand it. Private to the runtime.
 *
 * A layout is jax `ffi_call`'s: the dimension indices of the operand from
 * the most major (slowest varying) to the most minor (contiguous), so
 * `[0, 1, …, rank-1]` is row-major (the default, also given as `null` or
 * `undefined`) and `[1, 0]` a column-major matrix. The handler's buffer
 * keeps the logical dims; only the order of the elements in memory changes.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { byteWidth, type DataTypedArray, viewAs } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import { _resultStorage } from "./ffi_call.ts";

/** One operand's layout as ffiCall takes it: major-to-minor dimension indices, or row-major. */
export type _LayoutOption = readonly number[] | null | undefined;

/**
 * Checked layouts, one per argument and per result: `null` is row-major
 * (given as such, left out, or given as `[0, …, rank-1]`).
 */
export interface _Layouts {
  readonly inputs: readonly (readonly number[] | null)[];
  readonly outputs: readonly (readonly number[] | null)[];
}

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** A layout as errors show it. */
function text(v: unknown): string {
  if (Array.isArray(v)) {
    return `[${v.map((d) => typeof d === "string" ? JSON.stringify(d) : String(d)).join(", ")}]`;
  }
  if (v === null) return "null";
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  return typeof v === "string"
    ? JSON.stringify(v)
    : typeof v === "object"
    ? "an object"
    : String(v);
}

/** An operand as layout errors name it (`argument 0`, `result 1`) and its shape. */
type Operand = { what: string; shape: readonly number[] };

/**
 * One operand's layout, checked: `null` for row-major, else the permutation.
 * FfiError INVALID_ARGUMENT naming the option, the operand and the layout.
 */
function checkOne(
  layout: unknown,
  option: string,
  i: number,
  op: Operand,
): readonly number[] | null {
  if (layout === null || layout === undefined) return null;
  const rank = op.shape.length;
  const where = `${option}[${i}] (${op.what}, shape [${op.shape.join(", ")}])`;
  if (!Array.isArray(layout)) {
    bad(
      `ffiCall: ${where}: a layout must be an array of dimension indices (major to minor) ` +
        `or null, got ${text(layout)}`,
    );
  }
  if (layout.length !== rank) {
    bad(
      `ffiCall: ${where}: the layout ${text(layout)} has ${layout.length} ` +
        `entr${layout.length === 1 ? "y" : "ies"} but the ${op.what} has rank ${rank}`,
    );
  }
  let identity = true;
  const seen = new Uint8Array(rank);
  for (let k = 0; k < rank; k++) {
    const d = layout[k];
    if (!Number.isInteger(d) || d < 0 || d >= rank || seen[d] === 1) {
      bad(
        `ffiCall: ${where}: the layout ${text(layout)} is not a permutation of ` +
          `0..${rank - 1} (each dimension index once, major to minor)`,
      );
    }
    seen[d] = 1;
    if (d !== k) identity = false;
  }
  return identity ? null : [...layout as number[]];
}

/**
 * Checks `inputLayouts` and `outputLayouts` against the arguments, results
 * and aliases (pairs from `_checkAliases`), the same on both hosts: each
 * option an array of at most one layout per operand (missing ones are
 * row-major), each layout null or a permutation of the operand's dimension
 * indices, and an aliased argument and result of the same layout (jax's
 * rule). Returns null when every operand is row-major (the default path:
 * neither option given, or only row-major layouts).
 */
export function _checkLayouts(
  inputLayouts: readonly _LayoutOption[] | undefined,
  outputLayouts: readonly _LayoutOption[] | undefined,
  args: readonly { shape: readonly number[] }[],
  results: readonly { shape: readonly number[] }[],
  aliases: readonly (readonly [number, number])[],
): _Layouts | null {
  if (inputLayouts === undefined && outputLayouts === undefined) return null;
  const side = (
    option: string,
    given: readonly _LayoutOption[] | undefined,
    operands: readonly { shape: readonly number[] }[],
    kind: string,
  ) => {
    if (given === undefined) return operands.map(() => null);
    if (!Array.isArray(given)) {
      bad(
        `ffiCall: ${option} must be an array of layouts (one per ${kind}, null for row-major), ` +
          `got ${text(given)}`,
      );
    }
    if (given.length > operands.length) {
      bad(
        `ffiCall: ${option} has ${given.length} layouts but there ` +
          `${operands.length === 1 ? "is" : "are"} ${operands.length} ${kind}` +
          `${operands.length === 1 ? "" : "s"}`,
      );
    }
    return operands.map((op, i) =>
      checkOne(given[i], option, i, { what: `${kind} ${i}`, shape: op.shape })
    );
  };
  const inputs = side("inputLayouts", inputLayouts, args, "argument");
  const outputs = side("outputLayouts", outputLayouts, results, "result");
  for (const [a, r] of aliases) {
    const li = inputs[a] ?? null, lo = outputs[r] ?? null;
    if (!sameLayout(li, lo, args[a]!.shape.length)) {
      bad(
        `ffiCall: inputOutputAliases maps argument ${a} to result ${r}, but argument ${a} has ` +
          `layout ${text(li ?? rowMajor(args[a]!.shape.length))} (inputLayouts[${a}]) and ` +
          `result ${r} layout ${text(lo ?? rowMajor(results[r]!.shape.length))} ` +
          `(outputLayouts[${r}]): an aliased pair needs one layout`,
      );
    }
  }
  // All row-major: the default path, as if no layouts were given.
  if (inputs.every((l) => l === null) && outputs.every((l) => l === null)) return null;
  return { inputs, outputs };
}

function rowMajor(rank: number): number[] {
  return Array.from({ length: rank }, (_, k) => k);
}

function sameLayout(a: readonly number[] | null, b: readonly number[] | null, rank: number) {
  if (a === null && b === null) return true;
  const x = a ?? rowMajor(rank), y = b ?? rowMajor(rank);
  return x.length === y.length && x.every((d, k) => d === y[k]);
}

/**
 * The layouts as jax's `input_layouts`/`output_layouts` take them: one
 * entry per operand, `null` for row-major.
 */
export function _jaxLayouts(
  layouts: _Layouts | null,
): { inputLayouts: (number[] | null)[]; outputLayouts: (number[] | null)[] } | null {
  if (layouts === null) return null;
  const list = (ls: readonly (readonly number[] | null)[]) => ls.map((l) => l && [...l]);
  return { inputLayouts: list(layouts.inputs), outputLayouts: list(layouts.outputs) };
}

/**
 * Copies the elements of an array of `shape` (`width` bytes each) between
 * row-major order and `layout` (major to minor): `toLayout` reads `src` in
 * row-major order and writes `dst` in the layout's, else the reverse. Bit
 * exact (elements are moved as 1, 2 or 4 byte units, never as numbers).
 */
export function _relayout(
  src: Uint8Array,
  dst: Uint8Array,
  shape: readonly number[],
  width: number,
  layout: readonly number[],
  toLayout: boolean,
): void {
  const rank = shape.length;
  let count = 1;
  for (const d of shape) count *= d;
  if (count === 0) return;
  if (rank === 0) {
    dst.set(src.subarray(0, width));
    return;
  }
  // The unit: the widest of 4, 2, 1 bytes that divides the element and both offsets.
  let u = 4;
  while (u > 1 && (width % u !== 0 || src.byteOffset % u !== 0 || dst.byteOffset % u !== 0)) {
    u >>= 1;
  }
  const view = (b: Uint8Array) =>
    u === 4
      ? new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4)
      : u === 2
      ? new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2)
      : b;
  const s = view(src), d = view(dst);
  const per = width / u; // units per element
  // Row-major strides of the logical shape, in units.
  const stride = new Array<number>(rank);
  for (let k = rank - 1, acc = per; k >= 0; k--) {
    stride[k] = acc;
    acc *= shape[k]!;
  }
  // The layout's dims, major to minor, and the logical stride of each.
  const dims = layout.map((k) => shape[k]!);
  const steps = layout.map((k) => stride[k]!);
  const inner = dims[rank - 1]!, innerStep = steps[rank - 1]!;
  const idx = new Array<number>(rank).fill(0);
  let logical = 0, physical = 0;
  for (let done = 0; done < count; done += inner) {
    if (per === 1) {
      if (toLayout) {
        for (let j = 0, l = logical; j < inner; j++, l += innerStep) d[physical++] = s[l]!;
      } else {
        for (let j = 0, l = logical; j < inner; j++, l += innerStep) d[l] = s[physical++]!;
      }
    } else {
      for (let j = 0, l = logical; j < inner; j++, l += innerStep) {
        for (let e = 0; e < per; e++, physical++) {
          if (toLayout) d[physical] = s[l + e]!;
          else d[l + e] = s[physical]!;
        }
      }
    }
    // Next row of the layout: the odometer over all but its most minor dim.
    for (let k = rank - 2; k >= 0; k--) {
      logical += steps[k]!;
      if (++idx[k]! < dims[k]!) break;
      logical -= steps[k]! * dims[k]!;
      idx[k] = 0;
    }
  }
}

/**
 * The arguments with those of a layout other than row-major copied into it
 * (the embedded runtime's part of `inputLayouts`); the others as they are.
 */
export function _argsInLayout<
  A extends { dtype: number; shape: readonly number[]; bytes: Uint8Array },
>(
  args: readonly A[],
  layouts: _Layouts,
): A[] {
  return args.map((a, i) => {
    const layout = layouts.inputs[i] ?? null;
    if (layout === null) return a;
    const bytes = new Uint8Array(a.bytes.byteLength);
    _relayout(a.bytes, bytes, a.shape, byteWidth(a.dtype), layout, true);
    return { ...a, bytes };
  });
}

/**
 * The results with those the handler wrote in a layout other than row-major
 * copied out of it into row-major order (the embedded runtime's part of
 * `outputLayouts`); the others as they are.
 */
export function _resultsFromLayout(
  outs: readonly DataTypedArray[],
  specs: readonly { dtype: number; shape: readonly number[] }[],
  layouts: _Layouts,
): DataTypedArray[] {
  return outs.map((out, i) => {
    const layout = layouts.outputs[i] ?? null;
    if (layout === null) return out;
    const spec = specs[i]!;
    const src = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    const dst = _resultStorage(src.byteLength, `result ${i}`);
    _relayout(src, dst, spec.shape, byteWidth(spec.dtype), layout, false);
    return viewAs(spec.dtype, dst);
  });
}
