// Which tracer a round uses (none while no SDK is registered: tracing off costs a lookup), and a span context as the
// W3C traceparent text that the sealed requestState keeps of a flow's first round.
import {
  isSpanContextValid,
  ProxyTracerProvider,
  type SpanContext,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

/** The API's own no-op provider: the proxy's delegate until an SDK registers one. */
const NO_SDK = new ProxyTracerProvider().getDelegate();
let tracer: Tracer | undefined;
let tracerOf: TracerProvider | undefined;

/** The tracer of the registered SDK, looked up once per provider; undefined when none is registered (tracing off). */
export function roundTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  if (delegate === NO_SDK) return undefined;
  if (delegate !== tracerOf) {
    tracerOf = delegate;
    tracer = delegate.getTracer('mrtr');
  }
  return tracer;
}

/** A span context as a W3C traceparent (what the sealed state keeps of the flow's first round). */
export function toTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a sealed traceparent names, or undefined for anything else (an old state has none). */
export function fromTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  const sc: SpanContext = {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  };
  return isSpanContextValid(sc) ? sc : undefined;
}
