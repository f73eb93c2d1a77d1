// McpClient.round(): one round of a tools/call, prompts/get or resources/read and its raw answer, nothing answered
// and no loop driven (a gateway relays each round to its own caller). A 2025 server asks mid-call instead: its call
// is held open (held-calls.ts) and its questions come back as input_required whose requestState is the held call's
// handle; the next round with that handle answers them in-band.
import {
  type ClientCapabilities,
  ErrorCode,
  type InputKind,
  InvalidArgumentError,
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  type Result,
} from '../protocol/index.js';
import type { Connection } from './connection.js';
import { abortError, RemoteError, RequestAborted } from './errors.js';
import type { HeldCalls } from './held-calls.js';
import type { KnownTools } from './known-tools.js';
import { checkRoundArguments, type RoundOptions, type RoundResult, readRound } from './round-args.js';
import { roundParams } from './round-params.js';
import { type CallEvent, UpstreamCall } from './upstream-call.js';

/** What a round needs of its client. */
export interface RoundHost {
  connection: Connection;
  held: HeldCalls;
  tools: KnownTools;
  declared: ReadonlySet<InputKind>;
  /** Declared on a raw round: no tasks extension, since a round returns one answer and cannot carry a task on. */
  capabilities: ClientCapabilities;
  maxQuestionsPerRound: number;
  timeoutMs: number;
  /** Mcp-Param-* headers of a tools/call (none off Streamable HTTP 2026-07-28). */
  toolCallHeaders(name: string, args: JsonObject, signal: AbortSignal): Promise<Record<string, string>>;
}

export async function oneRound<R extends Result>(
  host: RoundHost,
  method: string,
  params: JsonObject,
  options: RoundOptions,
): Promise<RoundResult<R>> {
  const target = checkRoundArguments(method, params, options);
  const { requestState, inputResponses, onNotification } = options;
  const { connection, held } = host;
  const holder = options.holder ?? '';
  const { signal, done } = connection.withTimeout({
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? host.timeoutMs,
  });
  try {
    if (signal.aborted) throw abortError(signal);
    // Whether a requestState is a 2026 server's state or a held call's handle depends on who the server is; and a
    // 2025 call takes its place in the holder's share as it starts (held-calls.ts). Either way: learn the era first.
    await connection.learnGeneration(signal);
    if (requestState !== undefined && connection.generation === 'legacy') {
      const call = held.peek(requestState, holder);
      if (call.method !== method || call.target !== target)
        throw new InvalidArgumentError(
          `round: requestState holds a ${call.method} of "${call.target}", not a ${method} of "${target}"`,
        );
      // Checked before the handle is spent: a round with an answer missing can be sent again, corrected.
      const problem = call.problemWith(inputResponses ?? {});
      if (problem !== undefined) throw new InvalidArgumentError(`round: ${problem}`);
      held.take(requestState, holder);
      call.answer(inputResponses ?? {});
      return await nextRound<R>(host, call, holder, signal, onNotification);
    }
    const args = isJsonObject(params.arguments) ? params.arguments : {};
    const headers = method === 'tools/call' ? await host.toolCallHeaders(target, args, signal) : undefined;
    const call = new UpstreamCall(method, target, host.declared, host.maxQuestionsPerRound);
    // Refused before anything is sent: a call that may ask could not be held for this holder.
    if (connection.generation === 'legacy') held.enter(call, holder);
    const { openRounds } = connection.legacy;
    openRounds.add(call);
    void call.ended.then(() => openRounds.delete(call));
    call.follow(
      connection.exchange(method, roundParams(params, inputResponses, requestState), {
        signal: call.signal,
        onNotification: (n) => call.onNotification?.(n),
        headers,
        onServerRequest: call.onServerRequest,
        capabilities: host.capabilities,
      }),
    );
    return await nextRound<R>(host, call, holder, signal, onNotification);
  } catch (error) {
    // streamable-http.mdx: a HeaderMismatch means the tool's schema may have changed; plan its headers anew.
    if (error instanceof RemoteError && error.code === ErrorCode.HeaderMismatch) host.tools.forget(target);
    throw error;
  } finally {
    done();
  }
}

/** What the call does next, as one round: its answer, or the questions it asks with the handle that holds it. */
async function nextRound<R extends Result>(
  host: RoundHost,
  call: UpstreamCall,
  holder: string,
  signal: AbortSignal,
  onNotification: ((n: JsonRpcNotification) => void) | undefined,
): Promise<RoundResult<R>> {
  call.onNotification = onNotification;
  let event: CallEvent;
  try {
    event = await call.next(signal);
  } catch (error) {
    // The round ended (its signal, its deadline) while the call ran: the upstream call ends with it.
    call.cancel(error instanceof Error ? error : new RequestAborted(error, String(error)));
    throw error;
  } finally {
    call.onNotification = undefined;
  }
  if (event.type === 'failed') throw event.error;
  if (event.type === 'answered')
    return readRound<R>(call.method, event.response, host.declared, host.maxQuestionsPerRound);
  return {
    resultType: 'input_required',
    inputRequests: event.inputRequests,
    requestState: host.held.hold(call, holder),
  };
}
