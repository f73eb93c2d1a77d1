// Webhooks for approvers: a real request_access makes a signed delivery a receiver verifies, with the deep link; the
// Slack body cannot be turned into a mention or a link; deliveries retry with back-off and Retry-After, give up, and
// never hold up a round; a stopping server lets deliveries finish for a while, then names each one it gives up;
// forged, changed and replayed deliveries are refused; every config mistake is named.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ControlEvent } from '../../src/controls/index.js';
import {
  readNotifyConfig,
  SIGNATURE_HEADER,
  signatureOf,
  slackText,
  TIMESTAMP_HEADER,
  type VerifyWebhookInput,
  verifyWebhook,
  WebhookNotifier,
  type WebhookTarget,
  WebhookVerifyError,
} from '../../src/notify/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { useControls } from '../controls/fixture.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';
import { deferred } from '../helpers/signals.js';

const SECRET = 'whsec-0123456789abcdef';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((done) => s.close(done));
});

/** A receiver on 127.0.0.1 that answers each delivery as `answer` says, and tells each arrival. */
async function receiver(answer: (n: number, res: ServerResponse) => void = (_n, res) => res.end('ok')) {
  const got: Received[] = [];
  const waiting: Array<{ n: number; done: () => void }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      for (const w of waiting.splice(0)) (got.length >= w.n ? w.done : () => waiting.push(w))();
      answer(got.length, res);
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const arrived = (n: number) =>
    got.length >= n ? Promise.resolve() : new Promise<void>((done) => waiting.push({ n, done }));
  return { url, got, arrived };
}

const REQUESTED: ControlEvent = {
  control: 'approval',
  action: 'requested',
  id: 'AAAAAAAAAAAAAAAA',
  by: 'alice',
  at: '2026-12-01T10:00:00.000Z',
  detail: {
    role: 'approver',
    reason: 'Incident 4711',
    requester: 'Alice',
    effect: { tool: 'request_access', resource: 'prod-db' },
    effectDigest: 'digest',
    approve: 1,
    expiresAt: '2026-12-02T10:00:00.000Z',
    url: 'https://mcp.example/mrtr/approvals/AAAAAAAAAAAAAAAA',
  },
};

const target = (url: string, more: Partial<WebhookTarget> = {}): WebhookTarget => ({
  name: 'approvers',
  url: new URL(url),
  roles: ['approver'],
  format: 'signed-json',
  secret: SECRET,
  ...more,
});

describe('verifyWebhook', () => {
  const body = '{"type":"approval.requested"}';
  const now = () => 1_800_000_000_000;
  const stamp = 1_800_000_000;
  const headers = (sig: string, t = stamp) => ({ [SIGNATURE_HEADER]: sig, [TIMESTAMP_HEADER]: String(t) });
  /** Each check with a store of its own: the replay rule is tested in webhook-replay.test.ts. */
  const refusal = async (input: Omit<VerifyWebhookInput, 'seen'>) => {
    try {
      await verifyWebhook({ ...input, seen: new MemoryStore() });
    } catch (error) {
      return error instanceof WebhookVerifyError ? error.reason : String(error);
    }
    return 'accepted';
  };

  it('accepts our delivery, unchanged and recent; any one of several signatures (a secret being rotated)', async () => {
    const sig = signatureOf(SECRET, stamp, body);
    expect(await refusal({ secret: SECRET, headers: headers(sig), body, now })).toBe('accepted');
    expect(await refusal({ secret: SECRET, headers: headers(`v1=00, ${sig}`), body, now })).toBe('accepted');
  });

  it('refuses a forged, changed, replayed or unsigned delivery, each with its reason', async () => {
    const sig = signatureOf(SECRET, stamp, body);
    expect(await refusal({ secret: 'another-secret-0000', headers: headers(sig), body, now })).toBe(
      'bad_signature',
    );
    expect(await refusal({ secret: SECRET, headers: headers(sig), body: `${body} `, now })).toBe(
      'bad_signature',
    );
    const old = stamp - 301;
    expect(
      await refusal({ secret: SECRET, headers: headers(signatureOf(SECRET, old, body), old), body, now }),
    ).toBe('stale');
    // The signature of another timestamp does not carry over to a fresh one.
    expect(
      await refusal({ secret: SECRET, headers: headers(signatureOf(SECRET, old, body)), body, now }),
    ).toBe('bad_signature');
    expect(await refusal({ secret: SECRET, headers: {}, body, now })).toBe('missing_header');
    expect(await refusal({ secret: SECRET, headers: headers(sig, 'x' as never), body, now })).toBe(
      'missing_header',
    );
    // The same delivery again, inside the window: the store remembers it.
    const seen = new MemoryStore({ now });
    await verifyWebhook({ secret: SECRET, headers: headers(sig), body, now, seen });
    await expect(
      verifyWebhook({ secret: SECRET, headers: headers(sig), body, now, seen }),
    ).rejects.toMatchObject({
      reason: 'replayed',
    });
  });

  it('needs a store: without one it cannot refuse a replay, so it refuses to run', async () => {
    const sig = signatureOf(SECRET, stamp, body);
    await expect(
      verifyWebhook({ secret: SECRET, headers: headers(sig), body, now } as unknown as VerifyWebhookInput),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringContaining('needs `seen`'),
    });
  });
});

