// What a handler sees of one request, and the value it returns to ask for more input.
import type { Ask } from '../flow/index.js';
import type {
  ClientCapabilities,
  Implementation,
  InputKind,
  InputRequests,
  InputResponse,
} from '../protocol/index.js';
import type { Principal } from '../state/index.js';

/** The authenticated caller, as the transport established it: the same shape the state codec binds. */
/** Kinds of embedded request a client can declare support for (the rule lives in protocol/). */
export type { InputKind, Principal };

/** Returned by a handler to answer `resultType: "input_required"`. Build it with `inputRequired()`. */
export class InputRequired {
  readonly inputRequests: InputRequests | undefined;
  readonly state: unknown;
  readonly hasState: boolean;
  constructor(inputRequests: InputRequests | undefined, state: unknown, hasState: boolean) {
    this.inputRequests = inputRequests;
    this.state = state;
    this.hasState = hasState;
  }
}

/**
 * Ask the client for more input. `state` is any JSON value the handler wants back on the retry; the server seals
 * it inside `requestState` (bound to this caller and this exact request) — the client can neither read nor alter it.
 */
export function inputRequired(options: { inputRequests?: InputRequests; state?: unknown }): InputRequired {
  const hasRequests = options.inputRequests !== undefined && Object.keys(options.inputRequests).length > 0;
  return new InputRequired(
    hasRequests ? options.inputRequests : undefined,
    options.state,
    'state' in options,
  );
}

export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Where a handler adds its own facts to the round's audit event. */
export interface AuditNotes {
  /** Whether anything records these notes (the server has observers): a fact costly to work out may be left out. */
  readonly recorded: boolean;
  /** Merge these JSON facts into this round's event (e.g. which resource a consent was about). Never secrets. */
  note(facts: Readonly<Record<string, unknown>>): void;
  /**
   * Name what decided a round answered with a tool error (a policy's deny): its event then reads `denied` with this
   * reason (the rule), not `tool_error`. Has no effect on a round that ends otherwise.
   */
  decided(outcome: 'denied', reason: string): void;
  /**
   * A control (consent, step-up, approval) starts judging this round; call what it returns with its decision. Set
   * only when the round is traced: the decision becomes an `mrtr.control` event on the round's span.
   */
  judging?(control: string): (decision: ControlDecision, reason?: string) => void;
}

/** What a control decided this round: let it pass, asked a question, refused it, or answered in its place. */
export type ControlDecision = 'allowed' | 'asked' | 'refused' | 'answered';

/**
 * What `ctx.ask.connect(name)` calls: the connections attached to the server (`mrtr/connections`), seen structurally
 * so that the server does not import them.
 */
export interface AskConnector {
  token(ctx: RequestContext, name: string): Promise<string>;
}

/** A handler's `ask`: the flow's questions, and `connect` for a server with connections attached. */
export interface ServerAsk extends Ask {
  /**
   * The round's person's access token for the connection `name`: asks them to connect their account (URL mode, on
   * the server's own page) when they have not. Needs `new Connections({...}).attach(server)` (docs/connections.md).
   */
  connect(name: string): Promise<string>;
}

export interface RequestContext {
  readonly method: string;
  readonly requestId: string | number;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | undefined;
  readonly principal: Principal | undefined;
  /**
   * Aborted when the client cancels (closes the HTTP stream, or notifications/cancelled on stdio), or when the
   * round's time limit passes (reason: HandlerTimeoutError). Pass it to your I/O so abandoned work stops.
   */
  readonly signal: AbortSignal;
  /** 0 on the first call, then the number of input_required rounds this flow has been through. */
  readonly round: number;
  /** The flow id shared by every round of this call. */
  readonly flowId: string;
  /** The handler's own state from the previous round (undefined on the first round). */
  readonly state: unknown;
  /**
   * Answers to the keys asked in the previous round, validated by kind. Answers to keys that were not asked are
   * dropped before the handler runs (the spec says to ignore them).
   */
  readonly inputResponses: Readonly<Record<string, InputResponse>>;
  /** True when the client declared support for this kind of embedded request. */
  supports(kind: InputKind): boolean;
  /**
   * Ask questions as straight-line code: `await ctx.ask.confirm('Delete it?')`. The handler re-runs from the top
   * every round; answers already given come back from a journal sealed inside requestState (docs/flows.md).
   */
  readonly ask: ServerAsk;
  /** The round's audit event: `ctx.audit.note({ resource })`. A no-op when the server has no observers. */
  readonly audit: AuditNotes;
  /** Send a log message to the client; sent only at or above the request's `io.modelcontextprotocol/logLevel`. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /** Report progress; sent only when the client asked for it with a progressToken. */
  progress(update: ProgressUpdate): void;
  /**
   * Wait for `work` with the round's time limit stopped: for a wait on a person (an approval, a second factor), not
   * on the handler's own work. The limit resumes with the time it had left once `work` settles. Bound the wait
   * yourself (the human controls hold for at most `pendingWaitMs`), then ask the person again.
   */
  waitForPerson<T>(work: PromiseLike<T>): Promise<T>;
  /**
   * For a tool registered with `task: { support, start: 'handler' }`: the questions asked before this went as MRTR
   * rounds; from here the call runs as a task, when the client declared the extension (docs/tasks.md). Returns at once
   * inside the task, for a client that did not declare it, and for every other handler.
   */
  startTask(): void;
}
