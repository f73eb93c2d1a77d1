// The example of docs/connections.md: a server whose tools read the caller's own issues at a third-party tracker,
// with the tracker's tokens of each person kept by the server. test/connections/ drives it over HTTP, in Chromium
// and through the official SDK; `connectionsServer()` takes the vault and the authorization flow so tests use fakes.
import { BearerAuth, type DevTokens } from 'mrtr/auth';
import { type AuthorizationFlow, type ConnectionEvent, Connections, type TokenVault } from 'mrtr/connections';
import { McpServer, type RoundObserver, text } from 'mrtr/server';
import { Keyring } from 'mrtr/state';
import type { SharedStore } from 'mrtr/stores';

export function connectionsServer(o: {
  tokens: DevTokens;
  store: SharedStore;
  vault: TokenVault;
  flowFor: () => AuthorizationFlow;
  /** The tracker's API, called with the person's token (a test's fake says which token it got). */
  readIssues: (token: string) => Promise<string>;
  resource: string;
  stateKeys: string;
  onEvent?: (e: ConnectionEvent) => void;
  now?: () => number;
  pendingWaitMs?: number;
  observers?: RoundObserver[];
}): { server: McpServer; connections: Connections } {
  // #region setup
  const keyring = Keyring.fromSpec(o.stateKeys);
  const server = new McpServer({
    name: 'tracker-reader',
    version: '1.0.0',
    state: { keys: keyring },
    auth: new BearerAuth({ verifier: o.tokens, resource: o.resource }),
    signIn: { devTokens: o.tokens },
    ...(o.observers ? { rounds: { observers: o.observers } } : {}),
  });
  // Each person connects their own tracker account once; the grants stay in the vault, bound to them.
  const connections = new Connections({
    store: o.store,
    vault: o.vault,
    keyring,
    flowFor: o.flowFor,
    connections: [
      {
        name: 'tracker',
        label: 'Tracker',
        issuer: 'https://id.tracker.example.com',
        clientId: 'tracker-reader',
        scopes: ['issues:read'],
      },
    ],
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    ...(o.now ? { now: o.now } : {}),
    ...(o.pendingWaitMs === undefined ? {} : { pendingWaitMs: o.pendingWaitMs }),
  }).attach(server);
  // #endregion

  // #region token
  server.tool(
    { name: 'tracker_issues', description: 'Your open issues', maxRounds: 100 },
    async (_args, ctx) => {
      // The caller's token; the first time, a question sends them to connect their account.
      const token = await connections.token(ctx, 'tracker');
      // The token goes to the tracker, never into the result: the client must not see it.
      return text(await o.readIssues(token));
    },
  );
  // #endregion

  // #region ask-connect
  server.tool(
    { name: 'tracker_mine', description: 'The same, in one line', maxRounds: 100 },
    async (_args, ctx) => text(await o.readIssues(await ctx.ask.connect('tracker'))),
  );
  // #endregion
  return { server, connections };
}
