// The approvals panel's cards, drawn from real records in a memory store: a gateway's call arguments read one by
// one with labels, the tool and upstream named, high risk first.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { PageSession } from '../../src/auth/index.js';
import type { Html } from '../../src/auth/internal.js';
import { ApprovalsPanel, type PanelContext } from '../../src/console/index.js';
import { HumanControls } from '../../src/controls/index.js';
import { MemoryStore } from '../../src/stores/index.js';

const bob: PageSession = {
  subject: 'bob',
  issuer: 'iss',
  roles: ['approver'],
  via: 'dev',
  sid: 's',
  expiresAt: 0,
};

async function queueOf(
  records: Array<{ effect: Record<string, string>; risk?: 'low' | 'medium' | 'high'; reason: string }>,
) {
  const controls = new HumanControls({ store: new MemoryStore() });
  for (const r of records)
    await controls.approvals.create({
      requester: { subject: 'alice', issuer: 'iss', name: 'Alice' },
      flowId: 'f',
      effect: r.effect,
      effectDigest: 'd',
      reason: r.reason,
      ...(r.risk ? { risk: r.risk } : {}),
      role: 'approver',
      approve: 1,
      deny: 1,
      pendingTtlMs: 60_000,
      grantTtlMs: 60_000,
    });
  let body = '';
  const ctx = {
    session: bob,
    roles: new Set(['approver']),
    csrf: 'c',
    url: new URL('http://x/mrtr/console/approvals'),
    origin: 'http://x',
    checkForm: () => false,
    postedForm: async () => undefined,
    notAllowed: () => {},
    page: (_status: number, _title: string, b: Html) => {
      body = b.markup;
    },
    seeOther: () => {},
    json: () => {},
  } as PanelContext;
  await new ApprovalsPanel(controls).handle(
    { method: 'GET' } as IncomingMessage,
    {} as ServerResponse,
    ctx,
    '',
  );
  return body;
}

describe('approval cards', () => {
  it('a gateway call’s arguments are shown one by one, with labels; the tool and upstream are named', async () => {
    const body = await queueOf([
      {
        reason: 'write the report',
        effect: {
          upstream: 'files',
          tool: 'write_file',
          arguments: '{"path":"/srv/report.txt","mode":{"append":true}}',
        },
      },
    ]);
    expect(body).toContain('Tool <strong>write_file</strong> on <strong>files</strong>');
    expect(body).toContain(
      '<th scope="row">Argument <code>path</code></th><td><code>&quot;/srv/report.txt&quot;</code></td>',
    );
    expect(body).toContain(
      '<th scope="row">Argument <code>mode</code></th><td><code>{&quot;append&quot;:true}</code></td>',
    );
  });

  it('arguments cut short (not a whole JSON object) are shown as they are', async () => {
    const body = await queueOf([
      { reason: 'r', effect: { tool: 'fs__write_file', arguments: '{"path":"/a…' } },
    ]);
    expect(body).toContain('Tool <strong>write_file</strong> on <strong>fs</strong>');
    expect(body).toContain('<th scope="row">Arguments</th><td>{&quot;path&quot;:&quot;/a…</td>');
  });

  it('high risk first, then the oldest', async () => {
    const body = await queueOf([
      { reason: 'first low', risk: 'low', effect: { tool: 't' } },
      { reason: 'second, no risk given', effect: { tool: 't' } },
      { reason: 'third high', risk: 'high', effect: { tool: 't' } },
    ]);
    const order = ['third high', 'second, no risk given', 'first low'].map((r) => body.indexOf(r));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});
