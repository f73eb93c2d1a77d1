// Tampering with an SQLite audit file behind the server's back, with the sqlite3 command line, and
// `mrtr audit verify` finding it: edited, inserted, deleted and reordered events, a truncated tail (caught by an
// exported checkpoint), a consistently rewritten history (caught by the signed checkpoints), and forged checkpoints.
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditRecord,
  AuditSigner,
  recordHash,
  SqliteAuditReader,
  SqliteAuditSink,
  sealCheckpoint,
} from '../../src/audit/index.js';
import { EVENT_COLUMNS, QUERY_COLUMNS } from '../../src/audit/tables.js';
import { runCommand } from '../helpers/run-cli.js';
import { AUDIT_KEY, auditedServer, call, env, openTrail, tempDir } from './fixture.js';

const tmp = tempDir();
const pristine = join(tmp.dir, 'pristine.db');
const exported = join(tmp.dir, 'exported.notes');
const VKEY = AUDIT_KEY.verifier.text;
let copies = 0;

beforeAll(async () => {
  const trail = await openTrail(await SqliteAuditSink.open(pristine), { checkpointEvery: 4 });
  const core = auditedServer(trail).core;
  // Rounds of a known caller, so that the principal column holds a name an attacker would replace.
  const alice = { ...env, principal: { subject: 'alice' } };
  // Five one-round calls, ten events: each round's intent (odd seq) and outcome (even seq). Round i names the file
  // after its intent's seq, so that event N is the one whose text holds /fN (N odd).
  for (let i = 1; i <= 5; i++)
    await core.handle(call(i, 'delete_file', { arguments: { path: `/f${2 * i - 1}` } }), alice);
  await trail.close();
  const reader = new SqliteAuditReader(pristine);
  const checkpoints = await reader.checkpoints();
  await reader.close();
  expect(checkpoints.map((c) => c.seq)).toEqual([4, 8, 10]);
  writeFileSync(exported, checkpoints.at(-1)!.note);
});
afterAll(() => tmp.remove());

/** A fresh copy of the audit file with `sql` run on it by the sqlite3 command line. */
function tampered(sql: string): string {
  const file = join(tmp.dir, `copy-${++copies}.db`);
  copyFileSync(pristine, file);
  const out = spawnSync('sqlite3', [file, sql], { encoding: 'utf8' });
  expect(out.stderr).toBe('');
  expect(out.status).toBe(0);
  return file;
}

