// The 2025 questions, both ways: the bridge spells a 2026 InputRequest for a 2025 client, the client's held calls read
// a 2025 server's request back as an InputRequest; one file holds both so a question survives the round trip.
import { describe, expect, it } from 'vitest';
import { inputRequestFromLegacy, legacyRequestParams } from '../../src/protocol/index.js';

const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };

describe('legacyRequestParams (2026 → 2025)', () => {
  it('drops the form mode for a revision before 2025-11-25 and keeps it from 2025-11-25 on', () => {
    const params = { mode: 'form', message: 'Sure?', requestedSchema: schema };
    expect(legacyRequestParams('elicitation/create', params, '2025-06-18')).toEqual({
      message: 'Sure?',
      requestedSchema: schema,
    });
    expect(legacyRequestParams('elicitation/create', params, '2025-11-25')).toBe(params);
    expect(legacyRequestParams('roots/list', {}, '2025-03-26')).toEqual({});
  });
});

describe('inputRequestFromLegacy (2025 → 2026)', () => {
  it('gives a form elicitation without mode its form mode, so a 2026 client reads it as one', () => {
    expect(
      inputRequestFromLegacy({
        method: 'elicitation/create',
        params: { message: 'Sure?', requestedSchema: schema },
      }),
    ).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Sure?', requestedSchema: schema },
    });
  });

  it('keeps url elicitations, sampling and roots as they were asked', () => {
    const url = {
      method: 'elicitation/create',
      params: { mode: 'url', url: 'https://x', elicitationId: 'e1' },
    };
    expect(inputRequestFromLegacy(url)).toEqual(url);
    expect(inputRequestFromLegacy({ method: 'roots/list' })).toEqual({ method: 'roots/list', params: {} });
    const sampling = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } };
    expect(inputRequestFromLegacy(sampling)).toEqual(sampling);
  });

  it('is undefined for what MRTR does not carry: ping, an unknown method, an unknown elicitation mode', () => {
    expect(inputRequestFromLegacy({ method: 'ping' })).toBeUndefined();
    expect(inputRequestFromLegacy({ method: 'tools/call', params: {} })).toBeUndefined();
    expect(
      inputRequestFromLegacy({ method: 'elicitation/create', params: { mode: 'voice' } }),
    ).toBeUndefined();
  });

  it('round-trips a 2025-06-18 question: 2026 → 2025 → 2026 gives the request back', () => {
    const asked = {
      method: 'elicitation/create',
      params: { mode: 'form', message: 'm', requestedSchema: schema },
    };
    const wire = legacyRequestParams(asked.method, asked.params, '2025-06-18');
    expect(inputRequestFromLegacy({ method: asked.method, params: wire })).toEqual(asked);
  });
});
