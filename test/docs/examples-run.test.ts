// The documented examples do what their pages say: the README tour and the flows of docs/flows.md answer through the
// project's client in the rounds the text promises, and the docs/state.md example opens what it sealed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpClient, type MrtrOutcome, scriptedResolver } from '../../src/client/index.js';
import type { InputResponse, InputResponses } from '../../src/protocol/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';

const accept = (content: Record<string, string | number | boolean>): InputResponse => ({
  action: 'accept',
  content,
});

async function callTool(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  answers: Record<string, InputResponse>,
  person = false,
): Promise<MrtrOutcome> {
  const client = new McpClient({ server: url, resolvers: [scriptedResolver(answers, { person })] });
  try {
    return await client.callTool(tool, args);
  } finally {
    await client.close();
  }
}

const textOf = (outcome: MrtrOutcome) =>
  outcome.status === 'complete' ? (outcome.result.content as Array<{ text?: string }>)[0]?.text : outcome;

describe('the README tour (examples/tour.ts)', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    // The tour listens on PORT (0: a free one) and takes its keys from MRTR_STATE_KEYS, as it says.
    process.env.PORT = '0';
    process.env.MRTR_STATE_KEYS = generateKeySpec();
    ({ endpoint } = await import('../../examples/tour.js'));
  });
  afterAll(() => endpoint?.close());

  it('closes a duplicate in four rounds: resolution, original, confirmation', async () => {
    const outcome = await callTool(
      endpoint.url,
      'resolve_bug',
      { id: 42 },
      { q1: accept({ resolution: 'Duplicate' }), q2: accept({ original: 7 }), q3: accept({ confirm: true }) },
    );
    expect(textOf(outcome)).toBe('Bug 42 closed as a duplicate of 7');
    expect(outcome.rounds).toBe(4);
  });
});

describe('the flows of docs/flows.md (examples/flows.ts)', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    const { server } = await import('../../examples/flows.js');
    endpoint = await server.listen({ port: 0 });
  });
  afterAll(() => endpoint?.close());

  it('resolves a bug in two rounds when it is fixed', async () => {
    const outcome = await callTool(
      endpoint.url,
      'resolve_bug',
      { id: 5 },
      { q1: accept({ resolution: 'Fixed' }) },
    );
    expect(textOf(outcome)).toBe('Bug 5 resolved as Fixed');
    expect(outcome.rounds).toBe(2);
  });

  it('asks batched questions in one round', async () => {
    const answers = { q1: accept({ text: 'Ada' }), q2: accept({ choice: 'blue' }) };
    const outcome = await callTool(endpoint.url, 'greet', {}, answers);
    expect(textOf(outcome)).toBe('Hello Ada, blue it is');
    expect(outcome.rounds).toBe(2);
  });

  it('books a room: round 1 asks both, round 2 confirms', async () => {
    const answers = {
      q1: accept({ day: '2026-07-28' }),
      q2: accept({ choice: 'large' }),
      q3: accept({ confirm: true }),
    };
    const outcome = await callTool(endpoint.url, 'book_room', {}, answers);
    expect(textOf(outcome)).toBe('Booked large room on 2026-07-28');
    expect(outcome.rounds).toBe(3);
  });

  it('runs a step (which takes a position: the question after it is q2) and carries its result on', async () => {
    const outcome = await callTool(
      endpoint.url,
      'file_ticket',
      { item: 'printer' },
      { q2: accept({ confirm: false }) },
    );
    expect(textOf(outcome)).toBe('T-7 filed');
    expect(outcome.rounds).toBe(2);
  });

  it('falls back to a text question when the client cannot sample', async () => {
    const answers = { q1: accept({ text: 'A short report.' }) };
    expect(textOf(await callTool(endpoint.url, 'summarise', {}, answers))).toBe('A short report.');
  });

  it('asks its own consent, then relays the upstream’s question under its own key and maps the answer back', async () => {
    const answers = { q1: accept({ confirm: true }), q2: accept({ env: 'staging' }) };
    // The consent is marked for a person: these answers are one's own, given for this call.
    const outcome = await callTool(endpoint.url, 'deploy', {}, answers, true);
    expect(textOf(outcome)).toBe('Deployed to staging');
    expect(outcome.rounds).toBe(3);
  });
});

