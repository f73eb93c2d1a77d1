// Promise: only what a question reads is journaled. Fields a client adds to an answer (extra form fields, _meta,
// extra result properties) never enter the journal, so they never reach the sealed requestState.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Ask } from '../../src/flow/index.js';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { McpServer, SealedStateCodec, type StateEnvelope, text } from '../../src/server/index.js';
import { createEphemeralKeyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';
import { asking, round } from './engine.js';

const padding = { _meta: { 'example.com/trace': 'client-junk' }, extra: 'client-junk' };

/** Ask one question, then a second one so that the round after the answer still seals a journal. */
async function journalAfter(ask1: (ask: Ask) => Promise<unknown>, response: unknown) {
  const body = async (ask: Ask) => {
    await ask1(ask);
    await ask.text('And then?');
  };
  const r1 = asking(await round(body));
  const r2 = asking(await round(body, { journal: r1.journal, inputResponses: { q1: response } }));
  expect(Object.keys(r2.inputRequests)).toEqual(['q2']);
  return r2.journal.e;
}

describe('only what a question reads is journaled', () => {
  it('keeps a form answer to the action and the form fields', async () => {
    const e = await journalAfter((ask) => ask.form('Contact?', z.object({ email: z.string() })), {
      action: 'accept',
      content: { email: 'a@b.co', extra: 'client-junk' },
      ...padding,
    });
    expect(e).toEqual([
      { p: 1, h: expect.any(String), a: { action: 'accept', content: { email: 'a@b.co' } } },
    ]);
  });

  it('keeps only the action of a declined form', async () => {
    const e = await journalAfter((ask) => ask.elicit('Contact?', z.object({ email: z.string() })), {
      action: 'decline',
      content: { email: 'a@b.co' },
      ...padding,
    });
    expect(e.map((x) => x.a)).toEqual([{ action: 'decline' }]);
  });

  it('keeps only the action of a URL elicitation', async () => {
    const e = await journalAfter((ask) => ask.url('Sign in', 'https://login.example.com/'), {
      action: 'accept',
      content: { token: 'client-junk' },
      ...padding,
    });
    expect(e.map((x) => x.a)).toEqual([{ action: 'accept' }]);
  });

  it('keeps role, content, model and stopReason of a sampling result', async () => {
    const sample = (ask: Ask) =>
      ask.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 });
    const content = { type: 'text', text: 'hello' };
    const withStop = await journalAfter(sample, {
      role: 'assistant',
      content,
      model: 'm',
      stopReason: 'endTurn',
      ...padding,
    });
    expect(withStop.map((x) => x.a)).toEqual([
      { role: 'assistant', content, model: 'm', stopReason: 'endTurn' },
    ]);
    const withoutStop = await journalAfter(sample, { role: 'assistant', content, model: 'm', ...padding });
    expect(withoutStop.map((x) => x.a)).toEqual([{ role: 'assistant', content, model: 'm' }]);
  });

  it('keeps uri and name of each root', async () => {
    const e = await journalAfter((ask) => ask.roots(), {
      roots: [
        { uri: 'file:///a', name: 'a', _meta: { x: 1 }, extra: 'client-junk' },
        { uri: 'file:///b', extra: 'client-junk' },
      ],
      ...padding,
    });
    expect(e.map((x) => x.a)).toEqual([{ roots: [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }] }]);
  });

  it('seals no client-added field into the next requestState (end to end through the server)', async () => {
    const codec = new SealedStateCodec({ keyring: createEphemeralKeyring(), audience: 'journal' });
    const server = new McpServer({ name: 'journal', version: '1', stateCodec: codec }).tool(
      { name: 'contact', description: 'two questions' },
      async (_args, { ask }) => {
        const { email } = await ask.form('Contact?', z.object({ email: z.string() }));
        const ok = await ask.confirm(`Write to ${email}?`);
        return text(String(ok));
      },
    );
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    const call = async (id: number, extra: Record<string, unknown>) => {
      const request: JsonRpcRequest = {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'contact', arguments: {}, _meta: META, ...extra },
      };
      const reply = await server.core.handle(request, env);
      if (!reply || !('result' in reply) || typeof reply.result.requestState !== 'string')
        throw new Error(`expected input_required, got ${JSON.stringify(reply)}`);
      return { requestState: reply.result.requestState };
    };
    const r1 = await call(1, {});
    const r2 = await call(2, {
      requestState: r1.requestState,
      inputResponses: {
        q1: { action: 'accept', content: { email: 'a@b.co', extra: 'client-junk' }, ...padding },
      },
    });
    const opened = codec.open(r2.requestState, {
      principal: undefined,
      method: 'tools/call',
      target: 'contact',
      arguments: {},
    });
    if (!opened.ok) throw new Error(`state did not open: ${opened.reason}`);
    const envelope: StateEnvelope = opened.envelope;
    expect(envelope.journal?.e.map((x) => x.a)).toEqual([{ action: 'accept', content: { email: 'a@b.co' } }]);
    expect(JSON.stringify(envelope)).not.toContain('client-junk');
  });
});
