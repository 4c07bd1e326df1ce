/**
 * A small SVG bar chart with a logarithmic value axis, for the benchmark's
 * results: horizontal bars grouped by category, one colour per series,
 * decade ticks, labels and a legend. No dependencies.
 *
 * @module
 */

/** One group of bars (e.g. "standard, same thread"). */
export interface ChartGroup {
  /** Group label, drawn left of its bars. */
  label: string;
  /** One value per series (same order as `series`); null draws "n/a". */
  values: readonly (number | null)[];
}

/** Chart input. */
export interface ChartSpec {
  title: string;
  /** Unit shown on the axis, e.g. "ns per call". */
  unit: string;
  /** Series names, for the legend. */
  series: readonly string[];
  groups: readonly ChartGroup[];
  /** Tick label of a decade value (default: the number). */
  formatTick?: (value: number) => string;
  /** Label printed at a bar's end (default: the number). */
  formatValue?: (value: number) => string;
}

/** Layout constants, exported for tests. */
export const CHART_LAYOUT = {
  width: 900,
  labelWidth: 200,
  rightPad: 90,
  barHeight: 14,
  barGap: 3,
  groupGap: 12,
  top: 60,
  bottomAxis: 40,
} as const;

const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];

/** Escapes text for SVG element content and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!,
  );
}

/**
 * The decade range [10^lo, 10^hi] covering every positive value, with the
 * smallest value strictly above 10^lo so that its bar has a length.
 */
export function decadeRange(values: readonly number[]): [number, number] {
  const pos = values.filter((v) => v > 0 && Number.isFinite(v));
  if (pos.length === 0) return [0, 1];
  const lo = Math.ceil(Math.log10(Math.min(...pos))) - 1;
  let hi = Math.ceil(Math.log10(Math.max(...pos)));
  if (hi <= lo) hi = lo + 1;
  return [lo, hi];
}

/**
 * Renders the chart as a standalone SVG document.
 *
 * @example
 * ```ts
 * import { renderLogBarChart } from "./svg_chart.ts";
 * const svg = renderLogBarChart({
 *   title: "cost",
 *   unit: "ns",
 *   series: ["a", "b"],
 *   groups: [{ label: "x", values: [10, 1000] }],
 * });
 * console.assert(svg.startsWith("<svg"));
 * ```
 */
export function renderLogBarChart(spec: ChartSpec): string {
  const L = CHART_LAYOUT;
  const fmtTick = spec.formatTick ?? ((v: number) => String(v));
  const fmtValue = spec.formatValue ?? ((v: number) => String(v));
  const all = spec.groups.flatMap((g) => g.values.filter((v): v is number => v !== null));
  const [lo, hi] = decadeRange(all);
  const plotLeft = L.labelWidth;
  const plotWidth = L.width - L.labelWidth - L.rightPad;
  const x = (v: number) => plotLeft + ((Math.log10(v) - lo) / (hi - lo)) * plotWidth;
  const n = spec.series.length;
  const groupHeight = n * (L.barHeight + L.barGap) - L.barGap;
  const plotHeight = spec.groups.length * (groupHeight + L.groupGap);
  const height = L.top + plotHeight + L.bottomAxis;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${L.width}" height="${height}" ` +
      `viewBox="0 0 ${L.width} ${height}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect x="0" y="0" width="${L.width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="${L.width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${
      escapeXml(spec.title)
    }</text>`,
  );
  // Legend.
  let lx = plotLeft;
  spec.series.forEach((s, i) => {
    out.push(
      `<rect x="${lx}" y="30" width="12" height="12" fill="${COLOURS[i % COLOURS.length]}"/>`,
    );
    out.push(`<text x="${lx + 16}" y="40">${escapeXml(s)}</text>`);
    lx += 24 + s.length * 6.5;
  });
  // Decade grid and ticks.
  const axisY = L.top + plotHeight;
  for (let d = lo; d <= hi; d++) {
    const v = 10 ** d;
    const gx = x(v).toFixed(1);
    out.push(
      `<line class="tick" data-value="${v}" x1="${gx}" y1="${
        L.top - 4
      }" x2="${gx}" y2="${axisY}" stroke="#dddddd"/>`,
    );
    out.push(
      `<text x="${gx}" y="${axisY + 14}" text-anchor="middle">${escapeXml(fmtTick(v))}</text>`,
    );
  }
  out.push(
    `<line x1="${plotLeft}" y1="${axisY}" x2="${
      plotLeft + plotWidth
    }" y2="${axisY}" stroke="#333333"/>`,
  );
  out.push(
    `<text x="${plotLeft + plotWidth / 2}" y="${axisY + 30}" text-anchor="middle">${
      escapeXml(spec.unit)
    } (log scale)</text>`,
  );
  // Bars.
  spec.groups.forEach((g, gi) => {
    const gy = L.top + gi * (groupHeight + L.groupGap);
    out.push(
      `<text x="${plotLeft - 6}" y="${gy + groupHeight / 2 + 4}" text-anchor="end">${
        escapeXml(g.label)
      }</text>`,
    );
    g.values.forEach((v, si) => {
      const by = gy + si * (L.barHeight + L.barGap);
      const colour = COLOURS[si % COLOURS.length];
      if (v === null || !(v > 0)) {
        out.push(
          `<text x="${plotLeft + 4}" y="${by + L.barHeight - 3}" fill="#888888">${
            escapeXml(spec.series[si] ?? "")
          }: n/a</text>`,
        );
        return;
      }
      const w = Math.max(1, x(v) - plotLeft);
      out.push(
        `<rect class="bar" data-series="${si}" data-value="${v}" x="${plotLeft}" y="${by}" ` +
          `width="${w.toFixed(1)}" height="${L.barHeight}" fill="${colour}"/>`,
      );
      out.push(
        `<text x="${(plotLeft + w + 4).toFixed(1)}" y="${by + L.barHeight - 3}">${
          escapeXml(fmtValue(v))
        }</text>`,
      );
    });
  });
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}