async function verify(file: string, ...extra: string[]) {
  const out = await runCommand(
    process.execPath,
    ['dist/cli/main.js', 'audit', 'verify', '--audit', `sqlite:${file}`, '--vkey', VKEY, ...extra],
    { encoding: 'utf8', timeout: 20_000 },
  );
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

const EVENTS = 'mrtr_audit_events';

describe('mrtr audit verify on an SQLite file edited with sqlite3', () => {
  it('passes the untouched file, with the exported checkpoint too', async () => {
    const result = await verify(tampered('SELECT 1;'), '--checkpoint', exported);
    expect(result.stdout).toContain('intact: 10 events in 1 chain(s), 4 checkpoint(s) verified');
    expect(result.stdout).toContain('test-1: 10 events, head #10, sealed up to #10');
    expect(result.status).toBe(0);
  });

  it('names an event whose content was edited', async () => {
    const file = tampered(
      `UPDATE ${EVENTS} SET record = replace(record, '"/f5"', '"/etc/passwd"') WHERE seq = 5;`,
    );
    const result = await verify(file);
    expect(result.stdout).toContain(
      'TAMPERED: first bad event test-1 #5: its hash does not match its content (edited)',
    );
    expect(result.status).toBe(1);
  });

  it.each([
    ['time', "'2020-01-01T00:00:00.000Z'"],
    ['flow_id', "'another-flow'"],
    ['flow_id', 'NULL'],
    ['target', "'read_file'"],
    ['principal', "'mallory'"],
    ['principal', 'NULL'],
    ['outcome', "'complete'"],
  ])('names an event whose %s column was set to %s', async (column, value) => {
    const result = await verify(tampered(`UPDATE ${EVENTS} SET ${column} = ${value} WHERE seq = 3;`));
    expect(result.stdout).toContain(
      `first bad event test-1 #3: its query column ${column} differs from its record (edited)`,
    );
    expect(result.status).toBe(1);
  });

  it('writes every query column the verifier checks (no column left out of the table)', () => {
    const out = spawnSync('sqlite3', [pristine, `PRAGMA table_info(${EVENTS});`], { encoding: 'utf8' });
    const names = out.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('|')[1]);
    expect(names).toEqual([...EVENT_COLUMNS]);
    expect(QUERY_COLUMNS.map((c) => c.column)).toEqual(names.slice(4));
  });

  it('names a deleted event', async () => {
    const result = await verify(tampered(`DELETE FROM ${EVENTS} WHERE seq = 6;`));
    expect(result.stdout).toContain('first bad event test-1 #6: event 6 is missing (deleted)');
    expect(result.status).toBe(1);
  });

  it('names an inserted event', async () => {
    const file = tampered(
      `UPDATE ${EVENTS} SET seq = seq + 100 WHERE seq >= 5; UPDATE ${EVENTS} SET seq = seq - 99 WHERE seq >= 105;
       INSERT INTO ${EVENTS} SELECT instance, 5, hash, record, time, flow_id, target, principal, outcome
         FROM ${EVENTS} WHERE seq = 4;`,
    );
    const result = await verify(file);
    expect(result.stdout).toContain(
      'first bad event test-1 #5: stored at test-1 #5 but the record says test-1 #4',
    );
    expect(result.status).toBe(1);
  });

  it('names reordered events', async () => {
    const file = tampered(
      `UPDATE ${EVENTS} SET seq = -1 WHERE seq = 3; UPDATE ${EVENTS} SET seq = 3 WHERE seq = 4;
       UPDATE ${EVENTS} SET seq = 4 WHERE seq = -1;`,
    );
    const result = await verify(file);
    expect(result.stdout).toContain(
      'first bad event test-1 #3: stored at test-1 #3 but the record says test-1 #4',
    );
    expect(result.status).toBe(1);
  });

  it('catches a truncated tail only against an exported checkpoint (the sink’s own seals went with it)', async () => {
    const file = tampered(
      `DELETE FROM ${EVENTS} WHERE seq > 8; DELETE FROM mrtr_audit_checkpoints WHERE seq > 8;`,
    );
    // What the file alone can say: its chain is whole up to #8 and sealed there. The docs say as much.
    expect((await verify(file)).status).toBe(0);
    const result = await verify(file, '--checkpoint', exported);
    expect(result.stdout).toContain(
      'first bad event test-1 #9: the chain ends at 8, but an exported checkpoint seals 10 events (tail truncated)',
    );
    expect(result.status).toBe(1);
  });

  it('catches a history rewritten with recomputed hashes, by the signed checkpoint that sealed it', async () => {
    // The attacker can write to the file and knows the format, but has no audit key: they rewrite event 7 and
    // recompute the chain from there to the end.
    const reader = new SqliteAuditReader(pristine);
    const events = await reader.events();
    await reader.close();
    let prev = events[5]!.hash;
    const updates: string[] = [];
    for (const e of events.slice(6)) {
      const record = JSON.parse(e.text) as AuditRecord;
      if (record.seq === 7) record.arguments = { path: '/harmless' };
      record.prev = prev;
      const json = JSON.stringify(record);
      const hash = recordHash(json);
      const text = json.replaceAll("'", "''");
      updates.push(`UPDATE ${EVENTS} SET record = '${text}', hash = '${hash}' WHERE seq = ${record.seq};`);
      prev = hash;
    }
    const result = await verify(tampered(updates.join('\n')));
    expect(result.stdout).toContain(
      'first bad event test-1 #8: event 8 is not the one a stored signed checkpoint sealed: history up to it was rewritten (after 4, the last seal that matches)',
    );
    expect(result.status).toBe(1);
  });

  it('refuses checkpoints re-signed with another key, even when the trail’s key table was replaced', async () => {
    const forger = AuditSigner.generate('mrtr-audit');
    const reader = new SqliteAuditReader(pristine);
    const head = (await reader.events()).at(-1)!;
    await reader.close();
    const forged = sealCheckpoint('test-1', { seq: 10, hash: head.hash }, forger, new Date());
    const file = tampered(
      `DELETE FROM mrtr_audit_keys; INSERT INTO mrtr_audit_keys VALUES ('${forger.verifier.text}');
       UPDATE mrtr_audit_checkpoints SET note = '${forged.note}' WHERE seq = 10;`,
    );
    const result = await verify(file);
    expect(result.stdout).toContain(
      `UNVERIFIED: first bad event test-1 #10: stored checkpoint: no signature by a known audit key (signed by mrtr-audit+${forger.verifier.id.toString('hex')} only)`,
    );
    expect(result.stdout).toContain(
      'give its verifier key with another --vkey; if not, the checkpoint was forged',
    );
    expect(result.status).toBe(1);
    // Without --vkey the verifier can only trust the keys in the file, and says so.
    const trusting = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'verify', '--audit', `sqlite:${file}`],
      {
        encoding: 'utf8',
      },
    );
    expect(trusting.stderr).toContain(
      'no --vkey: checking checkpoints against the keys stored in the trail itself',
    );
  });

  it('still says TAMPERED when a forged checkpoint is added to a truncated tail (no softer UNVERIFIED)', async () => {
    // The attacker truncates the tail and adds a checkpoint signed by a key of their own at a low seq, so that it is
    // read before the exported checkpoint that catches the truncation: the verdict must stay TAMPERED.
    const forger = AuditSigner.generate('mrtr-audit');
    const reader = new SqliteAuditReader(pristine);
    const second = (await reader.events()).find((e) => e.seq === 2)!;
    await reader.close();
    const forged = sealCheckpoint('test-1', { seq: 2, hash: second.hash }, forger, new Date());
    const file = tampered(
      `DELETE FROM ${EVENTS} WHERE seq > 8; DELETE FROM mrtr_audit_checkpoints WHERE seq > 8;
       INSERT INTO mrtr_audit_checkpoints VALUES ('test-1', 2, '${second.hash}', '${forged.note}');`,
    );
    const result = await verify(file, '--checkpoint', exported);
    expect(result.stdout).toContain(
      'TAMPERED: first bad event test-1 #9: the chain ends at 8, but an exported checkpoint seals 10 events (tail truncated)',
    );
    expect(result.stdout).not.toContain('UNVERIFIED');
    expect(result.status).toBe(1);
  });

  it('names the problem with a bad --vkey, a missing file or an unreadable checkpoint export', async () => {
    const bad = await verify(pristine, '--vkey', 'nonsense');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('audit verifier key: expected <name>+<key id hex>+<base64 key>');
    // What `--vkey "$MRTR_AUDIT_VKEY"` sends when the variable is unset.
    const empty = await verify(pristine, '--vkey', '');
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('--vkey is empty (is MRTR_AUDIT_VKEY set?)');
    expect(empty.stderr).toContain('its verifier key is mrtr-audit+');
    const missing = await verify(join(tmp.dir, 'nope.db'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`no audit database at ${join(tmp.dir, 'nope.db')}`);
    const noExport = await verify(pristine, '--checkpoint', join(tmp.dir, 'nope.notes'));
    expect(noExport.status).toBe(2);
    expect(noExport.stderr).toContain('cannot read checkpoint file');
  });
});
