// ask.forward on the flow engine alone: an upstream's InputRequest is asked under the flow's own key, with none of
// the upstream's _meta unless named, its answer checked by kind and journaled as the handler saw it, and a request
// that is not a valid InputRequest (or too large) refused before it takes a position.
import { describe, expect, it } from 'vitest';
import type { Ask, ForwardOptions } from '../../src/flow/index.js';
import type { InputRequest } from '../../src/protocol/index.js';
import { asking, messageOf, round } from './engine.js';

const form = (meta?: Record<string, unknown>) =>
  ({
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: 'Deploy where?',
      requestedSchema: {
        type: 'object',
        properties: {
          env: { type: 'string', enum: ['staging', 'production'] },
          replicas: { type: 'integer', minimum: 1, maximum: 5 },
        },
        required: ['env'],
      },
      ...(meta ? { _meta: meta } : {}),
    },
  }) as InputRequest;

const forwardOnce = (request: unknown, options?: ForwardOptions) => async (ask: Ask) => {
  const answer = await ask.forward(request as InputRequest, options);
  await ask.text('And then?'); // keeps the flow open one more round, so the answer's journal entry is sealed
  return answer;
};

describe('ask.forward asks under the flow’s own key', () => {
  it('sends the upstream’s request as written, keyed q<position> or by options.key', async () => {
    const body = async (ask: Ask) => {
      await ask.confirm('Relay the deploy service’s questions?');
      return ask.forward(form());
    };
    const r1 = asking(await round(body));
    const r2 = asking(
      await round(body, {
        journal: r1.journal,
        inputResponses: { q1: { action: 'accept', content: { confirm: true } } },
      }),
    );
    expect(r2.inputRequests).toEqual({ q2: form() });
    const keyed = asking(await round((ask) => ask.forward(form(), { key: 'upstream-1' })));
    expect(Object.keys(keyed.inputRequests)).toEqual(['upstream-1']);
  });

  it('asks what the upstream sent when forward was called, whatever the forwarding code changes afterwards', async () => {
    const r1 = asking(
      await round((ask) => {
        const request = form();
        const asked = ask.forward(request);
        (request.params as { requestedSchema: { required: string[] } }).requestedSchema.required.push(
          'replicas',
        );
        return asked;
      }),
    );
    expect(r1.inputRequests.q1).toEqual(form());
  });

  it('refuses a request before it takes a position: the next question is still q1', async () => {
    const body = async (ask: Ask) => {
      const refused = await ask.forward({ method: 'tools/call', params: {} } as never).catch((e: Error) => e);
      return [refused, await ask.text('Name?')];
    };
    const r1 = asking(await round(body));
    expect(Object.keys(r1.inputRequests)).toEqual(['q1']);
  });
});

describe('the upstream’s _meta', () => {
  const upstreamMeta = {
    'dev.mrtr/humanRequired': 'second_factor',
    progressToken: 'upstream-token',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    'io.modelcontextprotocol/related-task': { taskId: 't1' },
    'com.example/ui': { width: 2 },
  };

  it('drops all of it by default: no upstream can set mrtr’s hints or MCP’s reserved keys', async () => {
    const r1 = asking(await round((ask) => ask.forward(form(upstreamMeta))));
    expect(r1.inputRequests.q1).toEqual(form());
  });

  it('passes the vendor keys passMeta names, and the hint only from options.humanRequired', async () => {
    const r1 = asking(
      await round((ask) =>
        ask.forward(form(upstreamMeta), {
          passMeta: ['com.example/ui', 'com.example/absent'],
          humanRequired: 'consent',
        }),
      ),
    );
    expect(r1.inputRequests.q1?.params).toHaveProperty('_meta', {
      'com.example/ui': { width: 2 },
      'dev.mrtr/humanRequired': 'consent',
    });
  });

  it('refuses a passMeta naming mrtr’s own hints or a key MCP reserves', async () => {
    for (const key of [
      'dev.mrtr/humanRequired',
      'dev.mrtr/anything',
      'progressToken',
      'io.modelcontextprotocol/x',
    ]) {
      await expect(
        round((ask) => ask.forward(form(upstreamMeta), { passMeta: [key] })),
      ).rejects.toMatchObject({
        code: 'ERR_FLOW_USAGE',
        message: expect.stringContaining(`passMeta cannot relay "${key}"`),
      });
    }
  });
});

