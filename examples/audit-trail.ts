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

export const server = new McpServer({
  name: 'files',
  version: '1.0.0',
  rounds: { observers: [trail] },
}).tool(
  {
    name: 'share_file',
    description: 'Shares a file with a colleague, once the person names them',
    input: z.object({ path: z.string() }),
    // Recorded as { "$redacted": "hmac-sha256:…" }: equal addresses correlate, none can be read back.
    sensitive: ['email'],
  },
  async ({ path }, ctx) => {
    // The author's own fact on this round's event: which resource the share was about.
    ctx.audit.note({ resource: path });
    const { email } = await ctx.ask.form(`Share ${path} with whom?`, z.object({ email: z.email() }), {
      key: 'recipient',
    });
    if (!email.endsWith('@example.com')) return text('not shared: recipients must be at example.com');
    await ctx.ask.step('share', () => `shared ${path}`); // listed under "steps" on the round that ran it
    return text(`shared ${path}`);
  },
);
// #endregion
