// What the connections tell their operator: who connected, used, refreshed or lost which connection, and when.
// Their own type, not the controls' ControlEvent: the console's approval views and approvers' webhooks read those,
// and a person connecting an account is no reviewer's business. Never a token, a code or a state in any of them.

export type ConnectionAction =
  /** The person finished the connect page: the vault holds their grant. */
  | 'connected'
  /** A round or a gateway's egress took the person's access token. */
  | 'used'
  /** The grant was refreshed before it expired. */
  | 'refreshed'
  /**
   * The third party no longer takes the grant (invalid_grant on refresh), or refused it (a 401: told once it was
   * revoked at the authorization server too, `detail.revokedAtIssuer`): dropped, asked again next time.
   */
  | 'revoked'
  /** The person disconnected it on their page (revoked at the authorization server when it offers revocation). */
  | 'disconnected'
  /** The authorization server refused or its answer failed a check: the call that asked ends with the reason. */
  | 'refused'
  /** A client that came back to check holds for the person (an operator sees it; a test knows the hold began). */
  | 'waiting'
  /** A signed-in person opened a connect link or callback minted for someone else: nothing was done. */
  | 'wrong_person'
  /** A page failed for a reason of the server's own (answered 500). */
  | 'page_failed'
  /** The store's channel failed: holds on other instances end at their limit. */
  | 'channel_failed';

export interface ConnectionEvent {
  /** The connection's name (`-` for a failure that concerns none in particular). */
  readonly connection: string;
  readonly action: ConnectionAction;
  /** The connect record's id, when a question or a page is concerned. */
  readonly id?: string;
  /** The subject of the person concerned. */
  readonly by?: string;
  /** Who vouches for `by` (the sign-in's issuer): one subject may name different people at different issuers. */
  readonly byIssuer?: string;
  readonly at: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The connections' defaults, each with its reason. */
export const CONNECTIONS_DEFAULTS = Object.freeze({
  /** A connect link is opened within minutes of the question, or the next round asks with a new one. */
  connectTtlMs: 15 * 60 * 1000,
  /** Signing in and consenting at the third party takes minutes; an older authorization request is stale. */
  authorizationTtlMs: 10 * 60 * 1000,
  /** Authorization requests one person keeps for one connection (tabs, reloads); past it their oldest is dropped. */
  authorizationsPerPerson: 5,
  /** Refresh this long before expiry, so a token does not lapse between the check and the third party's reading. */
  refreshSkewMs: 60 * 1000,
  /** A revocation after the third party refused a token runs in the background, for at most this long. */
  revokeTimeoutMs: 10 * 1000,
  /** As the human controls: below the 30 s read timeouts common in HTTP clients. */
  pendingWaitMs: 20 * 1000,
});
