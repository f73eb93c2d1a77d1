// A replay storm: 100 flows, each of whose second-round state is presented 50 times at once — half identical, half
// with other answers. Each flow's handler completes exactly once (counted by the handler), every identical
// presentation gets that one answer, every other one is refused.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryStore, SqliteStore } from '../../src/stores/index.js';
import {
  errorOf,
  formAnswer,
  present,
  replayServer,
  resultOf,
  send,
  stateOf,
  toolCall,
} from './replay-fixture.js';
import { tempDir } from './stores.js';

describe.each([
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore(join(tempDir(), 'storm.db'))],
])('replay storm on %s', (_name, open) => {
  it('50 parallel presentations × 100 flows: exactly one execution per flow', async () => {
    const { core, counters } = replayServer(open());
    const FLOWS = 100;
    const PARALLEL = 50;
    const states = await Promise.all(
      Array.from({ length: FLOWS }, async () => stateOf(await send(core, toolCall('greet', {})))),
    );
    const outcomes = await Promise.all(
      states.flatMap((state, flow) =>
        Array.from({ length: PARALLEL }, async (_, i) => {
          // Half the presentations carry the same answers, the other half each its own.
          const sent = i % 2 === 0 ? `p${flow}` : `x${i}`;
          const reply = await send(core, present('greet', {}, state, formAnswer('who', { name: sent })));
          return { flow, sent, reply };
        }),
      ),
    );
    expect(counters.completed('greet')).toBe(FLOWS);
    // Whichever answers claimed a flow's state first won it: every presentation of those answers got the one
    // recorded answer, and every presentation of other answers was refused.
    for (let flow = 0; flow < FLOWS; flow++) {
      const mine = outcomes.filter((o) => o.flow === flow);
      const answered = mine.filter((o) => 'result' in o.reply);
      const winner = answered[0]!.sent;
      expect(new Set(answered.map((o) => JSON.stringify(resultOf(o.reply))))).toHaveLength(1);
      expect(answered.every((o) => o.sent === winner)).toBe(true);
      for (const o of mine.filter((x) => x.sent !== winner))
        expect(errorOf(o.reply)).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
      expect(answered.length).toBe(mine.filter((x) => x.sent === winner).length);
    }
  });
});
