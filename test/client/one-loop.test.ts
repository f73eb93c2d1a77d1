// McpClient drives every call through one round loop: an MRTR tools/call, a call the server turns into a task, a task
// followed by id, and a 2025 server asking in-band all stop at the same round cap, after the same number of answered
// rounds, with the same outcome. A path with a loop of its own would count differently (or not at all) and fail here.
// The server side is an in-memory transport: no network, no timers but the task's shortest poll.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClientTransport,
  McpClient,
  type MrtrEvent,
  type MrtrOutcome,
  scriptedResolver,
} from '../../src/client/index.js';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';

const FORM = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Go on?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  },
};
const TIMES = { createdAt: '2026-01-01T00:00:00Z', lastUpdatedAt: '2026-01-01T00:00:00Z', ttlMs: 60_000 };
/** A task that asks one question it has never asked before each time it is looked at. */
const askingTask = (n: number): JsonObject => ({
  taskId: 't1',
  status: 'input_required',
  pollIntervalMs: 100,
  inputRequests: { [`k${n}`]: FORM },
  ...TIMES,
});
/** Bytes a client must not normalise: the loop sends requestState back exactly as it came. */
const STATE = ' é\u0000+/= ';

const ok = (id: JsonRpcRequest['id'], result: JsonObject): JsonRpcResponse =>
  ({ jsonrpc: '2.0', id, result }) as unknown as JsonRpcResponse;

/** A server that never stops asking: over MRTR, as a task, or (legacy) mid-call with elicitation requests. */
function neverSatisfied(era: 'modern' | 'legacy') {
  const states: unknown[] = [];
  let asked = 0;
  let looks = 0;
  const transport: ClientTransport = {
    kind: 'stdio',
    label: 'in-memory',
    close: async () => {},
    legacy: {
      beginSession: () => {},
      resetSession: () => {},
      notify: async () => {},
      listen: () => {},
    },
    async send({ message, signal, onServerRequest }) {
      const { id, method, params = {} } = message;
      if (method === 'initialize')
        return ok(id, {
          protocolVersion: '2025-11-25',
          capabilities: {},
          serverInfo: { name: 'x', version: '1' },
        });
      if (method === 'tasks/get') return ok(id, { resultType: 'complete', ...askingTask(++looks + 1) });
      if (method === 'tasks/update') return ok(id, { resultType: 'complete' });
      if (method === 'tasks/cancel') return ok(id, { resultType: 'complete' });
      if (params.name === 'task') return ok(id, { resultType: 'task', ...askingTask(1) });
      if (era === 'modern') {
        states.push(params.requestState);
        return ok(id, {
          resultType: 'input_required',
          inputRequests: { [`q${++asked}`]: FORM },
          requestState: STATE,
        });
      }
      // 2025: ask, wait for the answer, ask again, until the client stops the call (it aborts the request).
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        await onServerRequest?.({
          jsonrpc: '2.0',
          id: `s${++asked}`,
          method: 'elicitation/create',
          params: FORM.params,
        });
      }
    },
  };
  const client = new McpClient({
    server: transport,
    protocol: era === 'modern' ? '2026-07-28' : '2025-11-25',
    capabilities: { elicitation: { form: {} } },
    resolvers: [scriptedResolver({}, { fallback: () => ({ action: 'accept', content: { ok: true } }) })],
  });
  return { client, states };
}

let clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});

type Path = (maxRounds: number, onEvent: (e: MrtrEvent) => void) => Promise<MrtrOutcome>;
const paths: Record<string, Path> = {
  'MRTR tools/call': (maxRounds, onEvent) => use('modern').callTool('asks', {}, { maxRounds, onEvent }),
  'a call that becomes a task': (maxRounds, onEvent) =>
    use('modern').callTool('task', {}, { maxRounds, onEvent }),
  'followTask by id': (maxRounds, onEvent) =>
    use('modern').followTask('t1', { task: askingTask(1) as never, maxRounds, onEvent }),
  'a 2025 server asking in-band': (maxRounds, onEvent) =>
    use('legacy').callTool('asks', {}, { maxRounds, onEvent }),
};
function use(era: 'modern' | 'legacy'): McpClient {
  const { client } = neverSatisfied(era);
  clients.push(client);
  return client;
}

describe('one round loop under every path', () => {
  for (const maxRounds of [0, 1, 2])
    it(`maxRounds ${maxRounds}: each path answers exactly ${maxRounds} rounds, then ends at the round cap`, async () => {
      for (const [name, run] of Object.entries(paths)) {
        const events: MrtrEvent[] = [];
        const outcome = await run(maxRounds, (e) => events.push(e));
        const answered = events.filter((e) => e.type === 'answered').length;
        const done = events.filter((e) => e.type === 'done');
        expect({ name, status: outcome.status, answered }).toEqual({
          name,
          status: 'round_cap',
          answered: maxRounds,
        });
        expect(outcome).toMatchObject({
          maxRounds,
          pending: [expect.objectContaining({ kind: 'elicitation.form' })],
        });
        // The loop reports its end once, with the rounds it counted: a tools/call and each reply (none for a poll).
        const sent = name === 'followTask by id' ? maxRounds : maxRounds + 1;
        expect(done).toEqual([{ type: 'done', status: 'round_cap', rounds: sent }]);
        expect(outcome.rounds).toBe(sent);
      }
    });

  it('every MRTR round after the first carries the requestState exactly as the server sent it', async () => {
    const { client, states } = neverSatisfied('modern');
    clients.push(client);
    await client.callTool('asks', {}, { maxRounds: 2 });
    expect(states).toEqual([undefined, STATE, STATE]);
  });
});

describe('the loop is the only one', () => {
  // What makes a loop a loop: answering a round's questions through the resolvers, and ending a call at the cap.
  // A second loop (a path answering or capping on its own) would show up here by name.
  const dir = join(import.meta.dirname, '../../src/client');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  const using = (needle: string) => files.filter((f) => readFileSync(join(dir, f), 'utf8').includes(needle));

  it('only round-loop.ts answers questions through the resolvers and ends a call at the round cap', () => {
    expect(using('answerQuestions(')).toEqual(['answer-questions.ts', 'round-loop.ts']);
    expect(using("status: 'round_cap',")).toEqual(['round-loop.ts']);
  });
});
