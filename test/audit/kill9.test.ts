// `kill -9` of a real `mrtr serve --audit sqlite:…` process under load: every round whose answer a client received
// is in the audit file afterwards, and the chain verifies. Rounds cut off by the kill may or may not be there; the
// promise is only about answers that went out.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditRecord, openAuditReader, verifyTrail } from '../../src/audit/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { TestPostgres } from '../helpers/postgres-server.js';
import { deferred } from '../helpers/signals.js';
import { AUDIT_KEY, tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());
const KEYS = `k1:${Buffer.alloc(32, 5).toString('base64url')}`;

function serve(audit: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      'dist/cli/main.js',
      'serve',
      '--port',
      '0',
      '--state-keys',
      KEYS,
      '--audit',
      audit,
      '--audit-instance',
      'k9',
    ],
    { env: { ...process.env, MRTR_AUDIT_KEY: AUDIT_KEY.text }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
}

let pg: TestPostgres | undefined;
afterAll(async () => {
  await pg?.stop();
});

describe.each([
  ['SQLite', async () => `sqlite:${join(tmp.dir, 'audit.db')}`],
  [
    'PostgreSQL',
    async () => {
      pg = await TestPostgres.start();
      return pg.url;
    },
  ],
])('kill -9 under load, on %s', (_name, sink) => {
  it('loses no event of a round whose answer a client received', async () => {
    const audit = await sink();
    const { child, url } = await serve(audit);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const answered = new Set<number>();
    const enough = deferred();
    let nextId = 1;
    let killed = false;
    // Eight clients in a closed loop: one-round calls and first rounds of a two-round flow, until the server is gone.
    const client = async () => {
      while (!killed) {
        const id = nextId++;
        const call =
          id % 2 === 0
            ? mcp(url, 'tools/call', { name: 'echo', arguments: { message: `m${id}` } }, { id })
            : mcp(url, 'tools/call', { name: 'resolve_bug', arguments: { id } }, { id });
        try {
          const reply = await call;
          if (reply.response.result !== undefined) answered.add(id);
          if (answered.size >= 300) enough.resolve();
        } catch {
          return; // connection refused or reset: the server is gone
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await enough.promise;
    child.kill('SIGKILL');
    killed = true;
    await exited;
    await Promise.all(clients);
    expect(child.signalCode).toBe('SIGKILL');

    const reader = await openAuditReader(audit);
    const events = await reader.events();
    const checkpoints = await reader.checkpoints();
    await reader.close();
    const recorded = new Set(events.map((e) => (JSON.parse(e.text) as AuditRecord).requestId));
    const lost = [...answered].filter((id) => !recorded.has(id));
    expect(lost).toEqual([]);
    expect(answered.size).toBeGreaterThanOrEqual(300);
    const report = verifyTrail({ events, stored: checkpoints, verifiers: [AUDIT_KEY.verifier] });
    expect(report.firstBad).toBeUndefined();
    expect(report.ok).toBe(true);
  });
});
