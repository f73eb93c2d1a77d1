// What the gateway's policy costs one call, in process: Policy.decide over 100 rules (tool globs, roles, scopes,
// CEL conditions on the arguments and the caller, deny rules with and without conditions), and Policy.visible (the
// listing check, conditions aside). Reports µs per decision, the median of several runs. The goal: ≤ 100 µs.
// Run after `npm run build`:  node bench/gateway-policy.mjs [--runs=7] [--decisions=20000] [--json]
// (--json: one line of JSON on stdout instead of the table; `npm run bench` reads it for its gateway rows.)
import { compilePolicy } from '../dist/gateway/policy/index.js';
import { BENCH_CALLER, benchRules } from './lib/gateway-rules.mjs';

const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const RUNS = arg('runs', 7);
const DECISIONS = arg('decisions', 20_000);
const JSON_OUT = process.argv.includes('--json');

const policy = compilePolicy(benchRules(), { file: 'bench' });
const caller = BENCH_CALLER;
const calls = [
  [
    { upstream: 'up1', tool: 'read_file' },
    { path: '/data/public/report.txt', count: 3 },
  ],
  [
    { upstream: 'up2', tool: 'write_file' },
    { path: '/data/public/out.txt', content: 'x'.repeat(200) },
  ],
  [
    { upstream: 'up3', tool: 'search_items' },
    { name: 'widget', items: [{ qty: 1 }, { qty: 5 }, { qty: 9 }], count: 50 },
  ],
  [{ upstream: 'up4', tool: 'read_file' }, { path: '/data/secret/key.txt' }],
  [{ upstream: 'up9', tool: 'nothing_matches' }, {}],
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rows = [];
function measure(label, once) {
  for (let i = 0; i < 2_000; i++) once(i); // warm-up: let the JIT settle
  const perRun = [];
  for (let r = 0; r < RUNS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < DECISIONS; i++) once(i);
    perRun.push(Number(process.hrtime.bigint() - start) / 1000 / DECISIONS);
  }
  const us = median(perRun);
  rows.push({ label, us });
  if (!JSON_OUT)
    console.log(`${label.padEnd(52)} ${us.toFixed(2).padStart(8)} µs  (median of ${RUNS} × ${DECISIONS})`);
}

if (!JSON_OUT) console.log(`policy of ${policy.ruleCount} rules, digest ${policy.digest.slice(0, 12)}…`);
let allowed = 0;
measure('decide, a mix of 5 calls', (i) => {
  const [ref, args] = calls[i % calls.length];
  if (policy.decide(caller, ref, args).allow) allowed++;
});
for (const [ref, args] of calls)
  measure(`decide ${ref.upstream}/${ref.tool}`, () => policy.decide(caller, ref, args));
// The call the `gw-gateway-full` row of `npm run bench` makes through the gateway: let through by a condition on the
// caller, after the deny rules' conditions on the arguments were evaluated.
const echo = [{ upstream: 'up0', tool: 'echo' }, { message: 'm-1' }];
if (!policy.decide(caller, ...echo).allow)
  throw new Error('up0/echo is refused: the gw-gateway-full row would fail');
measure('decide up0/echo (the gateway row of npm run bench)', () => policy.decide(caller, ...echo));
measure('visible, a mix of 5 tools', (i) => policy.visible(caller, calls[i % calls.length][0]));
if (allowed === 0) throw new Error('no call was allowed: the bench policy is not what it means to be');
if (JSON_OUT)
  console.log(JSON.stringify({ ruleCount: policy.ruleCount, runs: RUNS, decisions: DECISIONS, rows }));
