import assert from "node:assert/strict";
import { CHART_LAYOUT, decadeRange, escapeXml, renderLogBarChart } from "../bench/svg_chart.ts";

/** Checks tags nest and close, attributes are quoted, and only known entities appear. */
function assertWellFormed(svg: string): void {
  assert.ok(svg.startsWith("<svg "), "starts with <svg");
  assert.ok(svg.trimEnd().endsWith("</svg>"), "ends with </svg>");
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of svg.matchAll(tag)) {
    const between = svg.slice(last, m.index);
    assert.ok(!/[<>]/.test(between), `stray markup before ${m[0]}: ${between}`);
    for (const ent of between.matchAll(/&([^;\s]*);?/g)) {
      assert.ok(/^&(lt|gt|amp|quot|apos);$/.test(ent[0]), `bad entity ${ent[0]}`);
    }
    last = m.index! + m[0].length;
    const [, close, name, , selfClose] = m;
    if (close) assert.equal(stack.pop(), name, `</${name}> closes the open element`);
    else if (!selfClose) stack.push(name!);
  }
  assert.equal(svg.slice(last).trim(), "");
  assert.deepEqual(stack, [], "every element closed");
}

function bars(svg: string): { series: number; value: number; width: number }[] {
  return [
    ...svg.matchAll(
      /<rect class="bar" data-series="(\d+)" data-value="([^"]+)"[^>]*width="([^"]+)"/g,
    ),
  ]
    .map((m) => ({ series: Number(m[1]), value: Number(m[2]), width: Number(m[3]) }));
}

Deno.test("the chart is well-formed SVG with escaped labels", () => {
  const svg = renderLogBarChart({
    title: 'a <b> & "c"',
    unit: "ns",
    series: ["x<y", "z"],
    groups: [{ label: "g&1", values: [12, 3400] }, { label: "g2", values: [null, 5] }],
  });
  assertWellFormed(svg);
  assert.ok(svg.includes("a &lt;b&gt; &amp; &quot;c&quot;"));
  assert.ok(svg.includes("g&amp;1"));
  assert.ok(svg.includes("x&lt;y: n/a"), "a missing value is drawn as n/a");
});

Deno.test("bar lengths are logarithmic in the value", () => {
  const svg = renderLogBarChart({
    title: "t",
    unit: "ns",
    series: ["a"],
    groups: [10, 100, 1000, 10000].map((v) => ({ label: String(v), values: [v] })),
  });
  const b = bars(svg);
  assert.equal(b.length, 4);
  // Equal ratios give equal length steps: a decade is a fixed length.
  const steps = b.slice(1).map((x, i) => x.width - b[i]!.width);
  for (const s of steps) assert.ok(Math.abs(s - steps[0]!) < 0.2, `steps ${steps}`);
  assert.ok(steps[0]! > 0);
  const plot = CHART_LAYOUT.width - CHART_LAYOUT.labelWidth - CHART_LAYOUT.rightPad;
  // The axis spans 10^0..10^4: the largest bar reaches the right end of the plot.
  assert.ok(Math.abs(b[3]!.width - plot) < 0.2);
  assert.ok(Math.abs(b[0]!.width - plot / 4) < 0.2, "10 is one decade above the axis start");
  // Doubling a value adds log10(2) of a decade, not twice the length.
  const two = bars(renderLogBarChart({
    title: "t",
    unit: "ns",
    series: ["a", "b"],
    groups: [{ label: "x", values: [100, 200] }, { label: "y", values: [10, 1000] }],
  }));
  const decade = plot / 3; // axis 10^0..10^3
  assert.ok(Math.abs(two[1]!.width - two[0]!.width - decade * Math.log10(2)) < 0.2);
});

Deno.test("decade ticks cover the values", () => {
  assert.deepEqual(decadeRange([3, 4500]), [0, 4]);
  assert.deepEqual(decadeRange([100]), [1, 2]);
  assert.deepEqual(decadeRange([10, 1000]), [0, 3]);
  assert.deepEqual(decadeRange([]), [0, 1]);
  const svg = renderLogBarChart({
    title: "t",
    unit: "ns",
    series: ["a"],
    groups: [{ label: "x", values: [3] }, { label: "y", values: [4500] }],
  });
  const ticks = [...svg.matchAll(/class="tick" data-value="([^"]+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(ticks, [1, 10, 100, 1000, 10000]);
  assert.equal(escapeXml("'"), "&apos;");
});
