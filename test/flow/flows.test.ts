// Sequential flows end to end over HTTP: replay from the journal, batching, pinning, validation, outcomes, caps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { type HttpEndpoint, inputRequired, McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { accept, drive } from './drive.js';

const quiet = { info() {}, warn() {}, error() {} };
let endpoint: HttpEndpoint;
let url: string;
const effects: string[] = [];

function flowServer(): McpServer {
  return new McpServer({ name: 'flows', version: '1', logger: quiet, validateResults: true, maxRounds: 4 })
    .tool(
      { name: 'bug', description: 'dependent questions', input: z.object({ id: z.number() }) },
      async ({ id }, { ask }) => {
        const { resolution } = await ask.form(
          'How?',
          z.object({ resolution: z.enum(['Fixed', 'Duplicate']) }),
        );
        if (resolution === 'Duplicate') {
          const { original } = await ask.form('Of which?', z.object({ original: z.number().int() }));
          if (!(await ask.confirm(`Close ${id} as duplicate of ${original}?`))) return text('kept open');
          return text(`${id} duplicate of ${original}`);
        }
        return text(`${id} fixed`);
      },
    )
    .tool({ name: 'pair', description: 'two independent questions' }, async (_args, { ask }) => {
      const [name, color] = await ask.all([ask.text('Name?'), ask.choose('Color?', ['red', 'blue'])]);
      const ok = await ask.confirm(`Save ${name}/${color}?`);
      return text(ok ? `${name} likes ${color}` : 'not saved');
    })
    .tool({ name: 'parallel', description: 'Promise.all batches too' }, async (_args, { ask }) => {
      const [a, b] = await Promise.all([ask.text('A?'), ask.text('B?')]);
      return text(`${a}+${b}`);
    })
    .tool({ name: 'age', description: 'validated answer' }, async (_args, { ask }) => {
      const { age } = await ask.form('Age?', z.object({ age: z.number().int().min(18) }), {
        maxInvalidAnswers: 2,
      });
      return text(`age ${age}`);
    })
    .tool({ name: 'typed_decline', description: 'handles decline itself' }, async (_args, { ask }) => {
      const outcome = await ask.elicit('Share email?', z.object({ email: z.string() }));
      return text(
        outcome.action === 'accept' ? `email ${outcome.content.email}` : `no email (${outcome.action})`,
      );
    })
    .tool({ name: 'endless', description: 'never satisfied' }, async (_args, { ask }) => {
      for (let i = 0; ; i++) await ask.text(`again ${i}?`);
    })
    .tool({ name: 'sign_in', description: 'URL mode when declared, else a form' }, async (_args, { ask }) => {
      if (ask.supports('elicitation.url')) {
        await ask.url('Sign in', 'https://login.example.com/start');
        return text('signed in via url');
      }
      const code = await ask.text('Paste the sign-in code');
      return text(`signed in with code ${code}`);
    })
    .tool({ name: 'effect', description: 'a step between questions' }, async (_args, { ask }) => {
      const item = await ask.text('Item?');
      const ticket = await ask.step('create-ticket', () => {
        effects.push(item);
        return `T-${effects.length}`;
      });
      const ok = await ask.confirm(`Notify about ${ticket}?`);
      return text(ok ? `notified ${ticket}` : `created ${ticket}`);
    })
    .tool({ name: 'crash', description: 'throws mid-flow' }, async (_args, { ask }) => {
      await ask.text('First?');
      throw new Error('boom');
    })
    .tool({ name: 'sampler', description: 'sampling and roots' }, async (_args, { ask }) => {
      const [sample, roots] = await ask.all([
        ask.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }),
        ask.roots(),
      ]);
      return text(`${(sample.content as { text: string }).text} @ ${roots.map((r) => r.uri).join(',')}`);
    })
    .prompt({ name: 'greet', description: 'a prompt flow' }, async (_args, { ask }) => {
      const name = await ask.text('Who?');
      return { messages: [{ role: 'user', content: { type: 'text', text: `Greet ${name}` } }] };
    })
    .resource({ uri: 'secret://doc', name: 'doc', description: 'a resource flow' }, async (uri, { ask }) => {
      if (!(await ask.confirm('Reveal?', { humanRequired: 'consent' })))
        return { contents: [{ uri, text: 'hidden' }] };
      return { contents: [{ uri, text: 'the secret' }] };
    });
}

