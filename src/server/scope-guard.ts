// requiredScopes, enforced per round: a guard that screens every tools/call, prompts/get and resources/read before
// its state opens, and answers 403 insufficient_scope naming every scope the operation needs (one challenge, not one
// per retry: authorization/index.mdx, Scope Challenge Handling).
import { type BearerAuth, bearerChallenge, insufficientScope, missingScopes } from '../auth/index.js';
import { ErrorCode, RoundRefused } from '../protocol/index.js';
import type { RoundGuard, ScreenedRound } from './round/guard.js';

/** `authOf` is read per round: the edge's auth is known only once the server is served (listen, mcpHttp). */
export function scopeGuard(authOf: () => BearerAuth | undefined): RoundGuard {
  return {
    name: 'required-scopes',
    screen(round: ScreenedRound): void {
      const required = round.requiredScopes;
      if (required.length === 0) return;
      const auth = authOf();
      const missing = auth
        ? auth.missingScopes(round.principal, required)
        : missingScopes(round.principal?.scopes ?? [], required);
      if (missing.length === 0) return;
      const refusal = insufficientScope(required, missing);
      throw new RoundRefused('insufficient_scope', {
        code: ErrorCode.InvalidRequest,
        message: refusal.message,
        data: { requiredScopes: [...required], missingScopes: missing },
        httpStatus: 403,
        httpHeaders: {
          'www-authenticate': auth
            ? auth.challenge(refusal)
            : bearerChallenge({ resourceMetadata: undefined, scope: required, refusal }),
        },
      });
    },
  };
}
