// `mrtr gateway` with the standard OpenTelemetry variables: each round is a span with every control's decision (the
// pin, the policy, consent), the relayed upstream round is a client span of the gateway's round, and the upstream
// receives its traceparent: the upstream's own round (traced here, in process) is that client span's child.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type OtlpReceiver, otlpReceiver, receivedControls } from '../helpers/otlp-receiver.js';
import { runMrtr } from '../helpers/run-cli.js';
import { scrape } from '../helpers/scrape.js';
import { serveCli } from '../helpers/serve-cli.js';
import { type InstalledTracing, installTracing } from '../helpers/tracing.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let dir: string;
let receiver: OtlpReceiver;
let upstream: HttpEndpoint;
let tracing: InstalledTracing;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-tracing-'));
  receiver = await otlpReceiver();
  tracing = installTracing();
  upstream = await new McpServer({
    name: 'ledger',
    version: '1.0.0',
    logger: { info() {}, warn() {}, error() {} },
  })
    .tool({ name: 'note', description: 'Write a note in the ledger' }, (args: Loose) =>
      text(`noted ${args.text}`),
    )
    .listen({ port: 0 });
  writeFileSync(
    join(dir, 'tokens.json'),
    JSON.stringify({ 'alice-dev-token': { sub: 'alice', roles: ['requester'] } }),
  );
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: ledger
    url: ${upstream.url}
rules:
  - name: notes-need-consent
    tools: ["ledger/note"]
    roles: [requester]
    require: [consent]
`,
  );
  const pinned = await runMrtr(['gateway', 'pin', '--config', join(dir, 'gateway.yaml'), '--all'], {
    timeout: 30_000,
  });
  expect(pinned.status, pinned.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await upstream?.close({ graceMs: 0 });
  await tracing?.uninstall();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('mrtr gateway with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('a consent flow is one trace; the upstream round is a client span, and the upstream joins the trace', async () => {
    const gateway = await serveCli(
      [
        '--config',
        join(dir, 'gateway.yaml'),
        '--locked',
        '--port',
        String(await freePort()),
        '--tokens',
        join(dir, 'tokens.json'),
        '--metrics',
        '0',
      ],
      'gateway',
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } },
    );
    await gateway.saidOnStderr('upstreams started:');
    const as = { headers: { authorization: 'Bearer alice-dev-token' } };
    const args = { name: 'ledger__note', arguments: { text: 'a private note' } };
    const first = (await mcp(gateway.url, 'tools/call', args, as)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    const key = Object.keys(first.inputRequests)[0] as string;
    const done = (
      await mcp(
        gateway.url,
        'tools/call',
        {
          ...args,
          requestState: first.requestState,
          inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
        },
        as,
      )
    ).response.result as Loose;
    expect(done.resultType).toBe('complete');
    const metricsUrl = /metrics at (\S+)/.exec(gateway.stderr())?.[1] as string;
    const decisions = (await scrape(metricsUrl)).families.get('mrtr_control_decisions_total');
    await gateway.stop();

    const rounds = receiver.spans.filter((s) => s.name === 'tools/call ledger__note');
    expect(rounds.map((s) => s.service)).toEqual(['mrtr-gateway', 'mrtr-gateway']);
    const [one, two] = rounds;
    expect(two?.traceId).toBe(one?.traceId);
    expect(two?.parentSpanId).toBe(one?.spanId);
    const pin = expect.stringMatching(/^pin allowed definition \S+$/);
    expect(receivedControls(one!)).toEqual([
      'scopes allowed',
      'refusal_limit allowed',
      'state allowed',
      'replay allowed',
      'audit_intent allowed',
      pin,
      'policy allowed rules notes-need-consent',
      'consent asked',
      'gateway_policy asked',
    ]);
    expect(receivedControls(two!)).toEqual([
      'scopes allowed',
      'refusal_limit allowed',
      'state allowed',
      'replay allowed',
      'audit_intent allowed',
      pin,
      'policy allowed rules notes-need-consent',
      'consent allowed',
      'gateway_policy allowed',
    ]);
    // One name per control: every control the metrics count is named so in the trace too.
    const traced = new Set(
      [one!, two!].flatMap((s) => receivedControls(s).map((line) => line.split(' ')[0])),
    );
    const counted = (decisions?.metrics ?? []).map((m) => `${m.labels?.control} ${m.labels?.decision}`);
    expect(counted.sort()).toEqual(['consent asked', 'gateway_policy allowed']);
    for (const line of counted) expect(traced).toContain(line.split(' ')[0]);
    // The relayed round: a client span of round 2, and the upstream's own round span is its child.
    const relayed = receiver.spans.find((s) => s.name === 'tools/call note');
    expect(relayed?.kind).toBe(3); // SPAN_KIND_CLIENT in OTLP
    expect(relayed?.parentSpanId).toBe(two?.spanId);
    expect(relayed?.attributes).toMatchObject({ 'mrtr.upstream': 'ledger', 'gen_ai.tool.name': 'note' });
    const upstreamRound = tracing.spans().find((s) => s.name === 'tools/call note');
    expect(upstreamRound?.spanContext().traceId).toBe(one?.traceId);
    expect(upstreamRound?.parentSpanContext?.spanId).toBe(relayed?.spanId);
    expect(receiver.bodies.join('\n')).not.toContain('a private note');
  }, 90_000);
});
