// The JSON-lines sink: each line self-contained (seq, prev, hash, checkpoints, keys), rotated by size, and an export
// that still verifies offline — from the files or from standard input.
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonlAuditReader, JsonlAuditSink, verifyTrail } from '../../src/audit/index.js';
import { runCommand } from '../helpers/run-cli.js';
import { AUDIT_KEY, auditedServer, call, env, openTrail, tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

/** `rounds` one-round calls: each leaves two events, its intent and its outcome. */
async function write(path: string, rounds: number, rotateBytes?: number) {
  const sink = await JsonlAuditSink.open(path, { rotateBytes });
  const trail = await openTrail(sink, { checkpointEvery: 5 });
  const core = auditedServer(trail).core;
  for (let i = 1; i <= rounds; i++)
    await core.handle(call(i, 'delete_file', { arguments: { path: `/f${i}` } }), env);
  await trail.close();
}

const cli = (args: string[], input?: string) =>
  runCommand(process.execPath, ['dist/cli/main.js', 'audit', ...args], {
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
      ...Array(5).fill('event'),
      'checkpoint',
      ...Array(4).fill('event'),
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
    expect(report).toMatchObject({ ok: true, events: 14, checkpoints: 3 });
    // The same export piped through standard input, as a SIEM's copy would be checked.
    const piped = await cli(
      ['verify', '--audit', 'jsonl:-', '--vkey', AUDIT_KEY.verifier.text],
      readFileSync(path, 'utf8'),
    );
    expect(piped.stdout).toContain('intact: 14 events in 1 chain(s), 3 checkpoint(s) verified');
    expect(piped.status).toBe(0);
  });

  it('rotates by size and reads the rotated files back in order', async () => {
    const path = join(tmp.dir, 'rotated', 'audit.jsonl');
    await write(path, 12, 4096);
    const files = readdirSync(join(tmp.dir, 'rotated')).sort();
    expect(files.length).toBeGreaterThan(2);
    expect(files).toContain('audit.jsonl.000001');
    const result = await cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(result.stdout).toContain('intact: 24 events');
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
    const result = await cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(result.stdout).toContain('intact: 24 events');
  });

  it('fails the round, and names the file, when its file cannot be written', async () => {
    const path = join(tmp.dir, 'unwritable', 'audit.jsonl');
    const sink = await JsonlAuditSink.open(path);
    mkdirSync(path); // after it opened: a directory where its file should be
    (await expect(sink.publishKey(AUDIT_KEY.verifier.text))).rejects.toThrow(/EISDIR.*audit\.jsonl/);
    await sink.close();
  });

  it('writes to PATH again when the file was removed or moved away while it ran, through its own rotation too', async () => {
    for (const [name, away] of [
      ['removed', (path: string) => rmSync(path)],
      ['moved', (path: string) => renameSync(path, `${path}.1`)],
    ] as const) {
      const dir = join(tmp.dir, `away-${name}`);
      const path = join(dir, 'audit.jsonl');
      const sink = await JsonlAuditSink.open(path, { rotateBytes: 4096 });
      const trail = await openTrail(sink, { checkpointEvery: 1000 });
      const core = auditedServer(trail).core;
      await core.handle(call(1, 'delete_file', { arguments: { path: '/f1' } }), env);
      away(path);
      // Answered, so recorded: each event must be in a file at PATH, never in an unlinked one (lost) or in one
      // that a log rotator is about to compress and delete; and a rotation must not fail on the file being gone.
      for (let i = 2; i <= 12; i++) {
        const answer = await core.handle(call(i, 'delete_file', { arguments: { path: `/f${i}` } }), env);
        expect(answer).not.toHaveProperty('error');
      }
      await trail.close();
      const seqs = readdirSync(dir)
        .filter((f) => f.startsWith('audit.jsonl') && f !== 'audit.jsonl.1')
        .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.type === 'event')
        .map((l) => l.record.seq)
        .sort((a, b) => a - b);
      // Round 1's two events went to the file taken away; rounds 2-12 left 3-24.
      expect(seqs).toEqual(Array.from({ length: 22 }, (_, i) => i + 3));
    }
  });

  it('leaves nothing of a batch it failed to write whole (a full disk): no partial line, no event of failed rounds', async () => {
    // A file size limit (RLIMIT_FSIZE) makes the kernel take part of a write and refuse the rest (EFBIG), as a full
    // disk does; Node ignores SIGXFSZ. The batch's rounds are answered -32603, so none of its events may stay.
    const dir = join(tmp.dir, 'full');
    const path = join(dir, 'audit.jsonl');
    mkdirSync(dir, { recursive: true });
    const script = join(dir, 'write.mjs');
    writeFileSync(
      script,
      `import { AuditSigner, AuditTrail, JsonlAuditSink } from ${JSON.stringify(join(process.cwd(), 'dist/audit/index.js'))};
const trail = await AuditTrail.open(await JsonlAuditSink.open(${JSON.stringify(path)}), {
  key: AuditSigner.generate('k'), instance: 'full-1' });
const round = (i) => ({ requestId: i, method: 'tools/call', target: 't', arguments: { pad: 'x'.repeat(400) },
  principal: undefined, round: 0, flowId: undefined, inputResponses: undefined, inputRequests: undefined,
  outcome: 'complete', reason: undefined, decidedBy: undefined, startedAt: 0, durationMs: 1 });
const settled = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => trail.observe(round(i))));
process.stdout.write(JSON.stringify(settled.map((s) => s.status)));
`,
    );
    const out = spawnSync('bash', ['-c', 'ulimit -f 2 && exec "$0" "$1"', process.execPath, script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual(Array(5).fill('rejected'));
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.at(-1)).toBe(''); // ends with a whole line
    expect(lines.slice(0, -1).map((l) => JSON.parse(l).type)).toEqual(['key']);
    // And the writer starts again where the chain stood.
    const sink = await JsonlAuditSink.open(path);
    expect(await sink.head('full-1')).toBeUndefined();
    await sink.close();
  });

  it('finds an edited line, and names a line that is not an audit line', async () => {
    const path = join(tmp.dir, 'edited', 'audit.jsonl');
    await write(path, 4);
    const text = readFileSync(path, 'utf8');
    // Round 3's intent is event 5.
    writeFileSync(path, text.replace('"/f3"', '"/f9"'));
    const edited = await cli(['verify', '--audit', `jsonl:${path}`, '--vkey', AUDIT_KEY.verifier.text]);
    expect(edited.stdout).toContain(
      'first bad event test-1 #5: its hash does not match its content (edited)',
    );
    expect(edited.status).toBe(1);
    writeFileSync(path, `${text}garbage\n`);
    const garbage = await cli(['verify', '--audit', `jsonl:${path}`]);
    expect(garbage.stderr).toContain(`${path} line 12 is not JSON`);
    expect(garbage.status).toBe(1);
  });
});
