// A server built over a catalog it did not register (the gateway's seam): entries found per caller, possibly async,
// possibly changing, run through the same round pipeline — and a hidden entry never shows, through any method.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeSchemaErrors,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  schemaValidator,
} from '../../src/protocol/index.js';
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
import { deferred } from '../helpers/signals.js';
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

/** The message is what the spec's schema calls `definition`. */
function conforms(definition: string, message: unknown): void {
  const validate = schemaValidator(definition);
  expect(validate(message), validate(message) ? '' : describeSchemaErrors(validate)).toBe(true);
}

describe('a catalog that changes', () => {
  const listen = (server: McpServer, who: Principal, filter: Record<string, unknown>, id: number) => {
    const notes: JsonRpcNotification[] = [];
    const signal = new AbortController();
    const closing = new AbortController();
    const env: RequestEnvironment = { ...envOf(who, notes), signal: signal.signal, closing: closing.signal };
    const answer = server.core.handle(request(id, 'subscriptions/listen', { notifications: filter }), env);
    return { notes, answer, cancel: () => signal.abort(), close: () => closing.abort() };
  };

  it('announces listChanged, and tells each listener of changes to its own list only', async () => {
    const upstream = new FakeUpstream([TOOL_A, TOOL_B]);
    const server = serverOver(gatewayCatalog(upstream, POLICY));
    expect(await call(server, bob, 'server/discover')).toHaveProperty('result.capabilities.tools', {
      listChanged: true,
    });
    const filter = {
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ['upstream://x'],
    };
    const alices = listen(server, alice, filter, 41);
    const bobs = listen(server, bob, filter, 42);
    const promptsOnly = listen(server, alice, { promptsListChanged: true }, 43);
    // Acknowledged first, with what is honoured: resource updates never; prompts only for who has any.
    expect(alices.notes).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: { 'io.modelcontextprotocol/subscriptionId': 41 },
          notifications: { toolsListChanged: true, promptsListChanged: true },
        },
      },
    ]);
    expect(bobs.notes[0]?.params).toEqual({
      _meta: { 'io.modelcontextprotocol/subscriptionId': 42 },
      notifications: { toolsListChanged: true },
    });
    upstream.add({ name: 'c', description: 'Only alice may see c' });
    expect(alices.notes.slice(1)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 41 } },
      },
    ]);
    expect(bobs.notes).toHaveLength(1);
    // A kind the listener did not ask for is never sent, even when its own list of that kind changed.
    expect(promptsOnly.notes.map((n) => n.method)).toEqual(['notifications/subscriptions/acknowledged']);
    promptsOnly.cancel();
    conforms('SubscriptionsAcknowledgedNotification', alices.notes[0]);
    conforms('ToolListChangedNotification', alices.notes[1]);
    // bob goes away: no answer is read; the server closes: alice's stream ends with its answer.
    bobs.cancel();
    alices.close();
    const ended = (await alices.answer) as JsonRpcResponse & { result: Record<string, unknown> };
    expect(ended).toMatchObject({
      id: 41,
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 41 } },
    });
    conforms('SubscriptionsListenResultResponse', ended);
    await bobs.answer;
    // Both stopped watching: a later change tells nobody.
    upstream.remove('c');
    expect([alices.notes.length, bobs.notes.length]).toEqual([2, 1]);
  });

  it('a server over its own registry offers no listChanged, and a listen ends at once with nothing agreed', async () => {
    const server = new McpServer({ name: 'static', version: '1', stateKeys: KEYS, logger: quiet }).tool(
      { name: 'ping', description: 'pong' },
      () => text('pong'),
    );
    expect(await call(server, undefined, 'server/discover')).toHaveProperty('result.capabilities.tools', {});
    const { notes, answer } = listen(server, alice, { toolsListChanged: true }, 5);
    expect(await answer).toHaveProperty('result.resultType', 'complete');
    expect(notes.map((n) => n.params?.notifications)).toEqual([{}]);
  });

  it('over HTTP: the stream carries the acknowledgement and the change, and ends with its answer on close', async () => {
    const upstream = new FakeUpstream([TOOL_A]);
    const endpoint = await serverOver(gatewayCatalog(upstream, POLICY)).listen({
      port: 0,
      authenticate: () => alice,
    });
    const stream = openStream(endpoint.url, { toolsListChanged: true });
    expect((await stream.next()).method).toBe('notifications/subscriptions/acknowledged');
    upstream.add({ name: 'b', description: 'new' });
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 3 } },
    });
    const closed = endpoint.close({ graceMs: 10_000 });
    expect(await stream.next()).toMatchObject({ id: 3, result: { resultType: 'complete' } });
    await stream.ended;
    await closed;
  });
});

describe('subscriptions over stdio', () => {
  it('end with their answers when input ends; a cancelled one gets none', async () => {
    const upstream = new FakeUpstream([TOOL_A]);
    const input = new PassThrough();
    const output = new PassThrough();
    const next = messagesOf(output);
    const served = serverOver(gatewayCatalog(upstream, POLICY)).stdio({ input, output, principal: alice });
    const listen = (id: number) =>
      `${JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: META } })}\n`;
    input.write(listen(8));
    input.write(listen(9));
    const acks = [await next(), await next()];
    expect(acks.map((m) => [m?.method, (m?.params as { _meta?: unknown } | undefined)?._meta])).toEqual([
      ['notifications/subscriptions/acknowledged', { 'io.modelcontextprotocol/subscriptionId': 8 }],
      ['notifications/subscriptions/acknowledged', { 'io.modelcontextprotocol/subscriptionId': 9 }],
    ]);
    upstream.add({ name: 'b', description: 'new' });
    expect([await next(), await next()].map((m) => m?.params)).toEqual([
      { _meta: { 'io.modelcontextprotocol/subscriptionId': 8 } },
      { _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } },
    ]);
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } })}\n`,
    );
    input.end();
    await served;
    expect(await next()).toMatchObject({
      id: 8,
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 8 } },
    });
    output.end();
    expect(await next()).toBeUndefined();
  });
});

/** The JSON lines a stream carries, one per call, as they come; undefined once it ended. */
function messagesOf(output: PassThrough): () => Promise<Record<string, unknown> | undefined> {
  const lines = createInterface({ input: output })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await lines.next();
    return done ? undefined : (JSON.parse(value) as Record<string, unknown>);
  };
}

/** POST subscriptions/listen and read its SSE stream message by message, as they come. */
function openStream(url: string, filter: Record<string, unknown>) {
  const messages: Array<Record<string, unknown>> = [];
  const waiting: Array<(m: Record<string, unknown>) => void> = [];
  const ended = deferred();
  let buffer = '';
  const req = httpRequest(
    url,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
    },
    (res: IncomingMessage) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const data = buffer
            .slice(0, cut)
            .split('\n')
            .find((l) => l.startsWith('data: '));
          buffer = buffer.slice(cut + 2);
          if (data) {
            const message = JSON.parse(data.slice(6)) as Record<string, unknown>;
            const waiter = waiting.shift();
            if (waiter) waiter(message);
            else messages.push(message);
          }
          cut = buffer.indexOf('\n\n');
        }
      });
      res.on('end', () => ended.resolve());
    },
  );
  req.end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'subscriptions/listen',
      params: { notifications: filter, _meta: META },
    }),
  );
  return {
    next: () =>
      new Promise<Record<string, unknown>>((resolve) => {
        const m = messages.shift();
        if (m) resolve(m);
        else waiting.push(resolve);
      }),
    ended: ended.promise,
  };
}

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
