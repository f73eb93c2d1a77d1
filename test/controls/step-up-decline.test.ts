// The person can say no to a step-up: decline or cancel at the link ends the call with a tool error the model can
// read, and the round's audit event says why. Before, the question's changing text (its check number) kept the
// engine from matching the answer, and the same question came back until the round cap.
import { describe, expect, it } from 'vitest';
import { observedControls } from './observed.js';

describe('declining a step-up (MRTR)', () => {
  for (const [action, word] of [
    ['decline', 'declined'],
    ['cancel', 'cancelled'],
  ] as const) {
    it(`${action} at the step-up link ends the call with "${word}", audited`, async () => {
      const s = await observedControls({ pendingWaitMs: 0 });
      const first = await s.call('recovery');
      expect(first.resultType).toBe('input_required');
      const ended = await s.call('recovery', {
        requestState: first.requestState,
        inputResponses: { step_up: { action } },
      });
      expect(ended.resultType).toBe('complete');
      expect(ended.isError).toBe(true);
      expect(ended.content[0].text).toBe(
        `${word} by the user: the step-up (second factor) for "Show the recovery codes" was ${word}, so nothing was done`,
      );
      const last = s.rounds.at(-1)!;
      expect(last.round).toBe(1);
      expect((last.notes as Record<string, unknown>).stepUp).toEqual({
        id: expect.stringMatching(/^[\w-]{22}$/),
        refused: word,
      });
    });
  }
});
