// PostgreSQL: two instances writing into one database, each with its own chain; `mrtr audit` reads and verifies it;
// tampering with psql is found. A real PostgreSQL (initdb in a temp dir on a free port), removed afterwards.

import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditRecord, PostgresAuditReader, PostgresAuditSink } from '../../src/audit/index.js';
import { TestPostgres } from '../helpers/postgres-server.js';
import { runCommand } from '../helpers/run-cli.js';
import {
  AUDIT_KEY,
  accept,
  auditedServer,
  call,
  env,
  expectPagesAgree,
  openTrail,
  stateOf,
} from './fixture.js';

let pg: TestPostgres;
const dbUrl = (db: string) => pg.url.replace(/\/postgres$/, `/${db}`);

beforeAll(async () => {
  pg = await TestPostgres.start();
  expect(pg.psql('CREATE DATABASE base').status).toBe(0);
  const a = await openTrail(await PostgresAuditSink.connect(dbUrl('base')), {
    instance: 'pg-a',
    checkpointEvery: 3,
  });
  const b = await openTrail(await PostgresAuditSink.connect(dbUrl('base')), {
    instance: 'pg-b',
    checkpointEvery: 3,
  });
  const coreA = auditedServer(a).core;
  const coreB = auditedServer(b).core;
  // A flow whose rounds go to different instances, and rounds of both arriving at once; a known caller, so that the
  // principal column holds a name an attacker would replace.
  const alice = { ...env, principal: { subject: 'alice' } };
  const first = await coreA.handle(call(1, 'delete_file', { arguments: { path: '/shared' } }), alice);
  await coreB.handle(
    call(2, 'delete_file', {
      arguments: { path: '/shared' },
      requestState: stateOf(first),
      inputResponses: { consent: accept({ confirm: true }) },
    }),
    alice,
  );
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? coreA : coreB).handle(call(10 + i, 'delete_file', { arguments: { path: `/p${i}` } }), alice),
    ),
  );
  await a.close();
  await b.close();
});
afterAll(async () => {
  await pg?.stop();
});

const cli = (args: string[]) =>
  runCommand(process.execPath, ['dist/cli/main.js', 'audit', ...args], { encoding: 'utf8', timeout: 20_000 });

/** A copy of the written database, for one tamper case. */
let copies = 0;
function copy(): string {
  const name = `case${++copies}`;
  expect(pg.psql(`CREATE DATABASE ${name} TEMPLATE base`).stderr).toBe('');
  return name;
}

