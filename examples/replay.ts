// The example of docs/replay.md: a server whose every requestState is single-use, with its steps run exactly once.
// It runs as it is; test/docs/examples-run.test.ts replays its states and counts what ran.
// #region server

import { McpServer, text } from 'mrtr/server';
import { openStore } from 'mrtr/stores';
import { z } from 'zod';

// memory (one process) · sqlite:PATH (one machine; the embedded default) · redis://HOST:PORT/DB (a fleet)
const replayStore = await openStore(process.env.REPLAY_STORE ?? 'memory');

export const refunds: string[] = [];

export const server = new McpServer({
  name: 'payments',
  version: '1.0.0',
  rounds: { replay: { store: replayStore } },
}).tool(
  {
    name: 'refund',
    description: 'Refunds an order once the person confirms the amount',
    input: z.object({ order: z.string(), amount: z.number().positive() }),
  },
  async ({ order, amount }, { ask, flowId }) => {
    if (!(await ask.confirm(`Refund ${amount} EUR on order ${order}?`, { key: 'confirm' })))
      return text('Refund cancelled', { isError: true });
    // Runs once per flow: a retry, a replay or a re-run after a crash finds its result instead.
    const receipt = await ask.step('refund', () => {
      refunds.push(`${order}:${amount}:${flowId}`); // pass flowId on as the payment system's idempotency key
      return { receipt: `R-${refunds.length}` };
    });
    return text(`Refunded ${amount} EUR on ${order} (${receipt.receipt})`);
  },
);
// #endregion
