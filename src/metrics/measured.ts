// What the metrics read of a round, a gateway upstream call and a withheld tool: structurally the server's RoundEvent
// and the gateway's observer events, so this room imports neither.

/** One MRTR round as it ended (the server's RoundEvent has these members and more). */
export interface MeasuredRound {
  readonly method: string;
  readonly target: string | undefined;
  readonly round: number;
  readonly outcome: string;
  readonly reason: string | undefined;
  readonly decidedBy: string | undefined;
  readonly inputRequests: Readonly<Record<string, unknown>> | undefined;
  readonly notes: Readonly<Record<string, unknown>> | undefined;
  readonly durationMs: number;
  /** The HTTP status a refusal asked for, when not the one its JSON-RPC code implies (429, 503). */
  readonly httpStatus?: number | undefined;
}

/** One round of a gateway call sent to its upstream. */
export interface MeasuredUpstreamRound {
  readonly upstream: string;
  readonly durationMs: number;
  readonly failed: boolean;
}
