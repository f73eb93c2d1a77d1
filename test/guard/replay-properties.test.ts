// Property: in any flow, after any number of its rounds were presented, replaying any earlier state — with the same
// answers or others — is refused, except an identical retry of the last presented state, which gets the identical
// answer. The handler completes at most once whatever the client does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/stores/index.js';
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

describe('replay properties (fast-check)', () => {
  it('only an identical retry of the last presented round is answered; everything else is refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            presented: fc.integer({ min: 1, max: n }),
            replays: fc.array(fc.record({ index: fc.nat(), sameAnswers: fc.boolean() }), {
              minLength: 1,
              maxLength: 8,
            }),
          }),
        ),
        async ({ n, presented, replays }) => {
          const { core, counters } = replayServer(new MemoryStore());
          const args = { n };
          const states: string[] = [stateOf(await send(core, toolCall('chain', args)))];
          const answers: Record<string, unknown>[] = [];
          const results: string[] = [];
          for (let i = 0; i < presented; i++) {
            answers.push(formAnswer(`q${i}`, { v: `v${i}` }));
            const reply = await send(core, present('chain', args, states[i]!, answers[i]!));
            results.push(JSON.stringify(resultOf(reply)));
            if (i + 1 < n) states.push(stateOf(reply));
          }
          for (const { index, sameAnswers } of replays) {
            const i = index % presented;
            const sent = sameAnswers ? answers[i]! : formAnswer(`q${i}`, { v: 'forged' });
            const reply = await send(core, present('chain', args, states[i]!, sent));
            if (i === presented - 1 && sameAnswers) expect(JSON.stringify(resultOf(reply))).toBe(results[i]);
            else
              expect(errorOf(reply)).toEqual({
                code: -32602,
                message: 'Invalid params: invalid requestState',
              });
          }
          expect(counters.completed('chain')).toBe(presented === n ? 1 : 0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
