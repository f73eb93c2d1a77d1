import { afterEach, describe, expect, it } from 'vitest';
import type { JsonRpcNotification, JsonRpcRequest } from '../../src/protocol/index.js';
import {
  type Catalog,
  type HttpEndpoint,
  McpServer,
  type McpServerOptions,
  type Principal,
  type RequestEnvironment,
  type RoundEvent,
  type RoundGuard,
  type ToolEntry,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META, mcp } from '../helpers/mcp-http.js';
import { FakeUpstream, gatewayCatalog, type Policy, type UpstreamTool } from './fake-upstream.js';

const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);
const quiet = { info() {}, warn() {}, error() {} };
const alice: Principal = { subject: 'alice', issuer: 'urn:test', scopes: [] };
const bob: Principal = { subject: 'bob', issuer: 'urn:test', scopes: [] };

const TOOL_A: UpstreamTool = { name: 'a', description: 'Tool a' };
/** Hidden from bob; its argument is mirrored into a header, so the HTTP front checks it before dispatch. */
const TOOL_B: UpstreamTool = {
  name: 'b',
  description: 'Tool b',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
};
/** alice sees a, b, the prompt and the template; bob sees a only. */
const POLICY: Policy = { alice: ['a', 'b', 'c', 'summarize', 'docs'], bob: ['a'] };

function serverOver(catalog: Catalog, options: Partial<McpServerOptions> = {}): McpServer {
  return new McpServer({
    name: 'gateway',
    version: '1',
    stateKeys: KEYS,
    logger: quiet,
    pageSize: 1,
    validateResults: true,
    catalog,
    ...options,
  });
}

const request = (id: number, method: string, params: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { ...params, _meta: META },
});

function envOf(principal: Principal | undefined, notes: JsonRpcNotification[] = []): RequestEnvironment {
  return { principal, signal: new AbortController().signal, notify: (n) => void notes.push(n) };
}

const call = (server: McpServer, who: Principal | undefined, method: string, params = {}, id = 1) =>
  server.core.handle(request(id, method, params), envOf(who));

describe.each([
  ['a synchronous catalog', false],
  ['an async catalog', true],
])('over %s, filtered per caller', (_label, async) => {
  const upstream = new FakeUpstream([TOOL_A, TOOL_B]);
  const gateway = serverOver(gatewayCatalog(upstream, POLICY, { async }));
  /** The same gateway in a world where nothing bob cannot see exists: what bob sees must be exactly this. */
  const bare = serverOver(gatewayCatalog(new FakeUpstream([TOOL_A]), POLICY, { async, ownEntries: false }));

  it("tools/list pages over the caller's own list, every page private", async () => {
    const page1 = (await call(gateway, alice, 'tools/list')) as { result: Record<string, unknown> };
    expect(page1.result.tools).toEqual([expect.objectContaining({ name: 'a' })]);
    const page2 = (await call(gateway, alice, 'tools/list', { cursor: page1.result.nextCursor })) as {
      result: Record<string, unknown>;
    };
    expect(page2.result.tools).toEqual([expect.objectContaining({ name: 'b' })]);
    expect(page2.result.nextCursor).toBeUndefined();
    const bobs = (await call(gateway, bob, 'tools/list')) as { result: Record<string, unknown> };
    expect(bobs.result.tools).toEqual([expect.objectContaining({ name: 'a' })]);
    expect(bobs.result.nextCursor).toBeUndefined();
    for (const page of [page1, page2, bobs]) expect(page.result.cacheScope).toBe('private');
    // alice's cursor in bob's hands: a page of bob's own list, which ends there — nothing of b.
    const borrowed = await call(gateway, bob, 'tools/list', { cursor: page1.result.nextCursor });
    expect(JSON.stringify(borrowed)).not.toContain('"b"');
    expect(borrowed).toEqual(await call(bare, bob, 'tools/list', { cursor: page1.result.nextCursor }));
  });

  it('discovery shows bob only what his own lists hold, and is not cacheable as public', async () => {
    const bobs = await call(gateway, bob, 'server/discover');
    expect(bobs).toEqual(await call(bare, bob, 'server/discover'));
    const caps = (bobs as { result: Record<string, unknown> }).result.capabilities;
    expect(caps).not.toHaveProperty('prompts');
    expect(caps).not.toHaveProperty('completions');
    const alices = (await call(gateway, alice, 'server/discover')) as { result: Record<string, unknown> };
    expect(alices.result.capabilities).toMatchObject({ prompts: {}, completions: {}, resources: {} });
    expect(alices.result.cacheScope).toBe('private');
  });

  it('a hidden tool, prompt or resource answers exactly as a nonexistent one', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['tools/call', { name: 'b', arguments: { region: 'eu' } }],
      ['prompts/get', { name: 'summarize', arguments: { style: 'brief' } }],
      ['resources/read', { uri: 'upstream://docs/intro' }],
      [
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'style', value: 'b' } },
      ],
      [
        'completion/complete',
        {
          ref: { type: 'ref/resource', uri: 'upstream://docs/{name}' },
          argument: { name: 'name', value: 'i' },
        },
      ],
      ['prompts/list', {}],
      ['resources/templates/list', {}],
    ];
    for (const [method, params] of cases) {
      const hidden = await call(gateway, bob, method, params);
      expect(JSON.stringify(hidden), method).toBe(JSON.stringify(await call(bare, bob, method, params)));
    }
    const errorOf = async (method: string, params: Record<string, unknown>) =>
      ((await call(gateway, bob, method, params)) as { error?: { message: string } }).error?.message;
    expect(await errorOf(...cases[0]!)).toBe('Unknown tool: b');
    expect(await errorOf(...cases[1]!)).toBe('Unknown prompt: summarize');
    expect(await errorOf(...cases[2]!)).toBe('Resource not found');
    expect(await errorOf(...cases[3]!)).toBe('Unknown prompt: summarize');
    expect(await errorOf(...cases[4]!)).toBe('Unknown resource template: upstream://docs/{name}');
    // …while alice, who may see them, gets them.
    expect(
      await call(gateway, alice, 'prompts/get', { name: 'summarize', arguments: { style: 'brief' } }),
    ).toHaveProperty('result.messages');
    expect(
      await call(gateway, alice, 'completion/complete', {
        ref: { type: 'ref/prompt', name: 'summarize' },
        argument: { name: 'style', value: 'b' },
      }),
    ).toHaveProperty('result.completion.values', ['brief', 'bullet']);
    expect(await call(gateway, alice, 'resources/read', { uri: 'upstream://docs/intro' })).toHaveProperty(
      'result.contents.0.text',
      'doc at upstream://docs/intro',
    );
  });

  it('a visible upstream tool runs upstream; a hidden one never reaches it', async () => {
    upstream.calls.length = 0;
    const done = (await call(gateway, alice, 'tools/call', { name: 'b', arguments: { region: 'eu' } })) as {
      result: Record<string, unknown>;
    };
    expect(done.result.content).toEqual([{ type: 'text', text: 'upstream b ran with {"region":"eu"}' }]);
    await call(gateway, bob, 'tools/call', { name: 'b', arguments: { region: 'eu' } });
    expect(upstream.calls).toEqual([{ tool: 'b', args: { region: 'eu' } }]);
  });
});

