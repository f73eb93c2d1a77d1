// Decisions are audited with who, when and why: the page and API events (onEvent), and the requester's round, whose
// audit event notes the votes when the grant is redeemed or denied. Also the lockout's back-off cap.
import { describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { type ControlEvent, HumanControls, TotpCheck } from '../../src/controls/index.js';
import { McpServer, type RoundEvent, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { PEOPLE } from './fixture.js';

// biome-ignore lint/suspicious/noExplicitAny: replies and notes are read as loose JSON, checked by the expectations
type Loose = any;

const facts = { release: 81 };

async function audited() {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const store = new MemoryStore();
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  const rounds: RoundEvent[] = [];
  const events: ControlEvent[] = [];
  const server = new McpServer({
    name: 'audited',
    version: '1',
    stateKeys: generateKeySpec(),
    auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
    signIn: { devTokens: tokens },
    replayStore: store,
    observers: [{ observe: (e) => void rounds.push(e) }],
    logger: { info() {}, warn() {}, error() {} } as never,
  });
  const controls = new HumanControls({ store, onEvent: (e) => events.push(e) }).attach(server);
  server.tool({ name: 'deploy', description: 'x' }, async (_a, ctx) => {
    await controls.approval(ctx, {
      role: 'approver',
      reason: 'release 81',
      effect: { tool: 'deploy', release: facts.release },
    });
    return text('deployed');
  });
  const endpoint = await server.http({ port }).listen();
  const call = (round: Record<string, unknown> = {}) =>
    mcp(
      endpoint.url,
      'tools/call',
      { name: 'deploy', arguments: {}, ...round },
      {
        headers: { authorization: 'Bearer alice-token' },
      },
    ).then((r) => r.response.result as Record<string, Loose>);
  const vote = (token: string, id: string, decision: string, comment: string) =>
    fetch(`${origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision, comment }),
    });
  return { endpoint, store, rounds, events, call, vote };
}

describe('approvals on the record', () => {
  it('the redeeming round’s audit event names who approved, when and why; refused votes are events too', async () => {
    const a = await audited();
    try {
      const first = await a.call();
      const id = new URL(first.inputRequests.approval.params.url).pathname.split('/')[3]!;
      // The round that asks says the request is pending: an export reads it as deferred.
      expect(a.rounds.at(-1)!.outcome).toBe('input_required');
      expect((a.rounds.at(-1)!.notes as Record<string, Loose>).approval).toEqual({
        id,
        state: 'pending',
        votes: [],
      });
      expect((await a.vote('alice-token', id, 'approve', 'self')).status).toBe(403);
      expect((await a.vote('bob-token', id, 'approve', 'release notes read')).status).toBe(200);
      const done = await a.call({
        requestState: first.requestState,
        inputResponses: { approval: { action: 'accept' } },
      });
      expect(done.content[0].text).toBe('deployed');
      const last = a.rounds.at(-1)!;
      expect(last.outcome).toBe('complete');
      const note = (last.notes as Record<string, Loose>).approval;
      expect(note).toMatchObject({ id, state: 'redeemed' });
      expect(note.votes).toEqual([
        {
          by: 'bob',
          decision: 'approve',
          comment: 'release notes read',
          at: expect.stringMatching(/^\d{4}-/),
        },
      ]);
      expect(a.events.map((e) => [e.action, e.by, e.detail?.reason ?? e.detail?.comment])).toEqual([
        // The new request is told first, so reviewers can hear of it (the console, webhooks).
        ['requested', 'alice', 'release 81'],
        ['vote_refused', 'alice', 'self_approval'],
        ['approve', 'bob', 'release notes read'],
      ]);
    } finally {
      await a.endpoint.close();
      await a.store.close();
    }
  });

  it('an effect that changed after approval was requested is refused at redemption', async () => {
    const a = await audited();
    try {
      facts.release = 81;
      const first = await a.call();
      const id = new URL(first.inputRequests.approval.params.url).pathname.split('/')[3]!;
      expect((await a.vote('bob-token', id, 'approve', 'for 81')).status).toBe(200);
      facts.release = 82;
      const done = await a.call({
        requestState: first.requestState,
        inputResponses: { approval: { action: 'accept' } },
      });
      expect(done.isError).toBe(true);
      expect(done.content[0].text).toContain(
        'refused: what this call would do changed after approval was requested',
      );
      expect((a.rounds.at(-1)!.notes as Record<string, Loose>).approval).toEqual({
        id,
        refused: 'effect_changed',
      });
    } finally {
      facts.release = 81;
      await a.endpoint.close();
      await a.store.close();
    }
  });

  it('a denial is on the record of the round it ends', async () => {
    const a = await audited();
    try {
      const first = await a.call();
      const id = new URL(first.inputRequests.approval.params.url).pathname.split('/')[3]!;
      await a.vote('carol-token', id, 'deny', 'freeze week');
      await a.call({ requestState: first.requestState, inputResponses: { approval: { action: 'accept' } } });
      const note = (a.rounds.at(-1)!.notes as Record<string, Loose>).approval;
      expect(note).toMatchObject({
        id,
        state: 'denied',
        votes: [{ by: 'carol', decision: 'deny', comment: 'freeze week' }],
      });
    } finally {
      await a.endpoint.close();
      await a.store.close();
    }
  });
});

describe('TOTP lockout back-off', () => {
  it('doubles per lockout within a day and stops at the cap', async () => {
    let now = 1_000_000_000_000;
    const store = new MemoryStore({ now: () => now });
    const check = new TotpCheck(
      store,
      { secretOf: () => 'JBSWY3DPEHPK3PXP' },
      {
        maxFailures: 2,
        lockoutMs: 60_000,
        maxLockoutMs: 300_000,
        now: () => now,
      },
    );
    const locks: number[] = [];
    for (let lockout = 0; lockout < 5; lockout++) {
      await check.check('alice', 'abc');
      const r = await check.check('alice', 'abc');
      expect(r).toMatchObject({ ok: false, reason: 'locked' });
      locks.push((r as { retryAfterMs: number }).retryAfterMs);
      expect(await check.lockedFor('alice')).toBe(locks.at(-1));
      now += locks.at(-1)!;
    }
    expect(locks).toEqual([60_000, 120_000, 240_000, 300_000, 300_000]);
    await store.close();
  });
});
