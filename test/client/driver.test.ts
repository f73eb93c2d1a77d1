// The MRTR client requirements (mrtr.mdx "Client Requirements"), the request metadata on every request, and who
// may answer what.
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentPolicyResolver,
  McpClient,
  type MrtrEvent,
  rootsResolver,
  samplingResolver,
  scriptedResolver,
} from '../../src/client/index.js';
import { META_HUMAN_REQUIRED } from '../../src/protocol/index.js';
import { deferred } from '../helpers/signals.js';
import {
  askAgain,
  askThenEchoServer,
  confirmForm,
  type FakeServer,
  fakeServer,
  json,
  result,
  sse,
  toolCallServer,
} from './helpers.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const okAnswer = () =>
  scriptedResolver({}, { fallback: () => ({ action: 'accept', content: { ok: true } }) });

describe('MRTR client requirements', () => {
  it('answers every input request, echoes requestState byte-exact, uses a new id, keeps the params unchanged', async () => {
    const state = ' ünïcode ✓ +/= "quoted" \\ \u0000 end ';
    server = await toolCallServer((s, res) => {
      if (!s.body.params.inputResponses)
        return json(
          res,
          result(s.body.id, {
            resultType: 'input_required',
            inputRequests: { first: confirmForm('one?'), second: confirmForm('two?') },
            requestState: state,
          }),
        );
      json(res, result(s.body.id, { resultType: 'complete', content: [{ type: 'text', text: 'done' }] }));
    });
    const c = new McpClient({ server: server.url, resolvers: [okAnswer()] });
    const args = { nested: { list: [1, 'two', { three: 3 }] }, flag: false };
    const outcome = await c.callTool('t', args, { meta: { 'com.example/trace': 'abc' } });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    const [first, retry] = server.calls('tools/call');
    expect(first?.body.params).not.toHaveProperty('requestState');
    expect(first?.body.params).not.toHaveProperty('inputResponses');
    expect(retry?.body.params.requestState).toBe(state);
    expect(retry?.raw).toContain(JSON.stringify(state));
    expect(Object.keys(retry?.body.params.inputResponses)).toEqual(['first', 'second']);
    expect(retry?.body.id).not.toBe(first?.body.id);
    const { inputResponses: _a, requestState: _s, ...retryParams } = retry?.body.params ?? {};
    expect(retryParams).toEqual(first?.body.params);
    expect(first?.body.params.arguments).toEqual(args);
    expect(first?.body.params._meta['com.example/trace']).toBe('abc');
    await c.close();
  });

  it('sends no requestState on the retry when none was given', async () => {
    server = await toolCallServer((s, res) => {
      if (!s.body.params.inputResponses)
        return json(
          res,
          result(s.body.id, { resultType: 'input_required', inputRequests: { ok: confirmForm() } }),
        );
      json(res, result(s.body.id, { resultType: 'complete', content: [] }));
    });
    const c = new McpClient({ server: server.url, resolvers: [okAnswer()] });
    expect((await c.callTool('t')).status).toBe('complete');
    const retry = server.calls('tools/call')[1];
    expect(retry?.raw).not.toContain('requestState');
    expect(retry?.body.params.inputResponses).toEqual({ ok: { action: 'accept', content: { ok: true } } });
  });

  it('keeps parallel calls isolated: each retry carries only its own answers and state', async () => {
    // First rounds are held until all five have arrived, then answered together: the flows overlap for sure.
    const held: Array<() => void> = [];
    server = await toolCallServer((s, res) => {
      const { name, inputResponses, requestState } = s.body.params;
      if (name === 'plain') return json(res, result(s.body.id, { resultType: 'complete', content: [] }));
      if (!inputResponses) {
        held.push(() =>
          json(
            res,
            result(s.body.id, {
              resultType: 'input_required',
              inputRequests: { [`q-${name}`]: confirmForm(name) },
              requestState: `state-${name}`,
            }),
          ),
        );
        if (held.length === 5) for (const answer of held) answer();
        return;
      }
      const ok = Object.keys(inputResponses).join() === `q-${name}` && requestState === `state-${name}`;
      json(
        res,
        result(s.body.id, { resultType: 'complete', content: [{ type: 'text', text: ok ? 'ok' : 'MIXED' }] }),
      );
    });
    const c = new McpClient({ server: server.url, resolvers: [okAnswer()] });
    const names = ['a', 'b', 'c', 'd', 'e', 'plain'];
    const outcomes = await Promise.all(names.map((n) => c.callTool(n)));
    for (const o of outcomes.slice(0, 5))
      expect(o).toMatchObject({ status: 'complete', result: { content: [{ text: 'ok' }] } });
    const plain = server.calls('tools/call').filter((s) => s.body.params.name === 'plain');
    expect(plain).toHaveLength(1);
    expect(plain[0]?.body.params).not.toHaveProperty('inputResponses');
    expect(plain[0]?.body.params).not.toHaveProperty('requestState');
    const ids = server.seen.map((s) => s.body.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('puts _meta and the standard headers on every request, over one kept-alive connection', async () => {
    server = await fakeServer((s, res) => {
      if (s.body.method === 'server/discover')
        return json(
          res,
          result(s.body.id, {
            resultType: 'complete',
            supportedVersions: ['2026-07-28'],
            capabilities: { tools: {} },
            _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'fake', version: '1' } },
          }),
        );
      if (s.body.method === 'resources/read')
        return json(res, result(s.body.id, { resultType: 'complete', contents: [] }));
      if (s.body.method === 'prompts/get')
        return json(res, result(s.body.id, { resultType: 'complete', messages: [] }));
      return 'default';
    });
    const c = new McpClient({
      server: server.url,
      resolvers: [okAnswer()],
      clientInfo: { name: 'tester', version: '9' },
    });
    await c.discover();
    expect(c.serverInfo).toEqual({ name: 'fake', version: '1' });
    await c.listTools();
    await c.callTool('naïve tool', { x: 1 });
    await c.readResource('file:///a b.txt');
    await c.getPrompt('p');
    expect(server.seen.length).toBeGreaterThanOrEqual(5);
    for (const s of server.seen) {
      expect(s.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(s.headers['mcp-method']).toBe(s.body.method);
      expect(s.headers.accept).toBe('application/json, text/event-stream');
      expect(s.headers['content-type']).toBe('application/json');
      expect(s.body.params._meta).toEqual({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tester', version: '9' },
        'io.modelcontextprotocol/clientCapabilities': {
          elicitation: { form: {}, url: {} },
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
      });
    }
    const byMethod = (m: string) => server?.calls(m)[0]?.headers['mcp-name'];
    expect(byMethod('tools/call')).toBe(`=?base64?${Buffer.from('naïve tool').toString('base64')}?=`);
    expect(byMethod('resources/read')).toBe('file:///a b.txt');
    expect(byMethod('prompts/get')).toBe('p');
    expect(byMethod('tools/list')).toBeUndefined();
    expect(new Set(server.seen.map((s) => s.remotePort)).size).toBe(1);
    await c.close();
  });

  it('mirrors x-mcp-header arguments, excludes tools with invalid annotations, and refreshes on HeaderMismatch', async () => {
    let listed = 0;
    server = await fakeServer((s, res) => {
      if (s.body.method === 'tools/list') {
        listed++;
        return json(
          res,
          result(s.body.id, {
            resultType: 'complete',
            tools: [
              {
                name: 'sql',
                inputSchema: {
                  type: 'object',
                  properties: {
                    region: { type: 'string', 'x-mcp-header': 'Region' },
                    n: { type: 'integer', 'x-mcp-header': 'N' },
                    opts: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry' } } },
                    q: { type: 'string' },
                  },
                },
              },
              {
                name: 'bad',
                inputSchema: { type: 'object', properties: { f: { type: 'number', 'x-mcp-header': 'F' } } },
              },
            ],
          }),
        );
      }
      if (s.body.params.name === 'sql' && s.headers['mcp-param-region'] === undefined)
        return json(
          res,
          { jsonrpc: '2.0', id: s.body.id, error: { code: -32020, message: 'Header mismatch' } },
          400,
        );
      return json(res, result(s.body.id, { resultType: 'complete', content: [] }));
    });
    const warnings: string[] = [];
    const c = new McpClient({ server: server.url, onWarning: (w) => warnings.push(w) });
    const outcome = await c.callTool('sql', { region: ' eu west ', n: 42, opts: { dry: false }, q: 'x' });
    expect(outcome.status).toBe('complete');
    const call = server.calls('tools/call')[0];
    expect(call?.headers['mcp-param-region']).toBe(
      `=?base64?${Buffer.from(' eu west ').toString('base64')}?=`,
    );
    expect(call?.headers['mcp-param-n']).toBe('42');
    expect(call?.headers['mcp-param-dry']).toBe('false');
    expect(Object.keys(call?.headers ?? {}).filter((h) => h.startsWith('mcp-param-'))).toHaveLength(3);
    expect(listed).toBe(1);
    expect(warnings.join()).toMatch(/"bad" excluded/);
    expect(c.rejectedTools.map((t) => t.name)).toEqual(['bad']);
    expect((await c.callTool('bad', { f: 1 })).status).toBe('protocol_error');
  });

  it('follows an UnsupportedProtocolVersion answer to a version both support, once', async () => {
    let first = true;
    server = await fakeServer((s, res) => {
      if (first) {
        first = false;
        return json(
          res,
          {
            jsonrpc: '2.0',
            id: s.body.id,
            error: {
              code: -32022,
              message: 'Unsupported',
              data: { supported: ['2026-07-28'], requested: '2099-01-01' },
            },
          },
          400,
        );
      }
      return 'default';
    });
    const c = new McpClient({ server: server.url, protocolVersion: '2099-01-01' });
    await c.listTools();
    expect(c.version).toBe('2026-07-28');
    expect(server.seen.map((s) => s.headers['mcp-protocol-version'])).toEqual(['2099-01-01', '2026-07-28']);
  });

  it('surfaces progress notifications from an SSE response as events', async () => {
    server = await toolCallServer((s, res) => {
      const token = s.body.params._meta.progressToken;
      sse(res, [
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1, total: 2 },
        },
        ': comment lines are ignored',
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: 2, total: 2 },
        },
        result(s.body.id, { resultType: 'complete', content: [{ type: 'text', text: 'streamed' }] }),
      ]);
    });
    const events: MrtrEvent[] = [];
    const c = new McpClient({ server: server.url });
    const outcome = await c.callTool('t', {}, { progress: true, onEvent: (e) => events.push(e) });
    expect(outcome).toMatchObject({ status: 'complete', result: { content: [{ text: 'streamed' }] } });
    const progress = events.flatMap((e) =>
      e.type === 'notification' ? [e.notification.params?.progress] : [],
    );
    expect(progress).toEqual([1, 2]);
    expect(server.calls('tools/call')[0]?.body.params._meta.progressToken).toBeDefined();
    expect(events.map((e) => e.type)).toEqual(['round', 'notification', 'notification', 'done']);
  });
});

