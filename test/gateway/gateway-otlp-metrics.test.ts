// `mrtr gateway` with the standard OpenTelemetry variables for metrics and no --metrics: a real gateway process in
// front of two real upstreams, and a local OTLP/HTTP JSON receiver. The per-upstream metrics arrive by OTLP with the
// counts of the calls made: each upstream's calls, its errors, and one latency observation per call.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpError } from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type OtlpReceiver, otlpReceiver, type ReceivedPoint } from '../helpers/otlp-receiver.js';
import { runMrtr } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const quiet = { info() {}, warn() {}, error() {} };
let dir: string;
let receiver: OtlpReceiver;
let ledger: HttpEndpoint;
let vault: HttpEndpoint;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-otlp-metrics-'));
  receiver = await otlpReceiver();
  ledger = await new McpServer({ name: 'ledger', version: '1.0.0', logger: quiet })
    .tool({ name: 'note', description: 'Write a note in the ledger' }, (args: Loose) =>
      text(`noted ${args.text}`),
    )
    .listen({ port: 0 });
  // Every call fails upstream: an error answer, which the gateway counts as an upstream error.
  vault = await new McpServer({ name: 'vault', version: '1.0.0', logger: quiet })
    .tool({ name: 'open', description: 'Open the vault' }, () => {
      throw new McpError(-32000, 'the vault is sealed');
    })
    .listen({ port: 0 });
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ 'alice-dev-token': { sub: 'alice', roles: [] } }));
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: ledger
    url: ${ledger.url}
  - name: vault
    url: ${vault.url}
rules:
  - tools: ["ledger/*", "vault/*"]
    roles: ["*"]
`,
  );
  const pinned = await runMrtr(['gateway', 'pin', '--config', join(dir, 'gateway.yaml'), '--all'], {
    timeout: 30_000,
  });
  expect(pinned.status, pinned.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await ledger?.close({ graceMs: 0 });
  await vault?.close({ graceMs: 0 });
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const pointOf = (points: ReceivedPoint[], name: string, upstream: string) =>
  points.filter((p) => p.name === name && p.attributes.upstream === upstream);
const upstreamValue = (points: ReceivedPoint[], name: string, upstream: string) =>
  pointOf(points, name, upstream)[0]?.value;

describe('mrtr gateway with OTLP metrics', () => {
  it('exports each upstream’s calls, errors and latency, matching the calls made', async () => {
    const gateway = await serveCli(
      [
        '--config',
        join(dir, 'gateway.yaml'),
        '--locked',
        '--port',
        String(await freePort()),
        '--tokens',
        join(dir, 'tokens.json'),
      ],
      'gateway',
      {
        env: {
          OTEL_METRICS_EXPORTER: 'otlp',
          OTEL_TRACES_EXPORTER: 'none',
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
          OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
          // Exports while it serves: the test waits for the one that carries every call, not for a time.
          OTEL_METRIC_EXPORT_INTERVAL: '200',
        },
      },
    );
    expect(gateway.stderr()).not.toContain('metrics at');
    await gateway.saidOnStderr('upstreams started:');
    const as = { headers: { authorization: 'Bearer alice-dev-token' } };
    const call = async (name: string, args: object = {}) =>
      (await mcp(gateway.url, 'tools/call', { name, arguments: args }, as)).response.result as Loose;
    for (const n of [1, 2, 3])
      expect((await call('ledger__note', { text: `n${n}` })).isError).toBeUndefined();
    const failed = await call('vault__open');
    expect(failed.isError).toBe(true);

    // A batch exported while serving, carrying all four calls.
    const points = await receiver.metricsWhere(
      (p) =>
        upstreamValue(p, 'mrtr_upstream_calls_total', 'ledger') === 3 &&
        upstreamValue(p, 'mrtr_upstream_calls_total', 'vault') === 1,
    );
    // A counter with no error yet has no series for that upstream (prom-client's, so /metrics's, too).
    expect(pointOf(points, 'mrtr_upstream_errors_total', 'ledger')).toEqual([]);
    expect(upstreamValue(points, 'mrtr_upstream_errors_total', 'vault')).toBe(1);
    const latency = (upstream: string) => pointOf(points, 'mrtr_upstream_call_duration_seconds', upstream);
    for (const [upstream, calls] of [
      ['ledger', 3],
      ['vault', 1],
    ] as const) {
      const [histogram] = latency(upstream);
      expect(histogram?.type).toBe('histogram');
      expect(histogram?.value).toBe(calls);
      expect(histogram?.bucketCounts?.reduce((n, c) => n + c, 0)).toBe(calls);
      expect(histogram?.sum).toBeGreaterThan(0);
    }
    expect(upstreamValue(points, 'mrtr_upstream_clients_open', 'ledger')).toBeGreaterThanOrEqual(1);
    expect(upstreamValue(points, 'mrtr_upstream_definitions_withheld', 'vault')).toBe(0);
    const rounds = points.filter(
      (p) => p.name === 'mrtr_rounds_total' && p.attributes.method === 'tools/call',
    );
    expect(rounds.reduce((n, p) => n + p.value, 0)).toBe(4);
    await gateway.stop();

    // Stopping sends a last export: the same counts, nothing counted twice.
    const last = receiver.metricExports.at(-1) ?? [];
    expect(upstreamValue(last, 'mrtr_upstream_calls_total', 'ledger')).toBe(3);
    expect(upstreamValue(last, 'mrtr_upstream_errors_total', 'vault')).toBe(1);
  }, 90_000);
});
