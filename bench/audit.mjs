// What recording one round costs the server, in process (no HTTP): AuditTrail.observe for a realistic event, on each
// local sink, with the rounds of a turn arriving alone (a commit per event) or together (group commit, as under load:
// the flows benchmark sees about 18 events per batch at concurrency 32). The anchor is the same trail on a sink that
// stores nothing: building the record, its JSON and its hash. CPU is the whole process's (worker threads included),
// so the FULL sink's writer thread counts.
// Run after `npm run build`:  node bench/audit.mjs [--seconds=1] [--batch=18]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditSigner } from '../dist/audit/audit-key.js';
import { AuditTrail, JsonlAuditSink, SqliteAuditSink } from '../dist/audit/index.js';

const option = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = hit ? Number(hit.slice(name.length + 3)) : fallback;
  if (!(Number.isFinite(value) && value > 0)) {
    console.error(`error: --${name} must be a positive number, got ${hit}`);
    process.exit(2);
  }
  return value;
};
const SECONDS = option('seconds', 1);
const BATCH = Math.round(option('batch', 18));

const dir = mkdtempSync(join(tmpdir(), 'mrtr-bench-audit-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** A sink that keeps nothing and answers at once: what is left is the trail's own work per event. */
const nullSink = {
  description: 'none',
  durable: true,
  head: async () => undefined,
  append: async () => {},
  publishKey: async () => {},
  close: async () => {},
};

// The two rounds of the flows benchmark's approve_change flow, alternately: the question, then the answer.
function round(i) {
  const asking = i % 2 === 0;
  return {
    requestId: i,
    method: 'tools/call',
    target: 'approve_change',
    arguments: { change: `chg-1-${i >> 1}` },
    principal: { subject: 'alice', issuer: 'https://idp.example', clientId: 'agent' },
    round: asking ? 1 : 2,
    flowId: asking ? undefined : 'AZrT3k2mQx9vB1cD4eF5gH',
    inputResponses: asking ? undefined : { confirm: { action: 'accept', content: { approve: true } } },
    inputRequests: asking
      ? {
          confirm: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: `Approve chg-1-${i >> 1}?`,
              requestedSchema: {
                type: 'object',
                properties: { approve: { type: 'boolean' } },
                required: ['approve'],
              },
            },
          },
        }
      : undefined,
    outcome: asking ? 'input_required' : 'complete',
    reason: undefined,
    decidedBy: undefined,
    steps: [],
    notes: undefined,
    sensitive: undefined,
    startedAt: Date.now(),
    durationMs: 0.25,
  };
}

async function measure(label, sink, batch) {
  const trail = await AuditTrail.open(sink, { instance: 'bench-1', key: AuditSigner.generate('bench') });
  let i = 0;
  const turn = () => {
    const written = [];
    for (let j = 0; j < batch; j++) written.push(trail.observe(round(i++)));
    return Promise.all(written);
  };
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) await turn();
  const from = i;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) await turn();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const events = i - from;
  await trail.close();
  return {
    label,
    batch,
    events,
    perSecond: (events / wallMs) * 1000,
    cpuUs: (cpu.user + cpu.system) / events,
  };
}

const cases = [
  ['record, JSON and hash only (no sink)', () => nullSink],
  ['SQLite, synchronous=NORMAL (default)', () => SqliteAuditSink.open(join(dir, 'normal.db'))],
  [
    'SQLite, synchronous=FULL (fsync)',
    () => SqliteAuditSink.open(join(dir, 'full.db'), { synchronous: 'full' }),
  ],
  ['JSON lines, file (best effort)', () => JsonlAuditSink.open(join(dir, 'audit.jsonl'))],
];

const rows = [];
for (const batch of [1, BATCH]) {
  for (const [label, open] of cases) rows.push(await measure(label, await open(), batch));
}
const anchor = new Map(rows.filter((r) => r.label.startsWith('record')).map((r) => [r.batch, r.cpuUs]));
console.log(`audit events through AuditTrail.observe, ${SECONDS} s per case (node ${process.version})\n`);
console.log(
  'sink'.padEnd(40),
  'batch'.padStart(5),
  'events/s'.padStart(10),
  'CPU µs/event'.padStart(13),
  'sink µs/event'.padStart(14),
);
for (const r of rows) {
  const sinkUs = r.cpuUs - anchor.get(r.batch);
  console.log(
    r.label.padEnd(40),
    String(r.batch).padStart(5),
    Math.round(r.perSecond).toLocaleString('en-US').padStart(10),
    r.cpuUs.toFixed(1).padStart(13),
    (r.label.startsWith('record') ? '—' : sinkUs.toFixed(1)).padStart(14),
  );
}
console.log(
  '\nbatch: events observed in one turn (written in one transaction: group commit). sink µs/event: CPU beyond the',
  '\nno-sink row of the same batch size. The flows benchmark (npm run bench) gives the same costs end to end.',
);
