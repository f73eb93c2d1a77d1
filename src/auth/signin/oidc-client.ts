// Signing a person in with the same issuer that mints the access tokens: authorization code + PKCE + state + nonce
// (openid-client), so the browser user's `sub` can be compared with a flow's principal.
import type * as OpenIdClient from 'openid-client';
import { rolesOf } from '../claims.js';
import { AUTH_DEFAULTS } from '../defaults.js';

export interface OidcSignInOptions {
  issuer: string;
  clientId: string;
  /** A confidential client's secret (client_secret_basic); without one the client is public (PKCE only). */
  clientSecret?: string;
  /** Default `openid profile`. */
  scope?: string;
  /** The ID-token claim holding roles (default `roles`). */
  rolesClaim?: string;
}

// openid-client is imported when a sign-in starts (as the Redis client is by its store): a server without OpenID
// sign-in never carries it, and a failed import is tried again with the next sign-in.
const isLoopback = (url: URL) =>
  ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) || url.hostname.startsWith('127.');

export class OidcSignIn {
  private config: Promise<OpenIdClient.Configuration> | undefined;
  constructor(readonly options: OidcSignInOptions) {}

  /** The issuer's configuration, discovered once (again after a failure). Plain http only for a loopback issuer. */
  private configuration(): Promise<OpenIdClient.Configuration> {
    if (!this.config) {
      const issuer = new URL(this.options.issuer);
      this.config = import('openid-client')
        .then((oidc) =>
          oidc.discovery(
            issuer,
            this.options.clientId,
            undefined,
            this.options.clientSecret ? oidc.ClientSecretBasic(this.options.clientSecret) : oidc.None(),
            issuer.protocol === 'http:' && isLoopback(issuer)
              ? { execute: [oidc.allowInsecureRequests] }
              : {},
          ),
        )
        .catch((error: unknown) => {
          this.config = undefined;
          throw error;
        });
    }
    return this.config;
  }

  /** Where to send the browser, and what the callback must find again (kept in a signed cookie). */
  async start(redirectUri: string): Promise<{ url: string; verifier: string; state: string; nonce: string }> {
    const config = await this.configuration();
    const oidc = await import('openid-client');
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.options.scope ?? 'openid profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, verifier, state, nonce };
  }

  /** Redeem the callback: the code for tokens, checking state, nonce, issuer (RFC 9207) and the ID token. */
  async finish(
    callbackUrl: URL,
    expected: { verifier: string; state: string; nonce: string },
  ): Promise<{ subject: string; issuer: string; name?: string; roles: string[] }> {
    const config = await this.configuration();
    const oidc = await import('openid-client');
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: expected.verifier,
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    return {
      subject: claims.sub,
      issuer: claims.iss,
      ...(typeof claims.name === 'string' ? { name: claims.name } : {}),
      // Read as access tokens' roles are, so a person has the same roles on the pages as in their calls.
      roles: rolesOf(claims, this.options.rolesClaim ?? AUTH_DEFAULTS.rolesClaim),
    };
  }
}
