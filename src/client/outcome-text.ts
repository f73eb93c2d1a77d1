// How a call ended, in words: one line a person can read, or the result of a complete outcome (else an error).
import type { JsonObject, Result } from '../protocol/index.js';
import type { MrtrOutcome } from './driver.js';
import { CallIncompleteError } from './errors.js';

/** The result of a complete outcome, or a CallIncompleteError (ERR_CALL_INCOMPLETE) describing how the call ended otherwise. */
export function unwrapOutcome<R extends Result>(outcome: MrtrOutcome<R>): R {
  if (outcome.status === 'complete') return outcome.result;
  throw new CallIncompleteError(describeOutcome(outcome));
}

/** One line a person can read about how a call ended. */
export function describeOutcome(outcome: MrtrOutcome): string {
  const r = `after ${outcome.rounds} round${outcome.rounds === 1 ? '' : 's'}`;
  switch (outcome.status) {
    case 'complete':
      return (outcome.result as JsonObject).isError === true ? `tool error ${r}` : `complete ${r}`;
    case 'needs_person': {
      const q = outcome.pending
        .map(
          (p) =>
            `"${p.message ?? p.key}" (input key ${JSON.stringify(p.key)}; ${p.why === 'no_resolver' ? 'nothing here can answer it' : p.why.replace('_', ' ')})`,
        )
        .join(', ');
      return `needs a person to answer ${q} ${r}`;
    }
    case 'round_cap':
      return `stopped at the round cap (${outcome.maxRounds} retries) ${r}: the server still asked for input`;
    case 'server_error':
      return `server error ${outcome.error.code}: ${outcome.error.message}`;
    case 'protocol_error':
      return `protocol error ${r}: ${outcome.message}`;
    case 'transport_error':
      return `transport error ${r}: ${outcome.message}`;
    case 'resolver_error':
      return `could not answer "${outcome.key}": ${outcome.message}`;
    case 'timeout':
      return `timed out after ${outcome.timeoutMs} ms (${outcome.rounds} rounds)`;
    case 'aborted':
      return `aborted ${r}`;
    case 'cancelled':
      return `task ${outcome.taskId} was cancelled ${r}: ${outcome.message}`;
  }
}
