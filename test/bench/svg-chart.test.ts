// The SVG chart of `npm run bench -- --curves` (bench/lib/svg-chart.mjs), drawn from fixed data: a well-formed
// document that names its series and axes and puts larger values further right and higher up. Nothing is timed.
import { describe, expect, it } from 'vitest';
import { renderChart } from '../../bench/lib/svg-chart.mjs';

const xs = [1, 2, 5, 10, 20, 40];
const svg = renderChart({
  title: 'cost as work grows',
  notes: ['fixed data <&> for the test'],
  columns: 2,
  panels: [
    {
      title: 'throughput',
      x: {
        label: 'questions per flow (log)',
        log: true,
        ticks: xs.map((value) => ({ value, label: String(value) })),
      },
      y: { label: 'flows/s (log)', log: true },
      series: [
        { name: 'ours', points: xs.map((x) => ({ x, y: 4000 / x })) },
        { name: 'ours, full stack', points: xs.map((x) => ({ x, y: 1500 / x })) },
      ],
    },
    {
      title: 'server CPU per round',
      x: { label: 'questions per flow (log)', log: true },
      y: { label: 'server CPU µs per round', log: false },
      series: [
        // A missing point (NaN) leaves a gap, not a broken document.
        { name: 'ours', points: xs.map((x) => ({ x, y: x === 5 ? Number.NaN : 100 + 4 * x })) },
      ],
    },
  ],
});

/** Every element opened is closed in order: a tag-balance check, enough for what the renderer writes. */
function unbalancedTags(doc: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  for (const m of doc.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (!closing) stack.push(name!);
    else if (stack.pop() !== name) problems.push(`</${name}> at ${m.index}`);
  }
  return [...problems, ...stack.map((s) => `<${s}> never closed`)];
}

/** Centres of a series' dots in one panel, in the order of its points. */
function dots(panelIndex: number, series: string): Array<{ cx: number; cy: number }> {
  const panel = svg.split('<g class="panel">')[panelIndex + 1]!;
  const group = panel.split(`<g class="series" data-series="${series}">`)[1]!.split('</g>')[0]!;
  return [...group.matchAll(/<circle class="point" cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => ({
    cx: Number(m[1]),
    cy: Number(m[2]),
  }));
}

describe('bench/lib/svg-chart.mjs', () => {
  it('writes one well-formed SVG document with a light background and nothing active or external', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(unbalancedTags(svg)).toEqual([]);
    expect(svg).toContain('fill="#ffffff"');
    expect(svg).not.toMatch(/<script|href=|@import|url\(/i);
    // Text is escaped: the note's markup characters are data.
    expect(svg).toContain('fixed data &lt;&amp;&gt; for the test');
  });

  it('names every series and both axes of every panel', () => {
    for (const s of ['ours', 'ours, full stack']) expect(svg).toContain(`>${s}</text>`);
    for (const label of ['questions per flow (log)', 'flows/s (log)', 'server CPU µs per round'])
      expect(svg).toContain(`>${label}</text>`);
    expect(svg).toContain('>throughput</text>');
  });

  it('places larger x further right and larger y higher up (SVG y grows downwards)', () => {
    const falling = dots(0, 'ours'); // y = 4000 / x
    expect(falling).toHaveLength(xs.length);
    for (let i = 1; i < falling.length; i++) {
      expect(falling[i]!.cx).toBeGreaterThan(falling[i - 1]!.cx);
      expect(falling[i]!.cy).toBeGreaterThan(falling[i - 1]!.cy);
    }
    // The lower series of the same panel sits lower at every x.
    const lower = dots(0, 'ours, full stack');
    for (let i = 0; i < lower.length; i++) expect(lower[i]!.cy).toBeGreaterThan(falling[i]!.cy);

    const rising = dots(1, 'ours'); // y = 100 + 4x, one point missing
    expect(rising).toHaveLength(xs.length - 1);
    for (let i = 1; i < rising.length; i++) {
      expect(rising[i]!.cx).toBeGreaterThan(rising[i - 1]!.cx);
      expect(rising[i]!.cy).toBeLessThan(rising[i - 1]!.cy);
    }
  });

  it('gives a series the same colour in every panel', () => {
    const colour = (i: number) =>
      /<circle class="point"[^>]*fill="(#[0-9a-f]{6})"/.exec(svg.split('<g class="panel">')[i + 1]!)?.[1];
    expect(colour(0)).toBeDefined();
    expect(colour(1)).toBe(colour(0));
  });
});
