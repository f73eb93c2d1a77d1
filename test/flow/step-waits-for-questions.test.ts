// Promise: a step waits while a question is outstanding. An effect reached in a round that still waits on an answer
// does not run in that round (the answer may change what it should do); it runs once, in the round that has it.
import { describe, expect, it } from 'vitest';
import type { Ask } from '../../src/flow/index.js';
import { accept, asking, round } from './engine.js';

let effects: string[];
const effect = (name: string) => () => {
  effects.push(name);
  return `${name}-done`;
};

describe('a step waits while a question is outstanding', () => {
  it('does not run a step placed after a question in Promise.all until that question is answered', async () => {
    effects = [];
    const body = async (ask: Ask) => {
      const [who, ticket] = await Promise.all([
        ask.text('Assignee?'),
        ask.step('open-ticket', effect('open')),
      ]);
      return `${ticket} for ${who}`;
    };
    // Round 1 ends with the question alone: the waiting step neither runs nor holds the round open.
    const r1 = asking(await round(body));
    expect(Object.keys(r1.inputRequests)).toEqual(['q1']);
    expect(r1.journal.e).toEqual([]);
    expect(effects).toEqual([]);

    const r2 = await round(body, { journal: r1.journal, inputResponses: { q1: accept({ text: 'ann' }) } });
    expect(r2).toMatchObject({ kind: 'complete', result: 'open-done for ann' });
    expect(effects).toEqual(['open']);
  });

  it('does not run a step that follows a question the handler did not await', async () => {
    effects = [];
    const body = async (ask: Ask) => {
      const pendingName = ask.text('Name?');
      const ticket = ask.step('open-ticket', effect('open'));
      return `${await ticket} for ${await pendingName}`;
    };
    const r1 = asking(await round(body));
    expect(Object.keys(r1.inputRequests)).toEqual(['q1']);
    expect(r1.journal.e).toEqual([]);
    expect(effects).toEqual([]);

    const r2 = await round(body, { journal: r1.journal, inputResponses: { q1: accept({ text: 'bo' }) } });
    expect(r2).toMatchObject({ kind: 'complete', result: 'open-done for bo' });
    expect(effects).toEqual(['open']);
  });

  it('still runs a step placed before the question in the same round (nothing was outstanding yet)', async () => {
    effects = [];
    const body = async (ask: Ask) => {
      const [ticket, who] = await ask.all([ask.step('open-ticket', effect('open')), ask.text('Assignee?')]);
      return `${ticket} for ${who}`;
    };
    const r1 = asking(await round(body));
    expect(effects).toEqual(['open']);
    const r2 = await round(body, { journal: r1.journal, inputResponses: { q2: accept({ text: 'cy' }) } });
    expect(r2).toMatchObject({ kind: 'complete', result: 'open-done for cy' });
    expect(effects).toEqual(['open']);
  });
});

describe('a waiting step over the server', () => {
  it('answers input_required at once instead of holding the round until the time limit', async () => {
    const { McpServer, text } = await import('../../src/server/index.js');
    const ran: string[] = [];
    const server = new McpServer({
      name: 's',
      version: '1',
      logger: { info() {}, warn() {}, error() {} },
    }).tool(
      { name: 't', description: 'A step beside an unanswered question', timeoutMs: 60_000 },
      async (_args, { ask }) => {
        const [who] = await Promise.all([ask.text('Who?'), ask.step('s', () => void ran.push('step'))]);
        return text(`hi ${who}`);
      },
    );
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    // Were the round to wait for its 60 s limit, this would outlast the 30 s test timeout and fail.
    const response = await server.core.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: meta, name: 't', arguments: {} } },
      env,
    );
    expect(response).toMatchObject({ result: { resultType: 'input_required', inputRequests: { q1: {} } } });
    expect(ran).toEqual([]);
  });
});
