// What the gateway presents to an upstream, per upstream: nothing, one secret of its own, or a token the caller's
// issuer mints for that upstream from the caller's own token (RFC 8693). Never the caller's token itself: the MCP
// spec forbids passing it through (authorization/index.mdx, "Token Passthrough").

/** One upstream's `credentials` entry, as the gateway's config parser gives it. */
export type EgressConfig =
  | { type: 'none' }
  /** Exactly one of `env` (a variable's name) or `file` (a path): the secret sent as the Bearer token. */
  | { type: 'static'; env?: string; file?: string }
  | {
      type: 'token-exchange';
      /** The issuer of the callers' tokens, which also mints the upstream's (its metadata names the token endpoint). */
      issuer: string;
      /** The gateway's own client at that issuer. */
      clientId: string;
      /** At most one: where the gateway's client secret is (none: a public client). */
      clientSecretEnv?: string;
      clientSecretFile?: string;
      /** What the exchanged token is for (RFC 8693 `audience`, RFC 8707 `resource`) and may do (`scope`). */
      audience?: string;
      resource?: string;
      scope?: string;
    }
  /**
   * Each person connects their own account at the upstream's authorization server, once (the gateway is its OAuth
   * client); the person's own token goes upstream. Kept in the gateway's vault, never seen by the MCP client.
   */
  | {
      type: 'oauth';
      /** The authorization server's issuer; absent: discovered from the upstream's Protected Resource Metadata. */
      issuer?: string;
      /** The gateway's client at that authorization server. */
      clientId: string;
      /** Where the gateway's client secret is, read at start (absent: a public client, PKCE alone). */
      clientSecret?: { env: string } | { file: string };
      /** The scopes asked for when a person connects. */
      scopes: readonly string[];
    };

/** Who an upstream request is made for. */
export interface EgressCaller {
  readonly subject: string;
  readonly issuer?: string;
  /** The caller's own verified bearer token: what token exchange trades in. Never sent upstream. */
  readonly subjectToken?: string;
}

export interface Egress {
  /** True when the token depends on the caller (token exchange): each caller needs an upstream client of its own. */
  readonly perCaller: boolean;
  /** The Bearer token for an upstream request made for `caller`; undefined when the upstream takes none. */
  tokenFor(caller: EgressCaller, signal?: AbortSignal): Promise<string | undefined>;
}
