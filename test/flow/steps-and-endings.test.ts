// Steps at the edges of a round: once a flow has ended a step never runs, and a handler that fails while a step is
// still running fails only after the step finished (so nothing acts on the failure while the effect is under way).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Ask } from '../../src/flow/index.js';
import { deferred } from '../helpers/signals.js';
import { accept, asking, round } from './engine.js';

describe('a step at the edge of a round', () => {
  it('never runs once too many invalid answers ended the flow', async () => {
    const effects: string[] = [];
    const body = async (ask: Ask) => {
      const email = ask.form('Email?', z.object({ email: z.email() }), { maxInvalidAnswers: 0 });
      const sent = ask.step('send-invoice', () => void effects.push('invoice sent'));
      return `${(await email).email} ${await sent}`;
    };
    const r1 = asking(await round(body));
    expect(effects).toEqual([]);
    const r2 = await round(body, {
      journal: r1.journal,
      inputResponses: { q1: accept({ email: 'not-an-email' }) },
    });
    expect(r2).toMatchObject({ kind: 'ended', error: { reason: 'invalid_answers' } });
    expect(effects).toEqual([]);
  });

  it('a handler failing while its step runs fails the round only once the step has finished', async () => {
    const step = deferred();
    const order: string[] = [];
    const outcome = round(async (ask: Ask) => {
      const effect = ask.step('charge', async () => {
        await step.promise;
        order.push('charge finished');
      });
      void effect;
      await Promise.resolve();
      throw new Error('handler failed beside its step');
    }).then(
      () => order.push('round resolved'),
      (error: Error) => order.push(`round failed: ${error.message}`),
    );
    // Let the handler fail; the round must still be waiting for the step.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    step.resolve();
    await outcome;
    expect(order).toEqual(['charge finished', 'round failed: handler failed beside its step']);
  });
});