describe('the Slack body', () => {
  it('escapes what Slack reads as markup, so a requester cannot mention a channel or hide a link', async () => {
    const r = await receiver();
    const n = new WebhookNotifier({
      targets: [target(r.url, { format: 'slack', secret: undefined as never })],
    });
    n.notify({
      ...REQUESTED,
      detail: { ...REQUESTED.detail, reason: '<!channel> see <https://evil.example|the runbook> & act' },
    });
    await n.settled();
    const slack = JSON.parse(r.got[0]!.body) as { text: string; blocks: Array<Record<string, unknown>> };
    expect(slack.text).toBe(
      'Alice asks for approval: &lt;!channel&gt; see &lt;https://evil.example|the runbook&gt; &amp; act — https://mcp.example/mrtr/approvals/AAAAAAAAAAAAAAAA',
    );
    expect(JSON.stringify(slack.blocks)).toContain(
      '"url":"https://mcp.example/mrtr/approvals/AAAAAAAAAAAAAAAA"',
    );
    expect(JSON.stringify(slack.blocks)).toContain('tool: request_access\\nresource: prod-db');
    expect(r.got[0]!.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(slackText('<@U1>')).toBe('&lt;@U1&gt;');
  });
});

describe('delivery', () => {
  it('retries a 500 with back-off, then delivers; honours Retry-After on a 429', async () => {
    const r = await receiver((n, res) => {
      if (n === 1) res.writeHead(500).end();
      else if (n === 2) res.writeHead(429, { 'retry-after': '7' }).end();
      else res.end('ok');
    });
    const waits: number[] = [];
    const n = new WebhookNotifier({
      targets: [target(r.url)],
      wait: async (ms) => void waits.push(ms),
      random: () => 0,
    });
    n.notify(REQUESTED);
    await n.settled();
    expect(r.got).toHaveLength(3);
    expect(waits).toEqual([1000, 7000]);
    expect(n.stats).toEqual({ delivered: 1, failed: 0, dropped: 0, abandoned: 0 });
  });

  it('gives up after its tries, and at once on a 4xx that trying again cannot change; says so', async () => {
    const down = await receiver((_n, res) => res.writeHead(503).end());
    const lines: string[] = [];
    const waits: number[] = [];
    const n = new WebhookNotifier({
      targets: [target(down.url)],
      wait: async (ms) => void waits.push(ms),
      random: () => 0,
      log: (l) => lines.push(l),
    });
    n.notify(REQUESTED);
    await n.settled();
    expect(down.got).toHaveLength(5);
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    expect(lines).toEqual([
      'webhook approvers: approval AAAAAAAAAAAAAAAA not delivered after 5 tries (HTTP 503)',
    ]);
    const gone = await receiver((_n, res) => res.writeHead(404).end());
    const m = new WebhookNotifier({ targets: [target(gone.url)], wait: async () => {}, log: () => {} });
    m.notify(REQUESTED);
    await m.settled();
    expect(gone.got).toHaveLength(1);
    expect(m.stats.failed).toBe(1);
  });

  it('never follows a redirect (the body would go where the receiver says)', async () => {
    const elsewhere = await receiver();
    const mover = await receiver((_n, res) => res.writeHead(307, { location: elsewhere.url }).end());
    const n = new WebhookNotifier({ targets: [target(mover.url)], wait: async () => {}, log: () => {} });
    n.notify(REQUESTED);
    await n.settled();
    expect(elsewhere.got).toHaveLength(0);
    expect(n.stats.failed).toBe(1);
  });

  it('only requests for a target’s roles, and only new requests, are delivered', async () => {
    const r = await receiver();
    const n = new WebhookNotifier({
      targets: [target(r.url, { roles: ['finance'] }), target(r.url, { name: 'all', roles: ['*'] })],
    });
    n.notify(REQUESTED);
    n.notify({ ...REQUESTED, action: 'approve' });
    n.notify({ ...REQUESTED, control: 'step_up', action: 'done' });
    await n.settled();
    expect(r.got).toHaveLength(1);
  });
});

describe('stopping', () => {
  const request = (id: string): ControlEvent => ({ ...REQUESTED, id });

  it('close lets a delivery in flight finish, and gives nothing up', async () => {
    const release = deferred();
    const r = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const lines: string[] = [];
    const n = new WebhookNotifier({
      targets: [target(r.url)],
      log: (l) => lines.push(l),
      deadline: () => new Promise(() => {}),
    });
    n.notify(REQUESTED);
    await r.arrived(1);
    const closed = n.close(5000);
    expect(n.pending).toBe(1);
    release.resolve();
    await closed;
    expect(n.stats).toEqual({ delivered: 1, failed: 0, dropped: 0, abandoned: 0 });
    expect(lines).toEqual([]);
  });

  it('at the deadline names each delivery not done: in flight, waiting to retry, never started', async () => {
    const release = deferred();
    const held = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const down = await receiver((_n, res) => res.writeHead(503).end());
    const pausing = deferred();
    let pauses = 0;
    const deadline = deferred();
    const lines: string[] = [];
    const n = new WebhookNotifier({
      targets: [target(held.url), target(down.url, { name: 'down' })],
      log: (l) => lines.push(l),
      // Back-off pauses never end on their own here; the second one tells the test both are pausing.
      wait: () => {
        if (++pauses === 2) pausing.resolve();
        return new Promise(() => {});
      },
      deadline: () => deadline.promise,
    });
    // Six deliveries, four at a time: held 1, down 1, held 2, down 2 start; held 3 and down 3 wait their turn.
    for (const id of ['A1', 'A2', 'A3']) n.notify(request(id));
    await held.arrived(2);
    await pausing.promise;
    const closed = n.close(5000);
    expect(lines).toEqual([]);
    deadline.resolve();
    await closed;
    expect(lines.sort()).toEqual([
      'webhook approvers: approval A1 not delivered: the server stopped during try 1: the receiver may have it',
      'webhook approvers: approval A2 not delivered: the server stopped during try 1: the receiver may have it',
      'webhook approvers: approval A3 not delivered: the server stopped before it was sent',
      'webhook down: approval A1 not delivered: the server stopped after 1 tries, before the next',
      'webhook down: approval A2 not delivered: the server stopped after 1 tries, before the next',
      'webhook down: approval A3 not delivered: the server stopped before it was sent',
    ]);
    expect(n.stats).toEqual({ delivered: 0, failed: 0, dropped: 0, abandoned: 6 });
    expect(n.pending).toBe(0);
    expect(held.got).toHaveLength(2);
    expect(down.got).toHaveLength(2);
    // A request told after the stop is named at once, never sent.
    n.notify(request('A4'));
    expect(lines.slice(-2)).toEqual([
      'webhook approvers: approval A4 not delivered: the server stopped before it was sent',
      'webhook down: approval A4 not delivered: the server stopped before it was sent',
    ]);
    expect(n.pending).toBe(0);
    release.resolve();
  });

  it('past its cap, the queue drops its oldest delivery and names it', async () => {
    const release = deferred();
    const held = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const lines: string[] = [];
    const n = new WebhookNotifier({ targets: [target(held.url)], log: (l) => lines.push(l) });
    // Four are tried at once; a thousand more wait; the next two push the two oldest waiting out.
    for (let i = 1; i <= 1006; i++) n.notify(request(`R${i}`));
    expect(lines).toEqual([
      'webhook queue full (1000): approval R5 not delivered to approvers, the oldest waiting',
      'webhook queue full (1000): approval R6 not delivered to approvers, the oldest waiting',
    ]);
    expect(n.stats.dropped).toBe(2);
    expect(n.pending).toBe(1004);
    n.stop();
    await n.settled();
    release.resolve();
  });

  it('stop names every delivery not done before it returns (a second signal exits right after)', async () => {
    const release = deferred();
    const held = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const lines: string[] = [];
    const n = new WebhookNotifier({ targets: [target(held.url)], log: (l) => lines.push(l) });
    n.notify(REQUESTED);
    await held.arrived(1);
    n.stop();
    expect(lines).toEqual([
      'webhook approvers: approval AAAAAAAAAAAAAAAA not delivered: the server stopped during try 1: the receiver may have it',
    ]);
    await n.settled();
    // The aborted try ends without a second line, and without counting as delivered or failed.
    expect(lines).toHaveLength(1);
    expect(n.stats).toEqual({ delivered: 0, failed: 0, dropped: 0, abandoned: 1 });
    release.resolve();
  });
});

describe('a real approval request', () => {
  it('is delivered signed, with the deep link, while the round answers without waiting for the receiver', async () => {
    const release = deferred();
    const r = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const notifier = new WebhookNotifier({ targets: [target(r.url)] });
    const f = await useControls({ onEvent: (e) => notifier.notify(e) });
    const first = await f.call('alice-token', 'request_access', {
      resource: 'prod-db',
      reason: 'Incident 4711',
    });
    // The round has answered; the receiver holds the delivery still (released only below).
    expect(first.result.resultType).toBe('input_required');
    await r.arrived(1);
    expect(release.settled).toBe(false);
    release.resolve();
    await notifier.settled();
    const got = r.got[0]!;
    await verifyWebhook({ secret: SECRET, headers: got.headers, body: got.body, seen: new MemoryStore() });
    const body = JSON.parse(got.body) as {
      type: string;
      approval: { url: string; requester: string; reason: string };
    };
    expect(body.type).toBe('approval.requested');
    expect(body.approval).toMatchObject({ requester: 'Alice', reason: 'Incident 4711' });
    expect(body.approval.url).toBe(first.result.inputRequests.approval.params.url.replace(/\/status$/, ''));
  });
});

/** `mrtr serve --notify` with one webhook (approvers) at `url`, on a free port. */
async function serveNotifying(url: string, more: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-notify-'));
  const file = join(dir, 'notify.yaml');
  writeFileSync(
    file,
    `webhooks:\n  - name: approvers\n    url: ${url}\n    roles: [approver]\n    secretEnv: HOOK_SECRET\n`,
  );
  const port = await freePort();
  const served = await serveCli(
    [
      '--port',
      String(port),
      '--tokens',
      'examples/workflows/tokens.json',
      '--notify',
      file,
      '--totp',
      join(dir, 'totp.json'),
      ...more,
    ],
    'serve',
    { env: { HOOK_SECRET: SECRET } },
  );
  const requestAccess = () =>
    mcp(
      served.url,
      'tools/call',
      { name: 'request_access', arguments: { resource: 'prod-db', reason: 'cli' } },
      { headers: { authorization: 'Bearer alice-dev-token' } },
    );
  return { served, port, requestAccess };
}

describe('mrtr serve --notify FILE', () => {
  it('tells the webhook of a request made through the server', async () => {
    const r = await receiver();
    const { served, port } = await serveNotifying(r.url);
    expect(served.stderr()).toContain(`approval requests are sent to 1 webhook(s): approvers (127.0.0.1:`);
    await mcp(
      served.url,
      'tools/call',
      { name: 'request_access', arguments: { resource: 'prod-db', reason: 'cli' } },
      {
        headers: { authorization: 'Bearer alice-dev-token' },
      },
    );
    await r.arrived(1);
    await verifyWebhook({
      secret: SECRET,
      headers: r.got[0]!.headers,
      body: r.got[0]!.body,
      seen: new MemoryStore(),
    });
    expect(JSON.parse(r.got[0]!.body).approval.url).toMatch(
      new RegExp(`^http://127.0.0.1:${port}/mrtr/approvals/[\\w-]{16}$`),
    );
    await served.stop();
  });

  it('a stopping server lets a delivery under way finish before it exits', async () => {
    const release = deferred();
    const r = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const { served, requestAccess } = await serveNotifying(r.url);
    await requestAccess();
    await r.arrived(1);
    let ended = false;
    void served.exited.then(() => {
      ended = true;
    });
    served.signal('SIGTERM');
    await served.saidOnStderr('1 webhook delivery(ies) not done yet: trying for up to 5 s');
    expect(ended).toBe(false);
    release.resolve();
    // No second signal: the server ends on its own once the delivery is done.
    await served.exited;
    expect(served.stderr()).not.toContain('not delivered');
  });

  it('a stopping server names a delivery waiting to retry, then closes its audit trail (nothing else holds it open)', async () => {
    // 503 and close the connection: once the server has read the answer its socket is gone, and the delivery is
    // waiting for its next try, a wait that must not be all that keeps the process alive.
    const answered = deferred();
    const r = await receiver((_n, res) => {
      res.socket?.once('close', () => answered.resolve());
      res.writeHead(503, { connection: 'close' }).end();
    });
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-notify-'));
    const audit = join(dir, 'audit.db');
    const { served, requestAccess } = await serveNotifying(r.url, [
      '--drain-ms',
      '0',
      '--audit',
      `sqlite:${audit}`,
    ]);
    await requestAccess();
    await answered.promise;
    const id = (JSON.parse(r.got[0]!.body) as { approval: { id: string } }).approval.id;
    served.signal('SIGTERM');
    await served.exited;
    expect(served.stderr()).toContain('1 webhook delivery(ies) not done yet: trying for up to 0 s');
    expect(served.stderr()).toContain(
      `mrtr serve: webhook approvers: approval ${id} not delivered: the server stopped after 1 tries, before the next`,
    );
    // The shutdown went on to the end: the trail's last checkpoint seals every event.
    const verify = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'verify', '--audit', `sqlite:${audit}`],
      {
        encoding: 'utf8',
      },
    );
    expect(verify.status).toBe(0);
    const head = /head #(\d+), sealed up to #(\d+)/.exec(verify.stdout);
    expect(head?.[1]).toBe(head?.[2]);
  });

  it('a second signal names the delivery it gives up, with its approval id', async () => {
    const release = deferred();
    const r = await receiver((_n, res) => void release.promise.then(() => res.end('ok')));
    const { served, requestAccess } = await serveNotifying(r.url);
    await requestAccess();
    await r.arrived(1);
    const id = (JSON.parse(r.got[0]!.body) as { approval: { id: string } }).approval.id;
    served.signal('SIGTERM');
    await served.saidOnStderr('not done yet');
    served.signal('SIGTERM');
    await served.stop();
    release.resolve();
    expect(served.stderr()).toContain(
      `mrtr serve: webhook approvers: approval ${id} not delivered: the server stopped during try 1: the receiver may have it`,
    );
  });
});

