// The fleet (docs/deploy.md): three `mrtr serve --fixture workflows` instances sharing one keyring file, Redis for
// the replay guard, PostgreSQL for the audit trail and one data directory for the workflows' SQLite databases, behind
// Debian's nginx with the configuration the page shows. Hundreds of concurrent flows across the workflows; one
// instance is SIGKILLed mid-run and restarted; every flow completes, each effect is in the databases exactly once,
// the audit trail shows flows whose consecutive rounds landed on different instances, and `mrtr audit verify`
// passes. Prints flows/s of one instance and of the fleet, and the p99 of a round (figures, not assertions).
// `npm run test:fleet` runs this file alone.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type AuditRecord, openAuditReader } from 'mrtr/audit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { TestPostgres } from '../helpers/postgres-server.js';
import { TestRedis } from '../helpers/redis-server.js';
import { runCommand } from '../helpers/run-cli.js';
import { type ServeProcess, spawnServe } from '../workflows/spawn-serve.js';
import { nginxBlockFromDoc, pointAt, TestNginx } from './nginx.js';
import { type FlowRun, KINDS, percentile, runFlow } from './workload.js';

const USERS = Array.from({ length: 12 }, (_, i) => `user${i}`);
const tokenOf = (user: string) => `${user}-fleet-token`;
const INSTANCES = ['fleet-a', 'fleet-b', 'fleet-c'];
/** A bound for a busy CI machine, not a figure: a run takes 5-20 s, a takeover waits out a 7 s lease. */
const RUN_LIMIT_MS = 180_000;

let dir: string;
let redis: TestRedis;
let pg: TestPostgres;
let nginx: TestNginx;
let ports: number[];
let balancer: string;
const instances: ServeProcess[] = [];
let argsOf: (i: number) => string[];
let env: NodeJS.ProcessEnv;
let vkey: string;
let assetTag: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-fleet-'));
  [redis, pg] = await Promise.all([TestRedis.start(), TestPostgres.start()]);
  const tokens = Object.fromEntries(
    USERS.map((u, i) => [tokenOf(u), { sub: u, roles: i % 2 ? ['finance'] : ['engineering'] }]),
  );
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify(tokens));
  // One audit signing key for the fleet (each instance its own chain), its verifier key for `verify`.
  const keygen = await runCommand(process.execPath, ['dist/cli/main.js', 'audit', 'keygen'], {
    encoding: 'utf8',
  });
  const key = /MRTR_AUDIT_KEY=(\S+)/.exec(keygen.stdout)![1]!;
  vkey = /MRTR_AUDIT_VKEY=(\S+)/.exec(keygen.stdout)![1]!;
  env = { ...process.env, MRTR_AUDIT_KEY: key };
  ports = [await freePort(), await freePort(), await freePort()];
  const listen = await freePort();
  balancer = `http://127.0.0.1:${listen}/mcp`;
  argsOf = (i) => [
    '--fixture',
    'workflows',
    '--data',
    join(dir, 'data'),
    '--port',
    String(ports[i]),
    // The public URL, the same on every instance: tokens and the resource metadata name the balancer.
    '--resource',
    balancer,
    '--tokens',
    join(dir, 'tokens.json'),
    '--state-keys-file',
    join(dir, 'state-keys'),
    '--store',
    redis.url,
    '--audit',
    pg.url,
    '--audit-instance',
    INSTANCES[i]!,
  ];
  // The first instance makes the keyring file and seeds the databases; the others find both.
  instances[0] = await spawnServe(argsOf(0), env);
  [instances[1], instances[2]] = await Promise.all([spawnServe(argsOf(1), env), spawnServe(argsOf(2), env)]);
  nginx = TestNginx.start(pointAt(nginxBlockFromDoc(), listen, ports));
  const db = new Database(join(dir, 'data', 'helpdesk.db'), { readonly: true });
  assetTag = (db.prepare("SELECT tag FROM assets WHERE status = 'in_use' LIMIT 1").get() as { tag: string })
    .tag;
  db.close();
}, RUN_LIMIT_MS);

