// OTLP metrics for `mrtr serve` and `mrtr gateway`: the prom-client registry that /metrics serves is read at each
// export and handed to the OpenTelemetry SDK's OTLP exporter. One source of truth, not two recordings: every round is
// counted once, in prom-client, so /metrics and OTLP carry the same names, labels and values by construction, and a
// metric added to MrtrMetrics reaches both. (Recording twice, or moving to the OTel API, would double the work per
// round and let the two drift.) Loaded only when the environment asks for OTLP metrics (tracing.ts).
import { type HrTime, ValueType } from '@opentelemetry/api';
import { core, metrics, resources } from '@opentelemetry/sdk-node';
// The SDK's own reading of the standard variables (OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL, http/json included, the
// endpoints and headers): not re-exported by its index, so taken from the file it lives in (pinned to 0.223.x).
import { getOtlpMetricExporterFromEnv } from '@opentelemetry/sdk-node/build/src/utils.js';
import type { MetricObjectWithValues, MetricValueWithName, Registry } from 'prom-client';

type Family = MetricObjectWithValues<MetricValueWithName<string>>;
type Labels = Record<string, string | number | undefined>;
/** Each prom-client metric reads its own values (the registry's JSON is every metric's `get`, all or nothing). */
type Readable = { get(): Family | Promise<Family> };

/** A periodic OTLP reader (OTEL_METRIC_EXPORT_INTERVAL, default 60 s) whose metrics are the registry's. */
export function otlpMetricReader(
  registry: Registry,
  env: NodeJS.ProcessEnv = process.env,
): metrics.MetricReader {
  const interval = positive(env.OTEL_METRIC_EXPORT_INTERVAL) ?? 60_000;
  return new metrics.PeriodicExportingMetricReader({
    exporter: getOtlpMetricExporterFromEnv(),
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(positive(env.OTEL_METRIC_EXPORT_TIMEOUT) ?? 30_000, interval),
    metricProducers: [new RegistryProducer(registry)],
  });
}

const positive = (value: string | undefined): number | undefined => {
  const n = Number(value);
  return value?.trim() && Number.isFinite(n) && n > 0 ? n : undefined;
};

/** The registry's families as OTel metric data: counters as monotonic sums, gauges, histograms; all cumulative. */
export class RegistryProducer implements metrics.MetricProducer {
  /** prom-client's values count from the process's start: one start time for every cumulative point. */
  readonly #start = core.millisToHrTime(Date.now());

  constructor(private readonly registry: Registry) {}

  async collect(): Promise<metrics.CollectionResult> {
    const end = core.millisToHrTime(Date.now());
    // One metric at a time: a gauge that cannot be read (its store closed) loses itself, not every counter.
    const errors: unknown[] = [];
    const read = await Promise.all(
      this.registry.getMetricsAsArray().map((metric) =>
        Promise.resolve((metric as unknown as Readable).get()).then(
          (family) => this.#convert(family as Family, end),
          (error: unknown) => {
            errors.push(error);
            return undefined;
          },
        ),
      ),
    );
    const data = read.filter((one) => one !== undefined);
    return {
      resourceMetrics: {
        resource: resources.emptyResource(),
        scopeMetrics: [{ scope: { name: 'mrtr' }, metrics: data }],
      },
      errors,
    };
  }

  #convert(family: Family, endTime: HrTime): metrics.MetricData | undefined {
    if (family.values.length === 0) return undefined;
    const descriptor = { name: family.name, description: family.help, unit: '', valueType: ValueType.DOUBLE };
    const base = { descriptor, aggregationTemporality: metrics.AggregationTemporality.CUMULATIVE };
    const startTime = this.#start;
    const point = <T>(labels: Labels, value: T) => ({
      startTime,
      endTime,
      attributes: attributes(labels),
      value,
    });
    const type = String(family.type);
    if (type === 'counter')
      return {
        ...base,
        dataPointType: metrics.DataPointType.SUM,
        isMonotonic: true,
        dataPoints: family.values.map((v) => point(v.labels, v.value)),
      };
    if (type === 'gauge')
      return {
        ...base,
        dataPointType: metrics.DataPointType.GAUGE,
        dataPoints: family.values.map((v) => point(v.labels, v.value)),
      };
    if (type === 'histogram')
      return {
        ...base,
        dataPointType: metrics.DataPointType.HISTOGRAM,
        dataPoints: histograms(family).map(([labels, value]) => point(labels, value)),
      };
    return undefined; // mrtr makes no summaries
  }
}

const attributes = (labels: Labels) =>
  Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== undefined)) as Record<
    string,
    string | number
  >;

/** prom-client's `_bucket` (cumulative, by `le`), `_sum` and `_count` series as one OTel histogram per label set. */
function histograms(family: Family): Array<[Labels, metrics.Histogram]> {
  const series = new Map<
    string,
    { labels: Labels; le: Array<[number, number]>; sum: number; count: number }
  >();
  for (const v of family.values) {
    const { le, ...labels } = v.labels as Labels;
    const key = JSON.stringify(labels);
    let one = series.get(key);
    if (one === undefined) {
      one = { labels, le: [], sum: 0, count: 0 };
      series.set(key, one);
    }
    if (v.metricName?.endsWith('_bucket')) {
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      one.le.push([bound, v.value]);
    } else if (v.metricName?.endsWith('_sum')) one.sum = v.value;
    else if (v.metricName?.endsWith('_count')) one.count = v.value;
  }
  return [...series.values()].map(({ labels, le, sum, count }) => {
    le.sort((a, b) => a[0] - b[0]);
    const finite = le.filter(([bound]) => Number.isFinite(bound));
    // OTel counts each bucket on its own; prom-client's count everything at or below the bound.
    let below = 0;
    const counts = finite.map(([, cumulative]) => {
      const n = cumulative - below;
      below = cumulative;
      return n;
    });
    counts.push(count - below);
    return [labels, { buckets: { boundaries: finite.map(([b]) => b), counts }, sum, count }];
  });
}
