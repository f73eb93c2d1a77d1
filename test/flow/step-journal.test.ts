// Steps in the journal: a journaled result is pinned to the step's name (a renamed step is a different effect and
// runs), and a step that failed fails the round even when the handler swallowed the error (its effect may be half
// done, so the flow must not carry on as if it had not run) — the handler cannot wave that off.
import { describe, expect, it } from 'vitest';
import type { Ask } from '../../src/flow/index.js';
import { asking, round } from './engine.js';

describe('steps in the journal', () => {
  it('runs a step again when its name changed since its result was journaled', async () => {
    const runs: string[] = [];
    const body = (name: string) => async (ask: Ask) => {
      const id = await ask.step(name, () => {
        runs.push(name);
        return `${name}-result`;
      });
      await ask.text('Next?');
      return id;
    };
    const r1 = asking(await round(body('create-v1')));
    const r2 = await round(body('create-v2'), {
      journal: r1.journal,
      inputResponses: { q2: { action: 'accept', content: { text: 'x' } } },
    });
    expect(runs).toEqual(['create-v1', 'create-v2']);
    expect(r2).toMatchObject({ kind: 'complete', result: 'create-v2-result' });
  });

  it('fails the round when a step still running when the round ends fails, even if the handler ignored it', async () => {
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const body = async (ask: Ask) => {
      ask
        .step('charge', async () => {
          // Outlive the round: the engine ends it one macrotask turn after the question parks.
          await turn();
          await turn();
          throw new Error('card declined mid-charge');
        })
        .catch(() => {});
      return ask.text('Receipt email?');
    };
    await expect(round(body)).rejects.toThrow('card declined mid-charge');
  });
});
