// The one round loop of the client: every call McpClient drives (callTool, getPrompt, readResource, followTask),
// `mrtr call`, and `driveMrtr` for custom transports go through `driveMrtr` here. It owns what every path must do
// alike: the round cap, the deadline and abort, answering questions through the resolvers, the state-only backoff,
// and the outcome. Where the next step comes from is a source: MRTR rounds (mrtr-rounds.ts, with the 2025 path's
// in-band questions) or a task followed to its end (task-follow.ts).
import { InvalidOptionError, MrtrError, type Result, TimeLimitError } from '../protocol/index.js';
import { followAbort } from '../protocol/internal.js';
import { answerQuestions, pendingOf, ResolverFailed } from './answer-questions.js';
import {
  CLIENT_DEFAULTS,
  type DeclinedAnswer,
  type DriverOptions,
  type DriverTarget,
  type MrtrEvent,
  type MrtrOutcome,
} from './driver.js';
import { ProtocolViolation, RequestAborted, TransportFailure } from './errors.js';
import { InBandQuestions } from './in-band-questions.js';
import { LegacyRoundCap } from './legacy-questions.js';
import type { LoopContext, Step } from './loop-steps.js';
import { mrtrRounds } from './mrtr-rounds.js';
import type { ResolveContext } from './resolvers.js';
import { pause } from './round-retry.js';
import { cancelQuietly, taskSteps } from './task-follow.js';

