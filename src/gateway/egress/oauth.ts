// Upstreams that need each person's own account (`credentials: type: oauth`). The gateway is the upstream's OAuth
// client; each person connects once, and their tokens stay in the gateway's vault. The gateway reaches that vault
// through the few calls below (the connections room's `Connections` has them): the room is composed by the CLI.
import type { ConnectionOwner } from '../../connections/index.js';
import type { ControlContext } from '../../controls/index.js';
import { GatewayConfigError } from './errors.js';
import type { Egress, EgressCaller } from './types.js';

/** What the gateway needs of the people's connections (`Connections` from mrtr/connections is one). */
export interface UpstreamConnections {
  /** The round's person's token for `name`; asks them to connect (a URL-mode question) when they have none. */
  token(ctx: ControlContext, name: string): Promise<string>;
  /** The owner's token (refreshed if due), or undefined when not connected: never a question. */
  tokenFor(owner: ConnectionOwner, name: string, signal?: AbortSignal): Promise<string | undefined>;
  /** The upstream refused the token (a 401): drop it, so the next token(ctx) asks the person again. */
  /** A refusal of the token whose bearerDigest is `refused`: a grant holding another token is kept. */
  forget(owner: ConnectionOwner, name: string, why: string, refused?: string): Promise<void>;
  /** Whether `name` is one of the declared connections. */
  has(name: string): boolean;
}

/** Whose connection an upstream request uses: the caller's issuer and subject (undefined: no person). */
export function connectionOwner(caller: EgressCaller): ConnectionOwner | undefined {
  if (caller.subject === '') return undefined;
  return { issuer: caller.issuer ?? '', subject: caller.subject };
}

/**
 * The person's own token for `upstream`, from their connection; nothing when they have none (the upstream then
 * answers 401, and the forwarding handler asks them to connect). Each person gets an upstream client of their own.
 */
export function oauthEgress(upstream: string, connections: UpstreamConnections | undefined): Egress {
  if (!connections?.has(upstream))
    throw new GatewayConfigError(
      `upstream ${upstream}: credentials type oauth needs the gateway's connections (people sign in to connect their accounts)`,
    );
  return Object.freeze({
    perCaller: true,
    tokenFor: (caller: EgressCaller, signal?: AbortSignal) => {
      const owner = connectionOwner(caller);
      // A request made for nobody (a listing at start, `mrtr gateway pin`): no person, no token.
      return owner === undefined ? Promise.resolve(undefined) : connections.tokenFor(owner, upstream, signal);
    },
  });
}
