// A second factor's lockout must bound how many codes are *checked*, not just how many refusals are counted: codes
// posted all at once must not each be compared before the first failure is recorded, or five allowed failures
// become as many guesses as the attacker can send in one burst.
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { TotpCheck } from '../../src/controls/index.js';
import { MemoryStore } from '../../src/stores/index.js';

const SECRET = 'JBSWY3DPEHPK3PXP';

describe('TOTP codes sent in one burst', () => {
  it('the right code after nine wrong ones sent at the same time is refused: the factor locked after five', async () => {
    const now = 1_000_000_000_000;
    const store = new MemoryStore({ now: () => now });
    const check = new TotpCheck(store, { secretOf: () => SECRET }, { maxFailures: 5, now: () => now });
    const right = new TOTP({ secret: SECRET, algorithm: 'SHA1', digits: 6, period: 30 }).generate({
      timestamp: now,
    });
    const near = [-30_000, 0, 30_000].map((d) =>
      new TOTP({ secret: SECRET, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: now + d }),
    );
    const wrong = [
      '000000',
      '111111',
      '222222',
      '333333',
      '444444',
      '555555',
      '666666',
      '777777',
      '888888',
      '999999',
    ]
      .filter((c) => !near.includes(c))
      .slice(0, 9);
    expect(wrong).toHaveLength(9);
    const results = await Promise.all([...wrong, right].map((code) => check.check('alice', code)));
    expect(results.filter((r) => r.ok === false && r.reason === 'wrong_code')).toHaveLength(4);
    expect(results.at(-1)).toMatchObject({ ok: false, reason: 'locked' });
    expect(await check.lockedFor('alice')).toBeGreaterThan(0);
    await store.close();
  });

  it('a right code still works after a few wrong ones, and resets the count', async () => {
    let now = 1_000_000_000_000;
    const store = new MemoryStore({ now: () => now });
    const check = new TotpCheck(store, { secretOf: () => SECRET }, { maxFailures: 5, now: () => now });
    const totp = new TOTP({ secret: SECRET, algorithm: 'SHA1', digits: 6, period: 30 });
    for (let i = 0; i < 4; i++)
      expect(await check.check('alice', 'abc')).toMatchObject({ reason: 'malformed' });
    expect(await check.check('alice', totp.generate({ timestamp: now }))).toEqual({ ok: true });
    now += 90_000;
    for (let i = 0; i < 4; i++)
      expect(await check.check('alice', 'abc')).toMatchObject({ reason: 'malformed' });
    expect(await check.check('alice', totp.generate({ timestamp: now }))).toEqual({ ok: true });
    await store.close();
  });
});
