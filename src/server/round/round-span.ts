// One OpenTelemetry span per round, named and attributed after the MCP semantic conventions (`tools/call get_weather`,
// `mcp.method.name`, `jsonrpc.request.id`, `gen_ai.tool.name`, `error.type`), and made only when an SDK is registered.
// A flow is one trace: the first round's trace context travels inside the sealed requestState, and later rounds start
// as its children, or link to it when the caller brings its own traceparent. So the span starts once the state has
// opened (its parent is inside); what the controls decide before that is kept and added with its own time.
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  ErrorCode,
  isJsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
  META_PROTOCOL_VERSION,
} from '../../protocol/index.js';
import type { ControlDecision } from '../context.js';
import type { RequestEnvironment } from '../environment.js';
import type { RoundInput } from './state.js';
import { fromTraceparent, roundTracer, toTraceparent } from './tracer.js';

/** The span of one round, or undefined when tracing is off (then nothing else is built). */
export function startRoundSpan(request: JsonRpcRequest, env: RequestEnvironment): RoundSpan | undefined {
  const t = roundTracer();
  if (t === undefined) return undefined;
  // The MCP conventions carry trace context in `_meta`; the HTTP request's `traceparent` header otherwise.
  const meta = request.params?._meta;
  const carrier = isJsonObject(meta) && typeof meta.traceparent === 'string' ? meta : env.traceHeaders;
  // Most rounds bring no trace context: the propagators (trace context, baggage) then have nothing to read.
  const caller =
    carrier?.traceparent === undefined ? context.active() : propagation.extract(context.active(), carrier);
  return new RoundSpan(t, request, env, caller);
}

/** JSON-RPC codes that mean the caller sent what the server cannot serve: not the server's error (MCP conventions). */
const CALLER_CODES: ReadonlySet<number> = new Set([
  ErrorCode.ParseError,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidParams,
  -32002, // Resource not found
]);

interface Pending {
  attributes: Attributes;
  time: number;
}

export class RoundSpan {
  #span: Span | undefined;
  #active: Context | undefined;
  #input: RoundInput | undefined;
  /** The flow's first round, from the sealed state; undefined on a first round or an old state. */
  #flow: SpanContext | undefined;
  /** Decisions made before the span started, added to it with their own time. */
  #pending: Pending[] | undefined;
  /** Controls still judging: those left when the round asks for input were asking. */
  #judging: string[] | undefined;
  readonly #start = performance.timeOrigin + performance.now();

  constructor(
    private readonly tracer: Tracer,
    private readonly request: JsonRpcRequest,
    private readonly env: RequestEnvironment,
    private readonly caller: Context,
  ) {}

  /** The round's state opened: its number, its flow and the flow's trace. The span starts here. */
  opened(input: RoundInput): void {
    this.#input = input;
    this.#flow = fromTraceparent(input.trace);
    this.#begin();
  }

  /** Run the rest of the round with this span active: a handler's own spans, and an upstream call, are its children. */
  run<T>(rest: () => T): T {
    return this.#active === undefined ? rest() : context.with(this.#active, rest);
  }

  /** The traceparent the next round's sealed state carries: the flow's first round. */
  get flowTraceparent(): string | undefined {
    const sc = this.#flow ?? this.#span?.spanContext();
    return sc !== undefined && isSpanContextValid(sc) ? toTraceparent(sc) : undefined;
  }

  /** False once the span started unsampled: then no control's decision is built or kept. */
  get recording(): boolean {
    return this.#span === undefined || this.#span.isRecording();
  }

  /** A control starts judging; the callback records its decision. One still judging when the round asks was asking. */
  judging(control: string): (decision: ControlDecision, reason?: string) => void {
    this.#judging ??= [];
    this.#judging.push(control);
    return (decision, reason) => this.decide(control, decision, reason);
  }

