// A client that comes back at once to check a pending approval or step-up (the Python SDK retries without a pause
// and stops after 10 rounds) is held: the round waits for the person's action, which ends the wait, instead of
// answering "still waiting" at once. The tests act only once the control reports the hold (the `waiting` event).
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { MemoryStore, type StoredEntry } from '../../src/stores/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { observedControls } from './observed.js';

describe('a check of a pending control waits for the person', () => {
  it('approval: the retry is held until a reviewer decides, then completes in the same round', async () => {
    const s = await observedControls({ pendingWaitMs: 60_000 });
    const first = await s.call('deploy');
    const url = new URL(first.inputRequests.approval.params.url);
    const id = url.pathname.split('/')[3]!;
    const holding = s.next((e) => e.action === 'waiting' && e.id === id);
    const retry = s.call('deploy', {
      requestState: first.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(await holding).toMatchObject({ control: 'approval', detail: { waitMs: 60_000 } });
    const vote = await fetch(`${url.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(vote.status).toBe(200);
    const done = await retry;
    expect(done.content[0].text).toBe('deployed');
    expect(s.rounds.map((r) => [r.round, r.outcome])).toEqual([
      [0, 'input_required'],
      [1, 'complete'],
    ]);
  });

  it('approval: a decision recorded after the retry read "pending" but before its hold began still wakes it', async () => {
    // The store's first read of the request during the retry answers "pending", and the vote lands right after it:
    // its wake-up finds nobody holding yet. The hold must read again once it listens, or it waits its full 120 s.
    const store = new MemoryStore();
    let armed: { key: string; afterRead: () => Promise<void> } | undefined;
    const get = store.get.bind(store);
    store.get = async (key: string): Promise<StoredEntry | undefined> => {
      const entry = await get(key);
      const hook = armed;
      if (hook && key === hook.key) {
        armed = undefined;
        await hook.afterRead();
      }
      return entry;
    };
    const s = await observedControls({ pendingWaitMs: 120_000, store });
    const first = await s.call('deploy');
    const url = new URL(first.inputRequests.approval.params.url);
    const id = url.pathname.split('/')[3]!;
    const voted: number[] = [];
    armed = {
      key: `mrtr/approval/${id}`,
      afterRead: async () => {
        const vote = await fetch(`${url.origin}/mrtr/approvals/${id}`, {
          method: 'POST',
          headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'approve' }),
        });
        voted.push(vote.status);
      },
    };
    const done = await s.call('deploy', {
      requestState: first.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(voted).toEqual([200]);
    expect(done.content[0].text).toBe('deployed');
    expect(s.events.some((e) => e.action === 'waiting')).toBe(true);
  });

  it('step-up: the retry is held until the code is entered on the page, then continues', async () => {
    const s = await observedControls({ pendingWaitMs: 60_000 });
    const { secret } = enrolTotp(s.totpFile, 'alice');
    const first = await s.call('recovery');
    const url = first.inputRequests.step_up.params.url as string;
    const holding = s.next((e) => e.action === 'waiting');
    const retry = s.call('recovery', {
      requestState: first.requestState,
      inputResponses: { step_up: { action: 'accept' } },
    });
    expect(await holding).toMatchObject({ control: 'step_up' });
    const alice = await sessionCookie(s.origin, 'alice-token');
    const { csrf } = hiddenFields((await getPage(url, alice)).html);
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(url, alice, { csrf: csrf!, code }, s.origin)).html).toContain('Confirmed');
    expect((await retry).content[0].text).toBe('codes');
  });

  it('the first question is not held (the person has not seen the link yet); a decline is not held either', async () => {
    const s = await observedControls({ pendingWaitMs: 60_000 });
    const first = await s.call('deploy');
    expect(first.resultType).toBe('input_required');
    const withdrawn = await s.call('deploy', {
      requestState: first.requestState,
      inputResponses: { approval: { action: 'decline' } },
    });
    expect(withdrawn.content[0].text).toBe('approval request withdrawn by the requester');
    expect(s.events.some((e) => e.action === 'waiting')).toBe(false);
  });

  it('pendingWaitMs outside 0..120000 is refused with the option named', async () => {
    await expect(observedControls({ pendingWaitMs: -1 })).rejects.toThrow(
      'HumanControls: pendingWaitMs must be a whole number of ms from 0 to 120000',
    );
  });
});
