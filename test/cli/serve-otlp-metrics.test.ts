// `mrtr serve` with the standard OpenTelemetry variables for metrics: a real server process, real flows, and a local
// OTLP/HTTP JSON receiver. What arrives by OTLP is what /metrics shows: the same names, labels and values.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../helpers/mcp-http.js';
import { type OtlpReceiver, otlpReceiver, type ReceivedPoint } from '../helpers/otlp-receiver.js';
import { scrape } from '../helpers/scrape.js';
import { serveCli } from '../helpers/serve-cli.js';

const KEYS = `k1:${Buffer.alloc(32, 6).toString('base64url')}`;
const dir = mkdtempSync(join(tmpdir(), 'mrtr-otlp-metrics-'));
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await otlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One resolve_bug flow of three rounds, and a replayed state the replay guard refuses. */
async function flows(url: string, count: number): Promise<void> {
  const call = (params: Record<string, unknown>) =>
    mcp(url, 'tools/call', { name: 'resolve_bug', arguments: { id: 7 }, ...params });
  for (let flow = 0; flow < count; flow++) {
    const first = (await call({})).response.result!;
    const fixed = { resolution: { action: 'accept', content: { resolution: 'Fixed' } } };
    const second = (await call({ requestState: first.requestState, inputResponses: fixed })).response.result!;
    const confirm = { confirm: { action: 'accept', content: { confirm: true } } };
    const third = await call({ requestState: second.requestState, inputResponses: confirm });
    expect(third.response.result!.resultType).toBe('complete');
    const other = { resolution: { action: 'accept', content: { resolution: "Won't fix" } } };
    const replayed = await call({ requestState: first.requestState, inputResponses: other });
    expect(replayed.response.error?.code).toBe(-32602);
  }
}

/** The last export's points (every point is cumulative: the last one holds every round). */
const lastExport = (): ReceivedPoint[] => receiver.metricExports.at(-1) ?? [];
const pointOf = (points: ReceivedPoint[], name: string, labels: Record<string, string> = {}) =>
  points.filter((p) => p.name === name && Object.entries(labels).every(([k, v]) => p.attributes[k] === v));

describe('mrtr serve with OTLP metrics', () => {
  it('exports every counter, gauge and histogram /metrics shows, with the same values', async () => {
    const server = await serveCli(
      ['--port', '0', '--state-keys', KEYS, '--store', `sqlite:${join(dir, 'replay.db')}`, '--metrics', '0'],
      'serve',
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          // Metrics alone: the endpoint would turn traces on too.
          OTEL_TRACES_EXPORTER: 'none',
        },
      },
    );
    const url = /metrics at (\S+)/.exec(server.stderr())?.[1] as string;
    await flows(server.url, 3);
    const m = await scrape(url);
    // Stopping sends the last export: nothing is waited for on a timer.
    await server.stop();

    const points = lastExport();
    expect(receiver.spans).toEqual([]);
    let compared = 0;
    for (const family of m.families.values()) {
      for (const sample of family.metrics) {
        const labels = (sample as { labels?: Record<string, string> }).labels ?? {};
        const found = pointOf(points, family.name, labels).filter(
          (p) => Object.keys(p.attributes).length === Object.keys(labels).length,
        );
        if (family.type === 'HISTOGRAM') {
          // The parser folds a histogram's series into one: compared by their total count below.
          continue;
        }
        expect(found, `${family.name} ${JSON.stringify(labels)}`).toHaveLength(1);
        expect(found[0]?.value, `${family.name} ${JSON.stringify(labels)}`).toBe(
          Number((sample as { value: string }).value),
        );
        expect(found[0]?.type).toBe(family.type === 'COUNTER' ? 'sum' : 'gauge');
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(5);
    const tool = { method: 'tools/call', tool: 'resolve_bug' };
    expect(pointOf(points, 'mrtr_rounds_total', { ...tool, outcome: 'complete' })[0]?.value).toBe(3);
    expect(pointOf(points, 'mrtr_rounds_total', { ...tool, outcome: 'input_required' })[0]?.value).toBe(6);
    expect(pointOf(points, 'mrtr_replay_refusals_total', { reason: 'flow_completed' })[0]?.value).toBe(3);
    // A histogram: one point per label set, its count the scrape's, its buckets each counted on their own.
    const durations = pointOf(points, 'mrtr_round_duration_seconds', { method: 'tools/call' });
    expect(durations.every((p) => p.type === 'histogram')).toBe(true);
    expect(durations.reduce((n, p) => n + p.value, 0)).toBe(
      m.count('mrtr_round_duration_seconds', { method: 'tools/call' }),
    );
    expect(durations.reduce((n, p) => n + p.value, 0)).toBe(12);
    for (const p of durations) {
      expect(p.bucketCounts?.reduce((n, c) => n + c, 0)).toBe(p.value);
      expect(p.bucketCounts).toHaveLength((p.explicitBounds?.length ?? 0) + 1);
      expect(p.explicitBounds?.[0]).toBe(0.001);
    }
  }, 60_000);

  it('exports without --metrics when OTEL_METRICS_EXPORTER=otlp, and listens for no scrape', async () => {
    receiver.metricExports.length = 0;
    const store = ['--store', `sqlite:${join(dir, 'replay-2.db')}`];
    const server = await serveCli(['--port', '0', '--state-keys', KEYS, ...store], 'serve', {
      env: {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      },
    });
    expect(server.stderr()).not.toContain('metrics at');
    await flows(server.url, 1);
    await server.stop();
    const complete = pointOf(lastExport(), 'mrtr_flows_total', { tool: 'resolve_bug', outcome: 'complete' });
    expect(complete.map((p) => p.value)).toEqual([1]);
  }, 60_000);
});
