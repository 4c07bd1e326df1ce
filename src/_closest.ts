/**
 * "Did you mean …?": the candidate closest to a name that was not found.
 *
 * @module
 */

/** Edit distance (insertions, deletions, substitutions) between two strings. */
export function _distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * The candidate most like `name`: equal ignoring case, else the nearest by
 * edit distance within a third of the name's length (at least 2), else one
 * containing it or contained in it; `undefined` when none is close.
 */
export function _closest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(name.length / 3)) + 1;
  let part: string | undefined;
  for (const c of candidates) {
    const cl = c.toLowerCase();
    if (cl === lower) return c;
    const d = _distance(lower, cl);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
    if (part === undefined && (cl.includes(lower) || lower.includes(cl))) part = c;
  }
  return best ?? part;
}
