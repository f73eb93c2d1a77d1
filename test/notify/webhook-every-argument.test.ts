// Issue 37, security item 3, in the webhooks: a long harmless first argument must not push `source` and
// `destination` out of the message an approver reads in chat, nor out of the signed body a program shows.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ControlEvent } from '../../src/controls/index.js';
import { WebhookNotifier } from '../../src/notify/index.js';

const NOTE = `routine housekeeping ${'.'.repeat(5000)} thanks`;
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((done) => s.close(done));
});

/** The bodies a signed-JSON and a Slack webhook receive for a request whose call has `args`. */
async function bodiesFor(args: Record<string, unknown>): Promise<{ json: string; slack: string }> {
  const got: Array<{ path: string; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      got.push({ path: req.url ?? '', body });
      res.end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const n = new WebhookNotifier({
    targets: [
      {
        name: 'p',
        url: new URL(`${base}/json`),
        roles: ['*'],
        format: 'signed-json',
        secret: 'whsec-0123456789abcdef',
      },
      { name: 's', url: new URL(`${base}/slack`), roles: ['*'], format: 'slack' },
    ],
  });
  const event: ControlEvent = {
    control: 'approval',
    action: 'requested',
    id: 'AAAAAAAAAAAAAAAA',
    by: 'alice',
    at: '2026-12-01T10:00:00.000Z',
    detail: {
      role: 'approver',
      reason: 'tidy up',
      requester: 'Alice',
      effect: { upstream: 'files', tool: 'move_file', arguments: JSON.stringify(args) },
      effectDigest: 'digest',
      approve: 1,
      expiresAt: '2026-12-02T10:00:00.000Z',
      url: 'https://mcp.example/mrtr/approvals/AAAAAAAAAAAAAAAA',
    },
  };
  n.notify(event);
  await n.settled();
  return {
    json: got.find((g) => g.path === '/json')!.body,
    slack: got.find((g) => g.path === '/slack')!.body,
  };
}

describe('a webhook for a call with a long harmless first argument', () => {
  it('names source and destination with their values, the long value bounded at both ends', async () => {
    const { json, slack } = await bodiesFor({
      note: NOTE,
      source: '/share/payroll.txt',
      destination: '/tmp/exfil/payroll.txt',
    });
    const preview = (JSON.parse(json) as { approval: { preview: string[] } }).approval.preview;
    expect(preview).toEqual([
      'upstream: files',
      'tool: move_file',
      `argument note: "routine housekeeping ${'.'.repeat(59)}…(5,028 chars)…${'.'.repeat(73)} thanks"`,
      'argument source: "/share/payroll.txt"',
      'argument destination: "/tmp/exfil/payroll.txt"',
    ]);
    const text = JSON.stringify(JSON.parse(slack).blocks);
    expect(text).toContain('argument source: \\"/share/payroll.txt\\"');
    expect(text).toContain('argument destination: \\"/tmp/exfil/payroll.txt\\"');
    expect(slack.length).toBeLessThan(2000);
  });

  it('many arguments: Slack counts and names the rest and says the review page shows every one', async () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`pad${i}`, NOTE]));
    const { slack } = await bodiesFor({ ...many, source: '/share/payroll.txt' });
    const blocks = JSON.parse(slack).blocks as Array<{ text?: { text: string } }>;
    const text = blocks.map((b) => b.text?.text ?? '').join('\n');
    expect(text).toMatch(/…and 73 more not shown here \(pad28, .*, …\): the review page shows every one/);
    for (const b of blocks) expect((b.text?.text ?? '').length).toBeLessThanOrEqual(3000);
  });

  it('what a requester puts in a value cannot become Slack markup (a mention or a link)', async () => {
    const { slack } = await bodiesFor({ note: '<!channel> <https://evil.example|here>' });
    expect(slack).not.toContain('<!channel>');
    expect(slack).toContain('&lt;!channel&gt;');
  });
});