describe('answers to a relayed question', () => {
  it('checks an accepted form against its requestedSchema and asks again with what was wrong', async () => {
    const body = forwardOnce(form(), { maxInvalidAnswers: 1 });
    const r1 = asking(await round(body));
    const bad = { action: 'accept', content: { env: 'staging', replicas: 9 } };
    const r2 = asking(await round(body, { journal: r1.journal, inputResponses: { q1: bad } }));
    expect(messageOf(r2, 'q1')).toBe(
      'Deploy where?\n(Your previous answer was not valid: replicas must be <= 5)',
    );
    const missing = { action: 'accept', content: { replicas: 2 } };
    const r3 = await round(body, { journal: r2.journal, inputResponses: { q1: missing } });
    expect(r3).toMatchObject({ kind: 'ended', error: { reason: 'invalid_answers' } });
    expect(r3.kind === 'ended' && r3.error.message).toMatch(
      /too many invalid answers \(1\): .*required property 'env'/,
    );
  });

  it('gives the handler the form’s fields only, and the same value again from the journal', async () => {
    const seen: unknown[] = [];
    const body = async (ask: Ask) => {
      seen.push(await ask.forward(form()));
      await ask.text('And then?');
    };
    const r1 = asking(await round(body));
    const answer = {
      action: 'accept',
      content: { env: 'staging', smuggled: 'for the upstream' },
      _meta: { 'com.example/client': 1 },
    };
    const r2 = asking(await round(body, { journal: r1.journal, inputResponses: { q1: answer } }));
    await round(body, { journal: r2.journal, inputResponses: {} });
    expect(seen).toEqual([
      { action: 'accept', content: { env: 'staging' } },
      { action: 'accept', content: { env: 'staging' } },
    ]);
    expect(r2.journal.e[0]?.a).toEqual({ action: 'accept', content: { env: 'staging' } });
  });

  it('relays decline and cancel as answers, without content', async () => {
    for (const action of ['decline', 'cancel']) {
      const body = forwardOnce(form());
      const r1 = asking(await round(body));
      const r2 = asking(
        await round(body, { journal: r1.journal, inputResponses: { q1: { action, content: { env: 'x' } } } }),
      );
      expect(r2.journal.e[0]?.a).toEqual({ action });
    }
  });

  it('keeps a URL-mode answer to its action, a sampling result to its members, roots to uri and name', async () => {
    const cases: Array<[unknown, unknown, unknown]> = [
      [
        {
          method: 'elicitation/create',
          params: { mode: 'url', message: 'Sign in', url: 'https://id.example/x' },
        },
        { action: 'accept', content: { token: 'junk' } },
        { action: 'accept' },
      ],
      [
        { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
        { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', _meta: { x: 1 }, extra: 2 },
        { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' },
      ],
      [
        { method: 'roots/list' },
        { roots: [{ uri: 'file:///w', name: 'w', _meta: { x: 1 } }], extra: 2 },
        { roots: [{ uri: 'file:///w', name: 'w' }] },
      ],
    ];
    for (const [request, response, kept] of cases) {
      const body = forwardOnce(request);
      const r1 = asking(await round(body));
      expect(r1.inputRequests.q1).toEqual(request);
      const r2 = asking(await round(body, { journal: r1.journal, inputResponses: { q1: response } }));
      expect(r2.journal.e[0]?.a).toEqual(kept);
    }
  });

  it('checks fields named like Object’s members as fields', async () => {
    const request = {
      method: 'elicitation/create',
      params: {
        message: 'x',
        requestedSchema: {
          type: 'object',
          properties: { constructor: { type: 'string' } },
          required: ['constructor'],
        },
      },
    };
    const body = forwardOnce(request);
    const r1 = asking(await round(body));
    const r2 = asking(
      await round(body, { journal: r1.journal, inputResponses: { q1: { action: 'accept', content: {} } } }),
    );
    expect(messageOf(r2, 'q1')).toContain("must have required property 'constructor'");
    const r3 = asking(
      await round(body, {
        journal: r2.journal,
        inputResponses: { q1: { action: 'accept', content: { constructor: 'c' } } },
      }),
    );
    expect(r3.journal.e[0]?.a).toEqual({ action: 'accept', content: { constructor: 'c' } });
  });
});

describe('requests ask.forward refuses up front', () => {
  const refused = async (request: unknown, message: string | RegExp, options?: ForwardOptions) =>
    expect(round((ask) => ask.forward(request as InputRequest, options))).rejects.toMatchObject({
      code: 'ERR_FLOW_USAGE',
      message:
        typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
    });

  it('names what is wrong with a request that is not a valid InputRequest', async () => {
    await refused(undefined, 'not an InputRequest: got nothing to relay');
    await refused(
      { method: 'tools/call', params: {} },
      'not an InputRequest: the method must be elicitation/create',
    );
    await refused(
      { method: 'elicitation/create', params: { mode: 'popup', message: 'x' } },
      'not an InputRequest: the method must be',
    );
    await refused(
      { method: 'elicitation/create', params: { message: 'x' } },
      "not a valid elicitation/create (form mode) request: params (root) must have required property 'requestedSchema'",
    );
    await refused(
      {
        method: 'elicitation/create',
        params: { message: 'x', requestedSchema: { type: 'object', properties: { a: { type: 'object' } } } },
      },
      'not a valid elicitation/create (form mode) request: params requestedSchema/properties/a/type must be',
    );
    await refused(
      { method: 'elicitation/create', params: { mode: 'url', message: 'x', url: 'not a url' } },
      'not a valid elicitation/create (url mode) request: params url must match format "uri"',
    );
    await refused(
      { method: 'sampling/createMessage', params: { messages: [] } },
      "not a valid sampling/createMessage request: request params must have required property 'maxTokens'",
    );
  });

  it("drops a sampling request's context from other servers and refuses one with tools", async () => {
    const sample = (extra: Record<string, unknown>) =>
      ({
        method: 'sampling/createMessage',
        params: { messages: [], maxTokens: 5, ...extra },
      }) as InputRequest;
    const r1 = asking(await round((ask) => ask.forward(sample({ includeContext: 'allServers' }))));
    expect(r1.inputRequests.q1).toEqual(sample({}));
    const none = asking(await round((ask) => ask.forward(sample({ includeContext: 'none' }))));
    expect(none.inputRequests.q1).toEqual(sample({ includeContext: 'none' }));
    await refused(sample({ tools: [] }), 'a sampling request with tools cannot be relayed');
  });

  it('refuses a form whose schema cannot be checked', async () => {
    const negative = { type: 'object', properties: { a: { type: 'string', minLength: -1 } } };
    await refused(
      { method: 'elicitation/create', params: { message: 'x', requestedSchema: negative } },
      "the form's requestedSchema cannot be checked",
    );
  });

  it('refuses a form with a field named __proto__, whose answer no validator would check', async () => {
    const request = JSON.parse(
      '{"method":"elicitation/create","params":{"message":"x","requestedSchema":{"type":"object",' +
        '"properties":{"__proto__":{"type":"string","minLength":2}}}}}',
    );
    await refused(request, 'the form\'s field "__proto__" cannot be checked');
  });

  it('bounds the request’s size and depth, and refuses what is not JSON', async () => {
    const big = {
      method: 'elicitation/create',
      params: { mode: 'url', message: 'x'.repeat(200), url: 'https://a.example/' },
    };
    await refused(big, /the request is \d+ bytes of JSON, more than the 100 a relayed question may be/, {
      maxBytes: 100,
    });
    await refused(big, 'maxBytes must be a positive integer, got 0', { maxBytes: 0 });
    await refused(big, 'passMeta must be an array', { passMeta: 'com.example/ui' as never });
    let deep: Record<string, unknown> = {};
    const params = { messages: [{ role: 'user', content: deep }], maxTokens: 5 };
    for (let i = 0; i < 70; i++) deep = deep.next = {};
    await refused({ method: 'sampling/createMessage', params }, 'the request nests deeper than 64 levels');
    const looped: Record<string, unknown> = { method: 'roots/list' };
    looped.params = { _meta: { 'com.example/self': looped } };
    await refused(looped, 'the request nests deeper than 64 levels');
    await refused({ method: 'roots/list', params: { n: 1n } }, 'the request is not JSON');
  });
});
