// The connections a gateway declares: one per upstream whose credentials are `type: oauth`, named as the upstream,
// for the upstream's URL. The client secret is read here, at start, as static credentials are: a variable that is
// not set stops the start rather than the first person's connect.
import type { ConnectionConfig } from '../connections/index.js';
import type { GatewayConfig } from './config.js';
import { readSecret } from './egress/secret.js';

export function connectionConfigs(
  config: Pick<GatewayConfig, 'upstreams'>,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionConfig[] {
  return config.upstreams.flatMap((upstream) => {
    const c = upstream.credentials;
    if (c.type !== 'oauth' || upstream.url === undefined) return [];
    const secret =
      c.clientSecret === undefined
        ? undefined
        : readSecret(c.clientSecret, `upstream ${upstream.name}: the oauth client secret`, env);
    return [
      {
        name: upstream.name,
        label: upstream.name,
        resource: upstream.url,
        ...(c.issuer !== undefined ? { issuer: c.issuer } : {}),
        clientId: c.clientId,
        ...(secret !== undefined ? { clientSecret: secret } : {}),
        scopes: [...c.scopes],
      },
    ];
  });
}

/** Whether any upstream needs each person's account: the gateway then needs browser sign-in and connections. */
export const needsConnections = (config: Pick<GatewayConfig, 'upstreams'>): boolean =>
  config.upstreams.some((u) => u.credentials.type === 'oauth');
