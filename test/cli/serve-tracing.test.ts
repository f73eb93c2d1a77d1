// `mrtr serve` with the standard OpenTelemetry variables: the SDK starts, every round is a span sent to a local OTLP
// receiver (http/json), and a flow whose rounds go to two instances sharing their state keys is one trace. The spans
// arrive when each instance stops (the SDK is shut down, and flushes, before the process exits): no waiting on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { accept, mcp } from '../helpers/mcp-http.js';
import { type OtlpReceiver, otlpReceiver, receivedControls } from '../helpers/otlp-receiver.js';
import { serveCli } from '../helpers/serve-cli.js';

const KEYS = `k1:${Buffer.alloc(32, 5).toString('base64url')}`;
const BUG = 987654321;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await otlpReceiver();
});
afterAll(() => receiver?.close());

const instance = async (name: string) =>
  serveCli(['--port', String(await freePort()), '--state-keys', KEYS], 'serve', {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: name,
      // Traces only: the endpoint alone would send metrics too, whose observer adds the audit intent link.
      OTEL_METRICS_EXPORTER: 'none',
    },
  });

describe('mrtr serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('a flow whose rounds go to two instances is one trace, each later round a child of the first', async () => {
    const [a, b] = await Promise.all([instance('mrtr-a'), instance('mrtr-b')]);
    const args = { name: 'resolve_bug', arguments: { id: BUG } };
    const one = (await mcp(a.url, 'tools/call', args)).response.result as { requestState: string };
    const two = (
      await mcp(b.url, 'tools/call', {
        ...args,
        requestState: one.requestState,
        inputResponses: { resolution: accept({ resolution: 'Fixed' }) },
      })
    ).response.result as { requestState: string };
    const three = (
      await mcp(a.url, 'tools/call', {
        ...args,
        requestState: two.requestState,
        inputResponses: { confirm: accept({ confirm: true }) },
      })
    ).response.result as { resultType: string };
    expect(three.resultType).toBe('complete');
    // Stopping each instance shuts its SDK down, which sends what it holds before the process ends.
    await Promise.all([a.stop(), b.stop()]);
    const rounds = receiver.spans.filter((s) => s.name === 'tools/call resolve_bug');
    rounds.sort((x, y) => Number(x.attributes['mrtr.round']) - Number(y.attributes['mrtr.round']));
    expect(rounds.map((s) => [s.service, s.attributes['mrtr.round'], s.attributes['mrtr.outcome']])).toEqual([
      ['mrtr-a', 0, 'input_required'],
      ['mrtr-b', 1, 'input_required'],
      ['mrtr-a', 2, 'complete'],
    ]);
    const [first, second, third] = rounds;
    expect(new Set(rounds.map((s) => s.traceId)).size).toBe(1);
    expect(first?.parentSpanId).toBe('');
    expect(second?.parentSpanId).toBe(first?.spanId);
    expect(third?.parentSpanId).toBe(first?.spanId);
    expect(new Set(rounds.map((s) => s.attributes['mrtr.flow.id'])).size).toBe(1);
    expect(first?.kind).toBe(2); // SPAN_KIND_SERVER in OTLP
    expect(first?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'gen_ai.tool.name': 'resolve_bug',
    });
    // Without --store or --audit the one control of a round is its state.
    expect(receivedControls(second!)).toEqual(['state allowed']);
    // No argument value and no answer left the process.
    const exported = receiver.bodies.join('\n');
    expect(exported).not.toContain(String(BUG));
    expect(exported).not.toContain('Fixed');
  }, 60_000);
});
