// The MRTR driver: carries one call through its input_required rounds — bounded, abortable, isolated.

import {
  type DetailedTask,
  type InputKind,
  type InputResponses,
  type JsonObject,
  type JsonRpcError,
  type JsonRpcNotification,
  type JsonRpcResponse,
  MrtrError,
  type Result,
} from '../protocol/index.js';
import { pauseUntilAborted } from '../protocol/internal.js';
import { answerQuestions, type PendingQuestion, pendingOf, ResolverFailed } from './answer-questions.js';
import { abortError, ProtocolViolation, RequestAborted, TransportFailure } from './errors.js';
import { type PersonReason, parseInputRequired } from './input.js';
import { LegacyRoundCap } from './legacy-questions.js';
import type { InputResolver, ResolveContext } from './resolvers.js';
import { roundParams } from './round-params.js';
import { followTask, type TaskEvent, type TaskWire } from './task-follow.js';
import { readTask } from './task-shape.js';

export type { PendingQuestion } from './answer-questions.js';
export type { TaskEvent, TaskWire } from './task-follow.js';

/** The driver's defaults. */
export const CLIENT_DEFAULTS = Object.freeze({
  /** The server's own default cap: a server that keeps asking past it is looping. */
  maxRounds: 10,
  /** A whole call, rounds and a person's answers included: five minutes, then the call is abandoned. */
  timeoutMs: 300_000,
  /** A person answers a handful of questions at once; a round asking for more is flooding, not asking. */
  maxQuestionsPerRound: 32,
  /** Pages of one list (tools/list, …) followed at most: a cursor that never ends must not page for ever. */
  maxListPages: 100,
  /** Items of one list kept at most, over all its pages. */
  maxListItems: 10_000,
  /** Characters (as JSON) of one list kept at most, over all its pages: 32 Mi, whatever the page count. */
  maxListChars: 32 * 1024 * 1024,
  /** stdio.mdx's "reasonable timeout" for the server/discover probe: a legacy server may not answer it at all. */
  probeTimeoutMs: 10_000,
  /** A legacy SSE stream that keeps breaking is not resumed for ever. */
  maxResumes: 5,
  /** The pause before resuming a legacy stream when the server gave no `retry:`. */
  resumeDelayMs: 1000,
  /** A server's `retry:` is honoured up to this. */
  maxResumeDelayMs: 30_000,
  /** OAuth step-ups for one request: a server that keeps asking for more scope is refused, not followed for ever. */
  maxStepUps: 2,
  /** An OAuth access token this close to its expiry is refreshed first. */
  refreshSkewMs: 30_000,
  /** Each OAuth discovery, registration or token request: an authorization server that hangs does not hang the call. */
  oauthRequestTimeoutMs: 30_000,
  /** One HTTP response body (an MCP answer, an SSE event, an OAuth document) is read up to this: 16 MiB. */
  maxResponseBytes: 16 * 1024 * 1024,
  /**
   * A pooled keep-alive socket idle this long is closed rather than reused: below the 5 s most servers keep an idle
   * socket (Node's, uvicorn's), so a request is never written on one the server is closing. (A server's own
   * `Keep-Alive: timeout=N` hint lowers it to N − 1 s.)
   */
  idleSocketMs: 4000,
  /** A 2025 upstream call that round() holds waits this long for its next round, then is dropped (as the bridge waits). */
  heldCallMs: 10 * 60 * 1000,
  /** Held 2025 calls one holder may have: a caller starting calls it never finishes is slowed (429), nobody else. */
  maxHeldCallsPerHolder: 100,
  /** Held 2025 calls in all: each keeps an upstream request open, and its questions, in this process. */
  maxHeldCalls: 1000,
});

export interface DriverOptions {
  /** Retries at most (exact): a call sends at most `maxRounds + 1` requests. Default 10. */
  maxRounds?: number;
  /** Total time for the whole call, including time spent answering questions. Default 300 000 ms. */
  timeoutMs?: number;
  /** Aborting cancels the request in flight, or stops between rounds. */
  signal?: AbortSignal;
  /** Progress for UIs: round started, input needed, answered, retrying, notifications, done. */
  onEvent?: (event: MrtrEvent) => void;
  /** Pause before retrying a state-only round (no inputRequests): doubles from `initialMs` up to `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Upper bound on the server's `dev.mrtr/retryAfterMs` hint. Default 30 000 ms. */
  maxRetryAfterMs?: number;
  /** Questions one round may ask; more is a protocol error, nothing is shown or answered. Default 32. */
  maxQuestionsPerRound?: number;
  /**
   * Send a round again, exactly as it was (same `requestState`, same `inputResponses`), when it got no answer: the
   * connection failed, was refused, reset or cut off, a gateway answered 502/503/504 without a JSON-RPC answer, or
   * the server said the same round is still running for an earlier identical request. Off by default: it is safe
   * only against a server with a replay guard, which runs a round once however often it is sent. `attempts` resends
   * at most per round; the pause doubles from `initialMs` (default 100) up to `maxMs` (default 2000).
   */
  retry?: { attempts: number; initialMs?: number; maxMs?: number };
}

