// A server whose tools count their own executions, for replay tests: a rule holds only if the handler itself says
// it ran exactly once.
import { z } from 'zod';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, type McpServerOptions, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import type { SharedStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';
import type { Deferred } from '../helpers/signals.js';

export const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);

export interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

export class Counters {
  /** Completed executions per tool (the handler got past its last question). */
  readonly completions = new Map<string, number>();
  /** Runs of the `effect` step, per flow id. */
  readonly effects = new Map<string, number>();
  readonly log: LogLine[] = [];
  /** Set to block `slow` after its question until the test resolves it. */
  gate: Deferred<void> | undefined;
  /** Called when `slow` reaches its gate. */
  onGate: (() => void) | undefined;
  /** Make `flaky` fail after its step on the next run. */
  failAfterStep = false;

  completed(tool: string): number {
    return this.completions.get(tool) ?? 0;
  }
  count(tool: string): void {
    this.completions.set(tool, this.completed(tool) + 1);
  }
  reasons(): unknown[] {
    return this.log.filter((l) => l.fields.reason !== undefined).map((l) => l.fields.reason);
  }
}

export function replayServer(store: SharedStore | undefined, extra: Partial<McpServerOptions> = {}) {
  const counters = new Counters();
  const logger = {
    info: (fields: Record<string, unknown>, message: string) =>
      counters.log.push({ level: 'info', fields, message }),
    warn: (fields: Record<string, unknown>, message: string) =>
      counters.log.push({ level: 'warn', fields, message }),
    error: (fields: Record<string, unknown>, message: string) =>
      counters.log.push({ level: 'error', fields, message }),
  };
  const server = new McpServer({
    name: 'replay',
    version: '1',
    stateKeys: KEYS,
    logger,
    ...(store ? { replayStore: store } : {}),
    ...extra,
  })
    .tool({ name: 'greet', description: 'Asks a name, then greets' }, async (_args, { ask }) => {
      const { name } = await ask.form('Name?', z.object({ name: z.string() }), { key: 'who' });
      counters.count('greet');
      return text(`hello ${name}`);
    })
    .tool(
      {
        name: 'chain',
        description: 'Asks n questions in n rounds',
        input: z.object({ n: z.number().int() }),
      },
      async ({ n }, { ask }) => {
        const answers: string[] = [];
        for (let i = 0; i < n; i++) {
          const { v } = await ask.form(`Value ${i}?`, z.object({ v: z.string() }), { key: `q${i}` });
          answers.push(v);
        }
        counters.count('chain');
        return text(answers.join(','));
      },
    )
    .tool(
      { name: 'flaky', description: 'A step, then maybe a failure, then a question' },
      async (_args, ctx) => {
        const { ask } = ctx;
        await ask.form('Go?', z.object({ go: z.boolean() }), { key: 'go' });
        const flowId = ctx.flowId;
        await ask.step('effect', () => {
          counters.effects.set(flowId, (counters.effects.get(flowId) ?? 0) + 1);
          return { ticket: counters.effects.get(flowId) };
        });
        if (counters.failAfterStep) {
          counters.failAfterStep = false;
          throw new Error('crashed after the step');
        }
        counters.count('flaky');
        return text('done');
      },
    )
    .tool({ name: 'slow', description: 'Waits for the test after its question' }, async (_args, { ask }) => {
      const { name } = await ask.form('Name?', z.object({ name: z.string() }), { key: 'who' });
      counters.onGate?.();
      await counters.gate?.promise;
      counters.count('slow');
      return text(`slow hello ${name}`);
    })
    .tool({ name: 'big', description: 'Answers with a large result' }, async (_args, { ask }) => {
      await ask.form('Go?', z.object({ go: z.boolean() }), { key: 'go' });
      counters.count('big');
      return text('x'.repeat(4000));
    });
  return { core: server.core, counters };
}

const env = () => ({ principal: undefined, signal: new AbortController().signal, notify() {} });

let nextId = 1;
export function toolCall(
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'tools/call',
    params: { _meta: META, name, arguments: args, ...extra },
  };
}

export type Core = ReturnType<typeof replayServer>['core'];

export async function send(
  core: Core,
  request: JsonRpcRequest,
  principal?: { subject: string; issuer?: string },
): Promise<JsonRpcResponse> {
  return (await core.handleRequest(request, { ...env(), principal })) as JsonRpcResponse;
}

export const resultOf = (r: JsonRpcResponse) => (r as { result: Record<string, unknown> }).result;
export const errorOf = (r: JsonRpcResponse) =>
  (r as { error: { code: number; message: string; data?: unknown } }).error;
export const stateOf = (r: JsonRpcResponse) => resultOf(r).requestState as string;
export const textOf = (r: JsonRpcResponse) => (resultOf(r).content as Array<{ text: string }>)[0]!.text;

export const formAnswer = (key: string, content: Record<string, unknown>) => ({
  [key]: { action: 'accept', content },
});

/** Present a state with answers for the same call. */
export const present = (
  name: string,
  args: Record<string, unknown>,
  state: string,
  answers: Record<string, unknown>,
) => toolCall(name, args, { requestState: state, inputResponses: answers });
