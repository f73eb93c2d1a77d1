// The example of docs/architecture.md: a RoundLink passed in `rounds.links`. It runs as it is;
// test/docs/examples-run.test.ts calls it through a real McpServer.
// #region link
import { McpServer, type RoundLink, text } from 'mrtr/server';

/** While `frozen` is set, tools that write are answered here, and their handlers never run. */
export const freeze = { frozen: false, writers: new Set(['delete_report']) };

const changeFreeze: RoundLink = {
  name: 'change-freeze',
  handle(round, next) {
    if (freeze.frozen && freeze.writers.has(round.target))
      return {
        resultType: 'complete',
        content: [{ type: 'text', text: `${round.target} is frozen` }],
        isError: true,
      };
    return next(); // the handler (or the next link) answers
  },
};

export const handlerRuns = { delete_report: 0 };
export const server = new McpServer({
  name: 'freeze',
  version: '1.0.0',
  rounds: { links: [changeFreeze] },
}).tool({ name: 'delete_report', description: 'Deletes the report' }, () => {
  handlerRuns.delete_report += 1;
  return text('deleted');
});
// #endregion
