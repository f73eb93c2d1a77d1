// Promise: one answer never lands on two questions. Two questions asked in the same round under one inputRequests
// key would share whatever the client sends for that key, so the round fails as a handler bug instead.
import { describe, expect, it } from 'vitest';
import type { Ask } from '../../src/flow/index.js';
import { round } from './engine.js';

describe('question keys within a round', () => {
  it('refuses two questions in one round under the same key', async () => {
    await expect(
      round((ask) => ask.all([ask.text('Name?', { key: 'same' }), ask.text('Email?', { key: 'same' })])),
    ).rejects.toThrow(/two questions in one round use the key "same"/);
  });

  it('allows the same key again in a later round', async () => {
    const body = async (ask: Ask) => {
      const a = await ask.text('Name?', { key: 'k' });
      const b = await ask.text('Email?', { key: 'k' });
      return `${a} ${b}`;
    };
    const r1 = await round(body);
    if (r1.kind !== 'input_required') throw new Error('expected a question');
    const r2 = await round(body, {
      journal: r1.journal,
      inputResponses: { k: { action: 'accept', content: { text: 'ann' } } },
    });
    expect(r2.kind === 'input_required' && Object.keys(r2.inputRequests)).toEqual(['k']);
  });
});