afterAll(async () => {
  nginx?.stop();
  await Promise.all(instances.map((p) => p?.stop()));
  await Promise.all([redis?.stop(), pg?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** `count` flows at once, the four workflows in turn; `during` runs once `after` of them have completed. */
async function drive(
  url: string,
  tag: string,
  count: number,
  during?: { after: number; run: () => Promise<void> },
) {
  let done = 0;
  let fired: Promise<void> | undefined;
  const started = performance.now();
  const flows = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      runFlow(url, tokenOf(USERS[i % USERS.length]!), KINDS[i % KINDS.length]!, `${tag}-${i}`, assetTag).then(
        (r) => {
          done++;
          if (during && done === during.after) fired = during.run();
          return r;
        },
      ),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await fired;
  const rounds = flows.flatMap((f) => f.roundMs);
  return {
    flows,
    seconds,
    perSecond: count / seconds,
    p50: percentile(rounds, 50),
    p99: percentile(rounds, 99),
    rounds: rounds.length,
  };
}

const completed = (flows: FlowRun[]) =>
  flows.filter(
    (f) => f.outcome.status === 'complete' && !(f.outcome.result as { isError?: boolean }).isError,
  );
const describeFailures = (flows: FlowRun[]) =>
  flows
    .filter((f) => !completed([f]).length)
    .slice(0, 5)
    .map((f) => `${f.kind} ${f.mark}: ${JSON.stringify(f.outcome).slice(0, 300)}`);

function query<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(dir, 'data', file), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Each flow's effect is in its database once: a ticket per title, a profile change per address, a resize per result. */
function expectEffectsOnce(flows: FlowRun[], tag: string) {
  const of = (kind: string) => flows.filter((f) => f.kind === kind);
  const tickets = query<{ title: string; n: number }>(
    'helpdesk.db',
    'SELECT title, count(*) AS n FROM tickets WHERE title LIKE ? GROUP BY title',
    `fleet ticket ${tag}-%`,
  );
  expect(tickets.length).toBe(of('ticket').length);
  expect(tickets.every((t) => t.n === 1)).toBe(true);
  const changes = query<{ recovery_email: string; n: number }>(
    'identity.db',
    'SELECT recovery_email, count(*) AS n FROM profile_changes WHERE recovery_email LIKE ? GROUP BY recovery_email',
    `${tag}-%`,
  );
  expect(changes.length).toBe(of('profile').length);
  expect(changes.every((c) => c.n === 1)).toBe(true);
  // A resize to the size a VM already has changes nothing (concurrent flows share VMs): count the ones that did.
  const resized = of('resize').filter((f) =>
    JSON.stringify((f.outcome as { result?: unknown }).result).includes(' resized from '),
  );
  const justified = query<{ n: number }>(
    'cloud.db',
    'SELECT count(*) AS n FROM vm_changes WHERE detail LIKE ?',
    `%capacity for ${tag}-%`,
  )[0]!.n;
  // Production machines were asked why. (A VM list that changed between rounds, as concurrent resizes change it,
  // is asked again: an answer is never applied to a question it was not given for.)
  const production = resized.filter((f) => f.asked.includes('justification')).length;
  expect(justified).toBe(production);
}

async function auditRecords(): Promise<AuditRecord[]> {
  const reader = await openAuditReader(pg.url);
  try {
    return (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
  } finally {
    await reader.close();
  }
}

describe('a fleet of three behind nginx', () => {
  it(
    'one instance, then the fleet: every flow completes with its effect once; figures printed',
    async () => {
      const solo = await drive(`http://127.0.0.1:${ports[0]}/mcp`, 'solo', 200);
      expect(describeFailures(solo.flows)).toEqual([]);
      const fleet = await drive(balancer, 'fleet', 200);
      expect(describeFailures(fleet.flows)).toEqual([]);
      expectEffectsOnce(solo.flows, 'solo');
      expectEffectsOnce(fleet.flows, 'fleet');
      const line = (name: string, r: typeof solo) =>
        `${name}: ${r.flows.length} flows (${r.rounds} rounds) in ${r.seconds.toFixed(2)} s = ${r.perSecond.toFixed(0)} flows/s; round p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`;
      process.stdout.write(
        `\n[fleet] ${line('one instance', solo)}\n[fleet] ${line('three behind nginx', fleet)}\n[fleet] fleet/one = ${(fleet.perSecond / solo.perSecond).toFixed(2)}x\n`,
      );
    },
    RUN_LIMIT_MS,
  );

  it(
    'loses nothing when an instance is SIGKILLed mid-run and restarted',
    async () => {
      const victim = 1;
      const run = await drive(balancer, 'kill', 300, {
        after: 60,
        run: async () => {
          await instances[victim]!.stop('SIGKILL');
          instances[victim] = await spawnServe(argsOf(victim), env);
        },
      });
      expect(describeFailures(run.flows)).toEqual([]);
      expectEffectsOnce(run.flows, 'kill');
      // The kill hit rounds in flight: their clients got no answer and sent them again.
      const resent = run.flows.filter((f) => f.resends > 0).length;
      expect(resent).toBeGreaterThan(0);
      process.stdout.write(
        `[fleet] with ${INSTANCES[victim]} SIGKILLed after 60 of 300 flows and restarted: all completed in ${run.seconds.toFixed(2)} s (${run.perSecond.toFixed(0)} flows/s); round p99 ${run.p99.toFixed(1)} ms (resends included; ${resent} flows resent a round)\n`,
      );
      expect(instances[victim]!.stderr()).toContain(`instance ${INSTANCES[victim]}`);
    },
    RUN_LIMIT_MS,
  );

  it(
    'the audit trail shows consecutive rounds of one flow on different instances, and verifies',
    async () => {
      const records = await auditRecords();
      const byFlow = new Map<string, AuditRecord[]>();
      for (const r of records) if (r.flowId) byFlow.set(r.flowId, [...(byFlow.get(r.flowId) ?? []), r]);
      let multi = 0;
      let hopped = 0;
      for (const rounds of byFlow.values()) {
        const ordered = rounds.filter((r) => r.outcome !== 'refused').sort((a, b) => a.round - b.round);
        if (ordered.length < 2) continue;
        multi++;
        if (ordered.some((r, i) => i > 0 && r.instance !== ordered[i - 1]!.instance)) hopped++;
      }
      const fleetInstances = new Set(records.map((r) => r.instance));
      expect([...fleetInstances].sort()).toEqual(INSTANCES);
      expect(hopped).toBeGreaterThan(0);
      process.stdout.write(
        `[fleet] audit: ${records.length} events; ${hopped} of ${multi} multi-round flows moved between instances\n`,
      );
      // Stop the instances first: a drained instance seals its chain with a last checkpoint.
      await Promise.all(instances.map((p) => p.stop('SIGTERM')));
      const verify = await runCommand(
        process.execPath,
        ['dist/cli/main.js', 'audit', 'verify', '--audit', pg.url, '--vkey', vkey],
        { encoding: 'utf8' },
      );
      expect(verify.stderr).toBe('');
      expect(verify.status).toBe(0);
      process.stdout.write(`[fleet] mrtr audit verify: ${verify.stdout.trim().split('\n').at(-1)}\n`);
    },
    RUN_LIMIT_MS,
  );
});
