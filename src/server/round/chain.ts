// The round as one list of links, in the order they run. Each link may answer, refuse, ask (in the flow) or call
// next() and see what the rest answered; commit and release are what a guard's link does around next().
// RoundGuards join through their adapter (guard-links.ts): each hook at its place. With no guard, no observer and
// no policy link, the chain is open state → flow, synchronous all the way for a synchronous handler.
import type { AskConnector } from '../context.js';
import type { Logger } from '../environment.js';
import type { RequestStateCodec } from '../request-state.js';
import { auditIntent, describeRound, logRefusals } from './audit-links.js';
import { decided } from './decision-link.js';
import { flowLink, policyLink } from './flow-link.js';
import type { RoundGuard } from './guard.js';
import { admitLinks, askLinks, refusalReporting, screenLinks, stepLedgerLinks } from './guard-links.js';
import type { RoundLink } from './link.js';
import { openState } from './open-link.js';

export interface RoundChainOptions {
  codec: RequestStateCodec;
  logger: Logger;
  maxRounds: number;
  /** Check each result and input request against the official schema before it is sent (development and tests). */
  validateResults: boolean;
  handlerTimeoutMs: number;
  /** How long a guard's promise may take before the round fails closed (a store that hangs). */
  hookTimeoutMs: number;
  guards: readonly RoundGuard[];
  /** Whether rounds are observed (a trace to describe and an intent to record). */
  observed: boolean;
  /** Links in the flow before the handler, at the policy position: they may ask, answer or pass. */
  links: readonly RoundLink[];
  /** What `ctx.ask.connect` calls: the connections attached to the server, if any. */
  connector?: () => AskConnector | undefined;
}

export function roundChain(o: RoundChainOptions): RoundLink[] {
  const { guards, hookTimeoutMs: ms } = o;
  const when = (yes: boolean, ...links: RoundLink[]) => (yes ? links : []);
  return [
    // The trail names the round's sensitive fields, whatever happens next.
    ...when(o.observed, describeRound),
    // Every refusal of a guarded round is logged with its reason.
    ...when(guards.length > 0, logRefusals(o.logger)),
    // Before the state opens, in guard order: required scopes, the refusal limit, each guard's screen.
    ...screenLinks(guards, ms).map((link) => decided(link)),
    // From here on every refusal is told to the guards (a refusal limit counts them).
    ...refusalReporting(guards, ms),
    decided(openState(o.codec, o.logger), 'state'),
    // The replay guard and the others: admit in order; commit in reverse order on the way back, or release.
    ...admitLinks(guards, ms).map((link) => decided(link)),
    ...stepLedgerLinks(guards),
    // Write-ahead: the intent is recorded before anything with an effect runs.
    ...when(o.observed, decided(auditIntent(o.logger), 'audit_intent')),
    // The handler's time limit, the flow, then seal or complete; in the flow: the guards' asks, the policy links,
    // then the handler.
    flowLink(
      o,
      [...askLinks(guards), ...o.links.map(policyLink)].map((link) => decided(link)),
    ),
  ];
}
