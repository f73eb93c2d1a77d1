// One server for every runtime test (Node, Bun, Deno, workerd): a two-round MRTR flow behind JWT auth, state sealed
// under a fixed test key, so a state sealed on one runtime opens on any other. It imports mrtr by name, as users do;
// docs/runtimes.md shows the region below.

/** The token issuer's public key (the private half is in tokens.ts); a static key set, so no runtime fetches. */
export const ISSUER_JWK = {
  kty: 'EC',
  crv: 'P-256',
  kid: 'runtimes',
  alg: 'ES256',
  x: 'tEKeSyl5N3OeshsMp2UAY_HFX5i49YDiWcqyzAMJoyo',
  y: 'jL9D-OGVRI92Jgl0PZRzgtpHrRQhMpIJeKcMs8AvI_I',
} as const;
export const ISSUER = 'https://issuer.runtimes.test';
export const RESOURCE = 'https://mcp.runtimes.test/mcp';
/** A test-only state key, the same on every runtime (never use a published key). */
export const STATE_KEYS = 'k2f2a61:SQwdaR8jAYActEB8XEl5QuHnOUm3zSPshg5idWyfxwA';

// #region server
import { BearerAuth, JwtVerifier } from 'mrtr/auth';
import { type McpFetchHandler, McpServer, mcpHttp, text } from 'mrtr/server';
import { MemoryStore, type SharedStore } from 'mrtr/stores';

export function fixtureApp(
  replayStore: SharedStore = new MemoryStore(),
  stateKeys: string = STATE_KEYS,
): McpFetchHandler {
  const server = new McpServer({
    name: 'runtimes',
    version: '1.0.0',
    state: { keys: stateKeys },
    rounds: { replay: { store: replayStore } },
  }).tool(
    { name: 'greet', description: 'Asks for a name, then greets the caller' },
    async (_args, { ask, principal }) => {
      const name = await ask.text('Your name?', { key: 'name' });
      return text(`hello ${name}, from ${principal?.subject ?? 'nobody'} on ${runtimeName()}`);
    },
  );
  // A static key set: verifying a token needs no network.
  const verifier = new JwtVerifier({ issuer: ISSUER, audience: RESOURCE, jwks: { keys: [ISSUER_JWK] } });
  return mcpHttp(server, { auth: new BearerAuth({ resource: RESOURCE, verifier }) });
}
// #endregion

/** Which runtime answered: the test checks each round ran where it was sent. */
export function runtimeName(): string {
  const g = globalThis as { Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: string } };
  if (g.Bun !== undefined) return 'bun';
  if (g.Deno !== undefined) return 'deno';
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  return 'node';
}
