// The example of docs/architecture.md: a guard and an observer joined to the round pipeline by composition. It
// runs as it is; test/docs/examples-run.test.ts calls it. The guard here is a toy — a per-process counter, where a
// real one keeps its records in a shared store so that every instance of a fleet sees them.
// #region seams
import { McpServer, type RoundGuard, type RoundObserver, RoundRefused, text } from 'mrtr/server';

/** Allows each caller at most `limit` rounds; a refusal's reason goes to the log and the observers, not the wire. */
const roundBudget = (limit: number): RoundGuard => {
  const used = new Map<string, number>();
  return {
    name: 'round-budget',
    admit(round) {
      const who = round.principal?.subject ?? 'anonymous';
      if ((used.get(who) ?? 0) >= limit)
        throw new RoundRefused('over_budget', { code: -32600, message: 'Round budget spent' });
    },
    commit(round) {
      const who = round.principal?.subject ?? 'anonymous';
      used.set(who, (used.get(who) ?? 0) + 1);
    },
  };
};

/** One line per round: who, what, how it ended and why. Return a promise to hold the answer until it is durable. */
const auditLine: RoundObserver = {
  observe: (e) => console.log(JSON.stringify([e.principal?.subject, e.target, e.round, e.outcome, e.reason])),
};

export const server = new McpServer({
  name: 'seams',
  version: '1.0.0',
  rounds: { guards: [roundBudget(100)], observers: [auditLine] },
}).tool({ name: 'ping', description: 'Answers pong' }, () => text('pong'));
// #endregion
