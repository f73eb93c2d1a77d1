// Requests a transport refuses before the dispatcher sees them (HTTP: 401, 413, header mismatch, a body that is not
// JSON-RPC; stdio: an overlong line, a line that is not JSON-RPC): told to the round observers as `refused` events,
// so an audit trail holds every refusal, not only the pipeline's. Like a round's answer, the refusal is sent only
// once the observers have settled.
import { type JsonRpcRequest, MRTR_METHODS } from '../protocol/index.js';
import type { Principal } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import type { Logger } from './environment.js';
import { recordableArguments } from './input-bounds.js';
import { notifyObservers } from './round/notify.js';
import type { RoundEvent, RoundObserver } from './round/observer.js';

const MRTR_METHOD_SET: ReadonlySet<string> = new Set(MRTR_METHODS);

/** The method a refused request is recorded with when no JSON-RPC request could be read from its body. */
export const UNREAD_METHOD = '(unread)';

export class TransportRefusals {
  constructor(
    private readonly observers: readonly RoundObserver[],
    private readonly logger: Logger,
    /** Who refused, as `decidedBy`: `http` or `stdio`. */
    private readonly transport: 'http' | 'stdio' = 'http',
    /** The caller when the transport knows it without the request (stdio: from its environment). */
    private readonly principal?: Principal,
    /** How long recording may take before the refusal is answered 500 instead (a sink that hangs). */
    private readonly limitMs: number = SERVER_DEFAULTS.hookTimeoutMs,
  ) {}

  /**
   * Record the refusal, then `send` it. `request` is undefined when the body was not read or not JSON-RPC; other
   * methods than tools/call, prompts/get and resources/read are not rounds and are sent at once. When recording
   * fails, `fail` answers instead (500): a refusal is never sent unrecorded, exactly as a round's answer.
   */
  refuse(
    request: JsonRpcRequest | undefined,
    reason: string,
    startedAt: number,
    send: () => void,
    fail: () => void,
  ): undefined | Promise<void> {
    if (request !== undefined && !MRTR_METHOD_SET.has(request.method)) {
      send();
      return undefined;
    }
    const params = request?.params ?? {};
    const target = request?.method === 'resources/read' ? params.uri : params.name;
    const event: RoundEvent = {
      requestId: request?.id ?? '',
      method: request?.method ?? UNREAD_METHOD,
      target: typeof target === 'string' ? target : undefined,
      arguments: recordableArguments(params.arguments, SERVER_DEFAULTS.maxInputDepth),
      principal: this.principal,
      round: 0,
      flowId: undefined,
      inputResponses: undefined,
      inputRequests: undefined,
      outcome: 'refused',
      reason,
      decidedBy: this.transport,
      steps: [],
      notes: undefined,
      sensitive: undefined,
      startedAt: Date.now() - (performance.now() - startedAt),
      durationMs: performance.now() - startedAt,
    };
    const failed = (error: unknown) => {
      this.logger.error(
        { reason, err: error instanceof Error ? error.stack : String(error) },
        'round observer failed on a refused request',
      );
      fail();
    };
    let pending: Promise<void> | undefined;
    try {
      pending = notifyObservers(this.observers, event, this.limitMs);
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (pending === undefined) {
      send();
      return undefined;
    }
    return pending.then(send, failed);
  }
}
