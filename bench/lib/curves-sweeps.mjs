// The three sweeps of `npm run bench -- --curves` (lib/curves.mjs): what is varied, over which points, on which
// servers, and the flow one load worker runs at each point.
import { SERVER_DEFS } from './servers.mjs';

/**
 * The servers of the curves, registered into SERVER_DEFS beside the table's rows so that they start through
 * startServer like every row does (and get whatever it does to a child, e.g. pin it to a core). The n-question tool
 * runs on lib/ours-server.mjs itself (--questions-tool), so "full stack" is that server's own flags.
 */
const CURVE_SERVERS = {
  'curve-ours-questions': {
    ...SERVER_DEFS.ours,
    label: 'ours',
    args: (port) => [...SERVER_DEFS.ours.args(port), '--questions-tool'],
  },
  'curve-ours-full-questions': {
    ...SERVER_DEFS.ours,
    label: 'ours, full stack',
    args: (port) => [
      ...SERVER_DEFS.ours.args(port),
      '--questions-tool',
      ...['--auth', 'dev', '--store', 'sqlite', '--audit', 'sqlite'],
    ],
    auth: 'dev', // authHeaders() sends the development token
  },
};
for (const [name, def] of Object.entries(CURVE_SERVERS)) SERVER_DEFS[name] ??= def;

const KB = 1000;
const bytes = (n) => (n >= KB ? `${n / KB} KB` : `${n} B`);

/** `change` of exactly `size` characters (ASCII: bytes), unique per flow: the unique part first, then padding. */
function paddedChange(unique, size) {
  return unique.length >= size ? unique : unique + 'x'.repeat(size - unique.length);
}

/**
 * Each sweep: its x values, its series (a server each), its tool and `flow(x, worker, seq, tag)` → { args, expect },
 * the arguments of one flow (unique per flow: `tag` per run, then worker and sequence number) and the final text
 * that proves the flow complete. `rounds(x)`: a flow's rounds, to turn µs per flow into µs per round.
 * `concurrency(x)`, if any: the concurrent flows at x (else the run's --concurrency).
 */
export const SWEEPS = {
  questions: {
    title: 'Questions per flow',
    xLabel: 'questions per flow (log)',
    xs: [1, 2, 5, 10, 20, 40],
    xTick: String,
    series: [
      { server: 'curve-ours-questions', name: 'ours' },
      { server: 'curve-ours-full-questions', name: 'ours, full stack' },
    ],
    tool: 'ask_questions',
    // Round k re-resolves the answers before it from the journal: fit that cost (curves-report.mjs fitReplayCost).
    replays: true,
    // Each question is a round of its own (the tool asks them one after another), then the round that completes.
    rounds: (n) => n + 1,
    flow: (n, worker, seq, tag) => {
      const run = `q-${tag}-${worker}-${seq}`;
      return { args: { n, run }, expect: `confirmed ${n} ${run}` };
    },
  },
  args: {
    title: 'Argument size',
    xLabel: 'size of the change argument (log)',
    xs: [100, KB, 10 * KB, 100 * KB],
    xTick: bytes,
    series: [
      { server: 'ours', name: 'ours' },
      { server: 'sdk', name: 'sdk' },
    ],
    tool: 'approve_change',
    rounds: () => 2,
    // Both servers echo `change` in the question and in the final text, so the responses grow with it too.
    flow: (size, worker, seq, tag) => {
      const change = paddedChange(`chg-${tag}-${worker}-${seq}-`, size);
      return { args: { change }, expect: `approved ${change}` };
    },
  },
  concurrency: {
    title: 'Concurrency',
    xLabel: 'concurrent flows (log)',
    xs: [1, 4, 16, 64, 256],
    xTick: String,
    series: [
      { server: 'ours', name: 'ours' },
      { server: 'sdk', name: 'sdk' },
    ],
    tool: 'approve_change',
    concurrency: (c) => c,
    rounds: () => 2,
    flow: (_c, worker, seq, tag) => {
      const change = `chg-${tag}-${worker}-${seq}`;
      return { args: { change }, expect: `approved ${change}` };
    },
  },
};