export type MrtrEvent =
  | { type: 'round'; round: number; method: string; target: string | undefined }
  | {
      type: 'input_needed';
      round: number;
      key: string;
      kind: InputKind;
      message: string | undefined;
      /** Why a person must answer, when only a person may. */
      why: PersonReason | undefined;
    }
  | {
      type: 'answered';
      round: number;
      key: string;
      by: string;
      action: 'accept' | 'decline' | 'cancel' | undefined;
    }
  | { type: 'retrying'; round: number; delayMs: number; reason: 'answered' | 'state_only' | 'no_answer' }
  | { type: 'notification'; round: number; notification: JsonRpcNotification }
  /** The call became a task (tasks extension): sent when it is created, then on every status or message change. */
  | TaskEvent
  | { type: 'done'; status: MrtrOutcome['status']; rounds: number };

export interface DeclinedAnswer {
  round: number;
  key: string;
  action: 'decline' | 'cancel';
}

/** How a call ended. `rounds` counts the requests sent (1 for a call that completed at once). */
export type MrtrOutcome<R extends Result = Result> =
  | { status: 'complete'; rounds: number; result: R; declined: DeclinedAnswer[] }
  | { status: 'needs_person'; rounds: number; pending: PendingQuestion[] }
  | { status: 'round_cap'; rounds: number; maxRounds: number; pending: PendingQuestion[] }
  | { status: 'server_error'; rounds: number; error: JsonRpcError }
  | { status: 'protocol_error'; rounds: number; message: string }
  | { status: 'transport_error'; rounds: number; message: string; httpStatus: number | undefined }
  | { status: 'resolver_error'; rounds: number; key: string; message: string }
  | { status: 'timeout'; rounds: number; timeoutMs: number }
  | { status: 'aborted'; rounds: number; reason: unknown }
  /** The call became a task and the task ended cancelled, by someone other than this call (the server, a person). */
  | { status: 'cancelled'; rounds: number; taskId: string; message: string };

export interface DriverTarget {
  method: string;
  params: JsonObject;
  /** The tool or prompt name, or the resource URI, for events and resolvers. */
  target: string | undefined;
  /** Kinds the client declared in this call's capabilities; any other kind asked for is a protocol error. */
  declared: ReadonlySet<InputKind>;
  resolvers: readonly InputResolver[];
  server: string;
  /** The endpoint's host or the command, shown to people next to the name the server claims. */
  endpoint?: string;
  /** Send one request with these params (a new JSON-RPC id each time). */
  send: (
    params: JsonObject,
    signal: AbortSignal,
    onNotification: (n: JsonRpcNotification) => void,
  ) => Promise<JsonRpcResponse>;
  /**
   * Set when the client declared the tasks extension on this call and the method may become a task (tools/call):
   * a CreateTaskResult is then followed through these requests. Without it, resultType "task" is a protocol error.
   */
  tasks?: TaskWire;
  /** Follow this existing task instead of sending the call (McpClient.followTask); `seed` is its state, if known. */
  resume?: { taskId: string; seed?: DetailedTask; cancelOnAbort?: boolean };
}

/** HTTP statuses a gateway gives when the instance behind it failed: the round may or may not have run. */
const GATEWAY_FAILURES = new Set([502, 503, 504]);
/** The replay guard's answer to a retry that arrived while the first attempt still runs (or its instance died). */
const STILL_RUNNING = 'still running for an earlier identical request';

/** Whether a round that ended like this may be sent again as it was (the `retry` option). */
function gotNoAnswer(outcome: { error: unknown } | { response: JsonRpcResponse }): boolean {
  if ('error' in outcome) {
    const e = outcome.error;
    return (
      e instanceof TransportFailure && (e.httpStatus === undefined || GATEWAY_FAILURES.has(e.httpStatus))
    );
  }
  const r = outcome.response;
  return 'error' in r && r.error.code === -32603 && r.error.message.includes(STILL_RUNNING);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return pauseUntilAborted(ms, signal, (s) => {
    throw abortError(s);
  });
}

