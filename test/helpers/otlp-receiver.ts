// A small OTLP/HTTP receiver on 127.0.0.1 (the OpenTelemetry Collector is not installable here): it takes the JSON
// encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) at /v1/traces and /v1/metrics, answers 200, and keeps every span
// and every metric data point it received.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpAttribute = { key: string; value: OtlpValue };

/** One received span, its attributes and its events' attributes read as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
}

const otlpValue = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: OtlpAttribute[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, otlpValue(a.value)]));

/** One received metric data point: a sum's or gauge's value, or a histogram's count, sum and buckets. */
export interface ReceivedPoint {
  /** The metric's name, and `sum`, `gauge` or `histogram`. */
  name: string;
  type: 'sum' | 'gauge' | 'histogram';
  attributes: Record<string, unknown>;
  value: number;
  /** A histogram's sum, bucket counts (each bucket on its own) and bounds. */
  sum?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Each metrics export, in the order received: the data points it carried. */
  metricExports: ReceivedPoint[][];
  /** Every request body as received (to search the raw export for what must not be there). */
  bodies: string[];
  /** The first metrics export (received already, or to come) for which `wanted` holds: an explicit signal. */
  metricsWhere(wanted: (points: ReceivedPoint[]) => boolean): Promise<ReceivedPoint[]>;
  close(): Promise<void>;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metricExports: ReceivedPoint[][] = [];
  const bodies: string[] = [];
  const waiting: Array<{ wanted: (points: ReceivedPoint[]) => boolean; done: (p: ReceivedPoint[]) => void }> =
    [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/v1/traces') {
        bodies.push(body);
        const parsed = JSON.parse(body) as {
          // biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON shape, read loosely
          resourceSpans?: any[];
        };
        for (const rs of parsed.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                // biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON shape, read loosely
                events: (s.events ?? []).map((e: any) => ({
                  name: e.name,
                  attributes: attributesOf(e.attributes),
                })),
                // biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON shape, read loosely
                links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
                status: s.status ?? {},
              });
        }
      }
      if (req.url === '/v1/metrics') {
        bodies.push(body);
        const points = pointsOf(JSON.parse(body));
        metricExports.push(points);
        for (const w of waiting.splice(0)) {
          if (w.wanted(points)) w.done(points);
          else waiting.push(w);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metricExports,
    bodies,
    metricsWhere: (wanted) => {
      const seen = metricExports.find(wanted);
      return seen ? Promise.resolve(seen) : new Promise((done) => waiting.push({ wanted, done }));
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** A received span's `mrtr.control` events as "name decision[ reason]" lines. */
export function receivedControls(span: ReceivedSpan): string[] {
  return span.events
    .filter((e) => e.name === 'mrtr.control')
    .map((e) => {
      const reason = e.attributes['mrtr.control.reason'];
      return `${e.attributes['mrtr.control.name']} ${e.attributes['mrtr.control.decision']}${reason === undefined ? '' : ` ${reason}`}`;
    });
}

// biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON shape, read loosely
function pointsOf(body: any): ReceivedPoint[] {
  const points: ReceivedPoint[] = [];
  for (const rm of body.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? [])
        for (const type of ['sum', 'gauge', 'histogram'] as const)
          for (const p of m[type]?.dataPoints ?? [])
            points.push({
              name: m.name,
              type,
              attributes: attributesOf(p.attributes),
              value: Number(type === 'histogram' ? p.count : (p.asDouble ?? p.asInt)),
              ...(type === 'histogram'
                ? {
                    sum: Number(p.sum),
                    bucketCounts: (p.bucketCounts ?? []).map(Number),
                    explicitBounds: (p.explicitBounds ?? []).map(Number),
                  }
                : {}),
            });
  return points;
}