describe('the notifications file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-notify-'));
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const problem = (text: string, env: NodeJS.ProcessEnv = { S: SECRET }) => {
    const file = write('n.yaml', text);
    try {
      readNotifyConfig(file, env);
      return 'read';
    } catch (error) {
      return (error as Error).message.replace(`${file}: `, '');
    }
  };
  const hook = (extra: string) => `webhooks:\n  - name: a\n    secretEnv: S\n${extra}`;

  it('reads YAML and JSON; a Slack hook needs no secret', () => {
    const yaml = readNotifyConfig(write('ok.yaml', hook('    url: https://hooks.example/a\n')), {
      S: SECRET,
    });
    expect(yaml).toEqual([
      {
        name: 'a',
        url: new URL('https://hooks.example/a'),
        roles: ['*'],
        format: 'signed-json',
        secret: SECRET,
      },
    ]);
    const json = readNotifyConfig(
      write(
        'ok.json',
        JSON.stringify({ webhooks: [{ name: 's', url: 'https://hooks.slack.com/x', format: 'slack' }] }),
      ),
    );
    expect(json[0]).toMatchObject({ name: 's', format: 'slack' });
  });

  it('names each mistake by file and key', () => {
    expect(problem('nothing: 1')).toBe('webhooks: the file needs a list named webhooks');
    expect(problem(hook('    url: http://hooks.example/a\n'))).toBe(
      'webhooks[0].url: must be https:// (or http:// to 127.0.0.1, ::1 or localhost)',
    );
    expect(problem(hook('    url: nope\n'))).toBe('webhooks[0].url: is not a URL: "nope"');
    expect(problem(hook('    url: https://u:p@hooks.example/a\n'))).toBe(
      'webhooks[0].url: must not carry a user or a password',
    );
    expect(problem(hook('    url: https://h.example/\n    secret: inline\n'))).toBe(
      'webhooks[0].secret: is not a setting (name, url, roles, format, secretEnv, secretFile)',
    );
    expect(problem(hook('    url: https://h.example/\n'), {})).toBe(
      'webhooks[0].secretEnv: the variable S is not set',
    );
    expect(problem(hook('    url: https://h.example/\n'), { S: 'short' })).toBe(
      'webhooks[0]: a signed-json webhook needs a secret of at least 16 characters (secretEnv or secretFile)',
    );
    expect(problem(hook('    url: https://h.example/\n    format: xml\n'))).toBe(
      'webhooks[0].format: must be signed-json or slack',
    );
    expect(problem(hook('    url: https://h.example/\n    roles: []\n'))).toBe(
      'webhooks[0].roles: must be a list of role names, or [*] for every role',
    );
    expect(
      problem(
        `${hook('    url: https://h.example/\n')}  - name: a\n    url: https://h.example/\n    format: slack\n`,
      ),
    ).toBe('webhooks[1].name: a is used twice');
    expect(problem('webhooks: [')).toMatch(/^not YAML or JSON: /);
  });

  it('mrtr serve exits 2 naming --notify and the problem', async () => {
    const out = await runCommand(
      process.execPath,
      [
        'dist/cli/main.js',
        'serve',
        '--port',
        '0',
        '--tokens',
        'examples/workflows/tokens.json',
        '--resource',
        'http://127.0.0.1:1/mcp',
        '--notify',
        join(dir, 'missing.yaml'),
      ],
      { encoding: 'utf8' },
    );
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(`mrtr serve: --notify: cannot read ${join(dir, 'missing.yaml')}`);
  });
});
