// Two instances on one Redis: a caller whose check is held on instance A is woken at once when the person acts on
// instance B (Redis pub/sub), not when A's hold runs out. The hold here is 120 s, twice the test's own time limit,
// so only the wake-up can end it.
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { RedisStore } from '../../src/stores/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { TestRedis } from '../helpers/redis-server.js';
import { observedControls } from './observed.js';

const HOLD_MS = 120_000;
let redis: TestRedis;

beforeAll(async () => {
  redis = await TestRedis.start();
});
afterAll(async () => {
  await redis?.stop();
});

/** Two instances: one state keyring, one Redis (each its own connection), one TOTP file. */
async function fleetOfTwo() {
  const stateKeys = generateKeySpec();
  const a = await observedControls({
    pendingWaitMs: HOLD_MS,
    stateKeys,
    store: await RedisStore.connect(redis.url),
  });
  const b = await observedControls({
    pendingWaitMs: HOLD_MS,
    stateKeys,
    store: await RedisStore.connect(redis.url),
    totpFile: a.totpFile,
  });
  return { a, b };
}

describe('a held check is woken by a person acting on another instance', () => {
  it("approval: held on A, approved through B's API, A's round completes at once", async () => {
    const { a, b } = await fleetOfTwo();
    const first = await a.call('deploy');
    const id = new URL(first.inputRequests.approval.params.url).pathname.split('/')[3]!;
    const holding = a.next((e) => e.action === 'waiting' && e.id === id);
    const retry = a.call('deploy', {
      requestState: first.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(await holding).toMatchObject({ control: 'approval', detail: { waitMs: HOLD_MS } });
    const vote = await fetch(`${b.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'from B' }),
    });
    expect(vote.status).toBe(200);
    expect((await retry).content[0].text).toBe('deployed');
    expect(b.events.map((e) => e.action)).toContain('approve');
    expect(a.events.map((e) => e.action)).not.toContain('approve');
    expect(a.rounds.map((r) => [r.round, r.outcome])).toEqual([
      [0, 'input_required'],
      [1, 'complete'],
    ]);
  });

  it("step-up: held on A, the code entered on B's page, A's round continues at once", async () => {
    const { a, b } = await fleetOfTwo();
    const { secret } = enrolTotp(a.totpFile, 'alice');
    const first = await a.call('recovery');
    const onA = new URL(first.inputRequests.step_up.params.url as string);
    const holding = a.next((e) => e.action === 'waiting');
    const retry = a.call('recovery', {
      requestState: first.requestState,
      inputResponses: { step_up: { action: 'accept' } },
    });
    expect(await holding).toMatchObject({ control: 'step_up' });
    const onB = `${b.origin}${onA.pathname}`;
    const alice = await sessionCookie(b.origin, 'alice-token');
    const { csrf } = hiddenFields((await getPage(onB, alice)).html);
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(onB, alice, { csrf: csrf!, code }, b.origin)).html).toContain('Confirmed');
    expect((await retry).content[0].text).toBe('codes');
  });
});