describe('PostgreSQL sink', () => {
  it('keeps one chain per instance in one database, and verifies', async () => {
    const reader = await PostgresAuditReader.connect(dbUrl('base'));
    const events = await reader.events();
    await reader.close();
    const byInstance = (i: string) => events.filter((e) => e.instance === i).map((e) => e.seq);
    // Six rounds on each: each its intent and its outcome.
    const twelve = Array.from({ length: 12 }, (_, i) => i + 1);
    expect(byInstance('pg-a')).toEqual(twelve);
    expect(byInstance('pg-b')).toEqual(twelve);
    const verify = await cli(['verify', '--audit', dbUrl('base'), '--vkey', AUDIT_KEY.verifier.text]);
    expect(verify.stdout).toContain('intact: 24 events in 2 chain(s)');
    expect(verify.stdout).toContain('pg-a: 12 events, head #12, sealed up to #12\n');
    expect(verify.status).toBe(0);
  });

  it('reads by pages across both writers, and the verdict matches the whole trail', async () => {
    const reader = await PostgresAuditReader.connect(dbUrl('base'));
    try {
      for (const pageSize of [1, 5, 12, 1000]) {
        const report = await expectPagesAgree(reader, pageSize);
        expect(report.ok).toBe(true);
        expect(report.events).toBe(24);
      }
    } finally {
      await reader.close();
    }
  });

  it('reads a forged second event under one key, where a page ends (the primary key dropped with psql)', async () => {
    const db = copy();
    const edit = pg.psql(
      `ALTER TABLE mrtr_audit_events DROP CONSTRAINT mrtr_audit_events_pkey;
       INSERT INTO mrtr_audit_events SELECT instance, seq, hash, replace(record, '/shared', '/etc'), time, flow_id,
         target, principal, outcome FROM mrtr_audit_events WHERE instance = 'pg-a' AND seq = 5;`,
      db,
    );
    expect(edit.stderr).toBe('');
    const reader = await PostgresAuditReader.connect(dbUrl(db));
    try {
      for (const pageSize of [5, 4, 1000]) {
        const report = await expectPagesAgree(reader, pageSize);
        expect(report.ok, `page size ${pageSize}`).toBe(false);
        expect(report.firstBad).toMatchObject({ instance: 'pg-a', seq: 5 });
      }
    } finally {
      await reader.close();
    }
  });

  it('shows a flow whose rounds ran on two instances', async () => {
    const flows = JSON.parse(
      (await cli(['flows', '--audit', dbUrl('base'), '--json', '--target', 'delete_file'])).stdout,
    );
    const shared = flows.find((f: { rounds: number }) => f.rounds === 2);
    expect(shared).toMatchObject({ outcome: 'complete', instances: ['pg-a', 'pg-b'] });
    const shown = JSON.parse((await cli(['show', shared.flowId, '--audit', dbUrl('base'), '--json'])).stdout);
    expect(shown.rounds.map((r: AuditRecord) => [r.round, r.instance, r.outcome])).toEqual([
      [0, 'pg-a', 'proposed'],
      [0, 'pg-a', 'input_required'],
      [1, 'pg-b', 'proposed'],
      [1, 'pg-b', 'complete'],
    ]);
  });

  it('finds an event edited with psql', async () => {
    const db = copy();
    const edit = pg.psql(
      `UPDATE mrtr_audit_events SET record = replace(record, '"/shared"', '"/other"') WHERE instance = 'pg-b' AND seq = 1`,
      db,
    );
    expect(edit.stderr).toBe('');
    const verify = await cli(['verify', '--audit', dbUrl(db), '--vkey', AUDIT_KEY.verifier.text]);
    expect(verify.stdout).toContain('first bad event pg-b #1: its hash does not match its content (edited)');
    expect(verify.status).toBe(1);
  });

  it.each([
    ['time', "'2020-01-01T00:00:00.000Z'"],
    ['flow_id', "'another-flow'"],
    ['target', "'read_file'"],
    ['principal', "'mallory'"],
    ['principal', 'NULL'],
    ['outcome', "'refused'"],
  ])('finds the %s column set to %s with psql', async (column, value) => {
    const db = copy();
    const edit = pg.psql(
      `UPDATE mrtr_audit_events SET ${column} = ${value} WHERE instance = 'pg-a' AND seq = 2`,
      db,
    );
    expect(edit.stderr).toBe('');
    const verify = await cli(['verify', '--audit', dbUrl(db), '--vkey', AUDIT_KEY.verifier.text]);
    expect(verify.stdout).toContain(
      `first bad event pg-a #2: its query column ${column} differs from its record (edited)`,
    );
    expect(verify.status).toBe(1);
  });

  it('finds an event deleted with psql, and a truncated tail against an exported checkpoint', async () => {
    const db = copy();
    const exported = await cli(['checkpoint', '--audit', dbUrl(db)]);
    expect(exported.status).toBe(0);
    expect(exported.stdout).toContain('mrtr-audit/pg-a\n12\n');
    const file = `${process.env.TMPDIR ?? '/tmp'}/mrtr-pg-export-${process.pid}.notes`;
    writeFileSync(file, exported.stdout);
    expect(pg.psql(`DELETE FROM mrtr_audit_events WHERE instance = 'pg-a' AND seq = 2`, db).stderr).toBe('');
    const deleted = await cli(['verify', '--audit', dbUrl(db), '--vkey', AUDIT_KEY.verifier.text]);
    expect(deleted.stdout).toContain('first bad event pg-a #2: event 2 is missing (deleted)');
    const db2 = copy();
    const cut = pg.psql(
      `DELETE FROM mrtr_audit_events WHERE instance = 'pg-b' AND seq > 4; DELETE FROM mrtr_audit_checkpoints WHERE instance = 'pg-b' AND seq > 4`,
      db2,
    );
    expect(cut.stderr).toBe('');
    const truncated = await cli([
      'verify',
      '--audit',
      dbUrl(db2),
      '--vkey',
      AUDIT_KEY.verifier.text,
      '--checkpoint',
      file,
    ]);
    expect(truncated.stdout).toContain(
      'first bad event pg-b #5: the chain ends at 4, but an exported checkpoint seals 12 events',
    );
    expect(truncated.status).toBe(1);
    rmSync(file);
  });

  it('names a database it cannot reach', async () => {
    const out = await cli(['flows', '--audit', 'postgres://postgres@127.0.0.1:1/none']);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('cannot open the audit database postgres://postgres@127.0.0.1:1/none');
  });
});
