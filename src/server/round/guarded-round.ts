// The GuardedRound a guard sees. A class whose digests are computed on first read: a guard that keys on the state
// pays for one hash, and a server without guards never builds one.
import { createHash } from 'node:crypto';
import type { InputResponse } from '../../protocol/index.js';
import { argumentsDigest } from '../../state/index.js';
import type { Principal } from '../context.js';
import type { GuardedRound, RoundTool } from './guard.js';
import type { RoundInput } from './state.js';

export class GuardedRoundView implements GuardedRound {
  #stateDigest: string | undefined;
  #answersDigest: string | undefined;
  // True private fields: a guard that stores or logs the object whole must never save the live token or the
  // handler's decrypted state (toJSON below lists what it may keep).
  readonly #token: string | undefined;
  readonly #input: RoundInput;
  readonly #args: unknown;

  constructor(
    readonly requestId: string | number,
    readonly method: GuardedRound['method'],
    readonly target: string,
    args: unknown,
    readonly principal: Principal | undefined,
    token: string | undefined,
    input: RoundInput,
    readonly tool: RoundTool | undefined,
  ) {
    this.#args = args;
    this.#token = token;
    this.#input = input;
  }

  get arguments(): unknown {
    return this.#args;
  }
  get round(): number {
    return this.#input.round;
  }
  get flowId(): string | undefined {
    return this.#input.flowId;
  }
  get stateExpiresAt(): number | undefined {
    return this.#input.expiresAt;
  }
  get inputResponses(): Readonly<Record<string, InputResponse>> {
    return this.#input.inputResponses;
  }
  get stateDigest(): string | undefined {
    if (this.#token === undefined) return undefined;
    this.#stateDigest ??= createHash('sha256').update(this.#token).digest('base64url');
    return this.#stateDigest;
  }
  get answersDigest(): string {
    this.#answersDigest ??= argumentsDigest(this.#input.inputResponses);
    return this.#answersDigest;
  }

  // The entry stays out: it holds the handler, and `target` already names it.
  toJSON(): GuardedRound {
    return {
      requestId: this.requestId,
      method: this.method,
      target: this.target,
      arguments: this.arguments,
      principal: this.principal,
      round: this.round,
      flowId: this.flowId,
      stateDigest: this.stateDigest,
      stateExpiresAt: this.stateExpiresAt,
      inputResponses: this.inputResponses,
      answersDigest: this.answersDigest,
    };
  }
}
