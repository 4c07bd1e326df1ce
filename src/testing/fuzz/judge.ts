/**
 * Running one generated call and judging it: a crash, a write outside a
 * result or into an argument, a hang, an error code outside XLA's range,
 * two calls that differ, a mismatch with the reference; or a pass, or a
 * call the handler refused.
 *
 * @module
 */
import { DataType, ErrorCode } from "../../abi/enums.ts";
import { type DataTypedArray, dataTypeInfo } from "../../abi/dtype.ts";
import type { AttrDictionary as CliAttrs } from "../../spec/grammar.ts";
import type { ArrayInput } from "../../runtime/ffi_call.ts";
import { assertAllClose } from "../assert.ts";
import type {
  FuzzCase,
  FuzzFailureKind,
  FuzzOptions,
  ReferenceArray,
  ReferenceAttrs,
} from "./types.ts";
import { type _Caller, _ffiAttrs, type _Outcome } from "./caller.ts";

/** A failure one call came to: its kind, what it names, its message. */
export interface _Verdict {
  kind: FuzzFailureKind;
  detail: string;
  message: string;
  /** A mismatch's expected results. */
  expected?: readonly ArrayBufferView[];
}

/** The failure a call's outcome is, or undefined (it succeeded, or the handler refused the input). */
function _judge(out: _Outcome, resultsChecked: boolean): _Verdict | undefined {
  if (out.ok) return undefined;
  const e = out.error!;
  const message = e.message;
  if (e.code === ErrorCode.DATA_LOSS) {
    const m = /\b(result|argument) (\d+)/.exec(message);
    if (m?.[1] === "result") {
      return resultsChecked
        ? { kind: "result-write", detail: `result ${m[2]}`, message }
        : undefined;
    }
    return { kind: "argument-write", detail: m ? `argument ${m[2]}` : "", message };
  }
  if (e.code === ErrorCode.DEADLINE_EXCEEDED) return { kind: "hang", detail: "", message };
  if (
    (e.code === ErrorCode.INTERNAL || e.code === ErrorCode.ABORTED) &&
    /ended its process|AddressSanitizer|crashed/.test(message)
  ) {
    // The sanitizers' reports name the fault better than the signal they end with.
    const asan = /AddressSanitizer: ([\w-]+)/.exec(message)?.[1];
    const ubsan = /runtime error: ([^\n:]+)/.exec(message)?.[1]?.trim();
    const sig = /\b(SIG[A-Z]+)\b/.exec(message)?.[1] ??
      /exit(?:ed with)? (?:status|code) \d+/.exec(message)?.[0]?.replace("exited with", "exit") ??
      "";
    const detail = asan !== undefined
      ? `AddressSanitizer ${asan}`
      : ubsan !== undefined
      ? `UndefinedBehaviorSanitizer ${ubsan}`
      : sig;
    return { kind: "crash", detail, message };
  }
  if (!Number.isInteger(e.code) || e.code < 0 || e.code > 16) {
    return { kind: "bad-error-code", detail: `code ${e.code}`, message };
  }
  return undefined;
}

function _sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** What runs cases: the caller, the options, whether result writes count, and the calls made. */
export interface _Runner {
  caller: _Caller;
  options: FuzzOptions;
  resultsChecked: boolean;
  calls: number;
}

/** A case's arguments as a reference gets them: typed arrays of their dtype, over copies. */
function _referenceArgs(c: FuzzCase): ReferenceArray[] {
  return c.args.map((a) => {
    const info = dataTypeInfo(a.dtype);
    const ctor = (info.typedArray ?? Uint8Array) as unknown as new (
      b: ArrayBuffer,
      o: number,
      n: number,
    ) => DataTypedArray;
    const bytes = a.data.slice();
    const per = info.typedArray === null ? 1 : info.typedArray.BYTES_PER_ELEMENT;
    return {
      data: new ctor(bytes.buffer, 0, bytes.byteLength / per),
      shape: [...a.shape],
      dtype: a.dtype,
    };
  });
}

/** A case's attributes as plain values. */
function _referenceAttrs(dict: CliAttrs): ReferenceAttrs {
  const out: ReferenceAttrs = {};
  for (const [name, v] of dict.entries) {
    switch (v.kind) {
      case "string":
        out[name] = v.value;
        break;
      case "scalar":
        out[name] = v.dtype === DataType.PRED ? Boolean(v.value) : v.value;
        break;
      case "array":
        out[name] = Array.from(v.values as ArrayLike<number | bigint>) as number[] | bigint[];
        break;
      case "dictionary":
        out[name] = _referenceAttrs(v);
        break;
    }
  }
  return out;
}

function _inputs(c: FuzzCase): ArrayInput[] {
  return c.args.map((a) => ({ data: a.data, shape: a.shape, dtype: a.dtype }));
}

/** Whether the options' `valid` takes a case (true without one). */
export function _isValid(options: FuzzOptions, c: FuzzCase): boolean {
  return options.valid === undefined || options.valid(_referenceArgs(c), _referenceAttrs(c.attrs));
}

/** Runs one case: its failure, `null` when it passed, `"rejected"` when the handler refused it. */
export async function _runCase(r: _Runner, c: FuzzCase): Promise<_Verdict | null | "rejected"> {
  const guard = r.options.guard ?? true;
  const attrs = _ffiAttrs(c.attrs);
  r.calls++;
  const out = await r.caller.call(_inputs(c), c.results, attrs, guard);
  const v = _judge(out, r.resultsChecked);
  if (v !== undefined) return v;
  if (!out.ok) return "rejected";
  if (r.options.checkDeterminism ?? true) {
    r.calls++;
    const again = await r.caller.call(_inputs(c), c.results, attrs, guard);
    const v2 = _judge(again, r.resultsChecked);
    if (v2 !== undefined) return v2;
    const differs = !again.ok
      ? -2
      : out.results!.findIndex((x, i) => !_sameBytes(x, again.results![i]!));
    if (differs !== -1) {
      return {
        kind: "nondeterministic",
        detail: differs >= 0 ? `result ${differs}` : "outcome",
        message: differs >= 0
          ? `result ${differs} differs between two calls with the same input`
          : `the same input succeeded, then failed: ${again.error!.message}`,
      };
    }
  }
  if (r.options.reference) {
    const want = await r.options.reference(_referenceArgs(c), _referenceAttrs(c.attrs));
    if (want !== undefined) {
      for (const [i, w] of want.entries()) {
        const got = out.results![i];
        if (got === undefined) break;
        try {
          const spec = c.results[i]!;
          assertAllClose(
            { data: got, shape: [...spec.shape], dtype: spec.dtype },
            { data: w, shape: [...spec.shape], dtype: spec.dtype },
          );
        } catch (e) {
          return {
            kind: "mismatch",
            detail: `result ${i}`,
            message: `result ${i} differs from the reference: ${(e as Error).message}`,
            expected: want.map((w) => w),
          };
        }
      }
    }
  }
  return null;
}

/** What tells distinct failures apart: the kind and what it names. */
export function _key(v: { kind: string; detail: string }): string {
  return `${v.kind} ${v.detail}`;
}
