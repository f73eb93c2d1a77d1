// Sensitive fields: redacted at any depth in answers, arguments and notes, by field name or by a whole answer's
// key, with a keyed digest; values without a sensitive member are not copied.
import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../src/audit/index.js';
import { Redactor, redactFields } from '../../src/audit/redact.js';

const redactor = new Redactor(Buffer.alloc(32, 1));
const other = new Redactor(Buffer.alloc(32, 2));

describe('redactFields', () => {
  it('replaces a named field at any depth, in objects and arrays, with a keyed digest', () => {
    const value = { user: 'ada', nested: [{ otp: '123456' }, { otp: '123456' }], otp: 'x' };
    const { value: out, redacted } = redactFields(value, ['otp'], redactor);
    expect(redacted).toBe(true);
    const o = out as {
      user: string;
      otp: Record<string, string>;
      nested: Array<{ otp: Record<string, string> }>;
    };
    expect(o.user).toBe('ada');
    expect(o.nested[0]!.otp[REDACTED]).toMatch(/^hmac-sha256:[\w-]{43}$/);
    expect(o.nested[0]!.otp).toEqual(o.nested[1]!.otp);
    expect(o.otp).not.toEqual(o.nested[0]!.otp);
    expect(JSON.stringify(out)).not.toContain('123456');
    expect(value.nested[0]!.otp).toBe('123456'); // the round's own values are untouched
  });

  it('redacts a whole answer when the name is its inputRequests key', () => {
    const answers = Object.assign(Object.create(null), {
      pin: { action: 'accept', content: { pin: '0000' } },
    });
    const { value } = redactFields(answers, ['pin'], redactor);
    expect((value as Record<string, unknown>).pin).toEqual({ [REDACTED]: redactor.keyed(answers.pin) });
  });

  it('keys the digest: another key gives another digest, so guesses cannot be checked without it', () => {
    expect(redactor.keyed('123456')).not.toBe(other.keyed('123456'));
    expect(redactor.keyed('123456')).toBe(redactor.keyed('123456'));
    expect(redactor.plain({ b: 1, a: 2 })).toBe(redactor.plain({ a: 2, b: 1 }));
  });

  it('returns values without a sensitive member as they are, and keeps a __proto__ key a plain member', () => {
    const value = { a: [1, 2, { b: 3 }] };
    expect(redactFields(value, ['otp'], redactor)).toEqual({ value, redacted: false });
    expect(redactFields(value, ['otp'], redactor).value).toBe(value);
    const hostile = JSON.parse('{"__proto__": {"otp": "1"}, "otp": "2"}');
    const { value: out } = redactFields(hostile, ['otp'], redactor);
    expect(Object.getPrototypeOf(out)).toBe(null);
    expect(Object.keys(out as object)).toEqual(['__proto__', 'otp']);
    expect(JSON.stringify(out)).not.toMatch(/"[12]"/);
  });
});
