// A call this server makes on a round's behalf (the gateway's relayed upstream round) as a client span, a child of
// the round's span, and active while it runs: the client's HTTP transport sends its traceparent upstream.
import { type Attributes, context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { roundTracer } from './tracer.js';

/** Run `work` inside a client span named `name`; with tracing off, just run it. */
export function inClientSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  const tracer = roundTracer();
  if (tracer === undefined) return work();
  const parent = context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  return context.with(trace.setSpan(parent, span), work).then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    },
  );
}