beforeAll(async () => {
  endpoint = await flowServer().listen({ port: 0 });
  url = endpoint.url;
});
afterAll(() => endpoint.close());

const textOf = (r: { reply: { response: { result?: Record<string, unknown> } } }) =>
  ((r.reply.response.result?.content ?? []) as Array<{ text: string }>)[0]?.text;

describe('straight-line flows', () => {
  it('runs a three-round dependent flow, one question per round', async () => {
    const answers: Record<string, unknown> = {
      'How?': { resolution: 'Duplicate' },
      'Of which?': { original: 7 },
    };
    const run = await drive(url, 'tools/call', { name: 'bug', arguments: { id: 9 } }, ({ request }) =>
      accept((answers[request.params.message as string] as Record<string, unknown>) ?? { confirm: true }),
    );
    expect(textOf(run)).toBe('9 duplicate of 7');
    expect(run.rounds).toBe(4);
    expect(run.asked.map((a) => [a.round, a.key])).toEqual([
      [1, 'q1'],
      [2, 'q2'],
      [3, 'q3'],
    ]);
  });

  it('takes only the rounds the dependency chain needs', async () => {
    const run = await drive(url, 'tools/call', { name: 'bug', arguments: { id: 1 } }, () =>
      accept({ resolution: 'Fixed' }),
    );
    expect(textOf(run)).toBe('1 fixed');
    expect(run.rounds).toBe(2);
  });

  it('sends independent questions together in one round (ask.all and Promise.all)', async () => {
    const run = await drive(url, 'tools/call', { name: 'pair', arguments: {} }, ({ key }) =>
      key === 'q1'
        ? accept({ text: 'Ada' })
        : key === 'q2'
          ? accept({ choice: 'blue' })
          : accept({ confirm: true }),
    );
    expect(textOf(run)).toBe('Ada likes blue');
    expect(run.asked.map((a) => [a.round, a.key])).toEqual([
      [1, 'q1'],
      [1, 'q2'],
      [2, 'q3'],
    ]);
    const parallel = await drive(url, 'tools/call', { name: 'parallel', arguments: {} }, ({ key }) =>
      accept({ text: key.toUpperCase() }),
    );
    expect(textOf(parallel)).toBe('Q1+Q2');
    expect(parallel.rounds).toBe(2);
  });

  it('converts form schemas to the restricted elicitation schema', async () => {
    const r = await mcp(url, 'tools/call', { name: 'pair', arguments: {} });
    const requests = r.response.result?.inputRequests as Record<
      string,
      { params: { requestedSchema: unknown } }
    >;
    expect(requests.q1?.params.requestedSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    expect(requests.q2?.params.requestedSchema).toEqual({
      type: 'object',
      properties: { choice: { type: 'string', enum: ['red', 'blue'] } },
      required: ['choice'],
    });
  });

  it('handles sampling and roots, and prompts and resources the same way', async () => {
    const sampled = await drive(url, 'tools/call', { name: 'sampler', arguments: {} }, ({ request }) =>
      request.method === 'roots/list'
        ? { roots: [{ uri: 'file:///w' }] }
        : { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' },
    );
    expect(textOf(sampled)).toBe('hello @ file:///w');
    expect(sampled.rounds).toBe(2);
    const prompt = await drive(url, 'prompts/get', { name: 'greet' }, () => accept({ text: 'Grace' }));
    expect(JSON.stringify(prompt.reply.response.result?.messages)).toContain('Greet Grace');
    const resource = await drive(url, 'resources/read', { uri: 'secret://doc' }, ({ request }) => {
      expect((request.params._meta as Record<string, unknown>)['dev.mrtr/humanRequired']).toBe('consent');
      return accept({ confirm: true });
    });
    expect(resource.reply.response.result).toMatchObject({
      contents: [{ text: 'the secret' }],
      ttlMs: 0,
      cacheScope: 'private',
    });
  });
});

describe('what the journal guarantees', () => {
  it('never lets a later round overwrite an answer already journaled', async () => {
    const r1 = await mcp(url, 'tools/call', { name: 'bug', arguments: { id: 5 } });
    const r2 = await mcp(url, 'tools/call', {
      name: 'bug',
      arguments: { id: 5 },
      requestState: r1.response.result?.requestState,
      inputResponses: { q1: accept({ resolution: 'Duplicate' }) },
    });
    expect(Object.keys(r2.response.result?.inputRequests as object)).toEqual(['q2']);
    // Round 3 tries to change the round-1 answer to Fixed while answering q2.
    const r3 = await mcp(url, 'tools/call', {
      name: 'bug',
      arguments: { id: 5 },
      requestState: r2.response.result?.requestState,
      inputResponses: { q1: accept({ resolution: 'Fixed' }), q2: accept({ original: 3 }) },
    });
    expect(Object.keys(r3.response.result?.inputRequests as object)).toEqual(['q3']);
    expect(
      ((r3.response.result?.inputRequests ?? {}) as Record<string, { params: { message: string } }>).q3
        ?.params.message,
    ).toBe('Close 5 as duplicate of 3?');
  });

  it('ignores answers to keys the previous round did not ask', async () => {
    const r1 = await mcp(url, 'tools/call', { name: 'bug', arguments: { id: 5 } });
    const r2 = await mcp(url, 'tools/call', {
      name: 'bug',
      arguments: { id: 5 },
      requestState: r1.response.result?.requestState,
      // q2 and q3 were not asked yet: pre-answering them must not skip the questions.
      inputResponses: {
        q1: accept({ resolution: 'Duplicate' }),
        q2: accept({ original: 1 }),
        q3: accept({ confirm: true }),
      },
    });
    expect(Object.keys(r2.response.result?.inputRequests as object)).toEqual(['q2']);
  });

  it('drops an answer given to a different question after a rolling upgrade (v1 asked, v2 serves)', async () => {
    const stateKeys = generateKeySpec(); // both versions of the fleet share one keyring
    const v1 = new McpServer({ name: 'up', version: '1', logger: quiet, stateKeys }).tool(
      { name: 'deploy', description: 'v1' },
      async (_a, { ask }) => text(`v1 ${await ask.text('Which environment?')}`),
    );
    const v2 = new McpServer({ name: 'up', version: '2', logger: quiet, stateKeys }).tool(
      { name: 'deploy', description: 'v2' },
      async (_a, { ask }) => {
        const region = await ask.choose('Which region?', ['eu', 'us']);
        return text(`v2 ${region}`);
      },
    );
    const [e1, e2] = await Promise.all([v1.listen({ port: 0 }), v2.listen({ port: 0 })]);
    try {
      const r1 = await mcp(e1.url, 'tools/call', { name: 'deploy', arguments: {} });
      expect(
        ((r1.response.result?.inputRequests ?? {}) as Record<string, { params: { message: string } }>).q1
          ?.params.message,
      ).toBe('Which environment?');
      const r2 = await mcp(e2.url, 'tools/call', {
        name: 'deploy',
        arguments: {},
        requestState: r1.response.result?.requestState,
        inputResponses: { q1: accept({ text: 'prod' }) },
      });
      const asked = r2.response.result?.inputRequests as Record<string, { params: { message: string } }>;
      expect(asked.q1?.params.message).toBe('Which region?');
      const r3 = await mcp(e2.url, 'tools/call', {
        name: 'deploy',
        arguments: {},
        requestState: r2.response.result?.requestState,
        inputResponses: { q1: accept({ choice: 'eu' }) },
      });
      expect(r3.response.result?.content).toEqual([{ type: 'text', text: 'v2 eu' }]);
    } finally {
      await Promise.all([e1.close(), e2.close()]);
    }
  });

  it('re-asks an invalid answer with the validation message, then ends the call past the limit', async () => {
    let state = (await mcp(url, 'tools/call', { name: 'age', arguments: {} })).response.result?.requestState;
    const messages: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await mcp(url, 'tools/call', {
        name: 'age',
        arguments: {},
        requestState: state,
        inputResponses: { q1: accept({ age: 12 }) },
      });
      const q = ((r.response.result?.inputRequests ?? {}) as Record<string, { params: { message: string } }>)
        .q1;
      messages.push(q?.params.message ?? '');
      state = r.response.result?.requestState;
    }
    expect(messages[0]).toContain('previous answer was not valid: age:');
    const last = await mcp(url, 'tools/call', {
      name: 'age',
      arguments: {},
      requestState: state,
      inputResponses: { q1: accept({ age: 12 }) },
    });
    expect(last.response.result).toMatchObject({ isError: true });
    expect(JSON.stringify(last.response.result?.content)).toContain('too many invalid answers');
    const fine = await drive(url, 'tools/call', { name: 'age', arguments: {} }, () => accept({ age: 30 }));
    expect(textOf(fine)).toBe('age 30');
  });
});

describe('outcomes and limits', () => {
  it('ends a tool call with a clear error when the person declines or cancels a form', async () => {
    for (const action of ['decline', 'cancel']) {
      const run = await drive(url, 'tools/call', { name: 'bug', arguments: { id: 2 } }, () => ({ action }));
      expect(run.reply.response.result?.isError).toBe(true);
      expect(textOf(run)).toBe(action === 'decline' ? 'declined by the user' : 'cancelled by the user');
    }
  });

  it('lets a handler take decline as a typed outcome', async () => {
    const run = await drive(url, 'tools/call', { name: 'typed_decline', arguments: {} }, () => ({
      action: 'decline',
    }));
    expect(textOf(run)).toBe('no email (decline)');
  });

  it('treats a declined confirmation as "no"', async () => {
    const run = await drive(url, 'tools/call', { name: 'pair', arguments: {} }, ({ key }) =>
      key === 'q3' ? { action: 'decline' } : key === 'q1' ? accept({ text: 'x' }) : accept({ choice: 'red' }),
    );
    expect(textOf(run)).toBe('not saved');
  });

  it('ends a flow at the round cap', async () => {
    const run = await drive(url, 'tools/call', { name: 'endless', arguments: {} }, ({ key }) =>
      accept({ text: key }),
    );
    expect(run.reply.response.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('Too many rounds'),
    });
    expect(run.rounds).toBe(5);
  });

  it('falls back when the client did not declare URL mode', async () => {
    const withUrl = await drive(url, 'tools/call', { name: 'sign_in', arguments: {} }, ({ request }) => {
      expect(request.params.mode).toBe('url');
      return { action: 'accept' };
    });
    expect(textOf(withUrl)).toBe('signed in via url');
    const r1 = await mcp(
      url,
      'tools/call',
      { name: 'sign_in', arguments: {} },
      {
        meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
      },
    );
    const q = (
      (r1.response.result?.inputRequests ?? {}) as Record<
        string,
        { params: { mode: string; message: string } }
      >
    ).q1;
    expect(q?.params).toMatchObject({ mode: 'form', message: 'Paste the sign-in code' });
  });

  it('runs a step once and replays its journaled result in later rounds', async () => {
    effects.length = 0;
    const run = await drive(url, 'tools/call', { name: 'effect', arguments: {} }, ({ key }) =>
      key === 'q1' ? accept({ text: 'printer' }) : accept({ confirm: true }),
    );
    expect(textOf(run)).toBe('notified T-1');
    expect(effects).toEqual(['printer']);
  });

  it('answers a handler that throws mid-flow with -32603 and keeps serving', async () => {
    const run = await drive(url, 'tools/call', { name: 'crash', arguments: {} }, () => accept({ text: 'x' }));
    expect(run.reply.response.error?.code).toBe(-32603);
    const after = await mcp(url, 'tools/list');
    expect(after.response.result?.tools).toBeDefined();
  });
});

