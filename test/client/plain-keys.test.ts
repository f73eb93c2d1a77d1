// Names a server chooses — input keys, form field names — that spell Object.prototype members (`__proto__`,
// `constructor`, `prototype`) are plain keys to the client: answered, sent and checked like any other.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type InputQuestion,
  McpClient,
  parseInputRequired,
  scriptedResolver,
  terminalResolver,
} from '../../src/client/index.js';
import { checkContent, readForm } from '../../src/client/internal.js';
import type { JsonObject } from '../../src/protocol/index.js';
import { askThenEchoServer, confirmForm, type FakeServer } from './helpers.js';

const KEYS = ['__proto__', 'constructor', 'prototype'];
// Built from JSON so that `__proto__` is an own key, as it is in anything parsed off the wire.
const byKey = (value: (key: string) => unknown): JsonObject =>
  JSON.parse(`{${KEYS.map((k) => `${JSON.stringify(k)}:${JSON.stringify(value(k))}`).join(',')}}`);

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('input keys', () => {
  it('answers and sends inputResponses under __proto__, constructor and prototype', async () => {
    server = await askThenEchoServer(byKey((k) => confirmForm(`${k}?`)));
    const answers = byKey((k) => ({ action: 'accept', content: { confirm: k !== 'constructor' } }));
    const client = new McpClient({ server: server.url, resolvers: [scriptedResolver(answers as never)] });
    const outcome = await client.callTool('t');
    await client.close();
    expect(outcome.status).toBe('complete');
    if (outcome.status !== 'complete') return;
    const sent = JSON.parse((outcome.result.content[0] as { text: string }).text);
    expect(Object.keys(sent)).toEqual(KEYS);
    expect(Object.getOwnPropertyDescriptor(sent, '__proto__')?.value).toEqual({
      action: 'accept',
      content: { confirm: true },
    });
    expect(sent.constructor).toEqual({ action: 'accept', content: { confirm: false } });
  });
});

describe('form field names', () => {
  const requestedSchema = {
    type: 'object',
    properties: byKey(() => ({ type: 'string' })),
    required: KEYS,
  };

  it('an unanswered field named constructor is missing, not answered by Object', () => {
    const fields = readForm(requestedSchema);
    expect(fields.map((f) => f.name)).toEqual(KEYS);
    expect(checkContent(fields, JSON.parse('{"__proto__":"a","prototype":"c"}'))).toBe(
      'constructor is required',
    );
    expect(
      checkContent(fields, JSON.parse('{"__proto__":"a","constructor":"b","prototype":"c"}')),
    ).toBeUndefined();
  });

  it('the terminal resolver collects and sends every one of them', async () => {
    const parsed = parseInputRequired(
      {
        resultType: 'input_required',
        inputRequests: {
          q: { method: 'elicitation/create', params: { message: 'Fill in', requestedSchema } },
        },
      },
      new Set(['elicitation.form']),
    );
    const input = new PassThrough();
    const output = new PassThrough();
    output.resume();
    const r = terminalResolver({ input, output, color: false, review: false });
    input.write('a\nb\nc\n');
    const ctx = {
      signal: new AbortController().signal,
      round: 1,
      method: 'tools/call',
      target: 't',
      server: 's',
    };
    const answer = await r.resolve(parsed.questions[0] as InputQuestion, ctx);
    r.close();
    expect(JSON.parse(JSON.stringify(answer))).toEqual({
      action: 'accept',
      content: JSON.parse('{"__proto__":"a","constructor":"b","prototype":"c"}'),
    });
  });
});
