// Keys that name Object.prototype members (`__proto__`, `constructor`, `prototype`) are plain keys to the flow
// engine: as question keys, as answers' keys, and as form field names.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { type FlowJournal, runFlowRound } from '../../src/flow/internal.js';
import type { InputResponse, InputResponses } from '../../src/protocol/index.js';

const KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const caps = { elicitation: {} };

// The handler asks three text questions at once, keyed by the awkward names.
const body = (getAsk: () => import('../../src/flow/index.js').Ask) => {
  const ask = getAsk();
  return ask.all(KEYS.map((key) => ask.text(`${key}?`, { key })));
};

async function round(journal: FlowJournal | undefined, inputResponses: InputResponses) {
  const outcome = await runFlowRound(
    { journal, inputResponses, capabilities: caps, supports: () => true },
    body,
  );
  // Sealing turns the journal into JSON and back: do the same here.
  if (outcome.kind === 'input_required') outcome.journal = JSON.parse(JSON.stringify(outcome.journal));
  return outcome;
}

// Answers as a client's JSON arrives: `__proto__` an own key, as JSON.parse makes it.
const answers = (entries: Record<string, string>): InputResponses =>
  JSON.parse(
    JSON.stringify(
      Object.fromEntries(
        Object.entries(entries).map(([k, text]) => [k, { action: 'accept', content: { text } }]),
      ),
    ),
  ) as Record<string, InputResponse>;

describe('flow engine', () => {
  it('asks, waits for and takes answers under __proto__, constructor and prototype', async () => {
    const first = await round(undefined, {});
    expect(first.kind).toBe('input_required');
    if (first.kind !== 'input_required') return;
    expect(Object.keys(first.inputRequests)).toEqual([...KEYS]);
    // …and they survive the trip to JSON, where the client reads them.
    const wire = JSON.parse(JSON.stringify(first.inputRequests));
    expect(Object.keys(wire)).toEqual([...KEYS]);
    expect(Object.getOwnPropertyDescriptor(wire, '__proto__')?.value).toMatchObject({
      method: 'elicitation/create',
      params: { message: '__proto__?' },
    });

    // `constructor` is not answered: it is asked again as it was, not judged as an (invalid) answer.
    const second = await round(
      first.journal,
      JSON.parse(
        '{"__proto__":{"action":"accept","content":{"text":"p"}},"prototype":{"action":"accept","content":{"text":"t"}}}',
      ),
    );
    expect(second.kind).toBe('input_required');
    if (second.kind !== 'input_required') return;
    expect(Object.keys(second.inputRequests)).toEqual(['constructor']);
    expect(second.inputRequests.constructor).toMatchObject({ params: { message: 'constructor?' } });
    expect(second.journal.r).toBeUndefined();

    const third = await round(second.journal, answers({ constructor: 'c' }));
    expect(third).toMatchObject({ kind: 'complete', result: ['p', 'c', 't'] });
  });
});

describe('elicitationForm', () => {
  it('keeps fields named constructor and prototype as fields of requestedSchema', () => {
    const form = elicitationForm(z.object({ constructor: z.string(), prototype: z.boolean() }));
    expect(Object.keys(form.requestedSchema.properties)).toEqual(['constructor', 'prototype']);
  });

  it('refuses a field named __proto__ at definition: zod skips that key, so its answer could never arrive', () => {
    expect(() => elicitationForm(z.object({ ['__proto__']: z.string(), name: z.string() }))).toThrow(
      'form field "__proto__": zod never reads or returns a key named __proto__; rename the field',
    );
  });

  it('does not read a missing field named like an Object member from Object.prototype', () => {
    const form = elicitationForm(
      z.object({ name: z.string(), constructor: z.string().optional(), toString: z.string().optional() }),
    );
    // As a client's JSON arrives: the optional fields are simply absent.
    expect(form.parse(JSON.parse('{"name":"Ada"}'))).toEqual({ ok: true, value: { name: 'Ada' } });
    expect(form.parse(JSON.parse('{"name":"Ada","toString":"t"}'))).toEqual({
      ok: true,
      value: { name: 'Ada', toString: 't' },
    });
    const required = elicitationForm(z.object({ constructor: z.string() }));
    expect(required.parse({})).toEqual({
      ok: false,
      message: 'constructor: Invalid input: expected string, received undefined',
    });
  });
});
