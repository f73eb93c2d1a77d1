// The caller's verified token, for token exchange, without putting it on the principal: guards, audit and sealed
// state see the principal, and none of them may see a token. The verifier is wrapped so that each verification
// answers a principal object of its own, and that object is remembered with its token in a WeakMap. The server hands
// the very object BearerAuth returned to the handler as `ctx.principal` (http.ts → HttpExchange → the round's env,
// never copied), so `tokenOf(ctx.principal)` is the token of the request being handled; the entry goes when the
// principal does.
import type { AuthPrincipal, TokenVerifier } from '../../auth/index.js';

export interface RememberingVerifier {
  /** Give this to BearerAuth in place of the verifier it wraps. */
  readonly verifier: TokenVerifier;
  /** The bearer token `principal` was verified from; undefined for a principal this verifier did not make. */
  tokenOf(principal: object | undefined): string | undefined;
}

export function rememberingVerifier(inner: TokenVerifier): RememberingVerifier {
  const tokens = new WeakMap<object, string>();
  // A fresh object per verification: a verifier may answer one shared principal for a remembered token (JwtVerifier)
  // or for several tokens, and the map must give back this request's token, not the last one verified.
  const remember = (principal: AuthPrincipal, token: string): AuthPrincipal => {
    if (principal === null || typeof principal !== 'object') return principal; // BearerAuth refuses it
    const own = { ...principal };
    tokens.set(own, token);
    return own;
  };
  const verifier: TokenVerifier = {
    get authorizationServers() {
      return inner.authorizationServers;
    },
    verify(token) {
      const verified = inner.verify(token);
      // Synchronous stays synchronous: BearerAuth's common path costs no promise.
      return verified instanceof Promise
        ? verified.then((p) => remember(p, token))
        : remember(verified, token);
    },
  };
  return {
    verifier,
    tokenOf: (principal) => (principal === undefined ? undefined : tokens.get(principal)),
  };
}
