// What the gateway tells whoever watches it beyond the rounds (metrics, the audit trail): each round sent to an
// upstream, and each tool definition that changed since it was pinned. A watcher's failure never fails a call.

/** One round of a call sent to an upstream, as it ended. */
export interface UpstreamRoundEvent {
  readonly upstream: string;
  /** The tool's name upstream. */
  readonly tool: string;
  readonly durationMs: number;
  /** True when the upstream could not be reached or answered with an error. */
  readonly failed: boolean;
}

/** A pinned tool listed with another definition: withheld from every caller until an admin accepts it. */
export interface DefinitionChange {
  readonly upstream: string;
  readonly tool: string;
  /** The name callers see (`<upstream>__<tool>`). */
  readonly name: string;
  /** The pinned definition's digest and the one listed now. */
  readonly pinned: string;
  readonly seen: string;
  /** What changed, one line each (as `mrtr gateway pin --diff` prints). */
  readonly changes: readonly string[];
  /** ms since the epoch when the listing saw it. */
  readonly at: number;
}

export interface GatewayObserver {
  upstreamRound?(event: UpstreamRoundEvent): void;
  /** Told once per new definition seen (not at every listing while it stays withheld). */
  definitionChanged?(change: DefinitionChange): void | Promise<void>;
}
