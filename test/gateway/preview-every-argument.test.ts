// Issue 37, security item 3: a person approves or consents only to what they can see. A caller that puts a long
// harmless argument first must not hide `source` and `destination` from the reviewer's JSON API, the review page,
// the webhook, or the path from a consent question: every argument by name, each value bounded on its own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookNotifier } from '../../src/notify/index.js';
import { getPage, sessionCookie } from '../helpers/page-sessions.js';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import {
  type GatewayUnderTest,
  type Loose,
  onlyQuestion,
  textOf,
  useGateway,
} from './fixtures/gateway-under-test.js';

const RULES = `  - tools: ["up/move", "up/move_declared"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, expiresIn: 1h }
  - tools: ["up/write"]
    roles: [requester]
    require: [consent]
`;

/** Long and harmless, sent first: the padding the attack hides the rest behind. */
const NOTE = `routine housekeeping ${'.'.repeat(5000)} thanks`;
const MOVE = { note: NOTE, source: '/share/payroll.txt', destination: '/tmp/exfil/payroll.txt' };

let up: ChangingUpstream;
beforeAll(async () => {
  up = await startChangingUpstream({
    move: { description: 'Move a file' },
    write: { description: 'Write a file' },
    // Declares what it moves and lets anything else through, as the official filesystem server's tools do.
    move_declared: {
      description: 'Move a file',
      inputSchema: {
        type: 'object',
        properties: { source: { type: 'string' }, destination: { type: 'string' } },
      },
    },
  });
});
afterAll(() => up?.close());

/** Alice asks to move a file; the approval request it makes, as bob's JSON API lists it. */
async function requested(g: GatewayUnderTest, args: Record<string, unknown>) {
  const first = (await g.call('alice', 'up__move', args)).response.result as Loose;
  const url = new URL(onlyQuestion(first).question.params.url as string);
  const id = url.pathname.split('/')[3]!;
  const list = await fetch(`${g.origin}/mrtr/approvals`, { headers: { authorization: 'Bearer bob-token' } });
  const approval = ((await list.json()) as Loose).approvals.find((a: Loose) => a.id === id);
  const page = await getPage(`${g.origin}/mrtr/approvals/${id}`, await sessionCookie(g.origin, 'bob-token'));
  expect(page.status).toBe(200);
  return { id, approval, page: page.html };
}

/** The bodies a signed-JSON and a Slack webhook receive for the gateway's request. */
async function webhookBodies(g: GatewayUnderTest): Promise<{ json: Loose; slack: string }> {
  const got: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      got.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    const target = { url, roles: ['approver'], secret: 'whsec-0123456789abcdef' };
    const n = new WebhookNotifier({
      targets: [
        { ...target, name: 'programs', format: 'signed-json' },
        { ...target, name: 'chat', format: 'slack' },
      ],
    });
    const event = g.controlEvents.find((e) => e.control === 'approval' && e.action === 'requested');
    n.notify(event!);
    await n.settled();
  } finally {
    await new Promise((done) => server.close(done));
  }
  const json = got.find((b) => b.includes('"approval.requested"'))!;
  return { json: JSON.parse(json), slack: got.find((b) => b !== json)! };
}

