// Who holds a 2025 upstream call between rounds: the caller, so a handle presented by anyone else is refused even
// when every caller shares one upstream client and one credential.
import type { RequestContext } from '../server/index.js';

export function holderOf(ctx: Pick<RequestContext, 'principal'>): string {
  const p = ctx.principal;
  return p ? `${p.issuer ?? ''}\n${p.subject}` : '';
}