/** One round's request, sent again as it was while it gets no answer, at most `attempts` more times. */
async function sendWithRetries(
  send: () => Promise<JsonRpcResponse>,
  retry: NonNullable<DriverOptions['retry']>,
  signal: AbortSignal,
  round: number,
  emit: (event: MrtrEvent) => void,
): Promise<JsonRpcResponse> {
  const initial = retry.initialMs ?? 100;
  const max = retry.maxMs ?? 2000;
  for (let attempt = 0; ; attempt++) {
    let outcome: { error: unknown } | { response: JsonRpcResponse };
    try {
      outcome = { response: await send() };
    } catch (error) {
      outcome = { error };
    }
    if (attempt >= retry.attempts || signal.aborted || !gotNoAnswer(outcome)) {
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    }
    const delayMs = Math.min(initial * 2 ** attempt, max);
    emit({ type: 'retrying', round, delayMs, reason: 'no_answer' });
    await sleep(delayMs, signal);
  }
}

/** Run one MRTR call to its end. Never throws for anything the server or the network does. */
export async function driveMrtr<R extends Result = Result>(
  target: DriverTarget,
  options: DriverOptions = {},
): Promise<MrtrOutcome<R>> {
  const maxRounds = options.maxRounds ?? CLIENT_DEFAULTS.maxRounds;
  if (!Number.isInteger(maxRounds) || maxRounds < 0)
    throw new MrtrError('ERR_INVALID_OPTION', 'maxRounds must be an integer >= 0');
  const timeoutMs = options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
  if (!(timeoutMs > 0)) throw new MrtrError('ERR_INVALID_OPTION', 'timeoutMs must be > 0');
  const initialBackoff = options.backoff?.initialMs ?? 100;
  const maxBackoff = options.backoff?.maxMs ?? 2000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 30_000;
  const maxQuestions = options.maxQuestionsPerRound ?? CLIENT_DEFAULTS.maxQuestionsPerRound;
  const retry = options.retry;
  if (retry !== undefined && !(Number.isInteger(retry.attempts) && retry.attempts >= 0))
    throw new MrtrError('ERR_INVALID_OPTION', 'retry.attempts must be an integer >= 0');
  const emit = (event: MrtrEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A UI callback must not break the call.
    }
  };

  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new MrtrError('ERR_TIMEOUT', `timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;

  // The original params, frozen in time: every round sends exactly these plus inputResponses / requestState.
  const base = structuredClone(target.params);

  let rounds = 0;
  let inputResponses: InputResponses | undefined;
  let requestState: string | undefined;
  let stateOnlyStreak = 0;
  const declined: DeclinedAnswer[] = [];

  const finish = (outcome: MrtrOutcome<R>): MrtrOutcome<R> => {
    clearTimeout(timer);
    emit({ type: 'done', status: outcome.status, rounds: outcome.rounds });
    return outcome;
  };

  // While a task is followed its tasks/update requests count as rounds: kept here so an abort reports them too.
  let taskRounds: { count: number } | undefined;
  const follow = async (
    taskId: string,
    seed: DetailedTask | undefined,
    updatesLeft: number,
  ): Promise<MrtrOutcome<R>> => {
    const wire = target.tasks as TaskWire;
    taskRounds = { count: rounds };
    const end = await followTask<R>(taskId, seed, {
      wire,
      signal,
      cancelOnAbort: target.resume?.cancelOnAbort ?? true,
      declared: target.declared,
      resolvers: target.resolvers,
      maxQuestionsPerRound: maxQuestions,
      updatesLeft,
      about: {
        method: target.method,
        target: target.target,
        server: target.server,
        endpoint: target.endpoint,
      },
      rounds: taskRounds,
      emit,
      onDeclined: (round, key, action) => declined.push({ round, key, action }),
    });
    rounds = taskRounds.count;
    switch (end.status) {
      case 'complete':
        return { status: 'complete', rounds, result: end.result, declined };
      case 'round_cap':
        return { status: 'round_cap', rounds, maxRounds, pending: end.pending };
      default:
        return { ...end, rounds };
    }
  };

  try {
    if (target.resume) {
      if (!target.tasks) throw new MrtrError('ERR_INVALID_OPTION', 'resuming a task needs the task requests');
      return finish(await follow(target.resume.taskId, target.resume.seed, maxRounds));
    }
    for (;;) {
      if (signal.aborted) throw new RequestAborted(signal.reason);
      rounds++;
      const round = rounds;
      const params = roundParams(base, inputResponses, requestState);
      emit({ type: 'round', round, method: target.method, target: target.target });
      const send = () =>
        target.send(params, signal, (notification) => emit({ type: 'notification', round, notification }));
      const response = retry ? await sendWithRetries(send, retry, signal, round, emit) : await send();
      if ('error' in response) return finish({ status: 'server_error', rounds, error: response.error });
      const result = response.result as JsonObject;
      const resultType = result.resultType;
      // basic/index.mdx: an absent resultType means "complete"; an unrecognised one is invalid.
      if (resultType === undefined || resultType === 'complete')
        return finish({ status: 'complete', rounds, result: result as unknown as R, declined });
      if (resultType === 'task') {
        // tasks.md: a task in answer to a method that cannot be one, or to a client that did not declare the
        // extension, is an invalid response.
        if (!target.tasks)
          throw new ProtocolViolation(
            `the server answered ${target.method} with a task, which this call did not offer to follow (the tasks extension is declared only on tools/call, and not with tasks: false)`,
          );
        const created = readTask(result, 'the CreateTaskResult');
        return finish(await follow(created.taskId, created, maxRounds - (round - 1)));
      }
      if (resultType !== 'input_required')
        throw new ProtocolViolation(
          `unknown resultType ${JSON.stringify(resultType)} in answer to ${target.method}`,
        );

      const asked = parseInputRequired(result, target.declared, maxQuestions);
      if (round - 1 >= maxRounds)
        return finish({
          status: 'round_cap',
          rounds,
          maxRounds,
          pending: asked.questions.map((q) => pendingOf(q)),
        });

      if (asked.questions.length === 0) {
        // State-only round: nothing to answer, retry with the state after a short, bounded pause.
        const delayMs =
          asked.retryAfterMs !== undefined
            ? Math.min(asked.retryAfterMs, maxRetryAfter)
            : Math.min(initialBackoff * 2 ** stateOnlyStreak, maxBackoff);
        stateOnlyStreak++;
        inputResponses = undefined;
        requestState = asked.requestState;
        emit({ type: 'retrying', round: round + 1, delayMs, reason: 'state_only' });
        await sleep(delayMs, signal);
        continue;
      }
      stateOnlyStreak = 0;

      const ctx: ResolveContext = {
        signal,
        round,
        method: target.method,
        target: target.target,
        server: target.server,
        endpoint: target.endpoint,
      };
      for (const q of asked.questions)
        emit({
          type: 'input_needed',
          round,
          key: q.key,
          kind: q.kind,
          message: q.message,
          why: q.personRequired,
        });
      // Decide who answers what before asking anyone anything: if one question has no one to answer it, the call
      // ends here rather than after a person has typed half the answers.
      const got = await answerQuestions(asked.questions, target.resolvers, ctx, (a) => {
        if (a.action === 'decline' || a.action === 'cancel')
          declined.push({ round, key: a.key, action: a.action });
        emit({ type: 'answered', round, ...a });
      });
      if ('unanswerable' in got) return finish({ status: 'needs_person', rounds, pending: got.unanswerable });
      const answers = got.answers;

      // Fresh answers and the state exactly as received, for this call only.
      inputResponses = answers;
      requestState = asked.requestState;
      emit({ type: 'retrying', round: round + 1, delayMs: 0, reason: 'answered' });
    }
  } catch (error) {
    if (taskRounds) rounds = taskRounds.count;
    if (error instanceof RequestAborted || signal.aborted) {
      if (options.signal?.aborted)
        return finish({ status: 'aborted', rounds, reason: options.signal.reason });
      if (deadline.signal.aborted) return finish({ status: 'timeout', rounds, timeoutMs });
      return finish({ status: 'aborted', rounds, reason: (error as RequestAborted).reason });
    }
    if (error instanceof ProtocolViolation)
      return finish({ status: 'protocol_error', rounds, message: error.message });
    // A legacy server asks inside one request: its rounds of questions are counted where they arrive.
    if (error instanceof LegacyRoundCap)
      return finish({ status: 'round_cap', rounds: error.rounds, maxRounds, pending: error.pending });
    if (error instanceof TransportFailure)
      return finish({
        status: 'transport_error',
        rounds,
        message: error.message,
        httpStatus: error.httpStatus,
      });
    if (error instanceof ResolverFailed)
      return finish({ status: 'resolver_error', rounds, key: error.key, message: error.message });
    clearTimeout(timer);
    throw error;
  }
}
