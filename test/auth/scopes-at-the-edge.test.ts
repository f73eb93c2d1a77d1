// requiredScopes when the auth is given where the server is served (listen({ auth }), mcpHttp), not to McpServer:
// the scope guard follows that auth's scope implications and names its metadata in the 403 challenge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, mcpHttp } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { META, mcp } from '../helpers/mcp-http.js';
import { devTokenAuth, devTokenServer } from './dev-token-server.js';

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const IMPLICATIONS = { bugs: ['bugs:read', 'bugs:write', 'bugs:admin'] };

let endpoint: HttpEndpoint;
let url: string;
let origin: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  url = `${origin}/mcp`;
  const server = devTokenServer({ resource: url, withAuth: false });
  endpoint = await server.listen({
    port,
    auth: devTokenAuth({ resource: url, scopeImplications: IMPLICATIONS }),
  });
});
afterAll(() => endpoint.close());

describe('requiredScopes under the listener’s auth', () => {
  it('a broad scope the edge’s auth says implies the needed ones is enough', async () => {
    const reply = await mcp(url, 'tools/call', { name: 'admin_bug', arguments: {} }, bearer('alice-admin'));
    expect(reply.status).toBe(200);
    expect(reply.response.result?.content).toEqual([{ type: 'text', text: 'admin' }]);
  });

  it('a missing scope gets 403 whose challenge names the edge’s resource metadata', async () => {
    const reply = await mcp(
      url,
      'tools/call',
      { name: 'write_bug', arguments: { id: 1 } },
      bearer('alice-token'),
    );
    expect(reply.status).toBe(403);
    expect(String(reply.headers['www-authenticate'])).toBe(
      `Bearer error="insufficient_scope", error_description="this operation needs the scope bugs:write (missing: bugs:write)", scope="bugs:write", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});

describe('requiredScopes under a fetch handler’s auth', () => {
  it('follows the same implications and challenge', async () => {
    const resource = 'https://bugs.example.test/mcp';
    const server = devTokenServer({ resource, withAuth: false });
    const app = mcpHttp(server, { auth: devTokenAuth({ resource, scopeImplications: IMPLICATIONS }) });
    const call = (token: string, name: string) =>
      app.fetch(
        new Request(resource, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': name,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name, arguments: name === 'write_bug' ? { id: 1 } : {}, _meta: META },
          }),
        }),
      );
    const allowed = await call('alice-admin', 'admin_bug');
    expect(await allowed.text()).toContain('admin');
    expect(allowed.status).toBe(200);
    const refused = await call('alice-token', 'write_bug');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://bugs.example.test/.well-known/oauth-protected-resource/mcp"',
    );
  });
});
