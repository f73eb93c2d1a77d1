// The OpenTelemetry SDK's own parts in process, for tests that read the spans a round makes: a tracer provider with
// the in-memory exporter, the async-hooks context manager and the W3C propagator, registered globally (each vitest
// file runs in its own worker) and taken down with `uninstall`.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

export interface InstalledTracing {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  reset(): void;
  uninstall(): Promise<void>;
}

/** `sampler`: the SDK's default (every root span sampled) unless given. */
export function installTracing(sampler?: Sampler): InstalledTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The `mrtr.control` events of a span as "name decision[ reason]" lines, in order. */
export function controlEvents(span: ReadableSpan): string[] {
  return span.events
    .filter((e) => e.name === 'mrtr.control')
    .map((e) => {
      const a = e.attributes ?? {};
      const reason = a['mrtr.control.reason'];
      return `${a['mrtr.control.name']} ${a['mrtr.control.decision']}${reason === undefined ? '' : ` ${reason}`}`;
    });
}
