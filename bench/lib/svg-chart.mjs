// A small, dependency-free SVG line chart: a grid of panels, each with its own axes (linear or log), series drawn as
// lines through their points, and a legend. Written for the curves bench (lib/curves-chart.mjs) and meant to be read
// on GitHub: light background, system fonts only, no scripts, no external references, so the file works as an
// <img> in markdown. test/bench/svg-chart.test.ts checks its shape.

/** Colours by series, in order of first appearance in the chart: the same series has the same colour in every panel. */
const PALETTE = ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bc4c00', '#57606a'];
const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif";

/** Space inside a panel around its plot area: tick labels and the axis label left and below, title and legend above. */
const INSET = { left: 62, right: 14, top: 46, bottom: 44 };
/** Space around the grid of panels: the chart's title and notes above it. */
const MARGIN = 16;
const TITLE_HEIGHT = 26;
const NOTE_HEIGHT = 15;

export function escapeXml(s) {
  return String(s).replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c],
  );
}

const round2 = (n) => Math.round(n * 100) / 100;

/** 1 → "1", 1500 → "1.5k", 2000000 → "2M", 0.25 → "0.25": short tick labels. */
export function formatCompact(v) {
  const abs = Math.abs(v);
  const trim = (n) => String(Number(n.toPrecision(3)));
  if (abs >= 1e6) return `${trim(v / 1e6)}M`;
  if (abs >= 1e3) return `${trim(v / 1e3)}k`;
  return trim(v);
}

/** Ticks 1, 2, 5 × 10^k: "nice" steps, at most about `count` of them over [0, max]. */
function linearTicks(max, count = 5) {
  if (!(max > 0)) return { top: 1, ticks: [0, 1] };
  const raw = max / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw);
  const top = Math.ceil(max / step) * step;
  const ticks = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(Number(t.toPrecision(12)));
  return { top, ticks };
}

/** Decades over [min, max]; when that is one or two decades only, 2 and 5 of each too, so the axis has labels. */
function logTicks(min, max) {
  const lo = Math.floor(Math.log10(min));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(max)));
  const mults = hi - lo <= 2 ? [1, 2, 5] : [1];
  const ticks = [];
  for (let k = lo; k <= hi; k++)
    for (const m of mults) {
      const t = Number((m * 10 ** k).toPrecision(12));
      if (t <= 10 ** hi) ticks.push(t);
    }
  return { lo: 10 ** lo, hi: 10 ** hi, ticks };
}

/**
 * A scale from data to pixels along one axis. `log` axes need positive values; others start at 0. `given` ticks
 * ({ value, label }) replace the computed ones (the x values a sweep measured, labelled in its own units).
 */
function makeScale({ values, log, given, from, to, format = formatCompact }) {
  const finite = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo;
  let hi;
  let ticks;
  if (given?.length) {
    const vs = given.map((t) => t.value);
    lo = Math.min(...vs, ...finite);
    hi = Math.max(...vs, ...finite);
    ticks = given;
  } else if (log) {
    const l = logTicks(finite.length ? Math.min(...finite) : 1, finite.length ? Math.max(...finite) : 10);
    lo = l.lo;
    hi = l.hi;
    ticks = l.ticks.map((value) => ({ value, label: format(value) }));
  } else {
    const l = linearTicks(finite.length ? Math.max(...finite) : 1);
    lo = 0;
    hi = l.top;
    ticks = l.ticks.map((value) => ({ value, label: format(value) }));
  }
  if (hi === lo) hi = log ? lo * 10 : lo + 1;
  const f = log ? Math.log10 : (v) => v;
  const [a, b] = [f(lo), f(hi)];
  // Given ticks sit at the data's own extremes: keep the first and last point off the panel's edge.
  const pad = given?.length ? (b - a) * 0.06 : 0;
  const pos = (v) => from + ((f(v) - (a - pad)) / (b - a + 2 * pad)) * (to - from);
  const usable = (v) => Number.isFinite(v) && (!log || v > 0);
  return { pos, ticks, usable };
}

function text(x, y, s, attrs = '') {
  return `<text x="${round2(x)}" y="${round2(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(s)}</text>`;
}

