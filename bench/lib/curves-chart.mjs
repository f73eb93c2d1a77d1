// docs/images/bench-curves.svg from a curves run (lib/curves.mjs): a column per sweep, three rows of panels —
// flows/s, server CPU µs per flow, and a third that shows the sweep's own effect: µs per round for questions (a
// rising line there is the journal replay, O(n²) per flow), p50 latency per flow for the others.
import { formatCompact, renderChart } from './svg-chart.mjs';

const seriesOf = (sweep, y) =>
  sweep.series
    .filter((s) => s.points.length)
    .map((s) => ({
      name: s.name,
      points: s.points.map((p) => ({ x: p.x, y: y(p), label: `${p.x}: ${formatCompact(y(p))}` })),
    }));

/** What each row plots: its title, y label, scale, and the value of a point. */
const ROWS = [
  () => ({ title: 'throughput', label: 'flows/s (log)', log: true, y: (p) => p.flowsPerSec }),
  () => ({
    title: 'server CPU per flow',
    label: 'server CPU µs per flow (log)',
    log: true,
    y: (p) => p.usPerFlow,
  }),
  (name) =>
    name === 'questions'
      ? {
          title: 'server CPU per round',
          label: 'server CPU µs per round',
          log: false,
          y: (p) => p.usPerRound,
        }
      : { title: 'latency', label: 'p50 ms per flow (log)', log: true, y: (p) => p.p50Ms },
];

/**
 * @param {Record<string, object>} defs    lib/curves-sweeps.mjs SWEEPS
 * @param {Record<string, object>} sweeps  the measured sweeps, by name, in column order
 * @param {{ commit?: string | null, cpus?: number, seconds?: number, concurrency?: number }} [meta]
 */
export function renderCurves(defs, sweeps, meta = {}) {
  const names = Object.keys(sweeps);
  const panels = [];
  for (const row of ROWS)
    for (const name of names) {
      const def = defs[name];
      const sweep = sweeps[name];
      const r = row(name);
      panels.push({
        title: `${sweep.title}: ${r.title}`,
        x: { label: def.xLabel, log: true, ticks: sweep.xs.map((x) => ({ value: x, label: def.xTick(x) })) },
        y: { label: r.label, log: r.log },
        series: seriesOf(sweep, r.y),
      });
    }
  const notes = [
    'Server CPU is the server child’s own (from /proc), per complete flow; closed loop, one server measured at a time.',
    `Questions and argument size at ${meta.concurrency ?? 32} concurrent flows. A flow of n questions takes n + 1 rounds, each replaying the answers given before it.`,
    `${meta.cpus ?? '?'} cores, ${meta.seconds ?? '?'} s per point${meta.commit ? `, commit ${meta.commit}` : ''}: figures move ±10–20 % between runs; compare curves, not single points.`,
  ];
  for (const s of sweeps.questions?.series ?? [])
    if (s.replayFit)
      notes.push(
        `${s.name}: ≈ ${Math.round(s.replayFit.perRound)} µs per round + ${s.replayFit.perReplay.toFixed(1)} µs per answer replayed; replay outweighs the round beyond n ≈ ${Math.round(s.replayFit.breakEven)}.`,
      );
  return renderChart({ title: 'mrtr: cost as work grows', notes, columns: names.length, panels });
}
