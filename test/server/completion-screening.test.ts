// completion/complete runs author code (a prompt's or template's completer): it passes the same screening as the
// handler it completes for — every guard's `screen`, so a refusal limit's 429 as well as requiredScopes' 403 — and
// the same time limit, whatever the completer returns; completions are not observed (docs/architecture.md).
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, type RoundEvent, type RoundGuard, RoundRefused } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';

const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 5).toString('base64url')}`);
const warnings: Array<[Record<string, unknown>, string]> = [];
const errors: unknown[] = [];
const logger = {
  info() {},
  warn: (o: Record<string, unknown>, m: string) => warnings.push([o, m]),
  error: (o: unknown) => errors.push(o),
};

let completerRuns = 0;
function server(options: { guards?: RoundGuard[]; observed?: RoundEvent[]; store?: MemoryStore } = {}) {
  return new McpServer({
    name: 'completions',
    version: '1',
    stateKeys: KEYS,
    logger,
    ...(options.guards ? { guards: options.guards } : {}),
    ...(options.observed
      ? { observers: [{ observe: (e: RoundEvent) => void options.observed!.push(e) }] }
      : {}),
    ...(options.store ? { replayStore: options.store, replay: { refusals: { maxRefusals: 2 } } } : {}),
  })
    .prompt(
      {
        name: 'review',
        description: 'Review code',
        arguments: [{ name: 'language' }, { name: 'never' }, { name: 'garbage' }],
        timeoutMs: 20,
        complete: {
          language: (v) => {
            completerRuns++;
            return { values: ['python', 'perl'].filter((x) => x.startsWith(v)) };
          },
          // A thenable that is not a Promise (a query builder's, another library's): still bound by the time limit.
          // biome-ignore lint/suspicious/noThenProperty: the point of the test is a thenable that is not a Promise.
          never: () => ({ then() {} }) as never,
          garbage: () => ({ values: 'python' }) as never,
        },
      },
      () => ({ messages: [] }),
    )
    .tool({ name: 'ask', description: 'Asks once' }, async (_a, ctx) => {
      await ctx.ask.confirm('Sure?', { key: 'sure' });
      return { content: [] };
    });
}

let ids = 0;
const request = (method: string, params: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: ++ids,
  method,
  params: { _meta: META, ...params },
});
const complete = (name: string, value = 'p') =>
  request('completion/complete', { ref: { type: 'ref/prompt', name: 'review' }, argument: { name, value } });

async function send(s: McpServer, req: JsonRpcRequest, subject = 'alice') {
  let status: number | undefined;
  let headers: Record<string, string> = {};
  const env = {
    principal: { subject },
    signal: new AbortController().signal,
    notify() {},
    overrideHttpStatus(s: number, h: Record<string, string>) {
      status = s;
      headers = h;
    },
  };
  const response = (await s.core.handle(req, env)) as JsonRpcResponse & {
    error?: { code: number; message: string };
    result?: Record<string, unknown>;
  };
  return { response, status, headers };
}

describe('completion/complete is screened like the round it completes for', () => {
  it('a principal past its refusal limit gets the 429 with Retry-After, and its completer never runs', async () => {
    const s = server({ store: new MemoryStore() });
    // Mallory presents forged states until the refusal limit (2) slows her.
    for (let i = 0; i < 3; i++)
      await send(
        s,
        request('tools/call', { name: 'ask', arguments: {}, requestState: `forged-${i}` }),
        'mallory',
      );
    completerRuns = 0;
    const slowed = await send(s, complete('language'), 'mallory');
    expect(slowed.status).toBe(429);
    expect(slowed.headers['retry-after']).toMatch(/^\d+$/);
    expect(slowed.response.error?.message).toMatch(/too many refused/i);
    expect(completerRuns).toBe(0);
    expect(warnings.at(-1)).toEqual([
      expect.objectContaining({
        method: 'completion/complete',
        target: 'review',
        reason: expect.any(String),
      }),
      'completion refused',
    ]);
    // Another principal is not slowed.
    const alice = await send(s, complete('language'));
    expect(alice.response.result?.completion).toEqual({ values: ['python', 'perl'] });
    expect(completerRuns).toBe(1);
  });

  it('every guard screens it, seeing the prompt it completes for and who asks', async () => {
    const seen: unknown[] = [];
    const denyMallory: RoundGuard = {
      name: 'deny-mallory',
      admit() {},
      screen(round) {
        seen.push({ method: round.method, target: round.target, who: round.principal?.subject });
        if (round.principal?.subject === 'mallory')
          throw new RoundRefused('denied', { code: -32600, message: 'Not for you', httpStatus: 403 });
      },
    };
    const s = server({ guards: [denyMallory] });
    completerRuns = 0;
    const refused = await send(s, complete('language'), 'mallory');
    expect(refused.response.error).toEqual({ code: -32600, message: 'Not for you' });
    expect(refused.status).toBe(403);
    expect(completerRuns).toBe(0);
    expect((await send(s, complete('language'))).response.result?.completion).toEqual({
      values: ['python', 'perl'],
    });
    expect(seen).toEqual([
      { method: 'prompts/get', target: 'review', who: 'mallory' },
      { method: 'prompts/get', target: 'review', who: 'alice' },
    ]);
  });

  it('bounds a completer that returns a thenable which never settles by its prompt’s time limit', async () => {
    const reply = await send(server(), complete('never'));
    expect(reply.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: completion of never did not finish within 20 ms',
    });
  });

  it('answers -32603 for a completer that returns the wrong shape, and names it in the log', async () => {
    const reply = await send(server(), complete('garbage'));
    expect(reply.response.error).toEqual({
      code: -32603,
      message: 'Internal error while handling completion/complete',
    });
    expect(JSON.stringify(errors)).toContain(
      'the completer of garbage of review returned {\\"values\\":\\"python\\"}: expected { values: string[]',
    );
  });

  it('is not observed: observers see tools/call rounds, never a completion (allowed or refused)', async () => {
    const observed: RoundEvent[] = [];
    const s = server({ observed, store: new MemoryStore() });
    await send(s, complete('language'));
    for (let i = 0; i < 3; i++)
      await send(
        s,
        request('tools/call', { name: 'ask', arguments: {}, requestState: `forged-${i}` }),
        'mallory',
      );
    const before = observed.length;
    expect(observed.map((e) => e.method)).toEqual(['tools/call', 'tools/call', 'tools/call']);
    expect((await send(s, complete('language'), 'mallory')).status).toBe(429);
    expect(observed.length).toBe(before);
  });
});
