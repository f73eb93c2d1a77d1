// Each control of the gateway's policy, proved on an in-process Gateway in front of an upstream the test controls:
// a policy reloaded between rounds, approval expiry and four-eyes, rate limits, step-up on the gateway's own page,
// and a 2025 SDK client answering the gateway's consent through the bridge. Every test also checks the upstream's
// own count of calls: a control that let a call through would show there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import {
  answering,
  type GatewayUnderTest,
  type Loose,
  onlyQuestion,
  textOf,
  useGateway,
  type Who,
  YES,
} from './fixtures/gateway-under-test.js';

const PATH_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

let up: ChangingUpstream;
beforeAll(async () => {
  up = await startChangingUpstream({
    write: { description: 'Write a file', inputSchema: PATH_SCHEMA },
    move: { description: 'Move a file', inputSchema: PATH_SCHEMA },
    read: { description: 'Read a file', inputSchema: PATH_SCHEMA },
    search: { description: 'Search files', inputSchema: PATH_SCHEMA },
    reveal: { description: 'Show a secret', inputSchema: PATH_SCHEMA },
  });
});
afterAll(() => up?.close());

/** Calls the upstream ran during `work`. */
async function upstreamCallsDuring(work: () => Promise<void>): Promise<number> {
  const before = up.calls.length;
  await work();
  return up.calls.length - before;
}

/** A reviewer's vote over the approvals JSON API on the request a status URL names. */
async function vote(g: GatewayUnderTest, who: Who, statusUrl: string, decision: 'approve' | 'deny') {
  const id = new URL(statusUrl).pathname.split('/')[3];
  const response = await fetch(`${g.origin}/mrtr/approvals/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${who}-token`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision }),
  });
  return { status: response.status, body: await response.text() };
}

const CONSENT_RULES = `  - tools: ["up/write"]
    roles: [requester]
    require: [consent]
  - tools: ["up/read"]
    roles: ["*"]
`;

describe('a policy reloaded between rounds', () => {
  it('does not carry a yes given under the old policy: the round is refused, a new call asks anew', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: CONSENT_RULES });
    const args = { path: '/srv/a.txt' };
    const first = (await g.call('alice', 'up__write', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    const v1 = g.gateway.policy.digest;
    expect(onlyQuestion(first).question.params.message).toContain(`policy: ${v1}`);

    // The admin adds a rule that has nothing to do with write: still a new policy version.
    expect(g.reload(`${CONSENT_RULES}  - tools: ["up/search"]\n    roles: ["*"]\n`)).toEqual([]);
    const v2 = g.gateway.policy.digest;
    expect(v2).not.toBe(v1);

    let carried: Loose;
    const ran = await upstreamCallsDuring(async () => {
      carried = (await g.call('alice', 'up__write', args, answering(first, YES))).response.result;
    });
    expect(ran).toBe(0);
    expect(carried).toMatchObject({ resultType: 'complete', isError: true });
    expect(JSON.stringify(carried.content)).toContain('changed after you consented');

    // Called again, the question names the policy in force; a yes to it runs the call once.
    const again = (await g.call('alice', 'up__write', args)).response.result as Loose;
    expect(onlyQuestion(again).question.params.message).toContain(`policy: ${v2}`);
    const done = await upstreamCallsDuring(async () => {
      const reply = await g.call('alice', 'up__write', args, answering(again, YES));
      expect(reply.response.result).toMatchObject({ resultType: 'complete' });
      expect(reply.response.result?.isError).toBeUndefined();
    });
    expect(done).toBe(1);
  });

  it("refuses the next round once a reload removed the caller's allow rule, and the tool leaves their list", async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: CONSENT_RULES });
    const args = { path: '/srv/b.txt' };
    expect(await g.names('alice')).toContain('up__write');
    const first = (await g.call('alice', 'up__write', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');

    g.reload(`  - tools: ["up/read"]\n    roles: ["*"]\n`);
    const ran = await upstreamCallsDuring(async () => {
      const refused = await g.call('alice', 'up__write', args, answering(first, YES));
      // The tool no longer exists for alice: the answer is the one for a name never served.
      const unknown = await g.call('alice', 'up__never', args, answering(first, YES));
      expect(refused.response.error).toBeDefined();
      expect(JSON.stringify(refused.response.error).replaceAll('up__write', 'T')).toBe(
        JSON.stringify(unknown.response.error).replaceAll('up__never', 'T'),
      );
    });
    expect(ran).toBe(0);
    expect(await g.names('alice')).toEqual(['up__read']);
  });

  it('does not let an approval given under the old policy stand in for the control the new one requires', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: APPROVAL_RULES });
    const args = { path: '/srv/c' };
    const first = (await g.call('alice', 'up__move', args)).response.result as Loose;
    expect((await vote(g, 'bob', onlyQuestion(first).question.params.url, 'approve')).status).toBe(200);
    // The admin swaps the approval for consent.
    g.reload(`  - tools: ["up/move"]\n    roles: [requester]\n    require: [consent]\n`);
    let asked: Loose;
    const ran = await upstreamCallsDuring(async () => {
      asked = (await g.call('alice', 'up__move', args, answering(first, { action: 'accept' }))).response
        .result;
    });
    expect(ran).toBe(0);
    // Re-asked: the new policy's control, for the new policy's version.
    const { key, question } = onlyQuestion(asked);
    expect(key).toBe('consent');
    expect(question.params.message).toContain(`policy: ${g.gateway.policy.digest}`);
    const done = await upstreamCallsDuring(async () => {
      expect(textOf(await g.call('alice', 'up__move', args, answering(asked, YES)))).toBe(
        'move ran with {"path":"/srv/c"}',
      );
    });
    expect(done).toBe(1);
  });
});