describe('the docs/state.md example (examples/state.ts)', () => {
  it('opens, in round n+1, the state it sealed in round n', async () => {
    const { openedState } = await import('../../examples/state.js');
    expect(openedState).toMatchObject({ payload: { step: 'confirm', amount: 120 }, round: 1 });
  });
});

describe('the guard and observer of docs/architecture.md (examples/round-seams.ts)', () => {
  it('observes every round and refuses once the budget is spent, with the reason in the observer only', async () => {
    const { server } = await import('../../examples/round-seams.js');
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: string) => void lines.push(line);
    const endpoint = await server.listen({ port: 0 });
    const client = new McpClient({ server: endpoint.url });
    try {
      for (let i = 0; i < 100; i++) await client.callTool('ping', {});
      const refused = await client.callTool('ping', {});
      expect(refused).toMatchObject({
        status: 'server_error',
        error: { code: -32600, message: 'Round budget spent' },
      });
    } finally {
      console.log = log;
      await client.close();
      await endpoint.close();
    }
    expect(lines).toHaveLength(101);
    expect(JSON.parse(lines[0]!)).toEqual([null, 'ping', 0, 'complete', null]);
    expect(JSON.parse(lines[100]!)).toEqual([null, 'ping', 0, 'refused', 'over_budget']);
  });
});

describe('the round link of docs/architecture.md (examples/round-link.ts)', () => {
  it("answers in the handler's place while frozen, and lets the handler answer otherwise", async () => {
    const { server, freeze, handlerRuns } = await import('../../examples/round-link.js');
    const { META } = await import('../helpers/mcp-http.js');
    const call = () =>
      server.core.handle(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'delete_report', arguments: {}, _meta: META },
        },
        { principal: undefined, signal: new AbortController().signal, notify() {} },
      );
    freeze.frozen = true;
    expect(await call()).toMatchObject({
      result: { isError: true, content: [{ type: 'text', text: 'delete_report is frozen' }] },
    });
    expect(handlerRuns.delete_report).toBe(0);
    freeze.frozen = false;
    expect(await call()).toMatchObject({ result: { content: [{ type: 'text', text: 'deleted' }] } });
    expect(handlerRuns.delete_report).toBe(1);
  });
});

describe('the guard that asks and the round runner of docs/architecture.md (examples/round-runner.ts)', () => {
  it('asks for consent before the tool runs, and the tool runs once the caller says yes', async () => {
    const { server } = await import('../../examples/round-runner.js');
    const endpoint = await server.listen({ port: 0 });
    const asked: string[] = [];
    // The consent is a question only a person may answer: the scripted resolver stands in for one.
    const answering = (yes: boolean) =>
      new McpClient({
        server: endpoint.url,
        resolvers: [
          scriptedResolver(
            {
              policy_consent: (q) => {
                asked.push(q.key);
                return { action: 'accept', content: { confirm: yes } };
              },
            },
            { person: true },
          ),
        ],
      });
    const yes = answering(true);
    const no = answering(false);
    try {
      expect(await yes.callTool('delete_report', {})).toMatchObject({
        status: 'complete',
        rounds: 2,
        result: { content: [{ text: 'deleted' }] },
      });
      expect(await no.callTool('delete_report', {})).toMatchObject({
        result: { isError: true, content: [{ text: 'Not done: no consent' }] },
      });
    } finally {
      await yes.close();
      await no.close();
      await endpoint.close();
    }
    expect(asked).toEqual(['policy_consent', 'policy_consent']);
  });

  it('runs a round for a tool that lives elsewhere through the same guard and observer', async () => {
    const { answerCall } = await import('../../examples/round-runner.js');
    const lines: string[] = [];
    const log = console.log;
    console.log = (...parts: unknown[]) => void lines.push(parts.join(' '));
    const request = (extra: Record<string, unknown>) => ({
      jsonrpc: '2.0' as const,
      id: 1,
      method: 'tools/call',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
        name: 'delete_cache',
        arguments: {},
        ...extra,
      },
    });
    try {
      const first = (await answerCall(request({}), new AbortController().signal)) as unknown as {
        result: { resultType: string; requestState: string };
      };
      expect(first.result.resultType).toBe('input_required');
      const second = await answerCall(
        request({
          requestState: first.result.requestState,
          inputResponses: { policy_consent: { action: 'accept', content: { confirm: true } } },
        }),
        new AbortController().signal,
      );
      expect(second).toMatchObject({ result: { content: [{ text: 'upstream did delete_cache' }] } });
    } finally {
      console.log = log;
    }
    expect(lines).toEqual(['delete_cache 0 input_required', 'delete_cache 1 complete']);
  });
});

