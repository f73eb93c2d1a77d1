// The connections room's shared words: a connection a server declares (a third-party authorization server it is an
// OAuth client of), the tokens a person's connection holds, and the three parts that meet here — the vault that
// keeps tokens encrypted, the authorization flow that gets them, and the ask that sends a person to connect.
import type { PageRequest, PageResponse } from '../protocol/index.js';

/** One third party a server acts for its users at, declared by the server (or a gateway upstream's credentials). */
export interface ConnectionConfig {
  /** `^[a-z0-9][a-z0-9-]{0,31}$`, unique on the server: what `connections.token(ctx, name)` names. */
  readonly name: string;
  /** Shown to people: "Connect your <label> account" (default: the name). */
  readonly label?: string;
  /** The authorization server's issuer (https, or http on loopback). Absent: discovered from `resource`. */
  readonly issuer?: string;
  /**
   * The protected resource the tokens are for (RFC 8707 `resource`; its Protected Resource Metadata names the
   * authorization server when `issuer` is absent). A gateway sets it to the upstream's URL.
   */
  readonly resource?: string;
  /** The server's client at that authorization server. */
  readonly clientId: string;
  /** Absent: a public client (PKCE alone). */
  readonly clientSecret?: string;
  /** The scopes asked for. */
  readonly scopes: readonly string[];
}

/** Who a connection belongs to: one person, whatever client they call from (the principal's issuer and subject). */
export interface ConnectionOwner {
  readonly issuer: string;
  readonly subject: string;
  readonly name?: string;
}

/** What an authorization server granted a person (kept only in the vault, encrypted). */
export interface TokenGrant {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Epoch ms; absent when the server did not say. */
  readonly expiresAt?: number;
  /** The scopes granted (may be fewer than asked). */
  readonly scopes: readonly string[];
  /** The authorization server's issuer that granted it (RFC 9207 checked). */
  readonly issuer: string;
}

/** A connection as its owner and an admin may see it: never a token. */
export interface ConnectionSummary {
  readonly connection: string;
  readonly issuer: string;
  readonly scopes: readonly string[];
  readonly connectedAt: number;
  readonly refreshedAt?: number;
  readonly lastUsedAt?: number;
  readonly expiresAt?: number;
}

/**
 * Tokens read from the vault. A put or a remove given them applies only if the kept grant's `accessToken` and
 * `refreshToken` both equal these exactly; a missing refresh token matches only a grant without one.
 */
export type HeldTokens = Pick<TokenGrant, 'accessToken' | 'refreshToken'>;

/**
 * Where grants live: encrypted with the server's keyring, in a shared store, bound to owner and connection. A vault
 * of your own must check `replacing` and `holding` atomically (a compare-and-set, not a read then a write), and
 * change nothing, lists and counts included, when they do not match.
 */
export interface TokenVault {
  /** The grant kept for (owner, connection), or undefined (none, or sealed for another binding or a retired key). */
  get(owner: ConnectionOwner, connection: string): Promise<(TokenGrant & ConnectionSummary) | undefined>;
  /**
   * Keep `grant` for (owner, connection), replacing any before; true when written. With `replacing` (a refresh),
   * only while the grant kept holds those tokens: a grant removed meanwhile (the person disconnected) is not
   * brought back, and one replaced meanwhile (another instance refreshed) stays.
   */
  put(
    owner: ConnectionOwner,
    connection: string,
    grant: TokenGrant,
    replacing?: HeldTokens,
  ): Promise<boolean>;
  /**
   * Forget (owner, connection); true only when it removed one. With `holding`, only a grant that holds those
   * tokens: a grant refreshed or connected again meanwhile stays. A grant sealed under a key this instance lacks
   * is never removed here.
   */
  remove(owner: ConnectionOwner, connection: string, holding?: HeldTokens): Promise<boolean>;
  /** The owner's own connections. */
  list(owner: ConnectionOwner): Promise<ConnectionSummary[]>;
  /** How many people hold each connection (the admin's view: counts, never tokens). */
  counts(): Promise<Record<string, number>>;
}

/** One authorization request on its way: kept server-side (in the store) between the start and the callback. */
export interface PendingAuthorization {
  readonly state: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  /** The authorization server's issuer the request went to (the callback's `iss` must match: RFC 9207). */
  readonly issuer: string;
}

/** The OAuth client side of one connection: authorization code with PKCE (S256), refresh, revocation. */
export interface AuthorizationFlow {
  /** Where to send the person's browser, and what to keep for the callback. */
  start(redirectUri: string, signal?: AbortSignal): Promise<{ url: URL; pending: PendingAuthorization }>;
  /** Check the callback (state, iss, error) and trade the code for tokens. Throws ConnectionRefused. */
  finish(callback: URL, pending: PendingAuthorization, signal?: AbortSignal): Promise<TokenGrant>;
  /** Fresh tokens for a refresh token. Throws ConnectionRefused (`invalid_grant`: connect again). */
  refresh(grant: TokenGrant, signal?: AbortSignal): Promise<TokenGrant>;
  /** Tell the authorization server to revoke (RFC 7009) when it offers it; never throws for a server without. */
  revoke(grant: TokenGrant, signal?: AbortSignal): Promise<void>;
}

/** Page routes on the server's listener (the server's `PageRoutes`, as the controls' pages are). */
export interface ConnectionPages {
  handles(pathname: string): boolean;
  handle(req: PageRequest, res: PageResponse): void;
}
