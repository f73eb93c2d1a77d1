// `credentials: type: oauth` in the gateway's config: each person connects their own account at the upstream's
// authorization server. What a good entry gives (and the connection the gateway declares for it), and for each
// mistake an operator can make, an error that starts with FILE:LINE: and names the key.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError, loadGatewayConfig, parseGatewayConfig } from '../../src/gateway/config.js';
import { connectionConfigs, needsConnections } from '../../src/gateway/connection-configs.js';

/** The message of the GatewayConfigError `yaml` gives (read as gateway.yaml). */
function errorOf(yaml: string): string {
  try {
    parseGatewayConfig(yaml, 'gateway.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect((error as GatewayConfigError).code).toBe('ERR_GATEWAY_CONFIG');
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

/** One upstream `tracker` whose credentials (from line 4) are `lines`, each indented by six spaces. */
const tracker = (...lines: string[]) =>
  `upstreams:\n  - name: tracker\n    url: https://tracker.example.com/mcp\n    credentials:\n${lines.map((l) => `      ${l}\n`).join('')}rules: []\n`;

describe('credentials type oauth', () => {
  it("reads the issue's example, and declares one connection named as the upstream, for its URL", () => {
    const config = parseGatewayConfig(
      tracker(
        'type: oauth',
        'issuer: https://id.tracker.example.com',
        'clientId: mrtr-gateway',
        'clientSecret: { env: TRACKER_CLIENT_SECRET }',
        'scopes: [tickets:read, tickets:write]',
      ),
      'gateway.yaml',
    );
    expect(config.upstreams[0]?.credentials).toEqual({
      type: 'oauth',
      issuer: 'https://id.tracker.example.com',
      clientId: 'mrtr-gateway',
      clientSecret: { env: 'TRACKER_CLIENT_SECRET' },
      scopes: ['tickets:read', 'tickets:write'],
    });
    expect(needsConnections(config)).toBe(true);
    // The secret is read at start, from the variable the config names.
    expect(connectionConfigs(config, { TRACKER_CLIENT_SECRET: 's3cret' })).toEqual([
      {
        name: 'tracker',
        label: 'tracker',
        resource: 'https://tracker.example.com/mcp',
        issuer: 'https://id.tracker.example.com',
        clientId: 'mrtr-gateway',
        clientSecret: 's3cret',
        scopes: ['tickets:read', 'tickets:write'],
      },
    ]);
  });

  it('a public client with no issuer (discovered from the upstream) and no scopes; a secret file beside the config', () => {
    const bare = parseGatewayConfig(tracker('type: oauth', 'clientId: gw'), 'gateway.yaml');
    expect(bare.upstreams[0]?.credentials).toEqual({ type: 'oauth', clientId: 'gw', scopes: [] });
    expect(connectionConfigs(bare, {})).toEqual([
      {
        name: 'tracker',
        label: 'tracker',
        resource: 'https://tracker.example.com/mcp',
        clientId: 'gw',
        scopes: [],
      },
    ]);

    const dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-oauth-'));
    writeFileSync(join(dir, 'secret'), 'from-a-file\n');
    writeFileSync(
      join(dir, 'gateway.yaml'),
      tracker('type: oauth', 'clientId: gw', 'clientSecret: { file: secret }'),
    );
    const config = loadGatewayConfig(join(dir, 'gateway.yaml'));
    expect(config.upstreams[0]?.credentials).toMatchObject({ clientSecret: { file: join(dir, 'secret') } });
    expect(connectionConfigs(config, {})[0]?.clientSecret).toBe('from-a-file');
  });

  it('an upstream without oauth declares no connection', () => {
    const config = parseGatewayConfig(
      'upstreams:\n  - name: a\n    url: http://x/mcp\n  - name: b\n    command: [x]\nrules: []\n',
      'gateway.yaml',
    );
    expect(needsConnections(config)).toBe(false);
    expect(connectionConfigs(config, {})).toEqual([]);
  });

  it('a client secret variable that is not set stops the start, naming it', () => {
    const config = parseGatewayConfig(
      tracker('type: oauth', 'clientId: gw', 'clientSecret: { env: NOT_SET_HERE }'),
      'gateway.yaml',
    );
    expect(() => connectionConfigs(config, {})).toThrow(
      'upstream tracker: the oauth client secret: the variable NOT_SET_HERE is not set',
    );
  });

  it('each mistake names its line and key', () => {
    expect(errorOf(tracker('type: oauth'))).toBe(
      "gateway.yaml:5: upstreams[0].credentials: missing clientId: the gateway's own client at the upstream's authorization server",
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'issuer: not a url'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.issuer: "not a url" is not a URL',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'issuer: http://id.example.com'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.issuer: "http://id.example.com" must be https (plain http only on loopback)',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'clientSecret: { env: A, file: b }'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.clientSecret: give exactly one of env (a variable holding the secret) or file',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'clientSecret: TRACKER_SECRET'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.clientSecret: must be a map, not the text "TRACKER_SECRET"',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'clientSecret: { vault: x }'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.clientSecret: unknown key "vault" (choose env, file)',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'scopes: tickets:read'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials.scopes: must be a list, not the text "tickets:read"',
    );
    expect(errorOf(tracker('type: oauth', 'clientId: gw', 'clientSecretEnv: X'))).toBe(
      'gateway.yaml:7: upstreams[0].credentials: unknown key "clientSecretEnv" (choose type, issuer, clientId, clientSecret, scopes)',
    );
  });

  it('only an upstream with a url takes them', () => {
    expect(
      errorOf(
        'upstreams:\n  - name: a\n    command: [x]\n    credentials: { type: oauth, clientId: gw }\nrules: []\n',
      ),
    ).toBe(
      'gateway.yaml:4: upstreams[0].credentials: only an upstream with a url takes credentials; give a stdio command its secrets in env',
    );
  });
});
