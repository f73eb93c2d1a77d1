// What the round tells as it goes: its sensitive fields to the trail, every refusal to the log with its reason, and
// its intent to the observers before the handler runs (write-ahead).
import { ErrorCode, McpError, type Result, RoundRefused } from '../../protocol/index.js';
import type { Logger } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import { HookTimeoutError } from '../time-bound.js';
import type { RoundLink } from './link.js';
import type { Round } from './round.js';

/** The round's event names the fields its handler marked sensitive, whatever happens next. */
export const describeRound: RoundLink = {
  name: 'audit: sensitive fields',
  handle(round, next) {
    round.trace?.describe(round.options.sensitive);
    return next();
  },
};

/**
 * Every refusal of a guarded round is logged with its reason and cause — except a state that did not open (logged
 * already, more precisely), a guard's failed commit, and a failure after the round was answered (its time passed).
 */
export function logRefusals(logger: Logger): RoundLink {
  return {
    name: 'refusal log',
    handle(round, next) {
      const log = (error: unknown): never => {
        if (
          error instanceof RoundRefused &&
          error !== round.logged &&
          error !== round.quiet &&
          !round.outlived
        ) {
          const cause = error.cause instanceof Error ? error.cause.message : undefined;
          logger.warn(
            { method: round.method, target: round.target, id: round.request.id, reason: error.reason, cause },
            'round refused',
          );
        } else if (error instanceof HookTimeoutError && error.reason === 'guard_timeout')
          // The client is told only that a check timed out; the operator learns which guard's store hangs.
          logger.error(
            {
              method: round.method,
              target: round.target,
              id: round.request.id,
              hook: error.what,
              limitMs: error.limitMs,
            },
            'round guard did not answer in time',
          );
        throw error;
      };
      let result: MaybePromise<Result>;
      try {
        result = next();
      } catch (error) {
        return log(error);
      }
      return result instanceof Promise ? result.catch(log) : result;
    },
  };
}

/**
 * Record the round's intent with the observers, then run the rest. Write-ahead: the handler — and any effect it
 * has — runs only once the intent is recorded (an audit trail: durable); a round whose intent cannot be recorded
 * does not run at all. With no observer waiting, no promise is added.
 */
export function auditIntent(logger: Logger): RoundLink {
  return {
    name: 'audit: intent',
    handle(round, next) {
      const trace = round.trace;
      if (!trace) return next();
      let intended: undefined | Promise<void>;
      try {
        intended = trace.intend(round.target);
      } catch (error) {
        throw intentNotRecorded(round, error, logger);
      }
      if (intended === undefined) return next();
      return intended.then(next, (error: unknown) => {
        throw intentNotRecorded(round, error, logger);
      });
    },
  };
}

function intentNotRecorded(round: Round, error: unknown, logger: Logger): McpError {
  logger.error(
    {
      method: round.method,
      target: round.target,
      id: round.request.id,
      err: error instanceof Error ? error.message : String(error),
    },
    'round intent not recorded: the handler did not run',
  );
  const late = error instanceof HookTimeoutError ? ` within ${error.limitMs} ms` : '';
  return new McpError(
    ErrorCode.InternalError,
    `Internal error: the round's intent could not be recorded${late}, so ${round.target} did not run`,
    { reason: 'intent_not_recorded' },
  );
}