/** One panel, its top-left corner at (x0, y0). */
function renderPanel(panel, x0, y0, w, h, colourOf) {
  const left = x0 + INSET.left;
  const right = x0 + w - INSET.right;
  const top = y0 + INSET.top;
  const bottom = y0 + h - INSET.bottom;
  const all = panel.series.flatMap((s) => s.points);
  const xs = makeScale({
    values: all.map((p) => p.x),
    log: panel.x.log,
    given: panel.x.ticks,
    from: left,
    to: right,
    format: panel.x.format,
  });
  const ys = makeScale({
    values: all.map((p) => p.y),
    log: panel.y.log,
    given: panel.y.ticks,
    from: bottom,
    to: top,
    format: panel.y.format,
  });
  const out = [`<g class="panel">`];
  out.push(text(x0 + w / 2, y0 + 16, panel.title, 'class="panel-title" text-anchor="middle"'));
  // Grid and tick labels.
  for (const t of ys.ticks) {
    const y = round2(ys.pos(t.value));
    out.push(`<line class="grid" x1="${left}" y1="${y}" x2="${right}" y2="${y}"/>`);
    out.push(text(left - 6, y + 4, t.label, 'class="tick" text-anchor="end"'));
  }
  for (const t of xs.ticks) {
    const x = round2(xs.pos(t.value));
    out.push(`<line class="grid" x1="${x}" y1="${top}" x2="${x}" y2="${bottom}"/>`);
    out.push(text(x, bottom + 15, t.label, 'class="tick" text-anchor="middle"'));
  }
  out.push(`<rect class="frame" x="${left}" y="${top}" width="${right - left}" height="${bottom - top}"/>`);
  out.push(text((left + right) / 2, bottom + 33, panel.x.label, 'class="axis-label" text-anchor="middle"'));
  const yMid = (top + bottom) / 2;
  out.push(
    text(
      x0 + 14,
      yMid,
      panel.y.label,
      `class="axis-label" text-anchor="middle" transform="rotate(-90 ${round2(x0 + 14)} ${round2(yMid)})"`,
    ),
  );
  // Series: a line through consecutive usable points (a missing point breaks it), a dot on each.
  for (const s of panel.series) {
    const colour = colourOf(s.name);
    out.push(`<g class="series" data-series="${escapeXml(s.name)}">`);
    let run = [];
    const flush = () => {
      if (run.length > 1)
        out.push(
          `<polyline points="${run.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
        );
      run = [];
    };
    for (const p of s.points) {
      if (!xs.usable(p.x) || !ys.usable(p.y)) {
        flush();
        continue;
      }
      run.push(`${round2(xs.pos(p.x))},${round2(ys.pos(p.y))}`);
    }
    flush();
    for (const p of s.points) {
      if (!xs.usable(p.x) || !ys.usable(p.y)) continue;
      out.push(
        `<circle class="point" cx="${round2(xs.pos(p.x))}" cy="${round2(ys.pos(p.y))}" r="3" fill="${colour}"><title>${escapeXml(`${s.name}: ${p.label ?? `${p.x}, ${p.y}`}`)}</title></circle>`,
      );
    }
    out.push('</g>');
  }
  // Legend, one line above the plot area.
  let lx = left;
  for (const s of panel.series) {
    const colour = colourOf(s.name);
    out.push(
      `<line x1="${round2(lx)}" y1="${y0 + 32}" x2="${round2(lx + 18)}" y2="${y0 + 32}" stroke="${colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
    );
    out.push(text(lx + 22, y0 + 36, s.name, 'class="legend"'));
    lx += 22 + s.name.length * 6.2 + 14;
  }
  out.push('</g>');
  return out.join('\n');
}

/**
 * @param {object} chart
 * @param {string} chart.title
 * @param {string[]} [chart.notes]  lines of small print under the title
 * @param {number} chart.columns   panels per row
 * @param {number} [chart.panelWidth]
 * @param {number} [chart.panelHeight]
 * @param {Array<{ title: string,
 *   x: { label: string, log?: boolean, ticks?: Array<{ value: number, label: string }>, format?: (v: number) => string },
 *   y: { label: string, log?: boolean, ticks?: Array<{ value: number, label: string }>, format?: (v: number) => string },
 *   series: Array<{ name: string, dashed?: boolean, points: Array<{ x: number, y: number, label?: string }> }> }>} chart.panels
 * @returns {string} a standalone SVG document
 */
export function renderChart({ title, notes = [], columns, panelWidth = 330, panelHeight = 250, panels }) {
  const colours = new Map();
  const colourOf = (name) => {
    if (!colours.has(name)) colours.set(name, PALETTE[colours.size % PALETTE.length]);
    return colours.get(name);
  };
  const rows = Math.ceil(panels.length / columns);
  const head = MARGIN + TITLE_HEIGHT + notes.length * NOTE_HEIGHT;
  // Wide enough for the longest note too (at most ~6.2 px per character at the notes' size), not only the panels.
  const width = Math.ceil(MARGIN * 2 + Math.max(columns * panelWidth, ...notes.map((n) => n.length * 6.2)));
  const height = head + rows * panelHeight + MARGIN;
  const body = panels.map((p, i) =>
    renderPanel(
      p,
      MARGIN + (i % columns) * panelWidth,
      head + Math.floor(i / columns) * panelHeight,
      panelWidth,
      panelHeight,
      colourOf,
    ),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${escapeXml(FONT)}">`,
    `<title>${escapeXml(title)}</title>`,
    '<style>',
    '.panel-title{font-size:13px;font-weight:600;fill:#1f2328}',
    '.axis-label{font-size:11px;fill:#1f2328}',
    '.tick,.legend{font-size:10.5px;fill:#57606a}',
    '.note{font-size:11px;fill:#57606a}',
    '.grid{stroke:#d8dee4;stroke-width:1}',
    '.frame{fill:none;stroke:#8c959f;stroke-width:1}',
    '</style>',
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    text(MARGIN, MARGIN + 16, title, 'font-size="16" font-weight="600" fill="#1f2328"'),
    ...notes.map((n, i) => text(MARGIN, MARGIN + TITLE_HEIGHT + 8 + i * NOTE_HEIGHT, n, 'class="note"')),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
