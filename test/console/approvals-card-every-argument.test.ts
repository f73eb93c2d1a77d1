// Issue 37, security item 3, on the console: a long harmless first argument must not push `source` and
// `destination` off an approver's card. Every argument by name, each value bounded on its own; many arguments are
// counted and named, with a link to the request's page, which shows each value whole.
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
const NOTE = `routine housekeeping ${'.'.repeat(5000)} thanks`;

/** The console's queue page and the request's own page, for one gateway call with `args`. */
async function pagesFor(args: Record<string, unknown>) {
  const controls = new HumanControls({ store: new MemoryStore() });
  const record = await controls.approvals.create({
    requester: { subject: 'alice', issuer: 'iss', name: 'Alice' },
    flowId: 'f',
    effect: { upstream: 'files', tool: 'move_file', arguments: JSON.stringify(args), policy: 'v1' },
    effectDigest: 'd',
    reason: 'tidy up',
    role: 'approver',
    approve: 1,
    deny: 1,
    pendingTtlMs: 60_000,
    grantTtlMs: 60_000,
  });
  const render = async (rest: string) => {
    let body = '';
    const ctx = {
      session: bob,
      roles: new Set(['approver']),
      csrf: 'c',
      url: new URL(`http://x/mrtr/console/approvals${rest}`),
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
      rest,
    );
    return body;
  };
  return { queue: await render(''), page: await render(`/${record.id}`), id: record.id };
}

const row = (name: string, value: string) =>
  `<th scope="row">Argument <code>${name}</code></th><td><code>${value}</code>`;

describe('the console card of a call with a long harmless first argument', () => {
  it('names source and destination with their values; the long value is bounded at both ends with its size', async () => {
    const { queue, page } = await pagesFor({
      note: NOTE,
      source: '/share/payroll.txt',
      destination: '/tmp/exfil/payroll.txt',
    });
    for (const html of [queue, page]) {
      expect(html).toContain(row('source', '&quot;/share/payroll.txt&quot;'));
      expect(html).toContain(row('destination', '&quot;/tmp/exfil/payroll.txt&quot;'));
      expect(html).toContain('…(5,028 chars)…');
      expect(html).toContain('<th scope="row">Policy</th><td>v1</td>');
    }
    // The request's page holds the value whole; the queue's card stays short.
    expect(page).toContain(
      `<details><summary>Show all 5,028 characters</summary><pre>${NOTE}</pre></details>`,
    );
    expect(queue).not.toContain(NOTE);
  });

  it('many arguments: the card counts and names the rest and links to the page, which shows every one', async () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`pad${i}`, 'x']));
    const { queue, page, id } = await pagesFor({ ...many, source: '/share/payroll.txt' });
    expect(queue).toMatch(
      new RegExp(
        `…and 14 more not shown here \\(pad27, .*, source\\): <a href="/mrtr/console/approvals/${id}">the request's page shows every one</a>`,
      ),
    );
    for (const name of [...Object.keys(many), 'source'])
      expect(page).toContain(`<th scope="row">Argument <code>${name}</code></th>`);
  });

  it('HTML in a value is escaped on the card and in the whole value', async () => {
    const script = `<script>alert(1)</script>${'x'.repeat(400)}`;
    const { queue, page } = await pagesFor({ payload: script });
    for (const html of [queue, page]) expect(html).not.toContain('<script>alert');
    expect(page).toContain(`<pre>&lt;script&gt;alert(1)&lt;/script&gt;${'x'.repeat(400)}</pre>`);
  });
});
