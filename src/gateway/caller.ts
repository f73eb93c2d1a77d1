// The caller as the policy reads it: who (subject, issuer), their roles and scopes. No principal, no caller: an
// anonymous request matches no rule, so it sees and calls nothing through the gateway.
import type { Principal } from '../server/index.js';
import type { PolicyCaller } from './policy/index.js';

export function callerOf(principal: Principal | undefined): PolicyCaller | undefined {
  if (!principal) return undefined;
  return {
    subject: principal.subject,
    issuer: principal.issuer,
    roles: principal.roles ?? [],
    scopes: principal.scopes ?? [],
  };
}