describe('the hot path over a synchronous catalog', () => {
  it('answers without a promise, and an async catalog with one', () => {
    const upstream = new FakeUpstream([TOOL_A]);
    const sync = serverOver(gatewayCatalog(upstream, POLICY)).core;
    const listed = sync.handleRequest(request(1, 'tools/list'), envOf(alice));
    expect(listed).not.toBeInstanceOf(Promise);
    expect(listed).toHaveProperty('result.tools.0.name', 'a');
    const async = serverOver(gatewayCatalog(upstream, POLICY, { async: true })).core;
    expect(async.handleRequest(request(1, 'tools/list'), envOf(alice))).toBeInstanceOf(Promise);
  });
});

describe('the HTTP front over a filtered catalog', () => {
  let endpoints: HttpEndpoint[] = [];
  afterEach(async () => {
    await Promise.all(endpoints.map((e) => e.close()));
    endpoints = [];
  });
  const listen = async (catalog: Catalog) => {
    const endpoint = await serverOver(catalog).listen({
      port: 0,
      authenticate: (req) => ({ alice, bob })[String(req.headers['x-test-user'])],
    });
    endpoints.push(endpoint);
    return endpoint.url;
  };

  it.each([false, true])(
    "checks a tool's Mcp-Param headers only for callers who can see it (async catalog: %s)",
    async (async) => {
      const gateway = await listen(gatewayCatalog(new FakeUpstream([TOOL_A, TOOL_B]), POLICY, { async }));
      const bare = await listen(
        gatewayCatalog(new FakeUpstream([TOOL_A]), POLICY, { async, ownEntries: false }),
      );
      const unheadered = { name: 'b', arguments: { region: 'eu' } };
      const asBob = { headers: { 'x-test-user': 'bob' }, id: 7 };
      const hidden = await mcp(gateway, 'tools/call', unheadered, asBob);
      const missing = await mcp(bare, 'tools/call', unheadered, asBob);
      expect([hidden.status, hidden.response]).toEqual([missing.status, missing.response]);
      expect(hidden.response.error?.message).toBe('Unknown tool: b');
      // alice sees b: her call without the header is refused by the header check, as any visible tool's is.
      const alices = await mcp(gateway, 'tools/call', unheadered, { headers: { 'x-test-user': 'alice' } });
      expect(alices.response.error?.message).toBe(
        'Header mismatch: the Mcp-Param-Region header is required when region is set',
      );
    },
  );
});

