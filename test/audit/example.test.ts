// docs/audit.md's example (examples/audit-trail.ts) does what the page says: a two-round call leaves four events,
// each round's intent before it ran and its outcome after, the recipient's address redacted, the note and the step.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditRecord, SqliteAuditReader } from '../../src/audit/index.js';
import { accept, call, env, stateOf, tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

describe('the docs/audit.md example', () => {
  it('records both rounds, with the address redacted, the note and the step', async () => {
    const file = join(tmp.dir, 'audit.db');
    process.env.MRTR_AUDIT_FILE = file;
    const { server, trail } = await import('../../examples/audit-trail.js');
    const core = server.core;
    const first = await core.handle(call(1, 'share_file', { arguments: { path: '/srv/a' } }), env);
    const second = await core.handle(
      call(2, 'share_file', {
        arguments: { path: '/srv/a' },
        requestState: stateOf(first),
        inputResponses: { recipient: accept({ email: 'auditor@example.com' }) },
      }),
      env,
    );
    expect(second).toMatchObject({ result: { content: [{ text: 'shared /srv/a' }] } });
    await trail.close();
    const reader = new SqliteAuditReader(file);
    const records = (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    await reader.close();
    expect(records.map((r) => r.outcome)).toEqual(['proposed', 'input_required', 'proposed', 'complete']);
    expect(records[0]).toMatchObject({ seq: 1, arguments: { path: '/srv/a' }, answers: null });
    expect(records[2]!.answers).toEqual(records[3]!.answers);
    expect(records[1]).toMatchObject({
      instance: 'files-1',
      notes: { resource: '/srv/a' },
      outcome: 'input_required',
    });
    expect(records[3]).toMatchObject({
      intentSeq: 3,
      answers: {
        recipient: {
          action: 'accept',
          content: { email: { $redacted: expect.stringMatching(/^hmac-sha256:/) } },
        },
      },
      steps: ['share'],
      outcome: 'complete',
    });
    expect(JSON.stringify(records)).not.toContain('auditor@example.com');
  });
});
