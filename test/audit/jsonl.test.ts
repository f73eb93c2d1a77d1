// The JSON-lines sink: each line self-contained (seq, prev, hash, checkpoints, keys), rotated by size, and an export
// that still verifies offline — from the files or from standard input.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonlAuditReader, JsonlAuditSink, verifyTrail } from '../../src/audit/index.js';
import { AUDIT_KEY, auditedServer, call, env, openTrail, tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

async function write(path: string, rounds: number, rotateBytes?: number) {
  const sink = await JsonlAuditSink.open(path, { rotateBytes });
  const trail = await openTrail(sink, { checkpointEvery: 5 });
  const core = auditedServer(trail).core;
  for (let i = 1; i <= rounds; i++)
    await core.handle(call(i, 'delete_file', { arguments: { path: `/f${i}` } }), env);
  await trail.close();
}

const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['dist/cli/main.js', 'audit', ...args], {
    encoding: 'utf8',
    input,
    timeout: 20_000,
  });

describe('JSON lines', () => {
  it('writes one self-contained line per event, checkpoint and key, and verifies offline', async () => {
    const path = join(tmp.dir, 'plain', 'audit.jsonl');
    await write(path, 7);
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual([
      'key',
      ...Array(5).fill('event'),
      'checkpoint',
      'event',
      'event',
      'checkpoint',
    ]);
    expect(lines[1]).toMatchObject({
      type: 'event',
      hash: expect.any(String),
      record: { seq: 1, prev: '0'.repeat(64) },
    });
    expect(lines[6]).toMatchObject({ type: 'checkpoint', instance: 'test-1', seq: 5 });
    const reader = await JsonlAuditReader.open(path);
    const report = verifyTrail({
      events: await reader.events(),
      stored: await reader.checkpoints(),
      verifiers: [AUDIT_KEY.verifier],
    });
    expect(report).toMatchObject({ ok: true, events: 7, checkpoints: 2 });
    // The same export piped through standard input, as a SIEM's copy would be checked.
    const piped = cli(
      ['verify', '--audit', 'jsonl:-', '--vkey', AUDIT_KEY.verifier.text],
      readFileSync(path, 'utf8'),
    );
    expect(piped.stdout).toContain('intact: 7 events in 1 chain(s), 2 checkpoint(s) verified');
    expect(piped.status).toBe(0);
  });

  it('rotates by size and reads the rotated files back in order', async () => {
    const path = join(tmp.dir, 'rotated', 'audit.jsonl');
    await write(path, 12, 4096);
    const files = readdirSync(join(tmp.dir, 'rotated')).sort();
    expect(files.length).toBeGreaterThan(2);
    expect(files).toContain('audit.jsonl.000001');
    const result = cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(result.stdout).toContain('intact: 12 events');
    expect(result.status).toBe(0);
  });

  it('keeps one file open while it writes, follows its own rotation, and lets it go at close', async () => {
    const path = join(tmp.dir, 'open', 'audit.jsonl');
    // Which of this process's descriptors point at a file of this sink (Linux: /proc/self/fd).
    const open = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((target) => target.startsWith(join(tmp.dir, 'open')));
    const sink = await JsonlAuditSink.open(path, { rotateBytes: 4096 });
    const trail = await openTrail(sink, { checkpointEvery: 5 });
    const core = auditedServer(trail).core;
    for (let i = 1; i <= 12; i++) {
      await core.handle(call(i, 'delete_file', { arguments: { path: `/f${i}` } }), env);
      // One descriptor, and always the current file's, through every rotation.
      expect(open()).toEqual([path]);
    }
    expect(readdirSync(join(tmp.dir, 'open'))).toContain('audit.jsonl.000001');
    await trail.close();
    expect(open()).toEqual([]);
    const result = cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(result.stdout).toContain('intact: 12 events');
  });

  it('fails the round, and names the file, when its file cannot be written', async () => {
    const path = join(tmp.dir, 'unwritable', 'audit.jsonl');
    const sink = await JsonlAuditSink.open(path);
    mkdirSync(path); // after it opened: a directory where its file should be
    await expect(sink.publishKey(AUDIT_KEY.verifier.text)).rejects.toThrow(/EISDIR.*audit\.jsonl/);
    await sink.close();
  });

  it('finds an edited line, and names a line that is not an audit line', async () => {
    const path = join(tmp.dir, 'edited', 'audit.jsonl');
    await write(path, 4);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('"/f3"', '"/f9"'));
    const edited = cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(edited.stdout).toContain(
      'first bad event test-1 #3: its hash does not match its content (edited)',
    );
    expect(edited.status).toBe(1);
    writeFileSync(path, `${text}garbage\n`);
    const garbage = cli(['verify', '--audit', `jsonl:${path}`]);
    expect(garbage.stderr).toContain(`${path} line 7 is not JSON`);
    expect(garbage.status).toBe(1);
  });
});
