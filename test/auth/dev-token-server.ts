// A server behind development tokens, for the resource-server tests: who asked, a two-round tool, and tools that
// need scopes.
import { z } from 'zod';
import { BearerAuth, DevTokens, parseDevTokens, type ScopeImplications } from '../../src/auth/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';

export const TOKENS = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: ['requester'], scopes: ['bugs:read'] },
  'alice-writer': { sub: 'alice', name: 'Alice', roles: ['requester'], scopes: ['bugs:read', 'bugs:write'] },
  'alice-admin': { sub: 'alice', scopes: ['bugs'] },
  'bob-token': { sub: 'bob', roles: ['approver'], scopes: ['bugs:read'] },
};

export const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 7).toString('base64url')}`);

/** The development tokens' BearerAuth, for a server or for the edge that serves it (`listen({ auth })`). */
export function devTokenAuth(options: {
  resource: string;
  scopeImplications?: ScopeImplications;
}): BearerAuth {
  return new BearerAuth({
    verifier: new DevTokens(parseDevTokens(TOKENS)),
    resource: options.resource,
    scopesSupported: ['bugs:read'],
    resourceName: 'Bug tracker',
    ...(options.scopeImplications ? { scopeImplications: options.scopeImplications } : {}),
  });
}

export function devTokenServer(
  options: { resource: string; scopeImplications?: ScopeImplications; withAuth?: boolean } = {
    resource: 'http://127.0.0.1:1/mcp',
  },
): McpServer {
  const auth = options.withAuth === false ? undefined : devTokenAuth(options);
  return new McpServer({
    name: 'auth-test',
    version: '1.0.0',
    stateKeys: KEYS,
    validateResults: true,
    logger: { info() {}, warn() {}, error() {} } as never,
    ...(auth ? { auth } : {}),
  })
    .tool({ name: 'whoami', description: 'Who the server thinks you are' }, (_args, { principal }) =>
      text(JSON.stringify(principal ?? null)),
    )
    .tool(
      { name: 'confirm_close', description: 'Two rounds', input: z.object({ id: z.number() }) },
      async ({ id }, { ask, principal }) =>
        (await ask.confirm(`Close ${id}?`, { key: 'ok' }))
          ? text(`closed ${id} for ${principal?.subject}`)
          : text('kept'),
    )
    .tool(
      {
        name: 'write_bug',
        description: 'Needs bugs:write',
        requiredScopes: ['bugs:write'],
        input: z.object({ id: z.number() }),
      },
      async ({ id }, { ask }) =>
        (await ask.confirm(`Write ${id}?`, { key: 'ok' })) ? text(`wrote ${id}`) : text('kept'),
    )
    .tool(
      { name: 'admin_bug', description: 'Needs two scopes', requiredScopes: ['bugs:write', 'bugs:admin'] },
      () => text('admin'),
    )
    .prompt(
      {
        name: 'bug_report',
        description: 'Needs bugs:write, and so does its completer',
        arguments: [{ name: 'component', required: true }],
        requiredScopes: ['bugs:write'],
        complete: {
          component: (value) => ({ values: ['api', 'billing'].filter((c) => c.startsWith(value)) }),
        },
      },
      ({ component }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Report on ${component}` } }],
      }),
    );
}
