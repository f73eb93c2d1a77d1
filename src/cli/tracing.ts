// Tracing for `mrtr serve` and `mrtr gateway`: the OpenTelemetry Node SDK, loaded and started only when the standard
// variables ask for traces (an OTLP endpoint, or a traces exporter named), so a server without them loads none of
// it. The SDK reads the rest itself: OTEL_EXPORTER_OTLP_PROTOCOL (http/json too), OTEL_SERVICE_NAME, the sampler.

/** Whether the environment asks for traces: an exporter named (not `none`), or an OTLP endpoint for them. */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporters) return exporters !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export interface Tracing {
  /** Send the spans still queued and stop: the last rounds' spans are not lost on exit. Never rejects. */
  shutdown(): Promise<void>;
}

/** Start the SDK for traces when the environment asks for them; undefined otherwise. */
export async function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | undefined> {
  if (!tracingWanted(env)) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  // The process detector records the command line, which may name secrets' files or carry a token: left out unless
  // the operator names the detectors.
  env.OTEL_NODE_RESOURCE_DETECTORS ??= 'env,host,os,serviceinstance';
  const named =
    env.OTEL_SERVICE_NAME?.trim() || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName }),
    // Traces only: no metric reader and no log exporter are started by this.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return {
    shutdown: () => sdk.shutdown().catch(() => undefined),
  };
}
