// What a RoundRunner is built with, and what one MRTR request resolves to (its entry): the runner's public shapes.
import type { Implementation } from '../../protocol/index.js';
import type { AskConnector } from '../context.js';
import type { Logger } from '../environment.js';
import type { RequestStateCodec } from '../request-state.js';
import type { RoundGuard } from './guard.js';
import type { RoundLink } from './link.js';
import type { RoundObserver } from './observer.js';
import type { Call, RoundEntry } from './round.js';

export type { RoundEntry };

export interface RoundRunnerOptions {
  /** Seals and opens every round's requestState (e.g. `new SealedStateCodec({ keyring, audience })`). */
  codec: RequestStateCodec;
  /** Checks every round passes before and after its handler runs, in order. */
  guards?: readonly RoundGuard[];
  /** Told every round's intent and outcome, refused ones included; the answer waits for their promises. */
  observers?: readonly RoundObserver[];
  /** Links in the flow before the handler (the policy position): they may ask with `round.ctx`, answer or pass. */
  links?: readonly RoundLink[];
  logger?: Logger;
  /** Most input_required rounds one call may take, unless its entry says otherwise (default 10). */
  maxRounds?: number;
  /** How long one round of a handler may run, unless its entry sets `timeoutMs` (default 120 s). */
  handlerTimeoutMs?: number;
  /** How long a guard's or an observer's promise may take before the round fails closed (default 10 s). */
  hookTimeoutMs?: number;
  /** How deep arguments, answers and `_meta` may nest (default 64); checked by `run`, before anything reads them. */
  maxInputDepth?: number;
  /** Check every result and question against the official schema before it is sent (development and tests). */
  validateResults?: boolean;
  /** Put into every answer's `_meta` (the server's name and version), as the dispatcher does. */
  serverInfo?: Implementation;
  /** What `ctx.ask.connect` calls: the connections attached to the server (read when a handler connects). */
  connector?: () => AskConnector | undefined;
}

/** One MRTR request on its way: the request, its params and `_meta`, the transport's environment. */
export type RoundCall = Call;
