// docs/audit.md's example (examples/audit-trail.ts) does what the page says: a two-round call leaves two events,
// the recipient's address redacted, the note and the step on them.
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
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      instance: 'files-1',
      notes: { resource: '/srv/a' },
      outcome: 'input_required',
    });
    expect(records[1]).toMatchObject({
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