describe('a round of an upstream tool', () => {
  it('passes every guard and observer: input_required, then complete, upstream called once', async () => {
    const upstream = new FakeUpstream([{ name: 'deploy', description: 'Deploys', confirmFirst: true }]);
    const guarded: string[] = [];
    const guard: RoundGuard = {
      name: 'recorder',
      admit: (round) => void guarded.push(`admit ${round.principal?.subject} ${round.target} ${round.round}`),
      commit: (round) => void guarded.push(`commit ${round.target} ${round.round}`),
    };
    const events: RoundEvent[] = [];
    const server = serverOver(gatewayCatalog(upstream, { alice: ['deploy'] }), {
      guards: [guard],
      observers: [{ observe: (e) => void events.push(e) }],
    });
    const first = (await call(server, alice, 'tools/call', { name: 'deploy', arguments: {} })) as {
      result: Record<string, unknown>;
    };
    expect(first.result.resultType).toBe('input_required');
    expect(upstream.calls).toEqual([]);
    const second = (await call(
      server,
      alice,
      'tools/call',
      {
        name: 'deploy',
        arguments: {},
        requestState: first.result.requestState,
        inputResponses: { go: { action: 'accept', content: { confirm: true } } },
      },
      2,
    )) as { result: Record<string, unknown> };
    expect(second.result.content).toEqual([{ type: 'text', text: 'upstream deploy ran with {}' }]);
    expect(upstream.calls).toEqual([{ tool: 'deploy', args: {} }]);
    expect(guarded).toEqual([
      'admit alice deploy 0',
      'commit deploy 0',
      'admit alice deploy 1',
      'commit deploy 1',
    ]);
    expect(events.map((e) => [e.target, e.round, e.outcome])).toEqual([
      ['deploy', 0, 'input_required'],
      ['deploy', 1, 'complete'],
    ]);
  });

  it('still has its requiredScopes checked, though the server registered nothing', async () => {
    const upstream = new FakeUpstream([]);
    const catalog = gatewayCatalog(upstream, { alice: ['admin'] });
    const scoped: Catalog = {
      ...catalog,
      findTool: (name, caller) => {
        const found = catalog.findTool(name, caller) as ToolEntry | undefined;
        return found && { ...found, mrtr: { ...found.mrtr, requiredScopes: ['admin'] } };
      },
    };
    upstream.add({ name: 'admin', description: 'Needs the admin scope' });
    const refused = await call(serverOver(scoped), alice, 'tools/call', { name: 'admin', arguments: {} });
    expect(refused).toHaveProperty('error.data.missingScopes', ['admin']);
    expect(upstream.calls).toEqual([]);
  });
});

describe('building a server over a catalog', () => {
  const catalog = gatewayCatalog(new FakeUpstream([]), POLICY);

  it('refuses .tool() and the others with an error that says where entries go', () => {
    const server = serverOver(catalog);
    expect(() => server.tool({ name: 'x' }, () => text('x'))).toThrow(
      expect.objectContaining({
        code: 'ERR_REGISTRATION',
        message:
          'McpServer.tool(): this server serves the catalog given in its options; add entries to that catalog instead',
      }),
    );
    expect(() => server.prompt({ name: 'p' }, () => ({ messages: [] }))).toThrow(/McpServer\.prompt\(\)/);
    expect(() => server.resource({ uri: 'x://y', name: 'y' }, () => ({ contents: [] }))).toThrow(
      /McpServer\.resource\(\)/,
    );
  });

  it('refuses an object that is not a catalog, naming what it lacks', () => {
    const { findTool: _f, listPrompts: _l, ...partial } = catalog;
    expect(() => serverOver(partial as Catalog)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        message: 'McpServer: catalog needs the Catalog methods findTool, listPrompts',
      }),
    );
    expect(() => serverOver({ ...catalog, sameForEveryone: 'no' } as never)).toThrow(/sameForEveryone/);
  });
});

describe('the 2025 bridge over a filtered catalog', () => {
  it("tells each 2025 caller its own capabilities, never another's, and promises no list_changed", async () => {
    const bridge = serverOver(gatewayCatalog(new FakeUpstream([TOOL_A]), POLICY)).legacyBridge!;
    const handshake = (id: number) => ({
      jsonrpc: '2.0' as const,
      id,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    });
    const alices = await bridge.initialize(handshake(1), alice);
    const bobs = await bridge.initialize(handshake(2), bob);
    expect(alices.response).toHaveProperty('result.capabilities.prompts', {});
    expect(bobs.response).not.toHaveProperty('result.capabilities.prompts');
    expect(bobs.response).toHaveProperty('result.capabilities.tools', {});
  });
});