describe('the replay guard of docs/replay.md (examples/replay.ts)', () => {
  let endpoint: HttpEndpoint;
  let refunds: string[];
  beforeAll(async () => {
    const example = await import('../../examples/replay.js');
    refunds = example.refunds;
    endpoint = await example.server.listen({ port: 0 });
  });
  afterAll(() => endpoint?.close());

  it('refunds once: an identical retry gets the same answer, a replay with another answer is refused', async () => {
    const { mcp } = await import('../helpers/mcp-http.js');
    const args = { order: 'A-17', amount: 40 };
    const first = await mcp(endpoint.url, 'tools/call', { name: 'refund', arguments: args });
    const state = first.response.result!.requestState as string;
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    const done = await mcp(endpoint.url, 'tools/call', {
      name: 'refund',
      arguments: args,
      requestState: state,
      inputResponses: yes,
    });
    expect((done.response.result!.content as Array<{ text: string }>)[0]!.text).toMatch(
      /^Refunded 40 EUR on A-17 \(R-1\)$/,
    );
    const retry = await mcp(endpoint.url, 'tools/call', {
      name: 'refund',
      arguments: args,
      requestState: state,
      inputResponses: yes,
    });
    expect(JSON.stringify(retry.response.result)).toBe(JSON.stringify(done.response.result));
    const no = { confirm: { action: 'accept', content: { confirm: false } } };
    const replay = await mcp(endpoint.url, 'tools/call', {
      name: 'refund',
      arguments: args,
      requestState: state,
      inputResponses: no,
    });
    expect(replay.response.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
    expect(refunds).toHaveLength(1);
  });
});

describe('the one-round example of docs/client.md (examples/client-round.ts)', () => {
  const confirm: InputResponse = { action: 'accept', content: { confirm: true } };

  it('a 2026-07-28 server: its own questions, each answered in a round of its own', async () => {
    const { exampleServer } = await import('../../src/cli/demo-servers/example.js');
    const { callForAlice } = await import('../../examples/client-round.js');
    const endpoint = await exampleServer().listen({ port: 0 });
    try {
      const asked: string[] = [];
      const result = await callForAlice(
        endpoint.url,
        'resolve_bug',
        { id: 3 },
        async (inputRequests): Promise<InputResponses> => {
          asked.push(...Object.keys(inputRequests));
          return inputRequests.resolution
            ? { resolution: { action: 'accept', content: { resolution: 'Fixed' } } }
            : { confirm };
        },
      );
      expect(asked).toEqual(['resolution', 'confirm']);
      expect(result).toMatchObject({
        resultType: 'complete',
        content: [{ text: 'Bug 3 resolved as Fixed' }],
      });
    } finally {
      await endpoint.close();
    }
  });

  it('a 2025 server (the official SDK): the same code, its call held between Alice’s rounds', async () => {
    const { startLegacySdkServer } = await import('../client/sdk-legacy-server.js');
    const { callForAlice } = await import('../../examples/client-round.js');
    const server = await startLegacySdkServer();
    try {
      const result = await callForAlice(
        server.url,
        'confirm_delete',
        { path: '/tmp/x' },
        async (inputRequests) => {
          expect(Object.keys(inputRequests)).toEqual(['q1']);
          return { q1: confirm };
        },
      );
      expect(result).toMatchObject({ resultType: 'complete', content: [{ text: 'deleted /tmp/x' }] });
    } finally {
      await server.close();
    }
  });
});

describe('the catalog of docs/architecture.md (examples/catalog.ts)', () => {
  it('shows each caller the tools of its roles only, and tells a listener when its own list changes', async () => {
    const { server, tools } = await import('../../examples/catalog.js');
    const { META } = await import('../helpers/mcp-http.js');
    const ops = { subject: 'olga', roles: ['ops'] };
    const dev = { subject: 'dan', roles: ['dev'] };
    const notes: unknown[] = [];
    const env = (principal: typeof ops) => ({
      principal,
      signal: new AbortController().signal,
      notify: (n: unknown) => void notes.push(n),
    });
    const ask = (principal: typeof ops, method: string, params: Record<string, unknown> = {}) =>
      server.core.handle(
        { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } },
        env(principal),
      );
    expect(await ask(ops, 'tools/list')).toHaveProperty('result.tools.0.name', 'restart');
    expect(await ask(dev, 'tools/list')).toHaveProperty('result.tools', []);
    expect(await ask(dev, 'tools/call', { name: 'restart', arguments: {} })).toHaveProperty(
      'error.message',
      'Unknown tool: restart',
    );
    const closing = new AbortController();
    const listening = server.core.handle(
      {
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: META },
      },
      { ...env(dev), closing: closing.signal },
    );
    tools.add('ops', 'drain', 'drained'); // not dan's: he hears nothing
    tools.add('dev', 'lint', 'linted');
    closing.abort();
    await listening;
    expect(notes).toEqual([
      expect.objectContaining({ method: 'notifications/subscriptions/acknowledged' }),
      expect.objectContaining({ method: 'notifications/tools/list_changed' }),
    ]);
    expect(await ask(dev, 'tools/call', { name: 'lint', arguments: {} })).toHaveProperty(
      'result.content.0.text',
      'linted',
    );
  });
});

