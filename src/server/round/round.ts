// The one object a round's links pass along: the call and what its method resolved it to (target, arguments,
// handler), and what the links learn on the way (the opened state, the step ledger, the flow's ctx).
import type { StepLedger } from '../../flow/index.js';
import type { JsonObject, JsonRpcRequest, MrtrMethod, Result } from '../../protocol/index.js';
import type { RequestContext } from '../context.js';
import type { Deadline } from '../deadline.js';
import type { RequestEnvironment } from '../environment.js';
import { handlerContractError } from '../errors.js';
import type { HandlerOptions } from '../handlers.js';
import type { RequestMeta } from '../request-meta.js';
import type { StateBinding } from '../request-state.js';
import type { RoundTool, ScreenedRound } from './guard.js';
import { GuardedRoundView } from './guarded-round.js';
import type { RoundSpan } from './round-span.js';
import type { RoundInput } from './state.js';
import type { RoundTrace } from './trace.js';

/** One request on its way through the server (what every method gets). */
export interface Call {
  request: JsonRpcRequest;
  params: JsonObject;
  meta: RequestMeta;
  env: RequestEnvironment;
  /** Present when the server has round observers and this is an MRTR method. */
  trace: RoundTrace | undefined;
  /** Present when tracing is on (an OpenTelemetry SDK is registered): the round's span. */
  span?: RoundSpan | undefined;
  /** Set once a round of this call sealed its state: the flow a task made from the call belongs to. */
  flowId?: string;
}

/** What one MRTR request resolved to: the target, what its state is bound to, and the handler that answers it. */
export interface RoundEntry {
  /** Tool name, prompt name or resource URI. */
  target: string;
  /** What the sealed state is bound to besides the target (default: the request's `arguments`). */
  arguments?: unknown;
  /** The handler's MRTR options (time limit, round cap, requiredScopes, sensitive fields, …). */
  options?: HandlerOptions;
  /** The handler: a result, `inputRequired(...)`, or questions asked with `ctx.ask` (a promise of either). */
  invoke(ctx: RequestContext): unknown;
  /** The last word on a complete result (an output check), applied before guards commit it. */
  finalize?(result: Result): Result;
  /** What `ctx.startTask()` does in this round (tools that may become tasks). */
  startTask?(): void;
  /** The tool entry a tools/call resolved to: carried to the guards (`GuardedRound.tool`), not looked up again. */
  tool?: RoundTool;
}

const NO_SCOPES: readonly string[] = Object.freeze([]);

/**
 * An MRTR call on its way through the round's links. A class built field by field, every field set in the
 * constructor (one hidden class): a spread of the call into a literal measured ~20 µs per request.
 */
export class Round {
  readonly request: JsonRpcRequest;
  readonly params: JsonObject;
  readonly meta: RequestMeta;
  readonly env: RequestEnvironment;
  readonly trace: RoundTrace | undefined;
  /** The round's span when tracing is on; controls record their decisions on it. */
  readonly span: RoundSpan | undefined;
  readonly method: MrtrMethod;
  readonly target: string;
  readonly args: unknown;
  readonly options: HandlerOptions;
  readonly invoke: (ctx: RequestContext) => unknown;
  readonly finalize: ((result: Result) => Result) | undefined;
  /** What `ctx.startTask()` does in this round (a tool that may become a task); undefined: nothing. */
  readonly startTask: (() => void) | undefined;
  /** The tool the method resolved (tools/call): guards and links read it instead of looking it up again. */
  readonly tool: RoundTool | undefined;
  /** What the sealed state is bound to: the principal, the method, the target and the arguments. */
  readonly binding: StateBinding;
  /** The opened requestState and answers (the open-state link); undefined before it ran. */
  input: RoundInput | undefined = undefined;
  /** Where ask.step results are kept outside the journal (a guard's ledger); undefined: in the journal. */
  steps: StepLedger | undefined = undefined;
  /** The flow's context for the links in the flow (set by the flow link before they run): they ask with it. */
  ctx: RequestContext | undefined = undefined;
  /** The handler's own context when links run in the flow before it (its asks are told apart from theirs). */
  handlerCtx: RequestContext | undefined = undefined;
  /** The handler's time limit this round (set by the flow link). */
  deadline: Deadline | undefined = undefined;
  /** The link in the flow that answered in the handler's place; undefined when the handler answered. */
  answeredBy: string | undefined = undefined;
  /** The handler's work when it ran asynchronously; it may outlive the round's answer (a time limit passed). */
  work: Promise<Result> | undefined = undefined;
  workSettled = false;
  /** Set when the round ended the call in a way that counts as a refusal of the caller (answers invalid too often). */
  refusal: string | undefined = undefined;
  /** A refusal already logged with its precise reason (a state that did not open). */
  logged: unknown = undefined;
  /** A guard's failed commit: neither logged as a refusal nor told to the guards (the round was not refused). */
  quiet: unknown = undefined;
  #view: GuardedRoundView | undefined = undefined;
  #screened: ScreenedRound | undefined = undefined;

  constructor(
    readonly call: Call,
    method: MrtrMethod,
    /** Tool name, prompt name or resource URI. */
    target: string,
    /** What the state is bound to besides the target (resources bind none). */
    args: unknown,
    options: HandlerOptions,
    invoke: (ctx: RequestContext) => unknown,
    /**
     * The method's last word on a result (an outputSchema check, cache hints), applied before guards commit it, so
     * that what they record is exactly the answer sent.
     */
    finalize?: (result: Result) => Result,
    startTask?: () => void,
    tool?: RoundTool,
  ) {
    this.request = call.request;
    this.params = call.params;
    this.meta = call.meta;
    this.env = call.env;
    this.trace = call.trace;
    this.span = call.span;
    this.method = method;
    this.target = target;
    this.args = args;
    this.options = options;
    this.invoke = invoke;
    this.finalize = finalize;
    this.startTask = startTask;
    this.tool = tool;
    this.binding = { principal: call.env.principal, method, target, arguments: args };
  }

  /** The round as a guard judges it before its state opens. */
  get screened(): ScreenedRound {
    this.#screened ??= {
      requestId: this.request.id,
      method: this.method,
      target: this.target,
      principal: this.env.principal,
      requiredScopes: this.options.requiredScopes ?? NO_SCOPES,
    };
    return this.#screened;
  }

  /** The round as a guard judges it once its state opened: the same object for admit, ask, commit and release. */
  get guarded(): GuardedRoundView {
    if (this.#view) return this.#view;
    const input = this.input;
    if (!input) throw handlerContractError('a round link judged the round before its state opened');
    const token = typeof this.params.requestState === 'string' ? this.params.requestState : undefined;
    this.#view = new GuardedRoundView(
      this.request.id,
      this.method,
      this.target,
      this.args,
      this.env.principal,
      token,
      input,
      this.tool,
    );
    return this.#view;
  }

  /** The handler's work still runs after the round was answered (its time limit passed). */
  get outlived(): boolean {
    return this.work !== undefined && !this.workSettled;
  }
}

/** The round of a call already checked, with what its method resolved it to: arguments as prepared, or the call's. */
export function roundOf(call: Call, method: MrtrMethod, entry: RoundEntry): Round {
  const args = Object.hasOwn(entry, 'arguments') ? entry.arguments : (call.params.arguments ?? {});
  return new Round(
    call,
    method,
    entry.target,
    args,
    entry.options ?? {},
    entry.invoke,
    entry.finalize,
    entry.startTask,
    entry.tool,
  );
}

/** Today's name for the round object, kept while callers move to `Round`. */
export { Round as RoundRequest };