describe('abort', () => {
  it('cancels between rounds: no further request is sent', async () => {
    server = await toolCallServer((s, res) => {
      askAgain(res, s.body.id, 'x');
    });
    const controller = new AbortController();
    const c = new McpClient({ server: server.url, resolvers: [okAnswer()] });
    const outcome = await c.callTool(
      't',
      {},
      {
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'answered') controller.abort(new Error('person pressed stop'));
        },
      },
    );
    expect(outcome).toMatchObject({ status: 'aborted', rounds: 1 });
    expect(server.calls('tools/call')).toHaveLength(1);
  });

  it('cancels a request in flight by closing it', async () => {
    const arrived = deferred();
    const closed = deferred();
    server = await toolCallServer((_s, res) => {
      res.on('close', () => closed.resolve());
      arrived.resolve();
    });
    const c = new McpClient({ server: server.url });
    const controller = new AbortController();
    const outcome = c.callTool('t', {}, { signal: controller.signal });
    // Abort once the server holds the request; the server must then see its response closed.
    await arrived.promise;
    controller.abort();
    expect((await outcome).status).toBe('aborted');
    await closed.promise;
  });
});

describe('who answers', () => {
  const asks = (params: Record<string, unknown>) => async () => {
    server = await askThenEchoServer({ q: { method: 'elicitation/create', params } });
    return server;
  };
  const approval = {
    message: 'Approve the payment of 100 EUR?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } } },
    _meta: { [META_HUMAN_REQUIRED]: 'approval' },
  };
  const data = {
    message: 'Which region?',
    requestedSchema: { type: 'object', properties: { region: { type: 'string' } } },
  };
  const always = {
    rules: [{ answer: { action: 'accept' as const, content: { approve: true, region: 'eu' } } }],
  };

  it('the agent policy answers data questions from its rules', async () => {
    const s = await asks(data)();
    const c = new McpClient({ server: s.url, resolvers: [agentPolicyResolver(always)] });
    const outcome = await c.callTool('t');
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
  });

  it('the agent policy never answers an approval, whatever its rules: the call needs a person', async () => {
    const s = await asks(approval)();
    const events: MrtrEvent[] = [];
    const c = new McpClient({
      server: s.url,
      resolvers: [
        agentPolicyResolver(always),
        scriptedResolver({ q: { action: 'accept', content: { approve: true } } }),
      ],
    });
    const outcome = await c.callTool('t', {}, { onEvent: (e) => events.push(e) });
    expect(outcome).toMatchObject({
      status: 'needs_person',
      rounds: 1,
      pending: [{ key: 'q', why: 'approval', message: 'Approve the payment of 100 EUR?' }],
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'input_needed', key: 'q', why: 'approval' }),
    );
    expect(s.calls('tools/call')).toHaveLength(1);
  });

  for (const reason of ['consent', 'second_factor', 'something-new', true]) {
    it(`a question marked humanRequired=${JSON.stringify(reason)} goes only to a person`, async () => {
      const s = await asks({ ...approval, _meta: { [META_HUMAN_REQUIRED]: reason } })();
      const agent = new McpClient({ server: s.url, resolvers: [agentPolicyResolver(always)] });
      const o = await agent.callTool('t');
      expect(o.status).toBe('needs_person');
      if (o.status === 'needs_person')
        expect(o.pending[0]?.why).toBe(
          typeof reason === 'string' && reason !== 'something-new' ? reason : 'unspecified',
        );
      const person = new McpClient({
        server: s.url,
        resolvers: [
          agentPolicyResolver(always),
          scriptedResolver({ q: { action: 'decline' } }, { person: true }),
        ],
      });
      const p = await person.callTool('t');
      expect(p).toMatchObject({ status: 'complete', declined: [{ key: 'q', action: 'decline', round: 1 }] });
    });
  }

  it('a URL-mode question is never answered by an agent (the infinite URL loop)', async () => {
    const s = await asks({
      mode: 'url',
      message: 'Connect your account',
      url: 'https://auth.example.com/x',
      elicitationId: 'e1',
    })();
    const c = new McpClient({
      server: s.url,
      resolvers: [
        agentPolicyResolver({ ...always, kinds: ['elicitation.form', 'elicitation.url'] }),
        scriptedResolver({ q: { action: 'accept' } }),
      ],
    });
    const o = await c.callTool('t');
    expect(o).toMatchObject({ status: 'needs_person', pending: [{ why: 'url' }] });
  });

  it('a resolver that fails ends the call with resolver_error, not a half-answered retry', async () => {
    const s = await asks(data)();
    const c = new McpClient({
      server: s.url,
      resolvers: [
        scriptedResolver({
          q: () => {
            throw new Error('model unavailable');
          },
        }),
      ],
    });
    const o = await c.callTool('t');
    expect(o).toMatchObject({ status: 'resolver_error', key: 'q' });
    expect(s.calls('tools/call')).toHaveLength(1);
  });

  it('without resolvers, the client declares no input capabilities (only the tasks extension it can follow)', () => {
    const c = new McpClient({ server: 'http://127.0.0.1:1/mcp' });
    expect(c.capabilities).toEqual({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
    expect(new McpClient({ server: 'http://127.0.0.1:1/mcp', tasks: false }).capabilities).toEqual({});
  });
});

describe('sampling and roots', () => {
  it('answers sampling and roots requests with their resolvers, concurrently with a form', async () => {
    server = await askThenEchoServer({
      llm: {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: '2+2?' } }], maxTokens: 5 },
      },
      where: { method: 'roots/list' },
      ok: confirmForm(),
    });
    const c = new McpClient({
      server: server.url,
      resolvers: [
        samplingResolver(async (params) => ({
          role: 'assistant',
          content: { type: 'text', text: `${params.maxTokens}` },
          model: 'test',
        })),
        rootsResolver([{ uri: 'file:///work', name: 'work' }]),
        okAnswer(),
      ],
    });
    expect(c.capabilities).toEqual({
      sampling: {},
      roots: {},
      elicitation: { form: {}, url: {} },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
    const outcome = await c.callTool('t');
    expect(outcome.status).toBe('complete');
    const sent = server.calls('tools/call')[1]?.body.params.inputResponses;
    expect(sent).toEqual({
      llm: { role: 'assistant', content: { type: 'text', text: '5' }, model: 'test' },
      where: { roots: [{ uri: 'file:///work', name: 'work' }] },
      ok: { action: 'accept', content: { ok: true } },
    });
  });
});