/** Run one call to its end. Never throws for anything the server or the network does. */
export async function driveMrtr<R extends Result = Result>(
  target: DriverTarget,
  options: DriverOptions = {},
): Promise<MrtrOutcome<R>> {
  const maxRounds = options.maxRounds ?? CLIENT_DEFAULTS.maxRounds;
  if (!Number.isInteger(maxRounds) || maxRounds < 0)
    throw new InvalidOptionError('maxRounds must be an integer >= 0');
  const timeoutMs = options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
  if (!(timeoutMs > 0)) throw new InvalidOptionError('timeoutMs must be > 0');
  const retry = options.retry;
  if (retry !== undefined && !(Number.isInteger(retry.attempts) && retry.attempts >= 0))
    throw new InvalidOptionError('retry.attempts must be an integer >= 0');
  const initialBackoff = options.backoff?.initialMs ?? 100;
  const maxBackoff = options.backoff?.maxMs ?? 2000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 30_000;
  const maxQuestions = options.maxQuestionsPerRound ?? CLIENT_DEFAULTS.maxQuestionsPerRound;
  const emit = (event: MrtrEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A UI callback must not break the call.
    }
  };

  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new TimeLimitError(`timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const unfollow = followAbort(options.signal, deadline);
  const signal = deadline.signal;

  let rounds = 0;
  /** Rounds sent in reply to a step (answers, a state-only retry, a tasks/update): `maxRounds` bounds these. */
  let replies = 0;
  let stateOnlyStreak = 0;
  const declined: DeclinedAnswer[] = [];
  const onDeclined = (round: number, key: string, action: 'decline' | 'cancel') =>
    declined.push({ round, key, action });
  const about = {
    method: target.method,
    target: target.target,
    server: target.server,
    endpoint: target.endpoint,
  };
  const loop: LoopContext = {
    signal,
    emit,
    startRound: (method) => {
      // Stopped between rounds: no further request is sent, and none is counted.
      if (signal.aborted) throw new RequestAborted(signal.reason);
      rounds++;
      emit({ type: 'round', round: rounds, method, target: target.target });
      return rounds;
    },
  };
  const inBand = new InBandQuestions({
    bounds: { maxRounds, maxQuestionsPerRound: maxQuestions, declared: target.declared },
    resolvers: target.resolvers,
    declared: target.declared,
    about,
    emit,
    onDeclined,
  });
  /** The task being followed: on abort it is cancelled (unless the abort is the deadline, or cancelOnAbort is off). */
  let following: string | undefined;

  const finish = (outcome: MrtrOutcome<R>): MrtrOutcome<R> => {
    clearTimeout(timer);
    unfollow();
    // A 2025 question nobody here could answer is what the person needs to hear, unless the call ended for something
    // they cannot fix here: an interruption, the deadline, or the server breaking its bounds.
    const overrides = ['aborted', 'timeout', 'round_cap', 'protocol_error'];
    if (inBand.unanswered.length > 0 && !overrides.includes(outcome.status))
      outcome = { status: 'needs_person', rounds: outcome.rounds, pending: inBand.unanswered };
    emit({ type: 'done', status: outcome.status, rounds: outcome.rounds });
    return outcome;
  };

  try {
    let step: Step<R> = target.resume
      ? { kind: 'task', taskId: target.resume.taskId, seed: target.resume.seed }
      : await mrtrRounds<R>(target, loop, { retry, maxQuestions, inBand }).first();
    for (;;) {
      if (signal.aborted) throw new RequestAborted(signal.reason);
      if (step.kind === 'end') {
        const end = step.end;
        return finish(end.status === 'complete' ? { ...end, rounds, declined } : { ...end, rounds });
      }
      if (step.kind === 'task') {
        if (!target.tasks) throw new InvalidOptionError('resuming a task needs the task requests');
        following = step.taskId;
        step = await taskSteps<R>(step.taskId, step.seed, target.tasks, loop, target.declared, maxQuestions);
        continue;
      }
      if (step.kind === 'wait') {
        await pause(step.delayMs, signal);
        step = await step.next();
        continue;
      }
      if (replies >= maxRounds)
        return finish({
          status: 'round_cap',
          rounds,
          maxRounds,
          pending: step.questions.map((q) => pendingOf(q)),
        });
      replies++;
      if (step.questions.length === 0) {
        // State-only round: nothing to answer, sent again with the state after a short, bounded pause.
        const delayMs =
          step.retryAfterMs !== undefined
            ? Math.min(step.retryAfterMs, maxRetryAfter)
            : Math.min(initialBackoff * 2 ** stateOnlyStreak, maxBackoff);
        stateOnlyStreak++;
        emit({ type: 'retrying', round: rounds + 1, delayMs, reason: 'state_only' });
        await pause(delayMs, signal);
        step = await step.reply(undefined);
        continue;
      }
      stateOnlyStreak = 0;
      const round = rounds;
      for (const q of step.questions)
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
      const ctx: ResolveContext = { ...about, signal, round };
      const got = await answerQuestions(step.questions, target.resolvers, ctx, (a) => {
        if (a.action === 'decline' || a.action === 'cancel') onDeclined(round, a.key, a.action);
        emit({ type: 'answered', round, ...a });
      });
      if ('unanswerable' in got) return finish({ status: 'needs_person', rounds, pending: got.unanswerable });
      emit({ type: 'retrying', round: round + 1, delayMs: 0, reason: 'answered' });
      step = await step.reply(got.answers);
    }
  } catch (error) {
    if (
      following !== undefined &&
      signal.aborted &&
      (target.resume?.cancelOnAbort ?? true) &&
      !timedOut(signal)
    )
      await cancelQuietly(target.tasks as NonNullable<DriverTarget['tasks']>, following);
    if (error instanceof RequestAborted || signal.aborted) {
      if (options.signal?.aborted)
        return finish({ status: 'aborted', rounds, reason: options.signal.reason });
      if (deadline.signal.aborted) return finish({ status: 'timeout', rounds, timeoutMs });
      return finish({ status: 'aborted', rounds, reason: (error as RequestAborted).reason });
    }
    if (error instanceof ProtocolViolation)
      return finish({ status: 'protocol_error', rounds, message: error.message });
    // A 2025 server asks inside one request: its rounds of questions are counted where they arrive.
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
    unfollow();
    throw error;
  }
}

/** The call's deadline passed (ERR_TIMEOUT): the caller stops waiting, the task goes on (`followTask` picks it up). */
function timedOut(signal: AbortSignal): boolean {
  return signal.reason instanceof MrtrError && signal.reason.code === 'ERR_TIMEOUT';
}
