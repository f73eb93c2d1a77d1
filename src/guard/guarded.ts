// What the guards in this room read of a round. Structural on purpose: the server's GuardedRound satisfies it, and
// this room stays below the server (guard → stores, protocol), as the architecture's arrows say.

/** The caller, as far as a guard needs it: counters and records are kept per principal. */
export interface GuardPrincipal {
  readonly subject: string;
  readonly issuer?: string | undefined;
}

/** A round before its requestState is opened. */
export interface ScreenedRound {
  readonly requestId: string | number;
  readonly method: string;
  readonly target: string;
  readonly principal: GuardPrincipal | undefined;
}

/** A round whose requestState opened (or a first call, which has none). */
export interface OpenedRound extends ScreenedRound {
  /** input_required rounds before this one (0 on a first call). */
  readonly round: number;
  readonly flowId: string | undefined;
  /** SHA-256 of the presented requestState; undefined on a first call. */
  readonly stateDigest: string | undefined;
  /** When the presented requestState expires (ms since the epoch). */
  readonly stateExpiresAt: number | undefined;
  /** Canonical digest of the accepted inputResponses. */
  readonly answersDigest: string;
}
