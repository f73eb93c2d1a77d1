// A server's form field `pattern` is matched in linear time on the person's side too: a hostile pattern cannot
// freeze the terminal while they type, and a pattern RE2 cannot run is left to the server, which validates again.
import { describe, expect, it } from 'vitest';
import { checkValue, readForm } from '../../src/client/internal.js';

const EMAIL =
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$';

const fieldWith = (pattern: string) =>
  readForm({ type: 'object', properties: { email: { type: 'string', pattern } } })[0]!;

describe("a form field's pattern", () => {
  it('answers a 5000-character value against a nested-quantifier pattern at once', () => {
    const field = fieldWith(EMAIL);
    expect(checkValue(field, `${'a'.repeat(5000)}!`)).toBe(`must match the pattern ${EMAIL}`);
    expect(checkValue(field, 'ann.lee@example.com')).toBeUndefined();
  });

  it('leaves a pattern RE2 cannot run to the server', () => {
    expect(checkValue(fieldWith('(?=x)'), 'y')).toBeUndefined();
  });
});
