// Input kinds and client capabilities: one reading for the server (what may I ask?) and the client (what do I say
// I can answer?).
import { describe, expect, it } from 'vitest';
import {
  type ClientCapabilities,
  capabilitiesFor,
  clientSupports,
  declaredKinds,
  INPUT_KINDS,
  kindOfInputRequest,
  schemaValidator,
} from '../../src/protocol/index.js';
import type { InputKind } from '../../src/protocol/input-kinds.js';

const form = { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object' } } };

describe('kindOfInputRequest', () => {
  it.each<[string, unknown, InputKind | undefined]>([
    ['an elicitation without mode', form, 'elicitation.form'],
    [
      'an elicitation in form mode',
      { ...form, params: { ...form.params, mode: 'form' } },
      'elicitation.form',
    ],
    [
      'an elicitation in url mode',
      { method: 'elicitation/create', params: { mode: 'url' } },
      'elicitation.url',
    ],
    [
      'an elicitation in an unknown mode',
      { method: 'elicitation/create', params: { mode: 'sms' } },
      undefined,
    ],
    ['an elicitation without params', { method: 'elicitation/create' }, undefined],
    ['an elicitation whose params are an array', { method: 'elicitation/create', params: [] }, undefined],
    ['a sampling request', { method: 'sampling/createMessage', params: { messages: [] } }, 'sampling'],
    ['a roots request', { method: 'roots/list' }, 'roots'],
    ['another method', { method: 'tools/call', params: {} }, undefined],
    ['a method inherited from Object', { method: 'constructor' }, undefined],
    ['a non-object', 'roots/list', undefined],
    ['null', null, undefined],
  ])('%s', (_name, request, kind) => {
    expect(kindOfInputRequest(request)).toBe(kind);
  });
});

describe('clientSupports', () => {
  const cases: Array<[string, ClientCapabilities, InputKind[]]> = [
    ['nothing declared', {}, []],
    ['a bare elicitation: form mode only', { elicitation: {} }, ['elicitation.form']],
    ['form declared', { elicitation: { form: {} } }, ['elicitation.form']],
    ['url declared: url mode only', { elicitation: { url: {} } }, ['elicitation.url']],
    ['both modes', { elicitation: { form: {}, url: {} } }, ['elicitation.form', 'elicitation.url']],
    ['sampling and roots', { sampling: {}, roots: { listChanged: true } }, ['sampling', 'roots']],
    // Malformed declarations declare nothing (they are not objects), and never throw.
    ['elicitation: null', { elicitation: null } as unknown as ClientCapabilities, []],
    ['elicitation: true', { elicitation: true } as unknown as ClientCapabilities, []],
    ['url: true is not a url declaration', { elicitation: { url: true } } as never, ['elicitation.form']],
    ['sampling: true, roots: []', { sampling: true, roots: [] } as unknown as ClientCapabilities, []],
  ];
  it.each(cases)('%s', (_name, caps, kinds) => {
    for (const kind of INPUT_KINDS) expect(clientSupports(caps, kind), kind).toBe(kinds.includes(kind));
    expect([...declaredKinds(caps)]).toEqual(kinds);
  });
});

describe('capabilitiesFor', () => {
  // Every subset of the four kinds: the capabilities built for it declare exactly it, and are schema-valid.
  const subsets = Array.from({ length: 1 << INPUT_KINDS.length }, (_, mask) =>
    INPUT_KINDS.filter((_k, i) => mask & (1 << i)),
  );
  it.each(subsets.map((s) => [s.join(', ') || '(none)', s] as const))('%s round-trips', (_name, kinds) => {
    const caps = capabilitiesFor(kinds);
    expect([...declaredKinds(caps)]).toEqual(kinds);
    const valid = schemaValidator('ClientCapabilities');
    expect(valid(caps)).toBe(true);
  });

  it('names one mode per missing elicitation kind, as a -32021 error carries it', () => {
    expect(capabilitiesFor(['elicitation.url'])).toEqual({ elicitation: { url: {} } });
    expect(capabilitiesFor(['elicitation.form', 'roots'])).toEqual({ elicitation: { form: {} }, roots: {} });
    expect(capabilitiesFor([])).toEqual({});
  });
});
