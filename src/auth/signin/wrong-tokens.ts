// Wrong development tokens, counted in fixed windows: a process on this machine that guesses tokens at the sign-in
// page gets a few tries a minute, then waits, whichever token it sends next (else a right guess would show).

export const DEV_SIGNIN_LIMITS = Object.freeze({
  /** A development token is a short random string; anything longer is not one, and is not hashed. */
  maxTokenChars: 1024,
  /** Wrong tokens allowed in one window, for every caller together (all of them are on this machine). */
  wrongPerWindow: 10,
  windowMs: 60_000,
});

export class WrongTokenCount {
  private windowStart = 0;
  private wrong = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Whole seconds until sign-in is tried again, or 0 when a try may be made now. */
  waitSeconds(): number {
    const now = this.now();
    if (now - this.windowStart >= DEV_SIGNIN_LIMITS.windowMs) {
      this.windowStart = now;
      this.wrong = 0;
    }
    if (this.wrong < DEV_SIGNIN_LIMITS.wrongPerWindow) return 0;
    return Math.max(1, Math.ceil((this.windowStart + DEV_SIGNIN_LIMITS.windowMs - now) / 1000));
  }

  /** One more wrong token in the current window. */
  record(): void {
    this.wrong++;
  }
}
