// The two ways egress fails: the operator's config cannot work (found at start, names what to fix), or the
// credentials could not be obtained for this caller (found per request, safe to show that caller as it is).
import { MrtrError } from '../../protocol/index.js';
import { GatewayConfigError } from '../config-errors.js';

// An upstream's credentials config that cannot work is the config's error like any other: one class, one code.
export { GatewayConfigError };

/** Why a caller's upstream credentials could not be obtained, for the log and for branching. */
export type EgressRefusalReason =
  /** The request carried no bearer token to exchange (a gateway without bearer auth, or a stdio caller). */
  | 'no_subject_token'
  /** The issuer answered the exchange with an OAuth error (`oauthError` says which). */
  | 'exchange_refused'
  /** The issuer could not be reached, or its metadata could not be read. */
  | 'issuer_unavailable'
  /** The issuer answered with something that is not a usable access token. */
  | 'bad_response';

const SHOWN = "the upstream's credentials could not be obtained for you";

/**
 * The message is meant for the caller: a fixed sentence plus, at most, the issuer's OAuth `error` code (a short
 * token from RFC 6749's charset, checked). Never the issuer's body, its description, an URL or either token; the
 * operator's detail is in `cause`, which holds none of those either.
 */
export class EgressRefused extends MrtrError {
  override readonly name = 'EgressRefused';
  declare readonly code: 'ERR_GATEWAY_EGRESS';
  readonly reason: EgressRefusalReason;
  /** The issuer's OAuth `error` code (`invalid_grant`, …) when it refused the exchange. */
  readonly oauthError: string | undefined;

  constructor(
    reason: EgressRefusalReason,
    detail: { oauthError?: string; hint?: string; cause?: unknown } = {},
  ) {
    const shown = [
      detail.oauthError === undefined ? undefined : `the issuer answered ${detail.oauthError}`,
      detail.hint,
    ].filter((s) => s !== undefined);
    super(
      'ERR_GATEWAY_EGRESS',
      shown.length > 0 ? `${SHOWN} (${shown.join('; ')})` : SHOWN,
      detail.cause === undefined ? undefined : { cause: detail.cause },
    );
    this.reason = reason;
    this.oauthError = detail.oauthError;
  }
}

/** The operator's detail of a refusal, kept as its `cause` and never shown to the caller: the message is the detail. */
export class EgressDetail extends EgressRefused {
  constructor(reason: EgressRefusalReason, detail: string) {
    super(reason);
    this.message = detail;
  }
}

/**
 * The issuer's `error`, when it looks like an error code (`invalid_grant`, `urn:…:unauthorized`): RFC 6749 allows
 * more (spaces, quotes), but a value like that is the issuer echoing something, perhaps the token: not shown.
 */
export function oauthErrorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(value) ? value : undefined;
}
