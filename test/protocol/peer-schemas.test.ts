// Schemas a peer sends are compiled with mrtr's Ajv options and then forgotten, so endlessly many can be compiled.
import { describe, expect, it } from 'vitest';
import { compilePeerSchema } from '../../src/protocol/index.js';

describe('compilePeerSchema', () => {
  it('checks with the shared options: formats on, own properties only', () => {
    const validate = compilePeerSchema({
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, toString: { type: 'string' } },
      required: ['toString'],
    });
    expect(validate({ email: 'a@b.co', toString: 'x' })).toBe(true);
    expect(validate({ email: 'not an email', toString: 'x' })).toBe(false);
    expect(validate({ email: 'a@b.co' })).toBe(false);
  });

  it('forgets each schema once compiled: a second schema under the same $id compiles, and checks its own rule', () => {
    const first = compilePeerSchema({ $id: 'https://upstream.example/form', type: 'string' });
    const second = compilePeerSchema({ $id: 'https://upstream.example/form', type: 'number' });
    expect([first('x'), second('x'), second(1)]).toEqual([true, false, true]);
  });

  it('throws for a schema that is not valid, and is not left holding it', () => {
    const bad = { $id: 'https://upstream.example/bad', type: 'string', minLength: -1 };
    expect(() => compilePeerSchema(bad)).toThrow(/minLength must be >= 0/);
    expect(() => compilePeerSchema(bad)).toThrow(/minLength must be >= 0/);
  });
});