describe('form definitions', () => {
  it('fails at definition time for schemas the wire cannot express', () => {
    expect(() => elicitationForm(z.object({ nested: z.object({ a: z.string() }) }))).toThrow(
      /form field "nested": nested objects/,
    );
    expect(() => elicitationForm(z.object({ list: z.array(z.number()) }))).toThrow(
      /multi-selects of string enum/,
    );
    expect(() => elicitationForm(z.object({ id: z.string().uuid() }))).toThrow(/string format "uuid"/);
  });

  it('keeps bounds, formats, defaults, enums and multi-selects', () => {
    const form = elicitationForm(
      z.object({
        email: z.string().email(),
        count: z.number().int().min(1).max(5).default(2),
        agree: z.boolean().default(false),
        size: z.enum(['S', 'M']).optional(),
        tags: z.array(z.enum(['a', 'b'])).min(1),
      }),
    );
    expect(form.requestedSchema.properties).toEqual({
      email: { type: 'string', format: 'email' },
      count: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
      agree: { type: 'boolean', default: false },
      size: { type: 'string', enum: ['S', 'M'] },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1 },
    });
    expect(form.parse({ email: 'x', tags: [] })).toMatchObject({ ok: false });
    expect(form.parse({ email: 'a@b.co', tags: ['a'] })).toEqual({
      ok: true,
      value: { email: 'a@b.co', count: 2, agree: false, tags: ['a'] },
    });
  });
});

