// One call to a 2025 server, held open across round()s. A 2025 server asks mid-call, with server-to-client requests on
// the call's stream, and waits for each answer; round() instead hands the questions to its caller as an input_required
// result and returns. Here the server's requests wait for the next round's inputResponses: each is read as a 2026
// InputRequest (protocol/legacy-requests.ts) under a key of this call (q1, q2, …, as the driver keys legacy
// questions), and its answer goes back as the JSON-RPC response the server is waiting for.
import {
  ErrorCode,
  type InputKind,
  type InputRequest,
  type InputRequests,
  inputRequestFromLegacy,
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  ownValue,
} from '../protocol/index.js';
import { answerKindProblem } from './answer-kinds.js';
import { abortError, describeError } from './errors.js';
import { parseInputRequired } from './input.js';
import { isElicitResult } from './resolvers.js';

/** What happened next on the call: the server asked (the questions, waiting for `answer`), answered, or it failed. */
export type CallEvent =
  | { type: 'asked'; inputRequests: InputRequests }
  | { type: 'answered'; response: JsonRpcResponse }
  | { type: 'failed'; error: unknown };

interface Question {
  key: string;
  id: JsonRpcRequest['id'];
  request: InputRequest;
  respond: (response: JsonRpcResponse) => void;
}

/** A result for the server, in the 2025 shape (no `resultType`). */
const reply = (id: JsonRpcRequest['id'], result: JsonObject): JsonRpcResponse =>
  ({ jsonrpc: '2.0', id, result }) as unknown as JsonRpcResponse;

const refusal = (id: JsonRpcRequest['id'], code: number, message: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

export class UpstreamCall {
  readonly #stop = new AbortController();
  /** Asked by the server and not yet handed to a round, in the order they came. */
  #queued: Question[] = [];
  /** Handed to the caller by the last input_required: the next round answers them. */
  readonly #asked = new Map<string, Question>();
  #end: Extract<CallEvent, { type: 'answered' | 'failed' }> | undefined;
  #wake: (() => void) | undefined;
  #count = 0;
  #ended!: () => void;
  /** Settles once the call is over: answered, failed or dropped. */
  readonly ended = new Promise<void>((resolve) => {
    this.#ended = resolve;
  });
  /** Where the notifications of the round in progress go (each round() names its own). */
  onNotification: ((notification: JsonRpcNotification) => void) | undefined;

  /**
   * `method` and `target` (the tool or prompt name, the resource URI) name what is called, so a round cannot continue
   * it as another call; `declared` are the kinds the client declared; `maxQuestions` bounds what one round may hold.
   */
  constructor(
    readonly method: string,
    readonly target: string,
    private readonly declared: ReadonlySet<InputKind>,
    private readonly maxQuestions: number,
  ) {}

  /** Aborted when the call is dropped: the upstream request's own signal. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Follow the call's request: its response, or its failure, ends the call. */
  follow(exchange: Promise<JsonRpcResponse>): void {
    exchange.then(
      (response) => this.#finish({ type: 'answered', response }),
      (error: unknown) => this.#finish({ type: 'failed', error }),
    );
  }

  /** A request the server sent while the call is open: answered at once (ping, what nobody may ask), or held. */
  readonly onServerRequest = (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    const { id } = request;
    if (request.method === 'ping') return Promise.resolve(reply(id, {}));
    if (this.#end || this.#stop.signal.aborted)
      return Promise.resolve(refusal(id, ErrorCode.InternalError, 'the call has ended'));
    const asked = inputRequestFromLegacy(request);
    if (!asked)
      return Promise.resolve(
        refusal(id, ErrorCode.MethodNotFound, `method ${request.method} is not supported by this client`),
      );
    const key = `q${this.#count + 1}`;
    try {
      // The one strict reading of a question (well-formed, of a declared kind), as the driver reads MRTR's.
      parseInputRequired({ resultType: 'input_required', inputRequests: { [key]: asked } }, this.declared);
    } catch (error) {
      return Promise.resolve(refusal(id, ErrorCode.InvalidParams, describeError(error)));
    }
    // A round a person reads is a handful of questions; a server sending more before any answer is flooding.
    if (this.#queued.length >= this.maxQuestions)
      return Promise.resolve(
        refusal(
          id,
          ErrorCode.InternalError,
          `the server asked more than ${this.maxQuestions} questions before an answer`,
        ),
      );
    return new Promise<JsonRpcResponse>((respond) => {
      this.#count++;
      this.#queued.push({ key, id, request: asked, respond });
      this.#wake?.();
    });
  };

  /**
   * Wait for what happens next: the server asks (the questions queued since, handed out under their keys) or the
   * call ends. Requests that arrive together (one chunk of a stream) come out together. `signal` ends the wait only.
   */
  async next(signal: AbortSignal): Promise<CallEvent> {
    while (!this.#end && this.#queued.length === 0) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.#wake = undefined;
          reject(abortError(signal));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        this.#wake = () => {
          this.#wake = undefined;
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      });
    }
    if (this.#end) {
      this.#refuseOpen('the call has ended');
      return this.#end;
    }
    const inputRequests: InputRequests = {};
    for (const q of this.#queued) {
      this.#asked.set(q.key, q);
      inputRequests[q.key] = q.request;
    }
    this.#queued = [];
    return { type: 'asked', inputRequests };
  }

  /** What is wrong with a round's answers to the questions handed out, or undefined: each needs its own answer. */
  problemWith(inputResponses: JsonObject): string | undefined {
    for (const [key, q] of this.#asked) {
      const answer = ownValue(inputResponses, key);
      if (!isJsonObject(answer))
        return `inputResponses has no answer (an object) to "${key}" (${q.request.method})`;
      if (q.request.method === 'elicitation/create' && !isElicitResult(answer))
        return `inputResponses.${key} answers elicitation/create without an action of accept, decline or cancel`;
      // Each answer goes to the server as the result of its request: one of another kind is refused here.
      const wrongKind = answerKindProblem(q.request, answer);
      if (wrongKind !== undefined) return `inputResponses.${key} ${wrongKind}`;
    }
    return undefined;
  }

  /** Give the server the round's answers to the questions handed out (checked with `problemWith` first). */
  answer(inputResponses: JsonObject): void {
    for (const [key, q] of this.#asked) q.respond(reply(q.id, ownValue(inputResponses, key) as JsonObject));
    this.#asked.clear();
  }

  /** Drop the call: its upstream request is cancelled, and the server's open questions are refused. */
  cancel(reason: Error): void {
    if (!this.#stop.signal.aborted) this.#stop.abort(reason);
    this.#refuseOpen(`the call was dropped: ${describeError(reason)}`);
    this.#ended();
  }

  #finish(end: Extract<CallEvent, { type: 'answered' | 'failed' }>): void {
    this.#end ??= end;
    this.#ended();
    this.#wake?.();
  }

  #refuseOpen(why: string): void {
    for (const q of [...this.#asked.values(), ...this.#queued])
      q.respond(refusal(q.id, ErrorCode.InternalError, why));
    this.#asked.clear();
    this.#queued = [];
  }
}