describe("the tasks of docs/tasks.md (examples/tasks.ts), through mrtr's client", () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    const { tasksServer } = await import('../../examples/tasks.js');
    endpoint = await tasksServer({ stateKeys: generateKeySpec(), workMs: 1 }).listen({ port: 0 });
  });
  afterAll(() => endpoint?.close());

  it('build_report runs as a task that asks its question on the way, then completes', async () => {
    const events: string[] = [];
    const client = new McpClient({
      server: endpoint.url,
      resolvers: [scriptedResolver({ quarter: accept({ quarter: 'Q3' }) })],
    });
    try {
      const outcome = await client.callTool(
        'build_report',
        {},
        {
          onEvent: (e) => {
            if (e.type === 'task') events.push(e.status);
          },
        },
      );
      expect(textOf(outcome)).toBe('Sales report for Q3: 1,204 orders');
      expect(events.at(-1)).toBe('completed');
      expect(events).toContain('input_required');
    } finally {
      await client.close();
    }
  });

  it('greet_slowly asks by MRTR first, then finishes as a task; without the extension it is -32021', async () => {
    const outcome = await callTool(endpoint.url, 'greet_slowly', {}, { name: accept({ name: 'Ada' }) });
    expect(textOf(outcome)).toBe('Hello, Ada!');
    const plain = new McpClient({ server: endpoint.url, tasks: false, resolvers: [scriptedResolver({})] });
    try {
      const refused = await plain.callTool('greet_slowly', {});
      expect(refused).toMatchObject({ status: 'server_error', error: { code: -32021 } });
    } finally {
      await plain.close();
    }
  });
});
