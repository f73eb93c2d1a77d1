// The curves bench's tables (lib/curves.mjs), and the fit that says where replaying the journal starts to matter.

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(0)} %` : 'n/a');

function pad(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) => r.map((c, i) => (i < 2 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  '))
    .join('\n');
}

/**
 * A flow of n questions takes n + 1 rounds, and round k re-resolves the k − 1 answers before it from the journal:
 * n(n + 1)/2 resolutions in all. Fit server µs per flow ≈ perRound · (n + 1) + perReplay · n(n + 1)/2 (least squares
 * on relative error, so small n counts as much as large n). perRound is what any round costs; perReplay what one
 * replayed answer adds. Replaying costs a round more than the round itself beyond n ≈ 2 · perRound / perReplay.
 * @param {Array<{ x: number, usPerFlow: number }>} points
 */
export function fitReplayCost(points) {
  const rows = points
    .filter((p) => Number.isFinite(p.usPerFlow) && p.usPerFlow > 0)
    .map((p) => ({ u: p.x + 1, v: (p.x * (p.x + 1)) / 2, y: p.usPerFlow, w: 1 / p.usPerFlow ** 2 }));
  if (rows.length < 3) return undefined;
  let [uu, uv, vv, uy, vy] = [0, 0, 0, 0, 0];
  for (const { u, v, y, w } of rows) {
    uu += w * u * u;
    uv += w * u * v;
    vv += w * v * v;
    uy += w * u * y;
    vy += w * v * y;
  }
  const det = uu * vv - uv * uv;
  if (!det) return undefined;
  const perRound = (uy * vv - vy * uv) / det;
  const perReplay = (vy * uu - uy * uv) / det;
  return {
    perRound,
    perReplay,
    breakEven: perReplay > 0 ? (2 * perRound) / perReplay : Number.POSITIVE_INFINITY,
  };
}

/** The table of one sweep, a row per point and series, then the replay fit of each series that has one. */
export function printSweep(def, sweep) {
  console.log(`\n=== ${sweep.title}`);
  const rows = [
    [
      'x',
      'series',
      'conc',
      'flows/s',
      'rounds/s',
      'srv µs/flow',
      'srv µs/round',
      'p50 ms',
      'p99 ms',
      'srv CPU',
      'other CPU',
      'errors',
    ],
  ];
  for (const x of sweep.xs)
    for (const s of sweep.series) {
      const p = s.points.find((q) => q.x === x);
      if (!p) {
        rows.push([
          def.xTick(x),
          s.name,
          '',
          s.skipped ? 'SKIPPED' : s.failed ? 'FAILED' : 'n/a',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
        ]);
        continue;
      }
      rows.push([
        def.xTick(x),
        s.name,
        String(p.concurrency),
        f0(p.flowsPerSec),
        f0(p.roundsPerSec),
        f0(p.usPerFlow),
        f0(p.usPerRound),
        f2(p.p50Ms),
        f2(p.p99Ms),
        pct(p.serverCpu),
        `${pct(p.otherCpu)}${p.disturbed ? ' !' : ''}`,
        String(p.errors),
      ]);
    }
  console.log(pad(rows));
  console.log(
    '  srv µs/flow: server CPU per complete flow; srv µs/round = that ÷ rounds per flow. other CPU: all',
  );
  console.log('  other processes during the window (! = above 20 % of a core: the point is disturbed).');
  for (const s of sweep.series) {
    const fit = s.replayFit;
    if (!fit) continue;
    console.log(
      `  ${s.name}: ≈ ${f0(fit.perRound)} µs per round + ${f1(fit.perReplay)} µs per answer replayed from the journal;` +
        ` replay outweighs the round itself beyond n ≈ ${f0(fit.breakEven)} questions`,
    );
  }
}