const APPROVAL_RULES = `  - name: moves need approval
    tools: ["up/move"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, expiresIn: 1h }
`;
const HOUR = 60 * 60 * 1000;

describe('four-eyes approval', () => {
  it('ends the call with the expiry reason once the request outlived expiresIn; the upstream is never called', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: APPROVAL_RULES });
    const args = { path: '/srv/expiring' };
    const ran = await upstreamCallsDuring(async () => {
      const first = (await g.call('alice', 'up__move', args)).response.result as Loose;
      const { question } = onlyQuestion(first);
      expect(question.params.mode).toBe('url');
      expect(new URL(question.params.url).pathname).toMatch(/^\/mrtr\/approvals\/[^/]+\/status$/);
      // Still pending a minute before expiry.
      g.clock.now += HOUR - 60_000;
      const waiting = (await g.call('alice', 'up__move', args, answering(first, { action: 'accept' })))
        .response.result as Loose;
      expect(waiting.resultType).toBe('input_required');
      g.clock.now += 60_001;
      const expired = await g.call('alice', 'up__move', args, answering(waiting, { action: 'accept' }));
      expect(expired.response.result).toMatchObject({ isError: true });
      expect(textOf(expired)).toBe('the approval request expired before it was decided');
      // Too late for a vote too.
      expect((await vote(g, 'bob', question.params.url, 'approve')).status).toBeGreaterThanOrEqual(400);
    });
    expect(ran).toBe(0);
  });

  it('ends the call when a granted approval was not used within its hour', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: APPROVAL_RULES });
    const args = { path: '/srv/granted-late' };
    const ran = await upstreamCallsDuring(async () => {
      const first = (await g.call('alice', 'up__move', args)).response.result as Loose;
      expect((await vote(g, 'bob', onlyQuestion(first).question.params.url, 'approve')).status).toBe(200);
      g.clock.now += HOUR + 1;
      const late = await g.call('alice', 'up__move', args, answering(first, { action: 'accept' }));
      expect(textOf(late)).toBe('the approval was granted but not used in time: call again to ask anew');
    });
    expect(ran).toBe(0);
  });

  it('refuses self-approval by a requester who holds the approver role; a second person approves it', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: APPROVAL_RULES });
    const args = { path: '/srv/self' };
    const first = (await g.call('carol', 'up__move', args)).response.result as Loose;
    const url = onlyQuestion(first).question.params.url as string;
    const self = await vote(g, 'carol', url, 'approve');
    expect(self.status).toBe(403);
    const pending = (await g.call('carol', 'up__move', args, answering(first, { action: 'accept' }))).response
      .result as Loose;
    expect(pending.resultType).toBe('input_required');
    expect(up.calls.filter((c) => c.args.path === '/srv/self')).toEqual([]);
    expect((await vote(g, 'bob', url, 'approve')).status).toBe(200);
    const ran = await upstreamCallsDuring(async () => {
      const done = await g.call('carol', 'up__move', args, answering(pending, { action: 'accept' }));
      expect(textOf(done)).toBe('move ran with {"path":"/srv/self"}');
    });
    expect(ran).toBe(1);
  });
});