describe('what a review found', () => {
  it('finishes and journals a step that was running when the round ended, so it runs once', async () => {
    let runs = 0;
    const server = new McpServer({ name: 'steps', version: '1', logger: quiet }).tool(
      { name: 'charge', description: 'a step beside a question' },
      async (_a, { ask }) => {
        const [receipt, ok] = await ask.all([
          ask.step('charge-card', async () => {
            // The round ends one event-loop turn after the question parks; two turns keep the step running then.
            for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
            runs++;
            return `rcpt-${runs}`;
          }),
          ask.confirm('Send the receipt?'),
        ]);
        return text(`${receipt} ${ok}`);
      },
    );
    const e = await server.listen({ port: 0 });
    try {
      const run = await drive(e.url, 'tools/call', { name: 'charge', arguments: {} }, () =>
        accept({ confirm: true }),
      );
      expect(textOf(run)).toBe('rcpt-1 true');
      expect(runs).toBe(1);
    } finally {
      await e.close();
    }
  });

  it('refuses a handler that uses ctx.ask and also answers input_required by hand (-32603)', async () => {
    const server = new McpServer({ name: 'mixed', version: '1', logger: quiet }).tool(
      { name: 'mixed', description: 'mixes both APIs' },
      async (_a, ctx) => {
        const env = await ctx.ask.choose('Which environment?', ['dev', 'prod']);
        return inputRequired({ state: { env } });
      },
    );
    const e = await server.listen({ port: 0 });
    try {
      const r1 = await mcp(e.url, 'tools/call', { name: 'mixed', arguments: {} });
      const r2 = await mcp(e.url, 'tools/call', {
        name: 'mixed',
        arguments: {},
        requestState: r1.response.result?.requestState,
        inputResponses: { q1: accept({ choice: 'dev' }) },
      });
      expect(r2.response.error?.code).toBe(-32603);
    } finally {
      await e.close();
    }
  });
});
