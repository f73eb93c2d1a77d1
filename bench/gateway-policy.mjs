// What the gateway's policy costs one call, in process: Policy.decide over 100 rules (tool globs, roles, scopes,
// CEL conditions on the arguments and the caller, deny rules with and without conditions), and Policy.visible (the
// listing check, conditions aside). Reports µs per decision, the median of several runs. The goal: ≤ 100 µs.
// Run after `npm run build`:  node bench/gateway-policy.mjs [--runs=7] [--decisions=20000]
import { compilePolicy } from '../dist/gateway/policy/index.js';

const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const RUNS = arg('runs', 7);
const DECISIONS = arg('decisions', 20_000);

const UPSTREAMS = Array.from({ length: 10 }, (_, i) => `up${i}`);
const ROLES = ['dev', 'ops', 'requester', 'approver', 'auditor'];
const CONDITIONS = [
  'has(args.path) && args.path.startsWith("/data/public")',
  'args.count < 100',
  '"ops" in caller.roles || caller.subject.endsWith("@example.com")',
  'has(args.name) && args.name.matches("^[a-z][a-z0-9_-]*$")',
  'args.items.all(i, i.qty > 0 && i.qty < 1000)',
  'tool.name.startsWith("read_") && size(args) < 10',
];

/** 100 rules: 40 plain allows, 25 conditional allows, 15 with controls and rate limits, 20 denies (half conditional). */
function rules() {
  const out = [];
  for (let i = 0; i < 40; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/${['read_*', 'list_*', 'get_?', '*_file'][i % 4]}`],
      roles: [ROLES[i % ROLES.length]],
    });
  for (let i = 0; i < 25; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/*`, `up${(i + 3) % 10}/search_*`],
      roles: ['*'],
      when: CONDITIONS[i % CONDITIONS.length],
    });
  for (let i = 0; i < 15; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/write_*`],
      roles: [ROLES[i % 3]],
      scopes: ['files'],
      require: i % 3 === 0 ? ['approval', 'consent'] : ['consent'],
      ...(i % 3 === 0 ? { approval: { role: 'approver', approvals: 1 + (i % 2) } } : {}),
      rateLimit: { requests: 10, perMs: 60_000 },
    });
  for (let i = 0; i < 20; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/*`],
      deny: true,
      ...(i % 2 === 0
        ? { when: 'has(args.path) && (args.path.startsWith("/data/secret") || args.path.contains("/.git/"))' }
        : { tools: [`${UPSTREAMS[i % 10]}/delete_*`] }),
    });
  return out;
}

const policy = compilePolicy(rules(), { file: 'bench' });
const caller = {
  subject: 'ann@example.com',
  issuer: 'https://id.example',
  roles: ['dev', 'requester'],
  scopes: ['files'],
};
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

function measure(label, once) {
  for (let i = 0; i < 2_000; i++) once(i); // warm-up: let the JIT settle
  const perRun = [];
  for (let r = 0; r < RUNS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < DECISIONS; i++) once(i);
    perRun.push(Number(process.hrtime.bigint() - start) / 1000 / DECISIONS);
  }
  console.log(
    `${label.padEnd(52)} ${median(perRun).toFixed(2).padStart(8)} µs  (median of ${RUNS} × ${DECISIONS})`,
  );
}

console.log(`policy of ${policy.ruleCount} rules, digest ${policy.digest.slice(0, 12)}…`);
let allowed = 0;
measure('decide, a mix of 5 calls', (i) => {
  const [ref, args] = calls[i % calls.length];
  if (policy.decide(caller, ref, args).allow) allowed++;
});
for (const [ref, args] of calls)
  measure(`decide ${ref.upstream}/${ref.tool}`, () => policy.decide(caller, ref, args));
measure('visible, a mix of 5 tools', (i) => policy.visible(caller, calls[i % calls.length][0]));
if (allowed === 0) throw new Error('no call was allowed: the bench policy is not what it means to be');