describe('rate limits', () => {
  it('refuses the third call in a minute with 429 and Retry-After; other callers and other tools draw on their own buckets', async () => {
    const g = await useGateway({
      upstreamUrl: up.url,
      rules: `  - name: limited
    tools: ["up/read", "up/search"]
    roles: ["*"]
    rateLimit: { requests: 2, per: 1m }
`,
    });
    const args = { path: '/srv/r' };
    const ran = await upstreamCallsDuring(async () => {
      for (let i = 0; i < 2; i++)
        expect((await g.call('alice', 'up__read', args)).response.result).toMatchObject({
          resultType: 'complete',
        });
      const third = await g.call('alice', 'up__read', args);
      expect(third.status).toBe(429);
      const retryAfter = Number(third.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30); // one of two tokens is back after 30 s
      // Bob's bucket and alice's bucket for another tool are untouched.
      expect((await g.call('bob', 'up__read', args)).status).toBe(200);
      expect((await g.call('alice', 'up__search', args)).status).toBe(200);
    });
    expect(ran).toBe(4);
  });

  it('takes one token per call, not per round: a consent round does not count twice', async () => {
    const g = await useGateway({
      upstreamUrl: up.url,
      rules: `  - tools: ["up/write"]
    roles: [requester]
    require: [consent]
    rateLimit: { requests: 2, per: 1m }
`,
    });
    const args = { path: '/srv/two-rounds' };
    for (let i = 0; i < 2; i++) {
      const first = (await g.call('alice', 'up__write', args)).response.result as Loose;
      const done = await g.call('alice', 'up__write', args, answering(first, YES));
      expect(done.status).toBe(200);
      expect(done.response.result?.isError).toBeUndefined();
    }
    expect((await g.call('alice', 'up__write', args)).status).toBe(429);
  });
});

describe('step-up on the gateway’s own page', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-stepup-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const codeAt = (secret: string, at: number) =>
    new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

  it('asks in URL mode for /mrtr/step-up/…; the call reaches the upstream only after the page took a code', async () => {
    const totpFile = join(dir, 'totp-1.json');
    const { secret } = enrolTotp(totpFile, 'alice');
    enrolTotp(totpFile, 'carol');
    const g = await useGateway({
      upstreamUrl: up.url,
      totpFile,
      rules: `  - tools: ["up/reveal"]
    roles: [requester]
    require: [step_up]
`,
    });
    const args = { path: '/srv/secret' };
    const first = (await g.call('alice', 'up__reveal', args)).response.result as Loose;
    const { question } = onlyQuestion(first);
    expect(question.params.mode).toBe('url');
    expect(question.params._meta['dev.mrtr/humanRequired']).toBe('second_factor');
    const url = new URL(question.params.url);
    expect(url.origin).toBe(g.origin);
    expect(url.pathname).toMatch(/^\/mrtr\/step-up\/[\w-]{22}$/);

    // Before any code: asked again, the upstream untouched.
    const early = (await g.call('alice', 'up__reveal', args, answering(first, { action: 'accept' }))).response
      .result as Loose;
    expect(early.resultType).toBe('input_required');
    expect(up.callsOf('reveal')).toBe(0);

    // Carol, signed in, opens alice's link: refused, and her own valid code checks nothing.
    const carol = await sessionCookie(g.origin, 'carol-token');
    expect((await getPage(url.href, carol)).status).toBe(403);
    const carolCsrf = hiddenFields((await getPage(`${g.origin}/mrtr/session`, carol)).html).csrf as string;
    const forged = await postForm(
      url.href,
      carol,
      { csrf: carolCsrf, code: codeAt(secret, g.clock.now) },
      g.origin,
    );
    expect(forged.status).toBe(403);
    const stillEarly = (await g.call('alice', 'up__reveal', args, answering(early, { action: 'accept' })))
      .response.result as Loose;
    expect(stillEarly.resultType).toBe('input_required');
    expect(up.callsOf('reveal')).toBe(0);

    const alice = await sessionCookie(g.origin, 'alice-token');
    const page = await getPage(url.href, alice);
    expect(page.status).toBe(200);
    const { csrf } = hiddenFields(page.html);
    const ok = await postForm(
      url.href,
      alice,
      { csrf: csrf as string, code: codeAt(secret, g.clock.now) },
      g.origin,
    );
    expect(ok.html).toContain('<h1>Confirmed</h1>');
    const ran = await upstreamCallsDuring(async () => {
      const done = await g.call('alice', 'up__reveal', args, answering(stillEarly, { action: 'accept' }));
      expect(textOf(done)).toBe('reveal ran with {"path":"/srv/secret"}');
    });
    expect(ran).toBe(1);
  });
});

describe('a 2025 caller through the bridge', () => {
  it("the official SDK v1 client's elicitation handler gets the gateway's consent; accept calls the upstream once", async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: CONSENT_RULES });
    const client = new Client({ name: 'sdk-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: Loose[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(g.url), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    );
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name).sort()).toEqual(['up__read', 'up__write']);
      let result: Loose;
      const ran = await upstreamCallsDuring(async () => {
        result = await client.callTool({ name: 'up__write', arguments: { path: '/srv/bridged' } });
      });
      expect(ran).toBe(1);
      expect(result.isError).toBeFalsy();
      expect(result.content[0].text).toBe('write ran with {"path":"/srv/bridged"}');
      expect(asked).toHaveLength(1);
      expect(asked[0].message).toContain('Allow write on up, exactly as below?');
      expect(asked[0].message).toContain(`policy: ${g.gateway.policy.digest}`);
      expect(asked[0].requestedSchema.properties.confirm.type).toBe('boolean');
    } finally {
      await client.close();
    }
  });
});
