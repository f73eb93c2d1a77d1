// Tracing and OTLP metrics for `mrtr serve` and `mrtr gateway`: the OpenTelemetry Node SDK, loaded and started only
// when the standard variables ask for traces or metrics (an OTLP endpoint, or an exporter named), so a server without
// them loads none of it. The SDK reads the rest itself: OTEL_EXPORTER_OTLP_PROTOCOL (http/json too), OTEL_SERVICE_NAME,
// the sampler.
import type { Registry } from 'prom-client';

/** Whether the environment asks for traces: an exporter named (not `none`), or an OTLP endpoint for them. */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporters) return exporters !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Whether the environment asks for OTLP metrics: `OTEL_METRICS_EXPORTER` names otlp, or an OTLP endpoint is set. */
export function otlpMetricsWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_METRICS_EXPORTER?.trim();
  if (exporters) return exporters.split(',').some((name) => name.trim() === 'otlp');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim());
}

export interface Tracing {
  /** Send the spans and metrics still queued and stop: the last rounds are not lost on exit. Never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Start the SDK when the environment asks for traces or OTLP metrics; undefined otherwise. `registry` is the one
 * /metrics serves (made when OTLP metrics are wanted, with or without --metrics): OTLP exports the same.
 */
export async function startTracing(
  serviceName: string,
  registry: Registry | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | undefined> {
  const traces = tracingWanted(env);
  const metrics = registry !== undefined && otlpMetricsWanted(env);
  if (!traces && !metrics) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const reader = metrics ? (await import('./otlp-metrics.js')).otlpMetricReader(registry, env) : undefined;
  // The process detector records the command line, which may name secrets' files or carry a token: left out unless
  // the operator names the detectors.
  env.OTEL_NODE_RESOURCE_DETECTORS ??= 'env,host,os,serviceinstance';
  const named =
    env.OTEL_SERVICE_NAME?.trim() || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName }),
    // mrtr's metrics only (the SDK makes no instruments of its own here); no log exporter; no traces unless asked.
    metricReaders: reader === undefined ? [] : [reader],
    logRecordProcessors: [],
    ...(traces ? {} : { spanProcessors: [] }),
  });
  sdk.start();
  return {
    shutdown: () => sdk.shutdown().catch(() => undefined),
  };
}
