// Checking a TOTP code (RFC 6238: SHA-1, 6 digits, 30 s, one step of clock drift either way) with the rules a
// second factor needs: a code is used once (per person and time step, in the shared store, so a second instance
// refuses it too); wrong codes are counted per person, and past the limit the factor locks, for longer each time.
import { TOTP } from 'otpauth';
import type { SharedStore } from '../stores/index.js';
import { CONTROLS_DEFAULTS } from './defaults.js';
import type { TotpSecrets } from './totp-secrets.js';

export type CodeCheck =
  | { ok: true }
  | {
      ok: false;
      reason: 'not_enrolled' | 'locked' | 'wrong_code' | 'code_reused' | 'malformed';
      retryAfterMs?: number;
    };

export interface TotpCheckOptions {
  maxFailures?: number;
  failureWindowMs?: number;
  lockoutMs?: number;
  maxLockoutMs?: number;
  now?: () => number;
}

const PERIOD_MS = 30_000;

export class TotpCheck {
  private readonly o: Required<TotpCheckOptions>;
  constructor(
    private readonly store: SharedStore,
    private readonly secrets: TotpSecrets,
    options: TotpCheckOptions = {},
  ) {
    this.o = {
      maxFailures: options.maxFailures ?? CONTROLS_DEFAULTS.maxCodeFailures,
      failureWindowMs: options.failureWindowMs ?? CONTROLS_DEFAULTS.failureWindowMs,
      lockoutMs: options.lockoutMs ?? CONTROLS_DEFAULTS.lockoutMs,
      maxLockoutMs: options.maxLockoutMs ?? CONTROLS_DEFAULTS.maxLockoutMs,
      now: options.now ?? Date.now,
    };
  }

  async enrolled(subject: string): Promise<boolean> {
    return (await this.secrets.secretOf(subject)) !== undefined;
  }

  /** How long `subject` is locked out for, or 0. */
  async lockedFor(subject: string): Promise<number> {
    const lock = await this.store.get(`mrtr/totp-lock/${subject}`);
    if (!lock) return 0;
    return Math.max(0, Number(lock.value) - this.o.now());
  }

  async check(subject: string, code: string): Promise<CodeCheck> {
    const locked = await this.lockedFor(subject);
    if (locked > 0) return { ok: false, reason: 'locked', retryAfterMs: locked };
    const secret = await this.secrets.secretOf(subject);
    if (secret === undefined) return { ok: false, reason: 'not_enrolled' };
    // Every attempt is counted before its code is compared: codes sent in one burst all pass the lock check above
    // at once, and counting only after the comparison would let each of them be tried.
    const failKey = `mrtr/totp-fail/${subject}`;
    const attempt = await this.store.increment(failKey, this.o.failureWindowMs);
    if (attempt > this.o.maxFailures) return this.failed(subject, attempt, 'wrong_code');
    if (!/^\d{6}$/.test(code)) return this.failed(subject, attempt, 'malformed');
    const now = this.o.now();
    const totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 });
    const delta = totp.validate({ token: code, timestamp: now, window: 1 });
    if (delta === null) return this.failed(subject, attempt, 'wrong_code');
    const step = Math.floor(now / PERIOD_MS) + delta;
    // Single use: the first to present this step's code wins, on every instance sharing the store.
    if (!(await this.store.create(`mrtr/totp-used/${subject}/${step}`, '1', 3 * PERIOD_MS)))
      return this.failed(subject, attempt, 'code_reused');
    // The right code: the attempts before it were the person's own typos, the count starts again.
    const counter = await this.store.get(failKey);
    if (counter) await this.store.remove(failKey, counter.version);
    return { ok: true };
  }

  private async failed(
    subject: string,
    failures: number,
    reason: 'wrong_code' | 'code_reused' | 'malformed',
  ): Promise<CodeCheck> {
    if (failures < this.o.maxFailures) return { ok: false, reason };
    // Attempts past the limit raced the one that locks (their codes were never compared): locked too, and no
    // second lockout, so a burst does not double the back-off.
    if (failures > this.o.maxFailures) {
      const locked = await this.lockedFor(subject);
      return { ok: false, reason: 'locked', retryAfterMs: locked > 0 ? locked : this.o.lockoutMs };
    }
    // Back-off: each lockout within a day lasts twice as long as the one before, up to the cap.
    const lockouts = await this.store.increment(`mrtr/totp-lockouts/${subject}`, 24 * 60 * 60 * 1000);
    const lockMs = Math.min(this.o.maxLockoutMs, this.o.lockoutMs * 2 ** (lockouts - 1));
    const until = this.o.now() + lockMs;
    const key = `mrtr/totp-lock/${subject}`;
    const existing = await this.store.get(key);
    if (existing) await this.store.replace(key, existing.version, String(until), lockMs);
    else await this.store.create(key, String(until), lockMs);
    // A new window of attempts after the lock: the failure counter starts again.
    const counter = await this.store.get(`mrtr/totp-fail/${subject}`);
    if (counter) await this.store.remove(`mrtr/totp-fail/${subject}`, counter.version);
    return { ok: false, reason: 'locked', retryAfterMs: lockMs };
  }
}
