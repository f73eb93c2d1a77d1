// One upstream's egress from its config entry. Secrets are read here, at start: a gateway whose config names a
// variable that is not set does not start, rather than failing its first caller.
import { GatewayConfigError } from './errors.js';
import { oauthEgress, type UpstreamConnections } from './oauth.js';
import { readSecret } from './secret.js';
import { TokenExchangeEgress, type TokenExchangeOptions } from './token-exchange.js';
import type { Egress, EgressConfig } from './types.js';

export interface EgressOptions extends TokenExchangeOptions {
  /** The upstream's name: what its people's connections are named (oauth credentials). */
  upstream?: string;
  /** The people's connections, for oauth credentials. */
  connections?: UpstreamConnections;
}

const NONE: Egress = Object.freeze({
  perCaller: false,
  tokenFor: () => Promise.resolve(undefined),
});

/** The gateway's own secret, the same for every caller. */
function staticEgress(config: Extract<EgressConfig, { type: 'static' }>, options: EgressOptions): Egress {
  if ((config.env === undefined) === (config.file === undefined))
    throw new GatewayConfigError('static credentials: give exactly one of env (a variable) or file');
  const secret = readSecret(config, 'static credentials', options.env);
  return Object.freeze({ perCaller: false, tokenFor: () => Promise.resolve(secret) });
}

export function egressFor(config: EgressConfig, options: EgressOptions = {}): Egress {
  switch (config?.type) {
    case 'none':
      return NONE;
    case 'static':
      return staticEgress(config, options);
    case 'token-exchange':
      return new TokenExchangeEgress(config, options);
    case 'oauth':
      return oauthEgress(options.upstream ?? '', options.connections);
    default:
      throw new GatewayConfigError(
        `credentials: type ${JSON.stringify((config as { type?: unknown })?.type)} is not none, static, token-exchange or oauth`,
      );
  }
}
