// Promise: a journaled answer is pinned to the question shown. When the question a position asks changes between
// rounds (a live value in its text, a new handler version), the old answer is not applied: the question is re-asked.
import { describe, expect, it } from 'vitest';
import type { Ask } from '../../src/flow/index.js';
import { accept, asking, messageOf, round } from './engine.js';

// The price is read fresh every round, as a handler reading a database would: the confirmation is for one price.
let price: number;
const checkout = async (ask: Ask) => {
  const ok = await ask.confirm(`Pay ${price} EUR?`);
  const note = await ask.text('Note for the seller?');
  return { ok, note, price };
};

describe('a journaled answer is pinned to the question shown', () => {
  it('re-asks when the question changed after it was sent, instead of applying the answer to the new one', async () => {
    price = 10;
    const r1 = asking(await round(checkout));
    expect(messageOf(r1, 'q1')).toBe('Pay 10 EUR?');

    price = 20; // the client's "yes" was given to "Pay 10 EUR?"
    const r2 = await round(checkout, {
      journal: r1.journal,
      inputResponses: { q1: accept({ confirm: true }) },
    });
    expect(messageOf(r2, 'q1')).toBe('Pay 20 EUR?');
    expect(Object.keys(asking(r2).inputRequests)).toEqual(['q1']);
    expect(asking(r2).journal.e).toEqual([]);
  });

  it('re-asks when a question already in the journal changed in a later round', async () => {
    price = 10;
    const r1 = asking(await round(checkout));
    const r2 = asking(
      await round(checkout, { journal: r1.journal, inputResponses: { q1: accept({ confirm: true }) } }),
    );
    expect(messageOf(r2, 'q2')).toBe('Note for the seller?');
    expect(r2.journal.e).toHaveLength(1);

    price = 20; // the journaled "yes" is for 10 EUR
    const r3 = await round(checkout, {
      journal: r2.journal,
      inputResponses: { q2: accept({ text: 'thanks' }) },
    });
    expect(Object.keys(asking(r3).inputRequests)).toEqual(['q1']);
    expect(messageOf(r3, 'q1')).toBe('Pay 20 EUR?');
    // The stale entry is gone from the journal the next round carries.
    expect(asking(r3).journal.e).toEqual([]);
  });

  it('applies the answer when the question is unchanged (the pin is not a blanket refusal)', async () => {
    price = 10;
    const r1 = asking(await round(checkout));
    const r2 = asking(
      await round(checkout, { journal: r1.journal, inputResponses: { q1: accept({ confirm: true }) } }),
    );
    const r3 = await round(checkout, {
      journal: r2.journal,
      inputResponses: { q2: accept({ text: 'thanks' }) },
    });
    expect(r3).toMatchObject({
      kind: 'complete',
      result: { ok: true, note: 'thanks', price: 10 },
      usedAsk: true,
    });
  });
});