  /** Record a control's decision as an `mrtr.control` event (rule or reason: a name or a code, never a value). */
  decide(control: string, decision: ControlDecision, reason?: string): void {
    if (!this.recording) return;
    const at = this.#judging?.indexOf(control) ?? -1;
    if (at >= 0) this.#judging?.splice(at, 1);
    const attributes: Attributes = { 'mrtr.control.name': control, 'mrtr.control.decision': decision };
    if (reason !== undefined) attributes['mrtr.control.reason'] = reason;
    if (this.#span !== undefined) this.#span.addEvent('mrtr.control', attributes);
    else {
      this.#pending ??= [];
      this.#pending.push({ attributes, time: performance.timeOrigin + performance.now() });
    }
  }

  /** The round's answer: outcome, error code and flow on the span, and the span ends. Never throws. */
  finish(response: JsonRpcResponse): void {
    try {
      this.#begin();
      const span = this.#span as Span;
      if (!span.isRecording()) {
        span.end();
        return;
      }
      const input = this.#input;
      // Set once, together: each setAttribute call is checked on its own by the SDK.
      const attributes: Attributes = { 'mrtr.round': input?.round ?? 0 };
      if (input?.flowId !== undefined) attributes['mrtr.flow.id'] = input.flowId;
      let outcome: string;
      if ('error' in response) {
        const code = response.error.code;
        outcome = code === ErrorCode.InternalError ? 'error' : 'refused';
        attributes['rpc.response.status_code'] = String(code);
        attributes['error.type'] = String(code);
        if (
          !CALLER_CODES.has(code) &&
          (code === ErrorCode.InternalError || (code <= -32000 && code >= -32099))
        )
          span.setStatus({ code: SpanStatusCode.ERROR, message: response.error.message });
      } else {
        const result = response.result;
        if (result.resultType === 'input_required') outcome = 'input_required';
        else if ((result.resultType as string) === 'task') outcome = 'task';
        else if (result.isError === true) {
          outcome = 'tool_error';
          attributes['error.type'] = 'tool_error';
        } else outcome = 'complete';
      }
      attributes['mrtr.outcome'] = outcome;
      span.setAttributes(attributes);
      // A control still judging when the round asked for input asked; when it ended otherwise, it refused. The
      // innermost first: a consent asked inside the gateway's policy link, then the link.
      const asked = outcome === 'input_required';
      for (const control of (this.#judging ?? []).reverse()) {
        const event: Attributes = { 'mrtr.control.name': control, 'mrtr.control.decision': 'asked' };
        if (!asked) {
          event['mrtr.control.decision'] = 'refused';
          event['mrtr.control.reason'] = outcome;
        }
        span.addEvent('mrtr.control', event);
      }
      span.end();
    } catch {
      // Tracing must never change an answer.
    }
  }

  #begin(): void {
    if (this.#span !== undefined) return;
    const callerSpan = trace.getSpanContext(this.caller);
    const fromCaller = callerSpan !== undefined && isSpanContextValid(callerSpan);
    let parent = this.caller;
    let links: Link[] | undefined;
    // A later round is a child of the flow's first; with a caller's own trace, a child of that and linked to the flow.
    if (this.#flow !== undefined) {
      if (fromCaller) links = [{ context: this.#flow, attributes: { 'mrtr.link': 'flow' } }];
      else parent = trace.setSpanContext(ROOT_CONTEXT, this.#flow);
    }
    const span = this.tracer.startSpan(
      this.#name(),
      { kind: SpanKind.SERVER, startTime: this.#start, links, attributes: this.#attributes() },
      parent,
    );
    this.#span = span;
    this.#active = trace.setSpan(parent, span);
    for (const p of this.#pending ?? []) span.addEvent('mrtr.control', p.attributes, p.time);
    this.#pending = undefined;
  }

  /** `{mcp.method.name} {target}` for a tool or a prompt; a resource's URI stays out of the name (cardinality). */
  #name(): string {
    const { method, params } = this.request;
    const name = params?.name;
    return method !== 'resources/read' && typeof name === 'string' ? `${method} ${name}` : method;
  }

  /** The conventions' attributes: method, ids, version, tool or prompt, resource; never an argument or an answer. */
  #attributes(): Attributes {
    const { method, params, id } = this.request;
    const attributes: Attributes = {
      'mcp.method.name': method,
      'jsonrpc.request.id': String(id),
    };
    const meta = params?._meta;
    const version = this.env.bridged ?? (isJsonObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined);
    if (typeof version === 'string') attributes['mcp.protocol.version'] = version;
    if (this.env.sessionId !== undefined) attributes['mcp.session.id'] = this.env.sessionId;
    const name = params?.name;
    if (method === 'tools/call' && typeof name === 'string') {
      attributes['gen_ai.tool.name'] = name;
      attributes['gen_ai.operation.name'] = 'execute_tool';
    } else if (method === 'prompts/get' && typeof name === 'string') attributes['gen_ai.prompt.name'] = name;
    else if (method === 'resources/read' && typeof params?.uri === 'string')
      attributes['mcp.resource.uri'] = params.uri;
    if (this.env.taskId !== undefined) attributes['mrtr.task.id'] = this.env.taskId;
    return attributes;
  }
}
