// Open the round's requestState and answers: the state's round number, flow id, journal and the answers accepted.
import { RoundRefused } from '../../protocol/index.js';
import type { Logger } from '../environment.js';
import type { RequestStateCodec } from '../request-state.js';
import type { RoundLink } from './link.js';
import { openRound } from './state.js';

/** A state that does not open is refused, and logged with its precise reason (the client sees one fixed error). */
export function openState(codec: RequestStateCodec, logger: Logger): RoundLink {
  return {
    name: 'open state',
    handle(round, next) {
      try {
        round.input = openRound(round.params, codec, round.binding, round.options.unsealedAnswers ?? false);
      } catch (error) {
        if (error instanceof RoundRefused) {
          logger.warn(
            { method: round.method, target: round.target, id: round.request.id, reason: error.reason },
            'requestState rejected',
          );
          round.logged = error;
        }
        throw error;
      }
      round.trace?.opened(round.input);
      const span = round.span;
      if (span === undefined) return next();
      // The span starts now that its parent (the flow's first round) is known, and is active for the rest.
      span.opened(round.input);
      return span.run(next);
    },
  };
}
