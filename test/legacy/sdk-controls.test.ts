// The human controls through the bridge, driven by the official SDK Client with its default options (a 2025-11-25
// client, no version negotiation) against `mrtr serve --fixture workflows`: grant_role asks consent in a form, then
// sends alice to the step-up page and to the approval's status page in URL mode. Each URL question carries the
// elicitationId 2025-11-25 requires, is asked once (the bridge waits for the person instead of asking again), and
// is followed by notifications/elicitation/complete once the page is done. The test plays the people: alice enters
// a TOTP code computed here on the step-up page, bob votes over the JSON API.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { enrolTotp } from 'mrtr/controls';
import { TOTP } from 'otpauth';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { startWorkflows, TOKENS, type Who, type WorkflowsServer } from '../workflows/workflows-server.js';

let s: WorkflowsServer;
let origin: string;
const secrets: Partial<Record<Who, string>> = {};
const open: Client[] = [];
beforeAll(async () => {
  s = await startWorkflows();
  origin = new URL(s.url).origin;
  for (const who of ['alice', 'bob'] as const) secrets[who] = enrolTotp(`${s.dataDir}/totp.json`, who).secret;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
afterAll(() => s.stop());

interface Asked {
  mode: string;
  message: string;
  url?: string;
  elicitationId?: string;
}

/** The SDK Client as an application would make it: default options, elicitation in both modes, alice's token. */
async function sdkClient(who: Who, answer: (asked: Asked) => Promise<Record<string, unknown>>) {
  const client = new Client(
    { name: 'sdk-default', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } } },
  );
  const asked: Asked[] = [];
  const completed: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as unknown as Asked;
    asked.push(params);
    return (await answer(params)) as never;
  });
  client.setNotificationHandler('notifications/elicitation/complete', (n) => {
    completed.push(n.params.elicitationId);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } },
    }),
  );
  open.push(client);
  return { client, asked, completed };
}

/** Alice on the step-up page: signs in with the development form and enters the code of the current time step. */
async function stepUp(who: Who, url: string): Promise<void> {
  const cookie = await sessionCookie(origin, TOKENS[who]);
  const { csrf } = hiddenFields((await getPage(url, cookie)).html);
  const code = new TOTP({ secret: secrets[who]!, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
  const done = await postForm(url, cookie, { csrf: csrf!, code }, origin);
  expect(done.html).toContain('Confirmed');
}

/** A reviewer's vote over the JSON API on the request whose status page is `statusUrl`. */
async function vote(who: Who, statusUrl: string, decision: 'approve' | 'deny', comment: string) {
  const id = new URL(statusUrl).pathname.split('/')[3]!;
  const r = await fetch(`${origin}/mrtr/approvals/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision, comment }),
  });
  expect(r.status).toBe(200);
}

const textOf = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text;

describe('human controls through the bridge, official SDK Client with default options', () => {
  it('grant_role: consent in a form, step-up and approval by URL, each URL asked once with an elicitationId and completed', async () => {
    const people: Promise<void>[] = [];
    const { client, asked, completed } = await sdkClient('alice', async (q) => {
      if (q.mode === 'form') return { action: 'accept', content: { confirm: true } };
      // The person accepts the link; what they do there happens after the client answered, as in real life.
      const url = q.url!;
      people.push(
        Promise.resolve().then(() =>
          url.includes('/mrtr/step-up/')
            ? stepUp('alice', url)
            : vote('bob', url, 'approve', 'ok for on-call'),
        ),
      );
      return { action: 'accept' };
    });
    const result = await client.callTool({
      name: 'grant_role',
      arguments: { subject: 'bob', role: 'auditor' },
    });
    await Promise.all(people);
    expect(textOf(result)).toBe('Granted auditor to bob (approved by bob)');
    expect(asked.map((q) => q.mode)).toEqual(['form', 'url', 'url']);
    const [, stepUpQ, approvalQ] = asked;
    expect(new URL(stepUpQ!.url!).pathname).toMatch(/^\/mrtr\/step-up\//);
    expect(new URL(approvalQ!.url!).pathname).toMatch(/^\/mrtr\/approvals\/.+\/status$/);
    for (const q of [stepUpQ!, approvalQ!]) {
      expect(q.elicitationId).toMatch(/^[\w-]{22}$/);
      // Derived with a key: it is not the page's own id, nor anything else in the URL.
      expect(q.url).not.toContain(q.elicitationId);
    }
    expect(stepUpQ!.elicitationId).not.toBe(approvalQ!.elicitationId);
    expect(asked[0]).not.toHaveProperty('elicitationId');
    // Told once per page, in order: the step-up verified, then the approval decided.
    expect(completed).toEqual([stepUpQ!.elicitationId, approvalQ!.elicitationId]);
  });

  it('grant_role: a denial by the reviewer ends the call with who denied and why, and completes the link', async () => {
    const people: Promise<void>[] = [];
    // bob asks (a TOTP code is single-use per person and time step: alice used hers above).
    const { client, asked, completed } = await sdkClient('bob', async (q) => {
      if (q.mode === 'form') return { action: 'accept', content: { confirm: true } };
      const url = q.url!;
      people.push(
        Promise.resolve().then(() =>
          url.includes('/mrtr/step-up/') ? stepUp('bob', url) : vote('carol', url, 'deny', 'use the replica'),
        ),
      );
      return { action: 'accept' };
    });
    const result = await client.callTool({
      name: 'grant_role',
      arguments: { subject: 'alice', role: 'on-call' },
    });
    await Promise.all(people);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('denied by Carol ("use the replica")');
    expect(asked.map((q) => q.mode)).toEqual(['form', 'url', 'url']);
    expect(completed).toEqual([asked[1]!.elicitationId, asked[2]!.elicitationId]);
  });

  for (const action of ['decline', 'cancel'] as const) {
    it(`grant_role: ${action} at the step-up link ends the call with a clear tool error, asked once`, async () => {
      const { client, asked } = await sdkClient('alice', async (q) =>
        q.mode === 'form' ? { action: 'accept', content: { confirm: true } } : { action },
      );
      const result = await client.callTool({
        name: 'grant_role',
        arguments: { subject: 'carol', role: 'support' },
      });
      expect(result.isError).toBe(true);
      const word = action === 'decline' ? 'declined' : 'cancelled';
      expect(textOf(result)).toContain(`${word} by the user: the step-up (second factor)`);
      expect(asked.map((q) => q.mode)).toEqual(['form', 'url']);
    });
  }
});
