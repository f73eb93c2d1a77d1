// The pauses of the round loop: one abortable wait, and a round sent again as it was while it got no answer (the
// `retry` option: safe only against a server with a replay guard, which runs a round once however often it is sent).
import type { JsonRpcResponse } from '../protocol/index.js';
import { pauseUntilAborted } from '../protocol/internal.js';
import type { DriverOptions, MrtrEvent } from './driver.js';
import { RequestAborted, TransportFailure } from './errors.js';

/** HTTP statuses a gateway gives when the instance behind it failed: the round may or may not have run. */
const GATEWAY_FAILURES = new Set([502, 503, 504]);
/** The replay guard's answer to a retry that arrived while the first attempt still runs (or its instance died). */
const STILL_RUNNING = 'still running for an earlier identical request';

/** Resolves after `ms`; rejects with RequestAborted when the signal aborts first. The timer never keeps Node alive. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await pauseUntilAborted(
    ms,
    signal,
    (s) => {
      throw new RequestAborted(s.reason);
    },
    { unref: true },
  );
}

/** Whether a round that ended like this may be sent again as it was. */
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

/** One round's request, sent again as it was while it gets no answer, at most `attempts` more times. */
export async function sendWithRetries(
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
    await pause(delayMs, signal);
  }
}
