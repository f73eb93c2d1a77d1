// A server with one tool per edge case the tests need, on top of the conformance fixture's catalogue.
import { z } from 'zod';
import { conformanceServer } from '../../src/cli/demo-servers/conformance.js';
import type { ElicitResult } from '../../src/protocol/index.js';
import { inputRequired, type McpServer, type McpServerOptions, text } from '../../src/server/index.js';
import { Happenings } from '../helpers/signals.js';

const confirmRequest = (message: string) => ({
  method: 'elicitation/create' as const,
  params: {
    mode: 'form' as const,
    message,
    requestedSchema: { type: 'object' as const, properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
});

/** What `slow` calls did, by tag: `<tag>:started`, then `<tag>:cancelled` once the handler saw the client go. */
export const slowCalls = new Happenings();

export function testServer(options: Partial<McpServerOptions> = {}): McpServer {
  const quiet = { info() {}, warn() {}, error() {} };
  return conformanceServer({ logger: quiet, maxRounds: 3, ...options })
    .tool({ name: 'throws', description: 'Always throws' }, () => {
      throw new Error('secret internal detail');
    })
    .tool({ name: 'rejects', description: 'Fails after an await' }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('secret async detail');
    })
    .tool(
      {
        name: 'signal_reader',
        description: 'Reads ctx.signal, then answers or fails, now or after a tick',
        input: z.object({ wait: z.boolean(), fail: z.boolean().optional() }),
      },
      ({ wait, fail }, ctx) => {
        const aborted = ctx.signal.aborted;
        const answer = () => {
          if (fail) throw new Error('failed after reading the signal');
          return text(String(aborted));
        };
        return wait ? new Promise((resolve) => setImmediate(resolve)).then(answer) : answer();
      },
    )
    .tool({ name: 'with_meta', description: 'Returns a result with its own _meta' }, () => ({
      ...text('tagged'),
      _meta: { 'example.com/trace': 'abc' },
    }))
    .tool(
      {
        name: 'typed',
        description: 'Typed arguments',
        input: z.object({ count: z.number().int().min(1), label: z.string() }),
      },
      ({ count, label }) => text(`${label}:${count}`),
    )
    .tool(
      {
        name: 'json_typed',
        description: 'JSON Schema arguments',
        input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      },
      (args) => text(`n=${String(args.n)}`),
    )
    .tool(
      { name: 'confirm', description: 'Asks one yes/no question', input: z.object({ item: z.string() }) },
      ({ item }, ctx) => {
        const answer = ctx.inputResponses.confirm as ElicitResult | undefined;
        if (answer?.action === 'accept' && answer.content?.ok === true)
          return text(`done ${item} in round ${ctx.round}`);
        if (answer && answer.action !== 'accept') return text(`declined ${item}`, { isError: true });
        return inputRequired({ inputRequests: { confirm: confirmRequest(`Do ${item}?`) } });
      },
    )
    .tool({ name: 'forever', description: 'Never satisfied' }, (_args, ctx) =>
      inputRequired({ inputRequests: { again: confirmRequest(`round ${ctx.round}`) } }),
    )
    .tool({ name: 'wants_url', description: 'Asks in URL mode, whatever the client said' }, () =>
      inputRequired({
        inputRequests: {
          login: {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              message: 'Sign in',
              url: 'https://example.com/login',
            },
          },
        },
      }),
    )
    .tool(
      { name: 'empty_ask', description: 'Returns input_required with nothing in it (a handler bug)' },
      () => inputRequired({}),
    )
    .tool(
      { name: 'flow_id', description: 'Reports whether the flow id stays the same across rounds' },
      (_args, ctx) => {
        const first = (ctx.state as { first?: string } | undefined)?.first;
        if (first === undefined) return inputRequired({ state: { first: ctx.flowId } });
        return text(
          first === ctx.flowId && /^[A-Za-z0-9_-]{22}$/.test(first)
            ? 'same flow'
            : `changed: ${first} → ${ctx.flowId}`,
        );
      },
    )
    .tool({ name: 'state_only', description: 'One state-only round, then done' }, (_args, ctx) => {
      if ((ctx.state as { waited?: boolean } | undefined)?.waited) return text('waited');
      return inputRequired({ state: { waited: true } });
    })
    .tool(
      { name: 'slow', description: 'Waits until cancelled', input: z.object({ tag: z.string() }) },
      async ({ tag }, ctx) => {
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            slowCalls.record(`${tag}:cancelled`);
            resolve();
          });
          slowCalls.record(`${tag}:started`);
        });
        return text('cancelled');
      },
    )
    .tool(
      {
        name: 'regional',
        description: 'Mirrors region into a header',
        input: {
          type: 'object',
          properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } },
          required: ['query'],
        },
      },
      (args) => text(`${String(args.region)}:${String(args.query)}`),
    );
}
