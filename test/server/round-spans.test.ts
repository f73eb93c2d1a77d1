// One span per round after the MCP semantic conventions, a flow as one trace (the first round's context sealed in
// requestState), and every control's decision as an `mrtr.control` event: read from the SDK's in-memory exporter.
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, type RoundLink, SealedStateCodec, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';
import { controlEvents, type InstalledTracing, installTracing } from '../helpers/tracing.js';

const quiet = { info() {}, warn() {}, error() {} };
const keyring = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);
const SECRET = 'value-that-must-never-be-exported';

const env = (extra: Record<string, unknown> = {}) => ({
  principal: { subject: 'alice' },
  signal: new AbortController().signal,
  notify() {},
  ...extra,
});
const call = (id: number, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { _meta: META, name: 'deploy', arguments: { target: SECRET }, ...extra },
});
type Answer = {
  result: { resultType: string; requestState?: string; isError?: boolean };
  error?: { code: number };
};
const answer = (r: JsonRpcResponse) => r as unknown as Answer;
const yes = { confirm: { action: 'accept', content: { confirm: true } } };

/** A server whose deploy tool asks once, with the replay guard, an observer and `links` in the flow. */
function server(links: RoundLink[] = []) {
  return new McpServer({
    name: 's',
    version: '1',
    logger: quiet,
    state: { keys: keyring, audience: 'spans' },
    rounds: { replay: { store: new MemoryStore() }, observers: [{ observe: () => undefined }], links },
  }).tool({ name: 'deploy', description: 'Deploys' }, async (_args, ctx) => {
    const ok = await ctx.ask.confirm('Deploy?', { key: 'confirm' });
    return text(ok ? 'deployed' : 'kept');
  }).core;
}

describe('tracing off (no SDK registered)', () => {
  it('a flow runs as before and its sealed state carries no trace context', async () => {
    const core = server();
    const first = answer(await core.handle(call(1), env())).result;
    expect(first.resultType).toBe('input_required');
    const codec = new SealedStateCodec({ keyring, audience: 'spans' });
    const opened = codec.open(first.requestState as string, {
      principal: { subject: 'alice' },
      method: 'tools/call',
      target: 'deploy',
      arguments: { target: SECRET },
    });
    expect(opened.ok && opened.envelope.trace).toBe(undefined);
    const second = answer(
      await core.handle(call(2, { requestState: first.requestState, inputResponses: yes }), env()),
    );
    expect(second.result.resultType).toBe('complete');
  });
});

