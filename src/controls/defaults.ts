// The human controls' defaults, each with its reason.
export const CONTROLS_DEFAULTS = Object.freeze({
  /** A reviewer in another time zone gets a working day to answer; an older request is stale. */
  pendingTtlMs: 24 * 60 * 60 * 1000,
  /** An approved request is redeemed by the requester's next retry; an hour covers a person away from the desk. */
  grantTtlMs: 60 * 60 * 1000,
  /** Four eyes: one other person. */
  approvals: 1,
  denials: 1,
  /** A step-up page is opened within minutes of the question, or the question is asked again with a new link. */
  stepUpTtlMs: 10 * 60 * 1000,
  /** Wrong codes tolerated per person in `failureWindowMs` before the second factor locks. */
  maxCodeFailures: 5,
  failureWindowMs: 15 * 60 * 1000,
  /** The first lockout; each further lockout within a day doubles it. */
  lockoutMs: 60 * 1000,
  maxLockoutMs: 60 * 60 * 1000,
  /**
   * How long a check of a pending step-up or approval waits for the person before answering "still waiting": clients
   * that retry at once (the Python SDK) would otherwise spend their round cap in seconds. Below the 30 s read
   * timeouts common in HTTP clients, so the held request is not given up on.
   */
  pendingWaitMs: 20 * 1000,
  /**
   * Largest effect an approval stores (canonical JSON): a reviewer can read it whole on the review page, and the
   * record stays well under a store value's limit.
   */
  maxEffectBytes: 256 * 1024,
  /** Most requests one inbox lists: an inbox is read by a person. */
  maxListed: 200,
});
