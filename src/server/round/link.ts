// One shape for every step of a round: a link gets the round and the rest of the chain (`next`). It may answer
// (return a result without calling next), refuse (throw a RoundRefused or an McpError), ask (in the flow, with
// `round.ctx.ask`), or call next() once and see what the rest answered. Composed once, when the server starts.
import type { Result } from '../../protocol/index.js';
import { handlerContractError } from '../errors.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Round } from './round.js';

export interface RoundLink {
  /** Shown in logs and in the round's event when this link answers or refuses. */
  readonly name: string;
  /**
   * Handle the round. Synchronous links keep the round synchronous: return a value, not a promise, when you can.
   * In the flow (the policy position), `next()` gives the handler's own return: a result, or `inputRequired(...)`.
   */
  handle(round: Round, next: () => MaybePromise<Result>): MaybePromise<Result>;
}

/**
 * The links as one function, Hono-compose style: each link's `next` runs the link after it. With every link and
 * the handler synchronous, no promise is made and no microtask is spent (the fast path). The last link must
 * answer: calling next() past it, or calling next() twice, is a contract error naming the link.
 */
export function composeRound(links: readonly RoundLink[]): (round: Round) => MaybePromise<Result> {
  const list = [...links];
  return (round) => {
    let index = -1;
    const dispatch = (i: number): MaybePromise<Result> => {
      if (i <= index) throw handlerContractError(`round link "${list[i - 1]?.name}" called next() twice`);
      index = i;
      const link = list[i];
      if (link === undefined)
        throw handlerContractError(
          i === 0
            ? 'the round chain has no link'
            : `round link "${list[i - 1]?.name}" called next(), but no link follows it`,
        );
      return link.handle(round, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
