/**
 * Shrinking a failing call: values set to 0 or kept at the start, smaller
 * dimensions, simpler attributes, each step kept while the call still
 * fails the same way.
 *
 * @module
 */
import { dataTypeInfo } from "../../abi/dtype.ts";
import type { FuzzCase } from "./types.ts";
import { _inDomain } from "./hints.ts";
import {
  _applyRules,
  _bytesOf,
  _constrain,
  _count,
  _decodeValues,
  type _Plan,
} from "./generate.ts";
import { _isValid, _key, _runCase, type _Runner, type _Verdict } from "./judge.ts";

/** How unusual a value is (non-finite and extreme first). */
function _plainness(v: number | bigint): number {
  if (typeof v === "bigint") return v < 0n ? 2 : v > 1000n ? 1 : 0;
  if (Number.isNaN(v)) return 5;
  if (!Number.isFinite(v)) return 4;
  if (Math.abs(v) > 1e30 || (v !== 0 && Math.abs(v) < 1e-30)) return 3;
  return v < 0 ? 2 : 0;
}

function _withArg(c: FuzzCase, i: number, arg: FuzzCase["args"][number]): FuzzCase {
  const args = c.args.slice();
  args[i] = arg;
  return { ...c, args };
}

/** The sub-block of `a` of shape `shape`, starting at `from` (per dimension, "start" or "end"). */
function _block(
  a: FuzzCase["args"][number],
  shape: number[],
  fromEnd: boolean,
): FuzzCase["args"][number] {
  const width = Math.max(1, dataTypeInfo(a.dtype).byteWidth);
  const out = new Uint8Array(_count(shape) * width);
  const n = _count(shape);
  const idx = new Array(shape.length).fill(0);
  for (let e = 0; e < n; e++) {
    let src = 0;
    for (let k = 0; k < shape.length; k++) {
      const off = fromEnd ? a.shape[k]! - shape[k]! : 0;
      src = src * a.shape[k]! + idx[k]! + off;
    }
    out.set(a.data.subarray(src * width, src * width + width), e * width);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return { dtype: a.dtype, shape, data: out };
}

/**
 * Shrinks a failing case: smaller dimensions (a sub-block from the start or
 * the end), elements set to 0 (halves, then one by one), attributes made
 * simpler; each step is kept when the call still fails the same way.
 */
export async function _shrink(
  r: _Runner,
  plan: _Plan,
  c0: FuzzCase,
  key: string,
): Promise<{ case: FuzzCase; steps: number; message: string; verdict: _Verdict }> {
  let best = c0;
  let steps = 0;
  let verdict: _Verdict | undefined;
  const budget = r.options.shrinkCalls ?? 300;
  const hang = key.startsWith("hang");
  const limit = r.calls + (hang ? Math.min(budget, 40) : budget);
  const attempt = async (c0: FuzzCase | undefined): Promise<boolean> => {
    if (c0 === undefined || r.calls >= limit) return false;
    const c = _constrain(c0, plan.argValues);
    if (!_isValid(r.options, c)) return false;
    const v = await _runCase(r, c);
    if (v !== null && v !== "rejected" && _key(v) === key) {
      best = c;
      verdict = v;
      steps++;
      return true;
    }
    return false;
  };
  const withResults = (c: FuzzCase): FuzzCase | undefined => {
    const results = _applyRules(plan.rules, c.args.map((a) => a.shape), c.args.map((a) => a.dtype));
    return results === undefined ? undefined : { ...c, results };
  };
  // Values first (cheap, and they keep what matters in place), then shapes, then values again.
  // One value of an argument at its first element, every other element 0:
  // what a NaN, an infinity or a negative number does is kept at the start,
  // where smaller shapes keep it.
  const oneValue = async () => {
    for (const [i, a] of best.args.entries()) {
      const vals = _decodeValues(a);
      if (vals.length < 2) continue;
      const zero = typeof vals[0] === "bigint" ? 0n : 0;
      const seen = new Set<string>();
      const special = vals.filter((v) => {
        const k = Object.is(v, -0) ? "-0" : String(v);
        if (v === zero || seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      special.sort((x, y) => _plainness(y) - _plainness(x));
      for (const v of special.slice(0, 6)) {
        const next = new Array(vals.length).fill(zero);
        next[0] = v;
        if (
          await attempt(_withArg(best, i, { ...a, data: _bytesOf(a.dtype, [next.length], next) }))
        ) {
          break;
        }
      }
    }
  };
  const zeroValues = async () => {
    for (const [i, a] of best.args.entries()) {
      const vals = _decodeValues(a);
      const zero = typeof vals[0] === "bigint" ? 0n : 0;
      const isZero = (v: number | bigint) => v === zero && !Object.is(v, -0);
      if (vals.every(isZero)) continue;
      const set = (from: number, to: number) => {
        const next = vals.slice();
        for (let k = from; k < to; k++) next[k] = zero;
        const width = Math.max(1, dataTypeInfo(a.dtype).byteWidth);
        const data = a.data.slice();
        const enc = _bytesOf(a.dtype, [next.length], next);
        if (enc.byteLength === data.byteLength) data.set(enc);
        else data.set(enc.subarray(0, Math.min(enc.length, data.length)));
        void width;
        return _withArg(best, i, { ...a, data });
      };
      if (await attempt(set(0, vals.length))) continue;
      // Halves, quarters, …, then single elements (bounded).
      for (let chunk = Math.ceil(vals.length / 2); chunk >= 1; chunk = Math.floor(chunk / 2)) {
        for (let from = 0; from < vals.length; from += chunk) {
          const cur = _decodeValues(best.args[i]!);
          if (cur.slice(from, from + chunk).every(isZero)) continue;
          if (r.calls >= limit) return;
          const next = cur.slice();
          for (let k = from; k < Math.min(vals.length, from + chunk); k++) next[k] = zero;
          const enc = _bytesOf(a.dtype, [next.length], next);
          await attempt(_withArg(best, i, { ...best.args[i]!, data: enc }));
        }
        if (chunk === 1) break;
        if (vals.length / chunk > 64) break;
      }
    }
  };
  const shrinkShapes = async () => {
    for (let i = 0; i < best.args.length; i++) {
      for (let k = 0; k < best.args[i]!.shape.length; k++) {
        for (;;) {
          const a = best.args[i]!;
          const d = a.shape[k]!;
          if (d <= 1) break;
          let kept = false;
          for (
            const smaller of [...new Set([1, 2, 3, Math.floor(d / 2), d - 1])].filter((x) =>
              x < d && x >= 1
            ).sort((x, y) => x - y)
          ) {
            const shape = a.shape.slice();
            shape[k] = smaller;
            // The other arguments with this dimension of the same size follow it; the
            // leading block of each is kept, then the trailing one.
            const smallerCase = (fromEnd: boolean): FuzzCase => {
              let c: FuzzCase = best;
              for (const [j, b] of best.args.entries()) {
                if (j !== i && b.shape[k] !== d) continue;
                const s = b.shape.slice();
                s[k] = smaller;
                c = _withArg(c, j, _block(b, s, fromEnd));
              }
              return c;
            };
            if (
              await attempt(withResults(smallerCase(false))) ||
              await attempt(withResults(smallerCase(true)))
            ) {
              kept = true;
              break;
            }
          }
          if (!kept || r.calls >= limit) break;
        }
      }
    }
  };
  const simplerAttrs = async () => {
    for (const [name, v] of best.attrs.entries) {
      if (v.kind !== "scalar") continue;
      const hinted = plan.hints.attrs.entries.has(name);
      const domain = plan.hints.domains.get(name);
      if (hinted && domain === undefined && !plan.hints.free.has(name)) continue; // pinned
      const candidates: (number | bigint)[] = typeof v.value === "bigint"
        ? [0n, 1n, v.value / 2n, v.value > 0n ? v.value - 1n : v.value + 1n]
        : [0, 1, Math.trunc(v.value / 2), v.value > 0 ? v.value - 1 : v.value + 1];
      if (domain?.choices) candidates.unshift(domain.choices[0]!);
      if (domain?.range) candidates.unshift(domain.range[0]);
      for (const value of candidates) {
        const cur = best.attrs.entries.get(name) as { value: number | bigint };
        if (value === cur.value || (typeof value === "number" && Number.isNaN(value))) continue;
        if (domain !== undefined) {
          // Inside the domain only; the first choice or the range's low end is the simplest.
          if (!_inDomain(domain, value)) continue;
        } else {
          const abs = (x: number | bigint) => x < 0 ? -x : x;
          if (!(abs(value) < abs(cur.value)) && !Number.isNaN(Number(cur.value))) continue;
        }
        const entries = new Map(best.attrs.entries);
        entries.set(name, { ...v, value });
        if (await attempt({ ...best, attrs: { kind: "dictionary", entries } })) break;
      }
    }
  };
  await oneValue();
  await shrinkShapes();
  await zeroValues();
  await shrinkShapes();
  await zeroValues();
  await simplerAttrs();
  if (verdict === undefined) {
    const v = await _runCase(r, best);
    verdict = v !== null && v !== "rejected" ? v : { kind: "crash", detail: "", message: "" };
  }
  return { case: best, steps, message: verdict.message, verdict };
}
