// The interface checks outside the repo use: `mrtr serve --fixture example --tokens FILE --store sqlite:PATH`,
// whose request_access needs a four-eyes approval by role approver (URL mode first, the JSON API to decide, the
// retry completes naming the resource), and grant_role through all three controls; `mrtr users totp <sub>`.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import { afterAll, describe, expect, it } from 'vitest';
import { totpSecretsFile } from '../../src/controls/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-serve-controls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = `k1:${Buffer.alloc(32, 9).toString('base64url')}`;
const tokensFile = join(dir, 'tokens.json');
writeFileSync(
  tokensFile,
  JSON.stringify({
    'alice-dev-token': { sub: 'alice', name: 'Alice', roles: ['requester'] },
    'bob-dev-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  }),
);
const run = (args: string[]) =>
  runCommand(process.execPath, ['dist/cli/main.js', ...args], { encoding: 'utf8', timeout: 25_000 });
// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function serve(extra: string[] = []) {
  const port = await freePort();
  const server = await serveCli([
    '--state-keys',
    KEYS,
    '--fixture',
    'example',
    '--port',
    String(port),
    '--tokens',
    tokensFile,
    '--store',
    `sqlite:${join(dir, `store-${port}.db`)}`,
    ...extra,
  ]);
  return { ...server, origin: `http://127.0.0.1:${port}` };
}

describe('mrtr serve --fixture example --tokens FILE --store sqlite:PATH', () => {
  it('request_access: input_required in URL mode; approved by bob over the JSON API; the retry names the resource', async () => {
    const server = await serve();
    expect(server.stderr()).toContain(`approvals inbox at ${server.origin}/mrtr/approvals`);
    const call = { name: 'request_access', arguments: { resource: 'prod-db', reason: 'incident 4711' } };
    const first = await mcp(server.url, 'tools/call', call, as('alice-dev-token'));
    const result = first.response.result as Loose;
    expect(result.resultType).toBe('input_required');
    const q = result.inputRequests.approval;
    expect(q.params).toMatchObject({ mode: 'url' });
    expect(q.params.message).toContain('Still waiting — approved by 0 of 1');
    const id = new URL(q.params.url).pathname.split('/')[3];

    const inbox = await fetch(`${server.origin}/mrtr/approvals`, {
      headers: { authorization: 'Bearer bob-dev-token' },
    });
    const listed = (await inbox.json()) as Loose;
    expect(listed.approvals.map((a: { id: string }) => a.id)).toEqual([id]);
    expect(listed.approvals[0]).toMatchObject({ requester: { subject: 'alice' }, reason: 'incident 4711' });
    const self = await fetch(`${server.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'me' }),
    });
    expect(self.status).toBe(403);
    const vote = await fetch(`${server.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(vote.status).toBe(200);
    expect(((await vote.json()) as Loose).state).toBe('approved');
    const again = await fetch(`${server.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(again.status).toBe(409);

    const done = await mcp(
      server.url,
      'tools/call',
      { ...call, requestState: result.requestState, inputResponses: { approval: { action: 'accept' } } },
      as('alice-dev-token'),
    );
    const text = (done.response.result as Loose).content[0].text as string;
    expect(text).toBe('Access to prod-db granted to alice (approved by bob)');
    // Decisions are told on stderr, with who and why.
    expect(server.stderr()).toMatch(
      /mrtr serve: approval \{"control":"approval","action":"approve","id":"[\w-]+","by":"bob"/,
    );
  });

  it('grant_role: consent, then step-up with a code from `mrtr users totp`, then an approver; a retried final round gets the same answer', async () => {
    const totpFile = join(dir, 'totp.json');
    const enrolled = await run(['users', 'totp', 'alice', '--totp', totpFile]);
    expect(enrolled.status).toBe(0);
    expect(enrolled.stdout).toMatch(/otpauth:\/\/totp\/mrtr:alice\?issuer=mrtr&secret=[A-Z2-7]+/);
    expect(enrolled.stdout).toContain('▄'); // the QR code
    expect(statSync(totpFile).mode & 0o777).toBe(0o600);
    const secret = JSON.parse(readFileSync(totpFile, 'utf8')).users.alice.secret as string;

    const server = await serve(['--totp', totpFile]);
    const call = { name: 'grant_role', arguments: { subject: 'carol', role: 'deployer' } };
    const ask = (round: Record<string, unknown>) =>
      mcp(server.url, 'tools/call', { ...call, ...round }, as('alice-dev-token')).then(
        (r) => r.response.result as Loose,
      );
    const r0 = await ask({});
    expect(r0.inputRequests.consent.params._meta['dev.mrtr/humanRequired']).toBe('consent');
    expect(r0.inputRequests.consent.params.message).toContain('role: deployer');
    const r1 = await ask({
      requestState: r0.requestState,
      inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
    });
    const stepUrl = r1.inputRequests.step_up.params.url as string;
    const alice = await sessionCookie(server.origin, 'alice-dev-token');
    const csrf = hiddenFields((await getPage(stepUrl, alice)).html).csrf!;
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(stepUrl, alice, { csrf, code }, server.origin)).html).toContain('Confirmed');
    const r2 = await ask({
      requestState: r1.requestState,
      inputResponses: { step_up: { action: 'accept' } },
    });
    const id = new URL(r2.inputRequests.approval.params.url).pathname.split('/')[3];
    const vote = await fetch(`${server.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'change 81' }),
    });
    expect(vote.status).toBe(200);
    const round3 = { requestState: r2.requestState, inputResponses: { approval: { action: 'accept' } } };
    const r3 = await ask(round3);
    expect(r3.content[0].text).toBe('Granted deployer to carol (approved by bob)');
    // The same final round again (a client retry): the replay guard answers it, the grant is not made twice.
    const r4 = await ask(round3);
    expect(r4.content[0].text).toBe('Granted deployer to carol (approved by bob)');
    // A new grant_role for the same person now shows the changed facts.
    const fresh = await ask({});
    expect(fresh.inputRequests.consent.params.message).toContain('currentRoles: deployer');
  });

  it('without --tokens the controlled tools say what they need', async () => {
    const port = await freePort();
    const server = await serveCli(['--state-keys', KEYS, '--fixture', 'example', '--port', String(port)]);
    const r = await mcp(server.url, 'tools/call', {
      name: 'request_access',
      arguments: { resource: 'x', reason: 'y' },
    });
    expect((r.response.result as Loose).isError).toBe(true);
    expect((r.response.result as Loose).content[0].text).toContain(
      'needs an authenticated caller: serve with --tokens FILE',
    );
  });

  it('without --tokens or --issuer the inbox and step-up pages say sign-in is missing (404, not a bare 500)', async () => {
    const port = await freePort();
    const server = await serveCli(['--state-keys', KEYS, '--fixture', 'example', '--port', String(port)]);
    const origin = new URL(server.url).origin;
    for (const path of ['/mrtr/approvals', '/mrtr/approvals/abc', '/mrtr/step-up/abc']) {
      const page = await fetch(`${origin}${path}`);
      expect(page.status, path).toBe(404);
      const body = await page.text();
      expect(body, path).toContain('No sign-in on this server');
      expect(body, path).toContain('mrtr serve --tokens FILE');
    }
  });

  it('mrtr users totp: enrolling a subject again says it replaced the earlier secret, and when that one was made', async () => {
    const totpFile = join(dir, 'again.json');
    const first = await run(['users', 'totp', 'dana', '--totp', totpFile, '--no-qr']);
    expect(first.status).toBe(0);
    expect(first.stderr).not.toContain('replaced');
    const before = JSON.parse(readFileSync(totpFile, 'utf8')).users.dana;
    const second = await run(['users', 'totp', 'dana', '--totp', totpFile, '--no-qr']);
    expect(second.status).toBe(0);
    expect(second.stderr).toContain(
      `mrtr users totp: replaced dana's earlier secret (enrolled ${before.enrolledAt}): the app enrolled with it no longer gives valid codes`,
    );
    expect(JSON.parse(readFileSync(totpFile, 'utf8')).users.dana.secret).not.toBe(before.secret);
    // Another subject is a first enrolment, and leaves dana's alone.
    const other = await run(['users', 'totp', 'erin', '--totp', totpFile, '--no-qr']);
    expect(other.stderr).not.toContain('replaced');
    expect(Object.keys(JSON.parse(readFileSync(totpFile, 'utf8')).users)).toEqual(['dana', 'erin']);
  });

  it('mrtr users totp: a subject named __proto__ is enrolled like any other (it printed a QR code and stored nothing)', async () => {
    const totpFile = join(dir, 'proto.json');
    const first = await run(['users', 'totp', '__proto__', '--totp', totpFile, '--no-qr']);
    expect(first.status).toBe(0);
    const secret = /secret=([A-Z2-7]+)/.exec(first.stdout)![1];
    // As the server reads it: an own member of users.
    const users = JSON.parse(readFileSync(totpFile, 'utf8')).users;
    expect(Object.getOwnPropertyDescriptor(users, '__proto__')?.value?.secret).toBe(secret);
    expect(totpSecretsFile(totpFile).secretOf('__proto__')).toBe(secret);
    const second = await run(['users', 'totp', '__proto__', '--totp', totpFile, '--no-qr']);
    expect(second.stderr).toContain("mrtr users totp: replaced __proto__'s earlier secret");
  });

  it('mrtr users totp: a subject is required; unknown sub-commands are named', async () => {
    const none = await run(['users', 'totp']);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('give exactly one subject');
    const other = await run(['users', 'passwd', 'x']);
    expect(other.status).toBe(2);
    expect(other.stderr).toContain("unknown command 'passwd'");
  });
});
