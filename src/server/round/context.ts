// The RequestContext a handler gets for one round. A class, so that a request costs one object rather than a
// bundle of closures; the AbortSignal and the flow machinery are only built if the handler touches them.
import { type Ask, FlowUsageError } from '../../flow/index.js';
import {
  type ClientCapabilities,
  clientSupports,
  type Implementation,
  type InputKind,
  type InputResponse,
  type JsonObject,
  type JsonRpcRequest,
  type RequestId,
} from '../../protocol/index.js';
import { newFlowId } from '../../state/index.js';
import {
  type AskConnector,
  type AuditNotes,
  LOG_LEVELS,
  type LogLevel,
  type Principal,
  type ProgressUpdate,
  type RequestContext,
  type ServerAsk,
} from '../context.js';
import type { Deadline } from '../deadline.js';
import type { RequestEnvironment } from '../environment.js';
import type { RequestMeta } from '../request-meta.js';
import type { RoundSpan } from './round-span.js';
import type { RoundInput } from './state.js';
import type { RoundTrace } from './trace.js';

/** Without observers, notes go nowhere: one shared object, so a handler that notes costs nothing extra. */
const UNOBSERVED: AuditNotes = { recorded: false, note: () => undefined, decided: () => undefined };

export class RoundContext implements RequestContext {
  readonly method: string;
  readonly requestId: RequestId;
  readonly round: number;
  readonly state: unknown;
  readonly inputResponses: Readonly<Record<string, InputResponse>>;
  private served: ServerAsk | undefined;

  constructor(
    request: JsonRpcRequest,
    private readonly meta: RequestMeta,
    private readonly env: RequestEnvironment,
    private readonly roundInput: RoundInput,
    private readonly getAsk: () => Ask,
    private readonly deadline: Deadline,
    private readonly trace?: RoundTrace,
    private readonly taskStart?: () => void,
    private readonly span?: RoundSpan,
    private readonly connector?: () => AskConnector | undefined,
  ) {
    this.method = request.method;
    this.requestId = request.id;
    this.round = roundInput.round;
    this.state = roundInput.state;
    this.inputResponses = roundInput.inputResponses;
  }

  get protocolVersion(): string {
    return this.meta.protocolVersion;
  }
  get clientCapabilities(): ClientCapabilities {
    return this.meta.clientCapabilities;
  }
  get clientInfo(): Implementation | undefined {
    return this.meta.clientInfo;
  }
  get principal(): Principal | undefined {
    return this.env.principal;
  }
  get flowId(): string {
    this.roundInput.flowId ??= newFlowId();
    return this.roundInput.flowId;
  }
  /** The client went away or the time limit passed: nobody is listening for this round any more. */
  private get ended(): boolean {
    return this.env.signal.aborted || this.deadline.expired;
  }

  /** Aborts when the client goes away or the handler's time limit passes. */
  get signal(): AbortSignal {
    return this.deadline.signalWith(this.env.signal);
  }
  get ask(): ServerAsk {
    if (this.served) return this.served;
    // The flow's ask, and `connect` on top: one object per round, built only when the handler asks.
    const connect = (name: string): Promise<string> => {
      const connector = this.connector?.();
      if (!connector)
        return Promise.reject(
          new FlowUsageError(
            `ctx.ask.connect('${name}') needs connections attached to this server: new Connections({...}).attach(server)`,
          ),
        );
      return connector.token(this, name);
    };
    this.served = Object.assign(Object.create(this.getAsk()) as Ask, { connect });
    return this.served;
  }
  get audit(): AuditNotes {
    const trace = this.trace;
    const span = this.span;
    const notes: AuditNotes = trace
      ? {
          recorded: true,
          note: (facts) => trace.note(facts),
          decided: (outcome, reason) => trace.decided(outcome, reason),
        }
      : UNOBSERVED;
    // A traced round: the controls a handler calls record their decisions on its span.
    return span ? { ...notes, judging: (control) => span.judging(control) } : notes;
  }

  waitForPerson<T>(work: PromiseLike<T>): Promise<T> {
    return this.deadline.paused(work);
  }

  startTask(): void {
    this.taskStart?.();
  }

  supports(kind: InputKind): boolean {
    return clientSupports(this.meta.clientCapabilities, kind);
  }

  log(level: LogLevel, data: unknown, logger?: string): void {
    const wanted = this.meta.logLevel;
    if (wanted === undefined || LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(wanted) || this.ended) {
      return;
    }
    const params: JsonObject = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.env.notify({ jsonrpc: '2.0', method: 'notifications/message', params });
  }

  progress(update: ProgressUpdate): void {
    const token = this.meta.progressToken;
    if (token === undefined || this.ended) return;
    this.env.notify({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: token, ...update },
    });
  }
}
