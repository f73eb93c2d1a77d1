// A round refused by the pipeline or a guard: one error type that carries both what the client is told and the
// precise reason that only the log and the audit trail get to see.
import { ErrorCode, McpError } from './errors.js';

/** Fixed wire message for every state failure: the precise reason goes to the log, never to the client. */
export const INVALID_REQUEST_STATE = 'Invalid params: invalid requestState';

export class RoundRefused extends McpError {
  override readonly name = 'RoundRefused';
  /**
   * Stable machine-readable reason (`expired`, `wrong_principal`, `replayed`, `stale_round`, …). Never sent to the
   * client: it would tell a prober which check it failed.
   */
  readonly reason: string;
  /** HTTP status for the answer when it is not the one the JSON-RPC code implies (e.g. 429 with a rate limit). */
  readonly httpStatus: number | undefined;
  /** Extra headers for an HTTP answer (e.g. Retry-After). */
  readonly httpHeaders: Readonly<Record<string, string>> | undefined;
  /** The guard that refused, filled in by the pipeline (undefined for the codec's refusals). */
  refusedBy: string | undefined;

  constructor(
    reason: string,
    wire: {
      code?: number;
      message?: string;
      data?: unknown;
      httpStatus?: number;
      httpHeaders?: Record<string, string>;
    } = {},
    /** What went wrong underneath (a store's error): for the log, never for the client. */
    options?: { cause?: unknown },
  ) {
    super(wire.code ?? ErrorCode.InvalidParams, wire.message ?? INVALID_REQUEST_STATE, wire.data);
    if (options && 'cause' in options) this.cause = options.cause;
    this.reason = reason;
    this.httpStatus = wire.httpStatus;
    this.httpHeaders = wire.httpHeaders;
  }
}

/** The refusal every requestState failure gets: same code and message whatever the reason. */
export const invalidRequestState = (reason: string): RoundRefused => new RoundRefused(reason);
