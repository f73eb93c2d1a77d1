// What McpClient.round() takes and gives: its arguments, checked with a message that names what is wrong, and a
// server's answer read as one raw round (complete, or input_required read as strictly as the driver reads it).
import {
  type InputKind,
  type InputRequiredResult,
  type InputResponses,
  InvalidArgumentError,
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcResponse,
  MRTR_METHODS,
  type Result,
} from '../protocol/index.js';
import { ProtocolViolation, RemoteError } from './errors.js';
import { parseInputRequired } from './input.js';

export interface RoundOptions {
  /**
   * The `requestState` of the previous round's input_required, sent byte for byte: a 2026-07-28 server's state, or
   * the handle of a 2025 server's call held open by this client. Absent on a first round.
   */
  requestState?: string;
  /** Answers to the previous round's `inputRequests`, by their keys, sent as given. */
  inputResponses?: InputResponses | JsonObject;
  /**
   * Who the round is for (e.g. the gateway's caller): a held 2025 call answers only to the holder that started it,
   * and each holder may hold its share of calls. Default `''`: callers that name no holder share one share.
   */
  holder?: string;
  /** Aborting cancels the request in flight (a held 2025 call with it). */
  signal?: AbortSignal;
  /** This round's time limit: default the client's `mrtr.timeoutMs`, else 300 000 ms; past it, as `signal`. */
  timeoutMs?: number;
  /** Notifications the server sends about the request during this round (progress, log messages). */
  onNotification?: (notification: JsonRpcNotification) => void;
}

/** One round's raw answer: the result, or the server's questions and the requestState to send back with the answers. */
export type RoundResult<R extends Result = Result> = (R & { resultType: 'complete' }) | InputRequiredResult;

const describe = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? JSON.stringify(v) : typeof v;

/** The target the round names (tool or prompt name, resource URI); a TypeError names a bad argument first. */
export function checkRoundArguments(method: unknown, params: unknown, options: unknown): string {
  if (typeof method !== 'string' || !(MRTR_METHODS as readonly string[]).includes(method))
    throw new InvalidArgumentError(
      `round: method must be one of ${MRTR_METHODS.join(', ')} (the requests that have rounds), got ${describe(method)}`,
    );
  if (!isJsonObject(params))
    throw new InvalidArgumentError(`round: params must be a JSON object, got ${describe(params)}`);
  if (Object.hasOwn(params, 'requestState') || Object.hasOwn(params, 'inputResponses'))
    throw new InvalidArgumentError(
      'round: give requestState and inputResponses as options, not inside params',
    );
  const field = method === 'resources/read' ? 'uri' : 'name';
  const target = params[field];
  if (typeof target !== 'string' || target === '')
    throw new InvalidArgumentError(
      `round: ${method} params need a non-empty string "${field}", got ${describe(target)}`,
    );
  if (options === undefined) return target;
  if (!isJsonObject(options))
    throw new InvalidArgumentError(`round: options must be an object, got ${describe(options)}`);
  const { requestState, inputResponses, holder, timeoutMs } = options;
  if (requestState !== undefined && typeof requestState !== 'string')
    throw new InvalidArgumentError(
      `round: requestState must be a string (exactly as the server sent it), got ${describe(requestState)}`,
    );
  if (inputResponses !== undefined && !isJsonObject(inputResponses))
    throw new InvalidArgumentError(
      `round: inputResponses must be a JSON object keyed like the inputRequests it answers, got ${describe(inputResponses)}`,
    );
  if (holder !== undefined && typeof holder !== 'string')
    throw new InvalidArgumentError(`round: holder must be a string, got ${describe(holder)}`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0))
    throw new InvalidArgumentError(`round: timeoutMs must be a number > 0, got ${describe(timeoutMs)}`);
  return target;
}

/**
 * A server's answer as one round: a JSON-RPC error is thrown as RemoteError (with its code); a result without
 * `resultType` is complete; an input_required must be one the driver would accept (well-formed questions of declared
 * kinds, at most `maxQuestions`, a string requestState) and comes back exactly as the server sent it.
 */
export function readRound<R extends Result>(
  method: string,
  response: JsonRpcResponse,
  declared: ReadonlySet<InputKind>,
  maxQuestions: number,
): RoundResult<R> {
  if ('error' in response) throw new RemoteError(response.error);
  const result = response.result as JsonObject;
  const resultType = result.resultType;
  // basic/index.mdx: an absent resultType means "complete" (2025 servers never send one).
  if (resultType === undefined) return { ...result, resultType: 'complete' } as unknown as RoundResult<R>;
  if (resultType === 'complete') return result as unknown as RoundResult<R>;
  if (resultType === 'input_required') {
    parseInputRequired(result, declared, maxQuestions);
    return result as unknown as RoundResult<R>;
  }
  throw new ProtocolViolation(`unknown resultType ${JSON.stringify(resultType)} in answer to ${method}`);
}
