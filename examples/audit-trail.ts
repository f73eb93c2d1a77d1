// The example of docs/audit.md: a server whose every round is recorded, durable, before it is answered. It runs as
// it is; test/audit/example.test.ts drives it. The audit file comes from MRTR_AUDIT_FILE (default ./data/audit.db)
// and the checkpoint signing key from MRTR_AUDIT_KEY (`mrtr audit keygen`).
// #region trail
import { AuditTrail, openAuditSink } from 'mrtr/audit';
import { McpServer, text } from 'mrtr/server';
import { z } from 'zod';

const file = process.env.MRTR_AUDIT_FILE ?? './data/audit.db';
// One writer, one chain: name the instance so that a restart continues its chain.
export const trail = await AuditTrail.open(await openAuditSink(`sqlite:${file}`), { instance: 'files-1' });

export const server = new McpServer({ name: 'files', version: '1.0.0', observers: [trail] }).tool(
  {
    name: 'delete_file',
    description: 'Deletes a file once a one-time code confirms it',
    input: z.object({ path: z.string() }),
    // Recorded as { "$redacted": "hmac-sha256:…" }: equal codes correlate, no code can be read back.
    sensitive: ['otp'],
  },
  async ({ path }, ctx) => {
    // The author's own fact on this round's event: which resource the confirmation was about.
    ctx.audit.note({ resource: path });
    const { otp } = await ctx.ask.form(`Code to delete ${path}`, z.object({ otp: z.string() }), {
      key: 'code',
    });
    if (otp !== '123456') return text('wrong code: nothing deleted');
    await ctx.ask.step('delete', () => `deleted ${path}`); // listed under "steps" on the round that ran it
    return text(`deleted ${path}`);
  },
);
// #endregion