describe('tracing on (the SDK with an in-memory exporter)', () => {
  let tracing: InstalledTracing;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(() => tracing.uninstall());

  it('a two-round flow is one trace: round 2 is a child of round 1, named and attributed after the conventions', async () => {
    tracing.reset();
    const core = server();
    const first = answer(await core.handle(call(1), env())).result;
    await core.handle(call(2, { requestState: first.requestState, inputResponses: yes }), env());
    const [one, two] = tracing.spans();
    expect(one?.name).toBe('tools/call deploy');
    expect(one?.kind).toBe(1); // SpanKind.SERVER
    expect(one?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'jsonrpc.request.id': '1',
      'gen_ai.tool.name': 'deploy',
      'gen_ai.operation.name': 'execute_tool',
      'mrtr.round': 0,
      'mrtr.outcome': 'input_required',
    });
    expect(two?.attributes).toMatchObject({
      'jsonrpc.request.id': '2',
      'mrtr.round': 1,
      'mrtr.outcome': 'complete',
    });
    expect(one?.attributes['mrtr.flow.id']).toMatch(/./);
    expect(two?.attributes['mrtr.flow.id']).toBe(one?.attributes['mrtr.flow.id']);
    expect(two?.spanContext().traceId).toBe(one?.spanContext().traceId);
    expect(two?.parentSpanContext?.spanId).toBe(one?.spanContext().spanId);
    expect(one?.parentSpanContext).toBe(undefined);
    // Every control on the way, in order: the refusal limit and the state before the replay guard and the intent.
    expect(controlEvents(one!)).toEqual([
      'refusal_limit allowed',
      'state allowed',
      'replay allowed',
      'audit_intent allowed',
    ]);
    expect(controlEvents(two!)).toEqual(controlEvents(one!));
  });

  it('a caller’s own traceparent makes the round its child, linked to the flow’s first round', async () => {
    tracing.reset();
    const core = server();
    const first = answer(await core.handle(call(1), env())).result;
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await core.handle(
      call(2, { requestState: first.requestState, inputResponses: yes }),
      env({ traceHeaders: { traceparent: caller } }),
    );
    const [one, two] = tracing.spans();
    expect(two?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(two?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(two?.links.map((l) => l.context.spanId)).toEqual([one?.spanContext().spanId]);
    expect(two?.links[0]?.context.traceId).toBe(one?.spanContext().traceId);
  });

  it('the MCP conventions’ traceparent in _meta is taken too', async () => {
    tracing.reset();
    const traceparent = '00-11111111111111111111111111111111-2222222222222222-01';
    await server().handle(call(1, { _meta: { ...META, traceparent } }), env());
    expect(tracing.spans()[0]?.parentSpanContext?.spanId).toBe('2222222222222222');
  });

  it('a link that asks shows "asked", then "allowed" once answered; a deny shows "refused"', async () => {
    tracing.reset();
    const consent: RoundLink = {
      name: 'consent',
      async handle(round, next) {
        return (await round.ctx!.ask.confirm('Sure?', { key: 'sure' }))
          ? next()
          : { resultType: 'complete', content: [{ type: 'text', text: 'no' }], isError: true };
      },
    };
    const core = server([consent]);
    const first = answer(await core.handle(call(1), env())).result;
    const sure = (confirm: boolean) => ({ sure: { action: 'accept', content: { confirm } } });
    const second = answer(
      await core.handle(call(2, { requestState: first.requestState, inputResponses: sure(true) }), env()),
    );
    const again = answer(await core.handle(call(3), env())).result;
    await core.handle(call(4, { requestState: again.requestState, inputResponses: sure(false) }), env());
    expect(second.result.resultType).toBe('input_required');
    const [one, two, , four] = tracing.spans();
    expect(controlEvents(one!)).toContain('consent asked');
    expect(controlEvents(two!)).toContain('consent allowed');
    expect(controlEvents(four!)).toContain('consent refused');
    expect(four?.attributes['error.type']).toBe('tool_error');
  });

  it('a refused state is a refused control, and the span carries the JSON-RPC code, not the server’s error', async () => {
    tracing.reset();
    const response = answer(await server().handle(call(1, { requestState: 'k1.not-a-state' }), env()));
    expect(response.error?.code).toBeDefined();
    const [span] = tracing.spans();
    expect(controlEvents(span!)).toEqual([
      'refusal_limit allowed',
      expect.stringMatching(/^state refused \w+/),
    ]);
    expect(span?.attributes['error.type']).toBe(String(response.error?.code));
    expect(span?.attributes['mrtr.outcome']).toBe('refused');
    expect(span?.status.code).toBe(0); // UNSET: the caller's mistake, not the server's
  });

  it('no span, attribute or event carries an argument value or an answer', async () => {
    tracing.reset();
    const core = server();
    const first = answer(await core.handle(call(1), env())).result;
    await core.handle(call(2, { requestState: first.requestState, inputResponses: yes }), env());
    const exported = JSON.stringify(
      tracing
        .spans()
        .map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links })),
    );
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain('confirm');
  });
});

describe('tracing on, the round sampled out', () => {
  let tracing: InstalledTracing;
  beforeAll(() => {
    tracing = installTracing(new AlwaysOffSampler());
  });
  afterAll(() => tracing.uninstall());

  it('the controls answer as when traced, no span is exported, and the state keeps the unsampled trace', async () => {
    const consent: RoundLink = {
      name: 'consent',
      async handle(round, next) {
        return (await round.ctx!.ask.confirm('Sure?', { key: 'sure' }))
          ? next()
          : { resultType: 'complete', content: [{ type: 'text', text: 'no' }], isError: true };
      },
    };
    const core = server([consent]);
    const first = answer(await core.handle(call(1), env())).result;
    expect(first.resultType).toBe('input_required');
    const no = { sure: { action: 'accept', content: { confirm: false } } };
    const denied = answer(
      await core.handle(call(2, { requestState: first.requestState, inputResponses: no }), env()),
    );
    expect(denied.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(tracing.spans()).toEqual([]);
    const codec = new SealedStateCodec({ keyring, audience: 'spans' });
    const opened = codec.open(first.requestState as string, {
      principal: { subject: 'alice' },
      method: 'tools/call',
      target: 'deploy',
      arguments: { target: SECRET },
    });
    // Flags 00: later rounds join the flow's trace unsampled too, on any instance.
    expect(opened.ok && opened.envelope.trace).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });
});