describe('a long harmless first argument hides nothing from the approver', () => {
  it('the JSON API, the review page and both webhooks name source and destination with their values', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const { approval, page } = await requested(g, MOVE);

    // JSON API: the summary a person reads, and the rows a program renders.
    expect(approval.summary).toContain('argument source: "/share/payroll.txt"');
    expect(approval.summary).toContain('argument destination: "/tmp/exfil/payroll.txt"');
    expect(approval.summary).toContain('…(5,028 chars)…');
    expect(approval.summary.length).toBeLessThan(1000);
    const rows = approval.preview.rows as Array<{ kind: string; name: string; value: string }>;
    expect(rows.filter((r) => r.kind === 'argument').map((r) => [r.name, r.value])).toEqual([
      ['note', `"routine housekeeping ${'.'.repeat(59)}…(5,028 chars)…${'.'.repeat(73)} thanks"`],
      ['source', '"/share/payroll.txt"'],
      ['destination', '"/tmp/exfil/payroll.txt"'],
    ]);
    // The effect itself is whole: the digest binds it, and a program can read every byte.
    expect(JSON.parse(approval.effect.arguments)).toEqual(MOVE);

    // Review page: each argument under its own name, the long one bounded and there whole behind "Show all".
    expect(page).toContain(
      '<th scope="row">Argument <code>source</code></th><td><code>&quot;/share/payroll.txt&quot;</code></td>',
    );
    expect(page).toContain(
      '<th scope="row">Argument <code>destination</code></th><td><code>&quot;/tmp/exfil/payroll.txt&quot;</code></td>',
    );
    expect(page).toContain(
      `<details><summary>Show all 5,028 characters</summary><pre>${NOTE}</pre></details>`,
    );

    const { json, slack } = await webhookBodies(g);
    expect(json.approval.preview).toContain('argument source: "/share/payroll.txt"');
    expect(json.approval.preview).toContain('argument destination: "/tmp/exfil/payroll.txt"');
    expect(slack).toContain('argument source: \\"/share/payroll.txt\\"');
    expect(slack).toContain('argument destination: \\"/tmp/exfil/payroll.txt\\"');
    expect(slack.length).toBeLessThan(4000);
    expect(up.callsOf('move')).toBe(0);
  });

  it('many arguments: the JSON API counts and names the rest; the review page shows every one', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`pad${i}`, NOTE.slice(0, 500)]));
    const { approval, page } = await requested(g, { ...many, ...MOVE });
    expect(approval.preview.hidden.count).toBeGreaterThan(0);
    expect(approval.summary).toMatch(/…and \d+ more not shown here \(.*\): the review page shows every one/);
    expect(approval.summary.length).toBeLessThan(40_000);
    for (const name of [...Object.keys(many), 'source', 'destination'])
      expect(page).toContain(`<th scope="row">Argument <code>${name}</code></th>`);
  });

  it('60 padding arguments before them: the declared source and destination still lead the card and the API', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`note${i}`, 'harmless']));
    const first = (await g.call('alice', 'up__move_declared', { ...many, ...MOVE })).response.result as Loose;
    const id = new URL(onlyQuestion(first).question.params.url as string).pathname.split('/')[3]!;
    const list = await fetch(`${g.origin}/mrtr/approvals`, {
      headers: { authorization: 'Bearer bob-token' },
    });
    const approval = ((await list.json()) as Loose).approvals.find((a: Loose) => a.id === id);
    const shown = (approval.preview.rows as Loose[]).filter((r) => r.kind === 'argument').map((r) => r.name);
    expect(shown.slice(0, 2)).toEqual(['source', 'destination']);
    expect(approval.summary).toContain('/share/payroll.txt');
    expect(approval.summary).toContain('/tmp/exfil/payroll.txt');
    expect(up.callsOf('move_declared')).toBe(0);
  });

  it('an effect too large to read whole on the review page is refused with the reason, never cut', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const reply = await g.call('alice', 'up__move', { ...MOVE, note: 'n'.repeat(300_000) });
    expect(reply.response.result).toMatchObject({ isError: true });
    expect(textOf(reply)).toMatch(
      /^refused: what this call would do is too large for a reviewer to read \(\d+ bytes; at most 262144\)/,
    );
    expect(up.callsOf('move')).toBe(0);
  });

  it('HTML in a name or a value is escaped on the review page, in the row and in the whole value', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const script = `<script>alert(1)</script>${'x'.repeat(400)}<img src=x onerror=alert(2)>`;
    const { page } = await requested(g, { '<b>name</b>': 'v', payload: script });
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<b>name');
    expect(page).toContain('<code>&quot;&lt;b&gt;name&lt;/b&gt;&quot;</code>');
    expect(page).toContain(
      '<pre>&lt;script&gt;alert(1)&lt;/script&gt;' +
        'x'.repeat(400) +
        '&lt;img src=x onerror=alert(2)&gt;</pre>',
    );
  });
});

describe('a long harmless first argument hides nothing from a consent question', () => {
  it('the question names every argument; a value of 871 characters of padding shows its path at the end', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const padded = `${' '.repeat(871)}/share/secret/payroll.txt`;
    const first = (await g.call('alice', 'up__write', { note: NOTE, path: padded, content: 'new salaries' }))
      .response.result as Loose;
    const message = onlyQuestion(first).question.params.message as string;
    expect(message).toContain('argument path: "');
    expect(message).toMatch(/argument path: ".*…\(896 chars\)….*\/share\/secret\/payroll\.txt"/);
    expect(message).toContain('argument content: "new salaries"');
    expect(message).toContain('argument note: "routine housekeeping');
    expect(message.length).toBeLessThan(2000);
    expect(up.callsOf('write')).toBe(0);
  });

  it('many arguments: the question counts and names those it has no room for, and says to decline', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`pad${i}`, NOTE]));
    const first = (await g.call('alice', 'up__write', { ...many, path: '/share/secret/payroll.txt' }))
      .response.result as Loose;
    const message = onlyQuestion(first).question.params.message as string;
    expect(message).toMatch(
      /…and \d+ more not shown here \(pad\d+, .*, …\): this question cannot show them, so decline unless you know what they are/,
    );
    expect(message.length).toBeLessThan(20_000);
  });
});
